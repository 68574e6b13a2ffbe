"""The primary statements a metric question needs, added to the retrieved sections when retrieval missed them.

A question that asks for a financial measure (:func:`ppkit.finance.read.read_measure`) can only be
computed from the primary statements its formula reads (balance sheet, statement of operations, statement
of cash flows). A statement is recognised as the document's tree shows it
(:func:`ppkit.retrieval.recall.section_statements`): by its title, or, in a filing extracted from its PDF, by
the title heading before a section headed only "Years ended December 31", and over the headings its rows run
on under ("Equity" after "At December 31"). :func:`with_statements` writes what each section holds into
:attr:`ppkit.retrieval.types.Section.statements`, so the answer stage, which never reads the index, reads the
rows of a statement whatever its heading says. :func:`statement_sections` finds, in the document of the
best-ranked section, the first statement of each kind the formula needs that is missing, every section of it
(a statement split over several headings), and reads them back like any retrieved section (hash-checked, under
the section budget). It ranks nothing and adds nothing for a question with no metric.
"""

from __future__ import annotations

from dataclasses import replace

from ..core.ids import breadcrumb_titles
from ..indexing.index import SearchIndex
from ..finance.catalogue import Measure, catalogue, formula_concepts
from .pointers import load_sections
from .recall import make_candidate, section_statements
from .rerank import statement_kind as title_statement_kind
from .types import Section

__all__ = ["statement_kind", "statement_kinds", "statement_sections", "with_statements"]


def statement_kinds(section: Section) -> tuple[str, ...]:
    """The primary statements ``section`` holds: :attr:`ppkit.retrieval.types.Section.statements` when read from
    its tree (:func:`with_statements`), else its heading's (:func:`ppkit.retrieval.rerank.statement_kind`)."""
    if section.statements:
        return section.statements
    kind = title_statement_kind(breadcrumb_titles(section.breadcrumb)[-1])
    return (kind,) if kind else ()


def statement_kind(section: Section) -> str | None:
    """``"balance"``, ``"operations"`` or ``"cash_flows"`` when the section is a primary statement (the first of
    :func:`statement_kinds`), else None."""
    kinds = statement_kinds(section)
    return kinds[0] if kinds else None


def _kinds(index: SearchIndex, doc: str, node_id: str, order: list[str]) -> frozenset[str]:
    """The statements a section holds (:func:`ppkit.retrieval.recall.section_statements`); a section of no figures
    titled by a statement whose next section holds it is that statement's title section (its header: units, the
    years of its columns)."""
    kinds = section_statements(index, doc, node_id)
    if kinds:
        return kinds
    kind = title_statement_kind(index.trees[doc][node_id].title)
    at = order.index(node_id) if kind and node_id in order else -1
    if at >= 0 and at + 1 < len(order) and kind in section_statements(index, doc, order[at + 1]):
        return frozenset({kind})
    return frozenset()


def with_statements(index: SearchIndex, sections: list[Section]) -> list[Section]:
    """``sections`` with :attr:`ppkit.retrieval.types.Section.statements` read from their documents' trees
    (:func:`ppkit.retrieval.recall.section_statements`, and a statement's title section before its rows); a
    section of no statement keeps ``()``."""
    orders = {d: list(index.units(d)) for d in {s.doc for s in sections}}
    return [replace(s, statements=tuple(sorted(_kinds(index, s.doc, s.node_id, orders[s.doc])))) for s in sections]


def _statement_runs(index: SearchIndex, doc: str, kind: str) -> list[list[str]]:
    """The document's statements of ``kind``, each as the node ids of its consecutive sections (its title section
    and the headings its rows run on under), in document order."""
    order = list(index.units(doc))
    runs: list[list[str]] = []
    prev = False
    for node_id in order:
        now = kind in _kinds(index, doc, node_id, order)
        if now and prev:
            runs[-1].append(node_id)
        elif now:
            runs.append([node_id])
        prev = now
    return runs


def statement_sections(index: SearchIndex, question: str, sections: list[Section], metric: Measure | None, *,
                       budget: int) -> list[Section]:
    """The primary statements ``metric`` needs that ``sections`` lack, of the best-ranked section's document:
    each statement's sections (its title section and all the headings its rows run on under), read back like any retrieved section, marked with what they hold (:func:`with_statements`) and
    ranked after ``sections``. A statement of which some section was retrieved gets its other sections; else the
    document's first statement of that kind that is not a summary of several (selected financial data). Empty
    when there is no metric or nothing is missing.

    >>> [s.breadcrumb for s in statement_sections(index, q, sections, read_measure(q), budget=6000)]  # doctest: +SKIP
    ['AMD > ... > Consolidated Balance Sheets']
    """
    if metric is None or not sections:
        return []
    doc = sections[0].doc
    concepts = catalogue().concepts
    need = {concepts[c].statement for c in formula_concepts(metric.formula)} - {"reported"}
    have = {s.node_id for s in sections if s.doc == doc}
    chosen = []
    for kind in sorted(need):
        runs = _statement_runs(index, doc, kind)
        # a summary holding several statements (selected financial data) is not the statement itself
        whole = [r for r in runs if all(len(section_statements(index, doc, n)) <= 1 for n in r)]
        picked = [r for r in whole if have & set(r)] or whole[:1] or runs[:1]
        for node_id in (n for r in picked for n in r):
            if node_id not in have:
                have.add(node_id)
                chosen.append(make_candidate(index, doc, node_id, [0.0], 0, chunk_hits=0))
    extra = with_statements(index, load_sections(index, chosen, budget=budget, query=question)) if chosen else []
    return [replace(s, rank=len(sections) + i) for i, s in enumerate(extra, start=1)]
