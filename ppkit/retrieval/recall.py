"""Stage 1's building blocks: candidates made from recalled chunks, and structural recall.

:func:`make_candidate` turns a section and the similarities of its recalled chunks into a
:class:`~ppkit.retrieval.types.Candidate` (the dense, BM25 and hybrid recall of
:mod:`ppkit.retrieval.hybrid` all use it); :func:`statement_candidates` adds the primary financial statements a question's concepts
call for when stage 1 missed them (dense recall handles tables badly). Hybrid recall
(dense + BM25, fused) lives in :mod:`ppkit.retrieval.hybrid`.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

import numpy as np

from ..core.ids import ROOT_ID
from ..indexing.index import SearchIndex
from .statements import section_statement_kinds, statements_asked
from .types import Candidate

__all__ = ["statement_candidates", "section_statements", "make_candidate", "rendered_lines", "unit_text"]


def rendered_lines(index: SearchIndex, doc: str, a: int, b: int) -> list[tuple[int, str]]:
    """(source line, text) of lines a..b, HTML tables rendered as pipe rows (see ppkit.core.markup)."""
    return list(index.rendered_lines(doc, a, b))


def unit_text(index: SearchIndex, doc: str, node_id: str) -> tuple[int, int, str]:
    a, b = index.units(doc)[node_id]
    return a, b, index.rendered_text(doc, a, b)


def make_candidate(index: SearchIndex, doc: str, node_id: str, chunk_scores, rank: int, *, chunk_hits: int | None = None,
                   snippet_chars: int = 150, **extra) -> Candidate:
    """A Candidate for section (doc, node_id): its unit's rendered text and snippet, and the
    similarities of its chunks (best first; the best is the stage-1 score)."""
    a, b, text = unit_text(index, doc, node_id)
    body = text.split("\n", 1)[1] if "\n" in text and node_id != ROOT_ID else text
    scores = tuple(sorted((float(x) for x in chunk_scores), reverse=True))
    return Candidate(doc, node_id, index.trees[doc][node_id].breadcrumb, scores[0], rank,
                     len(scores) if chunk_hits is None else chunk_hits, scores, a, b,
                     _snippet(body, snippet_chars), text, **extra)


def _snippet(text: str, chars: int) -> str:
    """The first ``chars`` characters of ``text`` with its whitespace runs made single spaces (and none at
    the ends): ``" ".join(text.split())[:chars]``, from a prefix of the text (a section can be long).

    >>> _snippet("  Net   sales\n rose 5%", 12)
    'Net sales ro'
    """
    m = 4 * chars + 64
    while True:
        # a prefix's words are the text's, the last perhaps cut short: their join begins the text's join
        out = " ".join(text[:m].split())
        if len(out) >= chars or m >= len(text):
            return out[:chars]
        m *= 4


_STATEMENT_MAPS: WeakKeyDictionary = WeakKeyDictionary()  # index -> {doc: {node_id: frozenset of kinds}}


def section_statements(index: SearchIndex, doc: str, node_id: str) -> frozenset[str]:
    """The primary statements an indexed section holds (:func:`ppkit.retrieval.statements.section_statement_kinds`),
    computed once per document of ``index``."""
    per_doc = _STATEMENT_MAPS.setdefault(index, {})
    if doc not in per_doc:
        tree, lines = index.trees[doc], index.lines(doc)
        per_doc[doc] = {nid: section_statement_kinds(tree, lines, nid, index.rendered_text(doc, a, b).split("\n"))
                        for nid, (a, b) in index.units(doc).items()}
    return per_doc[doc].get(node_id, frozenset())


def statement_candidates(index: SearchIndex, question: str, present: list[Candidate], *, docs: list[str] | None,
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
        for node_id in index.units(doc):
            if (doc, node_id) in have or not section_statements(index, doc, node_id) & kinds:
                continue
            chunks = index.chunks_of(doc, node_id)
            if not chunks:
                continue
            sims = index.store.vectors(np.asarray([c.chunk_id for c in chunks], dtype=np.int64)) @ query_vec
            out.append(make_candidate(index, doc, node_id, sims, len(present) + len(out) + 1, chunk_hits=0,
                                      snippet_chars=snippet_chars))
    return out
