"""A strict numeric judge: does an answer state the ground truth's number, in its unit, with its sign?

:func:`judge_numeric` compares the answer's *stated result* with FinanceBench's ``answer`` field:

* the **expected** value and unit come from the ground truth and its question: ``4.2%`` is a
  percentage, ``$9068.00`` an amount in the unit the question asks for ("Answer in USD millions";
  millions when it says nothing), ``1.57`` / ``-0.02`` a plain number (a ratio, "times");
* the **stated result** is, in order: the number after the last ``=`` of the answer's first line
  starting with "Computed" or "Answer"; else after the last ``=`` of the first line holding one;
  else the answer's first number that is not a year;
* it is **correct** when the units agree (a percentage for a percentage, an amount for an amount,
  a plain number or ``x`` multiple for a ratio: 0.042 is not 4.2%), the signs agree, and the value
  is within a relative tolerance (1% by default) after scaling amounts to the expected unit
  (``$9.07 billion`` = 9,070 millions). A bare figure (no ``$``, ``%``, scale word or ``x``) stated
  against an amount is that amount in the question's unit, the way statements and their arithmetic
  write amounts ("9,068" in a step of a sum in $ millions is ``$9068.00`` asked in millions); against a
  percentage it stays a ratio.

Reasons for a miss: ``no_number``, ``abstained`` (the answer says it did not compute), ``unit``,
``sign``, ``value``. Not applicable when the ground truth holds no number. The lenient check beside
the LLM judge in :mod:`ppkit.bench.runs.answers` (``numeric_check``: any number, 2%, sign ignored) is a
different, looser measure.
"""

from __future__ import annotations

import re

from ...answer.scope import abstained
from ...answer.verify import numbers_with_values

__all__ = ["judge_numeric", "expected_value", "stated_result"]

_Q_SCALE = re.compile(r"\b(?:in|of)\s+(?:units of\s+)?(?:(?-i:[A-Z]{3})|us\$|\$|dollars)?\s*(thousands|millions|billions)\b", re.I)
_SCALE_OF = {"thousands": 1e3, "millions": 1e6, "billions": 1e9}

def _unit(n: dict) -> str:
    if n["percent"]:
        return "percent"
    if n["currency"] or n["scale"]:
        return "usd"
    return "ratio"


def expected_value(truth: str, question: str = "") -> dict | None:
    """The ground truth's number: ``{"value", "unit", "scale", "negative"}`` (amounts in dollars), or None.

    >>> expected_value("$4.60", "in USD billions")["value"]
    4600000000.0
    """
    nums = [n for n in numbers_with_values(truth) if not (n["decimals"] == 0 and 1900 <= n["value"] <= 2100
                                                           and not n["currency"])]
    if not nums:
        return None
    n = nums[0]
    unit = _unit(n)
    m = _Q_SCALE.search(question)
    scale = _SCALE_OF[m.group(1).casefold()] if m else 1e6
    value = n["value"] * (n["scale"] or scale) if unit == "usd" else n["value"]
    neg = n["negative"] or truth.strip().startswith("-")
    return {"value": -value if neg else value, "unit": unit, "scale": scale, "text": n["text"]}


def _first_number(line: str) -> dict | None:
    for n in numbers_with_values(line):
        plain = n["decimals"] == 0 and not (n["percent"] or n["currency"] or n["scale"])
        if plain and 1900 <= n["value"] <= 2100:
            continue  # a year
        return n
    return None


def stated_result(answer: str) -> dict | None:
    """The number an answer gives as its result (see the module docstring), with its line."""
    lines = [ln for ln in answer.split("\n") if ln.strip() and not ln.lstrip().startswith("[")]
    picks = [ln for ln in lines if re.match(r"\W*(computed|answer)\b", ln, re.I)]
    # a "Formula: ... x 100" line defines the metric: its numbers are no result
    picks += [ln for ln in lines if "=" in ln and not re.match(r"\W*formula\b", ln, re.I)][:1]
    for ln in picks:
        tail = ln.rsplit("=", 1)[-1] if "=" in ln else ln
        n = _first_number(tail)
        if n is not None:
            return {**n, "line": ln.strip()}
    for ln in lines:
        n = _first_number(ln)
        if n is not None:
            return {**n, "line": ln.strip()}
    return None


def judge_numeric(answer: str, truth: str, question: str = "", *, tolerance: float = 0.01) -> dict:
    """Judge ``answer`` against the ground truth ``truth`` strictly.

    Returns ``{"applicable", "ok", "reason", "expected", "got", "tolerance"}``.

    >>> judge_numeric("Computed quick ratio: 9,981 / 6,369 = 1.57", "1.57")["ok"]
    True
    >>> judge_numeric("The margin is 0.042", "4.2%")["reason"]
    'unit'
    """
    exp = expected_value(truth, question)
    base = {"applicable": exp is not None, "ok": None, "reason": "", "expected": exp, "got": None,
            "tolerance": tolerance}
    if exp is None:
        return {**base, "reason": "no number in the ground truth"}
    got = stated_result(answer)
    said_no = abstained(answer)
    if got is None or (said_no and not re.match(r"\W*(computed|answer)\b", got["line"], re.I)):
        return {**base, "ok": False, "reason": "abstained" if said_no else "no_number"}
    unit = _unit(got)
    if unit == "ratio" and exp["unit"] == "usd" and not got["multiple"]:
        unit = "usd"  # a bare figure against an amount: read in the question's unit (see the module docstring)
    value = got["value"]
    if unit == "usd":
        value *= got["scale"] or exp["scale"]  # an amount without a scale word is read in the question's unit
    neg = got["negative"]
    got_rec = {"value": -value if neg else value, "unit": unit, "text": got["text"], "line": got["line"]}
    if unit != exp["unit"]:
        return {**base, "ok": False, "reason": "unit", "got": got_rec}
    if (exp["value"] < 0) != neg and exp["value"] != 0 and value != 0:
        return {**base, "ok": False, "reason": "sign", "got": got_rec}
    e = abs(exp["value"])
    ok = abs(value) < 1e-12 if e == 0 else abs(abs(value) - e) / e <= tolerance
    return {**base, "ok": ok, "reason": "" if ok else "value", "got": got_rec}
