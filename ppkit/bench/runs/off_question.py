"""Planted off-question blocks: real quotes that answer something else, for the "answered" check of
:func:`ppkit.answer.answered.check_block` (``ppkit bench verify --questions``).

For a real question asked at k, beside the block ppkit chose, :func:`off_question_blocks` makes up to three blocks
that quote the filings faithfully (their figures and words are in the lines they cite, so the quote check passes
them) but answer another question:

* ``other_measure``: the figure of another row or sentence of the sections retrieved for it, the one the selector
  ranks first among them (:func:`ppkit.answer.select.rank_candidates`: of the answer type asked, of the period
  asked), the confusion it would make;
* ``other_period``: the same row as the right answer's (the row of the best-ranked figure the judge finds correct,
  else of ppkit's block), another year's column (with no year asked: an earlier column than the row's latest);
* ``other_company``: the same question answered from another company's filing: its sections retrieved with the
  question restricted to that filing, the selector's first figure among them (the next filing after the one
  asked, in the index's order; only for a question that names its company).

A plant counts only when the strict judge (:func:`ppkit.bench.measures.answer_judge.judge_block`) finds it
``wrong`` against the question's reference answer: a quote that happens to state the reference's figure is no
off-question block. Only questions asking for a figure get plants. Caught: ``answered`` is ``False``; a false
alarm: a block the judge finds ``correct`` that the check says does not answer (measured on ppkit's own blocks).

Nothing is fitted: the plants are fixed rules applied to every question alike, chosen by the selector and the
judge, never by the check they measure.
"""

from __future__ import annotations

from dataclasses import replace

from ...answer.answered import check_block
from ...answer.block import MAX_CHARS, AnswerBlock
from ...answer.candidates import candidates
from ...answer.question import read_question
from ...answer.select import load_selector, rank_candidates
from ...core.text import clip
from ...retrieval.analyze import analyze_question
from ..measures.answer_judge import judge_block

__all__ = ["KINDS", "off_question_blocks"]

KINDS = ("other_measure", "other_period", "other_company")
_QUOTES = ("cell", "clause")  # candidates that quote a line as it stands


def _block(c, asked) -> AnswerBlock:
    return AnswerBlock(clip(c.text, MAX_CHARS), "figure", c.citations, asked.type, None)


def _verdict(c, q: dict) -> str:
    return judge_block(clip(c.text, MAX_CHARS), "figure", q["answer"], q["text"], qtype=q.get("question_type", ""),
                       key_facts=q.get("key_facts") or ())["verdict"]


def _ranked(asked, sections):
    return [c for _, c, _ in rank_candidates(asked, candidates(asked, sections), load_selector())
            if c.kind in _QUOTES]


def _right(ranked, q):
    """The best-ranked figure the judge finds correct (None: none is)."""
    return next((c for c in ranked if _verdict(c, q) == "correct"), None)


def _other_period(asked, right, sections, q, answer):
    """Another column of the right answer's row (else of ppkit's block's), judged wrong."""
    lines = {(right.section.section_id, right.lines[-1])} if right is not None and right.kind == "cell" else \
        {(f"{c.doc}#{c.node}", c.line_end) for c in (answer.block.citations if answer.block else ())}
    free = replace(asked, year=None, years=(), compare=False)  # every column of the row
    same_row = [c for c in candidates(free, sections)
                if c.kind == "cell" and (c.section.section_id, c.lines[-1]) in lines and c.year is not None]
    if not same_row:
        return None
    want = asked.years or (max(c.year for c in same_row),)
    return next((c for c in same_row if c.year not in want and _verdict(c, q) == "wrong"), None)


def off_question_blocks(q: dict, answer, index, k: int) -> list[dict]:
    """The planted off-question blocks of one asked question (see the module docstring), each checked:
    ``[{"kind", "block", "caught", "verified", "shown_verified", "reason"}]``.

    Args:
        q: the question (``text``, ``answer`` the reference, ``question_type``, ``key_facts``), as the loaders give it.
        answer: ppkit's answer to it (its question as searched, its sections).
        index: the index it was asked of (another company's filing is retrieved from it).
        k: the cut-off it was asked at.
    """
    question = answer.question
    analysis = analyze_question(index, question)
    asked = read_question(question, analysis)
    if not asked.figure:
        return []
    sections = list(answer.sections)
    f = analysis.filters
    named = [d for d in (f.companies if f is not None else []) if d in index.trees]
    home = set(named) or {c.doc for c in (answer.block.citations if answer.block else ())}
    ranked = [c for c in _ranked(asked, sections) if c.section.doc in home]
    right = _right(ranked, q)
    plants: list[tuple[str, object, list]] = []
    taken = {(right.section.section_id, right.lines[-1])} if right is not None else set()
    measure = next((c for c in ranked if (c.section.section_id, c.lines[-1]) not in taken
                    and _verdict(c, q) == "wrong"), None)
    if measure is not None:
        plants.append(("other_measure", measure, sections))
    period = _other_period(asked, right, sections, q, answer)
    if period is not None:
        plants.append(("other_period", period, sections))
    docs = list(index.trees)
    if named and len(docs) > 1:
        other = docs[(docs.index(named[0]) + 1) % len(docs)]
        theirs = list(index.retrieve(question, k, docs=[other]).sections)
        c = next((c for c in _ranked(asked, theirs) if _verdict(c, q) == "wrong"), None)
        if c is not None:
            plants.append(("other_company", c, sections + theirs))
    out = []
    for kind, c, secs in plants:
        block = _block(c, asked)
        v = check_block(block, secs, question=question, analysis=analysis)
        out.append({"kind": kind, "block": block.text, "caught": v["answered"] is False, "answered": v["answered"],
                    "verified": v["verified"], "shown_verified": v["verified"] and v["answered"] is True,
                    "reason": v["answered_reason"]})
    return out
