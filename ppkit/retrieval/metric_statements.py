"""The primary statements a metric question needs, added to the retrieved sections when retrieval missed them.

A question that asks for a financial metric (:func:`ppkit.retrieval.metric_table.detect_metric`) can only be
computed from the primary statements its formula reads (balance sheet, statement of operations, statement
of cash flows). :func:`statement_sections` finds, in the document of the best-ranked section, the first
section of each statement kind that is missing (by heading) and reads it back like any retrieved section
(hash-checked, under the section budget). It ranks nothing and adds nothing for a question with no metric.
"""

from __future__ import annotations

from dataclasses import replace

from ..core.ids import breadcrumb_titles
from ..indexing.index import SearchIndex
from .metric_table import CONCEPTS, Metric, formula_concepts
from .pointers import load_sections
from .recall import make_candidate
from .rerank import statement_kind as title_statement_kind
from .types import Section

__all__ = ["statement_kind", "statement_sections"]


def statement_kind(section: Section) -> str | None:
    """``"balance"``, ``"operations"`` or ``"cash_flows"`` when the section is a primary statement (by its
    heading, :func:`ppkit.retrieval.rerank.statement_kind`)."""
    return title_statement_kind(breadcrumb_titles(section.breadcrumb)[-1])


def statement_sections(index: SearchIndex, question: str, sections: list[Section], metric: Metric | None, *,
                       budget: int) -> list[Section]:
    """The primary statements ``metric`` needs that ``sections`` lack, of the best-ranked section's document:
    found by heading (the first section of that kind in the document), read back like any retrieved section
    and ranked after ``sections``. Empty when there is no metric or nothing is missing.

    >>> [s.breadcrumb for s in statement_sections(index, q, sections, detect_metric(q), budget=6000)]  # doctest: +SKIP
    ['AMD > ... > Consolidated Balance Sheets']
    """
    if metric is None or not sections:
        return []
    doc = sections[0].doc
    need = {CONCEPTS[c][0] for c in formula_concepts(metric.formula)}
    have = {statement_kind(s) for s in sections if s.doc == doc}
    tree = index.trees[doc]
    chosen = []
    for kind in sorted(need - have):
        node_id = next((n for n in index.units(doc) if title_statement_kind(tree[n].title) == kind), None)
        if node_id is not None:
            chosen.append(make_candidate(index, doc, node_id, [0.0], 0, chunk_hits=0))
    extra = load_sections(index, chosen, budget=budget, query=question) if chosen else []
    return [replace(s, rank=len(sections) + i) for i, s in enumerate(extra, start=1)]
