"""The static embedding of an index's chunks: a second, cheap dense channel for stage 1.

An index stores its chunks' vectors by the embedder that built it (MiniLM) only. The static
stage-1 channel (``--retrieval dense+static`` / ``hybrid+static``, :mod:`ppkit.retrieval.hybrid`) also
needs each chunk's vector by the static word-piece embedding (:class:`ppkit.indexing.static.StaticEmbedder`,
distilled from the same MiniLM). They are computed from the stored chunk texts the first time an index
needs them (the four 10-Ks: 2,362 chunks, under a second) and cached in
``<PPKIT_CACHE_DIR>/static/chunks-<key>.npy``, keyed by the index's chunks (the ``chunks.jsonl``
checksum of its manifest; for an index that was never saved, a hash of its chunk ids and texts) and
by the static table's key (:func:`ppkit.indexing.static.table_path`). The index folder itself is never
written: old indexes work unchanged, and a read-only index too.

>>> static_chunk_vectors(index).search("total current assets", 200)  # doctest: +SKIP
(array([...]), array([...]))
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from weakref import WeakKeyDictionary

import numpy as np

from ..core.config import cache_dir
from .embed import Embedder
from .index import SearchIndex
from .static import StaticEmbedder, save_cached

__all__ = ["StaticChunkVectors", "chunks_key", "static_chunk_vectors"]

_CHANNELS: WeakKeyDictionary = WeakKeyDictionary()  # index -> StaticChunkVectors


def chunks_key(index: SearchIndex) -> str:
    """What the chunks' static vectors depend on in ``index``: its ``chunks.jsonl`` checksum when it was
    saved (the manifest's ``files``), else a sha256 of its chunk ids and texts."""
    saved = (index.manifest.get("files") or {}).get("chunks.jsonl")
    if saved:
        return f"file:{saved}"
    h = hashlib.sha256()
    for c in index.chunks:
        h.update(f"{c.chunk_id}\0{len(c.text)}\0".encode())
        h.update(c.text.encode("utf-8"))
    return f"texts:{h.hexdigest()}"


class StaticChunkVectors:
    """The static vectors of an index's chunks (rows in ``index.chunks`` order) and a search over them.

    Args:
        ids: the chunk ids, row ``i`` for ``ids[i]``.
        vectors: ``(len(ids), embedder.dim)`` float32, unit rows.
        embedder: the embedder that made them (it embeds the query): a
            :class:`~ppkit.indexing.static.StaticEmbedder`, or any :class:`~ppkit.indexing.embed.Embedder`.
    """

    def __init__(self, ids: np.ndarray, vectors: np.ndarray, embedder: Embedder):
        self.ids = np.asarray(ids, dtype=np.int64)
        self.vectors = vectors
        self.embedder = embedder
        self._row = {int(c): i for i, c in enumerate(self.ids)}

    def __len__(self) -> int:
        return len(self.ids)

    def search(self, text: str, k: int, allowed_ids: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` chunks (of ``allowed_ids``; ``None``: all) nearest to ``text`` by the static embedding:
        (chunk ids, cosine similarities), best first; ties by chunk id."""
        q = self.embedder.embed_query(text)
        if allowed_ids is None:
            rows = np.arange(len(self.ids))
        else:
            rows = np.asarray([self._row[int(c)] for c in allowed_ids if int(c) in self._row], dtype=np.int64)
        if not len(rows) or k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        sims = self.vectors[rows] @ q
        ids = self.ids[rows]
        order = np.lexsort((ids, -sims))[:k]
        return ids[order], sims[order]


def _cache_path(index: SearchIndex, embedder) -> Path:
    # a StaticEmbedder's table key names its table; another embedder (a test's stand-in) is keyed by its name
    table = embedder.table_key() if hasattr(embedder, "table_key") else f"{embedder.name}@{embedder.dim}"
    key = hashlib.sha256(f"{chunks_key(index)}|{table}|{len(index.chunks)}".encode()).hexdigest()[:24]
    return cache_dir() / "static" / f"chunks-{key}.npy"


def static_chunk_vectors(index: SearchIndex, embedder: Embedder | None = None) -> StaticChunkVectors:
    """The static vectors of ``index``'s chunks: kept per loaded index, read from the cache, or computed
    from the chunk texts and cached (never written into the index folder).

    Args:
        embedder: the channel's embedder (default: a :class:`~ppkit.indexing.static.StaticEmbedder` at 256
            dims). Stage 1 (which passes none) uses the channel last made for the index: passing another
            embedder here once, before retrieving, makes that one the index's channel.
    """
    have = _CHANNELS.get(index)
    if have is not None and (embedder is None or have.embedder is embedder):
        return have
    embedder = embedder or StaticEmbedder()
    ids = np.asarray([c.chunk_id for c in index.chunks], dtype=np.int64)
    path = _cache_path(index, embedder)
    vectors = None
    if path.is_file():
        try:
            vectors = np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            vectors = None  # a damaged cache entry is recomputed below
        if vectors is not None and vectors.shape != (len(ids), embedder.dim):
            vectors = None
    if vectors is None:
        vectors = embedder.embed_documents([c.text for c in index.chunks]).astype(np.float32)
        save_cached(path, vectors)
    out = StaticChunkVectors(ids, vectors, embedder)
    _CHANNELS[index] = out
    return out
