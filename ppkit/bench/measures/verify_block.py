"""The answer block's verification measured: planted figures caught, clean blocks left alone, planted
off-question blocks caught, and whether the "answered" check agrees with the strict judge.

:func:`ppkit.answer.verify.verify_block` checks an answer block against the lines it cites, and
:func:`ppkit.answer.answered.check_block` also says whether it answers the question. Offline, every block is quoted or computed from its sources, so a clean block it does
not verify is a **false alarm**. :func:`block_case` measures one asked question:

* **clean**: the block as ppkit wrote it (``not_found`` blocks state nothing and are skipped);
* **planted**: one copy per figure of the block (not a year, not a file, note or page number), that figure
  scaled by :data:`FACTOR` at the precision written (``$3,115 million`` -> ``$3,520 million``); caught = not
  verified;
* **answered**: the check's verdict (``True``, ``False``, ``None``) beside the strict judge's
  (:func:`ppkit.bench.measures.answer_judge.judge_block`): a false alarm is a block the judge finds
  ``correct`` that the check says does not answer (``False``); a catch, a ``wrong`` or ``missing`` block it flags;
  the planted off-question blocks (:mod:`ppkit.bench.runs.off_question`) caught; and the blocks shown "verified"
  (the quotes check and ``answered`` is ``True``) among those the judge finds wrong.

Nothing is fitted: the plants are one fixed rule applied to every figure alike.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ...answer.answered import check_block
from ...answer.verify import mask_references, numbers_with_values, verify_block
from .answer_judge import judge_block

__all__ = ["FACTOR", "scaled", "plant_figures", "block_case", "summarize_blocks", "blocks_markdown"]

FACTOR = 1.13  # as the answer-level plants of `ppkit bench verify`
_DIGITS = re.compile(r"\d[\d,]*(?:\.\d+)?")


def scaled(number: str) -> str:
    """``number`` (digits, thousands separators and decimals as written) times :data:`FACTOR`, written alike.

    >>> scaled("3,115"), scaled("1.57")
    ('3,520', '1.77')
    """
    dec = len(number.split(".")[1]) if "." in number else 0
    v = float(number.replace(",", "")) * FACTOR
    return f"{v:,.{dec}f}" if "," in number else f"{v:.{dec}f}"


def plant_figures(text: str) -> list[tuple[str, str]]:
    """``(planted text, the figure changed)`` for each figure of ``text``, scaled by :data:`FACTOR`.

    >>> plant_figures("Free cash flow was $3,115 million in FY2022")
    [('Free cash flow was $3,520 million in FY2022', '$3,115 million')]
    """
    out = []
    for n in numbers_with_values(mask_references(text)):
        if n["decimals"] == 0 and not n["percent"] and (n["value"] < 10 or 1900 <= n["value"] <= 2100):
            continue  # small counts and years are not the figures an answer commits to
        a, b = n["span"]
        raw = text[a:b]
        core = _DIGITS.search(raw).group(0)
        out.append((text[:a] + raw.replace(core, scaled(core), 1) + text[b:], raw.strip()))
    return out


def block_case(question: str, reference: str, answer, *, qtype: str = "", key_facts=(), off_question=()) -> dict | None:
    """One asked question: the clean block's verdicts, each plant's, the judge's verdict and the planted
    off-question blocks' checks (``off_question``: :func:`ppkit.bench.runs.off_question.off_question_blocks`);
    None when there is no block."""
    block = answer.block
    if block is None or block.kind == "not_found":
        return None
    clean = (answer.verification or {}).get("block") or check_block(block, answer.sections, question=question)
    plants = [{"figure": fig, "caught": not verify_block(replace(block, text=t), answer.sections,
                                                          question=question)["verified"]}
              for t, fig in plant_figures(block.text)]
    return {"question": question, "kind": block.kind, "block": block.text, "verified": clean["verified"],
            "answered": clean["answered"], "answered_reason": clean.get("answered_reason", ""),
            "shown_verified": bool(clean["verified"]) and clean["answered"] is True, "reasons": clean["reasons"],
            "verdict": judge_block(block.text, block.kind, reference, question, qtype=qtype,
                                   key_facts=key_facts)["verdict"],
            "plants": plants, "off_question": list(off_question)}


def _rate(hit: int, n: int) -> float | None:
    return round(hit / n, 3) if n else None


def summarize_blocks(cases: list[dict], off_question: list[dict] | None = None) -> dict:
    """Rates over :func:`block_case` results: false alarms and catches of the block's quote check, and of the
    ``answered`` check: false alarms on blocks the judge finds correct, catches of planted off-question blocks (by
    kind; ``off_question``: all of them, also those of questions whose block said "not found", else the cases')
    and of blocks the judge finds wrong or missing, and how many wrong blocks are still shown "verified"."""
    plants = [p for c in cases for p in c["plants"]]
    correct = [c for c in cases if c["verdict"] == "correct"]
    off = [c for c in cases if c["verdict"] in ("wrong", "missing")]
    wrong = [c for c in cases if c["verdict"] == "wrong"]
    planted = off_question if off_question is not None else [p for c in cases for p in c.get("off_question", [])]
    kinds = sorted({p["kind"] for p in planted})
    return {"clean": len(cases), "false_alarms": sum(not c["verified"] for c in cases),
            "false_alarm_rate": _rate(sum(not c["verified"] for c in cases), len(cases)),
            "planted": len(plants), "caught": sum(p["caught"] for p in plants),
            "catch_rate": _rate(sum(p["caught"] for p in plants), len(plants)),
            "judged_correct": len(correct), "answered_false_alarms": sum(c["answered"] is False for c in correct),
            "answered_false_alarm_rate": _rate(sum(c["answered"] is False for c in correct), len(correct)),
            "correct_shown_verified": sum(c.get("shown_verified", False) for c in correct),
            "judged_wrong_or_missing": len(off), "answered_caught": sum(c["answered"] is False for c in off),
            "answered_catch_rate": _rate(sum(c["answered"] is False for c in off), len(off)),
            "judged_wrong": len(wrong), "wrong_shown_verified": sum(c.get("shown_verified", False) for c in wrong),
            "wrong_shown_verified_rate": _rate(sum(c.get("shown_verified", False) for c in wrong), len(wrong)),
            "off_question": len(planted), "off_question_caught": sum(p["caught"] for p in planted),
            "off_question_catch_rate": _rate(sum(p["caught"] for p in planted), len(planted)),
            "off_question_shown_verified": sum(p["shown_verified"] for p in planted),
            "off_question_by_kind": {k: {"n": sum(p["kind"] == k for p in planted),
                                         "caught": sum(p["caught"] for p in planted if p["kind"] == k)}
                                     for k in kinds}}


def blocks_markdown(summary: dict) -> str:
    """The block verification's rates as a short Markdown table."""
    s = summary
    rows = [
        "| block check | n | flagged | rate |", "| --- | --- | --- | --- |",
        f"| quotes: false alarms (clean blocks) | {s['clean']} | {s['false_alarms']} | {s['false_alarm_rate']} |",
        f"| quotes: planted figures caught | {s['planted']} | {s['caught']} | {s['catch_rate']} |",
        f"| answered: planted off-question blocks caught | {s['off_question']} | {s['off_question_caught']} "
        f"| {s['off_question_catch_rate']} |"]
    rows += [f"| answered: off-question, {k.replace('_', ' ')} | {v['n']} | {v['caught']} | {_rate(v['caught'], v['n'])} |"
             for k, v in s["off_question_by_kind"].items()]
    rows += [
        f"| answered: false alarms (judged correct) | {s['judged_correct']} | {s['answered_false_alarms']} "
        f"| {s['answered_false_alarm_rate']} |",
        f"| answered: wrong or missing flagged | {s['judged_wrong_or_missing']} | {s['answered_caught']} "
        f"| {s['answered_catch_rate']} |",
        f"| shown \"verified\": judged wrong | {s['judged_wrong']} | {s['wrong_shown_verified']} "
        f"| {s['wrong_shown_verified_rate']} |",
        f"| shown \"verified\": judged correct | {s['judged_correct']} | {s['correct_shown_verified']} "
        f"| {_rate(s['correct_shown_verified'], s['judged_correct'])} |"]
    return "\n".join(rows)
