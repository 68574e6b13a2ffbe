"""A question read for the measure it asks, through the catalogue: names, synonyms, everyday terms, operations.

:func:`mentions` finds the catalogue's phrases in a question (measure names and synonyms, concept names, glossary
terms), the longest where they overlap. :func:`read_measure` turns them into the one :class:`Measure` the
question asks for:

* a **share** of one named amount in another ("capex as a percentage of operating cash flow": the first amount
  over the second, in percent), read from the words "as a percent/percentage/share/proportion of" (or "%");
* a **growth** or **change** of a named amount, when a growth term (the glossary's "y/y", "year over year", or
  the words growth, grow, increase, decrease, change) is next to it: the catalogue's growth measure of it where
  there is one, else one composed the same way; a compounded growth (the glossary's "CAGR") over the years named;
* else the first standard measure named (a ratio, margin, days...), else the first amount (a measure or concept).

:func:`expand` gives retrieval the words a question means but may not use: the input rows of the measure it asks
(a quick ratio reads cash, short-term investments, receivables and current liabilities) and the plain words of
the everyday terms it uses. Nothing here reads a document.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache

from .catalogue import Measure, Source, catalogue, formula_concepts
from .labels import find_phrases, phrase, words

__all__ = ["Mention", "mentions", "read_measure", "expand", "amount_measure", "growth_measure", "share_measure"]

# the words of a share: "X as a percentage of Y", "X as a % of Y"
_SHARE = re.compile(r"\bas\s+an?\s+(?:percent(?:age)?|share|proportion|portion|fraction|%)\s+of\b|\bas\s+an?\s*%\s*of\b",
                    re.I)
_GROWTH_WORDS = frozenset(words("growth grow grew grown growing"))
_CHANGE_WORDS = frozenset(words("change changed increase increased decrease decreased decline declined rise rose fall "
                                "fell"))
_PERCENT = re.compile(r"%|\bpercent(?:age)?\b|\brate\b", re.I)
_COMPOSED = Source("ppkit: composed from the catalogue's measures and concepts by the question's operation words")


class Mention(tuple):
    """``(start, end, kind, id)``: a catalogue phrase found at word positions ``start``..``end`` of a question;
    ``kind`` is ``measure``, ``concept``, ``operation`` or ``words``."""

    __slots__ = ()

    start = property(lambda self: self[0])
    end = property(lambda self: self[1])
    kind = property(lambda self: self[2])
    id = property(lambda self: self[3])


@lru_cache(maxsize=1)
def _phrases() -> dict[tuple[str, ...], tuple[str, str]]:
    """``{words: (kind, id)}`` of every name the catalogue knows: measures (name, synonyms), concepts (name),
    glossary terms. A measure's name wins over a concept's of the same words."""
    cat = catalogue()
    out: dict[tuple[str, ...], tuple[str, str]] = {}
    for c in cat.concepts.values():
        for text in (c.name, c.id.replace("_", " ")):
            key = phrase(text)[0]
            if key and "*" not in key:
                out.setdefault(key, ("concept", c.id))
    for t in cat.glossary:
        key = phrase(t.term)[0]
        kind = next(k for k in ("measure", "concept", "operation", "words") if getattr(t, k))
        out[key] = (kind, getattr(t, kind))
    for m in cat.measures.values():
        for text in m.patterns:
            key = phrase(text)[0]
            if key and "*" not in key:
                out[key] = ("measure", m.id)
    return out


def mentions(question: str) -> list[Mention]:
    """The catalogue's phrases in ``question``, longest first where they overlap, in order.

    >>> [(m.kind, m.id) for m in mentions("What was Acme's quick ratio and its y/y revenue growth?")]
    [('measure', 'quick_ratio'), ('operation', 'growth'), ('measure', 'revenue_growth')]
    """
    return [Mention((a, b, *v)) for a, b, v in find_phrases(question, _phrases())]


def amount_measure(concept: str) -> Measure:
    """The measure that is one concept's amount as reported: the catalogue's where it has one."""
    cat = catalogue()
    for m in cat.measures.values():
        if m.formula == ("item", concept):
            return m
    c = cat.concepts[concept]
    return Measure(concept, c.name, concept, ("item", concept), "per_share" if c.per_share else "usd", "amount",
                   c.name, c.source)


def _prev(node):
    """``node`` read the year before: each concept in the year asked becomes its previous year's."""
    if node[0] == "item":
        return ("prev", node[1])
    if node[0] in ("prev", "avg", "chg", "cagr", "num", "reported"):
        return node if node[0] != "reported" else _prev(node[2])
    return (node[0], *(_prev(n) for n in node[1:]))


def growth_measure(base: Measure, *, change: bool = False) -> Measure:
    """The growth (percent) or ``change`` (difference) of an amount measure: the catalogue's growth measure of it
    where there is one, else composed (``(x - prev(x)) / prev(x)``).

    >>> growth_measure(amount_measure("revenue")).id, growth_measure(amount_measure("sga")).expression
    ('revenue_growth', '(sga - prev(sga)) / prev(sga)')
    """
    cat = catalogue()
    expr = base.expression if base.formula[0] == "item" else f"({base.expression})"
    before = _prev(base.formula)
    if change:
        return Measure(f"change:{base.id}", f"change in {base.name}", f"{expr} - prev({expr})",
                       ("-", base.formula, before), base.unit, "growth", f"{base.name} this year - the year before",
                       _COMPOSED)
    node = ("pct", ("/", ("-", base.formula, before), before))
    for m in cat.measures.values():
        if m.family == "growth" and m.formula == node:
            return m
    return Measure(f"growth:{base.id}", f"{base.name} growth", f"({expr} - prev({expr})) / prev({expr})", node,
                   "percent", "growth", f"({base.name} this year - the year before) / the year before x 100", _COMPOSED)


def share_measure(part: Measure, whole: Measure) -> Measure:
    """``part`` as a percentage of ``whole`` (two amount measures)."""
    return Measure(f"share:{part.id}/{whole.id}", f"{part.name} as a share of {whole.name}",
                   f"{part.expression} / {whole.expression}", ("pct", ("/", part.formula, whole.formula)), "percent",
                   "profitability", f"{part.name} / {whole.name} x 100", _COMPOSED)


def _cagr(base: Measure) -> Measure | None:
    concepts = formula_concepts(base.formula)
    if base.formula[0] != "item" or len(concepts) != 1:
        return None
    c = concepts[0]
    return Measure(f"cagr:{c}", f"{base.name} CAGR", f"cagr({c})", ("cagr", c), "percent", "growth",
                   f"({base.name} in the last year / in the first year) ^ (1 / years between them) - 1, x 100",
                   _COMPOSED)


def _as_measure(m: Mention) -> Measure | None:
    cat = catalogue()
    if m.kind == "measure":
        return cat.measures[m.id]
    if m.kind == "concept":
        return amount_measure(m.id)
    return None


def read_measure(question: str) -> Measure | None:
    """The measure ``question`` asks for, or None (see the module docstring).

    >>> read_measure("What is Acme's acid-test ratio for FY2023?").id
    'quick_ratio'
    >>> read_measure("Capex as a percentage of operating cash flow in 2022?").name
    'capital expenditures as a share of cash from operations'
    >>> read_measure("How much did SG&A grow y/y?").name
    'SG&A expense growth'
    """
    found = mentions(question)
    named = [(m, _as_measure(m)) for m in found]
    named = [(m, x) for m, x in named if x is not None]
    if not named:
        return None
    share = _SHARE.search(question)
    if share is not None and len(named) >= 2:
        cut = len(words(question[: share.start()], True))
        before = [x for m, x in named if m.end <= cut and x.unit == "usd"]
        after = [x for m, x in named if m.start >= cut and x.unit == "usd"]
        if before and after:
            return share_measure(before[-1], after[0])
    ops = {m.id for m in found if m.kind == "operation"}
    w = words(question, True)
    # a standard measure named wins over the amounts the question names beside it (its inputs, its context)
    first_m, first = next(((m, x) for m, x in named if x.family != "amount"), named[0])
    if "cagr" in ops and first.unit in ("usd", "per_share"):
        return _cagr(first) or first
    near = set(w[max(0, first_m.start - 2): first_m.start]) | set(w[first_m.end: first_m.end + 2])
    if first.unit in ("usd", "per_share") and first.family != "growth":
        if "growth" in ops or near & _GROWTH_WORDS:
            return growth_measure(first)
        if near & _CHANGE_WORDS:  # a change: in percent where the question asks a percent, else the difference
            return growth_measure(first, change=not _PERCENT.search(question))
    return first


def expand(question: str) -> str:
    """Words a question means without using them: its measure's input rows (their concepts' names) and the plain
    words of its everyday terms, for the search (empty when there are none).

    >>> expand("What is the acid-test ratio?")
    'cash and cash equivalents short-term investments accounts receivable, net total current liabilities'
    """
    cat = catalogue()
    out: list[str] = []
    measure = read_measure(question)
    if measure is not None and measure.family != "amount":
        for c in dict.fromkeys(formula_concepts(measure.formula)):
            out.append(cat.concepts[c].name)
    for m in mentions(question):
        if m.kind == "words":
            out.append(m.id)
        elif m.kind == "measure" and cat.measures[m.id].family == "amount":
            out.append(cat.measures[m.id].name)
    return " ".join(dict.fromkeys(out))


def with_days(measure: Measure, days: int) -> Measure:
    """``measure`` with its year of 365 days replaced by ``days`` (a question stating 360)."""
    def swap(node):
        if node[0] == "num" and node[1] == 365.0:
            return ("num", float(days))
        if node[0] in ("item", "prev", "avg", "chg", "cagr", "num"):
            return node
        if node[0] == "reported":
            return (node[0], node[1], swap(node[2]))
        return (node[0], *(swap(n) for n in node[1:]))
    return replace(measure, formula=swap(measure.formula))
