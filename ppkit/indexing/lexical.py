"""BM25 over the chunks, and reciprocal rank fusion.

:class:`LexicalIndex` scores the same breadcrumb-prefixed chunks the embedder sees
with BM25 (``bm25s``, Lucene variant: idf = ln(1 + (N - df + 0.5) / (df + 0.5)),
term weight = tf / (tf + k1 (1 - b + b |d| / avgdl)), k1 = 1.5, b = 0.75). Text is
tokenised by :func:`lexical_tokens`: lower case, thousands separators removed from
numbers (``24,177`` -> ``24177``, so an exact figure is one term), stopwords dropped,
Snowball-stemmed with PyStemmer. Exact terms that a 256-token embedder blurs (tickers,
line items, "Note 4") are what it is for.

It persists as plain files in a folder (``bm25s``'s ``.npy`` arrays saved and loaded
with ``allow_pickle=False``, memory-mapped on load, plus JSON vocabulary/parameters and
a ``chunk_ids.npy`` mapping BM25 rows to chunk ids): nothing executes code on load.

:func:`rrf` is reciprocal rank fusion (Cormack, Clarke & Buettcher 2009, "Reciprocal
rank fusion outperforms Condorcet and individual rank learning methods"):
score(d) = sum over rankings of 1 / (k + rank(d)), k = 60, ranks 1-based. In ppkit it is
applied to *section* rankings (see :mod:`ppkit.retrieval.hybrid`), after each chunk ranking has
been deduplicated to sections, so a section with many chunks does not count many times.

This module does not embed and does not build Candidates.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..core.errors import InvalidInput, MissingDependency, MissingFile
from ..core.text import STOPWORDS, stem, tokens

__all__ = ["lexical_tokens", "LexicalIndex", "bm25_scores", "bm25_term_weights", "rrf", "dedup_sections", "TOKENIZER",
           "K1", "B"]

TOKENIZER = "ppkit-lexical-1"  # recorded with a saved index; bump when lexical_tokens changes
K1, B = 1.5, 0.75  # BM25 term saturation and length normalisation, for every BM25 in ppkit
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def lexical_tokens(text: str) -> list[str]:
    """BM25 terms of ``text``.

    >>> lexical_tokens("Goodwill of $24,177 million in Note 4")
    ['goodwil', '24177', 'million', 'note', '4']
    """
    return list(_lexical_tokens(text))


@lru_cache(maxsize=8192)  # a question's candidates are tokenized again by the re-ranker's BM25 feature
def _lexical_tokens(text: str) -> tuple[str, ...]:
    return tuple(stem(t) for t in tokens(_THOUSANDS.sub("", text)) if t not in STOPWORDS)


def _bm25s():
    try:
        import bm25s
    except ImportError:
        raise MissingDependency("BM25 retrieval needs bm25s and PyStemmer: pip install bm25s PyStemmer") from None
    return bm25s


class LexicalIndex:
    """BM25 over a fixed list of chunk texts (rebuilt, not updated, when chunks change).

    Args:
        model: a fitted ``bm25s.BM25``.
        chunk_ids: the chunk id of each BM25 row.

    Build one with :meth:`build`, open a saved one with :meth:`load`.
    """

    META = "lexical.json"

    def __init__(self, model, chunk_ids: np.ndarray, *, k1: float = K1, b: float = B):
        self.model = model
        self.chunk_ids = np.asarray(chunk_ids, dtype=np.int64)
        self.k1, self.b = k1, b
        self._row = {int(c): i for i, c in enumerate(self.chunk_ids)}  # chunk id -> BM25 row

    def __repr__(self) -> str:
        return f"LexicalIndex(BM25 k1={self.k1} b={self.b}, {len(self)} chunks, {len(self.model.vocab_dict)} terms)"

    def __len__(self) -> int:
        return len(self.chunk_ids)

    @classmethod
    def build(cls, texts: list[str], chunk_ids=None, *, k1: float = K1, b: float = B) -> LexicalIndex:
        """Fit BM25 on ``texts`` (chunk ids default to 0..n-1).

        >>> LexicalIndex.build(["the cat sat", "a dog ran"]).search("dog", 5)[0].tolist()
        [1]
        """
        bm25s = _bm25s()
        chunk_ids = np.arange(len(texts)) if chunk_ids is None else np.asarray(chunk_ids, dtype=np.int64)
        if len(chunk_ids) != len(texts):
            raise InvalidInput(f"{len(texts)} texts but {len(chunk_ids)} chunk ids")
        model = bm25s.BM25(k1=k1, b=b, method="lucene")
        # an empty document still needs one token for bm25s; "" is its reserved empty token
        corpus = [lexical_tokens(t) or [""] for t in texts]
        if corpus:
            model.index(corpus, show_progress=False)
        else:
            model.vocab_dict = {}
        return cls(model, chunk_ids, k1=k1, b=b)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every row for ``query`` (zeros when no query term is in the vocabulary)."""
        ids = [self.model.vocab_dict[t] for t in dict.fromkeys(lexical_tokens(query)) if t in self.model.vocab_dict]
        if not ids or len(self) == 0:
            return np.zeros(len(self), dtype=np.float32)
        return np.asarray(self.model.get_scores_from_ids(ids), dtype=np.float32)

    def search(self, query: str, k: int, allowed_ids: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, scores) of the ``k`` best chunks with a positive score, best first.

        Ties are broken by chunk id, so the order is deterministic. ``allowed_ids``
        restricts the search to those chunk ids (the same contract as the vector stores).
        """
        s = self.scores(query)
        if allowed_ids is not None:
            mask = np.zeros(len(self), dtype=bool)
            rows = [self._row[int(c)] for c in np.asarray(allowed_ids).ravel() if int(c) in self._row]
            mask[rows] = True
            s = np.where(mask, s, 0.0)
        pos = np.flatnonzero(s > 0)
        order = pos[np.lexsort((self.chunk_ids[pos], -s[pos]))][: max(0, k)]
        return self.chunk_ids[order], s[order]

    def save(self, folder: str | Path) -> None:
        """Write the index into ``folder`` (``.npy`` + JSON, no pickle)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        if len(self):
            self.model.save(str(folder), allow_pickle=False, show_progress=False)
        np.save(folder / "chunk_ids.npy", self.chunk_ids, allow_pickle=False)
        meta = {"tokenizer": TOKENIZER, "k1": self.k1, "b": self.b, "n_chunks": len(self), "method": "lucene"}
        (folder / self.META).write_text(json.dumps(meta, indent=1), encoding="utf-8")

    @classmethod
    def load(cls, folder: str | Path, *, mmap: bool = True) -> LexicalIndex:
        """Open a saved index (arrays memory-mapped unless ``mmap=False``).

        Raises:
            FileNotFoundError / ValueError: missing files, or another tokenizer version
            (rebuild the index).
        """
        bm25s = _bm25s()
        folder = Path(folder)
        meta_path = folder / cls.META
        if not meta_path.is_file():
            raise MissingFile(f"no BM25 index at {folder}: rebuild the index with `ppkit index ... --fresh`")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("tokenizer") != TOKENIZER:
            raise InvalidInput(f"{folder} was tokenised with {meta.get('tokenizer')!r}, this ppkit uses {TOKENIZER!r}: "
                             "rebuild the index with --fresh")
        chunk_ids = np.load(folder / "chunk_ids.npy", allow_pickle=False)
        if len(chunk_ids):
            model = bm25s.BM25.load(str(folder), mmap=mmap, allow_pickle=False, load_corpus=False, show_progress=False)
        else:
            model = bm25s.BM25(k1=meta["k1"], b=meta["b"], method="lucene")
            model.vocab_dict = {}
        return cls(model, chunk_ids, k1=meta["k1"], b=meta["b"])


def dedup_sections(keys) -> list:
    """The distinct keys in order of first appearance: a chunk ranking -> a section ranking.

    >>> dedup_sections(["A#1", "A#2", "A#1", "B#7"])
    ['A#1', 'A#2', 'B#7']
    """
    return list(dict.fromkeys(keys))


def bm25_scores(query: str, texts: list[str], *, tokens: list[list[str]] | None = None,
                counts: list[tuple[Mapping[str, int], int]] | None = None) -> np.ndarray:
    """BM25 of ``query`` over a small set of ``texts``, idf from that set (e.g. one question's candidates);
    ``tokens``: the texts' terms when already known (e.g. stored in the index), so nothing is tokenised;
    ``counts``: instead, each text's ``(term -> count, number of terms)`` (e.g. kept from an earlier query).

    The same float32 numbers as ``LexicalIndex.build(texts).scores(query)`` (bm25s, Lucene variant), bit
    for bit (``tests/test_lexical.py``), without building a bm25s index: only the query's terms are
    counted. The arithmetic follows bm25s: idf rounded to float32, each term's weight computed in float64
    and stored as float32, the terms summed in float32 in query order; an empty text counts as one
    (empty) term.

    >>> [round(float(x), 3) for x in bm25_scores("dog", ["the cat sat", "a dog ran"])]
    [0.0, 0.277]
    """
    if counts is None:
        if tokens is None:
            tokens = [lexical_tokens(t) for t in texts]
        elif len(tokens) != len(texts):
            raise InvalidInput(f"{len(texts)} texts but {len(tokens)} token lists")
    elif len(counts) != len(texts):
        raise InvalidInput(f"{len(texts)} texts but {len(counts)} term counts")
    out = np.zeros(len(texts), dtype=np.float32)
    if not texts:
        return out
    terms = list(dict.fromkeys(lexical_tokens(query)))
    if counts is None:
        docs = [list(t) or [""] for t in tokens]
        lens = np.array([len(d) for d in docs])
        tf = np.array([[d.count(t) for t in terms] for d in docs], dtype=np.float32).reshape(len(docs), len(terms))
    else:  # an empty text is one empty term, and no query term is empty
        lens = np.array([max(n, 1) for _, n in counts])
        tf = np.array([[c.get(t, 0) for t in terms] for c, _ in counts], dtype=np.float32).reshape(len(texts), len(terms))
    n = len(texts)
    norm = K1 * ((1 - B) + B * lens / lens.mean())  # float64, per text
    for j in range(len(terms)):
        df = int(np.count_nonzero(tf[:, j]))
        if df:
            idf = np.float32(math.log(1 + (n - df + 0.5) / (df + 0.5)))
            out += (idf * (tf[:, j] / (norm + tf[:, j]))).astype(np.float32)
    return out


def bm25_term_weights(terms: list[str], avgdl: float) -> dict[str, float]:
    """BM25's document-side weight of each term (without idf), as :class:`LexicalIndex` scores it:
    tf / (tf + k1 (1 - b + b |d| / avgdl)).

    For stores that apply idf at search time (Qdrant's sparse vectors with its IDF modifier).
    """
    tf: dict[str, int] = {}
    for t in terms:
        tf[t] = tf.get(t, 0) + 1
    norm = K1 * (1 - B + B * len(terms) / max(avgdl, 1e-9))
    return {t: f / (f + norm) for t, f in tf.items()}


def rrf(rankings: dict[str, list], k: int = 60) -> list[tuple[object, float]]:
    """Reciprocal rank fusion of several rankings (best first, no duplicates within one).

    Args:
        rankings: ``{name: [item, ...]}``, each list best first (rank 1 = first item).
        k: the smoothing constant; 60 as in Cormack et al. (2009).

    Returns:
        ``[(item, score), ...]`` by descending score; ties keep the order in which the items
        were first seen (the first ranking first).

    >>> rrf({"dense": ["a", "b"], "bm25": ["b", "c"]})[0]
    ('b', 0.03252247488101534)
    """
    score: dict[object, float] = {}
    for ranking in rankings.values():
        if len(set(ranking)) != len(ranking):
            raise ValueError("a ranking holds an item twice: deduplicate it first (dedup_sections)")
        for rank, item in enumerate(ranking, start=1):
            score[item] = score.get(item, 0.0) + 1.0 / (k + rank)
    seen = list(score)  # insertion order = first seen
    return sorted(((it, score[it]) for it in seen), key=lambda x: -x[1])
