"""Building an index: documents parsed, filtered and chunked, chunks embedded, the folder written.

:func:`build_index` turns Markdown documents into a :class:`~ppkit.indexing.index.SearchIndex`
and saves it (atomically, under the writers' lock; see :mod:`ppkit.indexing.folder`). Adding
documents is incremental: a document whose sha256 is unchanged keeps its chunks and vectors.
Reading an index back is :func:`ppkit.indexing.index.load_index`.
"""

from __future__ import annotations

import json
import os
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..core.config import Config, check_fields
from ..core.errors import InvalidInput, MissingFile
from ..core.ids import breadcrumb_path
from ..core.io import sha256_file
from ..core.progress import progress_bar
from ..documents.chunking import Chunk, chunk_tree
from ..documents.extract import ExtractionError, load_page_map, no_text_warning, pages_without_text
from ..documents.described import described
from ..documents.metadata import document_metadata
from ..documents.noise import (
    NoiseDecision,
    RuleNoiseFilter,
    apply_overrides,
    kept_nodes,
)
from ..documents.pdfcache import PdfRun, is_pdf, prepare_pdfs
from ..documents.tree import Tree, build_tree, read_lines
from . import stores
from .embed import (
    Embedder,
    EmbedderMismatch,
    GeminiEmbedder,
    HashEmbedder,
    LocalEmbedder,
    StaticEmbedder,
    get_embedder,
)
from .folder import (
    MANIFEST,
    index_lock,
    real_folder,
    recover,
)
from .index import (
    FORMAT_VERSION,
    PIPELINE_VERSION,
    IndexFormatError,
    SearchIndex,
    UntrustedIndex,
    check_target,
    default_index_dir,
    load_index,
)
from .lexical import LexicalIndex

__all__ = ["BuildOptions", "build_index"]


def _embedder_kind(embedder: Embedder) -> tuple[str, dict]:
    if isinstance(embedder, LocalEmbedder):
        return "local", {"max_seq_length": embedder.max_seq_length, "precision": embedder.precision}
    if isinstance(embedder, HashEmbedder):
        return "hash", {"dim": embedder.dim}
    if isinstance(embedder, StaticEmbedder):
        return "static", {"dims": embedder.dim}
    if isinstance(embedder, GeminiEmbedder):
        return "gemini", {"model": embedder.model_name, "dim": embedder.dim}
    return "custom", {}


@dataclass(frozen=True)
class BuildOptions:
    """How :func:`build_index` treats what is already in the folder, and what it records.

    Attributes:
        fresh: ignore what is in the folder and rebuild everything.
        overrides: ``{doc: {node_id: False | True | category}}`` applied after the noise filter.
        names: document names (default: file stems); must be unique.
        metadata: ``{doc: {...}}`` stored in the manifest, over what :mod:`ppkit.documents.metadata`
            derives from the document and its ``<stem>.meta.json`` sidecar.
        described: ``{doc: {"company", "period", "form"}}``: what the user says a document is
            (:func:`ppkit.documents.described.described`; any of the three). What was said before about a document
            indexed again from the same file is kept unless said again.
        progress: show progress bars.
        save: write the index to its folder (``False``: keep it in memory).
        store: a registered store name (:func:`ppkit.indexing.stores.names`: ``"faiss"``, ``"qdrant"``: a
            local-mode collection in the folder, or the server named in ``connection``); default: what the
            index in the folder already uses, else :data:`ppkit.indexing.stores.DEFAULT`.
        connection: the store's connection options, e.g. ``{"url": ...}`` for a Qdrant server; a rebuild
            of an index with the same store reuses the connection it was opened with (for a Qdrant
            server: ``$QDRANT_URL`` by default). Never taken from the index folder.
        replace: let a document replace an indexed one of the same name from another file
            (without it, that is an error: ``b/AMD.md`` does not silently replace ``a/AMD.md``).
        extracted: a folder of ``ppkit extract`` output for the PDFs given (adopted into the
            extraction cache when it is of the same PDF; see :mod:`ppkit.documents.pdfcache`).
        workers: processes extracting PDFs (default 2).
    """

    fresh: bool = False
    overrides: dict[str, dict[str, bool | str]] | None = None
    names: list[str] | None = None
    metadata: dict[str, dict] | None = None
    described: dict[str, dict] | None = None
    progress: bool = True
    save: bool = True
    store: str | None = None
    connection: dict | None = None
    replace: bool = False
    extracted: str | None = None
    workers: int = 2

    @classmethod
    def of(cls, **options) -> BuildOptions:
        check_fields(cls, options, "build option(s)")
        return cls(**options)


@dataclass
class _Build:
    """What a build collects, document by document (in the order they will be stored)."""

    trees: dict[str, Tree] = field(default_factory=dict)
    noise: dict[str, dict[str, NoiseDecision]] = field(default_factory=dict)
    records: dict[str, dict] = field(default_factory=dict)  # doc -> manifest record
    section_meta: dict[str, dict[str, str]] = field(default_factory=dict)  # doc -> node_id -> 10-K Item
    new_chunks: list[Chunk] = field(default_factory=list)  # chunks to embed
    timings: dict[str, float] = field(default_factory=dict)  # doc -> seconds to parse, filter and chunk
    replaced: dict[str, str] = field(default_factory=dict)  # doc -> the source it replaced (BuildOptions.replace)
    warnings: list[str] = field(default_factory=list)  # what a user should know about the documents added

    def keep(self, previous: SearchIndex, rec: dict) -> None:
        """Keep a document of the previous index as it is (its record may be updated by the caller)."""
        doc = rec["doc"]
        self.trees[doc] = previous.trees[doc]
        self.noise[doc] = previous.noise.get(doc, {})
        self.records[doc] = rec
        self.section_meta[doc] = previous.section_items(doc)


def build_index(paths, folder: Path | str | None = None, *, embedder: Embedder | None = None,
                config: Config | None = None, noise_filter=None,
                **options) -> SearchIndex:
    """Index Markdown documents and PDFs.

    Args:
        paths: Markdown files and PDFs (extracted once into the cache, in ``workers`` processes; see
            :mod:`ppkit.documents.pdfcache`). A document with a page map (a PDF, or Markdown made by
            ``ppkit extract`` with its ``.pages.json`` beside it) records its pages in the index.
        folder: index folder (default :func:`default_index_dir`); ``save=False`` keeps it in memory.
        embedder: default from ``config.embedder`` (the local MiniLM).
        noise_filter: default: the offline rule/fuzzy/semantic filter using ``embedder``
            (:func:`ppkit.pipeline.build_index` passes Gemini's when the config is online).
        options: :class:`BuildOptions` fields (``fresh``, ``overrides``, ``names``, ``metadata``,
            ``progress``, ``save``, ``store``, ``connection``, ``replace``, ``extracted``, ``workers``).

    Returns:
        The Index (saved to ``folder`` unless ``save=False``).

    >>> index = build_index(["../shared/data/10k/AMD.md"], "/tmp/amd-index")  # doctest: +SKIP
    """
    opts = BuildOptions.of(**options)
    config = config or Config()
    for what, value in (("paths", paths), ("names", opts.names)):
        if isinstance(value, (str, bytes, os.PathLike)):  # not iterated letter by letter
            raise InvalidInput(f"{what} must be a list, e.g. build_index([{str(value)!r}], ...), not one "
                               f"{type(value).__name__}")
    paths = list(paths)
    for name in [*(Path(p).stem for p in paths), *(opts.names or [])]:
        _check_name(name)  # before any PDF is extracted
    if paths:
        _check_paths([Path(p) for p in paths], list(opts.names) if opts.names is not None and
                     len(opts.names) == len(paths) else [Path(p).stem for p in paths])
    for name, said in (opts.described or {}).items():  # a bad period or form: refused before any work
        described({}, name, **said)
    folder = Path(folder) if folder is not None else (default_index_dir() if opts.save else None)
    if folder is not None and opts.save:
        folder = real_folder(folder)  # a symlinked --index: work on its target, never through the link
        check_target(folder)  # before any PDF is extracted (again under the lock below)
    paths, pdf_run = _markdown_of(paths, opts)
    paths, names = _documents(paths, opts.names)
    embedder = embedder or get_embedder(config.embedder)
    if folder is None or not opts.save:
        return _build(paths, names, folder, embedder, config, noise_filter, opts, pdf_run)
    check_target(folder)
    with index_lock(folder):  # the whole load-modify-save: a second writer waits
        recover(folder)
        index = _build(paths, names, folder, embedder, config, noise_filter, opts, pdf_run)
        index.save(folder)
        index.store.after_save()  # e.g. a rebuild on a Qdrant server drops the collection it replaced
    return index


def _markdown_of(paths, opts: BuildOptions) -> tuple[list[Path], PdfRun | None]:
    """The paths with each PDF replaced by its Markdown in the extraction cache (extracted if needed)."""
    paths = [Path(p) for p in paths]
    pdfs = [p for p in paths if is_pdf(p)]
    if not pdfs:
        return paths, None
    run = prepare_pdfs(pdfs, extracted=opts.extracted, workers=opts.workers, progress=opts.progress)
    markdown = iter(d.markdown for d in run.docs)
    return [next(markdown) if is_pdf(p) else p for p in paths], run


def _page_record(path: Path) -> dict:
    """The page map of ``path`` for its manifest record (``{}`` without a fitting ``.pages.json`` beside it)."""
    try:
        pm = load_page_map(path)
    except (MissingFile, ExtractionError):
        return {}  # plain Markdown, or edited since extraction: its lines no longer name pages
    return {"pdf": pm.pdf, "pdf_sha256": pm.pdf_sha256, "page_count": pm.page_count,
            "pages": [list(t) for t in pm.pages]}


def _build(paths: list[Path], names: list[str], folder: Path | None, embedder: Embedder, config: Config,
           noise_filter, opts: BuildOptions, pdf_run: PdfRun | None) -> SearchIndex:
    settings = {"chunk_size": config.chunk_size, "chunk_overlap": config.chunk_overlap, "min_chars": 40,
                "pipeline_version": PIPELINE_VERSION}
    previous = _previous(folder, embedder, config, settings, opts) if folder is not None and not opts.fresh else None
    store, connection = _store_choice(previous, opts)
    noise_filter = noise_filter or RuleNoiseFilter(embedder if not _is_test_embedder(embedder) else None)

    t0 = time.perf_counter()
    build = _Build()
    for rec in previous.manifest["documents"] if previous is not None else []:
        if rec["doc"] not in names:  # documents not named this time stay in the index
            build.keep(previous, rec)
    for name, path in progress_bar(list(zip(names, paths)), desc="parsing", disable=not opts.progress):
        _add_document(build, name, path, previous, noise_filter, config, settings["min_chars"], opts)
    kept = _reusable_chunks(previous, build)
    t = time.perf_counter()
    new_vecs = (embedder.embed_documents([c.text for c in build.new_chunks], progress=opts.progress)
                if build.new_chunks else None)
    embed_s = time.perf_counter() - t
    all_chunks, all_vecs = _renumbered(build, kept, new_vecs)
    replaces = _replaced_store(folder, previous)
    if previous is not None:
        previous.store.close()  # its vectors are read; a local Qdrant collection allows one client at a time
    vstore = stores.create(store, embedder.dim, folder=folder, replaces=replaces, connection=connection)
    vstore.add_chunks(all_chunks, np.stack(all_vecs) if all_vecs else None, build.records, build.section_meta)
    lexical = LexicalIndex.build([c.text for c in all_chunks], [c.chunk_id for c in all_chunks])
    t = time.perf_counter()
    path_vectors = _path_vectors(all_chunks, build.trees, embedder, previous)
    paths_s = time.perf_counter() - t
    kind, kwargs = _embedder_kind(embedder)
    manifest = {
        "format_version": FORMAT_VERSION,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "embedder": {"name": embedder.name, "dim": embedder.dim, "kind": kind, "kwargs": kwargs},
        "store": vstore.manifest_entry(),
        "noise_filter": getattr(noise_filter, "name", type(noise_filter).__name__),
        "settings": settings,
        "documents": list(build.records.values()),
        "build": {"seconds_parse_noise_chunk": build.timings, "seconds_embed": round(embed_s, 2),
                  "seconds_embed_paths": round(paths_s, 2),
                  "chunks_embedded": len(build.new_chunks), "chunks_reused": len(kept[0]),
                  "replaced": build.replaced, "warnings": build.warnings,
                  "seconds_total": round(time.perf_counter() - t0, 2),
                  **({"pdfs": _pdf_summary(pdf_run)} if pdf_run is not None else {})},
    }
    return SearchIndex(folder, manifest, build.trees, build.noise, all_chunks, vstore, embedder, config,
                       lexical=lexical, section_meta=build.section_meta, path_vectors=path_vectors)


def _path_vectors(chunks: list[Chunk], trees: dict[str, Tree], embedder: Embedder,
                  previous: SearchIndex | None) -> dict[str, np.ndarray]:
    """``{breadcrumb path: vector}`` for the sections that have chunks (every section the re-ranker can
    see); the previous index's vectors are reused, the rest embedded in one batch."""
    paths = list(dict.fromkeys(breadcrumb_path(trees[c.doc][c.node_id].breadcrumb) for c in chunks))
    known = previous.path_vectors if previous is not None else {}
    missing = [p for p in paths if p not in known]
    fresh = dict(zip(missing, embedder.embed_documents(missing))) if missing else {}
    return {p: fresh[p] if p in fresh else known[p] for p in paths}


def _replaced_store(folder: Path | None, previous: SearchIndex | None) -> dict | None:
    """The manifest's ``"store"`` entry of the index this build replaces in ``folder`` (also on a fresh
    rebuild), or None: what a server store cleans up after the save (the Qdrant store drops only a
    collection named for the same folder)."""
    entry = previous.manifest.get("store", {}) if previous is not None else {}
    if previous is None and folder is not None and (folder / MANIFEST).is_file():
        try:
            entry = json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get("store", {})
        except (OSError, ValueError, AttributeError):
            entry = {}
    return entry if isinstance(entry, dict) and entry else None


def _check_name(name) -> None:
    """An InvalidInput for an empty document name, or one holding a control character (a newline, a tab, a line
    separator): answers cite documents by name, one per line, so such a name would break its own citations."""
    if not str(name).strip():
        raise InvalidInput(f"the document name {str(name)!r} is empty: give each document a name (names=[...])")
    bad = sorted({c for c in str(name) if unicodedata.category(c) in ("Cc", "Zl", "Zp")})
    if bad:
        raise InvalidInput(f"the document name {str(name)!r} holds control characters ({', '.join(map(repr, bad))}), "
                           "which would break its citations: rename the file (or pass names=[...] in Python)")


def _documents(paths, names: list[str] | None) -> tuple[list[Path], list[str]]:
    """The documents as paths and their (unique) names, or a clear error."""
    paths = [Path(p) for p in paths]
    if not paths:
        raise InvalidInput("no documents to index")
    names = list(names) if names is not None else [p.stem for p in paths]
    if len(names) != len(paths):
        raise InvalidInput("give one name per document")
    _check_paths(paths, names)
    return paths, names


def _check_paths(paths: list[Path], names: list[str]) -> None:
    """Each path a regular file (a folder, a pipe or a missing file is one line saying which), and no two
    documents of one name; before any PDF is extracted."""
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        files = [str(p) for p, n in zip(paths, names) if n == dupes[0]]
        raise InvalidInput(f"{' and '.join(files[:2])} share the name {dupes[0]!r} (an index holds one document per "
                           "name): rename one of the files (in Python you may pass names=[...] instead)")
    for p in paths:
        if p.is_dir():
            raise InvalidInput(f"{p} is a folder: give the documents in it (ppkit index {p}/*.md {p}/*.pdf)")
        if p.exists() and not p.is_file():
            raise InvalidInput(f"{p} is not a regular file (a pipe or a device?): give a Markdown file or a PDF")
        if not p.is_file():
            raise MissingFile(f"no such document: {p}")


def _previous(folder: Path, embedder: Embedder, config: Config, settings: dict,
              opts: BuildOptions) -> SearchIndex | None:
    """The index already in ``folder`` (to update incrementally), or None; it must have the same settings
    and have been written by ppkit on this account (so its document records can be carried over)."""
    if not (folder / MANIFEST).exists():
        return None
    try:
        previous = load_index(folder, embedder=embedder, config=config, connection=opts.connection)
    except (IndexFormatError, EmbedderMismatch, FileNotFoundError, ValueError) as e:
        raise type(e)(f"{e}\n(to rebuild the index at {folder} from scratch, use fresh=True / --fresh)") from None
    if not previous.trusted:
        raise UntrustedIndex(f"the index at {folder} was not written by ppkit on this account (or was edited since); "
                             "it is not updated in place: rebuild it from your own files with --fresh")
    if previous.manifest["settings"] != settings:
        raise IndexFormatError(f"{folder} was built with settings {previous.manifest['settings']}, "
                               f"now {settings}: rebuild with --fresh")
    return previous


def _store_choice(previous: SearchIndex | None, opts: BuildOptions) -> tuple[str, dict]:
    """The store to build (the option, else what the previous index used, else the default) and its
    connection: the one given, over the one the previous index's store of that name was opened with
    (the server the user named, never the one an index folder records)."""
    prev_store = previous.manifest.get("store", {}) if previous is not None else {}
    store = opts.store or prev_store.get("name", stores.DEFAULT)
    reused = previous.store.connection if previous is not None and previous.store.name == store else {}
    return store, {**reused, **{k: v for k, v in (opts.connection or {}).items() if v is not None}}


def _add_document(build: _Build, name: str, path: Path, previous: SearchIndex | None, noise_filter,
                  config: Config, min_chars: int, opts: BuildOptions) -> None:
    """Parse, filter and chunk one document into ``build``, or keep it from ``previous`` when unchanged."""
    sha = sha256_file(path)
    extra_meta = (opts.metadata or {}).get(name, {})
    prev_rec = next((r for r in previous.manifest["documents"] if r["doc"] == name), None) if previous else None
    said = {**((prev_rec.get("metadata") or {}).get("user") or {} if prev_rec is not None and (
        Path(prev_rec["source"]) == path.resolve() or prev_rec["sha256"] == sha) else {}),
            **(opts.described or {}).get(name, {})}  # what the user said before (same file) and now
    if prev_rec is not None and Path(prev_rec["source"]) != path.resolve() and prev_rec["sha256"] != sha:
        if not opts.replace:
            raise InvalidInput(f"{name!r} is already indexed from {prev_rec['source']}; {path} has the same name "
                               "and other content. Pass --replace (replace=True) to replace it, or rename the file")
        build.replaced[name] = prev_rec["source"]
    if prev_rec is not None and prev_rec["sha256"] == sha and not (opts.overrides and name in opts.overrides):
        # the chunks and vectors are kept; the metadata is read again (cheap), so that an edited sidecar
        # or a better cover reader reaches an unchanged document
        doc_meta, _ = document_metadata(path, previous.trees[name], read_lines(path))
        meta = {**prev_rec.get("metadata", {}), **doc_meta, **extra_meta}
        build.keep(previous, {**prev_rec, "source": str(path.resolve()),
                              "metadata": described(meta, name, **said) if said else meta, **_page_record(path)})
        return
    t = time.perf_counter()
    tree = build_tree(path, name)
    lines = read_lines(path)
    decisions = noise_filter.decide(tree, lines)
    if opts.overrides and name in opts.overrides:
        decisions = apply_overrides(decisions, tree, opts.overrides[name])
    chunks = chunk_tree(tree, lines, kept_nodes(tree, decisions), size=config.chunk_size,
                        overlap=config.chunk_overlap, min_chars=min_chars)
    build.timings[name] = round(time.perf_counter() - t, 3)
    build.trees[name], build.noise[name] = tree, decisions
    build.new_chunks.extend(chunks)
    doc_meta, build.section_meta[name] = document_metadata(path, tree, lines)
    meta = {**doc_meta, **extra_meta}
    build.records[name] = {"doc": name, "source": str(path.resolve()), "sha256": sha, "n_lines": tree.n_lines,
                           "n_chunks": len(chunks), "metadata": described(meta, name, **said) if said else meta,
                           **_page_record(path)}
    blank = pages_without_text(build.records[name].get("pages", ()), lines)
    if blank:
        build.warnings.append(no_text_warning(name, blank, build.records[name]["page_count"]))


def _pdf_summary(run: PdfRun) -> dict:
    """What the build's extraction did, for the manifest (and the CLI's report)."""
    return {"n": len(run.docs), **{h: sum(1 for d in run.docs if d.how == h) for h in ("extracted", "adopted", "cached")},
            "pages_extracted": run.pages_extracted, "seconds_extract": round(run.seconds, 2), "workers": run.workers,
            "pages_per_second": round(run.pages_per_second, 3), "words_joined": sum(d.joins for d in run.docs),
            "summary": run.summary()}


def _reusable_chunks(previous: SearchIndex | None, build: _Build) -> tuple[list[Chunk], np.ndarray | None]:
    """The previous index's chunks of unchanged documents, with their stored vectors."""
    if previous is None:
        return [], None
    rebuilt = {c.doc for c in build.new_chunks}
    reuse = [c for c in previous.chunks if c.doc in build.records and c.doc not in rebuilt
             and build.records[c.doc]["sha256"] == previous.record(c.doc).sha256]
    if not reuse:
        return [], None
    return reuse, previous.store.vectors(np.asarray([c.chunk_id for c in reuse], dtype=np.int64))


def _renumbered(build: _Build, kept: tuple[list[Chunk], np.ndarray | None],
                new_vecs: np.ndarray | None) -> tuple[list[Chunk], list[np.ndarray]]:
    """All chunks numbered 0..n-1 in document order (of ``build.records``), with their vectors;
    each record's ``n_chunks`` updated."""
    kept_chunks, kept_vecs = kept
    pairs = list(zip(kept_chunks, kept_vecs if kept_vecs is not None else [])) + \
        (list(zip(build.new_chunks, new_vecs)) if new_vecs is not None else [])
    order = {d: i for i, d in enumerate(build.records)}
    pairs.sort(key=lambda cv: (order[cv[0].doc], cv[0].line_start, cv[0].seq))
    chunks = [Chunk(i, c.doc, c.node_id, c.seq, c.line_start, c.line_end, c.breadcrumb, c.text)
              for i, (c, _) in enumerate(pairs)]
    for rec in build.records.values():
        rec["n_chunks"] = sum(1 for c in chunks if c.doc == rec["doc"])
    return chunks, [v for _, v in pairs]


def _is_test_embedder(embedder) -> bool:
    return isinstance(embedder, HashEmbedder)
