"""The vector store protocol, and the defaults a store class inherits.

A vector store holds chunk ids and their unit vectors and returns the nearest ids by inner
product. :class:`VectorStore` is what the rest of ppkit relies on: the build fills a store
(:meth:`~VectorStore.add_chunks`), the index folder saves it and records its
:meth:`~VectorStore.manifest_entry`, loading re-opens it (:meth:`~VectorStore.open`), and
retrieval searches it. Everything that differs from one store to another (its files in the
index folder, how it connects to a server, what a rebuild must clean up) is an attribute or a
method of the store class, so no other module names a store.

:class:`StoreBase` supplies the defaults of an embedded store (no connection, nothing to release,
nothing to do after a save, no payload filters). It does not search, embed or persist anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Protocol

import numpy as np

__all__ = ["VectorStore", "StoreBase"]


class VectorStore(Protocol):
    """Chunk ids and their unit vectors; nearest ids by inner product.

    Attributes:
        dim: the vectors' dimension.
        name: the store's registry name, recorded in the index manifest (``"faiss"``, ``"qdrant"``).
        supports_where: ``search`` also takes ``where={doc: None | [10-K Items]}`` (payload filters),
            and ``add`` takes a third argument, one payload dict per id.
        files: a regular expression of the paths (relative, ``/``-separated) the store writes into an
            index folder, so that the folder's own files are told from foreign ones.
        required_files: the files a saved store cannot be opened without (checked against the manifest's
            checksums before loading).
        connection_env: ``{environment variable: connection option}`` (read through
            :func:`ppkit.core.config.store_connection_env`, never from an index folder).
        connection: the connection options this store was opened with; a rebuild of the same index
            with the same store reuses them unless given others.
    """

    dim: int
    name: str
    supports_where: bool
    files: str
    required_files: tuple[str, ...]
    connection_env: dict[str, str]
    connection: dict[str, Any]

    @classmethod
    def create(cls, dim: int, *, folder: Path | None = None, replaces: dict | None = None,
               **options) -> VectorStore:
        """A new, empty store for a build of the index at ``folder``; ``replaces`` is the manifest's
        ``"store"`` entry of the index the build replaces there (or None)."""
        ...

    @classmethod
    def open(cls, entry: dict, folder: Path, dim: int, **connection) -> VectorStore:
        """The store an index folder records (``entry``: the manifest's ``"store"`` entry)."""
        ...

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None: ...

    def add_chunks(self, chunks: list, vectors: np.ndarray | None, records: dict[str, dict],
                   section_items: dict[str, dict[str, str]]) -> None:
        """Add a build's chunks with their vectors (``records``: ``{doc: manifest record}``,
        ``section_items``: ``{doc: {node_id: 10-K Item}}``, for stores that keep payloads)."""
        ...

    def remove(self, ids: np.ndarray) -> None: ...

    def search(self, query: np.ndarray, k: int, allowed_ids: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, scores) of the ``k`` nearest vectors, best first; ``allowed_ids`` restricts the search."""
        ...

    def vectors(self, ids: np.ndarray) -> np.ndarray:
        """The stored vectors of ``ids``, in that order."""
        ...

    def manifest_entry(self) -> dict:
        """What the index manifest records about this store (its ``"store"`` entry)."""
        ...

    def after_save(self) -> None:
        """Called once the index folder recording this store is in place (a server store drops the
        collection of the index it replaced)."""
        ...

    def close(self) -> None:
        """Release the store (a local Qdrant collection allows one client at a time)."""
        ...

    def __len__(self) -> int: ...

    def save(self, folder: Path) -> None: ...


class StoreBase:
    """Defaults for a store class: embedded (no connection options), no payload filters, nothing to
    release or clean up. A subclass sets ``name`` and ``files`` and implements the rest of
    :class:`VectorStore`."""

    name: ClassVar[str] = ""
    supports_where: ClassVar[bool] = False
    files: ClassVar[str] = ""
    required_files: ClassVar[tuple[str, ...]] = ()
    connection_env: ClassVar[dict[str, str]] = {}
    connection: dict[str, Any] = {}

    @classmethod
    def create(cls, dim: int, *, folder: Path | None = None, replaces: dict | None = None, **options):
        return cls(dim, **options)  # type: ignore[call-arg]

    @classmethod
    def open(cls, entry: dict, folder: Path, dim: int, **connection):
        raise NotImplementedError

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        raise NotImplementedError

    def add_chunks(self, chunks: list, vectors: np.ndarray | None, records: dict[str, dict],
                   section_items: dict[str, dict[str, str]]) -> None:
        if chunks:
            self.add(np.asarray([c.chunk_id for c in chunks], dtype=np.int64), np.asarray(vectors))

    def after_save(self) -> None:
        """Nothing to clean up."""

    def close(self) -> None:
        """Nothing to release."""
