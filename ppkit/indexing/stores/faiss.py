"""The FAISS store: exact inner-product search, embedded in the process, one file in the index folder.

:class:`FaissStore` is the default store: an exact ``IndexFlatIP`` inside an ``IndexIDMap2``
(so chunk ids survive removals), persisted with ``faiss.write_index`` as ``vectors.faiss``.
Search is exact at this project's scale (a few thousand chunks). Filters are applied *before*
search with an ``IDSelectorBatch``, so a filtered query is still exact over the allowed ids.

It has no payloads (filters are chunk ids, ``supports_where`` is False) and no connection.
The protocol it implements and the registry are in :mod:`ppkit.indexing.stores`.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ...core.errors import InvalidInput, MissingDependency, MissingFile
from .base import StoreBase

__all__ = ["FaissStore"]


def _faiss():
    try:
        import faiss
    except ImportError:
        raise MissingDependency("the FAISS store needs faiss-cpu: pip install faiss-cpu") from None
    return faiss


class FaissStore(StoreBase):
    """Exact inner-product search over unit vectors (FAISS ``IndexIDMap2(IndexFlatIP)``)."""

    FILENAME = "vectors.faiss"
    name = "faiss"
    supports_where = False  # filters are chunk ids (allowed_ids)
    files = r"vectors\.faiss"
    required_files = (FILENAME,)

    def __init__(self, dim: int, index=None):
        faiss = _faiss()
        self.dim = dim
        self.index = index if index is not None else faiss.IndexIDMap2(faiss.IndexFlatIP(dim))

    def __repr__(self) -> str:
        return f"FaissStore(dim={self.dim}, n={len(self)})"

    def __len__(self) -> int:
        return int(self.index.ntotal)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise InvalidInput(f"expected vectors of shape (n, {self.dim}), got {vectors.shape}")
        self.index.add_with_ids(vectors, np.asarray(ids, dtype=np.int64))

    def remove(self, ids: np.ndarray) -> None:
        faiss = _faiss()
        ids = np.asarray(ids, dtype=np.int64)
        if len(ids):
            self.index.remove_ids(faiss.IDSelectorBatch(ids))

    def search(self, query: np.ndarray, k: int, allowed_ids: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        faiss = _faiss()
        q = np.ascontiguousarray(np.asarray(query, dtype=np.float32).reshape(1, -1))
        if q.shape[1] != self.dim:
            raise InvalidInput(f"query has {q.shape[1]} dims, the store {self.dim}")
        if len(self) == 0 or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        params = None
        if allowed_ids is not None:
            allowed_ids = np.asarray(allowed_ids, dtype=np.int64)
            if len(allowed_ids) == 0:
                return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
            params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(allowed_ids))
        k = min(k, len(self))
        # one query: one OpenMP thread (the same result). Two cost far more when the other core is busy
        # (the second thread's wake-up and spin; docs/results/speed.md), and the setting is this thread's own.
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)
        try:
            scores, ids = self.index.search(q, k, params=params)
        finally:
            faiss.omp_set_num_threads(threads)
        keep = ids[0] >= 0
        return ids[0][keep], scores[0][keep]

    def vectors(self, ids: np.ndarray) -> np.ndarray:
        """The stored vectors of ``ids`` (for incremental rebuilds and analysis)."""
        return np.stack([self.index.reconstruct(int(i)) for i in ids]) if len(ids) else np.zeros((0, self.dim), np.float32)

    def manifest_entry(self) -> dict:
        return {"name": self.name, "file": self.FILENAME}

    def save(self, folder: Path) -> None:
        faiss = _faiss()
        folder = Path(folder)
        tmp = folder / (self.FILENAME + ".tmp")
        faiss.write_index(self.index, str(tmp))
        os.replace(tmp, folder / self.FILENAME)

    @classmethod
    def open(cls, entry: dict, folder: Path, dim: int) -> FaissStore:
        """The store saved in ``folder`` (its manifest ``entry`` names nothing else to find)."""
        return cls.load(folder, dim)

    @classmethod
    def load(cls, folder: Path, dim: int) -> FaissStore:
        faiss = _faiss()
        path = Path(folder) / cls.FILENAME
        if not path.is_file():
            raise MissingFile(f"{path} is missing: the index is incomplete, rebuild it with `ppkit index ... --fresh`")
        try:
            index = faiss.read_index(str(path))
        except RuntimeError as e:
            raise InvalidInput(f"{path} is not a readable FAISS index ({str(e).splitlines()[0][:200]}): rebuild with --fresh") from None
        if index.d != dim:
            raise InvalidInput(f"{path} holds {index.d}-dim vectors but the manifest says {dim}: rebuild with --fresh")
        return cls(dim, index)
