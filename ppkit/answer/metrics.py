"""Financial metrics computed from the primary statements of the retrieved sections.

:func:`ppkit.retrieval.metric_table.detect_metric` reads a question for a metric it knows (quick ratio,
margins, growth, turnover, capex share, payout, ROA...; the table
:data:`ppkit.retrieval.metric_table.METRICS` holds general textbook definitions, not per-question
ones). :func:`compute_metric` finds the metric's line items in the
tables of the retrieved *primary statements* (balance sheet / statement of financial position,
statement of income / operations / earnings, statement of cash flows: chosen by the section's
heading), reads each one in the column of the fiscal year asked (or the year before, for averages
and growth), and evaluates the formula step by step. Every input keeps its document, breadcrumb,
node id and source line, so the written answer cites each one, and each step is a two-operand
operation :func:`ppkit.answer.verify.verify_answer` can re-derive.

When an input is not in the retrieved statements the result lists what is missing and no
number is given (:attr:`MetricResult.ok` is False): the answer abstains and says which.

Deliberately not done: segment tables, notes, non-GAAP reconciliations, multi-year averages and
CAGRs (reported as unsupported), and guessing a line item from prose.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..retrieval.analyze import question_years
from ..retrieval.metric_statements import statement_kind
from ..retrieval.metric_table import CONCEPTS, OUTFLOWS, UNSUPPORTED, Metric, detect_metric
from ..retrieval.types import Section

__all__ = ["LineItem", "MetricResult", "compute_metric", "format_metric", "question_year"]


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
        return CONCEPTS[self.concept][2]


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

    @property
    def ok(self) -> bool:
        return self.value is not None

    def __repr__(self) -> str:
        got = f"{self.value:.4g}" if self.ok else f"missing {list(self.missing)}"
        return f"MetricResult({self.metric.name}, FY{self.year}, {got})"


def question_year(question: str, years: Sequence[int] | None = None) -> int | None:
    """The fiscal year a question asks about: the latest year it names (``FY2022``, ``FY22``, ``2022``);
    ``years``: the years it names, when already read (:class:`ppkit.retrieval.analyze.Analysis`)."""
    years = question_years(question) if years is None else years
    return max(years) if years else None


_VALUE = re.compile(r"^\(?-?\$?\s?\(?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\)?\s?%?$")
_DASH = {"—", "–", "-", "—%", "$—", "$ —", "$-"}
_HEAD_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
_SCALE = re.compile(r"\bin (millions|thousands|billions)\b", re.I)


def _cell_value(cell: str) -> float | None:
    c = cell.replace("*", "").replace(" ", "").strip()
    if c in {d.replace(" ", "") for d in _DASH}:
        return 0.0
    m = _VALUE.match(c)
    if not m:
        return None
    v = float(m.group(1).replace(",", ""))
    return -v if (c.startswith("(") or c.startswith("-") or c.startswith("$(")) else v


def _rows(section: Section):
    """(source line, cells) of the table rows sent for ``section``, with the years of the header above each."""
    numbers = section.line_numbers or (section.line_start,) * len(section.text.split("\n"))
    years: list[int] = []
    for ln, raw in zip(numbers, section.text.split("\n")):
        s = raw.strip()
        if not s.startswith("|"):
            continue
        cells = [c.strip() for c in s.strip("|").split("|")]
        vals = [_cell_value(c) for c in cells]
        head = [int(y) for c in cells for y in _HEAD_YEAR.findall(c)]
        # a header row: every cell holding a number is a year
        if len(head) >= 2 and all(v is None or 1900 <= v <= 2100 for v in vals):
            years = head
            continue
        yield ln, cells, years


def _items(section: Section, concept: str) -> list[tuple[str, int, dict[int, float]]]:
    """(label, line, {year: value}) of the rows of ``section`` whose label is the concept's."""
    _, patterns, _ = CONCEPTS[concept]
    out = []
    for ln, cells, years in _rows(section):
        if not cells or _cell_value(cells[0]) is not None:
            continue
        label = re.sub(r"\s+", " ", cells[0].replace("*", "")).strip()
        norm = label.casefold().replace("’", "'").rstrip(":")
        if not any(re.match(p, norm) for p in patterns):
            continue
        vals = [v for v in (_cell_value(c) for c in cells[1:] if c not in ("$", "%")) if v is not None]
        if years and len(vals) == len(years):
            out.append((label, ln, dict(zip(years, vals))))
    return out


def _scale(section: Section) -> str:
    m = _SCALE.search(section.text) or _SCALE.search(section.breadcrumb)
    return m.group(1).casefold() if m else ""


_KIND_NAME = {"balance": "balance sheet", "operations": "income statement", "cash_flows": "cash flow statement"}


class _Book:
    """The statement sections of one document, searched for line items."""

    def __init__(self, sections: list[Section]):
        self.by_kind: dict[str, list[Section]] = {}
        for s in sections:
            kind = statement_kind(s)
            if kind:
                self.by_kind.setdefault(kind, []).append(s)

    def find(self, concept: str, year: int) -> LineItem | None:
        kind = CONCEPTS[concept][0]
        for s in self.by_kind.get(kind, []):
            for label, ln, vals in _items(s, concept):
                if year in vals:
                    return LineItem(concept, label, vals[year], year, s.doc, s.node_id, s.breadcrumb, ln, _scale(s))
        return None

    def latest_year(self) -> int | None:
        years = [y for ss in self.by_kind.values() for s in ss for _, _, ys in _rows(s) for y in ys]
        return max(years) if years else None


def _fmt(v: float) -> str:
    if v == int(v) and abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 100:
        return f"{v:,.1f}"
    return f"{v:.2f}"


def _round_written(v: float) -> float:
    return float(_fmt(v).replace(",", ""))


class _Eval:
    """Evaluates a formula over a document's statements, writing each step as the verifier reads it."""

    def __init__(self, book: _Book, year: int):
        self.book, self.year = book, year
        self.inputs: list[LineItem] = []
        self.missing: list[str] = []
        self.steps: list[str] = []

    def item(self, concept: str, year: int) -> float | None:
        li = self.book.find(concept, year)
        if li is None:
            self.missing.append(f"{CONCEPTS[concept][2]} ({_KIND_NAME[CONCEPTS[concept][0]]}, {year})")
            return None
        if li not in self.inputs:
            self.inputs.append(li)
        return abs(li.value) if concept in OUTFLOWS else li.value

    def run(self, node) -> float | None:
        op = node[0]
        if op == "item":
            return self.item(node[1], self.year)
        if op == "prev":
            return self.item(node[1], self.year - 1)
        if op == "avg":
            a, b = self.item(node[1], self.year), self.item(node[1], self.year - 1)
            if a is None or b is None:
                return None
            r = _round_written((a + b) / 2)
            self.steps.append(f"({_fmt(a)} + {_fmt(b)}) / 2 = {_fmt(r)}")
            return r
        if op == "pct":
            _, a, b = node[1]
            va, vb = self.run(a), self.run(b)
            if va is None or vb is None or vb == 0:
                return None
            r = round(va / vb * 100, 1)
            self.steps.append(f"{_fmt(va)} / {_fmt(vb)} × 100 = {r:.1f}%")
            return r
        va, vb = self.run(node[1]), self.run(node[2])
        if va is None or vb is None:
            return None
        if op == "/":
            if vb == 0:
                self.missing.append("a non-zero denominator")
                return None
            if vb < 0 and node[2][0] in ("item", "avg") and node[2][1] == "equity":
                # a ratio over a deficit has no meaning: say so rather than print a negative ratio
                self.missing.append(f"positive shareholders' equity (it is a deficit of {_fmt(abs(vb))}: "
                                    "the ratio is undefined)")
                return None
            r = _round_written(va / vb)
        else:
            r = _round_written(va + vb if op == "+" else va - vb)
        self.steps.append(f"{_fmt(va)} {op} {_fmt(vb)} = {_fmt(r)}")
        return r


def compute_metric(question: str, sections: list[Section], metric: Metric | None = None, *,
                   years: tuple[int, ...] | None = None) -> MetricResult | None:
    """Compute the metric ``question`` asks for from the primary statements among ``sections``.

    ``metric`` and ``years`` (the question's analysis, :class:`ppkit.retrieval.analyze.Analysis`) are read from
    the question when not given.

    Returns None when the question asks for no known metric; else a :class:`MetricResult`, with
    ``missing`` set (and no value) when an input is not in the retrieved statements.

    >>> compute_metric("What is AMD's quick ratio for FY2022?", sections).value  # doctest: +SKIP
    1.57
    """
    metric = metric or detect_metric(question)
    if metric is None:
        return None
    year = question_year(question, years)
    if UNSUPPORTED.search(question):
        return MetricResult(metric, year, None, note="multi-year averages, CAGRs and day counts are not computed "
                                                     "offline", missing=("a supported form of the metric",))
    docs = list(dict.fromkeys(s.doc for s in sections if statement_kind(s)))
    if not docs:
        return MetricResult(metric, year, None, missing=("the primary statements (no balance sheet, income "
                                                         "statement or cash flow statement was retrieved)",))
    best = None
    for doc in docs:  # the first document (by rank) whose statements give the metric
        book = _Book([s for s in sections if s.doc == doc])
        y = year or book.latest_year()
        if y is None:
            continue
        ev = _Eval(book, y)
        value = ev.run(metric.formula)
        stmts = {k: [s.section_id for s in v] for k, v in book.by_kind.items()}
        res = MetricResult(metric, y, doc, value if not ev.missing else None, tuple(ev.steps), tuple(ev.inputs),
                           tuple(dict.fromkeys(ev.missing)), statements=stmts)
        if res.ok:
            return res
        best = best or res
    return best or MetricResult(metric, year, None, missing=("a year column in the retrieved statements",))


def format_metric(res: MetricResult) -> str:
    """The answer's text for a computed metric (headline = the last step, then the steps and the cited inputs),
    or the abstention saying which inputs are missing."""
    m = res.metric
    fy = f"FY{res.year}" if res.year else "the latest year"
    if not res.ok:
        out = [f"Not computed: the {m.name} for {fy} needs {m.definition}; the retrieved sections do not contain: "
               + "; ".join(res.missing) + "."]
        if res.note:
            out.append(res.note + ".")
        if res.inputs:
            out.append("Found: " + "; ".join(f"{li.name}, {li.year}: {_fmt(li.value)} ({li.doc}#{li.node_id} line {li.line})"
                                             for li in res.inputs) + ".")
        return "\n".join(out)
    scale = next((li.scale for li in res.inputs if li.scale), "")
    last = res.steps[-1] if res.steps else _fmt(res.value)
    if m.unit == "usd":  # "$9,068 million": the unit of the statements
        lhs, _, rhs = last.rpartition(" = ")
        last = (f"{lhs} = " if lhs else "") + f"${rhs}" + (f" {scale[:-1]}" if scale else "")
    head = f"Computed {m.name} of {res.doc} for {fy}: {last}"
    out = [head, f"Formula: {m.name} = {m.definition}."]
    if len(res.steps) > 1:
        out.append("Steps: " + "; ".join(res.steps[:-1]) + ".")
    out.append(f"Inputs ({_scale_words(scale)}), each from the column {res.year} or {res.year - 1} of a primary "
               "statement:" if any(li.year != res.year for li in res.inputs) else
               f"Inputs ({_scale_words(scale)}), column {res.year}:")
    for li in res.inputs:
        v = abs(li.value) if li.concept in OUTFLOWS else li.value
        shown = f"{_fmt(v)}" + (f" (written ({_fmt(abs(li.value))}), an outflow)" if li.value < 0 and li.concept in OUTFLOWS
                                else "")
        out.append(f"- {li.name}, {li.year}: {shown}, row \"{li.label}\" in {li.breadcrumb}, "
                   f"line {li.line} (ID: {li.node_id})")
    return "\n".join(out)


def _scale_words(scale: str) -> str:
    return f"$ {scale}" if scale else "units as stated in the statements"
