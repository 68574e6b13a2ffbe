"""Financial metrics computed from the primary statements of the retrieved sections.

:func:`ppkit.finance.read.read_measure` reads a question for the measure it asks (the finance catalogue's
standard definitions, each with its source, :mod:`ppkit.finance.catalogue`, or a share, growth or formula
composed from them). :func:`compute_metric` finds the measure's line items (the catalogue's row concepts) in the
tables of the retrieved *primary statements* (balance sheet / statement of financial position,
statement of income / operations / earnings, statement of cash flows: chosen by the section's
heading), reads each one in the column of the fiscal year asked (or the year before, for averages
and growth), and evaluates the formula step by step. Every input keeps its document, breadcrumb,
node id and source line, so the written answer cites each one, and each step is a two-operand
operation :func:`ppkit.answer.verify.verify_answer` can re-derive.

An input may be the sum of component rows when the statement has no total ("Cost of products" + "Cost of
services"); an outflow (capex, dividends) is read only from a row written as one (in brackets); amounts of
different scales are brought to the first input's; a question comparing two years ("compare it with FY2021",
"year over year") also gets the other year's value and the change (:attr:`MetricResult.compare`).

When an input is not in the retrieved statements the result lists what is missing and no
number is given (:attr:`MetricResult.ok` is False): the answer abstains and says which. When the
metric does not fit the company's kind of statements (a financial company's income statement has no
cost of sales; an unclassified balance sheet has no current assets; equity is a deficit) the result
says why instead (:attr:`MetricResult.reason`). :func:`metric_block` words either as the answer block.

A measure companies define each their own way (free cash flow) is the company's own row of that name in any
retrieved table ("Free cash flow, non-GAAP measure") when it is of the order of the general formula's value, and
the block says so and cites the row; else the general formula.

Figures over years: a day count (DSO, DIO, DPO, the cash conversion cycle) over 365 days unless the question
states others, DPO over purchases (cost of sales plus the change in inventories) when the question defines it so;
a CAGR over the years the question names ("from FY2020 to FY2022"), its years stated; an average of a metric over
years ("FY2017 - FY2019 3 year average of ..."), each year computed and cited, the years stated. A statement the PDF
split over headings (the title holding the units and the years, then "Current assets", "Current liabilities") is
read in its title's columns and unit; a line item a company may not hold (short-term investments) with no row in a
balance sheet read whole is 0, and the block says so.

Deliberately not done: segment tables, notes, other non-GAAP reconciliations, totals over years, and guessing a
line item from prose.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ..finance.catalogue import Measure, catalogue
from ..finance.labels import label_match
from ..finance.read import read_measure
from ..retrieval.analyze import question_years
from ..retrieval.metric_statements import statement_kind, statement_kinds
from ..retrieval.types import Section
from .block import MAX_CHARS, AnswerBlock, BlockCitation, cite_line
from .statement_rows import cell_value, header_years, rows_of, scale_of

Metric = Measure  # the catalogue's measure is what is computed


def _concept(c: str):
    return catalogue().concepts[c]


__all__ = ["LineItem", "MetricResult", "cell_value", "interim", "compute_metric", "format_metric", "metric_block", "question_year"]


@dataclass(frozen=True)
class LineItem:
    """One input of a metric: a statement row's value in one year's column, with where it is."""

    concept: str
    label: str  # the row label as written
    value: float  # as written in the table (in ``scale``), sign kept
    year: int
    doc: str
    node_id: str
    breadcrumb: str
    line: int  # the source line of the row
    scale: str  # "millions" | "thousands" | "billions" | "" (not stated)

    @property
    def name(self) -> str:
        return _concept(self.concept).name


@dataclass(frozen=True)
class MetricResult:
    """A computed metric, or why it could not be computed (``ok`` False, ``missing`` says what)."""

    metric: Metric
    year: int | None
    doc: str | None
    value: float | None = None
    steps: tuple[str, ...] = ()  # "4,835 + 1,020 = 5,855", in evaluation order
    inputs: tuple[LineItem, ...] = ()
    missing: tuple[str, ...] = ()  # "accounts receivable, net (balance sheet, 2022)"
    note: str = ""
    statements: dict = field(default_factory=dict)  # kind -> section ids searched
    reason: str = ""  # why the metric does not fit the company's kind of statements ("" when it does)
    expr: str = ""  # the formula over the input values: "(4,835 + 1,020 + 4,126) / 6,369"
    scale: str = ""  # the amounts' unit: "millions" | "thousands" | "billions" | ""
    compare: MetricResult | None = None  # the same metric for the other year the question compares with
    first_year: int | None = None  # the first year of a figure over years (an average of years, a CAGR)
    zeros: tuple[str, ...] = ()  # optional line items the statement has no row of, taken as 0

    @property
    def ok(self) -> bool:
        return self.value is not None

    @property
    def meaningful(self) -> bool:
        return not self.reason

    def __repr__(self) -> str:
        got = f"{self.value:.4g}" if self.ok else f"missing {list(self.missing)}"
        return f"MetricResult({self.metric.name}, FY{self.year}, {got})"


def question_year(question: str, years: Sequence[int] | None = None) -> int | None:
    """The fiscal year a question asks about: the latest year it names (``FY2022``, ``FY22``, ``2022``);
    ``years``: the years it names, when already read (:class:`ppkit.retrieval.analyze.Analysis`)."""
    years = question_years(question) if years is None else years
    return max(years) if years else None


_MINORITY = re.compile(r"\b(?:non-?controlling|minority)\s+interests?$", re.I)


def _label_fit(label: str, phrases) -> str | None:
    """``"exact"`` when ``label`` is one of ``phrases`` (:func:`ppkit.finance.labels.label_match`), ``"prefix"`` when
    it begins with one and qualifies it, else None."""
    fits = {label_match(label, p) for p in phrases}
    return "exact" if "exact" in fits else "prefix" if "prefix" in fits else None


def _label(cell: str) -> str:
    """A row's label as written, without Markdown emphasis and with each run of whitespace one space."""
    return " ".join(cell.replace("*", "").split())


def _items(rows, concept: str) -> list[tuple[str, int, dict[int, float], bool]]:
    """(label, line, {year: value}, exact) of the rows (:func:`ppkit.answer.statement_rows.statement_rows`) whose
    label names the concept (:data:`ppkit.finance.catalogue` labels; ``exact``: the whole label, not its start)."""
    c = _concept(concept)
    out = []
    context = ""  # the last label-only row above ("Earnings per share:"), for labels like "Diluted"
    for ln, cells, years in rows:
        if not cells or cell_value(cells[0]) is not None:
            continue
        label = _label(cells[0])
        norm = label.casefold().replace("’", "'").rstrip(":").strip()
        raw = [x for x in cells[1:] if x not in ("$", "%")]
        vals = [v for v in (cell_value(x) for x in raw) if v is not None]
        if not vals:
            context = norm
            continue
        while years and len(vals) > len(years) and "%" in [x for x in raw if cell_value(x) is not None][-1]:
            vals, raw = vals[:-1], raw[:-1]  # a trailing "Change" column in percent ("(18)%") is not a year's
        fit = _label_fit(label, c.labels)
        if fit is None or _MINORITY.search(norm):  # the noncontrolling interests' share is never the company's
            continue
        if c.per_share and not (any("." in x for x in raw)
                                and ("per share" in norm or re.search(r"per (common )?share", context))):
            continue  # "Diluted" under "Shares used in per share calculation" is a share count, not EPS
        if years and len(vals) == len(years):
            out.append((label, ln, dict(zip(years, vals)), fit == "exact"))
    return out


def _component_rows(rows, concept: str, year: int) -> list[tuple[str, int, float]]:
    """(label, line, value) of the rows (:func:`ppkit.answer.statement_rows.statement_rows`) that are components of
    ``concept`` (no total row)."""
    out = []
    parts = _concept(concept).components
    for ln, cells, years in rows:
        if not cells or not years or cell_value(cells[0]) is not None:
            continue
        label = _label(cells[0])
        if _label_fit(label, parts) is None:
            continue
        vals = [v for v in map(cell_value, cells[1:]) if v is not None]  # a lone "$" or "%" cell holds none
        if len(vals) == len(years) and year in years and label.casefold() not in {o[0].casefold() for o in out}:
            out.append((label, ln, dict(zip(years, vals))[year]))
    return out


# a tax row whose label brackets the expense ("(Provision) benefit for income taxes", "Benefit (provision)"): its
# figures in brackets are the expense, others a benefit; a plain label's figure is the expense in either writing
_BRACKETED_EXPENSE = re.compile(r"\((?:provision|expense)\)", re.I)
_KIND_NAME = {"balance": "balance sheet", "operations": "income statement", "cash_flows": "cash flow statement",
              "reported": "a retrieved table"}
_FACTOR = {"thousands": 1e3, "millions": 1e6, "billions": 1e9}
# a financial company's income statement: interest income and expense above revenue, no cost of sales
_FINANCIAL_ROW = re.compile(r"(total )?net interest income|(total )?revenues? net of interest expense|"
                            r"(total )?interest income$|provisions? for credit losses")


# a statement of a part of a year: its columns are three, six or nine months (13, 26, 39 weeks) or a quarter
# a period's length ("three months ended", "13 weeks ended", "fifty-two weeks ended"): its number and unit, read as a
# share of a year by _year_share; or a column of a quarter or a whole year ("quarters ended", "years ended")
_PERIOD_ENDED = re.compile(r"\b(?:([a-z]+(?:-[a-z]+)?|\d{1,2})[\s-]+(months?|weeks)|(quarter|year)s?)\s+ended\b", re.I)
_NUMBER_NAMES = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                 "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "twenty-six": 26, "thirty-nine": 39,
                 "fifty-two": 52, "fifty-three": 53}

# a question asking about a part of a year (a quarter, a half, months)
_PART_YEAR = re.compile(r"\bQ[1-4]\b|\b(?:19|20)\d\dQ[1-4]\b|\bQ[1-4]\s?(?:FY)?\s?'?\d{2,4}\b|\bquarter|\bH[12]\b|"
                        r"\b(?:first|second)\s+half\b|\b(?:three|six|nine)\s+months\b", re.I)


def _year_share(number: str, unit: str) -> float | None:
    """The share of a year a period of ``number`` months or weeks is (None when the number is no number)."""
    n = _NUMBER_NAMES.get(number.casefold().replace(" ", "-")) if not number.isdigit() else int(number)
    if n is None:
        return None
    return n / 12 if unit.casefold().startswith("month") else n / 52


def interim(section: Section) -> bool:
    """Whether ``section`` is a statement of part of a year (a quarterly report's "Three Months Ended" and
    "Six Months Ended" columns), with no column of a whole year: its flows are never a fiscal year's.

    >>> from ppkit.retrieval.types import Section
    >>> s = Section(rank=1, doc="X", node_id="1", breadcrumb="X > Statements of Earnings", score=1.0, line_start=1,
    ...             line_end=3, text="| | Six Months Ended June 30, 2023 | 2022 |\\n| Revenue | 10 | 9 |")
    >>> interim(s)
    True
    """
    head = section.breadcrumb + "\n" + section.text[:3000]
    part = whole = False
    for m in _PERIOD_ENDED.finditer(head):
        if m.group(2):
            share = _year_share(m.group(1), m.group(2))
        else:
            share = 0.25 if m.group(3).casefold() == "quarter" else 1.0
        if share is not None:
            part, whole = part or share < 0.95, whole or share >= 0.95
    return part and not whole


_GAP = 6  # source lines between two sections of one statement: headings of no text ("ASSETS") and blank lines
_NET = re.compile(r"[,—–-]\s*net\b|\bnet$", re.I)  # "Accounts receivable, net (of allowances ...)", "PP&E — net"


class _Book:
    """The statement sections of one document, searched for line items (a statement of part of a year only when
    the question asks about part of one: ``part_year``)."""

    def __init__(self, sections: list[Section], part_year: bool = True):
        self.by_kind: dict[str, list[Section]] = {}
        self.shape: dict[str, list[Section]] = {}  # every statement, a part-year one too: what kind of company
        self.any = list(sections)  # a measure the company reports itself ("reported"): any table, by rank
        self._rows: dict[str, tuple] = {}  # section id -> its rows (:func:`ppkit.answer.statement_rows.statement_rows`)
        self._head: dict[str, list[int]] = {}  # section id -> the years of the statement's header before it
        self._scale: dict[str, str] = {}  # section id -> the unit stated under the statement's title before it
        for s in sections:
            for kind in statement_kinds(s):
                self.shape.setdefault(kind, []).append(s)
                if part_year or kind == "balance" or not interim(s):
                    self.by_kind.setdefault(kind, []).append(s)
        for kind, ss in self.by_kind.items():  # a statement itself before a summary of several (selected data)
            ss.sort(key=lambda x: len(statement_kinds(x)) > 1)
        for kind, ss in self.shape.items():
            # a statement split over headings ("Current assets", "Current liabilities" after the title holding
            # the years): a section with no header of its own reads in the columns of the one right before it
            ss = sorted(ss, key=lambda x: x.line_start)
            for prev, cur in zip(ss, ss[1:]):
                if not 0 <= cur.line_start - prev.line_end <= _GAP:  # not the same statement continued
                    continue
                if not scale_of(cur):
                    self._scale[cur.section_id] = self.scale(prev)  # "$ in millions" under the statement's title
                if cur.section_id not in self._head:
                    last = [ys for _, _, ys in self.rows(prev)]
                    if last and last[-1]:
                        self._head[cur.section_id] = list(last[-1])
                        self._rows.pop(cur.section_id, None)
                    elif not last:
                        head = header_years(prev.text, self._head.get(prev.section_id, []))
                        if head:
                            self._head[cur.section_id] = head
                            self._rows.pop(cur.section_id, None)

    def scale(self, s: Section) -> str:
        """The unit of ``s``'s amounts: its own, or the statement's stated under the title before it."""
        return scale_of(s) or self._scale.get(s.section_id, "")

    def rows(self, s: Section) -> tuple:
        """The rows of ``s`` (:func:`ppkit.answer.statement_rows.statement_rows`), in the columns of the statement's header before it when it has none."""
        if s.section_id not in self._rows:
            self._rows[s.section_id] = rows_of(s, self._head.get(s.section_id, ()))
        return self._rows[s.section_id]

    def find(self, concept: str, year: int) -> list[LineItem]:
        """The row of ``concept`` in ``year``'s column (best label first: a whole-label match, then the
        first section), or the component rows that sum to it; empty when none."""
        c = _concept(concept)
        kind = c.statement
        found = []
        for order, s in enumerate(self.any if kind == "reported" else self.by_kind.get(kind, [])):
            for label, ln, vals, exact in _items(self.rows(s), concept):
                if year in vals and not (c.outflow and vals[year] > 0):  # an outflow is written in brackets
                    # a carrying amount "..., net" (a label the pattern begins) before the gross row above it
                    net = bool(_NET.search(label))
                    found.append((not (exact or net), order, not net, ln, LineItem(concept, label, vals[year], year, s.doc,
                                                                          s.node_id, s.breadcrumb, ln, self.scale(s))))
        if found:
            return [min(found, key=lambda f: f[:4])[4]]
        for s in self.by_kind.get(kind, []) if c.components else []:
            parts = _component_rows(self.rows(s), concept, year)
            if len(parts) >= 2:  # "Cost of products" + "Cost of services", with no total row
                return [LineItem(concept, label, v, year, s.doc, s.node_id, s.breadcrumb, ln, self.scale(s))
                        for label, ln, v in parts]
        return []

    def labels(self, kind: str) -> list[str]:
        return [_label(cells[0]).casefold()
                for s in self.shape.get(kind, []) for _, cells, _ in self.rows(s) if cells]

    def whole(self, kind: str, year: int) -> bool:
        """Whether the statement of ``kind`` was read whole (none of its sections trimmed) and has rows in
        ``year``'s column: a line item it has no row of is none the company reports."""
        ss = self.by_kind.get(kind, [])
        return bool(ss) and not self.trimmed(kind) and any(year in ys for s in ss for _, _, ys in self.rows(s))

    def trimmed(self, kind: str) -> bool:
        return any(s.trimmed for s in self.by_kind.get(kind, []))

    def latest_year(self) -> int | None:
        years = [y for ss in (self.by_kind or self.shape).values() for s in ss for _, _, ys in self.rows(s) for y in ys]
        return max(years) if years else None


def _fmt(v: float) -> str:
    """A figure as written: amounts with thousands separators, others with at least three significant digits."""
    if v == int(v) and abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 100:
        return f"{v:,.1f}"
    if abs(v) >= 1 or v == 0:
        return f"{v:.2f}"
    return f"{v:#.3g}"


def _round_written(v: float) -> float:
    return float(_fmt(v).replace(",", ""))


class _Eval:
    """Evaluates a formula over a document's statements, writing each step as the verifier reads it."""

    def __init__(self, book: _Book, year: int, first: int | None = None):
        self.book, self.year = book, year
        self.first = first  # the first year of a growth over years (a CAGR's), when the question names it
        self.inputs: list[LineItem] = []
        self.missing: list[str] = []
        self.missing_concepts: list[str] = []
        self.zeros: list[str] = []  # optional line items the statement has no row of, taken as 0
        self.steps: list[str] = []
        self.reason = ""  # why the metric is not meaningful (a deficit under a ratio)
        self.scale = ""

    def item(self, concept: str, year: int, rows: list[LineItem] | None = None) -> tuple[float | None, str]:
        rows = self.book.find(concept, year) if rows is None else rows
        c = _concept(concept)
        if not rows and c.optional and self.book.whole(c.statement, year):
            # a balance sheet read whole, in that year's column, with no such row: the company holds none
            self.zeros.append(c.name)
            return 0.0, "0"
        if not rows:
            self.missing.append(f"{c.name} ({_KIND_NAME[c.statement]}, {year})")
            self.missing_concepts.append(concept)
            return None, ""
        vals = []
        for li in rows:
            if li not in self.inputs:
                self.inputs.append(li)
            # an outflow or a cost is read as its size: a cost row in brackets is subtracted by magnitude
            v = abs(li.value) if c.outflow or c.cost else li.value
            if concept == "income_tax":  # an expense, whichever way the statement writes it
                v = -li.value if _BRACKETED_EXPENSE.search(li.label) else abs(li.value)
            if not c.per_share and li.scale:  # one scale for every amount: the first input's
                self.scale = self.scale or li.scale
                v = _round_written(v * _FACTOR[li.scale] / _FACTOR[self.scale])
            vals.append(v)
        if len(vals) == 1:
            return vals[0], _fmt(vals[0])
        total = _round_written(sum(vals))
        self.steps.append(" + ".join(map(_fmt, vals)) + f" = {_fmt(total)}")
        return total, "(" + " + ".join(map(_fmt, vals)) + ")"

    def _reported(self, concept: str, formula, year: int | None = None) -> list[LineItem]:
        """The company's own row of a measure it defines itself (``concept``) in ``year`` (default: the year
        asked), when it is of the order of the general ``formula``'s value (within a factor of two, or that is not
        computable): a row of another quantity under the same name (a segment's) is not the company's measure. A
        row without a stated unit takes the statements' when the two agree so."""
        rows = self.book.find(concept, self.year if year is None else year)
        if not rows:
            return []
        general = _Eval(self.book, self.year)
        value, _ = general.run(formula)
        li = rows[0]
        if value is None or general.missing:
            return [li]
        if li.scale and general.scale:
            value = value * _FACTOR[general.scale] / _FACTOR[li.scale]
        if not value or not 0.5 <= li.value / value <= 2.0:
            return []
        return [replace(li, scale=li.scale or general.scale)]

    def run(self, node) -> tuple[float | None, str]:
        """(value, the formula over the input values) of ``node``; value None when an input is missing."""
        op = node[0]
        if op == "item":
            return self.item(node[1], self.year)
        if op == "reported":  # ("reported", concept, general formula[, years back])
            year = self.year - (node[3] if len(node) > 3 else 0)
            rows = self._reported(node[1], node[2], year)
            return self.item(node[1], year, rows) if rows else self.run(node[2])
        if op == "num":  # a constant of the formula (a year's days)
            return float(node[1]), _fmt(float(node[1]))
        if op == "prev":
            return self.item(node[1], self.year - 1)
        if op == "cagr":  # (last / first) ^ (1 / years) - 1, over the years the question names
            first = self.first if self.first is not None and self.first < self.year else self.year - 1
            (a, ea), (b, eb) = self.item(node[1], self.year), self.item(node[1], first)
            if a is None or b is None:
                return None, ""
            if b <= 0 or a <= 0:
                self.missing.append(f"positive {_concept(node[1]).name} in both years")
                return None, ""
            n = self.year - first
            r = ((a / b) ** (1 / n) - 1) * 100
            r = round(r, 2) if abs(r) >= 1 else float(f"{r:.3g}")
            self.steps.append(f"({_fmt(a)} / {_fmt(b)}) ^ (1 / {n}) - 1 = {_fmt(r)}%")
            return r, f"({ea} / {eb}) ^ (1 / {n}) - 1"
        if op in ("avg", "chg"):
            (a, ea), (b, eb) = self.item(node[1], self.year), self.item(node[1], self.year - 1)
            if a is None or b is None:
                return None, ""
            r = _round_written((a + b) / 2 if op == "avg" else a - b)
            self.steps.append(f"({_fmt(a)} + {_fmt(b)}) / 2 = {_fmt(r)}" if op == "avg"
                              else f"{_fmt(a)} - {_fmt(b)} = {_fmt(r)}")
            return r, f"({ea} + {eb}) / 2" if op == "avg" else f"({ea} - {eb})"
        if op == "pct":
            _, a, b = node[1]
            (va, ea), (vb, eb) = self.run(a), self.run(b)
            if va is None or vb is None:
                return None, ""
            if vb == 0:
                self.missing.append("a non-zero denominator")
                return None, ""
            r = va / vb * 100
            r = round(r, 2) if abs(r) >= 1 else float(f"{r:.3g}")
            self.steps.append(f"{_fmt(va)} / {_fmt(vb)} × 100 = {_fmt(r)}%")
            return r, f"{_wrap(a, ea)} / {_wrap(b, eb)}"
        (va, ea), (vb, eb) = self.run(node[1]), self.run(node[2])
        if va is None or vb is None:
            return None, ""
        if op == "/":
            if vb == 0:
                self.missing.append("a non-zero denominator")
                return None, ""
            if vb < 0 and node[2][0] in ("item", "avg") and node[2][1] == "equity":
                # a ratio over a deficit has no meaning: say so rather than print a negative ratio
                self.reason = (f"shareholders' equity is a deficit ({_fmt(vb)}), so a ratio over it is undefined")
                return None, ""
            r = _round_written(va / vb)
            expr = f"{_wrap(node[1], ea)} / {_wrap(node[2], eb)}"
        elif op == "*":
            r = _round_written(va * vb)
            expr = f"{_wrap(node[1], ea)} × {_wrap(node[2], eb)}"
        else:
            r = _round_written(va + vb if op == "+" else va - vb)
            expr = f"{ea} {op} {_wrap(node[2], eb) if op == '-' else eb}"
        self.steps.append(f"{_fmt(va)} {'×' if op == '*' else op} {_fmt(vb)} = {_fmt(r)}")
        return r, expr


def _wrap(node, expr: str) -> str:
    return f"({expr})" if node[0] in ("+", "-", "avg", "cagr") else expr


def _not_meaningful(book: _Book, ev: _Eval, metric: Metric, doc: str) -> str:
    """Why ``metric`` does not fit ``doc``'s kind of statements (read from the statements found), or ""."""
    if ev.reason:
        return ev.reason
    gone = set(ev.missing_concepts)
    ops = book.labels("operations")
    financial = any(_FINANCIAL_ROW.match(lb) for lb in ops) and not any(re.match(r"costs? of", lb) for lb in ops)
    what = {"cogs": "cost of sales", "inventory": "inventories", "operating_income": "operating income"}
    if financial and gone & set(what):
        lacking = ", ".join(what[c] for c in what if c in gone)
        return (f"{doc}'s income statement is a financial company's (revenues net of interest expense) and reports "
                f"no {lacking}, so the {metric.name} is not defined for it")
    bal = book.labels("balance")
    classified = any(re.match(r"total current (assets|liabilities)", lb) for lb in bal)
    if bal and not book.trimmed("balance") and "total assets" in bal and not classified \
            and gone & {"current_assets", "current_liabilities"}:
        return (f"{doc}'s balance sheet does not divide assets and liabilities into current and non-current, "
                f"so the {metric.name} is not defined for it")
    return ""


# a question comparing the metric with another year ("compare", "vs.", "from ... to", "year over year"), or asking
# about its course ("an improving margin", "historically consistent")
_COMPARED = re.compile(r"\b(compar\w*|chang\w*|vs\.?|versus|from\b.*\bto|between|increas\w*|decreas\w*|declin\w*|"
                       r"year[- ]over[- ]year|yoy|improv\w*|deteriorat\w*|trend\w*|historically|consisten\w*|"
                       r"fluctuat\w*|stable|stability|volatil\w*)\b", re.I)
# ... of one year only: with the year before when it names a prior year, a course or a change
_FROM_PRIOR = re.compile(r"\b(year[- ]over[- ]year|yoy|(the )?(prior|previous|preceding) (fiscal )?year|improv\w*|"
                         r"deteriorat\w*|trend\w*|historically|consisten\w*|fluctuat\w*|stable|stability|volatil\w*|"
                         r"chang\w*|increas\w*|decreas\w*|declin\w*|grow\w*|shrink\w*|drop\w*|rise|rose)\b", re.I)


def _other_year(question: str, years: Sequence[int], year: int | None, metric: Metric) -> int | None:
    """The second year a question compares the metric with (FY2021 in "... for FY2022 and compare it with
    FY2021"), or None; never for a metric that is itself a change."""
    if year is None or "prev" in str(metric.formula) or "chg" in str(metric.formula) or not _COMPARED.search(question):
        return None
    others = [y for y in years if y != year]
    if others:
        return max(others)
    # a change asked of one year ("what drove the margin change in FY2022") is from the year before
    return year - 1 if _FROM_PRIOR.search(question) else None


# a day count's days as the question states them ("360 * (average ...)", "using 360 days"); else 365
_DAYS = re.compile(r"\b(3[56]\d)\s*(?:\*|x\b|×|days?\b|-day\b)", re.I)
# an average of a metric over years ("FY2017 - FY2019 3 year average of capex as a % of revenue")
# "a 3-year average", "the three year span": a number of years (its word read by _NUMBER_NAMES)
_YEARS_AVERAGE = re.compile(r"\b(\d|[a-z]+)[- ]years?\s+average\b", re.I)
_SPAN = re.compile(r"\b(\d|[a-z]+)[- ]years?\b", re.I)
# a total over several years ("the 3-year total"): not computed offline
_YEARS_THEN = re.compile(r"\b(?:\d|[a-z]+)[- ]years?\s+([a-z]+)", re.I)  # "3-year total": the word after


def _tree_map(node, f):
    """``node`` with ``f`` applied to every node, children first."""
    if isinstance(node, tuple) and node and isinstance(node[0], str) and node[0] not in ("item", "prev", "avg", "chg",
                                                                                         "num", "cagr"):
        node = (node[0], *(_tree_map(n, f) if isinstance(n, tuple) else n for n in node[1:]))
    return f(node)


def _as_asked(metric: Metric, question: str) -> Metric:
    """``metric`` with the days of a year the question states (a day count's formula: "360 days"); any other
    metric as it is."""
    if "num" not in str(metric.formula):
        return metric
    m = _DAYS.search(question)
    days = int(m.group(1)) if m and 360 <= int(m.group(1)) <= 366 else 365

    def f(node):
        return ("num", days) if node == ("num", 365) else node
    return replace(metric, formula=_tree_map(metric.formula, f), definition=metric.definition.replace("365", str(days)))


def _span(question: str, years: Sequence[int], year: int | None) -> tuple[int, int] | None:
    """(first, last) fiscal year of a figure over years: the years named ("from FY2020 to FY2022"), else the
    last ``n`` years of a "n year" span ending at the year asked."""
    if year is None:
        return None
    if len(set(years)) >= 2:
        return min(years), max(years)
    for m in _SPAN.finditer(question):
        word = m.group(1).casefold()
        n = int(word) if word.isdigit() else _NUMBER_NAMES.get(word)
        if n is not None and 2 <= n <= 10:
            return year - n + 1, year
    return None


def _average_over(metric: Metric, book: _Book, doc: str, first: int, last: int) -> MetricResult:
    """The mean of ``metric`` over the fiscal years ``first`` to ``last``, each year computed and cited; not ok
    (naming the missing inputs) when a year's is not computable."""
    per_year = [_compute_one(metric, book, doc, y) for y in range(first, last + 1)]
    name = f"{last - first + 1}-year average {metric.name}"
    avg = replace(metric, id=f"avg:{metric.id}", name=name, formula=("avg_years", metric.formula),
                  definition=f"the mean over FY{first}-FY{last} of {metric.definition}")
    bad = [r for r in per_year if not r.ok]
    inputs = tuple(dict.fromkeys(li for r in per_year for li in r.inputs))
    if bad:
        return MetricResult(avg, last, doc, missing=tuple(m for r in bad for m in r.missing) or
                            (f"the {metric.name} of FY{bad[0].year}",), inputs=inputs, reason=bad[0].reason,
                            statements=per_year[0].statements, first_year=first)
    vals = [r.value for r in per_year]
    steps = [st for r in per_year for st in r.steps]
    pc = "%" if metric.unit == "percent" else ""
    total = vals[0]
    for v in vals[1:]:  # two operands a step, as the verifier re-derives them
        nxt = _round_written(total + v)
        steps.append(f"{_fmt(total)}{pc} + {_fmt(v)}{pc} = {_fmt(nxt)}{pc}")
        total = nxt
    mean = round(total / len(vals), 2) if metric.unit in ("percent", "days") else _round_written(total / len(vals))
    steps.append(f"{_fmt(total)}{pc} / {len(vals)} = {_fmt(mean)}{pc}")
    shown = "; ".join(f"FY{r.year}: {_fmt(r.value)}{'%' if metric.unit == 'percent' else ''}" for r in per_year)
    return MetricResult(avg, last, doc, mean, tuple(steps), inputs, statements=per_year[0].statements,
                        expr=shown, scale=per_year[0].scale, first_year=first)


def _compute_one(metric: Metric, book: _Book, doc: str, y: int, first: int | None = None) -> MetricResult:
    ev = _Eval(book, y, first)
    value, expr = ev.run(metric.formula)
    stmts = {k: [s.section_id for s in v] for k, v in book.by_kind.items()}
    ok = not ev.missing and not ev.reason and value is not None
    if ok and metric.unit == "percent" and "margin" in metric.name and not -100 < value <= 100:
        # a margin is a part of revenue: a value beyond it says the rows read are not the metric's inputs
        ev.missing.append(f"inputs that give a {metric.name} within ±100% (the rows read give {_fmt(value)}%)")
        ok = False
    reason = "" if ok else _not_meaningful(book, ev, metric, doc)
    return MetricResult(metric, y, doc, value if ok else None, tuple(ev.steps), tuple(ev.inputs),
                        tuple(dict.fromkeys(ev.missing)), statements=stmts, reason=reason, expr=expr if ok else "",
                        scale=ev.scale, first_year=first if metric.formula[0] == "cagr" else None,
                        zeros=tuple(dict.fromkeys(ev.zeros)))


def compute_metric(question: str, sections: list[Section], metric: Metric | None = None, *,
                   years: tuple[int, ...] | None = None) -> MetricResult | None:
    """Compute the metric ``question`` asks for from the primary statements among ``sections``.

    ``metric`` and ``years`` (the question's analysis, :class:`ppkit.retrieval.analyze.Analysis`) are read from
    the question when not given. When the question compares the metric with a second year ("compare it with
    FY2021", "year over year") the result's ``compare`` holds that year's.

    Returns None when the question asks for no known metric; else a :class:`MetricResult`, with
    ``missing`` set (and no value) when an input is not in the retrieved statements, and ``reason`` when the
    metric does not fit the company's kind of statements.

    >>> compute_metric("What is AMD's quick ratio for FY2022?", sections).value  # doctest: +SKIP
    1.57
    """
    metric = metric or read_measure(question)
    if metric is None:
        return None
    years = question_years(question) if years is None else years
    year = question_year(question, years)
    metric = _as_asked(metric, question)
    span = _span(question, years, year)
    averaged = any((w := m.group(1).casefold()).isdigit() or w in _NUMBER_NAMES for m in
                   _YEARS_AVERAGE.finditer(question)) and span is not None and span[0] < span[1]
    growth = metric.formula[0] == "cagr"
    over_years = any(m.group(1).casefold() in ("total", "sum", "cumulative") for m in _YEARS_THEN.finditer(question))
    if over_years and not (averaged or growth or metric.unit == "days"):
        return MetricResult(metric, year, None, note="multi-year totals are not computed offline",
                            missing=("a supported form of the metric",))
    docs = list(dict.fromkeys(s.doc for s in sections if statement_kind(s)))
    if not docs:
        return MetricResult(metric, year, None, missing=("the primary statements (no balance sheet, income "
                                                         "statement or cash flow statement was retrieved)",))
    best = None
    part_year = bool(_PART_YEAR.search(question))
    for doc in docs:  # the first document (by rank) whose statements give the metric
        book = _Book([s for s in sections if s.doc == doc], part_year)
        y = year or book.latest_year()
        if y is None:
            continue
        if averaged and span is not None:
            res = _average_over(metric, book, doc, span[0], y)
        else:
            res = _compute_one(metric, book, doc, y, span[0] if growth and span else None)
        if res.ok and not averaged:
            other = _other_year(question, years, y, metric)
            if other is not None:
                prev = _compute_one(metric, book, doc, other)
                res = replace(res, compare=prev)
            return res
        if res.ok:
            return res
        best = best or res
    return best or MetricResult(metric, year, None, missing=("a year column in the retrieved statements",))


def _period(res: MetricResult) -> str:
    """ "FY2022", "FY2020-FY2022" (a figure over years) or "the latest year"."""
    if not res.year:
        return "the latest year"
    return f"FY{res.first_year}-FY{res.year}" if res.first_year is not None else f"FY{res.year}"


def _value_text(res: MetricResult) -> str:
    """The result as stated: "$5,604 million", "43.61%", "1.57", "$0.84 per share"."""
    v, unit = _fmt(res.value), res.metric.unit
    if unit == "usd":
        return _usd(res.value, res.scale)
    if unit == "percent":
        return f"{v}%"
    if unit == "per_share":
        return f"${v} per share"
    if unit == "days":
        return f"{v} days"
    return v


def _usd(v: float, scale: str) -> str:
    """ "-$607 million": an amount with its sign first and the statements' unit."""
    a = abs(v)
    return ("-" if v < 0 else "") + (f"${a:,.0f}" if a == int(a) else f"${_fmt(a)}") + (f" {scale[:-1]}" if scale else "")


def _change_text(res: MetricResult) -> str:
    """ "a change of -16.86 percentage points" between ``res`` and ``res.compare`` (the other year)."""
    a, b = res.value, res.compare.value
    if res.metric.unit == "percent":
        return f"a change of {_fmt(round(a - b, 2))} percentage points"
    d = _round_written(a - b)
    pct = f" ({_fmt(round((a - b) / abs(b) * 100, 2))}%)" if b else ""
    return f"a change of {_usd(d, res.scale) if res.metric.unit == 'usd' else _fmt(d)}{pct}"


def format_metric(res: MetricResult) -> str:
    """The answer's text for a computed metric (headline = the last step, then the steps and the cited inputs),
    the reason it does not fit the company ("Not meaningful: ..."), or the abstention saying which inputs are
    missing."""
    m = res.metric
    fy = _period(res)
    found = ("Found: " + "; ".join(f"{li.name}, {li.year}: {_fmt(li.value)} ({li.doc}#{li.node_id} line {li.line})"
                                   for li in res.inputs) + ".") if res.inputs else ""
    if not res.ok:
        if res.reason:
            out = [f"Not meaningful: {res.reason}."]
        else:
            out = [f"Not computed: the {m.name} for {fy} needs {m.definition}; the retrieved sections do not "
                   "contain: " + "; ".join(res.missing) + "."]
        if res.note:
            out.append(res.note + ".")
        return "\n".join(out + ([found] if found else []))
    scale = res.scale
    last = res.steps[-1] if res.steps else _fmt(res.value)
    if m.unit == "usd":  # "$9,068 million": the unit of the statements
        lhs, _, rhs = last.rpartition(" = ")
        last = (f"{lhs} = " if lhs else "") + f"${rhs}" + (f" {scale[:-1]}" if scale else "")
    head = f"Computed {m.name} of {res.doc} for {fy}: {last}"
    out = [head, f"Formula: {m.name} = {m.definition}."]
    if len(res.steps) > 1:
        out.append("Steps: " + "; ".join(res.steps[:-1]) + ".")
    if res.compare is not None and res.compare.ok:
        c = res.compare
        out.append(f"FY{c.year}: " + "; ".join(c.steps or (_fmt(c.value),)) + f"; {_change_text(res)} "
                   f"from FY{c.year} to FY{res.year}.")
    inputs = list(res.inputs) + ([li for li in res.compare.inputs if li not in res.inputs]
                                 if res.compare is not None and res.compare.ok else [])
    where = "a retrieved table" if any(_concept(li.concept).statement == "reported" for li in inputs) \
        else "a primary statement"
    out.append(f"Inputs ({_scale_words(scale)}), each from the column {res.year} or {res.year - 1} of {where}:"
               if any(li.year != res.year for li in inputs) else
               f"Inputs ({_scale_words(scale)}), column {res.year}:")
    for li in inputs:
        out_flow = _concept(li.concept).outflow
        v = abs(li.value) if out_flow else li.value
        shown = f"{_fmt(v)}" + (f" (written ({_fmt(abs(li.value))}), an outflow)" if li.value < 0 and out_flow else "")
        out.append(f"- {li.name}, {li.year}: {shown}, row \"{li.label}\" in {li.breadcrumb}, "
                   f"line {li.line} (ID: {li.node_id})")
    out += [f"- {name}: 0 (the balance sheet, read whole, has no row of it)" for name in res.zeros]
    return "\n".join(out)


def _scale_words(scale: str) -> str:
    return f"$ {scale}" if scale else "units as stated in the statements"


def _cites(res: MetricResult, sections: list[Section]) -> tuple[BlockCitation, ...]:
    by_id = {(s.doc, s.node_id): s for s in sections}
    items = list(res.inputs) + (list(res.compare.inputs) if res.compare is not None else [])
    out = [cite_line(by_id[(li.doc, li.node_id)], li.line) for li in items if (li.doc, li.node_id) in by_id]
    return tuple(dict.fromkeys(out))


def metric_block(result: MetricResult, sections: list[Section]) -> AnswerBlock:
    """The answer block of a computed metric: kind ``computed`` with the figure first (unit and period), then
    the formula over its inputs; ``not_meaningful`` with the reason in words; or ``not_found`` naming the
    missing inputs. The citations are the input rows (:func:`ppkit.answer.block.cite_line`).

    >>> metric_block(compute_metric("What is AMD's quick ratio for FY2022?", sections), sections).text  # doctest: +SKIP
    "AMD's quick ratio for FY2022 was 1.57 ((4,835 + 1,020 + 4,126) / 6,369, $ millions)"
    """
    m, who = result.metric, f"{result.doc}'s " if result.doc else "the "
    fy = _period(result)
    cites = _cites(result, sections)
    if not result.ok:
        if result.reason:
            return AnswerBlock(_clip(f"Not meaningful: {result.reason}."), "not_meaningful", cites)
        return AnswerBlock(_clip(f"Not found: {who}{m.name} for {fy} needs {', '.join(result.missing)}, which the "
                                 "retrieved statements do not show."), "not_found", cites)
    unit = f", $ {result.scale}" if result.scale and m.unit not in ("per_share",) and result.inputs else ""
    inputs = f" ({result.expr}{unit})" if result.expr and result.expr != _fmt(result.value) else ""
    text = f"{who}{m.name} for {fy} was {_value_text(result)}{inputs}"
    if result.zeros:  # say which input is 0 and why
        text += "; " + ", ".join(result.zeros) + ": no row in the balance sheet, so 0"
    own = next((li for li in result.inputs if _concept(li.concept).statement == "reported"), None)
    # a measure the company defines itself: say that the figure is its own, and which row
    said = f"; {result.doc}'s own figure, row \"{own.label}\"" if own is not None else ""
    text += said
    c = result.compare
    if c is not None and c.ok:
        inputs = f" ({fy}: {result.expr}{unit})" if inputs else ""
        head = (f"{who}{m.name} was {_value_text(result)} in {fy} and {_value_text(c)} in FY{c.year}, "
                f"{_change_text(result)}")
        text = head + inputs + said
        if len(text) > MAX_CHARS:
            text = head + said
    elif len(text) > MAX_CHARS:
        text = f"{who}{m.name} for {fy} was {_value_text(result)}{said}"
    return AnswerBlock(_clip(text), "computed", cites)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1].rstrip() + "…"

