"""The answer block's verification measured: planted figures caught, clean blocks left alone, and whether the
"answered?" check agrees with the strict judge.

:func:`ppkit.answer.verify.verify_block` checks an answer block against the lines it cites and says whether it
answers the question. Offline, every block is quoted or computed from its sources, so a clean block it does
not verify is a **false alarm**. :func:`block_case` measures one asked question:

* **clean**: the block as ppkit wrote it (``not_found`` blocks state nothing and are skipped);
* **planted**: one copy per figure of the block (not a year, not a file, note or page number), that figure
  scaled by :data:`FACTOR` at the precision written (``$3,115 million`` -> ``$3,520 million``); caught = not
  verified;
* **answered?**: the check's verdict beside the strict judge's
  (:func:`ppkit.bench.measures.answer_judge.judge_block`): a false alarm is a block the judge finds
  ``correct`` that the check says does not answer; a catch, a ``wrong`` or ``missing`` block it flags.

Nothing is fitted: the plants are one fixed rule applied to every figure alike.
"""

from __future__ import annotations

import re
from dataclasses import replace

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


def block_case(question: str, reference: str, answer) -> dict | None:
    """One asked question: the clean block's verdicts, each plant's, and the judge's verdict (None: no block)."""
    block = answer.block
    if block is None or block.kind == "not_found":
        return None
    clean = (answer.verification or {}).get("block") or verify_block(block, answer.sections, question=question)
    plants = [{"figure": fig, "caught": not verify_block(replace(block, text=t), answer.sections,
                                                          question=question)["verified"]}
              for t, fig in plant_figures(block.text)]
    return {"question": question, "kind": block.kind, "block": block.text, "verified": clean["verified"],
            "answered": clean["answered"], "reasons": clean["reasons"],
            "verdict": judge_block(block.text, block.kind, reference, question)["verdict"], "plants": plants}


def _rate(hit: int, n: int) -> float | None:
    return round(hit / n, 3) if n else None


def summarize_blocks(cases: list[dict]) -> dict:
    """Rates over :func:`block_case` results: false alarms and catches of the block verification and of
    the "answered?" check."""
    plants = [p for c in cases for p in c["plants"]]
    correct = [c for c in cases if c["verdict"] == "correct"]
    off = [c for c in cases if c["verdict"] in ("wrong", "missing")]
    return {"clean": len(cases), "false_alarms": sum(not c["verified"] for c in cases),
            "false_alarm_rate": _rate(sum(not c["verified"] for c in cases), len(cases)),
            "planted": len(plants), "caught": sum(p["caught"] for p in plants),
            "catch_rate": _rate(sum(p["caught"] for p in plants), len(plants)),
            "judged_correct": len(correct), "answered_false_alarms": sum(not c["answered"] for c in correct),
            "answered_false_alarm_rate": _rate(sum(not c["answered"] for c in correct), len(correct)),
            "judged_wrong_or_missing": len(off), "answered_caught": sum(not c["answered"] for c in off),
            "answered_catch_rate": _rate(sum(not c["answered"] for c in off), len(off))}


def blocks_markdown(summary: dict) -> str:
    """The block verification's rates as a short Markdown table."""
    s = summary
    return "\n".join([
        "| block check | n | flagged | rate |", "| --- | --- | --- | --- |",
        f"| verified: false alarms (clean blocks) | {s['clean']} | {s['false_alarms']} | {s['false_alarm_rate']} |",
        f"| verified: planted figures caught | {s['planted']} | {s['caught']} | {s['catch_rate']} |",
        f"| answered?: false alarms (judged correct) | {s['judged_correct']} | {s['answered_false_alarms']} "
        f"| {s['answered_false_alarm_rate']} |",
        f"| answered?: wrong or missing flagged | {s['judged_wrong_or_missing']} | {s['answered_caught']} "
        f"| {s['answered_catch_rate']} |"])
