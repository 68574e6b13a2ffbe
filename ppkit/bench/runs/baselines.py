"""The baselines the Proxy-Pointer claim is measured against, with the index's own embedder.

* **blind chunks** (``blind-dense``, ``blind-bm25``): each document cut every 2,000
  characters with 200 repeated (:func:`ppkit.documents.chunking.fixed_size_chunks`), ignoring
  headings; retrieved by dense similarity, or by BM25 (``bm25s`` with PyStemmer's
  English stemmer and English stopwords).
* **header-path recipe** (``header-path``): what a user would build today instead:
  split at every heading (no noise filter), cut each section's own text into
  2,000/200 pieces, prefix each piece with its header path (``[Doc > Section >
  Sub]``) and retrieve the pieces by dense similarity. No section pointers, no
  re-ranking, no dedup.

**What counts as a hit for a chunk.** A chunk is sent as it is (no pointer back to a
section), so it covers the source lines of its text. A gold section counts (strict
definition, as for ppkit) when its heading line lies inside a sent chunk's line
range. A header-path chunk carries its section's heading in its prefix, so its
range includes its section's heading line. The lenient "overlap" variant counts a
gold section when any line of its own text was sent (see :mod:`ppkit.bench.measures.metrics`).

Chunk embeddings are cached in ``<cache>/bench/`` as ``.npy`` files keyed by the
documents' hashes, the chunking settings and the embedder, so reruns only embed
queries. Header-path chunks whose text equals an index chunk reuse its stored vector.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...core.config import cache_dir
from ...core.errors import MissingDependency
from ...core.ids import ROOT_ID
from ...documents.chunking import fixed_size_chunks, split_text
from ...indexing.index import SearchIndex
from ..measures.metrics import Sent

__all__ = ["ChunkCorpus", "blind_chunks", "header_path_chunks", "DenseBaseline", "BM25Baseline",
           "build_baselines", "BASELINE_VERSION", "BASELINES"]

BASELINE_VERSION = "1"
BASELINES = ("blind-dense", "blind-bm25", "header-path")


@dataclass(frozen=True)
class ChunkCorpus:
    """Chunks of all documents: parallel lists of doc, source line ranges and text."""

    name: str
    docs: tuple[str, ...]
    ranges: tuple[tuple[tuple[int, int], ...], ...]  # per chunk: the source lines it covers
    texts: tuple[str, ...]
    settings: dict

    def __len__(self) -> int:
        return len(self.texts)

    def sent(self, i: int) -> Sent:
        return Sent(self.docs[i], self.ranges[i], len(self.texts[i]), label=f"{self.name}:{i}")

    def __repr__(self) -> str:
        return f"ChunkCorpus({self.name!r}, {len(self)} chunks over {len(set(self.docs))} documents)"


def blind_chunks(docs, *, size: int = 2000, overlap: int = 200) -> ChunkCorpus:
    """Fixed-size character chunks of every document, headings ignored.

    A chunk's range runs from the line of its first character to the line of its last.
    """
    names, ranges, texts = [], [], []
    for doc in docs.trees:
        lines = docs.lines(doc)
        text = "\n".join(lines)
        starts = [0]  # character offset of each line's start
        for ln in lines[:-1]:
            starts.append(starts[-1] + len(ln) + 1)
        for a, b, t in fixed_size_chunks(text, size=size, overlap=overlap):
            first = bisect.bisect_right(starts, a)
            last = bisect.bisect_right(starts, max(a, b - 1))
            names.append(doc)
            ranges.append(((first, last),))
            texts.append(t)
    return ChunkCorpus("blind", tuple(names), tuple(ranges), tuple(texts),
                       {"size": size, "overlap": overlap})


def header_path_chunks(docs, *, size: int = 2000, overlap: int = 200) -> ChunkCorpus:
    """The header-path recipe's chunks: every heading's own text (no noise filter), cut to
    ``size``/``overlap``, each prefixed ``[header path]``; a chunk covers its body lines
    and its section's heading line (which its prefix carries)."""
    names, ranges, texts = [], [], []
    for doc, tree in docs.trees.items():
        lines = docs.lines(doc)
        for n in tree:
            first = n.line_start if n.node_id == ROOT_ID else n.line_start + 1
            if first > n.text_end:
                continue
            prefix = f"[{n.breadcrumb}]\n"
            for a, b, t in split_text(lines[first - 1 : n.text_end], first, size, overlap):
                names.append(doc)
                rng = ((a, b),) if n.node_id == ROOT_ID else ((n.line_start, n.line_start), (a, b))
                ranges.append(rng)
                texts.append(prefix + t)
    return ChunkCorpus("header-path", tuple(names), tuple(ranges), tuple(texts),
                       {"size": size, "overlap": overlap})


def _cache_key(corpus: ChunkCorpus, docs, embedder) -> str:
    shas = {d: t.sha256 for d, t in docs.trees.items()}
    blob = json.dumps({"corpus": corpus.name, "settings": corpus.settings, "docs": shas, "embedder": embedder.name,
                       "dim": embedder.dim, "n": len(corpus), "version": BASELINE_VERSION}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _index_vectors(index: SearchIndex, texts: tuple[str, ...]) -> dict[int, np.ndarray]:
    """Vectors the index already holds for identical chunk texts: {position in texts: vector}."""
    if index is None or not hasattr(index, "chunks"):
        return {}
    by_text = {c.text: c.chunk_id for c in index.chunks}
    hits = {i: by_text[t] for i, t in enumerate(texts) if t in by_text}
    if not hits:
        return {}
    vecs = index.store.vectors(np.asarray(list(hits.values()), dtype=np.int64))
    return {i: v for i, v in zip(hits, vecs)}


def embed_corpus(corpus: ChunkCorpus, docs, embedder, *, index: SearchIndex=None, cache: Path | None = None,
                 progress: bool = False) -> tuple[np.ndarray, dict]:
    """Unit vectors of every chunk, from the cache when present.

    Returns (vectors of shape (n, dim), info with the cache file and counts).
    """
    folder = Path(cache) if cache is not None else cache_dir() / "bench"
    path = folder / f"{corpus.name}-{_cache_key(corpus, docs, embedder)}.npy"
    if path.is_file():
        v = np.load(path, allow_pickle=False)
        if v.shape == (len(corpus), embedder.dim):
            return v, {"cache": str(path), "embedded": 0, "reused_from_index": 0, "from_cache": True}
    known = _index_vectors(index, corpus.texts) if index is not None and index.embedder.name == embedder.name else {}
    todo = [i for i in range(len(corpus)) if i not in known]
    out = np.zeros((len(corpus), embedder.dim), dtype=np.float32)
    for i, v in known.items():
        out[i] = v
    if todo:
        out[todo] = embedder.embed_documents([corpus.texts[i] for i in todo], progress=progress)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp.npy")
    np.save(tmp, out, allow_pickle=False)
    os.replace(tmp, path)
    return out, {"cache": str(path), "embedded": len(todo), "reused_from_index": len(known), "from_cache": False}


def _allowed(corpus: ChunkCorpus, docs_filter: list[str] | None) -> np.ndarray | None:
    if not docs_filter:
        return None
    keep = set(docs_filter)
    return np.array([d in keep for d in corpus.docs])


class DenseBaseline:
    """Top chunks by cosine similarity with the question (the index's embedder)."""

    def __init__(self, name: str, corpus: ChunkCorpus, vectors: np.ndarray, embedder):
        self.name, self.corpus, self.vectors, self.embedder = name, corpus, vectors, embedder

    def __repr__(self) -> str:
        return f"DenseBaseline({self.name!r}, {len(self.corpus)} chunks)"

    def search(self, query: str, n: int, *, docs: list[str] | None = None, query_vec=None) -> list[Sent]:
        qv = self.embedder.embed_query(query) if query_vec is None else query_vec
        scores = self.vectors @ np.asarray(qv, dtype=np.float32)
        mask = _allowed(self.corpus, docs)
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        order = np.argsort(-scores, kind="stable")[:n]
        return [self.corpus.sent(int(i)) for i in order if np.isfinite(scores[i])]


class BM25Baseline:
    """Top chunks by BM25 (bm25s, Lucene variant, k1=1.5, b=0.75; English stems and stopwords)."""

    def __init__(self, name: str, corpus: ChunkCorpus):
        try:
            import bm25s
            import Stemmer
        except ImportError as e:
            raise MissingDependency(f"the BM25 baseline needs bm25s and PyStemmer ({e.name} is missing): "
                              "pip install bm25s PyStemmer") from None
        self.name, self.corpus = name, corpus
        self._bm25s = bm25s
        self._stemmer = Stemmer.Stemmer("english")
        tokens = bm25s.tokenize(list(corpus.texts), stopwords="en", stemmer=self._stemmer, show_progress=False)
        self.retriever = bm25s.BM25()
        self.retriever.index(tokens, show_progress=False)

    def __repr__(self) -> str:
        return f"BM25Baseline({self.name!r}, {len(self.corpus)} chunks)"

    def search(self, query: str, n: int, *, docs: list[str] | None = None, query_vec=None) -> list[Sent]:
        q = self._bm25s.tokenize([query], stopwords="en", stemmer=self._stemmer, return_ids=False,
                                 show_progress=False)[0]
        q = [t for t in q if t in self.retriever.vocab_dict]
        if not q:
            return []
        scores = np.asarray(self.retriever.get_scores(q), dtype=np.float64)
        mask = _allowed(self.corpus, docs)
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        order = np.argsort(-scores, kind="stable")[:n]
        return [self.corpus.sent(int(i)) for i in order if np.isfinite(scores[i]) and scores[i] > 0]


def build_baselines(docs, embedder, *, index: SearchIndex=None, size: int = 2000, overlap: int = 200,
                    which: tuple[str, ...] = BASELINES,
                    cache: Path | None = None, progress: bool = False) -> tuple[dict, dict]:
    """The baselines, ready to search.

    Args:
        docs: the documents (an Index or MarkdownDocs).
        embedder: the embedder of the index being compared (same model for every system).
        index: when given, header-path chunks identical to index chunks reuse its vectors.

    Returns:
        ({name: baseline}, info per baseline: chunk counts and the embedding cache).
    """
    out, info = {}, {}
    blind = None
    if any(w.startswith("blind") for w in which):
        blind = blind_chunks(docs, size=size, overlap=overlap)
    if "blind-dense" in which:
        v, i = embed_corpus(blind, docs, embedder, cache=cache, progress=progress)
        out["blind-dense"] = DenseBaseline("blind-dense", blind, v, embedder)
        info["blind-dense"] = {"chunks": len(blind), **i}
    if "blind-bm25" in which:
        out["blind-bm25"] = BM25Baseline("blind-bm25", blind)
        info["blind-bm25"] = {"chunks": len(blind)}
    if "header-path" in which:
        hp = header_path_chunks(docs, size=size, overlap=overlap)
        v, i = embed_corpus(hp, docs, embedder, index=index, cache=cache, progress=progress)
        out["header-path"] = DenseBaseline("header-path", hp, v, embedder)
        info["header-path"] = {"chunks": len(hp), **i}
    return out, info
