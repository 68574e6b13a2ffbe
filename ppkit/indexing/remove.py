"""Removing documents from an index: every trace of them, all or nothing.

:func:`remove_documents` rewrites the index in a folder without the named documents. What a
document leaves in an index folder, and what happens to it:

* ``manifest.json``: its record (hash, metadata, pages) and its files' checksums: dropped;
* ``trees/<doc>.json`` and ``rendered/<doc>.json``: not written again;
* ``chunks.jsonl``: its chunks dropped, the others renumbered ``0..n-1`` (chunk ids are positions);
* the store's vectors (FAISS ``vectors.faiss``; Qdrant: its points, their payloads and sparse BM25
  vectors): a new store holds the kept chunks' vectors, copied from the old one (nothing is embedded);
* ``bm25/``: rebuilt over the chunks left, so its document frequencies no longer count the removed text;
* ``noise.json`` and ``sections.json``: its entries dropped;
* ``paths.json`` / ``paths.npy``: the breadcrumb paths that only its sections had are dropped.

The write is the build's own (:meth:`ppkit.indexing.index.SearchIndex.save`): under the writers' lock,
after recovering from an earlier crash, a complete copy is swapped in by rename, so a crash at any step
leaves the old index or the new one and a reader sees one of them whole
(:mod:`ppkit.indexing.folder`). The kept documents' stored section texts are carried over as they
are. :data:`REMOVE_CRASH_STEPS` lists where the ``PPKIT_TEST_CRASH_AT`` test hook can kill a removal.

Removing the last document leaves a valid, empty index: a question finds nothing in it, and
``ppkit index`` adds documents to it again. Adding a removed document back embeds only that document.

It does not touch the source files, nor the PDF extraction cache (kept in the cache folder by the PDF's
content, so adding the same PDF back does not extract it again), and it does not update an index it did
not write (an unstamped folder: rebuild it with ``--fresh``).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ..core.config import Config
from ..core.errors import InvalidInput, MissingFile, NotFound
from . import stores
from .build import BuildOptions, _Build, _path_vectors, _renumbered, _replaced_store, _reusable_chunks, _store_choice
from .embed import Embedder
from .folder import CRASH_STEPS, MANIFEST, crash_point, index_lock, readable_copy, recover
from .index import FORMAT_VERSION, SearchIndex, UntrustedIndex, check_target, default_index_dir, load_index
from .lexical import LexicalIndex
from .sections import SectionText

__all__ = ["remove_documents", "REMOVE_CRASH_STEPS"]

# where PPKIT_TEST_CRASH_AT can kill a removal, in order: the new index built in memory (nothing written),
# the save's steps, then the new folder in place before a server store drops the collection it replaced
REMOVE_CRASH_STEPS = ("remove-pruned", *CRASH_STEPS, "remove-committed")


class _Pruned(SearchIndex):
    """The index without the removed documents; the kept ones' section texts are saved as stored."""

    def section_texts(self, doc: str) -> dict[str, SectionText]:
        stored = self.stored_section_texts(doc)
        return stored if stored is not None else super().section_texts(doc)


def _names(names) -> list[str]:
    """The names as a list without repeats, or a clear error (a bare string is refused)."""
    if isinstance(names, (str, bytes)):
        raise InvalidInput(f"names must be a list of document names, not a string: remove_documents(folder, "
                           f"[{names!r}])")
    try:
        out = list(dict.fromkeys(names))
    except TypeError:
        raise InvalidInput(f"names must be a list of document names, not {type(names).__name__}") from None
    if not out:
        raise InvalidInput("no documents to remove: name at least one")
    bad = [n for n in out if not isinstance(n, str)]
    if bad:
        raise InvalidInput(f"document names are strings, not {bad[0]!r}")
    return out


def _resolve(previous: SearchIndex, names: list[str], folder: Path) -> list[str]:
    """The indexed documents ``names`` name (exactly, else the one that matches case-insensitively), or one
    error naming every unknown name and listing the index's documents."""
    docs = previous.docs
    out: list[str] = []
    unknown: list[str] = []
    for name in names:
        folded = [d for d in docs if d.casefold() == name.casefold()]
        if name in docs or len(folded) == 1:
            out.append(name if name in docs else folded[0])
        else:  # not there, or only case-insensitively and more than once ("AMD" and "amd")
            unknown.append(name)
    if unknown:
        listed = ", ".join(docs[:30]) + (f" and {len(docs) - 30} more" if len(docs) > 30 else "")
        raise NotFound(f"no document {', '.join(map(repr, unknown))} in the index at {folder} "
                       f"(it has: {listed or 'no documents'}); nothing was removed")
    return list(dict.fromkeys(out))


def remove_documents(folder: Path | str | None, names, *, embedder: Embedder | None = None,
                     config: Config | None = None, connection: dict | None = None) -> SearchIndex:
    """Remove documents from the index in ``folder``: their chunks, vectors, BM25 terms, trees, section
    texts, breadcrumb paths and manifest records, in one atomic write.

    Args:
        folder: the index folder (default :func:`ppkit.indexing.index.default_index_dir`).
        names: a list of document names (as indexed: the file stems; case-insensitive when unambiguous).
        embedder: default: the one the manifest names (nothing is embedded).
        config: checked against the index's settings like :func:`ppkit.indexing.index.load_index`.
        connection: the store's connection options (a Qdrant server's ``{"url": ...}``).

    Returns:
        The index as saved, without those documents (empty when they were all its documents).

    Raises:
        NotFound: a name that is not in the index (the message lists its documents; nothing is removed).
        MissingFile: no index in ``folder``.
        UntrustedIndex: an index that ppkit on this account did not write is not updated in place.

    >>> remove_documents("/tmp/amd-index", ["AMD"]).docs  # doctest: +SKIP
    []
    """
    names = _names(names)
    folder = Path(folder) if folder is not None else default_index_dir()
    if not (readable_copy(folder) / MANIFEST).is_file():  # before the lock, which would create files beside it
        raise MissingFile(f"no index at {folder}: build one with `ppkit index DOCS... --index {folder}`")
    check_target(folder)
    t0 = time.perf_counter()
    with index_lock(folder):  # the whole load-modify-save: a writer that comes later waits
        recover(folder)
        previous = load_index(folder, embedder=embedder, config=config, connection=connection)
        if not previous.trusted:
            raise UntrustedIndex(f"the index at {folder} was not written by ppkit on this account (or was edited "
                                 "since); it is not updated in place: rebuild it from your own files with --fresh")
        removed = _resolve(previous, names, folder)
        index = _pruned(previous, removed, folder, connection, t0)
        crash_point("remove-pruned")
        index.save(folder)
        crash_point("remove-committed")
        index.store.after_save()  # a server store drops the collection of the index it replaced
    return index


def _pruned(previous: SearchIndex, removed: list[str], folder: Path, connection: dict | None,
            t0: float, *, metadata: dict[str, dict] | None = None) -> _Pruned:
    """``previous`` without the documents ``removed``, in memory, with a new store of the kept vectors;
    ``metadata``: ``{doc: new metadata}`` for kept documents (the store's payloads follow)."""
    build = _Build()
    for rec in previous.manifest["documents"]:
        if rec["doc"] not in removed:
            build.keep(previous, {**rec, **({"metadata": metadata[rec["doc"]]} if rec["doc"] in (metadata or {}) else {})})
    kept = _reusable_chunks(previous, build)  # the kept chunks and their stored vectors
    chunks, vectors = _renumbered(build, kept, None)
    store_name, connection = _store_choice(previous, BuildOptions(connection=connection))
    replaces = _replaced_store(folder, previous)
    previous.store.close()  # its vectors are read; a local Qdrant collection allows one client at a time
    vstore = stores.create(store_name, previous.embedder.dim, folder=folder, replaces=replaces, connection=connection)
    vstore.add_chunks(chunks, np.stack(vectors) if vectors else None, build.records, build.section_meta)
    texts = {doc: t for doc in build.trees if (t := previous.stored_section_texts(doc)) is not None}
    manifest = {
        **previous.manifest,
        "format_version": FORMAT_VERSION,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "store": vstore.manifest_entry(),
        "documents": list(build.records.values()),
        "build": {**({"removed": removed} if removed or not metadata else {"described": sorted(metadata)}),
                  "chunks_removed": len(previous.chunks) - len(chunks), "chunks_embedded": 0,
                  "chunks_reused": len(chunks), "seconds_total": round(time.perf_counter() - t0, 2)},
    }
    return _Pruned(folder, manifest, build.trees, build.noise, chunks, vstore, previous.embedder, previous.config,
                   lexical=LexicalIndex.build([c.text for c in chunks], [c.chunk_id for c in chunks]),
                   section_meta=build.section_meta, section_texts=texts,
                   path_vectors=_path_vectors(chunks, build.trees, previous.embedder, previous))
