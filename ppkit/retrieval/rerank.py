"""Stage 2: re-rank the candidate sections by where they live and what they say.

A re-ranker is any object with ``name`` and ``rerank(question, candidates) ->
candidates`` (same shape in and out, best first, ``stage2_score`` filled in).

:class:`StructuralReranker` is the offline default. For each of the (up to 50)
candidates it computes a few general features and adds their z-scores with fixed
weights (never tuned to particular questions):

* ``dense``    - the stage-1 evidence: best chunk similarity and the mean of the
  section's top chunk similarities;
* ``hits``     - how many of the recalled chunks fall in the section (log);
* ``path_sem`` - cosine similarity of the question and the breadcrumb path;
* ``path_lex`` - share of the question's (idf-weighted) stems found in the path;
* ``text_lex`` - BM25 of the question over the candidate sections' full text
  (idf over the candidates), which rewards exact line items and terms that a
  256-token embedder truncated away;
* ``numeric``  - for quantitative questions, the density of numeric table rows;
* ``statement`` - the section is the primary financial statement that reports a
  concept the question asks about (by its title, or as :mod:`ppkit.retrieval.statements` finds it
  in an extracted PDF: an empty title heading before it, a title line in its body) (current ratio -> balance sheet / statement of
  financial position; operating margin -> statement of operations; capex, dividends
  paid -> statement of cash flows). General accounting knowledge, the kind an LLM
  re-ranker brings; it is zero on documents without such statements, and for a question the statements
  cannot answer (:func:`ppkit.retrieval.statements.beyond_statements`: a part of the company, which the
  consolidated statements do not break out; the causes of a change; an adjusted or non-GAAP measure);
* ``anchor``   - when the question names an anchor ("Figure 5", "Table I", "Eq. 3",
  "Section 4.2"), 2 if the section defines it, 1 if it mentions or encloses it
  (:mod:`ppkit.documents.anchors`). It is not added to the score: sections with an anchor are
  put first, in score order (:func:`apply_anchor_priority`).

The Gemini re-ranker (:class:`ppkit.retrieval.rerank_gemini.GeminiReranker`) asks the model to
pick from the numbered breadcrumb list, like the reference system.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import replace
from functools import lru_cache, partial
from typing import Protocol

import numpy as np

from ..core.ids import breadcrumb_path, breadcrumb_titles
from ..core.text import stems
from ..documents.anchors import anchor_tiers
from ..indexing.lexical import bm25_scores, lexical_tokens
from .recall import section_statements
from .statements import beyond_statements, statement_kind, statements_asked
from .types import Candidate

__all__ = ["Reranker", "StructuralReranker", "Stage1Reranker", "AnchorPriority", "apply_anchor_priority", "zscore"]


class Reranker(Protocol):
    """Stage 2: orders the candidate sections for a question (same shape in and out).

    Attributes:
        name: shown in traces.
        uses_search_text: ``retrieve`` hands it the search text (the question without the names
            that became filters) rather than the question as asked.
        calls: the model calls it made (empty offline), for traces.
        last_notes: what went wrong in its last call and what it did instead.
    """

    name: str
    uses_search_text: bool
    calls: list[dict]
    last_notes: list[str]

    def rerank(self, question: str, candidates: list[Candidate]) -> list[Candidate]: ...


class Stage1Reranker:
    """No re-ranking: stage-1 order (the ablation baseline; with stage 1 per filing, the filings' lists taken in
    turn)."""

    name = "stage1-order"
    uses_search_text = True

    def __init__(self) -> None:
        self.calls: list[dict] = []
        self.last_notes: list[str] = []

    def rerank(self, question: str, candidates: list[Candidate]) -> list[Candidate]:
        return [replace(c, stage2_score=c.stage1_score) for c in candidates]


def _statement_match(asked: set[str], kinds: frozenset[str]) -> float:
    """1.0 when the section is a primary statement (``kinds``) that reports a concept the question asks for
    (``asked``: :func:`statements_asked` of the question)."""
    return float(bool(kinds & asked))


# plural forms too ("gross margins", "costs"): the question's own wording, not a vocabulary change
_QUANT = re.compile(r"\b(ratios?|margins?|percent|percentages?|%|how much|how many|totals?|amounts?|growth|rates?|"
                    r"compute|calculate|changes?|increases?|decreases?|revenues?|income|cash|expenses?|costs?|eps|"
                    r"dividends?|shares?)\b", re.I)


def zscore(v: np.ndarray) -> np.ndarray:
    """(v - mean) / sd over the candidates; zeros when they are all equal."""
    sd = v.std()
    return (v - v.mean()) / sd if sd > 1e-9 else np.zeros_like(v)


_NUMBER = re.compile(r"\d[\d,]{2,}")


@lru_cache(maxsize=8192)  # a section's text is the same string object query after query: hashed once
def _numeric_density(text: str) -> float:
    lines = text.split("\n")
    rows = [ln for ln in lines if ln.lstrip().startswith("|")]
    if not rows:
        return 0.0
    numeric = sum(1 for r in rows if _NUMBER.search(r))
    return numeric / max(1, len(lines))


class StructuralReranker:
    """Offline structural re-ranker over breadcrumb, snippet/text and stage-1 evidence.

    Args:
        embedder: used for the breadcrumb similarity (``None`` skips that feature).
        weights: feature -> weight; see the module docstring for the features.
        path_vectors: ``{breadcrumb path: vector}`` computed by ``embedder`` beforehand (an index stores
            them: :attr:`ppkit.indexing.index.SearchIndex.path_vectors`); other paths are embedded on
            first sight and kept.
        section_tokens: ``(doc, first line, last line, chars) -> BM25 terms or None``: a candidate's
            terms as stored at index time (:meth:`ppkit.indexing.index.SearchIndex.section_tokens`);
            ``None`` from it, or no function, tokenises the candidate's text.
        statement_kinds: ``(doc, node_id) -> frozenset of statement kinds`` the section holds
            (:func:`ppkit.retrieval.recall.section_statements` reads the tree); no function: the kind its
            breadcrumb's last title names.
    """

    name = "structural"
    uses_search_text = True  # retrieve() hands it the question without the names that became filters
    # statement: chosen leave-one-company-out over every visible set, the 74-filing shelf included
    # (`ppkit bench statement-weight`; it was set by hand on the four 10-Ks before: docs/results/financebench-shelf.md)
    DEFAULT_WEIGHTS = {"dense": 1.0, "hits": 0.3, "path_sem": 0.6, "path_lex": 0.5, "text_lex": 0.8, "numeric": 0.3,
                       "statement": 1.6, "anchor": 0.0}  # anchor: a priority, not a weight

    def __init__(self, embedder=None, weights: dict[str, float] | None = None, *,
                 path_vectors: dict[str, np.ndarray] | None = None, section_tokens=None,
                 statement_kinds=None):
        self.embedder = embedder
        self.weights = {**self.DEFAULT_WEIGHTS, **(weights or {})}
        self._path_vecs: dict[str, np.ndarray] = dict(path_vectors or {})  # breadcrumb (without doc) -> vector
        self.section_tokens = section_tokens
        self._term_counts: dict[tuple, tuple[Counter, int]] = {}  # see _counts
        self.statement_kinds = statement_kinds
        self.calls: list = []
        self.last_notes: list[str] = []

    def __repr__(self) -> str:
        return f"StructuralReranker(weights={self.weights})"

    @classmethod
    def for_index(cls, index, *, path_vectors: bool = True, **kw) -> StructuralReranker:
        """The re-ranker over ``index``: its embedder, stored breadcrumb vectors (unless ``path_vectors``
        is False), stored section terms and the statements its sections hold."""
        return cls(index.embedder, path_vectors=index.path_vectors if path_vectors else None,
                   section_tokens=index.section_tokens, statement_kinds=partial(section_statements, index), **kw)

    def _paths(self, paths: list[str]) -> np.ndarray:
        missing = [p for p in dict.fromkeys(paths) if p not in self._path_vecs]
        if missing:
            for p, v in zip(missing, self.embedder.embed_documents(missing)):
                self._path_vecs[p] = v
        return np.stack([self._path_vecs[p] for p in paths])

    def _tokens(self, c: Candidate) -> list[str]:
        stored = self.section_tokens(c.doc, c.line_start, c.line_end, len(c.text)) if self.section_tokens else None
        return stored if stored is not None else lexical_tokens(c.text)

    COUNTS_KEPT = 20000  # sections whose term counts are kept (a section is a candidate of many questions)

    def _counts(self, c: Candidate) -> tuple[Counter, int]:
        """The candidate's BM25 term counts and term total, kept per section (its text's length in the key)."""
        key = (c.doc, c.line_start, c.line_end, len(c.text))
        hit = self._term_counts.get(key)
        if hit is None:
            tokens = self._tokens(c)
            hit = (Counter(tokens), len(tokens))
            if len(self._term_counts) >= self.COUNTS_KEPT:
                self._term_counts.clear()
            self._term_counts[key] = hit
        return hit

    def _statements(self, c: Candidate) -> frozenset[str]:
        if self.statement_kinds is not None:
            return self.statement_kinds(c.doc, c.node_id)
        kind = statement_kind(breadcrumb_titles(c.breadcrumb)[-1])
        return frozenset({kind} if kind else ())

    def features(self, question: str, candidates: list[Candidate]) -> dict[str, np.ndarray]:
        """The raw feature values (one array per feature, aligned with ``candidates``)."""
        n = len(candidates)
        paths = [breadcrumb_path(c.breadcrumb) for c in candidates]
        q_stems = stems(question)
        feats: dict[str, np.ndarray] = {
            # sum / len: np.mean's float64 arithmetic for three numbers or fewer, bit for bit, without its overhead
            "dense": np.array([c.stage1_score + 0.5 * (sum(c.chunk_scores[:3]) / len(c.chunk_scores[:3]))
                               for c in candidates]),
            "hits": np.log1p([c.chunk_hits for c in candidates]),
        }
        if self.embedder is not None:
            qv = self.embedder.embed_query(question)
            feats["path_sem"] = self._paths(paths) @ qv
        # idf of question stems over the candidates' paths
        path_stems = [set(stems(p)) for p in paths]
        df = Counter(t for s in path_stems for t in s)
        idf = {t: math.log(1 + n / (1 + df[t])) for t in set(q_stems)}
        total = sum(idf.values()) or 1.0
        feats["path_lex"] = np.array([sum(idf[t] for t in set(q_stems) if t in s) / total for s in path_stems])
        feats["text_lex"] = bm25_scores(question, [c.text for c in candidates],
                                        counts=[self._counts(c) for c in candidates]).astype(float)
        quant = bool(_QUANT.search(question))
        feats["numeric"] = np.array([_numeric_density(c.text) if quant else 0.0 for c in candidates])
        asked = set() if beyond_statements(question) else statements_asked(question)
        feats["statement"] = np.array([_statement_match(asked, self._statements(c)) for c in candidates])
        feats["anchor"] = np.array(anchor_tiers(question, candidates), dtype=float)
        return feats

    def rerank(self, question: str, candidates: list[Candidate]) -> list[Candidate]:
        if not candidates:
            return []
        feats = self.features(question, candidates)
        score = np.zeros(len(candidates))
        for name, v in feats.items():
            score += self.weights.get(name, 0.0) * zscore(np.asarray(v, dtype=float))
        out = [replace(c, stage2_score=round(float(s), 4),
                       features={k: round(float(v[i]), 4) for k, v in feats.items()})
               for i, (c, s) in enumerate(zip(candidates, score))]
        # sections holding an anchor the question names first; stable: ties keep stage-1 order
        return sorted(out, key=lambda c: (-c.features.get("anchor", 0.0), -(c.stage2_score or 0.0), c.stage1_rank))


def apply_anchor_priority(question: str, ranked_candidates: list) -> list:
    """Sections that contain an anchor the question names first; otherwise the given order.

    Call it after any re-ranker: it takes and returns the same shape (a new list of the
    same objects), a no-op when the question names no anchor.

    >>> [c.node_id for c in apply_anchor_priority("What does Table 2 show?", ranked)]  # doctest: +SKIP
    ['0031', '0007', ...]
    """
    tiers = anchor_tiers(question, ranked_candidates)
    order = sorted(range(len(ranked_candidates)), key=lambda i: -tiers[i])  # stable: ties keep the given order
    return [ranked_candidates[i] for i in order]


class AnchorPriority:
    """Any re-ranker followed by :func:`apply_anchor_priority`, with the same interface.

    ``calls``, ``last_notes`` and ``uses_search_text`` are the inner re-ranker's.

    >>> reranker = AnchorPriority(GeminiReranker(config=cfg))  # doctest: +SKIP
    """

    def __init__(self, inner: Reranker):
        self.inner = inner
        self.name = f"{inner.name}+anchors"

    def __repr__(self) -> str:
        return f"AnchorPriority({self.inner!r})"

    @property
    def uses_search_text(self) -> bool:
        return self.inner.uses_search_text

    @property
    def calls(self) -> list[dict]:
        return self.inner.calls

    @property
    def last_notes(self) -> list[str]:
        return self.inner.last_notes

    def rerank(self, question: str, candidates: list[Candidate]) -> list[Candidate]:
        return apply_anchor_priority(question, self.inner.rerank(question, candidates))
