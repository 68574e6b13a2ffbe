"""Questions that ask WHICH one (a segment, a region, an instrument), and questions asking a formula ppkit does
not compute: answered by naming one, or by saying what is not determined, never by a total or another figure.

* :func:`selects` reads whether a question asks which one of several ("Which segment had the highest net
  revenue?", "Which of the company's regions ..."), not which year or date.
* :func:`which_block` answers, in this order: the securities registered under Section 12(b) (the cover page's
  list); the cash-flow activity that brought in (used) the most cash (the statement's totals); the part of a
  retrieved table with the highest or lowest value, or change, asked ("the highest net revenue", "the biggest
  drop", "performed the best"), stated with its figure, period, share of its group's total and the runner-up;
  the sentence saying what a question with no superlative asks of the one ("which segment will be presented as
  discontinued"). A table's rows are candidates only when they are the parts asked among: of the kind asked
  (the table names it) or all the parts of one total, none naming the measure or being a statement's line
  items, the table of the measure asked and not broken down by another kind. Where anything is ambiguous (a tie,
  mixed units, groups or a year's columns the question does not choose among, percent against amount) no one
  is named: :func:`not_determined` says which one is not determined and what the sources show instead (kind
  ``inputs``), and never states a total as the answer.
* :func:`uncomputed_formula` reads a question that defines or names a formula the offline metrics do not
  compute (a day count, a CAGR, a multi-year average): its block says so (kind ``not_found``) rather than
  quoting a passage that does not answer it.

The rules are general wording, never a particular question's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.ids import breadcrumb_titles
from ..core.text import clip, stems
from ..retrieval.metric_statements import statement_kinds
from ..retrieval.types import Section
from ..retrieval.metric_table import UNSUPPORTED
from .asked import Asked
from .block import MAX_CHARS, AnswerBlock, _num, cite_line
from .passages import Passage, render_row, section_passages
from .quantity import _fmt, _latest, _plain, _year_col
from .metrics import _PART_YEAR, _Book
from .statement_rows import cell_value

__all__ = ["selects", "which_block", "not_determined", "uncomputed_formula"]

# "which segment", "which of JPM's business segments", "which one", "which type of debt"; not "which year"
_WHICH = re.compile(r"\bwhich\b(?!\s+(?:years?|dates?|quarters?|months?|periods?|days?|fiscal)\b)", re.I)
# two named things compared ("X vs Y: which grew faster?"): the comparison's own answer, not a pick among many
_BETWEEN = re.compile(r"\b(?:vs\.?|versus|compar\w*|between)\s", re.I)
_HIGH = re.compile(r"\b(?:highest|largest|biggest|greatest|most|top|maximum|best)\b", re.I)
_LOW = re.compile(r"\b(?:lowest|smallest|least|fewest|minimum|worst)\b", re.I)
# the change asked: a fall (the lowest change) or a rise (the highest)
_DROP = re.compile(r"\b(?:drop(?:ped|s)?|declin(?:e[sd]?|ing)|decrease[sd]?|fell|fall(?:s|ing)?|shr[ua]nk|"
                   r"dragged\s+down|weigh(?:ed|s)?\s+on|held\s+back|hurt|contract(?:ed|ion))\b", re.I)
_GROW = re.compile(r"\b(?:gr[eo]w(?:th|n|s)?|increase[sd]?|rose|rise|risen|expan(?:d|ded|sion))\b", re.I)
_PERFORM = re.compile(r"\bperform(?:ed|ance|s)?\b", re.I)
_DIRECTION_WORDS = "highest largest biggest greatest most top maximum best lowest smallest least fewest minimum worst"
_DIRECTION_STEMS = frozenset(stems(_DIRECTION_WORDS))
# "the highest net revenue in 2021": the measure, up to a preposition or the end of the clause
_MEASURE = re.compile(r"\b(?:%s)\s+(?P<m>(?:[\w&'’-]+\s+){0,3}?[\w&'’-]+)\s*(?=\b(?:in|for|during|among|of|as|at|on|"
                      r"from|within|between|by|over|than|that|to|and|or)\b|[?,.(]|$)" % _DIRECTION_WORDS.replace(" ", "|"),
                      re.I)
# the kind asked: "which (of the company's) (business) segments had", "among all of the derivative instruments ... which"
_KIND_AFTER = re.compile(r"\bwhich\s+(?:of\s+(?:the\s+|its\s+|their\s+)?(?:[\w.&-]+['’]s?\s+)?)?(?P<k>(?:[\w-]+\s+){0,3}?"
                         r"[\w-]+?)\s+(?:had|has|have|was|were|is|are|brought|received|performed|will|did|does|"
                         r"generated|contributed|saw|experienced|showed|grew|declined|dropped|fell)\b", re.I)
_KIND_AMONG = re.compile(r"\bamong\s+(?:all\s+)?(?:of\s+)?(?:the\s+|its\s+)?(?P<k>(?:[\w-]+\s+){0,4}?[\w-]+?)"
                         r"(?:\s+(?:that|which|it|the)\b|,)", re.I)
_GENERIC_KIND = frozenset(stems("one type kind company company's business"))
# the cash-flow activities a question names, and the statement rows that total them
_ACTIVITY_WORD = re.compile(r"\b(operat(?:ing|ions)|investing|financing)\b", re.I)
_ACTIVITY_ROW = re.compile(r"^(?:net |total )?cash(?: flows?)?\s+(?:\(?(?:provided|used|generated|received|from)\)?\s*"
                           r"(?:\((?:used|provided)\)\s*)?(?:by|in|from|for)?\s*(?:\(?(?:used in|provided by)\)?\s*)?)?"
                           r"(?:the\s+)?(?P<a>operating activities|operations|investing activities|financing activities)\b")
# cash going out, with its superlative ("used the most cash", "spent the least"): the question's direction is the flow's
_OUTFLOW = re.compile(r"\b(?:used|uses|use|spent|spends|spend|consumed|consumes|burned|burnt|lost|loses)\s+(?:the\s+)?"
                      r"(most|least)\b", re.I)
_PART_OF_ACTIVITY = re.compile(r"\bdiscontinued\b|\bcontinuing\b", re.I)
# the securities registered on an exchange: the cover page's Section 12(b) list, up to the 12(g) line or the first
# check-mark question; a debt class is a rate and "Notes due <year>" (or debentures, bonds)
_REGISTERED_Q = re.compile(r"\bregistered\b.*\bexchange\b|\bsection\s+12\s*\(\s*b\s*\)", re.I | re.S)
_DEBT_Q = re.compile(r"\bdebt\b|\bnotes?\b|\bbonds?\b|\bdebentures?\b", re.I)
_SECTION_12B = re.compile(r"securities\s+registered\s+pursuant\s+to\s+section\s+12\s*\(\s*b\s*\)\s+of\s+the\s+act\s*:?",
                          re.I)
_LIST_END = re.compile(r"securities\s+registered\s+pursuant\s+to\s+section\s+12\s*\(\s*g|indicate\s+by\s+check\s+mark",
                       re.I)
_DEBT_CLASS = re.compile(r"(?:\d+(?:\.\d+)?\s?%|floating[- ]rate)\s+(?:[A-Z][\w-]*\s+){0,3}(?:notes|debentures|bonds)\s+due\s+(?:\w+\s+)?"
                         r"(?:\d{1,2},?\s+)?(?:19|20)\d\d", re.I)
_DEBT_WORD = re.compile(r"\b(?:notes|debentures|bonds)\b", re.I)
_MONTH_STEMS = frozenset(stems("january february march april may june july august september october november december "
                               "onward onwards"))
# a primary statement's line items (a table of them holds no segments, regions or instruments to pick among)
_LINE_ITEM = re.compile(r"\b(?:revenues?|net sales|sales|income|expenses?|profit|margin|costs? of|earnings|ebitd?a?r?|"
                        r"assets|liabilities|equity|cash flows?|depreciation|amortization|provision|taxes|"
                        r"capital expenditures?)\b", re.I)
_LINE_ITEM_STEMS = frozenset(stems("revenue sales income expense profit margin cost earnings asset liability equity "
                                   "cash depreciation amortization provision tax expenditure"))
# kinds a table of them names (its title or caption says "segment", "geographic", "region")
_NAMED_KINDS = frozenset(stems("segment segments region regions regional geographic geography geographical country "
                               "countries area areas"))
_TOTAL_STEMS = frozenset(stems("total subtotal"))
# words of a change asked, no measure of their own ("the biggest drop in revenues": drop)
_CHANGE_STEMS = frozenset(stems("drop drops decline declines decrease increase growth change fall rise performance "
                                "performer"))
# what a table breaks its whole down by ("Sales by major product", "revenue by geographic area")
_BY_KIND = re.compile(r"\bby\s+((?:[\w-]+\s+)?[\w-]+)", re.I)
_KIND_WORDS = frozenset(stems("segment segments region regions geographic geography country countries area areas "
                              "product products category categories brand brands channel channels customer customers "
                              "instrument instruments division divisions"))
# words of a measure too plain to tell one table from another ("net sales": sales tells)
_PLAIN_MEASURE = frozenset(stems("net total gross value values amount amounts percentage percent"))
# the part of a year asked: a half (six months) or a quarter (three months)
_HALF = re.compile(r"\bH[12]\b|\b(?:first|second)\s+half\b|\bsix\s+months\b|\bhalf[- ]year", re.I)
_QUARTER = re.compile(r"\bQ[1-4]\b|\bQ[1-4]\s?(?:FY)?\s?'?\d{2,4}\b|\b(?:19|20)\d\dQ[1-4]\b|\bquarter|"
                      r"\bthree\s+months\b|\b[1-4]Q\s?\d{2}", re.I)
# a change asked in percent, or in amount
_PERCENT_ASKED = re.compile(r"\bpercent(?:age)?\b|%|\brate\b", re.I)
_AMOUNT_ASKED = re.compile(r"\b(?:in\s+dollars|dollar\s+(?:amount|terms)|absolute|in\s+(?:\$|usd))", re.I)
# qualifiers of a total that keep its measure the one asked ("Adjusted EBITDAR", "Total net revenue")
_QUALIFIERS = frozenset(stems("adjusted net gross consolidated reported segment segments business total combined "
                              "company worldwide"))
# measures stated in percent: a table of amounts does not give them
_RATE_MEASURE = frozenset(stems("margin margins rate rates ratio percentage share yield"))
_CHANGE_HEAD = re.compile(r"\bchange\b|%|\bcomparable\b|\bgrowth\b|\bincrease\b|\bdecrease\b|\bvs\.?\b", re.I)
_TOTAL = re.compile(r"^\s*(?:total|subtotal|sum|net total|consolidated)\b|\btotal\s*$", re.I)
# "DPO is defined as: ...", "Days payable outstanding (DPO) is defined as"
_DEFINED = re.compile(r"(?P<name>\b[A-Za-z][\w&/ -]{1,60}?)\s*(?:\((?P<abbr>[A-Za-z&/ ]{2,12})\))?\s+is\s+defined\s+as\b",
                      re.I)


def selects(question: str, asked: Asked) -> bool:
    """Whether ``question`` asks which one of several (a segment, a region, an instrument), not a yes/no.

    >>> from ppkit.answer.asked import asked_type
    >>> q = "Which of the company's segments had the highest net revenue in 2021?"
    >>> selects(q, asked_type(q)), selects("Which year had the most sales?", asked_type("Which year had the most sales?"))
    (True, False)
    >>> selects("Compare growth in A vs B. Which grew faster?", asked_type("Compare growth in A vs B. Which grew faster?"))
    False
    """
    return not asked.yes_no and bool(_WHICH.search(question)) and not _BETWEEN.search(question)


def _direction(question: str) -> tuple[bool, bool] | None:
    """(high, by_change) of a superlative question: the highest (True) or lowest (False) value, of the values
    themselves or of their change; None when the question names no one direction. A drop, a decline, the worst
    performance is the lowest change (the smallest drop the highest); growth, the best performance the highest."""
    drop, grow = bool(_DROP.search(question)), bool(_GROW.search(question))
    high, low = bool(_HIGH.search(question)), bool(_LOW.search(question))
    if drop:  # "the biggest drop", "dragged down growth": the lowest change; "the smallest decline": the highest
        return (low and not high), True
    if grow:
        return not (low and not high), True
    if _PERFORM.search(question) and high != low:  # "performed the best", "the worst topline performance"
        return high, True
    if high == low or drop or grow:
        return None
    return high, False


def _measure(question: str) -> set[str]:
    """Stems of the measure a superlative names ("the highest net revenue in 2021": net, revenu); the rows of a
    table chosen among never name it (such rows are the measure's own line items, not the parts compared)."""
    m = _MEASURE.search(question)
    return set(stems(m.group("m"))) - _DIRECTION_STEMS if m else set()


def _kind(question: str) -> set[str]:
    """Stems of the kind of thing asked ("which geographic region": geograph, region; "among all of the
    derivative instruments ..., which one": deriv, instrument)."""
    found = [m.group("k") for rx in (_KIND_AFTER, _KIND_AMONG) if (m := rx.search(question))]
    return set(stems(" ".join(found))) - _GENERIC_KIND


@dataclass(frozen=True)
class _Cand:
    """One part of a table's whole: its row, the value compared, and the row's value(s) it was computed from."""

    row: Passage
    value: float
    shown: str  # the value as the block states it, with unit and period
    cur: float | None = None  # a change's two values: the asked year's and the year before's
    prev: float | None = None


def _tables(sections: list[Section]) -> list[list[Passage]]:
    """The tables of ``sections`` with a column header line (rows grouped by it), best ranked section first."""
    out: dict[tuple, list[Passage]] = {}
    for s in sections:
        for p in section_passages(s):
            if p.kind == "row" and p.header_line and (p.row_label or p.label).strip():
                out.setdefault((s.section_id, p.header_line), []).append(p)
    return list(out.values())


def _totals(rows: list[Passage], col: int) -> dict[int, tuple[int, ...]]:
    """Positions of ``rows`` that total rows above them in column ``col`` -> the positions of the parts each totals:
    a "Total ..." row or a row equal to the sum of the parts since the last total (a group's), or to the sum of every
    part above it (the table's grand total), within rounding."""
    out: dict[int, tuple[int, ...]] = {}
    parts: list[int] = []  # the current group's parts
    every: list[int] = []  # every part so far
    vals: dict[int, float] = {}

    def close(v: float, idx: list[int]) -> bool:
        return abs(v - sum(vals[j] for j in idx)) <= max(0.005 * abs(v), 0.6 * len(idx))

    for i, p in enumerate(rows):
        v = cell_value(p.values[col]) if col < len(p.values) else None
        if v is None:
            continue
        vals[i] = v
        named = bool(_TOTAL.search(p.row_label or p.label))
        if len(parts) >= 2 and (named or close(v, parts)):
            out[i], parts = tuple(parts), []
        elif out and len(every) >= 2 and close(v, every):
            out[i], parts = tuple(every), []
        elif named:
            out[i], parts = tuple(parts), []
        else:
            parts.append(i)
            every.append(i)
    return out


def _groups(totals: dict[int, tuple[int, ...]]) -> dict[int, tuple[int, ...]]:
    """The totals of groups (not the grand total of all parts) with two parts or more."""
    grand = {t for t, ps in totals.items() if any(set(o) < set(ps) for o in totals.values())}
    return {t: ps for t, ps in totals.items() if t not in grand and len(ps) >= 2}


def _lead(head: Passage) -> str:
    """The prose just above a table (up to three lines: "The following table sets forth the notional amounts ...")."""
    s = head.section
    numbers = s.line_numbers or tuple(range(s.line_start, s.line_start + s.text.count("\n") + 1))
    lines = s.text.split("\n")
    at = next((i for i, n in enumerate(numbers) if n == head.header_line), None)
    out: list[str] = []
    for line in reversed(lines[:at] if at is not None else []):
        if line.strip().startswith("|") or len(out) >= 3:
            break
        if line.strip():
            out.append(line)
    return " ".join(reversed(out))


def _unit(cells: list[str], p: Passage) -> str:
    """"%" when every cell is a percent, the table's scale word when none is, "?" when mixed."""
    pct = {"%" in c for c in cells}
    if pct == {True}:
        return "%"
    return "?" if len(pct) > 1 else (f" {p.units[:-1]}" if p.units and not p.per_share else "")


def _show(v: float, unit: str, money: bool) -> str:
    if unit == "%":
        return f"{_num(v)}%"
    return f"{'-' if v < 0 else ''}{'$' if money else ''}{_fmt(abs(v))}{unit}"


def _written(cell: str) -> str:
    """A change as the table writes it, a bracket as a minus: "(6.4)%" -> "-6.4%", "9.0 %" -> "9.0%"."""
    c = re.sub(r"\s+", "", cell)
    m = re.fullmatch(r"\((.+)\)(%?)", c)
    return f"-{m.group(1)}{m.group(2)}" if m else c


def _period_name(header: str) -> str:
    h = re.sub(r"\((?:in|\$ in|dollars in)[^)]*\)", "", header, flags=re.I).strip()
    return f"in {h}" if re.fullmatch(r"(?:fy\s*)?\d{4}", h, re.I) else f"at {h}" if h else ""


def _pct_change(cur: float, old: float) -> float | None:
    return (cur - old) / abs(old) * 100 if old else None


def _column(head: Passage, year: int | None, part: str) -> int | None:
    """The column of ``year``: its one column, or, when the year heads several (a quarter's and the year to date's,
    or one per measure), the first for a quarter asked, the second for a half; None for a whole year asked (the
    columns may be of other measures)."""
    if year is None:
        return None
    cols = [i for i, h in enumerate(head.header) if re.findall(r"(?<!\d)((?:19|20)\d\d)(?!\d)", h) == [str(year)]
            and not re.search(r"\bvs\b|%|change|compared", h, re.I)]
    if len(cols) <= 1:
        return _year_col(head, year)
    return cols[0] if part == "quarter" else cols[1] if part == "half" else None


def _candidates(table: list[Passage], year: int | None, by_change: bool, part: str = "",
                basis: str = "") -> tuple[list[_Cand], str, int] | None:
    """The parts of ``table`` (no total rows) with the value compared: the asked year's value, or its change from
    the year before (in percent when every part's base is positive, else in amount; from the table's change column
    when it gives no two years), and a word for what was compared; None when the table gives no such column, the
    values' units differ, or a percent is asked (``basis``) of a part with no positive base. ``part``: the part of a
    year asked ("quarter", "half")."""
    head = table[0]
    col = _column(head, year, part)
    old = _column(head, year - 1, part) if year is not None else None
    change_col = next((i for i, h in enumerate(head.header) if _CHANGE_HEAD.search(h)), None)
    if not by_change and col is None:
        return None
    if by_change and (col is None or old is None) and change_col is None:
        return None
    ref_col = col if col is not None else change_col
    totals = _totals(table, ref_col)
    money = any("$" in v for p in table for v in p.values[ref_col:ref_col + 1])
    out, pairs = [], []
    for i, p in enumerate(table):
        if i in totals or _TOTAL.search(p.row_label or p.label):
            continue
        if by_change and col is not None and old is not None:
            cur, prev = (cell_value(p.values[c]) if c < len(p.values) else None for c in (col, old))
            if cur is not None and prev is not None:
                pairs.append((p, cur, prev, _unit([p.values[col], p.values[old]], p)))
        else:
            c = col if not by_change else change_col
            v = cell_value(p.values[c]) if c < len(p.values) else None
            if v is not None:
                out.append(_Cand(p, v, p.values[c]))
    if pairs:
        if {u for *_, u in pairs} & {"?", "%"} or len({u for *_, u in pairs}) > 1:
            return None  # mixed units, or percents (whose change is in points, not asked here)
        # a percent change only from positive bases (from 100 to -473 is no "-573%"): else the change in amount
        pct = all(prev > 0 and cur >= 0 for _, cur, prev, _ in pairs) and basis != "amount"
        if basis == "percent" and not pct:
            return None
        for p, cur, prev, unit in pairs:
            was = (f"{_show(cur, unit, money)} {_period_name(head.header[col])} vs {_show(prev, unit, money)} "
                   f"{_period_name(head.header[old])}")
            moved = f"{'up' if cur >= prev else 'down'} {_show(abs(cur - prev), unit, money)}"
            rate = f"{_num(_pct_change(cur, prev))}%" if prev > 0 and cur >= 0 else ""
            # both the percent and the amount stated, the one compared first
            out.append(_Cand(p, _pct_change(cur, prev), f"{rate}, {moved} ({was})", cur, prev) if pct
                       else _Cand(p, cur - prev, f"{moved}{', ' + rate if rate else ''} ({was})", cur, prev))
        return (out, "change", ref_col) if len(out) >= 2 else None
    c = change_col if by_change else col
    unit = _unit([x.row.values[c] for x in out], head)
    if unit == "?" or len(out) < 2:
        return None
    out = [_Cand(x.row, x.value, f"{_written(x.row.values[c])} ({head.header[c]})" if by_change
                 else f"{_show(x.value, unit, money)} {_period_name(head.header[c])}".strip()) for x in out]
    return out, "change" if by_change else "value", ref_col


def _fits(table: list[Passage], cands: list[_Cand], kind: set[str], measure: set[str], ref_col: int,
          whole: bool) -> bool:
    """Whether ``table``'s rows are the parts asked among: none names the measure compared and few are a
    statement's line items (revenue, income, expenses: then they are the measure's or a statement's lines, not the
    parts), and the table is of the kind asked (its titles, caption or header name it) or, when ``whole`` (a second
    pass), in a table that is no primary statement, they are all the parts of its one total row, and the table is
    of the measure asked when segments or regions are asked (a table of them names them or their measure)."""
    labels = [c.row.row_label or c.row.label for c in cands]
    if any(set(stems(label)) & measure for label in labels):
        return False
    if not kind & _LINE_ITEM_STEMS and 3 * sum(bool(_LINE_ITEM.search(label)) for label in labels) > len(labels):
        return False
    head = table[0]
    context = set(stems(" ".join([*breadcrumb_titles(head.section.breadcrumb)[1:], head.caption, head.header_text,
                                  " ".join(head.header)])))
    lead = _lead(head)
    said = context | set(stems(lead + " " + " ".join(p.label for p in table)))
    by = {t for m in _BY_KIND.finditer(f"{head.caption} {lead}") for t in stems(m.group(1))} & _KIND_WORDS
    if kind & _KIND_WORDS and by and not by & kind:
        return False  # "sales by major product" where segments are asked
    own = measure - _CHANGE_STEMS - _PLAIN_MEASURE
    if own and not own & said:
        return False  # a table of another measure (property by region where revenue is asked)
    if not whole:  # the table names the kind asked, and its lead no other kind ("for the major countries")
        other = set(stems(f"{head.caption} {lead}")) & _KIND_WORDS
        return bool(kind & context) and not (kind & _KIND_WORDS and other and not other & kind)
    if kind & _NAMED_KINDS and not measure & context:  # segments or regions: in a table of the measure asked
        return False
    # the parts of one whole (they add up to its one total row), as a segment's product mix is; a statement's many
    # line items in several groups (revenues, expenses) are not
    wholes = [ps for ps in _totals(table, ref_col).values() if len(ps) >= 2]
    return len(wholes) == 1 and len(wholes[0]) == len(cands) and not statement_kinds(head.section)


def _share(table: list[Passage], row: Passage, col: int) -> str:
    """", 82.0% of Short-term investments ($507,726 thousand)": the row's share of the total of its group (else of
    the table's total)."""
    total = _total_of(table, row, col)
    if total is None:
        return ""
    v, t = cell_value(row.values[col]), cell_value(total.values[col])
    if not v or not t or v < 0 or t <= 0 or "%" in row.values[col]:
        return ""
    money = "$" in total.values[col] or "$" in row.values[col]
    return f", {_num(v / t * 100)}% of {total.row_label or total.label} ({_show(t, _unit([total.values[col]], total), money)})"


def _within_group(table: list[Passage], cands: list[_Cand], col: int, asked_terms: set[str]) -> list[_Cand] | None:
    """The candidates of a table of groups (two or more group totals: Americas and APAC, cash equivalents and
    short-term investments): the parts of the group the question names; None when it names none (leaves or groups?
    the question does not say)."""
    groups = _groups(_totals(table, col))
    for t, ps in groups.items() if len(groups) >= 2 else ():
        name = set(stems(table[t].row_label or table[t].label)) - _TOTAL_STEMS
        if name and name <= asked_terms:
            rows = {id(table[j]) for j in ps}
            return [c for c in cands if id(c.row) in rows]
    labels = [(c.row.row_label or c.row.label).casefold() for c in cands]
    # groups the question does not name, or one name twice (a part's sales, then its income; "U.S." per franchise)
    return None if len(groups) >= 2 or len(set(labels)) < len(labels) else cands


def _total_of(table: list[Passage], row: Passage, col: int) -> Passage | None:
    """The total row of ``row``'s group (the smallest total it is a part of), or None."""
    i = table.index(row)
    having = [(len(ps), t) for t, ps in _totals(table, col).items() if i in ps and len(ps) >= 2]
    return table[min(having)[1]] if having else None


def _narrower(total: Passage | None, asked_terms: set[str]) -> bool:
    """Whether a table's total names a measure narrower than the one asked ("Total Fios revenue" where revenue is
    asked): words the question does not use, beyond plain qualifiers (total, adjusted, net, segment)."""
    if total is None:
        return False
    return bool(set(stems(total.row_label or total.label)) - asked_terms - _TOTAL_STEMS - _QUALIFIERS)


def _percent_or_amount(cands: list[_Cand], high: bool) -> _Cand | None:
    """The part whose change is the highest (lowest) both in percent (of a positive base) and in amount, or None
    when the two name different parts (a small part's steep fall, a large part's bigger one): the question does not
    say which it asks. Values that are no change of two years: the one picked by them."""
    pick = max if high else min
    if any(c.cur is None for c in cands):
        return pick(cands, key=lambda c: c.value)
    based = [c for c in cands if c.prev > 0]
    by_amount = pick(cands, key=lambda c: c.cur - c.prev)
    return by_amount if not based or pick(based, key=lambda c: _pct_change(c.cur, c.prev)) is by_amount else None


def _pick(question: str, asked: Asked, sections: list[Section], q_terms: set[str]) -> tuple[AnswerBlock, list[Passage]] | None:
    """The block naming the part of a retrieved table with the highest (lowest) value or change asked."""
    d = _direction(question)
    if d is None:
        return None
    high, by_change = d
    kind, measure = _kind(question) & q_terms if q_terms else _kind(question), _measure(question)
    tables = _tables(sections)
    part = "half" if _HALF.search(question) else "quarter" if _QUARTER.search(question) else ""
    basis = "percent" if _PERCENT_ASKED.search(question) else "amount" if _AMOUNT_ASKED.search(question) else ""
    # first the tables of the kind asked, in rank order; then any that is all the parts of one total
    for table, whole in [(t, False) for t in tables] + [(t, True) for t in tables]:
        year = _latest(table[:1], asked.years)
        got = _candidates(table, year, by_change, part, basis)
        if got is None:
            continue
        cands, what, ref_col = got
        if not _fits(table, cands, kind, measure, ref_col, whole):
            continue
        asked_terms = set(stems(question))
        cands = _within_group(table, cands, ref_col, asked_terms)
        if cands is None or len(cands) < 2 or not basis and _percent_or_amount(cands, high) is None:
            continue
        order = sorted(cands, key=lambda c: c.value, reverse=high)
        best, second = order[0], order[1]
        total = _total_of(table, best.row, ref_col)
        if best.value == second.value or _narrower(total, asked_terms):
            continue  # a tie names no one; a total of a narrower measure is another question's
        parts = _totals(table, ref_col).get(table.index(total), ()) if total is not None else ()
        if len(cands) < 3 and len(parts) != len(cands):
            continue  # two rows of no whole are too little to pick among
        if measure & _RATE_MEASURE and not by_change and "%" not in best.row.values[ref_col]:
            continue  # a margin or rate asked, amounts given
        word = ("highest" if high else "lowest") + (" change" if by_change else "")
        share = "" if by_change else _share(table, best.row, ref_col)
        text = (f"{_plain(best.row)}: {best.shown}{share}, the {word} of the table's {len(cands)} parts; next: "
                f"{_plain(second.row)}, {second.shown}.")
        cites = tuple(dict.fromkeys(cite_line(p.section, ln) for p in (best.row, second.row) for ln in p.lines()))
        return AnswerBlock(clip(text, MAX_CHARS), "figure", cites), [best.row, second.row]
    return None


def _activity(label: str) -> str | None:
    """The cash-flow activity a statement row totals ("Net cash provided by operating activities": operating;
    "Cash provided (used) by operations": operating), or None."""
    m = _ACTIVITY_ROW.match(label.casefold().replace("’", "'"))
    if m is None or _PART_OF_ACTIVITY.search(label):
        return None
    return "operating" if m.group("a").startswith("operat") else m.group("a").split()[0]


def _activities(question: str, asked: Asked, sections: list[Section]) -> tuple[AnswerBlock, list] | None:
    """The block of a question asking which of the cash-flow activities it names (operating, investing,
    financing) brought in the most (or used the most) cash: their totals in the cash flow statement for the asked
    (or latest) year, the one picked first, the others after it; None when the question names fewer than two
    activities or the statement does not give each named one for one year."""
    named = {"operating" if w.casefold().startswith("operat") else w.casefold()
             for w in _ACTIVITY_WORD.findall(question)}
    if len(named) < 2:
        return None
    out = _OUTFLOW.search(question)  # "used the most cash": the lowest net flow; "lost the least": the highest
    high = out.group(1).casefold() == "least" if out else bool(_HIGH.search(question)) or not _LOW.search(question)
    book = _Book(sections, part_year=bool(_PART_YEAR.search(question)))
    found: dict[str, tuple] = {}  # activity -> (section, line, {year: value})
    for sec in book.by_kind.get("cash_flows", []):
        for ln, cells, years in book.rows(sec):
            if not cells or not years:
                continue
            act = _activity(re.sub(r"\s+", " ", cells[0].replace("*", "")).strip())
            vals = [v for v in (cell_value(c) for c in cells[1:] if c not in ("$", "%")) if v is not None]
            if act in named and act not in found and len(vals) == len(years):
                found[act] = (sec, ln, dict(zip(years, vals)))
    if set(found) != named:
        return None
    year = max(asked.years) if asked.years else max(set.intersection(*(set(f[2]) for f in found.values())),
                                                      default=None)
    if year is None or any(year not in f[2] for f in found.values()):
        return None
    order = sorted(found, key=lambda a: found[a][2][year], reverse=high)
    if found[order[0]][2][year] == found[order[1]][2][year]:
        return None

    def said(a: str) -> str:
        sec = found[a][0]
        scale = book.scale(sec)
        return _show(found[a][2][year], f" {scale[:-1]}" if scale else "", True)

    word = "brought in the most cash" if high else "used the most cash"
    rest = "; ".join(f"{a}: {said(a)}" for a in order[1:])
    text = f"{order[0].capitalize()} activities {word} in {year}: {said(order[0])} ({rest})."
    cites = tuple(cite_line(found[a][0], found[a][1]) for a in order)
    return AnswerBlock(clip(text, MAX_CHARS), "figure", cites), []


def _registered(question: str, sections: list[Section]) -> tuple[AnswerBlock, list] | None:
    """The block of a question asking which securities are registered on an exchange: the classes the cover
    page lists under "Securities registered pursuant to Section 12(b)" (only the debt classes when debt is asked:
    notes, debentures, bonds), or "None" when the list has none of them; None when no retrieved section holds the
    list."""
    if not _REGISTERED_Q.search(question):
        return None
    debt = bool(_DEBT_Q.search(question))
    for sec in sections:
        m = _SECTION_12B.search(sec.text)
        if m is None:
            continue
        listed = _LIST_END.split(sec.text[m.end():m.end() + 3000], maxsplit=1)[0]
        plain = re.sub(r"\s+", " ", re.sub(r"^\s*\|?[\s|:-]*-{3}[\s|:-]*$|\|", " ", listed, flags=re.M)).strip(" :")
        classes = [re.sub(r"\s+", " ", c.group(0)).strip() for c in _DEBT_CLASS.finditer(listed)]
        first = sec.text[: m.start()].count("\n")
        last = first + sec.text[m.start(): m.end() + len(listed)].rstrip().count("\n")
        numbers = sec.line_numbers or tuple(range(sec.line_start, sec.line_start + sec.text.count("\n") + 1))
        cite = (cite_line(sec, numbers[first], numbers[min(last, len(numbers) - 1)]),)
        what = "debt securities" if debt else "securities"
        if not plain:
            continue  # the heading with no list after it (cut at the section's end): no "None" from what is not here
        if debt and not classes:
            if _DEBT_WORD.search(listed):
                continue  # a debt class written in a way not read here: no "None"
            text = (f"None: the cover page lists no {what} under Section 12(b) (registered on an exchange); it lists: "
                    f"{plain}")
            return AnswerBlock(clip(text, MAX_CHARS), "passage", cite), []
        shown = "; ".join(dict.fromkeys(classes)) if debt else plain
        text = f"The {what} registered under Section 12(b) (on an exchange), per the cover page: {shown}."
        return AnswerBlock(clip(text, MAX_CHARS), "passage", cite), []
    return None


def _named_in_passage(question: str, asked: Asked, ranked: list) -> tuple[AnswerBlock, list] | None:
    """The block of a "which one" question that asks no superlative and no figure ("Which segment will be
    presented as a discontinued operation?"): the best ranked sentence that states most of what the question
    says of the one asked (the words after its verb, dates and figures aside), quoted; None when none does."""
    m = _KIND_AFTER.search(question)
    if m is None or asked.kind not in ("other", "name", "list") or _direction(question) is not None:
        return None
    said = {t for t in stems(question[m.end():]) if not t.isdigit() and t not in _MONTH_STEMS}
    if len(said) < 2:
        return None
    for _, p in ranked[:3]:
        if p.kind == "row":
            continue
        if len(said & set(stems(p.text))) >= 0.5 * len(said):
            return AnswerBlock(clip(p.text, MAX_CHARS), "passage", (cite_line(p.section, p.line, p.line_end),)), [p]
    return None


def which_block(question: str, asked: Asked, ranked: list, q_terms: set[str] = frozenset(),
                sections: list[Section] | None = None) -> tuple[AnswerBlock, list[Passage]] | None:
    """The answer block of a "which one" question (:func:`selects`) asking a superlative: among the parts of a
    retrieved table (its rows, no total), the one with the highest or lowest value in the asked (or latest)
    year, or the highest or lowest change when the question asks a drop, growth or performance, stated with its
    figure and period and the runner-up; None when none can be picked (then :func:`not_determined`, never a total
    as the answer). The table's rows must be of the kind asked (the table's title, caption or header names it,
    or they add up to its total row) and none may name the measure compared (then they are its line items).

    Args:
        question: the question.
        asked: what it asks (:func:`ppkit.answer.asked.asked_type`).
        ranked: the ranked passages (their sections are read when ``sections`` is None).
        q_terms: the question's stems without the company's names (the kind asked is read among them).
        sections: the retrieved sections, best first.

    Returns:
        (block, the rows it quotes) or None.
    """
    if sections is None:
        sections = list({p.section.section_id: p.section for _, p in ranked}.values())
    return (_registered(question, sections) or _activities(question, asked, sections)
            or _pick(question, asked, sections, set(q_terms)) or _named_in_passage(question, asked, ranked))


def not_determined(asked: Asked, ranked: list) -> tuple[AnswerBlock, list[Passage]]:
    """The block of a "which one" question no row answers: an ``inputs`` block saying which one is not
    determined, with the best passage shown (``not_found`` when no passage was ranked)."""
    best = next((p for _, p in ranked if p.kind != "pair"), None)
    if best is None:
        return AnswerBlock("Not found: no retrieved passage names the one asked for.", "not_found"), []
    shown = render_row(best, asked.years) if best.kind == "row" else best.text
    cites = (tuple(cite_line(best.section, ln) for ln in best.lines()) if best.kind == "row"
             else (cite_line(best.section, best.line, best.line_end),))
    return (AnswerBlock(clip(f"Which one is not determined here; the sources show: {shown}", MAX_CHARS), "inputs",
                        cites), [best])


def uncomputed_formula(question: str) -> str | None:
    """The abstention line of a question asking a formula the offline metrics do not compute (one it defines
    itself over amounts no metric knows, a total over years), or None.

    >>> uncomputed_formula("What is FY2018 CT? CT is defined as: 365 * (average total assets) / (revenue).")
    'Not computed: CT, as the question defines it, is a formula not computed offline; the retrieved sections do not state it.'
    """
    m = _DEFINED.search(question)
    if m is not None:
        name = (m.group("abbr") or m.group("name")).strip()
        name = re.sub(r"^(?:and|the|where|while|with)\s+", "", name, flags=re.I)
        return (f"Not computed: {name}, as the question defines it, is a formula not computed offline; the retrieved "
                "sections do not state it.")
    u = UNSUPPORTED.search(question)
    if u is not None:
        return (f"Not computed: the {u.group(0)} asked is not computed offline; the retrieved sections do not "
                "state it.")
    return None
