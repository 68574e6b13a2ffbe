"""Saying what indexed documents are: their company, period and form edited in place, nothing embedded again.

:func:`describe_documents` sets what the user says a document is (:func:`ppkit.documents.described.described`:
``company``, ``period``, ``form``) on documents already in an index folder. The manifest's records change (their
``metadata``: company, aliases, fiscal year, quarter, period, form type, with ``"user"`` as their source), so the
analyzer's filters and the documents list follow at once; a store that keeps metadata as payloads (Qdrant) gets
new payloads. Chunks, vectors, trees, BM25 and the section texts are carried over as they are: no document is read
or embedded again.

The write is the removal's (:func:`ppkit.indexing.remove.remove_documents` without removing anything): under the
writers' lock, a complete copy swapped in by rename, so a crash leaves the old index or the new one. Indexing the
same file again keeps what was said (see :class:`ppkit.indexing.build.BuildOptions`).
"""

from __future__ import annotations

import time
from pathlib import Path

from ..core.config import Config
from ..core.errors import InvalidInput, MissingFile
from ..documents.described import USER_FIELDS, described
from .embed import Embedder
from .folder import MANIFEST, index_lock, readable_copy, recover
from .index import SearchIndex, UntrustedIndex, check_target, default_index_dir, load_index
from .remove import _pruned, _resolve

__all__ = ["describe_documents"]


def describe_documents(folder: Path | str | None, said: dict[str, dict], *, embedder: Embedder | None = None,
                       config: Config | None = None, connection: dict | None = None) -> SearchIndex:
    """Set what documents of the index in ``folder`` are, without embedding anything.

    Args:
        folder: the index folder (default :func:`ppkit.indexing.index.default_index_dir`).
        said: ``{document name: {"company": ..., "period": ..., "form": ...}}``, any of the three per document
            (``"period"`` like ``FY2024`` or ``FY2024Q2``; ``"form"`` one of the cover reader's forms; an empty
            string clears a field).
        embedder, config, connection: as for :func:`ppkit.indexing.remove.remove_documents`.

    Returns:
        The index as saved.

    Raises:
        InvalidInput: an unknown field, a period or form that cannot be read (nothing is changed).
        NotFound: a name that is not in the index.

    >>> describe_documents("/tmp/idx", {"report": {"company": "Harbor Lights", "period": "FY2024"}})  # doctest: +SKIP
    """
    if not said:
        raise InvalidInput("nothing to describe: give a document name and its company, period or form")
    for name, fields in said.items():
        unknown = sorted(set(fields) - set(USER_FIELDS))
        if unknown:
            raise InvalidInput(f"{name}: {', '.join(unknown)} cannot be set; a document's {', '.join(USER_FIELDS)} can")
        described({}, name, **fields)  # a bad period or form: refused before the index is touched
    folder = Path(folder) if folder is not None else default_index_dir()
    if not (readable_copy(folder) / MANIFEST).is_file():
        raise MissingFile(f"no index at {folder}: build one with `ppkit index DOCS... --index {folder}`")
    check_target(folder)
    t0 = time.perf_counter()
    with index_lock(folder):
        recover(folder)
        previous = load_index(folder, embedder=embedder, config=config, connection=connection)
        if not previous.trusted:
            raise UntrustedIndex(f"the index at {folder} was not written by ppkit on this account (or was edited "
                                 "since); it is not updated in place: rebuild it from your own files with --fresh")
        metadata: dict[str, dict] = {}
        for name, fields in said.items():
            doc = _resolve(previous, [name], folder)[0]
            metadata[doc] = described(metadata.get(doc) or previous.record(doc).metadata or {}, doc, **fields)
        index = _pruned(previous, [], folder, connection, t0, metadata=metadata)
        index.save(folder)
        index.store.after_save()
    return index
