"""Stage 1: the chunks nearest to the question, deduplicated to candidate sections.

:func:`recall_candidates` takes the top ``recall`` (200) chunks by vector similarity and
keeps the first ``candidates`` (50) distinct sections in rank order;
:func:`statement_candidates` adds the primary financial statements a question's concepts
call for when stage 1 missed them (dense recall handles tables badly). Hybrid recall
(dense + BM25, fused) lives in :mod:`ppkit.retrieval.hybrid`.
"""

from __future__ import annotations

import time

import numpy as np

from ..core.markup import render
from .rerank import statement_kind, statements_asked
from .types import Candidate

__all__ = ["recall_candidates", "statement_candidates", "make_candidate", "rendered_lines", "unit_text"]


def rendered_lines(index, doc: str, a: int, b: int) -> list[tuple[int, str]]:
    """(source line, text) of lines a..b, HTML tables rendered as pipe rows (see ppkit.core.markup)."""
    return render(index.lines(doc)[a - 1 : b], a)


def unit_text(index, doc: str, node_id: str) -> tuple[int, int, str]:
    a, b = index.units(doc)[node_id]
    return a, b, "\n".join(t for _, t in rendered_lines(index, doc, a, b))


def make_candidate(index, doc: str, node_id: str, chunk_scores, rank: int, *, chunk_hits: int | None = None,
                   snippet_chars: int = 150, **extra) -> Candidate:
    """A Candidate for section (doc, node_id): its unit's rendered text and snippet, and the
    similarities of its chunks (best first; the best is the stage-1 score)."""
    a, b, text = unit_text(index, doc, node_id)
    body = text.split("\n", 1)[1] if "\n" in text and node_id != "0000" else text
    scores = tuple(sorted((float(x) for x in chunk_scores), reverse=True))
    return Candidate(doc, node_id, index.trees[doc][node_id].breadcrumb, scores[0], rank,
                     len(scores) if chunk_hits is None else chunk_hits, scores, a, b,
                     " ".join(body.split())[:snippet_chars], text, **extra)


def recall_candidates(index, question: str, *, docs: list[str] | None = None, recall: int = 200,
                      candidates: int = 50, query_vec: np.ndarray | None = None,
                      snippet_chars: int = 150) -> tuple[list[Candidate], dict]:
    """Stage 1: the top ``recall`` chunks, deduplicated to the first ``candidates`` sections.

    Returns (candidates in stage-1 order, trace info).
    """
    t0 = time.perf_counter()
    qv = index.embedder.embed_query(question) if query_vec is None else query_vec
    t_embed = time.perf_counter() - t0
    ids, scores = index.store.search(qv, recall, allowed_ids=index.chunk_ids(docs))
    t_search = time.perf_counter() - t0 - t_embed
    order: list[tuple[str, str]] = []  # (doc, node) in order of first appearance
    hits: dict[tuple[str, str], list[float]] = {}  # (doc, node) -> chunk scores, best first
    for cid, s in zip(ids, scores):
        c = index.chunk(int(cid))
        key = (c.doc, c.node_id)
        if key not in hits:
            hits[key] = []
            order.append(key)
        hits[key].append(float(s))
    out = [make_candidate(index, doc, node_id, hits[(doc, node_id)], rank, snippet_chars=snippet_chars)
           for rank, (doc, node_id) in enumerate(order[:candidates], start=1)]
    info = {"chunks_recalled": int(len(ids)), "sections_recalled": len(order), "candidates": len(out),
            "seconds": {"embed_query": round(t_embed, 4), "vector_search": round(t_search, 4)}}
    return out, info


def statement_candidates(index, question: str, present: list[Candidate], *, docs: list[str] | None,
                         query_vec: np.ndarray, snippet_chars: int = 150) -> list[Candidate]:
    """Structural recall: the primary financial statements that report what the question asks about.

    Dense recall handles tables badly (a statement is rows of numbers), so when a question asks
    for a concept that one of the primary statements reports (see :func:`ppkit.retrieval.rerank.statements_asked`),
    those statement sections of the searched documents join the candidates if stage 1 missed them.
    Their stage-1 score is their best chunk's similarity; ``chunk_hits`` is 0.
    """
    kinds = statements_asked(question)
    if not kinds:
        return []
    have = {(c.doc, c.node_id) for c in present}
    out = []
    for doc in (docs if docs is not None else index.docs):
        doc = index.resolve_doc(doc)
        tree = index.trees[doc]
        for node_id in index.units(doc):
            if (doc, node_id) in have or statement_kind(tree[node_id].title) not in kinds:
                continue
            chunks = index.chunks_of(doc, node_id)
            if not chunks:
                continue
            sims = index.store.vectors(np.asarray([c.chunk_id for c in chunks], dtype=np.int64)) @ query_vec
            out.append(make_candidate(index, doc, node_id, sims, len(present) + len(out) + 1, chunk_hits=0,
                                      snippet_chars=snippet_chars))
    return out
