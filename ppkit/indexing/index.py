"""The index folder: what it holds, saving it, loading it (building is :mod:`ppkit.indexing.build`).

An index folder holds plain files only (nothing executes code on load)::

    manifest.json     format version, embedder name + dim, settings, documents (sha256, metadata),
                      tree file names, the sha256 of every other file, a generation, a stamp
    chunks.jsonl      one chunk per line: id, doc, node id, lines, breadcrumb, text
    trees/<doc>.json  each document's tree (file names in the manifest's ``trees``)
    noise.json        the noise decision for every flagged node: category, filter, reason
    vectors.faiss     the vectors, as the index's store writes them (FAISS: this file; Qdrant: qdrant/,
                      a local-mode collection; see ppkit.indexing.stores)
    bm25/             the BM25 index over the same chunks (.npy + JSON, see ppkit.indexing.lexical)
    sections.json     per-section metadata: the 10-K Item of each section (see ppkit.documents.metadata)
    paths.json        every indexed section's breadcrumb path (the breadcrumb without its document), and
    paths.npy         their vectors by the index's embedder, row i for path i: the re-ranker's path
                      similarity needs them for every query, so they are computed once, at index time
    rendered/<doc>.json  every indexed section's rendered lines and their BM25 terms (file names as in
                      ``trees``; see ppkit.indexing.sections): what each query's candidates are scored on

Writes are atomic: a build goes to a temporary sibling folder that replaces the
old one by rename only when complete, so an interrupted build leaves the previous
index usable; one writer at a time, and a reader sees one whole index (the protocol,
recovery after a crash and the trust rule are in :mod:`ppkit.indexing.folder`). Loading
checks every file against its checksum. An index folder is data: its document paths are
read only when ppkit on this account wrote it (or the user trusts it), and its Qdrant
server is contacted only when the user names it. Querying with another embedder than the
one that built the index is an error, as is a pointer into a source document that
changed since it was indexed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path, PurePosixPath

import numpy as np

from ..core.config import ENV_FIELDS, INDEX_TIME_FIELDS, Config, cache_dir, index_dir_override
from ..core.errors import ConfigError, InvalidInput, MissingFile, NotFound, PpkitError
from ..core.io import sha256_file
from ..core.markup import render
from ..documents.chunking import Chunk, section_units
from ..documents.noise import (
    NoiseDecision,
    kept_nodes,
)
from ..documents.tree import Tree, read_lines
from . import stores
from .embed import (
    Embedder,
    EmbedderMismatch,
    get_embedder,
)
from .folder import (
    MANIFEST,
    bad_files,
    commit,
    crash_point,
    file_checksums,
    foreign_files,
    real_folder,
    fsync_tree,
    index_lock,
    is_stamped,
    readable_copy,
    recover,
    stamp,
    swap_lock,
)
from .lexical import LexicalIndex, lexical_tokens
from .sections import SectionText, load_section_texts, save_section_texts, section_text

__all__ = ["SearchIndex", "load_index", "StaleIndexError", "IndexFormatError", "NotAnIndex",
           "UntrustedIndex", "IndexWriteError", "FORMAT_VERSION", "PIPELINE_VERSION", "default_index_dir", "index_lock", "check_target",
           "SettingsMismatch", "check_settings", "built_with"]

FORMAT_VERSION = 4  # 2: checksums of every file, generation, stamp, tree file names; 3: paths.json + paths.npy;
# 4: rendered/ (each section's rendered lines and BM25 terms)
# formats read as well: 3 lacks only rendered/, which is derived from the sources (its sections are rendered per
# query, as before), and the next `ppkit index` run over the folder writes format 4 without embedding anything again
READABLE_FORMATS = (3, FORMAT_VERSION)
# bump when chunking/noise rules change, so cached indexes keyed by settings are rebuilt
PIPELINE_VERSION = "2026.11.30-5"  # -3: rendered tables, metadata, sections.json, bm25/; -4: image kinds and labels; -5: captions associated over the document, figures, discussion, sizes


class StaleIndexError(PpkitError, RuntimeError):
    """A source document changed (or vanished) since it was indexed."""


class IndexFormatError(InvalidInput):
    """The index folder is not a readable ppkit index."""


class SettingsMismatch(ConfigError):
    """A Config sets an index-time setting explicitly to another value than the index was built with."""


class NotAnIndex(IndexFormatError):
    """The folder holds files ppkit did not write: it is never replaced or deleted."""


class UntrustedIndex(PpkitError, PermissionError):
    """The index folder was not written by ppkit on this account: its document paths are not read."""


class IndexWriteError(PpkitError, OSError):
    """The index could not be written (disk full, read-only folder); the previous one is unchanged."""


def default_index_dir() -> Path:
    """``$PPKIT_INDEX`` or ``<cache>/index``: where ``ppkit index`` writes and ``ppkit ask`` reads."""
    return index_dir_override() or cache_dir() / "index"


@dataclass(frozen=True)
class DocRecord:
    """One indexed document."""

    doc: str
    source: str  # absolute path of the Markdown file
    sha256: str
    n_lines: int
    n_chunks: int
    metadata: dict = field(default_factory=dict)
    # from a PDF (extracted by ppkit, or Markdown with a page map from `ppkit extract` beside it):
    pdf: str | None = None  # the PDF's path when it was indexed
    pdf_sha256: str | None = None
    page_count: int | None = None
    pages: list = field(default_factory=list)  # [[page, first line, last line], ...]: 1-based PDF pages


_REQUIRED_RECORD = {"doc", "source", "sha256", "n_lines", "n_chunks"}  # the other DocRecord fields are optional


class SearchIndex:
    """A loaded index: trees, noise decisions, chunks, vectors, and the embedder to query them.

    Build one with :func:`ppkit.indexing.build.build_index`, open one with :func:`load_index`. Asking it questions
    is the pipeline's job: :class:`ppkit.pipeline.Index` adds ``retrieve`` and ``ask``.
    """

    def __init__(self, folder: Path | None, manifest: dict, trees: dict[str, Tree],
                 noise: dict[str, dict[str, NoiseDecision]], chunks: list[Chunk], store,
                 embedder: Embedder, config: Config | None = None, *, lexical=None,
                 section_meta: dict[str, dict[str, str]] | None = None, trusted: bool = True,
                 path_vectors: dict[str, np.ndarray] | None = None,
                 section_texts: dict[str, dict[str, SectionText]] | None = None):
        self.trusted = trusted  # False: loaded from a folder ppkit on this account did not write
        self.folder = Path(folder) if folder is not None else None
        self.manifest = manifest
        self.trees = trees  # doc -> Tree
        self.noise = noise  # doc -> node_id -> decision
        self.chunks = chunks
        self.store = store
        self.embedder = embedder
        self.config = config or Config()
        self._chunk_pos = {c.chunk_id: i for i, c in enumerate(chunks)}  # chunk id -> position in self.chunks
        self._lines: dict[str, list[str]] = {}  # doc -> verified source lines
        self._units: dict[str, dict[str, tuple[int, int]]] = {}  # doc -> node_id -> unit line range
        self._rendered: OrderedDict[tuple[str, int, int], list[tuple[int, str]]] = OrderedDict()  # (doc, a, b) LRU
        self._pages: dict[str, tuple[tuple[int, int, int], ...]] = {}  # doc -> (page, first, last line)
        by_doc: dict[str, list[int]] = {}  # doc -> chunk ids
        self._by_node: dict[tuple[str, str], list[Chunk]] = {}  # (doc, node_id) -> its chunks
        for c in chunks:
            by_doc.setdefault(c.doc, []).append(c.chunk_id)
            self._by_node.setdefault((c.doc, c.node_id), []).append(c)
        self._doc_chunk_ids = {d: np.asarray(v, dtype=np.int64) for d, v in by_doc.items()}
        self._lexical = lexical  # LexicalIndex, loaded or built on first use
        self._section_meta = section_meta  # doc -> node_id -> Item, loaded on first use
        self._path_vectors = path_vectors or {}  # breadcrumb path -> vector by the manifest's embedder
        self._texts: dict[str, dict[tuple[int, int], SectionText]] = {  # doc -> (first, last line) -> stored text
            doc: {(t.start, t.end): t for t in texts.values()} for doc, texts in (section_texts or {}).items()}
        # the stored texts are those of units(doc), in its order (section_texts wrote them): units(doc) from them
        # skips recomputing the sections (a cost of a 10-K's first query); its text is still read hash-checked
        self._stored_units = {doc: {nid: (t.start, t.end) for nid, t in texts.items()}
                              for doc, texts in (section_texts or {}).items()}

    @property
    def path_vectors(self) -> dict[str, np.ndarray]:
        """``{breadcrumb path: vector}`` for every indexed section (see :func:`ppkit.core.ids.breadcrumb_path`),
        embedded at index time; empty when ``self.embedder`` is not the one that built the index."""
        if self.embedder.name != self.manifest["embedder"]["name"]:
            return {}
        return self._path_vectors

    @property
    def lexical(self):
        """The BM25 index over the chunks (:class:`ppkit.indexing.lexical.LexicalIndex`).

        Read from ``bm25/`` in the index folder; an index saved before BM25 existed gets
        one built in memory from its chunks (a second or so).
        """
        if self._lexical is None:
            path = self.folder / "bm25" if self.folder is not None else None
            if path is not None and (path / LexicalIndex.META).is_file():
                self._lexical = LexicalIndex.load(path)
                if len(self._lexical) != len(self.chunks):
                    raise IndexFormatError(f"{path}: BM25 over {len(self._lexical)} chunks, the index has "
                                           f"{len(self.chunks)}; rebuild with --fresh")
            else:
                self._lexical = LexicalIndex.build([c.text for c in self.chunks], [c.chunk_id for c in self.chunks])
        return self._lexical

    def section_items(self, doc: str) -> dict[str, str]:
        """``{node_id: Item}`` of ``doc``'s sections (10-Ks; empty for other documents)."""
        if self._section_meta is None:
            path = self.folder / "sections.json" if self.folder is not None else None
            self._section_meta = {}
            if path is not None and path.is_file():
                self._section_meta = json.loads(path.read_text(encoding="utf-8")).get("items", {})
        return self._section_meta.get(self.resolve_doc(doc), {})

    def __repr__(self) -> str:
        where = str(self.folder) if self.folder else "in memory"
        return (f"Index({len(self.trees)} documents, {len(self.chunks)} chunks, "
                f"embedder={self.manifest['embedder']['name']!r}, {where})")

    # -- documents -------------------------------------------------------------------------
    @property
    def docs(self) -> list[str]:
        return list(self.trees)

    def record(self, doc: str) -> DocRecord:
        for d in self.manifest["documents"]:
            if d["doc"] == doc:
                return DocRecord(**d)
        raise NotFound(f"no document {doc!r} in this index (it has: {', '.join(self.docs)})")

    def resolve_doc(self, name: str) -> str:
        """The indexed document called ``name`` (case-insensitive), or a clear error."""
        if name in self.trees:  # already the index's own name (every scope the analyzer builds)
            return name
        for d in self.trees:
            if d.casefold() == name.casefold():
                return d
        raise NotFound(f"no document {name!r} in this index (it has: {', '.join(self.docs)})")

    def lines(self, doc: str) -> list[str]:
        """The source lines of ``doc``, after checking the file is the one that was indexed."""
        if doc not in self._lines:
            rec = self.record(doc)
            src = Path(rec.source)
            if not self.trusted:
                raise UntrustedIndex(
                    f"{doc}: the index at {self.folder} was not written by ppkit on this account (or was edited "
                    f"since), so its document path {src} is not read. If you trust where the index came from, "
                    "pass --trust-index (load_index(..., trust=True)); else rebuild it from your own files "
                    "with `ppkit index DOCS... --fresh`")
            if not src.is_file():
                raise StaleIndexError(
                    f"{doc}: the indexed source {src} is gone; restore it or re-index with "
                    f"`ppkit index <files> --fresh" + (f" --index {self.folder}`" if self.folder is not None else "`"))
            sha = sha256_file(src)
            if sha != rec.sha256:
                raise StaleIndexError(
                    f"{doc}: {src} changed since it was indexed (sha256 {sha[:12]}… != {rec.sha256[:12]}…); "
                    f"line ranges would point at the wrong text. Re-index it: `ppkit index {src}"
                    + (f" --index {self.folder}`" if self.folder is not None else "`"))
            self._lines[doc] = read_lines(src)
        return self._lines[doc]

    def page_ranges(self, doc: str) -> tuple[tuple[int, int, int], ...]:
        """``doc``'s page map as stored in the index: ``(page, first line, last line)``, 1-based PDF
        pages in Markdown order; empty for a document that did not come from a PDF."""
        if doc not in self._pages:
            self._pages[doc] = tuple((int(p), int(a), int(b)) for p, a, b in self.record(doc).pages if b >= a)
        return self._pages[doc]

    def pages_of(self, doc: str, ranges) -> tuple[tuple[int, int, int], ...]:
        """The page map entries of ``doc`` that overlap the line ranges ``[(first, last), ...]``, clipped
        to them: ``(page, first line, last line)`` in line order; empty without a page map.

        >>> index.pages_of("3M_2018_10K", [(421, 430)])  # doctest: +SKIP
        ((18, 421, 430),)
        """
        out = []
        for a, b in ranges:
            out += [(p, max(a, s), min(b, e)) for p, s, e in self.page_ranges(doc) if s <= b and e >= a]
        return tuple(sorted(set(out), key=lambda t: (t[1], t[0])))

    def chunks_of(self, doc: str, node_id: str) -> list[Chunk]:
        """The chunks of one section, in order."""
        return self._by_node.get((doc, node_id), [])

    RENDERED_CACHE = 4096  # line ranges kept rendered (a section is re-rendered by every query that recalls it)

    def rendered_lines(self, doc: str, a: int, b: int) -> list[tuple[int, str]]:
        """(source line, text) of lines a..b of ``doc``, HTML tables rendered as pipe rows
        (:func:`ppkit.core.markup.render`). An indexed section's lines were rendered at index time
        (``rendered/``); other ranges are rendered here and the most recent :attr:`RENDERED_CACHE` kept.
        Either way the source is hash-checked first (:meth:`lines`)."""
        lines = self.lines(doc)
        stored = self._texts.get(doc, {}).get((a, b))
        if stored is not None:
            return stored.lines
        key = (doc, a, b)
        hit = self._rendered.get(key)
        if hit is not None:
            self._rendered.move_to_end(key)
            return hit
        out = render(lines[a - 1 : b], a)
        self._rendered[key] = out
        if len(self._rendered) > self.RENDERED_CACHE:
            self._rendered.popitem(last=False)
        return out

    def rendered_text(self, doc: str, a: int, b: int) -> str:
        """:meth:`rendered_lines` joined by newlines (kept for indexed sections)."""
        stored = self._texts.get(doc, {}).get((a, b))
        if stored is not None:
            self.lines(doc)  # the same hash check as for its lines
            return stored.text
        return "\n".join(t for _, t in self.rendered_lines(doc, a, b))

    def line_tokens(self, doc: str, a: int, b: int) -> list[list[str]]:
        """The BM25 terms of each of :meth:`rendered_lines` ``(doc, a, b)`` (stored for indexed sections)."""
        stored = self._texts.get(doc, {}).get((a, b))
        if stored is not None:
            self.lines(doc)  # the same hash check as for its text
            return stored.line_tokens()
        return [lexical_tokens(t) for _, t in self.rendered_lines(doc, a, b)]

    def section_tokens(self, doc: str, a: int, b: int, chars: int | None = None) -> list[str] | None:
        """The BM25 terms of indexed section ``doc`` lines a..b, as stored at index time; ``None`` when
        that range is not an indexed section or its text is not ``chars`` long (then tokenise the text)."""
        stored = self._texts.get(doc, {}).get((a, b))
        if stored is None or (chars is not None and stored.chars != chars):
            return None
        return stored.tokens()

    def section_texts(self, doc: str) -> dict[str, SectionText]:
        """``{node_id: SectionText}`` of every indexed section of ``doc`` (what ``rendered/`` stores)."""
        out = {nid: section_text(self.rendered_lines(doc, a, b), a, b) for nid, (a, b) in self.units(doc).items()}
        self._texts[doc] = {(t.start, t.end): t for t in out.values()}
        return out

    def stored_section_texts(self, doc: str) -> dict[str, SectionText] | None:
        """``{node_id: SectionText}`` of ``doc`` as read from ``rendered/`` (its source is not read), or None
        when the index does not store them (format 3); what a removal carries over for the kept documents."""
        units = self._stored_units.get(doc)
        return None if units is None else {nid: self._texts[doc][span] for nid, span in units.items()}

    def units(self, doc: str) -> dict[str, tuple[int, int]]:
        """node_id -> (first, last) line of each indexed section of ``doc``."""
        if doc not in self._units and doc in self._stored_units:
            self._units[doc] = self._stored_units[doc]
        if doc not in self._units:
            kept = kept_nodes(self.trees[doc], self.noise.get(doc, {}))
            self._units[doc] = section_units(self.trees[doc], self.lines(doc), kept,
                                             min_chars=self.manifest["settings"]["min_chars"])
        return self._units[doc]

    def chunk(self, chunk_id: int) -> Chunk:
        return self.chunks[self._chunk_pos[int(chunk_id)]]

    def chunk_ids(self, docs: list[str] | None = None) -> np.ndarray | None:
        """Chunk ids of ``docs`` (``None``: no restriction)."""
        if docs is None:
            return None
        arrays = [self._doc_chunk_ids.get(self.resolve_doc(d), np.zeros(0, np.int64)) for d in docs]
        return np.concatenate(arrays) if arrays else np.zeros(0, np.int64)

    # -- querying ---------------------------------------------------------------------------
    def check_embedder(self, embedder: Embedder) -> None:
        want = self.manifest["embedder"]
        if embedder.name != want["name"] or embedder.dim != want["dim"]:
            raise EmbedderMismatch(
                f"this index was built with {want['name']!r} ({want['dim']} dims); it cannot be queried "
                f"with {embedder.name!r} ({embedder.dim} dims). Load it with the same embedder or rebuild it.")

    # -- persistence ------------------------------------------------------------------------
    def save(self, folder: Path | str) -> Path:
        """Write the index into ``folder``, replacing what is there, all or nothing.

        Under the writers' lock: the files go to ``.NAME.tmp-PID`` with the manifest (checksums of
        every file, a generation number, this account's stamp) written last, then two renames swap
        it in (see :mod:`ppkit.indexing.folder`). A folder holding files ppkit did not write is
        never replaced. A failure (disk full, read-only folder, Ctrl-C) leaves the previous index
        as it was and no temporary folder behind.
        """
        folder = real_folder(folder)
        with index_lock(folder):
            check_target(folder)
            recover(folder)
            previous = _read_json(folder / MANIFEST) if folder.is_dir() else None
            generation = int(previous.get("generation", 0)) + 1 if isinstance(previous, dict) else 1
            tmp = folder.parent / f".{folder.name}.tmp-{os.getpid()}"
            try:
                if tmp.exists():
                    shutil.rmtree(tmp)
                manifest = self._write_files(tmp)
                crash_point("tmp-partial")
                manifest = {**manifest, "generation": generation, "files": file_checksums(tmp)}
                manifest["stamp"] = stamp(manifest)
                (tmp / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8")
                fsync_tree(tmp)
                crash_point("tmp-complete")
                commit(tmp, folder)
            except BaseException as e:
                shutil.rmtree(tmp, ignore_errors=True)
                if isinstance(e, OSError) and not isinstance(e, PpkitError):
                    raise IndexWriteError(f"could not write the index at {folder} ({type(e).__name__}: {e}); "
                                          "the previous index there is unchanged") from e
                raise
        self.manifest, self.folder, self.trusted = manifest, folder, True
        return folder

    def _write_files(self, tmp: Path) -> dict:
        """Every file but the manifest into ``tmp``; returns the manifest to write."""
        (tmp / "trees").mkdir(parents=True)
        tree_files = _tree_files(list(self.trees))
        for doc, tree in self.trees.items():
            tree.save(tmp / "trees" / tree_files[doc])
        with open(tmp / "chunks.jsonl", "w", encoding="utf-8") as f:
            for c in self.chunks:
                f.write(json.dumps(asdict(c), ensure_ascii=False) + "\n")
        noise = {doc: [d.to_dict() for d in dec.values()] for doc, dec in self.noise.items()}
        (tmp / "noise.json").write_text(json.dumps(noise, ensure_ascii=False, indent=1), encoding="utf-8")
        self.store.save(tmp)
        self.lexical.save(tmp / "bm25")
        items = {d: self.section_items(d) for d in self.trees}
        (tmp / "sections.json").write_text(json.dumps({"items": items}, ensure_ascii=False), encoding="utf-8")
        paths = list(self._path_vectors)
        (tmp / "paths.json").write_text(json.dumps(paths, ensure_ascii=False), encoding="utf-8")
        vecs = (np.stack([self._path_vectors[p] for p in paths]) if paths
                else np.zeros((0, self.manifest["embedder"]["dim"])))
        np.save(tmp / "paths.npy", vecs.astype(np.float32))
        (tmp / "rendered").mkdir()
        for doc in self.trees:
            save_section_texts(tmp / "rendered" / tree_files[doc], doc, self.section_texts(doc))
        return {**{k: v for k, v in self.manifest.items() if k not in ("files", "stamp", "generation")},
                "trees": tree_files}


def check_target(folder: Path) -> None:
    """Refuse an index folder that is a file, or that holds files ppkit did not write."""
    if folder.exists() and not folder.is_dir():
        raise IndexFormatError(f"{folder} is a file, not an index folder: pass --index a folder (new or a ppkit index)")
    foreign = foreign_files(folder)
    if foreign:
        more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        raise NotAnIndex(f"{folder} is not a ppkit index: it holds files ppkit did not write ({', '.join(foreign[:3])}"
                         f"{more}); nothing was changed. Pass --index a new folder or an existing ppkit index")


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _tree_files(docs: list[str]) -> dict[str, str]:
    """``{doc: file name in trees/}``, distinct even when names differ only in characters a file
    name cannot hold or in case (``my report`` and ``my_report``)."""
    out, taken = {}, set()
    for doc in docs:
        name = _safe(doc)
        if name != doc or name.casefold() in taken:
            name = f"{name}-{hashlib.sha256(doc.encode('utf-8')).hexdigest()[:10]}"
        taken.add(name.casefold())
        out[doc] = name + ".json"
    return out


def _safe(doc: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in doc)


def load_index(folder: Path | str | None = None, *, embedder: Embedder | None = None,
               config: Config | None = None,
               trust: bool = False, connection: dict | None = None) -> SearchIndex:
    """Open an index folder (default: :func:`default_index_dir`).

    Reading never writes: every file is read (and checked against its checksum) while no save
    can swap the folder, so the result is one whole index; after a crash the best complete
    copy is read where it lies, and the next ``ppkit index`` puts it back.

    Args:
        folder: the index folder.
        embedder: the embedder to query with; default: the one named in the manifest.
            Another embedder is an :class:`EmbedderMismatch`.
        trust: read the document paths of an index that ppkit on this account did not write.
        connection: the vector store's connection options, e.g. ``{"url": ...}``: the Qdrant server of an
            index whose vectors live on one (default ``$QDRANT_URL``); what the folder records is never
            used by itself (see :mod:`ppkit.indexing.stores`).

    Raises:
        MissingFile: no index there (says how to build one).
        IndexFormatError: a damaged or incompatible index (names the file, says to rebuild).
    """
    folder = real_folder(folder if folder is not None else default_index_dir())
    # one stat (is_file), not exists() then is_dir(): a rebuild's swap between the two would read as "a file"
    if folder.is_file():
        raise IndexFormatError(f"{folder} is a file, not an index folder: pass --index the folder `ppkit index` wrote")
    with swap_lock(folder, shared=True):
        where = readable_copy(folder)
        return _load(where, folder, embedder, config, trust, connection)


def _damaged(folder: Path, what: str) -> IndexFormatError:
    return IndexFormatError(f"{what}: the index at {folder} is damaged; rebuild it with "
                            f"`ppkit index DOCS... --index {folder} --fresh`")


def _manifest(where: Path, folder: Path) -> dict:
    """The manifest of the copy at ``where``, checked for the entries loading needs."""
    mpath = where / MANIFEST
    if not mpath.is_file():
        raise MissingFile(f"no index at {folder}: build one with `ppkit index DOCS... --index {folder}`")
    try:
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise _damaged(folder, f"{mpath} is corrupt ({e})") from None
    if not isinstance(manifest, dict):
        raise _damaged(folder, f"{mpath} is not a ppkit manifest (a JSON object was expected)")
    if manifest.get("format_version") not in READABLE_FORMATS:
        raise IndexFormatError(
            f"{folder} has index format {manifest.get('format_version')!r}, this ppkit reads {FORMAT_VERSION}; "
            f"rebuild it with `ppkit index DOCS... --index {folder} --fresh`")
    shapes = {"embedder": dict, "documents": list, "settings": dict, "files": dict, "trees": dict}
    for key, shape in shapes.items():
        if not isinstance(manifest.get(key), shape):
            raise _damaged(folder, f"{mpath} has no valid {key!r} entry")
    emb = manifest["embedder"]
    if not isinstance(emb.get("name"), str) or not isinstance(emb.get("dim"), int):
        raise _damaged(folder, f"{mpath}: the 'embedder' entry needs a name and an integer dim")
    for d in manifest["documents"]:
        if not isinstance(d, dict) or not _REQUIRED_RECORD <= set(d):
            raise _damaged(folder, f"{mpath}: a document record lacks doc/source/sha256/n_lines/n_chunks")
        name = manifest["trees"].get(d["doc"])
        if not isinstance(name, str) or "/" in name or "\\" in name or not name.endswith(".json") or name.startswith("."):
            raise _damaged(folder, f"{mpath}: no valid tree file for document {d['doc']!r}")
    return manifest


def _load(where: Path, folder: Path, embedder, config, trust: bool, connection: dict | None) -> SearchIndex:
    manifest = _manifest(where, folder)
    docs = [d["doc"] for d in manifest["documents"]]
    store_entry = manifest.get("store") if isinstance(manifest.get("store"), dict) else {"name": stores.DEFAULT}
    try:
        store_class = stores.store_class(store_entry.get("name", stores.DEFAULT))
    except InvalidInput as e:
        raise _damaged(folder, f"{where / MANIFEST}: {e}") from None
    needed = ["chunks.jsonl", "noise.json", "sections.json", "paths.json", "paths.npy"]
    stored_texts = manifest["format_version"] >= 4  # format 3: no rendered/ (see READABLE_FORMATS)
    needed += [f"{sub}/{manifest['trees'][d]}" for d in docs for sub in ("trees", "rendered")[:1 + stored_texts]]
    needed += list(store_class.required_files)
    unlisted = [n for n in needed if n not in manifest["files"]]
    bad = [f"{where / n} is not listed in the manifest's checksums" for n in unlisted]
    bad += bad_files(where, manifest["files"])
    if bad:
        raise _damaged(folder, bad[0] + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""))
    trees, chunks = {}, []
    current = where / "trees"
    try:
        for d in manifest["documents"]:
            current = where / "trees" / manifest["trees"][d["doc"]]
            tree = Tree.load(current)
            trees[d["doc"]] = _confined_images(tree, Path(d["source"]).parent)
        current = where / "chunks.jsonl"
        with open(current, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    chunks.append(Chunk(**json.loads(line)))
        current = where / "noise.json"
        raw_noise = json.loads(current.read_text(encoding="utf-8"))
        noise = {doc: {d["node_id"]: NoiseDecision(**d) for d in decs} for doc, decs in raw_noise.items()}
        current = where / "sections.json"
        section_meta = json.loads(current.read_text(encoding="utf-8"))["items"]
        current = where / "paths.json"
        paths = json.loads(current.read_text(encoding="utf-8"))
        current = where / "paths.npy"
        path_vecs = np.load(current, allow_pickle=False)
        if not isinstance(paths, list) or path_vecs.shape != (len(paths), manifest["embedder"]["dim"]):
            raise ValueError(f"{len(paths)} paths, vectors of shape {path_vecs.shape}")
        texts = {}
        for d in docs if stored_texts else ():
            current = where / "rendered" / manifest["trees"][d]
            texts[d] = load_section_texts(current, d)
    except (OSError, KeyError, TypeError, AttributeError, ValueError) as e:
        raise _damaged(folder, f"{current} cannot be read ({type(e).__name__}: {e})") from None
    _check_ids(folder, trees, chunks, noise)
    dim = manifest["embedder"]["dim"]
    store = stores.open(store_entry, where, dim, connection=connection)
    if len(store) != len(chunks):
        raise _damaged(folder, f"{len(store)} vectors for {len(chunks)} chunks")
    lexical = None
    if (where / "bm25" / LexicalIndex.META).is_file():
        lexical = LexicalIndex.load(where / "bm25")
        if len(lexical) != len(chunks):
            raise _damaged(folder, f"{where / 'bm25'}: BM25 over {len(lexical)} chunks, the index has {len(chunks)}")
    given = ("embedder",) if embedder is not None else ()  # an embedder passed in is checked against the manifest
    if embedder is None:
        name = manifest["embedder"]["name"]
        kind = manifest["embedder"].get("kind", name.split(":")[0].split("-")[0])
        embedder = get_embedder(kind, **manifest["embedder"].get("kwargs", {}))
    index = SearchIndex(folder, manifest, trees, noise, chunks, store, embedder, config, lexical=lexical,
                        section_meta=section_meta, trusted=trust or is_stamped(manifest),
                        path_vectors=dict(zip(paths, path_vecs.astype(np.float32))), section_texts=texts)
    index.check_embedder(embedder)
    check_settings(manifest, config, folder, skip=given)
    return index


def built_with(manifest: dict) -> dict:
    """The index-time settings (:data:`ppkit.core.config.INDEX_TIME_FIELDS`) an index was built with, read
    from what its manifest records: ``embedder`` as the Config names it (``"local-bf16"``, ``"hash"``...),
    ``chunk_size`` and ``chunk_overlap`` from its ``"settings"`` (absent ones are left out)."""
    emb = manifest["embedder"]
    kind = emb.get("kind", emb["name"].split(":")[0].split("-")[0])
    if kind == "local":  # the resolved precision is in the name (see LocalEmbedder)
        kind += "-int8" if "+int8" in emb["name"] else "-bf16" if "+bf16" in emb["name"] else "-fp32"
    settings = {k: manifest["settings"][k] for k in INDEX_TIME_FIELDS if k in manifest["settings"]}
    return {"embedder": kind, **settings}


def check_settings(manifest: dict, config: Config | None, folder: Path, *, skip=()) -> None:
    """Refuse a Config that sets an index-time setting explicitly (``config.explicit``) to another value than
    the index was built with; a setting left at its default opens any index (the index's value is used).
    ``"local"`` (MiniLM at the CPU's precision) matches an index built with either precision.

    Raises:
        SettingsMismatch: names the setting, both values and what to do.
    """
    if config is None:
        return
    have = built_with(manifest)
    for name in INDEX_TIME_FIELDS:
        asked = getattr(config, name)
        if name in skip or name not in config.explicit or name not in have or asked == have[name] \
                or (name == "embedder" and have[name].startswith(f"{asked}-")):
            continue
        var = ENV_FIELDS[name][0] if name in ENV_FIELDS else None
        drop = f"unset {var} / leave {name} out of the Config" if var else f"leave {name} out of the Config"
        raise SettingsMismatch(
            f"the index at {folder} was built with {name}={have[name]!r}, but the settings ask for "
            f"{name}={asked!r}: rebuild it with that setting (`ppkit index DOCS... --index {folder} --fresh`), "
            f"or {drop} to use the index as built")


def _check_ids(folder: Path, trees: dict[str, Tree], chunks: list[Chunk], noise: dict) -> None:
    """Every chunk and noise decision names a node of its document's tree; chunk ids are 0..n-1."""
    for i, c in enumerate(chunks):
        if c.chunk_id != i:
            raise _damaged(folder, f"{folder / 'chunks.jsonl'}: chunk {i} has id {c.chunk_id!r}")
        if c.doc not in trees or c.node_id not in trees[c.doc].nodes:
            raise _damaged(folder, f"{folder / 'chunks.jsonl'}: chunk {i} points at node {c.node_id!r} of "
                                   f"{c.doc!r}, which its tree does not have")
    for doc, decs in noise.items():
        missing = [n for n in decs if doc not in trees or n not in trees[doc].nodes]
        if missing:
            raise _damaged(folder, f"{folder / 'noise.json'}: node {missing[0]!r} of {doc!r} is not in its tree")


def _confined_images(tree: Tree, doc_dir: Path) -> Tree:
    """The tree with every image re-resolved against its document's folder: what the index
    recorded as ``resolved`` is never used, so a crafted tree cannot point outside that folder."""
    base = doc_dir.resolve()
    nodes = {}
    for nid, node in tree.nodes.items():
        images = []
        for im in node.images:
            resolved = None
            parts = PurePosixPath(im.path.replace("\\", "/")).parts
            if im.resolved and parts and ".." not in parts and not im.path.startswith(("/", "\\")) \
                    and ":" not in parts[0]:
                p = (base / Path(*parts)).resolve()
                inside = base in p.parents
                resolved = str(p) if inside and p.is_file() else None
            else:
                inside = False
            problem = (im.problem if resolved or not im.resolved else
                       "the file does not exist" if inside else "not inside the document's folder, not loaded")
            images.append(replace(im, resolved=resolved, problem=problem))
        nodes[nid] = replace(node, images=tuple(images))
    return replace(tree, nodes=nodes)
