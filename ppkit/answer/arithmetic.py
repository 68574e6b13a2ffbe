"""The answer's own arithmetic, recomputed: the formulas it shows and the changes it states.

An answer can quote every figure right and still compute wrong (the reference's k=3 slip: a quick
ratio of 1.78 for 1.57). Two places where an answer commits to a computation are read:

* a **shown formula**: ``$10,811 - $5,207 + $251 = $5,855 million``, ``($6,176 / $10,482) ≈ 58.9%``:
  the expression before ``=`` / ``≈`` is evaluated, and the number after it must be its value at the
  precision written (a percent may be the ratio or the ratio × 100);
* a **stated change**: ``decreased 10% (from $6.887 billion to $6.201 billion)``, ``grew 28% ($9,895
  million vs. $7,750 million)``: one percent, a word of rise or fall and two amounts paired by
  from/to, vs. or compared in one sentence: the percent must be |a - b| / base × 100, the base being
  the smaller amount for a rise and the larger for a fall (the word fixes the direction, so the order
  the amounts are written in does not matter).

Operands are intervals (± half a unit of their last digit written), so an answer that rounds its
inputs is never flagged for it. This module recomputes; looking the numbers up in the cited text is
:mod:`ppkit.answer.verify`'s job.
"""

from __future__ import annotations

import re

__all__ = ["tolerance", "clause_span", "evaluate", "shown_formula", "stated_change", "agrees"]

_SCALE_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "mn": 1e6, "bn": 1e9, "m": 1e6, "b": 1e9, "k": 1e3}
_TOKEN = re.compile(
    r"\s*(?:(?P<num>\$?\s?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?:\s?(?P<pct>%)|\s?(?P<scale>thousand|million|billion"
    r"|bn|mn|[MBK])\b)?|(?P<op>[-+−–*×x÷/()]))", re.I)
# the longest run of formula characters that ends where the "=" is
_EXPR_TAIL = re.compile(r"(?:[\s$()\d.,%+\-−–×*/÷]|\b(?:thousand|million|billion|bn|mn|[MBK])\b|\sx\s)+$", re.I)
_EQUALS = re.compile(r"(?:=|≈|~|\bapprox(?:imately|\.)?)\s*$", re.I)
_OPERATOR_NEXT = re.compile(r"[\s_]*(?:[/×*÷+]|[-−–]\s*[$(]?\d)")
_LONE_BRACKET = re.compile(r"\(\s*\$?\s?\d[\d,]*(?:\.\d+)?\s*\)")
_RISE = re.compile(r"\b(?:increas\w*|gr[eo]w\w*|growth|rose|rise[sn]?|up|higher|gain\w*)\b", re.I)
_FALL = re.compile(r"\b(?:decreas\w*|declin\w*|fell|fall\w*|down|lower|drop\w*|reduc\w*)\b", re.I)
_PAIR = re.compile(r"\b(?:to|vs|versus|compared|against|from)\b", re.I)


# a full stop or semicolon ending a sentence ("vs. $42.380 billion", "approx. 24.7%", "U.S. government" go on)
_STOP = re.compile(r"(?<!\bvs)(?<!\bapprox)(?<!\bU\.S)(?<!\be\.g)(?<!\bi\.e)(?<!\bNo)[.;](?= )", re.I)


def tolerance(decimals: int) -> float:
    """Half a unit of the last digit written: ``5.36`` stands for [5.355, 5.365]."""
    return 0.5 * 10 ** (-decimals) + 1e-9


def clause_span(line: str, span: tuple[int, int]) -> tuple[int, int]:
    """Where the sentence of ``line`` around ``span`` starts and ends (bounded by ". ", "; " or the line's ends)."""
    stops = [m.start() for m in _STOP.finditer(line)]
    a = max((i for i in stops if i < span[0]), default=-1)
    b = min((i for i in stops if i >= span[1]), default=len(line))
    return a + 1, b


def _interval(raw: str) -> tuple[float, float]:
    digits = raw.replace("$", "").replace(",", "").strip()
    v = float(digits)
    t = tolerance(len(digits.split(".")[1]) if "." in digits else 0)
    return v - t, v + t


def _tokens(expr: str) -> list | None:
    """Numbers as ``(lo, hi, scale)`` intervals and operators as strings; None when ``expr`` is not a formula."""
    out, pos = [], 0
    while pos < len(expr.rstrip()):
        m = _TOKEN.match(expr, pos)
        if not m or m.end() == pos:
            return None
        if m.group("num"):
            raw = m.group("num")
            # a bare integer is a constant of the formula ("/ 2", "× 100"), exact; a figure is as precise as written
            lo, hi = (float(raw),) * 2 if raw.isdigit() and not m.group("scale") else _interval(raw)
            out.append((lo, hi, _SCALE_WORDS.get((m.group("scale") or "").lower())))
        else:
            op = m.group("op").replace("×", "*").replace("x", "*").replace("X", "*").replace("÷", "/")
            out.append("-" if op in "−–" else op)
        pos = m.end()
    return out


def _apply(op: str, a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float] | None:
    if op == "+":
        return a[0] + b[0], a[1] + b[1]
    if op == "-":
        return a[0] - b[1], a[1] - b[0]
    if op == "/":
        if b[0] <= 0 <= b[1]:
            return None
        b = (1 / b[1], 1 / b[0])
    ends = [x * y for x in a for y in b]
    return min(ends), max(ends)


def evaluate(expr: str) -> tuple[float, float] | None:
    """The interval of values of an arithmetic expression over written numbers (None: not one).

    Numbers with different scale words are brought to one scale; parentheses group (a bracketed
    negative ``(607)`` reads as 607: the answer's sign is not compared).

    >>> lo, hi = evaluate("$5,855 / $10,811")
    >>> round(lo, 4), round(hi, 4)
    (0.5415, 0.5416)
    """
    toks = _tokens(expr)
    if not toks or sum(isinstance(t, tuple) for t in toks) < 2 or not any(t in ("+", "-", "*", "/") for t in toks):
        return None
    scales = {t[2] for t in toks if isinstance(t, tuple)}
    if len(scales) > 1:  # "$1.2 billion - $350 million": bring both to units
        toks = [(t[0] * (t[2] or 1), t[1] * (t[2] or 1), None) if isinstance(t, tuple) else t for t in toks]
    pos = 0

    def factor():
        nonlocal pos
        if pos >= len(toks):
            raise ValueError
        t = toks[pos]
        pos += 1
        if t == "-":
            v = factor()
            return None if v is None else (-v[1], -v[0])
        if t == "(":
            v = expr_()
            if pos >= len(toks) or toks[pos] != ")":
                raise ValueError
            pos += 1
            return v
        if isinstance(t, tuple):
            return t[0], t[1]
        raise ValueError

    def binary(sub, ops):
        nonlocal pos
        v = sub()
        while v is not None and pos < len(toks) and toks[pos] in ops:
            op = toks[pos]
            pos += 1
            w = sub()
            v = None if w is None else _apply(op, v, w)
        return v

    def term():
        return binary(factor, ("*", "/"))

    def expr_():
        return binary(term, ("+", "-"))

    try:
        v = expr_()
    except ValueError:
        return None
    return v if pos == len(toks) else None


def agrees(n: dict, interval: tuple[float, float]) -> bool:
    """Is the number ``n`` (from :func:`ppkit.answer.verify.numbers_with_values`) a value of ``interval``
    at the precision written? Sign is not compared; a percent may be the ratio itself or × 100."""
    t = tolerance(n["decimals"])
    lo, hi = interval
    ranges = [(lo, hi), (-hi, -lo)]
    if n["percent"]:
        ranges += [(lo * 100, hi * 100), (-hi * 100, -lo * 100)]
    return any(a - t <= n["value"] <= b + t for a, b in ranges)


def shown_formula(line: str, span: tuple[int, int]) -> tuple[str, tuple[float, float]] | None:
    """The formula ``line`` equates to the number at ``span`` (``"a / b = 0.59"``), with its interval of values."""
    if _OPERATOR_NEXT.match(line[span[1]:].replace("**", "  ")):
        return None  # "= 5,207 / 4,639": the number starts the next expression, it is not a result
    head = re.sub(r"[*_]", " ", line[: span[0]])  # bold and italics, offsets kept
    eq = _EQUALS.search(head.rstrip(" ($"))
    if not eq:
        return None
    tail = _EXPR_TAIL.search(head[: eq.start()])
    if not tail:
        return None
    expr = tail.group(0).strip()
    while expr and (expr[0] in "+-−–*×/÷)" or expr.count("(") > expr.count(")")) and expr[0] != "$" \
            and not expr[0].isdigit():
        expr = expr[1:].lstrip()  # a leading operator or an unbalanced bracket belongs to the prose
    if _LONE_BRACKET.search(expr):
        return None  # "1,264 - (607)": a bracket round one number may be a negative, the sign is unknown
    value = evaluate(expr)
    return (expr, value) if value else None


def _amount(n: dict) -> bool:
    plain_year = n["decimals"] == 0 and 1900 <= n["value"] <= 2100 and not (n["currency"] or n["scale"])
    return not (n["percent"] or n["multiple"] or plain_year)


def stated_change(line: str, claim: dict, numbers: list[dict]) -> tuple[str, list[tuple[float, float]]] | None:
    """The change a percent states between two amounts of its sentence, as a formula and the interval(s)
    it may take (two when the sentence says neither rise nor fall clearly); None when the sentence is not
    of that form.

    ``claim`` and ``numbers`` (the line's other numbers) are from
    :func:`ppkit.answer.verify.numbers_with_values`, with their ``span`` in ``line``.
    """
    if not claim["percent"]:
        return None
    a0, b0 = clause_span(line, claim["span"])
    inside = [n for n in numbers if a0 <= n["span"][0] < b0]
    if sum(n["percent"] for n in inside) != 1:
        return None
    amounts = [n for n in inside if _amount(n)]
    if len(amounts) != 2:
        return None
    x, y = sorted(amounts, key=lambda n: n["span"][0])
    between = line[x["span"][1]: y["span"][0]]
    before = line[a0: x["span"][0]]
    if len(between) > 60 or not (_PAIR.search(between) or re.search(r"\bfrom\b", before, re.I)):
        return None
    if bool(x["scale"]) != bool(y["scale"]) or x["currency"] != y["currency"]:
        return None
    sentence = line[a0:b0]
    rise, fall = bool(_RISE.search(sentence)), bool(_FALL.search(sentence))
    if not (rise or fall):
        return None
    ix, iy = [(n["value"] - tolerance(n["decimals"]), n["value"] + tolerance(n["decimals"])) for n in (x, y)]
    if x["scale"] != y["scale"]:
        ix, iy = tuple(v * x["scale"] for v in ix), tuple(v * y["scale"] for v in iy)
    diff = _apply("-", ix, iy)
    diff = (0.0 if diff[0] <= 0 <= diff[1] else min(abs(diff[0]), abs(diff[1])), max(abs(diff[0]), abs(diff[1])))
    small, large = sorted([ix, iy], key=lambda i: i[0])
    out, formulas = [], []
    for base, on, word in ((small, rise, "the smaller"), (large, fall, "the larger")):
        if on:
            q = _apply("/", diff, base)
            if q:
                out.append((q[0] * 100, q[1] * 100))
                formulas.append(word)
    if not out:
        return None
    return f"|{x['text']} - {y['text']}| / {' or '.join(formulas)} × 100", out
