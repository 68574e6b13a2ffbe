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

__all__ = ["Mention", "mentions", "read_measure", "share_phrases", "defined_measure", "glossary_names", "expand", "amount_measure", "growth_measure", "share_measure"]

# the words of a share: "X as a percentage of Y" (part first); "the proportion of Y (that) X (is, came from, ...)"
# (whole first, then the parts); "the ratio (proportion) of X to Y" (X over Y)
_SHARE = re.compile(r"\bas\s+an?\s+(?:percent(?:age)?|share|proportion|portion|fraction|%)\s+of\b|\bas\s+an?\s*%\s*of\b",
                    re.I)
_SHARE_OF = re.compile(r"\b(?:percent(?:age)?|proportion|share|portion|fraction|%)\s+of\b", re.I)
_RATIO_OF = re.compile(r"\b(?:ratio|proportion|percent(?:age)?)\s+of\b(?P<x>(?:(?!\b(?:is|was|were|are|attributable|"
                       r"came|from|contributed|in|for)\b)[^?])*?)\bto\b", re.I)
_GROWTH_WORDS = frozenset(words("growth grow grew grown growing"))
_CHANGE_WORDS = frozenset(words("change changed increase increased decrease decreased decline declined rise rose fall "
                                "fell shrink shrank drop dropped expand expanded improve improved deteriorate"))
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
        for text in c.labels:  # a row's own name, as a question may write it ("total revenues net of ...")
            key, open_ended = phrase(text)
            if key and "*" not in key and not open_ended:
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
    if node[0] == "reported":  # the company's own row of the year before, else the general formula's
        return ("reported", node[1], _prev(node[2]), (node[3] if len(node) > 3 else 0) + 1)
    if node[0] in ("prev", "avg", "chg", "cagr", "num"):
        return node
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
    defined = defined_measure(question)
    if defined is not None:
        return defined
    amounts = [(m, x) for m, x in named if x.unit == "usd"]
    composed = _share(question, amounts) if len(amounts) >= 2 else None
    if composed is not None:
        return composed
    ops = {m.id for m in found if m.kind == "operation"}
    w = words(question, True)
    # a standard measure named wins over the amounts the question names beside it (its inputs, its context)
    first_m, first = next(((m, x) for m, x in named if x.family != "amount"), named[0])
    if _UNADJUSTED.search(question):  # the general formula, never the company's own row of the measure
        first = replace(first, formula=_general(first.formula))
    if "cagr" in ops and first.unit in ("usd", "per_share"):
        return _cagr(first) or first
    near = set(w[max(0, first_m.start - 2): first_m.start]) | set(w[first_m.end: first_m.end + 2])
    if first.unit in ("usd", "per_share") and first.family != "growth":
        if "growth" in ops or near & _GROWTH_WORDS:
            return growth_measure(first)
        if near & _CHANGE_WORDS:  # a change: in percent where the question asks a percent, else the difference
            return growth_measure(first, change=not _PERCENT.search(question))
    return first


# where a phrase of a share ends: a preposition or verb that starts what follows ("... in FY2022", "... came from")
_PHRASE_END = re.compile(r"(?<!\s)\s+(?:in|for|during|at|as of|over|of the year|that|which|was|were|is|are|came|come|comes|"
                         r"did|does|do|has|have|had|from|attributable|contributed|represented|accounted|made|generated|"
                         r"derived|compared)\b|[?,;]|$", re.I)
_PART_START = re.compile(r"\b(?:(?:is|was|were|are)\s+)?(?:came from|comes from|come from|from|attributable to|"
                         r"contributed by|represented by|accounted for by|made up (?:of|by)|generated by|derived from)\s+|"
                         r"\b(?:is|was|were|are)\s+", re.I)


def _phrase_at(text: str, i: int) -> str:
    m = _PHRASE_END.search(text, i)
    return re.sub(r"^(?:the|its|their|a|an)\s+", "", text[i: m.start() if m else len(text)].strip(), flags=re.I)


def share_phrases(question: str) -> tuple[str, str, bool] | None:
    """``(part, whole, ratio)``: the two phrases of a share or ratio question, as written ("what percentage of
    total revenue came from the Data Center segment": ``("Data Center segment", "total revenue", False)``);
    ``ratio`` when a ratio is asked ("the ratio of X to Y"). None when the question asks no share.

    >>> share_phrases("What percentage of total revenue in FY2022 came from the Data Center segment?")
    ('Data Center segment', 'total revenue', False)
    >>> share_phrases("Compute the ratio of non-interest revenue to total revenues for 2022")
    ('non-interest revenue', 'total revenues', True)
    >>> share_phrases("Capex as a % of operating cash flow in 2021?")
    ('Capex', 'operating cash flow', False)
    """
    m = _RATIO_OF.search(question)
    if m is not None:
        part = re.sub(r"^(?:the|its|their|a|an)\s+", "", m.group("x").strip(), flags=re.I)
        whole = _phrase_at(question, m.end())
        ratio = not re.search(r"\bproportion\b|\bpercent", m.group(0), re.I)
        return (part, whole, ratio) if part and whole else None
    m = _SHARE.search(question)
    if m is not None:
        head = re.split(r"\b(?:what|how much|how|calculate|compute|is|was|were|are)\b", question[: m.start()],
                        flags=re.I)[-1]
        part = re.sub(r"^.*?['’]s\s+", "", head.strip(" ,"))
        whole = _phrase_at(question, m.end())
        return (part.strip(), whole, False) if part.strip() and whole else None
    m = _SHARE_OF.search(question)
    if m is not None:
        whole = _phrase_at(question, m.end())
        p = _PART_START.search(question, m.end() + len(whole))
        part = _phrase_at(question, p.end()) if p else ""
        return (part, whole, False) if part and whole else None
    return None


def _share(question: str, amounts: list[tuple[Mention, Measure]]) -> Measure | None:
    """A share or ratio of named amounts (see :data:`_SHARE`), or None; never of an amount over itself."""
    def cut(i: int) -> int:
        return len(words(question[:i], True))

    m = _RATIO_OF.search(question)
    if m is not None:
        mid = cut(m.end("x"))
        x = [a for mm, a in amounts if cut(m.start()) <= mm.start and mm.end <= mid]
        y = [a for mm, a in amounts if mm.start >= mid]
        if x and y and _sum(x).formula != y[0].formula:
            part = _sum(x)
            pct = bool(re.search(r"\bproportion\b|\bpercent", m.group(0), re.I))
            s = share_measure(part, y[0])
            return s if pct else replace(s, id=s.id.replace("share:", "ratio:"), unit="ratio",
                                         formula=s.formula[1], name=f"ratio of {part.name} to {y[0].name}")
    m = _SHARE.search(question)
    if m is not None:
        before = [a for mm, a in amounts if mm.end <= cut(m.start())]
        after = [a for mm, a in amounts if mm.start >= cut(m.start())]
        if before and after and before[-1].formula != after[0].formula:
            return share_measure(before[-1], after[0])
    m = _SHARE_OF.search(question)
    left = _REMAINING.search(question, m.end()) if m is not None else None
    if left is not None:  # "what percentage of Y remained after X": (Y - X) / Y
        y = [a for mm, a in amounts if cut(m.end()) <= mm.start < cut(left.start())]
        x = [a for mm, a in amounts if mm.start >= cut(left.end())]
        if x and y and _sum(x).formula != y[0].formula:
            rest = Measure(f"{y[0].id}-{_sum(x).id}", f"{y[0].name} less {_sum(x).name}",
                           f"{y[0].expression} - ({_sum(x).expression})", ("-", y[0].formula, _sum(x).formula), "usd",
                           "amount", f"{y[0].name} - {_sum(x).name}", _COMPOSED)
            return share_measure(rest, y[0])
    m = _SHARE_OF.search(question)
    if m is not None:
        after = [a for mm, a in amounts if mm.start >= cut(m.end())]
        if len(after) >= 2 and _sum(after[1:]).formula != after[0].formula:
            return share_measure(_sum(after[1:]), after[0])
    return None


_REMAINING = re.compile(r"\b(?:remain\w*|was left|left over|is left|left)\s+after\b", re.I)
# a formula a question writes in words after "defined as", "calculated as", "computed as"
_DEFINED = re.compile(r"\b(?:defined|calculated|computed|measured)\s+as\b(?P<body>[^?;]+)", re.I)
# read at a word (the filler below takes the spaces between): no leading run of spaces to try from each of its spaces
_OPERATORS = [(re.compile(r"(?:divided\s+by|over|/)\s*", re.I), "/"),
              (re.compile(r"(?:minus|less|-)\s+", re.I), "-"), (re.compile(r"(?:plus|\+)\s*", re.I), "+"),
              (re.compile(r"(?:times|multiplied\s+by|\*)\s*", re.I), "*"),
              (re.compile(r"\(\s*"), "("), (re.compile(r"\)\s*"), ")")]
_FILLER = re.compile(r"\s+|(?:the|a|an|of|total|its|their)\b|[,:]", re.I)
_BODY_END = re.compile(r"(?<!\s)\s+(?:for|in|during|at|as of)\s+(?!\()|\.\s|\.$", re.I)


def defined_measure(question: str) -> Measure | None:
    """A measure the question defines in words over amounts the catalogue knows ("defined as capex divided by
    (operating cash flow minus dividends)": ``+``, ``-``, ``*``, ``/`` and brackets); None when any word of the
    definition is neither such an amount, an operator nor a filler word.

    >>> defined_measure("What is the cash cover, defined as cash and cash equivalents divided by total debt?").unit
    'ratio'
    """
    m = _DEFINED.search(question)
    if m is None:
        return None
    body = m.group("body")
    end = _BODY_END.search(body)
    body = body[: end.start()] if end else body
    toks: list = []
    pos = 0
    while pos < len(body):
        found = None
        for n in range(min(len(body) - pos, 60), 1, -1):  # the longest catalogue name starting here
            piece = body[pos: pos + n]
            if not re.match(r"[\w&]", piece) or not re.search(r"[\w&]$", piece) or \
                    (pos + n < len(body) and re.match(r"\w", body[pos + n])):
                continue
            hit = _phrases().get(phrase(piece)[0])
            if hit and hit[0] in ("measure", "concept"):
                meas = _as_measure(Mention((0, 0, *hit)))
                if meas is not None and meas.unit == "usd":
                    found = (n, meas)
                    break
        if found is not None:
            toks.append(found[1])
            pos += found[0]
            continue
        for rx, op in _OPERATORS:
            mm = rx.match(body, pos)
            if mm and mm.end() > pos:
                toks.append(op)
                pos = mm.end()
                break
        else:
            mm = _FILLER.match(body, pos)
            if not mm or mm.end() == pos:
                return None
            pos = mm.end()
    node = _parse(toks)
    if node is None or node[0] not in ("/", "+", "-", "*"):
        return None
    percent = bool(re.search(r"\b(?:rate|percent(?:age)?|share|proportion|margin)\b|%", question, re.I))
    name = re.sub(r"^.*?\b(?:the|a|an)\s+", "", question[: m.start()].strip(" ,"), flags=re.I) or "measure"
    if node[0] == "/":
        return Measure(f"defined:{name}", name, body.strip(), ("pct", node) if percent else node,
                       "percent" if percent else "ratio", "profitability", body.strip(), _COMPOSED)
    return Measure(f"defined:{name}", name, body.strip(), node, "usd", "amount", body.strip(), _COMPOSED)


def _parse(toks: list):
    """The formula node of operand measures and operators, ``*`` and ``/`` before ``+`` and ``-``; None when
    they do not make one."""
    pos = 0

    def atom():
        nonlocal pos
        t = toks[pos] if pos < len(toks) else None
        pos += 1
        if t == "(":
            v = expr()
            if pos >= len(toks) or toks[pos] != ")":
                raise ValueError
            pos += 1
            return v
        if isinstance(t, Measure):
            return t.formula
        raise ValueError

    def chain(sub, ops):
        nonlocal pos
        v = sub()
        while pos < len(toks) and toks[pos] in ops:
            op = toks[pos]
            pos += 1
            v = (op, v, sub())
        return v

    def expr():
        return chain(lambda: chain(atom, ("*", "/")), ("+", "-"))

    try:
        node = expr()
    except (ValueError, IndexError):
        return None
    return node if pos == len(toks) else None


def _sum(parts: list[Measure]) -> Measure:
    """One amount measure that is the sum of ``parts`` (itself when there is one)."""
    if len(parts) == 1:
        return parts[0]
    node = parts[0].formula
    for p in parts[1:]:
        node = ("+", node, p.formula)
    return Measure("+".join(p.id for p in parts), " + ".join(p.name for p in parts),
                   " + ".join(p.expression for p in parts), node, "usd", "amount",
                   " + ".join(p.name for p in parts), _COMPOSED)


_UNADJUSTED = re.compile(r"\bunadjusted\b", re.I)


def _general(node):
    """``node`` with each measure a company reports itself (``reported``) replaced by its general formula."""
    if node[0] == "reported":
        return _general(node[2])
    if node[0] in ("item", "prev", "avg", "chg", "num", "cagr"):
        return node
    return (node[0], *(_general(n) for n in node[1:]))


def glossary_names(question: str) -> str:
    """The formal names of the everyday terms a question uses (the glossary's: "top line" -> "revenue",
    "buybacks" -> "share repurchases"), for the search; empty when it uses none.

    >>> glossary_names("How did the top line and buybacks develop?")
    'revenue share repurchases'
    """
    cat = catalogue()
    out = []
    for m in mentions(question):
        term = next((t for t in cat.glossary if getattr(t, m.kind, None) == m.id and m.kind in ("measure", "concept")
                     and words(t.term, True) == words(question, True)[m.start:m.end]), None)
        if term is not None:
            out.append(cat.measures[m.id].name if m.kind == "measure" else cat.concepts[m.id].name)
    return " ".join(dict.fromkeys(out))


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
