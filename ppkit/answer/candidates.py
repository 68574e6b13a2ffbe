"""Answer candidates: every figure, passage and computed value of the retrieved sections that could answer.

:func:`candidates` reads the retrieved sections once for an :class:`ppkit.answer.question.Asked` and returns
:class:`Candidate` objects, each with what the selector (:mod:`ppkit.answer.select`) scores it on:

* **cell**: a table cell's value, with its row label (and the group label above it), its column (the period it
  gives), the table's units and caption; a Markdown table (:func:`ppkit.answer.passages.section_passages`) or a
  statement the PDF text layer ran into lines (:func:`ppkit.answer.statement_rows.statement_rows`);
* **clause**: a figure of a sentence, with the clause around it (the words between the punctuation before and
  after it) and the sentence;
* **computed**: the catalogue measure asked, evaluated over the retrieved primary statements
  (:func:`ppkit.answer.metrics.compute_metric`), every input cited; or why it does not apply (**not_meaningful**),
  or what it needs that the statements do not show (**missing**: never an answer, said in the hedge);
* **which**: the row of a table with the highest or lowest value in the period asked, among rows of one kind;
* **yes_no**: the answer to a yes/no question from the measure's direction or threshold (computed), or from a
  sentence stating the event asked, its negation read;
* **passage**: a sentence (or two) for a question asking for words, not a figure.

A candidate's ``unit`` is what its figure is (``amount``, ``percent``, ``ratio``, ``days``, ``per_share``,
``count``, ``date``; ``""`` for words), ``text`` is the answer block it would make (the figure first), and
``context``/``wide`` the words the focus is matched against (its row label or clause / its whole row, header,
caption and breadcrumb). This module scores nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..core.ids import breadcrumb_titles
from ..core.text import clip
from ..finance.catalogue import catalogue, formula_concepts
from ..finance.labels import label_match, words
from ..retrieval.metric_statements import statement_kinds
from ..retrieval.types import Section
from .block import BlockCitation, cite_line
from .metrics import MetricResult, compute_metric, interim
from .passages import Passage, section_passages
from .question import Asked
from .statement_rows import cell_value, rows_of, scale_of
from .verify import mask_references, number_form, numbers_with_values

__all__ = ["Candidate", "candidates", "figure_text", "KINDS"]

KINDS = ("cell", "clause", "computed", "not_meaningful", "which", "yes_no", "passage", "missing")
_YEAR = re.compile(r"(?<![\d,.$])((?:19|20)\d{2})(?![\d,])")
_FY2 = re.compile(r"\bfy\s?'?(\d{2})\b", re.I)
_DATE = re.compile(r"\b(?:january|february|march|april|may|june|july|august|september|october|november|december)"
                   r"\s+\d{1,2},?\s+(?:19|20)\d{2}\b", re.I)
_COUNT_AFTER = re.compile(r"^\s+(?:[a-z][a-z-]+\s+){0,2}?[a-z][a-z-]+", re.I)
_NEGATION = re.compile(r"\b(?:not|no|never|none|neither|nor|without)\b|n't\b", re.I)
_CLAUSE_END = re.compile(r"[;:]|,\s+(?:and|but|while|which|whereas|compared|as compared|versus|offset)\b|\.\s", re.I)
_SCALE_WORD = {1e3: "thousand", 1e6: "million", 1e9: "billion", 1e12: "trillion"}
_UNIT_SCALE = {"thousands": "thousand", "millions": "million", "billions": "billion"}
_PERCENT_HEAD = re.compile(r"%|\bpercent|\bmargin\b|\brate\b|\bchange\b", re.I)
_QUARTERLY = re.compile(r"\b(?:three|3)[\s-]+months?\b|\bquarters?\b|\bq[1-4]\b", re.I)


@dataclass(frozen=True)
class Candidate:
    """One possible answer (see the module docstring)."""

    kind: str
    text: str  # the answer block it makes
    unit: str
    section: Section
    lines: tuple[int, ...]  # the source lines it cites (a row's header line first)
    context: str = ""  # its own words: a row's label, a figure's clause, a passage
    wide: str = ""  # its wider words: the row with its header and caption, the sentence, the breadcrumb
    value: float | None = None
    year: int | None = None  # the period its figure belongs to (a column's year, the sentence's only year)
    years: tuple[int, ...] = ()  # the years written around it
    lead: bool = False  # the first figure of its sentence, or its row's first value
    label_concept: float = 0.0  # its row label names a concept of the measure asked: 1 exactly, 0.5 qualified
    cue: bool = False  # a passage that states a cause ("due to", "driven by") or a clause about the focus
    quarterly: bool = False  # its period is a quarter or part of a year ("Three Months Ended", "Q4")
    extra: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def statement(self) -> bool:
        """From a primary statement (balance sheet, income statement, cash flow statement)."""
        return bool(statement_kinds(self.section))

    @property
    def citations(self) -> tuple[BlockCitation, ...]:
        if "citations" in self.extra:
            return self.extra["citations"]
        return tuple(cite_line(self.section, ln) for ln in self.lines)


def _years_in(text: str) -> tuple[int, ...]:
    ys = [int(y) for y in _YEAR.findall(text)] + [2000 + int(y) for y in _FY2.findall(text)]
    return tuple(dict.fromkeys(ys))


def _num(v: float, decimals: int | None = None) -> str:
    if decimals is not None:
        return f"{v:,.{decimals}f}"
    if v == int(v):
        return f"{v:,.0f}"
    return f"{v:,.2f}" if abs(v) < 1000 else f"{v:,.1f}"


def figure_text(value: float, unit: str, scale: str = "", *, decimals: int | None = None) -> str:
    """A figure written with its unit: ``$1,577 million``, ``12.1%``, ``1.57``, ``42.3 days``, ``$3.25`` a share.

    >>> figure_text(1577, "amount", "million"), figure_text(12.06, "percent"), figure_text(-3.2, "amount", "billion")
    ('$1,577 million', '12.06%', '-$3.20 billion')
    >>> figure_text(2.0, "ratio"), figure_text(42.31, "days")
    ('2.00', '42.3 days')
    """
    sign = "-" if value < 0 else ""
    v = abs(value)
    if unit == "percent":
        return f"{sign}{_num(v, 2 if decimals is None else decimals)}%"
    if unit == "days":
        return f"{sign}{_num(v, 1)} days"
    if unit == "ratio":
        return f"{sign}{_num(v, 2 if decimals is None else decimals)}"
    if unit == "count":
        return f"{sign}{_num(v, decimals)}"
    if unit == "per_share":
        return f"{sign}${v:,.2f}"
    return f"{sign}${_num(v, decimals)}{' ' + scale if scale else ''}"


# ---- table cells ------------------------------------------------------------------------------------------------

def _cell_unit(cell: str, header: str, label: str, per_share: bool, units: str) -> str:
    if "%" in cell or _PERCENT_HEAD.search(header) and "%" in header or re.search(r"%|\bpercent", label, re.I):
        return "percent"
    if per_share:
        return "per_share"
    return "amount"


def _concept_fit(label: str, concepts: list[str]) -> float:
    cat = catalogue()
    best = 0.0
    for c in concepts:
        for text in cat.concepts[c].labels:
            m = label_match(label, text)
            if m == "exact":
                return 1.0
            if m == "prefix":
                best = 0.5
    return best


_UNITS_ONLY = re.compile(r"^\W*(?:\$\s*)?(?:dollars\s+|amounts\s+)?in\s+(?:millions|thousands|billions)\b[^()]*\W*$", re.I)


def _where(p: Passage) -> str:
    """Where a row stands, for the block: its table's caption, or its section's title when the caption only says
    the units."""
    cap = p.caption.strip()
    return cap if cap and not _UNITS_ONLY.match(cap) else breadcrumb_titles(p.section.breadcrumb)[-1]


def _row_cells(p: Passage, asked: Asked, concepts: list[str], sid_caption: str) -> list[Candidate]:
    out = []
    label = p.label
    fit = _concept_fit(p.row_label or label, concepts) if concepts else 0.0
    first = True
    heads = p.header or ("",) * len(p.values)
    # a row with a column of the year asked: its other years' columns are no answer (a prior-year column)
    has_year = asked.year is not None and not asked.compare and any(_years_in(h) == (asked.year,) for h in heads)
    for k, (head, cell) in enumerate(zip(heads, p.values)):
        v = cell_value(cell)
        if v is None or not re.search(r"\d", cell):
            continue
        ys = _years_in(head)
        if has_year and ys != (asked.year,):
            continue
        if not ys and len(p.values) == 1 and asked.year is None:
            ys = ()
        unit = _cell_unit(cell, head, label, p.per_share, p.units)
        if unit == "amount" and not p.units and not ys and 1900 <= v <= 2100 and "," not in cell:
            continue  # a year written in a cell
        scale = _UNIT_SCALE.get(p.units, "") if unit == "amount" else ""
        shown = figure_text(v, unit, scale, decimals=len(cell.split(".")[1].rstrip("%)").strip()) if "." in cell else 0)
        period = f", {head.strip()}" if head.strip() else ""
        where = _where(p)
        text = clip(f"{shown}: {label}{period} ({where})", 300)
        wide = " ".join([label, head, p.caption, p.header_text, sid_caption])
        out.append(Candidate("cell", text, unit, p.section, p.lines(), context=label, wide=wide, value=v,
                             year=ys[-1] if len(ys) == 1 else None, years=ys, lead=first, label_concept=fit,
                             quarterly=bool(_QUARTERLY.search(f"{head} {p.header_text} {p.caption}")),
                             extra={"scale": scale, "column": k, "header": head}))
        first = False
    return out


def _flat_cells(section: Section, asked: Asked, concepts: list[str], seen: set[int]) -> list[Candidate]:
    """Cells of a statement the PDF text layer wrote as running text (no Markdown table)."""
    out = []
    scale = _UNIT_SCALE.get(scale_of(section), "")
    for ln, cells, years in rows_of(section):
        if ln in seen or not cells or not years or len(cells) - 1 != len(years):
            continue
        label = cells[0]
        fit = _concept_fit(label, concepts) if concepts else 0.0
        for k, (y, cell) in enumerate(zip(years, cells[1:])):
            v = cell_value(cell)
            if v is None:
                continue
            unit = "percent" if "%" in cell else "amount"
            shown = figure_text(v, unit, scale if unit == "amount" else "",
                                decimals=len(cell.split(".")[1].rstrip("%)")) if "." in cell else 0)
            text = clip(f"{shown}: {label}, {y} ({breadcrumb_titles(section.breadcrumb)[-1]})", 300)
            out.append(Candidate("cell", text, unit, section, (ln,), context=label,
                                 wide=f"{label} {section.breadcrumb}", value=v, year=y, years=(y,), lead=k == 0,
                                 label_concept=fit, extra={"scale": scale, "column": k, "header": str(y)}))
    return out


# ---- sentence figures -------------------------------------------------------------------------------------------

def _clause(text: str, a: int, b: int) -> str:
    """The clause around a figure at ``a``..``b``: from the last clause break before it to the first after it."""
    starts = [m.end() for m in _CLAUSE_END.finditer(text, 0, a)]
    start = starts[-1] if starts else 0
    m = _CLAUSE_END.search(text, b)
    end = m.start() if m else len(text)
    return text[start:end].strip(" ,")


_UNIT_OF_FORM = {"percent": "percent", "multiple": "ratio", "days": "days", "money": "amount"}


def _figure_unit(n: dict, after: str) -> str:
    form = number_form(n, after)
    if form in _UNIT_OF_FORM:
        return _UNIT_OF_FORM[form]
    if n["decimals"] == 0 and _COUNT_AFTER.match(after):
        return "count"
    return "ratio" if n["decimals"] else "count"


def _sentence_figures(p: Passage) -> list[Candidate]:
    out = []
    masked = mask_references(p.text)
    first = True
    for n in numbers_with_values(masked):
        plain = n["decimals"] == 0 and not (n["percent"] or n["currency"] or n["scale"] or n["multiple"])
        if plain and (1900 <= n["value"] <= 2100 and "," not in n["text"] or n["value"] < 2):
            continue  # a year; a lone small number ("one of 1")
        a, b = n["span"]
        if re.search(r"[A-Za-z]-?$", masked[max(0, a - 1):a]):
            continue  # glued to letters: "Q3", "COVID-19"
        unit = _figure_unit(n, masked[b:b + 40])
        value = -n["value"] if n["negative"] else n["value"]
        scale = _SCALE_WORD.get(n["scale"] or 0, "")
        shown = n["text"].strip()
        if unit == "amount" and not n["currency"] and scale:
            shown = f"${shown}" if not shown.startswith("$") else shown
        clause = _clause(p.text, a, b)
        sentence = clip(p.text, 260)
        out.append(Candidate("clause", f"{shown}: \u201c{sentence}\u201d", unit, p.section, (p.line,),
                             context=clause, wide=f"{p.text} {p.section.breadcrumb}", value=value,
                             year=None, years=_years_in(clause) or _years_in(p.text), lead=first,
                             quarterly=bool(_QUARTERLY.search(p.text)),
                             extra={"scale": scale, "line_end": p.line_end, "sentence": p.text,
                                    "citations": (cite_line(p.section, p.line, p.line_end),)}))
        first = False
    return out


def _dates(p: Passage) -> list[Candidate]:
    return [Candidate("clause", f"{m.group(0)}: \u201c{clip(p.text, 260)}\u201d", "date", p.section, (p.line,),
                      context=_clause(p.text, *m.span()), wide=f"{p.text} {p.section.breadcrumb}",
                      years=_years_in(m.group(0)), lead=i == 0, extra={"line_end": p.line_end})
            for i, m in enumerate(_DATE.finditer(p.text))]


# ---- computed ---------------------------------------------------------------------------------------------------

def _computed(asked: Asked, sections: list[Section]) -> tuple[list[Candidate], MetricResult | None]:
    if asked.measure is None or asked.measure.family == "amount" and asked.type not in ("yes_no",) and \
            asked.measure.formula[0] == "item":
        return [], None
    res = compute_metric(asked.question, sections, asked.measure, years=asked.years)
    if res is None:
        return [], None
    home = next((s for s in sections if s.doc == res.doc), sections[0] if sections else None)
    if home is None:
        return [], res
    cites = _metric_citations(res, sections)
    if not res.ok and res.reason:
        text = f"Not meaningful: {res.reason}"
        return [Candidate("not_meaningful", clip(text, 300), "", home, (), context=asked.measure.name,
                          extra={"citations": cites, "metric": res})], res
    if not res.ok:  # what the measure needs that the statements do not show: for the hedge, never an answer
        missing = "; ".join(res.missing)
        return [Candidate("missing", f"the {asked.measure.name} needs {missing}, which the retrieved statements do "
                          "not show", "", home, (), context=asked.measure.name,
                          extra={"citations": cites, "metric": res})], res
    unit = {"usd": "amount", "percent": "percent", "ratio": "ratio", "days": "days", "per_share": "per_share"}.get(
        res.metric.unit, "ratio")
    scale = _UNIT_SCALE.get(res.scale, "") if unit == "amount" else ""
    shown = figure_text(res.value, unit, scale)
    if unit == "ratio" and res.metric.family in ("payout", "profitability", "cash_flow"):
        shown += f" ({res.value * 100:.1f}%)"
    inputs = res.expr or "; ".join(res.steps)
    text = clip(f"{shown}: {res.metric.name}, {res.doc} FY{res.year} = {inputs}"
                f"{' ($ ' + res.scale + ')' if res.scale and unit != 'amount' else ''}", 300)
    c = res.compare
    if asked.compare and c is not None and c.ok:  # the change asked first, then both years' values
        diff = res.value - c.value
        change = (f"{diff:+.2f} percentage points" if unit == "percent" else figure_text(diff, unit, scale))
        text = clip(f"{change}: {res.metric.name} {shown} in FY{res.year} against {figure_text(c.value, unit, scale)}"
                    f" in FY{c.year} ({res.doc}; FY{res.year} = {inputs})", 300)
    by_id = {s.section_id: s for s in sections}
    part_year = any(interim(by_id[f"{li.doc}#{li.node_id}"]) for li in res.inputs if f"{li.doc}#{li.node_id}" in by_id)
    return [Candidate("computed", text, unit, home, (), context=res.metric.name, wide=res.metric.definition,
                      value=res.value, year=res.year, years=(res.year,) if res.year else (), lead=True,
                      label_concept=1.0, quarterly=part_year, extra={"citations": cites, "metric": res})], res


def _metric_citations(res: MetricResult, sections: list[Section]) -> tuple[BlockCitation, ...]:
    by_id = {s.section_id: s for s in sections}
    out = []
    for li in res.inputs:
        s = by_id.get(f"{li.doc}#{li.node_id}")
        if s is not None:
            out.append(cite_line(s, li.line))
    return tuple(dict.fromkeys(out))


# ---- shares of table rows ---------------------------------------------------------------------------------------

_ITEMS = re.compile(r"(?<!\s)\s*(?:\+|,|&|\band\b|\bplus\b)\s*", re.I)  # from a run's first space: linear
_PART_NOISE = frozenset(words("segment segments combined top two three both total"))


def _items_of(part: str) -> list[frozenset[str]]:
    """The items a part phrase names ("goodwill and intangible assets", "(Data Center + Client)"), as stems."""
    inner = re.search(r"\(([^)]*(?:\+|,|\band\b)[^)]*)\)", part)
    text = inner.group(1) if inner else re.sub(r"\([^)]*\)", " ", part)
    items = [frozenset(w for w in words(x) if w != "|") - _PART_NOISE for x in _ITEMS.split(text) if x.strip()]
    return [i for i in items if i]


def _row_cover(want: frozenset[str], label: str) -> float:
    got = set(w for w in words(label) if w != "|")
    return len(want & got) / len(want) if want else 0.0


def _precise(want: frozenset[str], label: str) -> bool:
    """Whether a row's label is about as long as the phrase it should match: at most one word beyond it
    ("Total liabilities and equity" is no row of "total equity")."""
    got = {w for w in words(label) if w != "|"}
    return len(got - want) <= 1


def _shares(asked: Asked, rows: list[Passage]) -> list[Candidate]:
    """A share (or ratio) of rows of one table: the part's rows (each item the question names, summed) over the
    whole's row, in the column of the year asked (else the first)."""
    if asked.share is None:
        return []
    part, whole, ratio = asked.share
    items = _items_of(part)
    want = frozenset(w for w in words(whole) if w != "|")
    if not items or not want:
        return []
    out = []
    tables: dict[tuple[str, int], list[Passage]] = {}
    for p in rows:
        tables.setdefault((p.section.section_id, p.header_line), []).append(p)
    for ps in tables.values():
        wholes = sorted(((_row_cover(want, p.label), p.label.casefold().startswith("total"), p) for p in ps
                         if _precise(want, p.label)), key=lambda x: (-x[0], not x[1]))
        if not wholes or wholes[0][0] < 0.6:
            continue
        wp = wholes[0][2]
        parts = []
        for item in items:
            best = max(((_row_cover(item, p.label), p) for p in ps if p is not wp), key=lambda x: x[0], default=None)
            if best is None or best[0] < 0.6 or best[1] in parts:
                parts = []
                break
            parts.append(best[1])
        if not parts:
            continue
        header = wp.header
        cols = [k for k, h in enumerate(header) if asked.year and str(asked.year) in h] or [0]
        k = cols[0]
        vals = [cell_value(p.values[k]) if k < len(p.values) else None for p in parts]
        total = cell_value(wp.values[k]) if k < len(wp.values) else None
        if total in (None, 0) or any(v is None for v in vals) or not sum(vals):
            continue
        value = sum(vals) / total * (1 if ratio else 100)
        unit = "ratio" if ratio else "percent"
        head = header[k].strip() if k < len(header) else ""
        shown = figure_text(value, unit, decimals=2 if ratio else 1)
        names = " + ".join(f"{p.label} {_num(v)}" for p, v in zip(parts, vals))
        text = clip(f"{shown}: ({names}) / {wp.label} {_num(total)}{', ' + head if head else ''}", 300)
        out.append(Candidate("computed", text, unit, wp.section, tuple(dict.fromkeys(
            ln for p in [*parts, wp] for ln in p.lines())), context=f"{' '.join(p.label for p in parts)} {wp.label}",
            wide=f"{part} {whole} {wp.caption} {wp.section.breadcrumb}", value=value,
            year=_years_in(head)[-1] if _years_in(head) else None, years=_years_in(head), lead=True,
            label_concept=0.5, extra={"share": True}))
    return out


# ---- changes of a row, and measures of a named part (a segment) --------------------------------------------------

# a change over time asked (not two things compared): growth, a rise or fall, year over year, the prior year
_PERIOD_CHANGE = re.compile(r"\bgr[eo]w\w*|\bincreas\w*|\bdecreas\w*|\bdeclin\w*|\brise\b|\brose\b|\bfell\b|"
                            r"\bchange[sd]?\b|\b(?:prior|previous) year\b", re.I)


def _column(p: Passage, year: int | None) -> int | None:
    """The value column of ``p`` for ``year`` (its header names that year alone)."""
    for k, h in enumerate(p.header):
        if year is not None and _years_in(h) == (year,):
            return k
    return None


def _row_changes(asked: Asked, rows: list[Passage], concepts: list[str]) -> list[Candidate]:
    """The change of a row between the year asked and the year before (or the two years named): in percent for a
    percent asked, else as a difference."""
    if not (len(set(asked.years)) > 1 or _PERIOD_CHANGE.search(asked.question) or asked.growth
            or asked.measure is not None and asked.measure.family == "growth"):
        return []
    if asked.type not in ("percent", "amount", "count"):
        return []
    y1 = asked.year
    y0 = min(asked.years) if len(set(asked.years)) > 1 else (y1 - 1 if y1 else None)
    out = []
    for p in rows:
        k1, k0 = _column(p, y1), _column(p, y0)
        if k1 is None or k0 is None:
            continue
        v1, v0 = cell_value(p.values[k1]), cell_value(p.values[k0])
        if v1 is None or v0 is None or "%" in p.values[k1]:
            continue
        scale = _UNIT_SCALE.get(p.units, "")
        if asked.type == "percent":
            if v0 == 0:
                continue
            value, unit = (v1 - v0) / abs(v0) * 100, "percent"
            shown = figure_text(value, unit, decimals=1)
        else:
            value, unit = v1 - v0, "amount"
            shown = figure_text(value, unit, scale)
        text = clip(f"{shown}: {p.label} {_num(v1)} in {y1} against {_num(v0)} in {y0} ({_where(p)})", 300)
        out.append(Candidate("computed", text, unit, p.section, p.lines(), context=p.label,
                             wide=f"{p.label} {p.caption} {p.header_text} {p.section.breadcrumb}", value=value,
                             year=y1, years=(y1, y0), lead=True,
                             label_concept=_concept_fit(p.row_label or p.label, concepts) if concepts else 0.0,
                             extra={"change": True}))
    return out


def _scoped_cell(rows: list[Passage], concept: str, entity: frozenset[str], year: int | None):
    """(row, value) of ``concept`` for the part named by ``entity`` (a segment) in ``year``'s column: a row whose
    label (with its group label) names both, or names the part in a table whose caption names the concept."""
    cat = catalogue()
    c = cat.concepts[concept]
    name = frozenset(w for w in words(c.name) if w != "|")
    best = None
    for p in rows:
        here = set(words(f"{p.label} {p.caption}"))
        if not entity <= here:
            continue
        fit = _concept_fit(p.label, [concept]) or _concept_fit(re.sub(r"^.*?,\s*", "", p.label), [concept])
        if not fit and not any(label_match(p.label.split(",")[0], t) for t in c.labels) and not name <= here:
            continue
        k = _column(p, year) if year is not None else 0
        if k is None or k >= len(p.values):
            continue
        v = cell_value(p.values[k])
        if v is not None and (best is None or fit > best[2]):
            best = (p, v, fit)
    return best


def _scoped(asked: Asked, rows: list[Passage]) -> list[Candidate]:
    """A ratio or growth measure of the part the question names (a segment's operating margin): its inputs read
    from the rows that name both the part and each concept."""
    m = asked.measure
    if m is None or not asked.entity or asked.year is None:
        return []
    node = m.formula[1] if m.formula[0] == "pct" else m.formula
    pct = m.formula[0] == "pct"
    if node[0] == "/" and node[1][0] == "item" and node[2][0] == "item":
        a = _scoped_cell(rows, node[1][1], asked.entity, asked.year)
        b = _scoped_cell(rows, node[2][1], asked.entity, asked.year)
        if a is None or b is None or b[1] == 0 or a[0] is b[0]:
            return []
        value = a[1] / b[1] * (100 if pct else 1)
        parts = [(a[0], a[1]), (b[0], b[1])]
        expr = f"{a[0].label} {_num(a[1])} / {b[0].label} {_num(b[1])}"
    elif node[0] == "/" and node[1][0] == "-" and node[1][1][0] == "item" and node[2][0] == "prev":
        c = node[2][1]
        a = _scoped_cell(rows, c, asked.entity, asked.year)
        b = _scoped_cell(rows, c, asked.entity, asked.year - 1)
        if a is None or b is None or b[1] == 0:
            return []
        value = (a[1] - b[1]) / abs(b[1]) * (100 if pct else 1)
        parts = [(a[0], a[1]), (b[0], b[1])]
        expr = f"({_num(a[1])} - {_num(b[1])}) / {_num(b[1])}, {a[0].label}"
    else:
        return []
    unit = "percent" if pct else "ratio"
    shown = figure_text(value, unit, decimals=1 if pct else 2)
    text = clip(f"{shown}: {m.name} of {' '.join(sorted(asked.entity))}, {asked.year} = {expr}", 300)
    first = parts[0][0]
    return [Candidate("computed", text, unit, first.section, tuple(dict.fromkeys(ln for p, _ in parts for ln in p.lines())),
                      context=f"{m.name} {parts[0][0].label}", wide=f"{m.name} {' '.join(p.label + ' ' + p.caption for p, _ in parts)}",
                      value=value, year=asked.year, years=(asked.year,), lead=True, label_concept=1.0,
                      extra={"scoped": True})]


def _own_row(c: Candidate) -> bool:
    """Whether a computed candidate rests on a row of a measure the company reports itself."""
    res = c.extra.get("metric")
    cat = catalogue()
    return res is not None and any(cat.concepts[li.concept].statement == "reported" for li in res.inputs)


# ---- which one --------------------------------------------------------------------------------------------------

_TOTAL_ROW = re.compile(r"^\s*(?:total|worldwide|consolidated)\b", re.I)
_GREW = re.compile(r"\bgr[eo]w\w*|\bincreas\w*|\brise\b|\brose\b|\bdeclin\w*|\bdecreas\w*|\bfell\b", re.I)
# "outside the United States", "excluding Corporate", "other than X": the rows named after these are left out
_EXCEPT = re.compile(r"\b(?:outside(?:\s+of)?|excluding|except(?:\s+for)?|other\s+than|apart\s+from|besides)\s+"
                     r"(?:the\s+)?([^,?;]+)", re.I)


def _named(label: str, text: str) -> bool:
    """Whether ``text`` names a row (every content word of its label)."""
    want = {w for w in words(label) if w != "|"}
    return bool(want) and want <= set(words(text, True))


def _which(asked: Asked, rows: list[Passage]) -> list[Candidate]:
    """Per table: the row with the highest or lowest value in the period's column, or the fastest or slowest
    change from the year before when a growth is asked; the rows of a set (no totals, no statement line items);
    when the question names two or more of them, those only; rows it excludes ("outside the United States"),
    never."""
    out = []
    growth = bool(_GREW.search(asked.question)) or asked.growth
    excluded = " ".join(m.group(1) for m in _EXCEPT.finditer(asked.question))
    tables: dict[tuple[str, int], list[Passage]] = {}
    for p in rows:
        tables.setdefault((p.section.section_id, p.header_line), []).append(p)
    for (_, _), ps in tables.items():
        ps = [p for p in ps if not _TOTAL_ROW.match(p.row_label or p.label)]
        if len(ps) < 2 or sum(bool(_concept_fit(p.row_label or p.label, list(catalogue().concepts))) for p in ps) \
                * 2 > len(ps):
            continue  # rows that are a statement's line items, not the members of a set (segments, regions)
        named = [p for p in ps if _named(p.row_label or p.label, asked.question)]
        if len(named) >= 2:
            ps = named
        if excluded:
            ps = [p for p in ps if not _named(p.row_label or p.label, excluded)]
        header = ps[0].header if ps else ()
        k = _column(ps[0], asked.year) if ps and asked.year else (0 if header else None)
        if k is None and header:
            k = 0
        if k is None or len(ps) < 2:
            continue
        k0 = _column(ps[0], (asked.year or 0) - 1) if growth else None
        vals = []
        for p in ps:
            v = cell_value(p.values[k]) if k < len(p.values) else None
            if growth:
                v0 = cell_value(p.values[k0]) if k0 is not None and k0 < len(p.values) else None
                v = (v - v0) / abs(v0) * 100 if v is not None and v0 not in (None, 0) else None
            if v is not None:
                vals.append((v, p))
        if len(vals) < 2 or growth and k0 is None:
            continue
        v, p = (max if asked.direction == "max" else min)(vals, key=lambda x: x[0])
        unit = "percent" if growth or "%" in p.values[k] else "amount"
        scale = _UNIT_SCALE.get(p.units, "") if unit == "amount" else ""
        word = ("fastest growth" if asked.direction == "max" else "slowest growth") if growth else \
            ("highest" if asked.direction == "max" else "lowest")
        head = header[k].strip() if k < len(header) else ""
        others = "; ".join(f"{q.row_label or q.label} {figure_text(x, unit, scale)}" for x, q in
                           sorted(vals, key=lambda x: -x[0] if asked.direction == "max" else x[0])[1:3])
        text = clip(f"{p.row_label or p.label}: {figure_text(v, unit, scale)}{', ' + head if head else ''}, "
                    f"the {word} of {len(vals)} ({others})", 300)
        where = " ".join([p.caption, p.header_text, breadcrumb_titles(p.section.breadcrumb)[-1]])
        rows_named = " ".join(q.label for _, q in vals)
        out.append(Candidate("which", text, "which", p.section, p.lines(), context=where,
                             wide=f"{where} {p.section.breadcrumb} {rows_named}",
                             value=v, year=_years_in(head)[-1] if _years_in(head) else None,
                             years=_years_in(head), lead=True,
                             extra={"rows": len(vals), "name": p.row_label or p.label}))
    return out


# ---- yes or no --------------------------------------------------------------------------------------------------

def _yes_no_measure(asked: Asked, res: MetricResult | None, computed: list[Candidate]) -> list[Candidate]:
    if res is None or not res.ok:
        return []
    c = computed[0] if computed else None
    if c is None:
        return []
    if asked.threshold is not None:
        above = res.value > asked.threshold
        says_up = asked.polarity != "down"
        yes = above == says_up
        word = "above" if above else "below"
        text = f"{'Yes' if yes else 'No'}: {c.text.split(':', 1)[0]} is {word} {asked.threshold:g} ({c.text})"
    elif res.metric.family == "growth" or res.metric.formula[0] == "-" and res.metric.unit == "usd":
        if not asked.polarity or res.value == 0:
            return []
        rose = res.value > 0
        yes = rose == (asked.polarity == "up")
        text = f"{'Yes' if yes else 'No'}: {res.metric.name} was {c.text}"
    else:
        return []
    return [Candidate("yes_no", clip(text, 300), "yes_no", c.section, (), context=c.context, wide=c.wide,
                      value=res.value, year=c.year, years=c.years, lead=True, label_concept=1.0,
                      extra={"citations": c.citations, "from": "measure"})]


_UP_WORDS = re.compile(r"\b(?:increas\w*|gr[eo]w\w*|rose|risen|rise|improv\w*|expand\w*|higher|up)\b", re.I)
_DOWN_WORDS = re.compile(r"\b(?:decreas\w*|declin\w*|fell|fall\w*|drop\w*|shr[iu]nk\w*|contract\w*|lower|down|"
                         r"deteriorat\w*)\b", re.I)


def _direction(text: str) -> str:
    """``up`` or ``down`` when a sentence states a change one way only, else ``""``."""
    up, down = bool(_UP_WORDS.search(text)), bool(_DOWN_WORDS.search(text))
    return "up" if up and not down else "down" if down and not up else ""


def _yes_no_passages(asked: Asked, passages: list[Passage]) -> list[Candidate]:
    """Yes or no from a sentence: the way it says the thing asked about changed, when the question asks about a
    change; else whether it negates it as the question does (its negation read, a qualifier's too)."""
    out = []
    q_neg = bool(_NEGATION.search(asked.question))
    for p in passages:
        if p.kind != "sentence":
            continue
        way = _direction(p.text) if asked.polarity else ""
        if way:
            yes = way == asked.polarity
        else:
            neg = bool(_NEGATION.search(p.text))
            yes = neg == q_neg
        text = f"{'Yes' if yes else 'No'}: \u201c{clip(p.text, 260)}\u201d"
        out.append(Candidate("yes_no", text, "yes_no", p.section, (p.line,), context=p.text,
                             wide=f"{p.text} {p.section.breadcrumb}", years=_years_in(p.text), lead=True,
                             extra={"from": "passage", "line_end": p.line_end,
                                    "citations": (cite_line(p.section, p.line, p.line_end),)}))
    return out


# ---- passages ---------------------------------------------------------------------------------------------------

_CAUSE = re.compile(r"\b(?:due to|driven by|because|as a result of|result(?:ed|ing)? from|attributable to|"
                    r"primarily|mainly|largely|reflect(?:s|ed|ing)?|offset by|led by|caused by)\b", re.I)


def _passages(passages: list[Passage]) -> list[Candidate]:
    out = []
    for p in passages:
        if p.kind == "row" or len(p.text) < 30:
            continue
        out.append(Candidate("passage", clip(p.text, 300), "", p.section, (p.line,),
                             context=p.text, wide=f"{p.text} {p.section.breadcrumb}", years=_years_in(p.text),
                             lead=p.kind == "sentence", cue=bool(_CAUSE.search(p.text)),
                             extra={"line_end": p.line_end, "pair": p.kind == "pair",
                                    "citations": (cite_line(p.section, p.line, p.line_end),)}))
    return out


# ---- all --------------------------------------------------------------------------------------------------------

def candidates(asked: Asked, sections: list[Section]) -> list[Candidate]:
    """Every candidate of ``sections`` for ``asked`` (see the module docstring), of the kinds its type can use."""
    concepts = list(dict.fromkeys(formula_concepts(asked.measure.formula))) if asked.measure is not None else []
    passages = [p for s in sections for p in section_passages(s)]
    rows = [p for p in passages if p.kind == "row"]
    out: list[Candidate] = []
    computed, res = _computed(asked, sections)
    if asked.type == "yes_no":
        return _yes_no_measure(asked, res, computed) + _yes_no_passages(asked, passages)
    if asked.type == "which":
        return _which(asked, rows) + _passages(passages)
    if asked.type == "narrative":
        return _passages(passages)
    if asked.adjusted:  # the company's own adjusted measure: the textbook formula's value is another measure
        computed = [c for c in computed if c.kind != "computed" or _own_row(c)]
    out += computed + _shares(asked, rows) + _row_changes(asked, rows, concepts) + _scoped(asked, rows)
    for p in rows:
        crumb = breadcrumb_titles(p.section.breadcrumb)[-1]
        out += _row_cells(p, asked, concepts, crumb)
    seen = {p.line for p in rows}
    for s in sections:
        out += _flat_cells(s, asked, concepts, seen)
    for p in passages:
        if p.kind == "sentence":
            out += _dates(p) if asked.type == "date" else _sentence_figures(p)
    return out
