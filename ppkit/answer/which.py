"""Questions that ask WHICH one (a segment, a region, an instrument), and questions asking a formula ppkit does
not compute: answered by naming one, or by saying what is not determined, never by a total or another figure.

* :func:`selects` reads whether a question asks which one of several ("Which segment had the highest net
  revenue?", "Which of the company's regions ..."), not which year or date.
* :func:`which_block` answers a superlative one ("highest", "lowest", "largest") from the table of the best
  ranked row: the row of that table (no total, no subtotal) with the highest or lowest value in the asked
  year's column, named with its value. When no table gives it, :func:`not_determined` says which one is not
  determined and what the sources show instead (kind ``inputs``), and never states a total as the answer.
* :func:`uncomputed_formula` reads a question that defines or names a formula the offline metrics do not
  compute (a day count, a CAGR, a multi-year average): its block says so (kind ``not_found``) rather than
  quoting a passage that does not answer it.

The rules are general wording, never a particular question's.
"""

from __future__ import annotations

import re

from ..core.text import clip, stems
from ..retrieval.metric_table import UNSUPPORTED
from .asked import Asked
from .block import MAX_CHARS, AnswerBlock, cite_line
from .passages import Passage, render_row, section_passages
from .quantity import _latest, _plain, _value

__all__ = ["selects", "which_block", "not_determined", "uncomputed_formula"]

# "which segment", "which of JPM's business segments", "which one", "which type of debt"; not "which year"
_WHICH = re.compile(r"\bwhich\b(?!\s+(?:years?|dates?|quarters?|months?|periods?|days?|fiscal)\b)", re.I)
# two named things compared ("X vs Y: which grew faster?"): the comparison's own answer, not a pick among many
_BETWEEN = re.compile(r"\b(?:vs\.?|versus|compar\w*|between)\s", re.I)
_HIGH = re.compile(r"\b(?:highest|largest|biggest|greatest|most|top|maximum|best)\b", re.I)
_LOW = re.compile(r"\b(?:lowest|smallest|least|fewest|minimum|worst)\b", re.I)
_TOTAL = re.compile(r"^\s*(?:total|subtotal|sum|net total|consolidated)\b|\btotal\s*$", re.I)
# "DPO is defined as: ...", "Days payable outstanding (DPO) is defined as"
_DEFINED = re.compile(r"(?P<name>\b[A-Za-z][\w&/ -]{1,60}?)\s*(?:\((?P<abbr>[A-Za-z&/ ]{2,12})\))?\s+is\s+defined\s+as\b",
                      re.I)


def selects(question: str, asked: Asked) -> bool:
    """Whether ``question`` asks which one of several (a segment, a region, an instrument), not a yes/no.

    >>> from ppkit.answer.asked import asked_type
    >>> q = "Which of the company's segments had the highest net revenue in 2021?"
    >>> selects(q, asked_type(q)), selects("Which year had the most sales?", asked_type("Which year had the most sales?"))
    (True, False)
    >>> selects("Compare growth in A vs B. Which grew faster?", asked_type("Compare growth in A vs B. Which grew faster?"))
    False
    """
    return not asked.yes_no and bool(_WHICH.search(question)) and not _BETWEEN.search(question)


def _pick(rows: list[Passage], year: int, high: bool, q_terms: set[str]) -> tuple[Passage, float] | None:
    """The row with the highest (lowest) value in ``year``'s column, when the rows are the ones to choose among:
    no row label (but a total's) names what the question measures, so the rows are items of one measure
    (segments, regions), not the measure's line items."""
    items = [p for p in rows if not _TOTAL.search(p.row_label or p.label)]
    if any(set(stems(p.row_label or p.label)) & q_terms for p in items):
        return None
    vals = [(p, v) for p in items if (v := _value(p, year)) is not None]
    if len(vals) < 2 or len({v for _, v in vals}) < 2:
        return None
    return (max if high else min)(vals, key=lambda pv: pv[1])


def which_block(question: str, asked: Asked, ranked: list,
                q_terms: set[str] = frozenset()) -> tuple[AnswerBlock, list[Passage]] | None:
    """The answer block of a "which one" question (:func:`selects`) asking a superlative: the row with the
    highest or lowest value of the best ranked row's table in the asked (or latest) year; None when none can be
    picked (then :func:`not_determined`, never a total as the answer). ``q_terms``: the question's stems
    (without the company's name), which no row chosen among may name."""
    high, low = bool(_HIGH.search(question)), bool(_LOW.search(question))
    if high == low:
        return None
    seen = set()
    for _, p in ranked[:8]:
        key = (p.section.section_id, p.header_line)
        if p.kind != "row" or not p.header_line or key in seen:
            continue
        seen.add(key)
        table = [r for r in section_passages(p.section) if r.kind == "row" and r.header_line == p.header_line]
        year = _latest(table[:1], asked.years)
        got = _pick(table, year, high, q_terms) if year is not None else None
        if got is None:
            continue
        row, _ = got
        word = "highest" if high else "lowest"
        text = f"{_plain(row)}, the {word} of the table's {len(table)} rows: {render_row(row, (year,), 1)}"
        cites = tuple(cite_line(row.section, ln) for ln in row.lines())
        return AnswerBlock(clip(text, MAX_CHARS), "figure", cites), [row]
    return None


def not_determined(asked: Asked, ranked: list) -> tuple[AnswerBlock, list[Passage]]:
    """The block of a "which one" question no row answers: an ``inputs`` block saying which one is not
    determined, with the best passage shown (``not_found`` when no passage was ranked)."""
    best = next((p for _, p in ranked if p.kind != "pair"), None)
    if best is None:
        return AnswerBlock("Not found: no retrieved passage names the one asked for.", "not_found"), []
    shown = render_row(best, asked.years) if best.kind == "row" else best.text
    cites = (tuple(cite_line(best.section, ln) for ln in best.lines()) if best.kind == "row"
             else (cite_line(best.section, best.line, best.line_end),))
    return (AnswerBlock(clip(f"Which one is not determined here; the sources show: {shown}", MAX_CHARS), "inputs",
                        cites), [best])


def uncomputed_formula(question: str) -> str | None:
    """The abstention line of a question asking a formula the offline metrics do not compute (one it defines
    itself over amounts no metric knows, a total over years), or None.

    >>> uncomputed_formula("What is FY2018 CT? CT is defined as: 365 * (average total assets) / (revenue).")
    'Not computed: CT, as the question defines it, is a formula not computed offline; the retrieved sections do not state it.'
    """
    m = _DEFINED.search(question)
    if m is not None:
        name = (m.group("abbr") or m.group("name")).strip()
        name = re.sub(r"^(?:and|the|where|while|with)\s+", "", name, flags=re.I)
        return (f"Not computed: {name}, as the question defines it, is a formula not computed offline; the retrieved "
                "sections do not state it.")
    u = UNSUPPORTED.search(question)
    if u is not None:
        return (f"Not computed: the {u.group(0)} asked is not computed offline; the retrieved sections do not "
                "state it.")
    return None
