"""The quantity a question asks, computed from the table rows of the retrieved sections.

A question asking for a share, a ratio or a change of amounts that are not the statement line items of
:mod:`ppkit.answer.metrics` (a segment's share of revenue, a share of the growth, one charge's part of a total,
the growth of two line items compared) is answered here from the rows found, or not at all:

* **What is asked** (:func:`parse_quantity`): "percentage / proportion / share of WHOLE [came from | attributable
  to | due to | from] PART", "ratio (or proportion) of PART to WHOLE", "PART as a share of WHOLE" (a share of the
  *growth* when the whole says growth or increase), and "growth (change) of A [vs B]", "did A grow faster than
  B", "compare A and B growth". General wording only, never a particular question's.
* **The rows** (:func:`compute_quantity`): each named amount is the table row whose label holds the name's words
  (a total preferred, the part and whole from one table preferred), read in the column whose header names the
  asked year (and the year before, for a change). A row without a dated column is never read.
* **The block**: the computed figure first (three significant digits), then its formula over the cited rows'
  values, kind ``computed``; every figure is in, or computed from, the cited lines.

:func:`not_computed` words the honest alternative when nothing can be computed: the inputs found, and that the
asked figure is not computed (kind ``inputs``, which a judge counts as missing, never as wrong).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.text import stems
from ..retrieval.types import Section
from .asked import Asked
from .block import MAX_CHARS, AnswerBlock, cite_line
from .metrics import cell_value
from .passages import Passage, section_passages

__all__ = ["QuantityAsk", "parse_quantity", "compute_quantity", "not_computed", "table_total"]

_LEAD = re.compile(r"^\W*(?:(?:for|in|at|as of|based on)\b[^,?]{0,80},+\s*)+", re.I)
_PERIOD = re.compile(r"\b(?:in|for|during|from|of|over|as of|between|at)?\s*(?:the\s+)?(?:fiscal\s+(?:year\s+)?|fy\s?)?"
                     r"(?:19|20)?\d{2}\b(?:\s*(?:to|and|through|-|–|vs\.?)\s*(?:fiscal\s+(?:year\s+)?|fy\s?)?"
                     r"(?:19|20)\d{2}\b)?|\b(?:year[- ]over[- ]year|yoy)\b", re.I)
_PART_OF = re.compile(r"\b(?:percent(?:age)?|proportion|share|portion|fraction|how much)\s+of\s+(?P<whole>.+?)\s+"
                      r"(?:(?:is|was|were|are|has been)\s+)?(?:generated\s+(?:by|from)|attributable\s+to|"
                      r"contributed\s+by|accounted\s+for\s+by|due\s+to|related\s+to|c[oa]me\s+from|comes\s+from|"
                      r"from)\s+(?P<part>.+)$", re.I)
_PART_TO = re.compile(r"\b(?:ratio|proportion|percentage|share)\s+of\s+(?P<part>.+?)\s+to\s+(?P<whole>.+)$", re.I)
_PART_AS = re.compile(r"^(?:\w+\s+){0,3}?(?:is|was|of|the)?\s*(?P<part>.+?)\s+as\s+an?\s+(?:percent(?:age)?|share|"
                      r"proportion|%)\s+of\s+(?P<whole>.+)$", re.I)
_GROWTH_OF = re.compile(r"\b(?:growth|change|increase|decrease|decline)(?:\s+rate)?\s+(?:in|of)\s+(?P<a>.+?)"
                        r"(?:\s+(?:vs\.?|versus|compared\s+(?:to|with)|relative\s+to|against|and)\s+(?P<b>.+))?$", re.I)
_FASTER = re.compile(r"\b(?:did|has|have|was|were)\s+(?P<a>.+?)\s+(?:grow|increase|rise|decline|decrease|fall)\w*\s+"
                     r"(?:faster|more|slower|less)\s+than\s+(?P<b>.+)$", re.I)
_COMPARE = re.compile(r"\bcompare\s+(?:the\s+)?(?P<a>.+?)\s+(?:and|vs\.?|versus|with|to)\s+(?P<b>.+?)\s+"
                      r"(?:growth|changes?|increases?)\b", re.I)
_DID_GROW = re.compile(r"\b(?:did|has|have)\s+(?P<a>.+?)\s+(?:grow|increase|decline|decrease|change)\b", re.I)
_GROWTH_WORD = re.compile(r"\s*\b(?:growth|increase|change|rise)\b\s*", re.I)
_NOISE = frozenset(stems("the a an its their our company company's total amount value segment segments combined "
                         "top two three fiscal year annual reported consolidated figure figures"))
_TOTAL = frozenset(stems("total"))


@dataclass(frozen=True)
class QuantityAsk:
    """A quantity a question asks: ``op`` ("share", "ratio" or "change"), the named ``parts`` (summed) and
    ``whole`` of a share or ratio, ``growth`` (a share of the change, not of the level), or the ``subjects``
    whose change is asked (one or two)."""

    op: str
    parts: tuple[str, ...] = ()
    whole: str = ""
    growth: bool = False
    subjects: tuple[str, ...] = ()


def _clean(phrase: str) -> str:
    p = re.sub(r"\(([^)]*)\)", lambda m: m.group(1) if "+" in m.group(1) else " ", phrase)
    p = _PERIOD.sub(" ", p)
    p = re.split(r"[?;.]|,\s*(?:and|what|how|which|is|does|did|then)\b|\s+and\s+(?:compare|what|how|interpret|"
                 r"assess|explain|justify|discuss)\b|\s+(?:in|for)\s+(?:the\s+)?(?:same|each|that)\b", p)[0]
    return re.sub(r"^(?:the|its|their|our)\s+", "", re.sub(r"\s+", " ", p).strip(" ,"), flags=re.I)


def _split_parts(part: str) -> tuple[str, ...]:
    """"Data Center + Client" or "goodwill and intangible assets" named inside brackets -> each name."""
    pieces = [x.strip() for x in re.split(r"\s*\+\s*", part) if x.strip()]
    if len(pieces) > 1:
        return tuple(re.sub(r"^.*?\b(?:segments?\s+combined|combined)\s*", "", x).strip() or x for x in pieces)
    return (part,)


def parse_quantity(question: str, asked: Asked) -> QuantityAsk | None:
    """The share, ratio or change ``question`` asks for over named amounts, or None.

    >>> parse_quantity("What percentage of total revenue in FY2022 came from the Data Center segment?",
    ...                Asked("share", unit="percent"))
    QuantityAsk(op='share', parts=('Data Center segment',), whole='total revenue', growth=False, subjects=())
    >>> parse_quantity("What is the ratio of share repurchases to dividends in FY2022?", Asked("other", unit="ratio")).op
    'ratio'
    """
    q = _LEAD.sub("", question.strip())
    q = re.sub(r"\(([^)]*\+[^)]*)\)", r"[\1]", q)  # "(Data Center + Client)": the parts, kept
    bracket = re.search(r"\[([^\]]+)\]", q)
    q_plain = re.sub(r"\s+", " ", _PERIOD.sub(" ", re.sub(r"\[[^\]]*\]", " ", q)))
    if asked.unit in ("percent", "ratio") or asked.kind == "share":
        for rx in (_PART_OF, _PART_AS, _PART_TO):
            m = rx.search(q_plain)
            if not m:
                continue
            whole, part = _clean(m.group("whole")), _clean(m.group("part"))
            growth = bool(_GROWTH_WORD.search(whole))
            whole = _GROWTH_WORD.sub(" ", whole).strip()
            part = _GROWTH_WORD.sub(" ", part).strip()
            parts = _split_parts(bracket.group(1)) if bracket else (part,)
            if whole and all(parts):
                op = "ratio" if rx is _PART_TO and asked.unit == "ratio" else "share"
                return QuantityAsk(op, parts, whole, growth)
    if asked.kind in ("change", "share") or asked.unit == "percent":
        for rx in (_FASTER, _COMPARE, _GROWTH_OF, _DID_GROW):
            m = rx.search(q_plain)
            if m:
                subs = tuple(s for s in (_clean(_GROWTH_WORD.sub(" ", m.group(g) or "")) for g in ("a", "b")
                                         if g in m.groupdict()) if s)
                if subs:
                    return QuantityAsk("change", subjects=subs)
    return None


# -- the rows


def _year_col(p: Passage, year: int) -> int | None:
    """The index of ``p``'s value column whose header names ``year`` alone (not "2022 vs. 2021", not a %)."""
    for i, h in enumerate(p.header):
        ys = re.findall(r"(?<!\d)((?:19|20)\d\d)(?!\d)", h)
        if ys == [str(year)] and not re.search(r"\bvs\b|%|change|compared", h, re.I):
            return i
    return None


def _undated(p: Passage) -> bool:
    """A table whose columns name no year (charges by cost line, with a Total column)."""
    return not any(re.search(r"(?<!\d)(?:19|20)\d\d(?!\d)", h) for h in p.header)


def _total_col(p: Passage, year: int | None) -> int | None:
    """An undated table's one "Total" column, when the period asked (if any) is the one its caption (title, or the
    sentence introducing it: "charges taken in 2022 ... are as follows:") names."""
    if not _undated(p) or year is not None and str(year) not in p.caption:
        return None
    cols = [i for i, h in enumerate(p.header) if re.match(r"\s*total\b", h, re.I)]
    return cols[0] if len(cols) == 1 else None


def _value(p: Passage, year: int | None) -> float | None:
    """Row ``p``'s value in ``year``'s column, or (an undated table) in its Total column; None: none."""
    i = _year_col(p, year) if year is not None else None
    if i is None:
        i = _total_col(p, year)
    return cell_value(p.values[i]) if i is not None and i < len(p.values) else None


def _match(name: str, p: Passage) -> float:
    """How well row ``p``'s label names ``name``: the share of the name's words in the label, less a little per
    extra label word; a total preferred when the name says total or names one word."""
    want = set(stems(name)) - _NOISE
    have = set(stems(p.label))
    if not want:
        return 0.0
    cover = len(want & have) / len(want)
    if cover < 1.0 and not (len(want) >= 3 and cover >= 0.66):
        return 0.0
    extra = len(have - want - _TOTAL)
    total = bool(have & _TOTAL) and (bool(set(stems(name)) & _TOTAL) or len(want) == 1)
    first = [t for t in stems(p.row_label or p.label) if t not in _TOTAL][:1]
    starts = bool(first) and first[0] in want  # "Total revenues net of ..." names revenues; "Total non-interest ..." not
    return cover + (0.3 if starts else 0.0) - 0.08 * extra + (0.1 if total else 0.0)


def _best(name: str, rows: list[Passage], years: tuple[int, ...], near: Passage | None = None) -> Passage | None:
    scored = []
    for p in rows:
        if any(_value(p, y) is None for y in years):
            continue
        s = _match(name, p)
        if s <= 0:
            continue
        if near is not None and (p.section.section_id, p.header_line) == (near.section.section_id, near.header_line):
            s += 0.3  # the part and the whole from one table
        scored.append((s, -p.section.rank, -p.line, p))
    return max(scored, key=lambda x: x[:3])[3] if scored else None


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.2f}".rstrip("0").rstrip(".") if v % 1 else f"{v:,.0f}"


def _pct(v: float) -> str:
    return f"{v:.1f}%" if abs(v) >= 10 else f"{v:.2f}%"


def _plain(p: Passage) -> str:
    """A row's name for the block: its own label, with the group above it in brackets unless it is a total
    ("Data Center (net revenue)", "Total net revenue")."""
    own = p.row_label or p.label
    group = p.label[: -len(own)].rstrip(", ") if p.row_label and p.label.endswith(own) else ""
    if group and re.fullmatch(r"total:?", own, re.I):
        return f"total {group}"  # a bare "Total" under its table's title: "total Russia-Ukraine conflict charges"
    return f"{own} ({group.casefold()})" if group and not own.casefold().startswith("total") else own


def _scale(rows: list[Passage]) -> str:
    units = {p.units for p in rows}
    return f", $ {units.pop()}" if len(units) == 1 and "" not in units else ""


def _cites(rows: list[Passage]):
    return tuple(dict.fromkeys(cite_line(p.section, ln) for p in rows for ln in p.lines()))


def _clip(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1].rstrip() + "…"


def _latest(rows: list[Passage], asked_years: tuple[int, ...]) -> int | None:
    """The year asked (the latest named), else the latest year every row has a column for."""
    if asked_years:
        return max(asked_years)
    common = None
    for p in rows:
        ys = {int(y) for h in p.header for y in re.findall(r"(?<!\d)((?:19|20)\d\d)(?!\d)", h)}
        common = ys if common is None else common & ys
    return max(common) if common else None


def compute_quantity(question: str, asked: Asked, sections: list[Section]) -> tuple[AnswerBlock, list[Passage]] | None:
    """The answer block of the share, ratio or change ``question`` asks (:func:`parse_quantity`) computed from
    the table rows of ``sections``, with the rows it reads; None when it is not asked or a row is not found.

    >>> compute_quantity("What percentage of total revenue came from Europe in 2022?", asked, sections)  # doctest: +SKIP
    (AnswerBlock(text='Europe was 25.0% of total revenue in 2022 (300 / 1,200, $ millions)', kind='computed', ...), [...])
    """
    ask = parse_quantity(question, asked)
    if ask is None:
        return None
    rows = [p for s in sections for p in section_passages(s) if p.kind == "row" and any(p.header)]
    if not rows:
        return None
    if ask.op == "change":
        return _change(ask, asked, rows)
    first = _best(ask.parts[0], rows, ())
    whole0 = _best(ask.whole, rows, (), near=first)
    year = _latest([r for r in (first, whole0) if r is not None], asked.years)
    if year is None and (ask.growth or not all(r is not None and _undated(r) for r in (first, whole0))):
        return None  # no year: only an undated table (its Total column) is read, never for a change
    years = (year, year - 1) if ask.growth else (year,)
    parts = []
    for name in ask.parts:
        p = _best(name, rows, years, near=parts[0] if parts else None)
        if p is None:
            return None
        parts.append(p)
    whole = _best(ask.whole, rows, years, near=parts[0])
    if whole is None or whole in parts or len(set(parts)) < len(parts):
        return None
    if len({p.units for p in parts + [whole]}) > 1:
        return None  # amounts of different scales are never divided
    if ask.growth:
        num = [(_value(p, year), _value(p, year - 1)) for p in parts]
        den = (_value(whole, year), _value(whole, year - 1))
        top = sum(a - b for a, b in num)
        bottom = den[0] - den[1]
        # each difference written out, so every step is a two-operand operation the verifier re-derives
        steps = [f"{_fmt(a)} - {_fmt(b)} = {_fmt(a - b)}" for a, b in num + [den]]
        expr = "; ".join(steps) + f"; {_fmt(top)} / {_fmt(bottom)}"
        what = f"of the change in {_plain(whole)} from {year - 1} to {year}"
    else:
        top = sum(_value(p, year) for p in parts)
        bottom = _value(whole, year)
        expr = f"{' + '.join(_fmt(_value(p, year)) for p in parts)} / {_fmt(bottom)}"
        if len(parts) > 1:
            expr = f"({expr.split(' / ')[0]}) / {_fmt(bottom)}"
        what = f"of {_plain(whole)}" + (f" in {year}" if year is not None else "")
    if not bottom:
        return None
    value = top / bottom
    if ask.op == "share" and not ask.growth and not (0 <= value <= 1.0 + 1e-9):
        return None  # a part larger than its whole: the rows are not a part and its whole
    names = " + ".join(_plain(p) for p in parts)
    if ask.op == "ratio":
        head = f"The ratio of {names} to {_plain(whole)}{f' in {year}' if year is not None else ''} was {value:.3g} ({_pct(100 * value)})"
    else:
        head = f"{names} was {_pct(100 * value)} {what}"
    used = parts + [whole]
    i = _total_col(whole, year) if year is None or _year_col(whole, year) is None else None
    col = whole.header[i] if i is not None and not ask.growth else ""  # an undated table: the column read
    text = f"{head} ({expr}{_scale(used)}{f', column {col}' if col else ''})"
    return AnswerBlock(_clip(text), "computed", _cites(used)), used


def _change(ask: QuantityAsk, asked: Asked, rows: list[Passage]):
    found = []
    for name in ask.subjects:
        p = _best(name, rows, (), near=found[0] if found else None)
        if p is None:
            return None
        found.append(p)
    year = _latest(found, asked.years)
    if year is None or any(_value(p, y) is None for p in found for y in (year, year - 1)):
        return None
    parts = []
    for p in found:
        new, old = _value(p, year), _value(p, year - 1)
        if old is None or new is None:
            return None
        if old > 0 and new >= 0 or old < 0 and new <= 0:
            pct = (new - old) / abs(old) * 100
            verb = "increased" if pct >= 0 else "decreased"
            parts.append(f"{_plain(p)} {verb} {_pct(abs(pct))} from {year - 1} to {year} ({_fmt(old)} to {_fmt(new)})")
        else:
            parts.append(f"{_plain(p)} went from {_fmt(old)} in {year - 1} to {_fmt(new)} in {year} (a change of sign: no "
                         f"percent change)")
    text = "; ".join(parts) + (_scale(found).replace(", ", " (", 1) + ")" if _scale(found) else "")
    return AnswerBlock(_clip(text), "computed", _cites(found)), found


def table_total(intro: Passage, asked: Asked) -> Passage | None:
    """The total row of the table a sentence introduces ("A summary of pre-tax charges taken in 2022 ... is as
    follows:"), for an amount asked: the first row named "Total..." of the section's first table after the
    sentence, with a value in the asked (or latest) year's column or, for an undated table whose caption names
    the asked year, in its Total column; None when there is none."""
    if intro.kind != "sentence" or not intro.text.rstrip().endswith(":") or asked.kind not in ("amount", "count"):
        return None
    rows = [p for p in section_passages(intro.section) if p.kind == "row" and p.header_line > intro.line_end]
    if not rows:
        return None
    first = min(p.header_line for p in rows)
    totals = [p for p in rows if p.header_line == first and re.match(r"\s*total\b", p.row_label or p.label, re.I)]
    if not totals:
        return None
    year = _latest(totals[:1], asked.years)
    return totals[0] if _value(totals[0], year) is not None else None


def not_computed(asked: Asked, shown: str, passage: Passage | None, cites) -> AnswerBlock:
    """The honest block when the asked share, ratio or change is not computed: what the sources show, and that
    the asked figure is not (kind ``inputs``)."""
    what = {"ratio": "ratio", "percent": "percentage"}.get(asked.unit, "change" if asked.kind == "change" else "figure")
    return AnswerBlock(_clip(f"The {what} asked is not computed here; the sources show: {shown}"), "inputs", cites)


_PCT = re.compile(r"\d\s?%|\bpercent\b", re.I)
_RATIO_FIG = re.compile(r"\d\s?x\b|\d-to-\d|\bratio\b", re.I)
_YEAR = re.compile(r"(?<![\d,.$])(?:19|20)\d{2}(?![\d,])")


def not_of_asked_kind(p: Passage, asked: Asked) -> bool:
    """Whether passage ``p``'s figures are another quantity than the one asked: no percent where a percentage
    (share, margin, growth rate) is asked, no ratio where a ratio is, or, for a row, no column of the asked year
    (nor, in an undated table, a Total column under a caption naming it).
    A yes/no question and a question asking no figure take any passage."""
    if asked.yes_no or asked.kind in ("drivers", "date", "name", "list", "other"):
        return False
    text = p.text if p.kind != "row" else " ".join(p.values + p.header)
    if asked.unit == "percent" and asked.kind in ("share", "change") and not _PCT.search(text):
        return True
    if asked.unit == "ratio" and not (_RATIO_FIG.search(text) or _PCT.search(text)):
        return True
    if p.kind == "row" and asked.years and any(p.header):
        return all(_year_col(p, y) is None and _total_col(p, y) is None for y in asked.years)
    return False
