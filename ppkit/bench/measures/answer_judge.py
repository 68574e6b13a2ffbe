"""The strict offline answer judge: does an answer block state the reference answer?

:func:`judge_block` scores an :class:`ppkit.answer.block.AnswerBlock`'s ``text`` and ``kind`` against a
question set's reference answer, without a language model. It reads **figures** from both texts
(:func:`figures`): a number with its unit (``percent``; ``amount``: money, a scale word or a bare number;
a ratio such as ``1.57`` or ``0.24x`` is a bare amount) and its sign (a minus, parentheses, or a word
of decrease written next to it: "declined 5.2%", "a loss of $1.2 billion"; a fall *by* a figure, words between:
"a small decline in unit costs by 0.8%" is -0.8). These are **not** figures:
years (1900-2100 without a unit), days of the month ("December 31", "31 December"), note, item, section,
page, line, table, exhibit and file numbers (:func:`ppkit.answer.verify.mask_references`), and figures
glued to letters ("CET1", "FY22", "10-K", "Q3").

Two figures **agree** when their units agree (a percent only with a percent: 0.042 is not 4.2%), their
signs agree, and their values are within ``tolerance`` (1%) of each other or the block's rounds to the
reference's at the precision the reference is written ("~2.4x" is 2.35 to 2.45: 2.36 agrees); an amount written without a
scale word may be in units, thousands, millions or billions (a table's ``23,601`` is ``$23.6 billion``),
one with a scale word (or the question's "in USD millions") is read at that scale. A reference figure written
"X+" ("about $4B+") means at least X at its precision (3.5 billion) and of X's order (under ten times X); one given
as the size of a change or an effect ("a receivables build-up (~$2B+)", "a decline of 5%") agrees in size, its
sign being the block's to state (a cash-flow row writes that increase as ``(1,401)``).

The **answer figures** of a reference are its first figure, or, when that is an operand of a formula the reference
shows first ("(52,862 − 42,380) / 42,380 ≈ 24.7%"), the figures it gives as results (after ``=`` or ``≈``, not
followed by an operator); the **changes** are the differences and
percent changes between two of its figures of one unit. The block's **answer figure** is its first figure (the
first it gives as a result after ``=`` or ``≈`` when it writes one), a figure that only repeats a number of the
question ("the 3 segments", "a 5-year term") left out: listing many figures does not make a block right.

A block **hedges** when its kind is ``closest`` or ``inputs`` or its text says the sources do not state what was
asked ("not stated directly", "the closest passage"). A hedged block is never correct and never wrong. The
verdicts, in order:

* out of scope (the reference begins "Not found", or the question's type is ``out_of_scope``): ``correct`` for a
  ``not_found`` block; ``missing`` for a hedge or ``not_meaningful``; ``wrong`` for any block that answers;
* ``abstained``: a ``not_found`` block on a question the reference answers (``false_abstention`` is set);
* ``unjudged``: the reference has no figure, no yes or no, no key facts and does not say the measure does not
  apply, whatever the block says (so every run judges the same questions);
* ``partial``: a hedged block holding the reference's answer figure (anywhere) or its key facts; else ``missing``;
* the reference says the measure does not apply: ``correct`` for ``not_meaningful``, ``wrong`` for a block stating
  a figure, else ``missing``; a ``not_meaningful`` block where the reference answers is ``wrong``;
* a yes or no reference: read only from a ``yes_no`` block (which begins "Yes" or "No"): the same answer is
  ``correct`` unless every figure the block states disagrees with the reference's (``wrong``), the opposite is
  ``wrong``; another block is ``wrong`` when it states figures none of which agrees, else ``missing``;
* ``correct``: the block's answer figure agrees with an answer figure or a change of the reference;
* ``wrong``: the block states figures and none agrees with any figure or change of the reference;
* ``correct``: the block states at least half of the question's **key facts** (narrative and "which one"
  questions of a sealed set: short phrases a right answer states), unless its answer figure disagrees;
* ``missing``: otherwise (the answer figure stated but not first, only the reference's inputs, or nothing).

Nothing here is fitted; the rules are general. The tests use sentences written for them.
"""

from __future__ import annotations

import re
from itertools import permutations

from ...answer.verify import mask_references, numbers_with_values
from ...core.text import stems

__all__ = ["VERDICTS", "HEDGED_KINDS", "figures", "yes_no", "not_applicable", "out_of_scope", "hedged", "states_fact",
           "judge_block", "summarize", "confidence_bins"]

VERDICTS = ("correct", "wrong", "partial", "missing", "abstained", "unjudged")
HEDGED_KINDS = ("closest", "inputs")
_SCALES = (1.0, 1e3, 1e6, 1e9)
_Q_SCALE = re.compile(r"\b(?:in|of)\s+(?:units of\s+)?(?:(?-i:[A-Z]{3})|us\$|\$|dollars)?\s*(thousands|millions|billions)\b",
                      re.I)
_SCALE_OF = {"thousands": 1e3, "millions": 1e6, "billions": 1e9}
_NEG_BEFORE = re.compile(r"\b(?:decrease[sd]?|declin(?:e[sd]?|ing)|fell|fall(?:ing|s)?|drop(?:ped|s)?|down|"
                         r"loss(?:es)?|reduc(?:ed|tion)|lower|negative)\s+(?:of\s+|by\s+)?(?:about\s+|approximately\s+|"
                         r"roughly\s+|nearly\s+|~\s?)?$", re.I)
_NEG_AFTER = re.compile(r"^\s*(?:decrease|decline|drop|reduction|lower|loss)\b", re.I)
# a figure given as the size of a change or an effect ("a receivables build-up (~$2B+)", "a decline of 5%"): its
# sign is the block's to state, as for the changes between two reference figures
_SIZE_BEFORE = re.compile(r"\b(?:increase[sd]?|decrease[sd]?|declin(?:e[sd]?|ing)|growth|grew|rise|rose|drop(?:ped)?|"
                          r"fell|change[sd]?|build-?up|impact|effect)\s*\(?\s*(?:of\s+|by\s+)?(?:about\s+|"
                          r"approximately\s+|roughly\s+|nearly\s+|~\s?)?[$]?$", re.I)
# "a small decline in unit costs by 0.8%", "fell sharply by $2 billion": a fall BY a figure is a change of minus
# it (words between the fall and its "by", no figure or sentence end among them)
_NEG_BY = re.compile(r"\b(?:decrease[sd]?|declin(?:e[sd]?|ing)|fell|fall(?:ing|s)?|drop(?:ped|s)?|lower(?:ed)?|"
                     r"reduc(?:ed|tion)|contract(?:ed|ion))\b[^.;:\d%$]{0,60}?\bby\s+(?:about\s+|approximately\s+|"
                     r"roughly\s+|nearly\s+|~\s?)?[$]?$", re.I)
# a change of a percentage written in points ("-1.74 percentage points"): a percent
_POINTS = re.compile(r"(?<!\s)\s*(?:percentage\s+points?|pp\b|ppts?\b|%\s*pts?\b)", re.I)
# an integer with a scale letter glued and no currency sign ("3M"): a name, not an amount ("$3M" is one)
_GLUED_SCALE = re.compile(r"^\d+\s?[MBK]$")
# "$3B+", "10+": at least the figure (a "+" not starting an addition)
_AT_LEAST = re.compile(r"^\+(?!\s*[$(]?\d)")
_RESULT = re.compile(r"[=≈]\s*[~$]*\s*$")
_OPERATOR = re.compile(r"^\s*[/+×*÷−-]\s*[$(]?\d")
# an operand of a formula the text writes: followed by an operator or "=" ("4,280 / 2,000 = 2.14")
_OPERAND = re.compile(r"^\s*(?:\)\s*)?(?:[/+×*÷−=≈-]|x\s)\s*(?:[~$(]\s*)?\d")
# a period's length ("the 12 months ended", "52-week period ending"): no figure
_PERIOD_LENGTH = re.compile(r"^[\s-]*(?:months?|weeks?)\s+(?:period\s+)?end(?:ed|ing)\b", re.I)
_YES_NO = re.compile(r"^\W*(yes|no)\b", re.I)
_NOT_APPLICABLE = re.compile(r"\bnot\s+(?:a\s+)?(?:meaningful|relevant|applicable|useful|appropriate|"
                             r"well[- ]defined)\b|\bdoes\s+not\s+apply\b|\bis\s+undefined\b|"
                             r"\bnot\s+measured\s+(?:through|by|with|using|on)\b", re.I)
# a reference saying the documents do not hold the answer: an out-of-scope question
_OUT_OF_SCOPE = re.compile(r"^\W*(?:not\s+(?:found|disclosed|stated|available|reported)|no\s+such)\b", re.I)
# a block saying the sources do not state what was asked (whatever its kind)
_HEDGE = re.compile(r"\bnot\s+(?:stated|computed|determined|given)\b|\b(?:do|does)\s+not\s+(?:state|say|give)\b|"
                    r"\bclosest\s+passage\b|\bcannot\s+be\s+(?:computed|determined)\b", re.I)


def figures(text: str, *, scale: float | None = None) -> list[dict]:
    """The figures of ``text``: ``{"text", "value", "unit", "scale", "negative", "result"}``.

    ``unit`` is ``"percent"`` or ``"amount"``; ``scale`` the multiplier a scale word gives (``scale``,
    the question's unit, for an amount without one; None: unknown); ``result``: written after ``=`` or
    ``≈``. Years, days of the month, a period's length ("12 months ended"), a list's markers ("(1) ..., (2) ..."),
    references and figures glued to letters are left out.

    >>> [(f["value"], f["unit"], f["negative"]) for f in figures("In FY2022 (Note 7) margin fell 5.2% to $1.2 billion")]
    [(5.2, 'percent', True), (1.2, 'amount', False)]
    """
    masked = mask_references(text)
    out = []
    for n in numbers_with_values(masked):
        plain = n["decimals"] == 0 and not (n["percent"] or n["currency"] or n["scale"] or n["multiple"])
        if plain and 1900 <= n["value"] <= 2100 and "," not in n["text"]:
            continue  # a year
        a, b = n["span"]
        if re.search(r"[A-Za-z]-$", masked[max(0, a - 2):a]) or (_GLUED_SCALE.match(n["text"]) and not n["currency"]):
            continue  # "COVID-19", a name like "3M": glued to letters, no figure
        if plain and _PERIOD_LENGTH.match(masked[b:]):
            continue  # "the 12 months ended January 28, 2023": a period, like a year
        if plain and re.fullmatch(r"\(\d{1,2}\)", n["text"].strip()) and re.match(r"\s+[A-Za-z]", masked[b:]) and \
                any(f"({int(n['value']) + d})" in masked for d in (-1, 1)):
            continue  # "(1) Current Health and (2) Two Peaks": a list's markers, not minus one
        by = bool(_NEG_BY.search(masked[max(0, a - 90):a]))
        neg = n["negative"] or by or bool(_NEG_BEFORE.search(masked[max(0, a - 40):a])) or bool(_NEG_AFTER.match(masked[b:]))
        if masked[max(0, a - 1):a] == "+":
            neg = False
        unit = "percent" if n["percent"] or _POINTS.match(masked[b:]) else "amount"
        sc = n["scale"] if n["scale"] else (scale if unit == "amount" else None)
        out.append({"text": n["text"], "value": n["value"], "decimals": n["decimals"], "unit": unit, "scale": sc,
                    "negative": neg, "size": not by and bool(_SIZE_BEFORE.search(masked[max(0, a - 40):a])),
                    "at_least": bool(_AT_LEAST.match(masked[b:])),
                    "result": bool(_RESULT.search(masked[max(0, a - 5):a])) and not _OPERATOR.match(masked[b:]),
                    "operand": bool(_OPERAND.match(masked[b:])), "span": (a, b)})
    return out


def yes_no(text: str) -> str | None:
    """``"yes"`` or ``"no"`` when ``text`` begins with it ("Yes, ...", "No."), else None.

    >>> yes_no("No, it did not."), yes_no("Not found: ..."), yes_no("Revenue grew")
    ('no', None, None)
    """
    m = _YES_NO.match(text)
    return m.group(1).casefold() if m else None


def not_applicable(reference: str) -> bool:
    """Whether a reference answer says the measure does not apply ("gross margin is not a relevant metric")."""
    return bool(_NOT_APPLICABLE.search(reference))


def _scales(f: dict) -> list[float]:
    """The multipliers ``f`` may be written at: its scale, or every scale when it has none (a percent: 1)."""
    return [1.0] if f["unit"] == "percent" else [f["scale"]] if f["scale"] else list(_SCALES)


def _values(f: dict) -> list[float]:
    """The signed values ``f`` may stand for: at its scale, or at every scale when it has none."""
    sign = -1.0 if f["negative"] else 1.0
    return [sign * f["value"] * s for s in _scales(f)]


def _close(a: float, b: float, tolerance: float, half_unit: float = 0.0) -> bool:
    if (a < 0) != (b < 0) and a != 0 and b != 0:
        return False
    if abs(a - b) <= half_unit:
        return True
    if a == 0 or b == 0:
        return abs(a - b) < 1e-12
    return abs(a - b) / abs(b) <= tolerance


def _at_least(g: float, lower: float, written: float) -> bool:
    """``g`` is at least ``lower`` and of the order of the figure written (under ten times it): "$3B+" is
    "$3 billion or somewhat more", not any larger amount."""
    return lower <= g < 10 * written


def _agree(got: dict, want: dict, tolerance: float) -> bool:
    """Same unit, same sign, values within ``tolerance`` of each other or rounding to ``want`` at the
    precision it is written ("~2.4x" is any of 2.35-2.45), at some scale where one is unknown. A figure
    ``want`` gives as the size of a change agrees in size; one written "X+" takes any value from X (at its
    precision) up to under ten times X."""
    if got["unit"] != want["unit"]:
        return False
    if want.get("size"):
        got, want = dict(got, negative=False), dict(want, negative=False)
    sign = -1.0 if want["negative"] else 1.0
    step = 0.5 * 10 ** -want["decimals"] if "decimals" in want else 0.0
    if want.get("at_least"):
        return any((g < 0) == (sign < 0) and _at_least(abs(g), (want["value"] - step) * s, want["value"] * s)
                   for g in _values(got) for s in _scales(want))
    return any(_close(g, sign * want["value"] * s, tolerance, step * s * (1 + 1e-9))
               for g in _values(got) for s in _scales(want))


def _changes(figs: list[dict]) -> list[dict]:
    """The changes between two figures of one unit and of one order (neither over ten times the other): the
    difference (for percents, in points) and, for amounts, the percent change. Two amounts are read at their scales when both have one, else as
    written (two numbers of one table); a difference keeps the scale known, if any."""
    out = []
    for a, b in permutations(figs, 2):
        if a["unit"] != b["unit"]:
            continue
        both = a["unit"] == "amount" and a["scale"] and b["scale"]
        va, vb = (_values(a)[0], _values(b)[0]) if both else \
            ((-1 if a["negative"] else 1) * a["value"], (-1 if b["negative"] else 1) * b["value"])
        if va and vb and max(abs(va), abs(vb)) > 10 * min(abs(va), abs(vb)):
            continue  # a ratio and one of its inputs, say: no change between them
        diff = va - vb
        scale = 1.0 if both else (a["scale"] or b["scale"])
        out.append({"unit": a["unit"], "value": abs(diff), "negative": diff < 0, "scale": scale})
        if a["unit"] == "amount" and vb:
            pct = diff / abs(vb) * 100
            out.append({"unit": "percent", "value": abs(pct), "negative": pct < 0, "scale": None})
    return out


def _matches_change(got: dict, changes: list[dict], tolerance: float) -> bool:
    """A change agrees in size; its sign is the block's to state ("declined 18%" or "18%")."""
    g = dict(got, negative=False)
    return any(_agree(g, dict(c, negative=False), tolerance) for c in changes)


def out_of_scope(reference: str, qtype: str = "") -> bool:
    """Whether a reference answer says the documents do not hold the answer ("Not found: ...", "Not disclosed"),
    or the question's type is ``out_of_scope``.

    >>> out_of_scope("Not found: the filing covers FY2022 only."), out_of_scope("1.57 (9,981 / 6,369)")
    (True, False)
    """
    return qtype == "out_of_scope" or bool(_OUT_OF_SCOPE.match(reference))


def hedged(text: str, kind: str) -> bool:
    """Whether a block hedges: its kind is ``closest`` or ``inputs``, or its text says the sources do not state
    what was asked ("not stated directly", "the closest passage", "not computed here")."""
    return kind in HEDGED_KINDS or bool(_HEDGE.search(text))


def states_fact(text: str, fact: str) -> bool:
    """Whether ``text`` states a key fact: at least three quarters of the fact's content words (stemmed) occur in
    it.

    >>> states_fact("Sales rose on higher pricing and a favorable mix.", "favorable product mix")
    False
    >>> states_fact("Sales rose on higher pricing and favorable product mix.", "favorable product mix")
    True
    """
    want = set(stems(fact))
    return bool(want) and len(want & set(stems(text))) >= 0.75 * len(want)


def _facts_stated(text: str, facts) -> bool:
    """At least half of ``facts`` (rounded up) are stated in ``text``."""
    facts = [f for f in facts or () if str(f).strip()]
    return bool(facts) and sum(states_fact(text, f) for f in facts) * 2 >= len(facts)


def _echo(f: dict, asked: list[dict]) -> bool:
    """A block figure that only repeats a figure of the question ("the 3 segments", "a 5-year term")."""
    return any(q["unit"] == f["unit"] and q["value"] == f["value"] for q in asked)


def _answer_figures(got: list[dict], text: str) -> list[dict]:
    """The block's answer figure: its first figure that is no operand of a formula it writes ("4,280 / 2,000 =
    2.14": 2.14), with a restatement of it in brackets right after it ("0.813 (81.3%)")."""
    first = next((i for i, g in enumerate(got) if not g["operand"]), len(got) - 1)
    if first < 0:
        return []
    out = [got[first]]
    if first + 1 < len(got):
        a, b = got[first], got[first + 1]
        between = text[a["span"][1]:b["span"][0]]
        factor = 100.0 if (a["unit"], b["unit"]) == ("amount", "percent") else 1.0
        if re.fullmatch(r"\s*\(\s*", between) and _close(b["value"], a["value"] * factor, 0.005):
            out.append(b)
    return out


def judge_block(text: str, kind: str, reference: str, question: str = "", *, qtype: str = "", key_facts=(),
                tolerance: float = 0.01) -> dict:
    """Judge an answer block (``text``, ``kind``) against the ``reference`` answer (see the module docstring).

    Args:
        text, kind: the block's text and kind (:data:`ppkit.answer.block.KINDS`).
        reference: the reference answer; its first figure (or a formula's result) is the answer figure.
        question: the question (a figure of the block that only repeats one of the question's is no answer; "in
            USD millions" sets the scale of the reference's bare amounts).
        qtype: the question's type when the set gives one (``out_of_scope``, ``narrative``, ``which`` ...).
        key_facts: short phrases a correct answer states (narrative, which, yes/no); a block stating at least half
            of them answers a question whose reference has no figure.
        tolerance: the relative tolerance of a figure (1%).

    Returns ``{"verdict", "reason", "false_abstention", "hedged", "expected", "stated", "matched"}``: ``expected``
    the reference's answer figures' texts, ``stated`` the block's figures' texts (echoes of the question left
    out), ``matched`` the block figure that made it correct or partial (or None).

    >>> judge_block("1.57 (quick assets 9,981 / current liabilities 6,369)", "computed", "1.57")["verdict"]
    'correct'
    >>> judge_block("Quick assets were 9,981; the ratio is 1.57.", "computed", "1.57")["verdict"]
    'missing'
    >>> judge_block("Not stated directly; the closest passage: the ratio was 1.57.", "closest", "1.57")["verdict"]
    'partial'
    """
    m = _Q_SCALE.search(question)
    ref = figures(reference, scale=_SCALE_OF[m.group(1).casefold()] if m else None)
    asked = figures(question)
    got = [g for g in figures(text) if not _echo(g, asked)] if kind != "not_found" else []
    # the reference's first figure answers, unless it is an operand of the formula the reference shows first
    answers = ref[:1] if ref and not ref[0]["operand"] else [f for f in ref if f["result"]] or ref[:1]
    changes = _changes(ref)
    ref_yn = yes_no(reference)
    block_yn = yes_no(text) if kind == "yes_no" else None
    scope = out_of_scope(reference, qtype)
    na = not scope and not_applicable(reference)
    judged = bool(ref or ref_yn or na or key_facts)
    hedge = kind != "not_found" and hedged(text, kind)
    out = {"verdict": "", "reason": "", "false_abstention": kind == "not_found" and not scope and
           (judged or bool(reference.strip())), "hedged": hedge,
           "expected": [f["text"] for f in answers], "stated": [f["text"] for f in got], "matched": None}

    def verdict(v: str, why: str, matched: dict | None = None) -> dict:
        return {**out, "verdict": v, "reason": why, "matched": matched["text"] if matched else None}

    def agrees(g: dict, figs: list[dict]) -> bool:
        return any(_agree(g, f, tolerance) for f in figs) or _matches_change(g, changes, tolerance)

    if scope:  # the documents do not hold it: only "not found" is right
        if kind == "not_found":
            return verdict("correct", "the reference says not found; so does the block")
        if hedge or kind == "not_meaningful":
            return verdict("missing", "the reference says not found; the block hedges and states no answer")
        return verdict("wrong", "the reference says not found; the block states an answer")
    if kind == "not_found":
        return verdict("abstained" if judged else "unjudged", "the block says not found")
    if not judged:  # whatever the block says: which questions are judged depends on the reference alone
        return verdict("unjudged", "the reference has no figure, no yes or no and no key facts")
    hit = next((g for g in got if any(_agree(g, a, tolerance) for a in answers)), None) or \
        next((g for g in got if _matches_change(g, changes, tolerance)), None)
    facts = _facts_stated(text, key_facts)
    if hedge:  # never correct, never wrong
        if hit is not None or facts:
            return verdict("partial", "the block hedges but holds the reference's answer", hit)
        return verdict("missing", "the block hedges and does not hold the reference's answer")
    if na:
        if kind == "not_meaningful":
            return verdict("correct", "the reference says the measure does not apply; so does the block")
        if got:
            return verdict("wrong", "the reference says the measure does not apply; the block states a figure")
        return verdict("missing", "the reference says the measure does not apply; the block does not say so")
    if kind == "not_meaningful":
        return verdict("wrong", "the block says the measure does not apply; the reference answers it")
    if ref_yn:  # yes or no is read only from a yes_no block
        if block_yn is None:
            if got and not any(agrees(g, ref) for g in got):
                return verdict("wrong", "no figure of the block agrees with any figure or change of the reference")
            return verdict("missing", "the reference answers yes or no; the block is no yes_no block")
        if block_yn != ref_yn:
            return verdict("wrong", f"the block says {block_yn}, the reference {ref_yn}")
        if got and ref and not any(agrees(g, ref) for g in got):
            return verdict("wrong", "the yes or no agrees but no figure of the block agrees with the reference's")
        return verdict("correct", f"the block says {block_yn}, as the reference does")
    firsts = _answer_figures(got, mask_references(text))
    first = next((f for f in firsts if any(_agree(f, a, tolerance) for a in answers) or
                  _matches_change(f, changes, tolerance)), None)
    if first is not None:
        return verdict("correct", "the block's first figure is the reference's answer figure", first)
    if got and ref and not any(agrees(g, ref) for g in got):
        return verdict("wrong", "no figure of the block agrees with any figure or change of the reference")
    if facts and not (ref and firsts and not any(agrees(f, ref) for f in firsts)):
        return verdict("correct", "the block states the reference's key facts", hit)
    if hit is not None:
        return verdict("missing", "the reference's answer figure is in the block but not its first figure", hit)
    if got and ref:
        return verdict("missing", "the block states only the reference's inputs, not its answer figure")
    return verdict("missing", "the block states neither the answer figure nor the key facts")


def summarize(rows: list[dict]) -> dict:
    """Counts and rates of judged rows (each with ``verdict``, ``false_abstention``, ``block_chars`` and
    ``answer_chars``; ``hedged``, ``scope`` and ``confidence`` where known): ``{"n", "judged", <verdict>: count,
    "correct_rate", "wrong_rate", "partial_rate", "hedged", "hedged_rate", "false_abstentions",
    "false_abstention_rate", "block_chars_median", "answer_chars_mean"}``. Rates over the judged rows;
    ``hedged_rate`` over the judged questions the documents answer (not out of scope); false abstentions over the
    rows the documents answer."""
    n = len(rows)
    counts = {v: sum(1 for r in rows if r["verdict"] == v) for v in VERDICTS}
    judged = n - counts["unjudged"]
    answerable = [r for r in rows if r["verdict"] != "unjudged" and not r.get("scope")]
    hedges = sum(1 for r in answerable if r.get("hedged"))
    fa = sum(1 for r in rows if r["false_abstention"])
    blocks = sorted(r["block_chars"] for r in rows)
    median = (blocks[(n - 1) // 2] + blocks[n // 2]) / 2 if n else None

    def rate(x: int, d: int):
        return x / d if d else None

    return {"n": n, "judged": judged, **counts,
            "correct_rate": rate(counts["correct"], judged), "wrong_rate": rate(counts["wrong"], judged),
            "partial_rate": rate(counts["partial"], judged), "hedged": hedges,
            "hedged_rate": rate(hedges, len(answerable)),
            "false_abstentions": fa, "false_abstention_rate": rate(fa, n - sum(1 for r in rows if r.get("scope"))),
            "block_chars_median": median,
            "answer_chars_mean": sum(r["answer_chars"] for r in rows) / n if n else None}


def confidence_bins(rows: list[dict], edges=(0.0, 0.2, 0.4, 0.6, 0.8, 1.0)) -> list[dict]:
    """The share correct by the block's ``confidence``: ``[{"bin": "0.6-0.8", "n", "correct", "share"}]`` over the
    judged rows that carry a confidence (none: an empty list)."""
    rows = [r for r in rows if r.get("confidence") is not None and r["verdict"] != "unjudged"]
    out = []
    for lo, hi in zip(edges, edges[1:]):
        inside = [r for r in rows if lo <= r["confidence"] < hi or (hi == edges[-1] and r["confidence"] == hi)]
        if inside:
            c = sum(1 for r in inside if r["verdict"] == "correct")
            out.append({"bin": f"{lo:.1f}-{hi:.1f}", "n": len(inside), "correct": c, "share": c / len(inside)})
    return out
