"""A Qdrant vector store with the FAISS store's interface, payload filters and hybrid search.

:class:`QdrantStore` keeps, per chunk, a dense vector (``"dense"``, dot product on unit
vectors = the FAISS store's inner product), a sparse BM25 vector (``"bm25"``: term hashes
-> BM25 term weights, with Qdrant's IDF modifier, so a sparse query scores like
:class:`ppkit.indexing.lexical.LexicalIndex`) and a payload (doc, node id, company, ticker,
fiscal year, form type, 10-K Item) that filters are applied to *before* search.

Two ways to run it:

* **local** (default): qdrant-client's local mode, in memory. The index folder holds the
  collection as plain files in ``qdrant/`` (``ids.npy``, ``dense.npy``, the sparse
  vectors as CSR ``.npy`` arrays, ``payloads.jsonl``, ``collection.json``) and loading
  re-creates the in-memory collection from them. qdrant-client's own on-disk local mode
  (``path=``) is deliberately not used: it stores every point pickled in SQLite and
  unpickles it on load, and a ppkit index never executes code when loaded.
* **server**: the connection option ``url`` talks to a Qdrant server or cluster (``api_key``,
  default ``QDRANT_API_KEY`` from the environment); the points live there and the index folder
  records where, for the user to see: opening contacts only the server the user names (the
  ``url`` connection option, ``--qdrant-url``, or ``QDRANT_URL``), never the URL an index folder
  holds, so a crafted folder cannot send the key elsewhere. A build takes ``QDRANT_URL`` only
  through a rebuild of an index already on a server (:attr:`QdrantStore.connection`).

**Server collections are never shared and never dropped before their replacement is in place.**
Each build writes a new collection named ``ppkit-<folder name>-<12 hex of the folder's absolute
path>-<build token>`` (:func:`server_collection`): two index folders never share one, even with the
same folder name, and a rebuild fills its own collection while the previous one still serves the
index on disk. Only after the new index folder has been swapped in does the build drop the
collection it replaces (:meth:`QdrantStore.after_save`); a crash in between leaves the old
collection behind (unreferenced, named with the folder's prefix), never an index without its vectors.

It does not embed, tokenise questions for the dense side, or re-rank.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import time
from pathlib import Path

import numpy as np

from ...core.config import store_connection_env
from ...core.errors import ConfigError, InvalidInput, MissingDependency, MissingFile, NotFound
from ..lexical import bm25_term_weights, lexical_tokens
from .base import StoreBase

__all__ = ["QdrantStore", "qdrant_index", "server_collection", "sparse_vector", "term_id"]

_DENSE, _SPARSE = "dense", "bm25"
_ENV = {"QDRANT_URL": "url", "QDRANT_API_KEY": "api_key"}  # environment variable -> connection option


def _qdrant():
    try:
        from qdrant_client import QdrantClient, models
    except ImportError:
        raise MissingDependency("the Qdrant store needs qdrant-client: pip install 'ppkit[qdrant]'") from None
    return QdrantClient, models


def term_id(term: str) -> int:
    """A stable 31-bit id for a term (no shared vocabulary needed between builds)."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest(), "little") & 0x7FFFFFFF


def sparse_vector(text: str, avgdl: float | None = None) -> tuple[list[int], list[float]]:
    """(indices, values) of ``text``: BM25 term weights for a document (:func:`ppkit.indexing.lexical.bm25_term_weights`,
    the same tokens, k1 and b as the BM25 index), or 1.0 per term for a query (``avgdl=None``); Qdrant's
    IDF modifier supplies the idf at search time."""
    terms = lexical_tokens(text)
    if avgdl is None:
        idx = sorted({term_id(t) for t in terms})
        return idx, [1.0] * len(idx)
    by_id: dict[int, float] = {}
    for t, w in bm25_term_weights(terms, avgdl).items():
        by_id[term_id(t)] = by_id.get(term_id(t), 0.0) + w
    idx = sorted(by_id)
    return idx, [by_id[i] for i in idx]


def server_collection(folder: Path | None) -> str:
    """A new, unique server collection name for a build of the index at ``folder``.

    ``ppkit-<folder name>-<12 hex of sha256(absolute folder path)>-<time><random>``: the path hash keeps
    two folders of the same name apart, the build token keeps a rebuild apart from the collection it
    replaces (Qdrant names allow letters, digits, ``-`` and ``_``).

    >>> server_collection(Path("/data/idx"))  # doctest: +SKIP
    'ppkit-idx-5c1e0f0d8a2b-lx3k9q2a7f41'
    """
    token = f"{int(time.time()):x}{secrets.token_hex(3)}"
    if folder is None:
        return f"ppkit-{token}"
    where = Path(folder).expanduser().resolve()
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", where.name)[:40] or "index"
    return f"ppkit-{slug}-{hashlib.sha256(str(where).encode()).hexdigest()[:12]}-{token}"


class QdrantStore(StoreBase):
    """Dense + sparse vectors with payloads in a Qdrant collection.

    Args:
        dim: dense dimension.
        url: a Qdrant server (``None``: local mode in memory).
        collection: the collection name.
        client: an existing ``QdrantClient`` (tests).
        api_key: the server's key (default ``QDRANT_API_KEY``).
        create: (re)create the collection; an existing collection of that name is dropped.
            ``False`` opens an existing one (what :meth:`load` does for a server).
        supersedes: the collection this one replaces (a rebuild's previous collection on the same
            server), dropped by :meth:`drop_superseded` once the new index is saved.
        batch: points per upsert in :meth:`add`.
    """

    name = "qdrant"
    supports_where = True  # ppkit.retrieval.hybrid passes filters as payload conditions
    DIRNAME = "qdrant"
    files = DIRNAME + "/[^/]+"
    connection_env = _ENV

    def __init__(self, dim: int, *, url: str | None = None, collection: str = "ppkit", client=None,
                 api_key: str | None = None, create: bool = True, supersedes: str | None = None,
                 batch: int = 256):
        QdrantClient, models = _qdrant()
        self.dim = dim
        self.url = url
        self.collection = collection
        self.supersedes = supersedes if supersedes != collection else None
        self.batch = batch
        self.connection = {k: v for k, v in (("url", url), ("api_key", api_key)) if v}
        self._m = models
        if client is None:
            client = QdrantClient(url=url, api_key=api_key or store_connection_env(_ENV).get("api_key")) if url \
                else QdrantClient(location=":memory:")
        self.client = client
        if create:
            if self.client.collection_exists(collection):
                self.client.delete_collection(collection)
            self.client.create_collection(
                collection,
                vectors_config={_DENSE: models.VectorParams(size=dim, distance=models.Distance.DOT)},
                sparse_vectors_config={_SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            )

    def __repr__(self) -> str:
        where = self.url or "local, in memory"
        return f"QdrantStore(dim={self.dim}, n={len(self)}, collection={self.collection!r}, {where})"

    def __len__(self) -> int:
        return int(self.client.count(self.collection, exact=True).count)

    def close(self) -> None:
        self.client.close()

    @classmethod
    def create(cls, dim: int, *, folder: Path | None = None, replaces: dict | None = None, url: str | None = None,
               api_key: str | None = None, collection: str | None = None, client=None,
               batch: int = 256) -> QdrantStore:
        """A new collection for a build of the index at ``folder``: on a server (``url``), a new collection
        named by :func:`server_collection`, superseding the server collection ``replaces`` records (dropped
        by :meth:`after_save`); in local mode, an in-memory collection of its own (``"ppkit"``).

        Args:
            client: an existing ``QdrantClient`` (tests: a local-mode client standing in for a server).
        """
        if collection is None:
            collection = server_collection(folder) if url else "ppkit"
        old = replaces if isinstance(replaces, dict) and replaces.get("mode") == "server" else {}
        return cls(dim, url=url, api_key=api_key, collection=collection, client=client,
                   supersedes=old.get("collection") if url else None, batch=batch)

    @classmethod
    def open(cls, entry: dict, folder: Path, dim: int, *, url: str | None = None,
             api_key: str | None = None) -> QdrantStore:
        """The store an index folder records: its local collection's files, or its server collection on the
        server the caller names (``url``), never the one ``entry`` records."""
        if entry.get("mode") != "server":
            return cls.load(folder, dim, {**entry, "mode": "local"})
        if not url:
            raise ConfigError(f"the vectors of the index at {folder} live on a Qdrant server; ppkit contacts a "
                              "server only when you name it: pass --qdrant-url URL or set QDRANT_URL "
                              f"(the folder records {str(entry.get('url'))[:100]!r})")
        return cls.load(folder, dim, {**entry, "url": url}, api_key=api_key)

    def after_save(self) -> None:
        """Drop the server collection this build superseded (see :meth:`drop_superseded`)."""
        self.drop_superseded()

    def drop_superseded(self) -> str | None:
        """Drop the collection this store replaces (call it after the new index folder is saved);
        returns its name, or None when there was none to drop. Only a collection named for the same
        index folder (same ``ppkit-<name>-<path hash>-`` prefix) is dropped, whatever a manifest says."""
        old, self.supersedes = self.supersedes, None
        same_folder = old is not None and old.rsplit("-", 1)[0] == self.collection.rsplit("-", 1)[0]
        if not same_folder or not self.client.collection_exists(old):
            return None
        self.client.delete_collection(old)
        return old

    # -- writing ---------------------------------------------------------------------------
    def add(self, ids: np.ndarray, vectors: np.ndarray, payloads: list[dict] | None = None,
            sparse: list[tuple[list[int], list[float]]] | None = None, *, batch: int | None = None) -> None:
        """Upsert points: ids, unit vectors, and optionally payloads and sparse (indices, values);
        ``batch`` points per upsert (default: the store's)."""
        m = self._m
        vectors = np.asarray(vectors, dtype=np.float32)
        ids = np.asarray(ids, dtype=np.int64)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise InvalidInput(f"expected vectors of shape (n, {self.dim}), got {vectors.shape}")
        if len(ids) != len(vectors) or (payloads is not None and len(payloads) != len(ids)) or \
                (sparse is not None and len(sparse) != len(ids)):
            raise InvalidInput("ids, vectors, payloads and sparse vectors must have the same length")
        points = []
        for j, (i, v) in enumerate(zip(ids, vectors)):
            vec = {_DENSE: v.tolist()}
            if sparse is not None and sparse[j][0]:
                vec[_SPARSE] = m.SparseVector(indices=list(sparse[j][0]), values=[float(x) for x in sparse[j][1]])
            points.append(m.PointStruct(id=int(i), vector=vec, payload=(payloads[j] if payloads else {})))
        batch = batch or self.batch
        for s in range(0, len(points), batch):
            self.client.upsert(self.collection, points=points[s : s + batch], wait=True)

    def remove(self, ids: np.ndarray) -> None:
        ids = [int(i) for i in np.asarray(ids).ravel()]
        if ids:
            self.client.delete(self.collection, points_selector=self._m.PointIdsList(points=ids), wait=True)

    # -- reading ---------------------------------------------------------------------------
    def _filter(self, allowed_ids=None, where: dict | None = None):
        """A Qdrant Filter from allowed ids and a scope ``{doc: None | [Items]}``."""
        m = self._m
        must = []
        if allowed_ids is not None:
            must.append(m.HasIdCondition(has_id=[int(i) for i in np.asarray(allowed_ids).ravel()]))
        if where is not None:
            should = []
            for doc, items in where.items():
                conds = [m.FieldCondition(key="doc", match=m.MatchValue(value=doc))]
                if items:
                    conds.append(m.FieldCondition(key="item", match=m.MatchAny(any=list(items))))
                should.append(m.Filter(must=conds))
            must.append(m.Filter(should=should))
        return m.Filter(must=must) if must else None

    @staticmethod
    def _empty():
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)

    def _unpack(self, res) -> tuple[np.ndarray, np.ndarray]:
        pts = res.points
        return (np.asarray([int(p.id) for p in pts], dtype=np.int64),
                np.asarray([float(p.score) for p in pts], dtype=np.float32))

    def search(self, query: np.ndarray, k: int, allowed_ids: np.ndarray | None = None,
               where: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, scores) of the ``k`` nearest dense vectors, best first, inside the filters.

        Args:
            allowed_ids: restrict to these point ids (as the FAISS store).
            where: ``{doc: None | [Items]}``, applied as a payload filter.
        """
        q = np.asarray(query, dtype=np.float32).ravel()
        if q.shape[0] != self.dim:
            raise InvalidInput(f"query has {q.shape[0]} dims, the store {self.dim}")
        if k <= 0 or (allowed_ids is not None and len(allowed_ids) == 0) or (where is not None and not where):
            return self._empty()
        res = self.client.query_points(self.collection, query=q.tolist(), using=_DENSE, limit=int(k),
                                       query_filter=self._filter(allowed_ids, where), with_payload=False)
        return self._unpack(res)

    def search_sparse(self, text: str, k: int, where: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, scores) of the ``k`` best BM25 matches of ``text`` (Qdrant's sparse search)."""
        idx, val = sparse_vector(text)
        if not idx or k <= 0:
            return self._empty()
        res = self.client.query_points(self.collection, query=self._m.SparseVector(indices=idx, values=val),
                                       using=_SPARSE, limit=int(k), query_filter=self._filter(None, where),
                                       with_payload=False)
        return self._unpack(res)

    def search_hybrid(self, query: np.ndarray, text: str, k: int, where: dict | None = None,
                      prefetch: int = 200) -> tuple[np.ndarray, np.ndarray]:
        """Qdrant-native hybrid search: dense and sparse prefetches fused by RRF, over *chunks*.

        (ppkit's own hybrid stage 1, :mod:`ppkit.retrieval.hybrid`, fuses *section* rankings instead.)
        """
        m = self._m
        flt = self._filter(None, where)
        idx, val = sparse_vector(text)
        pre = [m.Prefetch(query=np.asarray(query, dtype=np.float32).ravel().tolist(), using=_DENSE, limit=prefetch,
                          filter=flt)]
        if idx:
            pre.append(m.Prefetch(query=m.SparseVector(indices=idx, values=val), using=_SPARSE, limit=prefetch,
                                  filter=flt))
        res = self.client.query_points(self.collection, prefetch=pre, query=m.FusionQuery(fusion=m.Fusion.RRF),
                                       limit=int(k), with_payload=False)
        return self._unpack(res)

    def vectors(self, ids: np.ndarray) -> np.ndarray:
        """The stored dense vectors of ``ids``, in that order."""
        ids = [int(i) for i in np.asarray(ids).ravel()]
        if not ids:
            return np.zeros((0, self.dim), np.float32)
        got = {int(p.id): p.vector[_DENSE] for p in self.client.retrieve(self.collection, ids=ids,
                                                                          with_vectors=[_DENSE], with_payload=False)}
        missing = [i for i in ids if i not in got]
        if missing:
            raise NotFound(f"no points {missing[:5]} in collection {self.collection!r}")
        return np.asarray([got[i] for i in ids], dtype=np.float32)

    def _all_points(self):
        out, offset = [], None
        while True:
            pts, offset = self.client.scroll(self.collection, limit=1024, offset=offset, with_payload=True,
                                             with_vectors=True)
            out.extend(pts)
            if offset is None:
                return sorted(out, key=lambda p: int(p.id))

    # -- persistence -----------------------------------------------------------------------
    def manifest_entry(self) -> dict:
        entry = {"name": self.name, "collection": self.collection, "dir": self.DIRNAME}
        entry.update({"mode": "server", "url": self.url} if self.url else {"mode": "local"})
        return entry

    def save(self, folder: Path) -> None:
        """Write ``folder/qdrant/``: the whole collection as plain files (local mode), or only
        where the server collection is (server mode)."""
        d = Path(folder) / self.DIRNAME
        d.mkdir(parents=True, exist_ok=True)
        (d / "collection.json").write_text(json.dumps({**self.manifest_entry(), "dim": self.dim}, indent=1),
                                           encoding="utf-8")
        if self.url:
            return
        pts = self._all_points()
        np.save(d / "ids.npy", np.asarray([int(p.id) for p in pts], dtype=np.int64), allow_pickle=False)
        np.save(d / "dense.npy", np.asarray([p.vector[_DENSE] for p in pts], dtype=np.float32).reshape(-1, self.dim),
                allow_pickle=False)
        indptr, indices, values = [0], [], []
        for p in pts:
            sv = p.vector.get(_SPARSE) if isinstance(p.vector, dict) else None
            if sv is not None:
                indices.extend(sv.indices)
                values.extend(sv.values)
            indptr.append(len(indices))
        np.save(d / "sparse_indptr.npy", np.asarray(indptr, dtype=np.int64), allow_pickle=False)
        np.save(d / "sparse_indices.npy", np.asarray(indices, dtype=np.int64), allow_pickle=False)
        np.save(d / "sparse_values.npy", np.asarray(values, dtype=np.float32), allow_pickle=False)
        with open(d / "payloads.jsonl", "w", encoding="utf-8") as f:
            for p in pts:
                f.write(json.dumps(p.payload or {}, ensure_ascii=False) + "\n")

    @classmethod
    def load(cls, folder: Path, dim: int, entry: dict | None = None, *, api_key: str | None = None) -> QdrantStore:
        """Open the store an index folder records (``entry`` = the manifest's ``store``, its ``url``
        the server to contact: :meth:`open` puts the caller's there)."""
        entry = entry or {}
        d = Path(folder) / entry.get("dir", cls.DIRNAME)
        collection = entry.get("collection", "ppkit")
        if entry.get("mode") == "server":
            store = cls(dim, url=entry["url"], collection=collection, create=False, api_key=api_key)
            if not store.client.collection_exists(collection):
                raise MissingFile(f"the Qdrant server at {entry['url']} has no collection {collection!r}: "
                                        "rebuild the index with `ppkit index ... --store qdrant --qdrant-url URL --fresh`")
            return store
        try:
            ids = np.load(d / "ids.npy", allow_pickle=False)
            dense = np.load(d / "dense.npy", allow_pickle=False)
            indptr = np.load(d / "sparse_indptr.npy", allow_pickle=False)
            indices = np.load(d / "sparse_indices.npy", allow_pickle=False)
            values = np.load(d / "sparse_values.npy", allow_pickle=False)
            payloads = [json.loads(line) for line in (d / "payloads.jsonl").read_text(encoding="utf-8").splitlines()]
        except (OSError, ValueError) as e:
            raise MissingFile(f"{d} is missing or unreadable ({e}): rebuild the index with --fresh") from None
        if dense.shape[1:] != (dim,) and len(dense):
            raise InvalidInput(f"{d} holds {dense.shape[1]}-dim vectors but the manifest says {dim}: rebuild with --fresh")
        store = cls(dim, collection=collection)
        sparse = [(indices[indptr[j]:indptr[j + 1]].tolist(), values[indptr[j]:indptr[j + 1]].tolist())
                  for j in range(len(ids))]
        if len(ids):
            store.add(ids, dense, payloads, sparse)
        return store

    # -- construction from chunks ------------------------------------------------------------
    def add_chunks(self, chunks, vectors: np.ndarray | None, records: dict[str, dict],
                   section_items: dict[str, dict[str, str]]) -> None:
        """Add ``chunks`` with their vectors, BM25 sparse vectors and metadata payloads.

        Args:
            records: ``{doc: manifest document record}`` (its ``metadata`` goes into the payload).
            section_items: ``{doc: {node_id: Item}}``.
        """
        if not chunks:
            return
        toks = [len(lexical_tokens(c.text)) for c in chunks]
        avgdl = sum(toks) / len(toks)
        payloads = []
        for c in chunks:
            meta = records.get(c.doc, {}).get("metadata", {}) or {}
            payloads.append({"doc": c.doc, "node_id": c.node_id, "company": meta.get("company"),
                             "ticker": meta.get("ticker"), "fiscal_year": meta.get("fiscal_year"),
                             "form_type": meta.get("form_type"), "item": section_items.get(c.doc, {}).get(c.node_id)})
        self.add(np.asarray([c.chunk_id for c in chunks], dtype=np.int64), vectors, payloads,
                 [sparse_vector(c.text, avgdl) for c in chunks])

    @classmethod
    def from_index(cls, index, *, url: str | None = None, collection: str | None = None) -> QdrantStore:
        """A Qdrant copy of an index's store (same vectors, no re-embedding), e.g. to compare with FAISS."""
        ids = np.asarray([c.chunk_id for c in index.chunks], dtype=np.int64)
        records = {r["doc"]: r for r in index.manifest["documents"]}
        items = {d: index.section_items(d) for d in index.docs}
        store = cls.create(index.embedder.dim, folder=index.folder, url=url, collection=collection)
        store.add_chunks(index.chunks, index.store.vectors(ids), records, items)
        return store


def qdrant_index(index, *, url: str | None = None, collection: str | None = None):
    """The same index (trees, chunks, BM25, metadata) searched through a Qdrant copy of its vectors.

    Nothing is re-embedded; the copy lives in memory (local mode) or on the server at ``url``.

    >>> qdrant_index(ppkit.reference_index("10k")).retrieve("For AMD, what is the current ratio?")  # doctest: +SKIP
    """
    store = QdrantStore.from_index(index, url=url, collection=collection)
    return type(index)(None, {**index.manifest, "store": store.manifest_entry()}, index.trees, index.noise, index.chunks,
                 store, index.embedder, index.config, lexical=index.lexical,
                 section_meta={d: index.section_items(d) for d in index.docs},
                 trusted=getattr(index, "trusted", True))
