"""Passages: the sentences and table rows of the retrieved sections, ranked jointly by what the question asks.

The offline answer block (:func:`ppkit.answer.synth.ExtractiveSynthesizer`) quotes the best passage of
ALL retrieved sections, not the best three of each. This module builds the candidates and ranks them:

* **Candidates** (:func:`section_passages`): prose split into sentences after rejoining a sentence cut by
  a page break (a page number and a "Table of Contents" line between two halves) and never cutting at an
  abbreviation ("Inc.", "U.S.", "No.": :func:`ppkit.core.text.sentences`); a sentence with its
  neighbour; and table rows that hold a value, each with its table's column header line and units
  caption ("(in millions except per share amounts)"). Rows without values (a group label) are never
  quoted, but name the rows under them.
* **What is asked**: :func:`ppkit.answer.asked.asked_type` (an amount, a share, a change, a count, a date,
  a name, a list, yes/no or the drivers of a change), re-exported here.
* **Ranking** (:func:`rank_passages`): question-term overlap weighted by rarity among all candidates,
  the asked type present (a figure with a unit for an amount, a % for a share, a driver phrase for
  "what drove"), the asked year (a row's column, a sentence's words), the section's rank and breadcrumb,
  and boilerplate (:mod:`ppkit.retrieval.boilerplate`) demoted unless asked for.

:func:`render_row` writes a row as a statement ("Net revenue: $86,392 million in 2022 ($79,474 million in
2021)"), the asked year's column first. This module reads text; it computes no figures (that is
:mod:`ppkit.answer.metrics`) and writes no block (:mod:`ppkit.answer.synth`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field, fields
from functools import lru_cache

from ..core.text import sentences, stems
from ..documents.tree import text_heading_line
from ..retrieval.boilerplate import asks_for, boilerplate_kind
from ..retrieval.types import Section
from .asked import Asked, Quantity, asked_quantity, asked_type, quantity_words

__all__ = ["Passage", "Asked", "asked_type", "asked_quantity", "section_passages", "rank_passages", "render_row", "cells",
           "stated_change", "states_change", "other_kind", "prose_figure", "about_quantity"]

# page furniture between the halves of a sentence cut by a page break: "16", "<u>Table of Contents</u>"
_FURNITURE = re.compile(r"^\s*(?:\d{1,3}|[ivxlc]{1,6}|page \d+(?: of \d+)?|\[?(?:<u>)?table of contents(?:</u>)?"
                        r"(?:\]\([^)]*\))?|-{3,}|\*{3,})\s*$", re.I)
_END = re.compile(r"[.!?:;][\"”’)\]*]*$")
_UNITS = re.compile(r"(?:\b(?:in|\$\s*in|dollars in|amounts in)\s+|\(\s*(?:\$\s*)?)(thousands|millions|billions)\b",
                    re.I)
_PER_SHARE = re.compile(r"\bper (?:common |diluted |basic )?share\b|\bper unit\b|\bearnings per\b|\beps\b", re.I)
_YEAR = re.compile(r"(?<![\d,.$])(?:19|20)\d{2}(?![\d,])")
_MONEY = re.compile(r"\$\s?\d|\b\d[\d,.]*\s?(?:thousand|million|billion|trillion)\b|\bUSD\b", re.I)
_PERCENT = re.compile(r"\d\s?%|\bpercent(?:age)?\b", re.I)
_NUMBER = re.compile(r"(?<![\w.])\(?-?\$?\d[\d,]*(?:\.\d+)?%?\)?(?![\w])")
# a sentence that only points elsewhere ("See Note 4 for further information") answers nothing itself
_POINTER = re.compile(r"(?:^|[.!?]\s+)\W*(?:see|refer to)\b|\bfor (?:further|more|additional) (?:information|details|"
                      r"discussion)\b|\bfor an? (?:further |more detailed )?discussion\b", re.I)
_CHANGE_TERMS = frozenset(stems("change increase decrease grew growth decline rose fell"))
_DATE = re.compile(r"\b(?:january|february|march|april|may|june|july|august|september|october|november|december)"
                   r"\s+\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b", re.I)
# the phrases that name the drivers of a change: strong ones say "because", weak ones only point at a cause
_DRIVERS = re.compile(r"\b(?:driven by|due to|attributable to|result(?:ed)? from|as a result of|offset by|because|"
                      r"led by|contributed to|caused by)\b", re.I)
_WEAK_DRIVERS = re.compile(r"\b(?:primarily|reflect(?:s|ed|ing)?|increase in|decrease in|higher|lower)\b", re.I)
_CHANGE = re.compile(r"\b(?:increase[sd]?|decrease[sd]?|grew|growth|decline[sd]?|rose|fell|up|down|change[sd]?)\b",
                     re.I)
_NEGATION = re.compile(r"\b(?:not|no|never|none|neither|nor|without|did not|does not|do not|cannot)\b", re.I)

@dataclass(frozen=True)
class Passage:
    """A quotable piece of a section: a sentence (or two), or a table row with its header and units.

    ``line``..``line_end`` are source lines; for a row, ``header_line`` is its table's column header line
    (0: none), ``header`` the column names aligned to ``values``, ``label`` the row's first cell (with the
    group row above it when the label is short), ``units`` the caption's scale word ("millions").
    """

    section: Section
    line: int
    line_end: int
    text: str  # as quoted: the sentence(s), or the row as written
    kind: str  # "sentence" | "pair" | "row"
    label: str = ""
    values: tuple[str, ...] = ()
    header: tuple[str, ...] = ()
    header_line: int = 0
    header_text: str = ""
    units: str = ""
    per_share: bool = False
    terms: frozenset[str] = field(default=frozenset(), repr=False)
    head_terms: frozenset[str] = field(default=frozenset(), repr=False)  # a row's terms found only in its header
    row_label: str = ""  # a row's own first cell, without the group label ``label`` may start with
    caption: str = ""  # a row's table title (its one-cell header rows) and the prose line just above the table

    def lines(self) -> tuple[int, ...]:
        """The source lines a citation of this passage names (a row's header line first)."""
        return ((self.header_line,) if self.header_line else ()) + (self.line,)


def cells(row: str) -> list[str]:
    """The cells of a pipe row, stripped of Markdown emphasis: ``"| **Net** | $1 |"`` -> ``["Net", "$1"]``."""
    body = row.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") else body
    return [c.strip().strip("*_").strip() for c in body.split("|")]


def _has_value(cell: str) -> bool:
    return bool(re.search(r"\d", cell)) and not _YEAR.fullmatch(cell.strip())


def _is_header(row_cells: list[str]) -> bool:
    """A header row: its column cells (all but the first) name columns: some are filled and none holds a value
    other than a year or a period ("2022", "Change", "Dec 31, 2022"). A row with only its first cell filled is a
    group label, not a header."""
    if len(row_cells) == 1:
        return bool(_YEAR.search(row_cells[0])) and not _has_value(_YEAR.sub("", row_cells[0]))
    vals = [c for c in row_cells[1:] if c]
    # a column name may hold years and dates ("2022 vs. 2021", "December 31, 2022", "Q4 FY22"), never a value
    return bool(vals) and not any(_has_value(_DATE.sub("", _YEAR.sub("", re.sub(r"\b(?:fy|q\d)\s*\d{2,4}\b", "", c,
                                                                                     flags=re.I))))
                                  for c in vals)


def _prose_blocks(lines: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """Paragraphs as (source line, text) pieces; a paragraph cut by a page break (or continued in lower case
    after a blank line) is rejoined."""
    paras: list[list[tuple[int, str]]] = []
    gap_ok = False  # only blank lines and page furniture since the last paragraph line
    furniture = False
    for ln, raw in lines:
        s = raw.strip()
        if not ln:  # a cut in the text sent
            gap_ok = False
            continue
        if not s:
            continue
        if _FURNITURE.match(s):
            furniture = True
            continue
        if s.startswith(("#", "|", "![", "<")) and not text_heading_line(s):  # a title too long for one is text
            gap_ok = furniture = False
            continue
        s = re.sub(r"^(?:[*•-]|\d+[.)]|#{1,6})\s+", "", s)  # a bullet's marker, or that line's "#"s
        prev = paras[-1][-1][1] if paras else ""
        joins = gap_ok and prev and not _END.search(prev) and (s[:1].islower() or furniture)
        if joins:
            paras[-1].append((ln, s))
        else:
            paras.append([(ln, s)])
        gap_ok, furniture = True, False
    return paras


def _sentence_passages(section: Section, para: list[tuple[int, str]]) -> list[Passage]:
    text, starts = "", []
    for ln, piece in para:
        starts.append((len(text), ln))
        text += ("" if not text else " ") + piece
    sents, pos = [], 0
    for sent in sentences(text):
        at = text.find(sent, pos)
        pos = at + len(sent)
        first = max(ln for off, ln in starts if off <= at)
        last = max(ln for off, ln in starts if off < pos)
        sents.append((first, last, sent.strip()))
    out = [Passage(section, a, b, t, "sentence", terms=frozenset(stems(t))) for a, b, t in sents]
    for (a, _, t1), (_, b, t2) in zip(sents, sents[1:]):
        if len(t1) + len(t2) < 400:
            t = f"{t1} {t2}"
            out.append(Passage(section, a, b, t, "pair", terms=frozenset(stems(t))))
    return out


def _row_passages(section: Section, lines: list[tuple[int, str]]) -> list[Passage]:
    out: list[Passage] = []
    i = 0
    while i < len(lines):
        if not lines[i][1].lstrip().startswith("|"):
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j][1].lstrip().startswith("|"):
            j += 1
        table = [(ln, r) for ln, r in lines[i:j] if ln and not set(r.strip()) <= set("|-: ")]
        # the units caption: in the table's header rows or the few lines above it
        above = " ".join(r for _, r in lines[max(0, i - 8): i])
        header_rows = _header_rows([(ln, cells(r)) for ln, r in table])
        m = _UNITS.search(above + " " + " ".join(" ".join(c) for _, c in header_rows))
        units = m.group(1).casefold() if m else ""
        except_ps = bool(m and re.search(r"except\s+(?:for\s+)?per[- ]share", above + " ", re.I))
        head_line = _names_row(header_rows)[0] if header_rows else 0
        head_text = next((r for ln, r in table if ln == head_line), "")
        # the table's title: its one-cell header rows that are no units or period caption ("Russia-Ukraine
        # conflict charges"); its caption adds the prose line just above the table ("... is as follows:")
        title = "; ".join(c[0] for _, c in header_rows if len(c) == 1 and c[0] and not _UNITS.search(c[0])
                          and not _YEAR.search(c[0]))
        prose = [r.strip() for _, r in lines[max(0, i - 4): i] if r.strip() and not r.lstrip().startswith(("|", "#"))]
        caption = " ".join(x for x in (title, prose[-1] if prose else "") if x)
        group = ""
        for ln, r in table[len(header_rows):]:
            c = cells(r)
            label, vals = c[0], c[1:]
            if not any(_has_value(v) for v in vals):
                group = label.rstrip(":") if label else group  # a group label names the rows under it
                continue
            cols = _columns(header_rows, len(c))
            full = f"{group}, {label}" if group and len(label.split()) <= 3 else label
            if not group and title and re.fullmatch(r"total:?", label, re.I):
                full = f"{title}, {label}"  # a bare "Total" is the total of what the table's title names
            per_share = bool(_PER_SHARE.search(full)) and (except_ps or not units)
            own = frozenset(stems(full + " " + " ".join(vals)))  # words in value cells count too (descriptions)
            terms = own | frozenset(stems(" ".join(cols)))
            out.append(Passage(section, ln, ln, r.strip(), "row", full, tuple(vals), tuple(cols), head_line,
                               head_text.strip(), units, per_share, terms, terms - own, label, caption))
        i = j
    return out


def _header_rows(rows: list[tuple[int, list[str]]]) -> list[tuple[int, list[str]]]:
    """A table's leading rows that name its columns or say its units: rows of column names (:func:`_is_header`)
    and one-cell captions ("Year Ended", "(In millions)"). A one-cell row after the last row naming a period or
    the units is not among them: it is the group label of the rows under it ("Net revenue:")."""
    out: list[tuple[int, list[str]]] = []
    for ln, c in rows:
        if len(c) == 1 and not _has_value(_DATE.sub("", _YEAR.sub("", c[0]))) or len(c) > 1 and _is_header(c):
            out.append((ln, c))
        else:
            break
    named = [i for i, (_, c) in enumerate(out) if len(c) > 1 or _YEAR.search(c[0]) or _UNITS.search(c[0])]
    return out[: named[-1] + 1] if named else []


def _names_row(header_rows: list[tuple[int, list[str]]]) -> tuple[int, list[str]]:
    """The header row that names the value columns: the last one naming a year or date in more than one cell
    (a units caption under it names none), else the last header row."""
    dated = [(ln, c) for ln, c in header_rows if len(c) > 1 and sum(bool(_YEAR.search(x)) for x in c) >= 2]
    return dated[-1] if dated else header_rows[-1]


_LABEL_HEAD = re.compile(r"\(|\b(?:millions|thousands|billions|except|dollars|amounts|in)\b", re.I)


def _columns(header_rows: list[tuple[int, list[str]]], width: int) -> list[str]:
    """The name of each value column of a row of ``width`` cells, from the header row nearest the rows (a
    spanning row above it names groups of columns, not columns). A header that starts with a label-column
    name ("(Millions, except percentages)") is aligned left, one that starts with a column (a year) right; one
    with no year and a name for each value column ("Cost of sales | ... | Total" over rows of a label and four
    values) names them in order."""
    names = [""] * (width - 1)
    if not header_rows:
        return names
    c = _names_row(header_rows)[1]
    if len(c) == width - 1 and c[0] and not _LABEL_HEAD.search(c[0]) and not any(_YEAR.search(x) for x in c):
        off = 0  # one name per value column ("Cost of sales | ... | Total"): the label column's is left out
    elif c and c[0] and not _YEAR.search(c[0]) or len(c) == width:
        c = c[1:]  # its first cell names the label column
        off = 0
    else:
        off = max(0, len(names) - len(c))
    for k, name in enumerate(c):
        if 0 <= off + k < len(names):
            names[off + k] = name
    return names


def section_passages(section: Section) -> list[Passage]:
    """Every quotable passage of ``section``: sentences, sentence pairs, and table rows that hold a value."""
    return [Passage(section, *f) for f in _passage_fields(section.text, section.line_numbers, section.line_start)]


_FIELDS = tuple(f.name for f in fields(Passage) if f.name != "section")


@lru_cache(maxsize=512)  # the sections of a document come back question after question; ~40 KB an entry at most
def _passage_fields(text: str, line_numbers: tuple[int, ...], line_start: int) -> tuple[tuple, ...]:
    """The passages of a section's text, each as its fields but the section (they depend on nothing else; a
    section retrieved again, at another rank, gets them bound to it)."""
    raw = text.split("\n")
    lines = list(zip(line_numbers or tuple(line_start + i for i in range(len(raw))), raw))
    out = [p for para in _prose_blocks(lines) for p in _sentence_passages(None, para)] + _row_passages(None, lines)
    return tuple(tuple(getattr(p, name) for name in _FIELDS) for p in out)


def _year_fit(p: Passage, years: tuple[int, ...]) -> float:
    if not years:
        return 1.0
    named = {int(y) for y in _YEAR.findall(p.text + " " + " ".join(p.header))}
    if not named:
        return 1.0
    return 1.25 if named & set(years) else 0.7


def _type_fit(p: Passage, asked: Asked) -> float:
    text = p.text if p.kind != "row" else " ".join(p.values)
    # figures, not years nor small counts and references ("Note 1", "two segments")
    numbers = [n for n in _NUMBER.findall(text) if not _YEAR.fullmatch(n.strip("()$"))
               and not re.fullmatch(r"\d{1,2}", n)]
    money = bool(_MONEY.search(text)) or (p.kind == "row" and bool(p.units) and bool(numbers))
    if asked.kind == "amount":
        return 1.6 if money and (p.kind != "row" or p.units) else 1.4 if money else 1.1 if numbers else 0.5
    if asked.kind == "share":
        return 1.6 if _PERCENT.search(text) else 1.1 if numbers else 0.5
    if asked.kind == "change":
        two = p.kind == "row" and sum(1 for v in p.values if _has_value(v)) >= 2
        return 1.5 if (numbers and (_CHANGE.search(p.text) or two or _PERCENT.search(text))) else 1.0 if numbers else 0.6
    if asked.kind == "count":
        return 1.4 if numbers else 0.6
    if asked.kind == "drivers":
        if p.kind == "row":
            return 0.6
        return 1.6 if _DRIVERS.search(p.text) else 1.1 if _WEAK_DRIVERS.search(p.text) else 0.8
    if asked.kind == "date":
        return 1.5 if _DATE.search(p.text) or _YEAR.search(p.text) else 0.7
    return 0.8 if p.kind == "row" else 1.0


def rank_passages(question: str, sections: list[Section], asked: Asked, *, q_terms: set[str] | None = None,
                  exclude: set[str] = frozenset()) -> list[tuple[float, Passage]]:
    """Every passage of ``sections`` with its score, best first (ties: section rank, then line).

    Args:
        question: the question (its stems are the terms matched, ``q_terms`` when given).
        sections: the retrieved sections, in rank order.
        asked: what the question asks (:func:`asked_type`).
        exclude: stems never counted (the company's own name: every passage of its filing is about it).
    """
    q = (set(q_terms) if q_terms is not None else set(stems(question))) - set(exclude)
    q = {t for t in q if not _YEAR.fullmatch(t)}
    if asked.kind in ("change", "drivers"):  # any word for a change names the change asked about
        q |= _CHANGE_TERMS
    passages = [p for s in sections for p in section_passages(s)]
    df = Counter(t for p in passages if p.kind != "pair" for t in p.terms & q)
    n = max(1, sum(1 for p in passages if p.kind != "pair"))
    weight = {t: math.log(1 + n / df[t]) if df[t] else math.log(1 + n) for t in q}
    demoted = {}
    for s in sections:
        kind = boilerplate_kind(s.breadcrumb, s.text)
        demoted[s.section_id] = kind is not None and not asks_for(question, kind)
    crumb = {s.section_id: sum(weight[t] for t in q & set(stems(s.breadcrumb))) for s in sections}
    out = []
    for p in passages:
        # a row's header words are shared by every row of its table: half weight
        base = sum(weight[t] * (0.5 if t in p.head_terms else 1.0) for t in p.terms & q)
        if base <= 0:
            continue
        score = base + 0.25 * crumb[p.section.section_id]
        score *= _type_fit(p, asked) * _year_fit(p, asked.years)
        score /= 1 + 0.12 * (p.section.rank - 1)
        if p.kind == "pair":
            score *= 0.85
        if p.kind != "row" and (len(p.text) < 40 or len(p.text) > 450 or _POINTER.search(p.text)):
            score *= 0.6
        if demoted[p.section.section_id]:
            score *= 0.3
        out.append((score, p))
    out.sort(key=lambda x: (-x[0], x[1].section.rank, x[1].line, x[1].kind != "sentence"))
    return out


_PLAIN = re.compile(r"\(?-?\$?\(?\d[\d,]*(?:\.\d+)?\)?")


def _scaled(value: str, p: Passage) -> str:
    v = re.sub(r"(?<=\$)\s+|\s+(?=%)", "", value.strip())  # "$ 1,198" -> "$1,198", "9 %" -> "9%"
    if not _PLAIN.fullmatch(v) or p.per_share or not p.units:
        return v
    return f"{v} {p.units[:-1]}"  # "86,392 million"


def _period(name: str) -> str:
    if re.fullmatch(r"(?:fy\s*)?\d{4}", name.strip(), re.I):
        return f"in {name}"
    if re.search(r"\bvs\.?\b|\bversus\b|\bcompared\b", name, re.I):
        return f"change {name}"
    return f"at {name}" if _DATE.search(name) else name


def render_row(p: Passage, years=(), max_values: int = 4) -> str:
    """A table row as a statement: its label, then each value with its unit and column, the asked year first.

    >>> from ppkit.retrieval.types import Section
    >>> s = Section("D", "0001", "D > Income", 1, 5, "(in millions)\\n| | 2022 | 2021 |\\n| Revenue | $5 | $4 |", 1, 1.0)
    >>> render_row([p for p in section_passages(s) if p.kind == "row"][0], (2022,))
    'Revenue: $5 million in 2022 ($4 million in 2021)'
    """
    pairs = [(h, v) for h, v in zip(p.header or ("",) * len(p.values), p.values) if _has_value(v)]
    latest = [str(y) for y in sorted(years, reverse=True)]

    def order(hv):  # the asked (latest) year's own column first, then columns naming it, then a total column
        h = hv[0].casefold()
        exact = next((i for i, y in enumerate(latest) if re.fullmatch(rf"(?:fy\s*)?{y}", h.strip())), None)
        if exact is not None:
            return (0, exact)
        near = next((i for i, y in enumerate(latest) if y in h), None)
        return (1, near) if near is not None else (2, 0) if "total" in h else (3, 0)

    pairs.sort(key=order)
    pairs = pairs[:max_values]
    parts = []
    for h, v in pairs:
        val = _scaled(v, p)
        if not h:
            parts.append(val)
        elif re.search(r"\d{4}", h) or _DATE.search(h):
            parts.append(f"{val} {_period(h)}")
        else:
            parts.append(f"{h.casefold()} {val}")
    if not parts:
        return p.label
    head = f"{p.label}: {parts[0]}"
    return head + (f" ({'; '.join(parts[1:])})" if len(parts) > 1 else "")


def yes_or_no(question: str, passage: Passage, q_terms: set[str], years=()) -> str | None:
    """"Yes" or "No" when ``passage`` clearly answers the yes/no ``question``, else None: it must hold nearly
    all of the question's terms, state one of the ``years`` the question names (a sentence of another year, or
    of none, answers another question), and a negation in one but not the other says "No"."""
    if passage.kind == "row" or not q_terms:
        return None
    if years and not any(int(y) in years for y in _YEAR.findall(passage.text)):
        return None
    if len(passage.terms & q_terms) < 0.8 * len(q_terms):
        return None
    neg_p = bool(_NEGATION.search(passage.text))
    neg_q = bool(_NEGATION.search(question))
    return "No" if neg_p != neg_q else "Yes"


# a figure as prose writes it: "$4.2 billion", "9 percent", "12.5%", "1,600"
_FIG = r"\$?\s?\d[\d,]*(?:\.\d+)?(?:\s?%|\s+percent\b|\s+(?:thousand|million|billion|trillion)\b)?"
# one quantity's two values in a sentence: the new one first ("9 percent (previously 8 percent)"), or the old
# one first ("from $3.8 billion to $4.2 billion")
_PREVIOUSLY = re.compile(rf"(?P<new>{_FIG})\s*\(\s*(?:previously|formerly|prior(?: year)?:?|compared (?:to|with)|"
                         rf"versus|vs\.?)\s+(?P<old>{_FIG})\s*\)", re.I)
_FROM_TO = re.compile(rf"\bfrom\s+(?P<old>{_FIG})\s+to\s+(?P<new>{_FIG})", re.I)
# a change stated as one figure: "increased $16 million", "rose by 3%", "up 5%", "a 5% increase", "increased the
# commitments by $400 million"
_UNSCALED_DOLLARS = re.compile(r"\$\s?\d[\d,]*\.\d{2}\b(?!\s*(?:thousand|million|billion|trillion)\b)", re.I)
_CHANGE_FIG = re.compile(rf"\b(?:increase[sd]?|decrease[sd]?|rose|fell|grew|declined?|dropped|raised|lowered|reduced|"
                         rf"up|down)\s+(?:by\s+|of\s+)?(?:approximately\s+|about\s+|nearly\s+|almost\s+)?(?P<f>{_FIG})|"
                         rf"(?P<g>{_FIG})\s+(?:increase|decrease|decline|rise|drop|higher|lower|more|less)\b|"
                         rf"\b(?:increase[sd]?|decrease[sd]?|rose|fell|grew|declined?|dropped|raised|lowered|reduced)\b"
                         rf"[^.;:]{{0,80}}?\bby\s+(?:approximately\s+|about\s+|nearly\s+|almost\s+)?(?P<h>{_FIG})", re.I)


def prose_figure(text: str) -> tuple[float, bool, str] | None:
    """(value, percent?, scale word) of a figure as prose writes it; None for a bare year."""
    t = text.strip()
    m = re.search(r"\d[\d,]*(?:\.\d+)?", t)
    if not m or _YEAR.fullmatch(m.group()) and not re.search(r"[$%]|percent|illion|thousand", t, re.I):
        return None
    scale = re.search(r"thousand|million|billion|trillion", t, re.I)
    return (float(m.group().replace(",", "")), bool(re.search(r"%|percent", t, re.I)),
            scale.group().casefold() if scale else "")


def stated_change(p: Passage, q_terms: set[str] = frozenset()) -> tuple[str, str] | None:
    """The (old, new) figures of one quantity a sentence states both of ("9 percent (previously 8 percent)",
    "from $3.8 billion to $4.2 billion"), both percents or both of one scale; of several, the one whose
    preceding words share most of ``q_terms``. None for a row or when there is none.

    >>> from ppkit.retrieval.types import Section
    >>> s = Section("D", "0001", "D > Outlook", 1, 1, "Sales to rise 8 percent (previously 6 percent).", 1, 1.0)
    >>> stated_change(section_passages(s)[0])
    ('6 percent', '8 percent')
    """
    if p.kind == "row":
        return None
    found = []
    for rx in (_PREVIOUSLY, _FROM_TO):
        for m in rx.finditer(p.text):
            old, new = prose_figure(m.group("old")), prose_figure(m.group("new"))
            if old and new and old[1:] == new[1:]:
                found.append((m.start(), m.group("old").strip(), m.group("new").strip()))
    if not found:
        return None
    found.sort()
    best, best_n, prev = None, -1, 0
    for at, old, new in found:  # the words since the previous pair name this pair's quantity
        n = len(set(stems(p.text[prev:at])) & set(q_terms))
        if n > best_n:
            best, best_n = (old, new), n
        prev = at
    return best


def states_change(p: Passage) -> bool:
    """Whether a sentence states a change as a figure ("increased $16 million", "up 5%") or states one
    quantity's two values (:func:`stated_change`); a level alone ("increased to $5 billion") does not."""
    if p.kind == "row":
        return False
    if any(prose_figure(m.group("f") or m.group("g") or m.group("h")) for m in _CHANGE_FIG.finditer(p.text)):
        return True
    return stated_change(p) is not None


def other_kind(p: Passage, asked: Asked) -> bool:
    """Whether sentence ``p`` holds figures, but none of the kind asked: an amount of money asked and only
    counts or plain numbers stated ("118,400 employees"), a figure per share asked and only totals stated
    ("$2.8 trillion"), or a change asked as a difference ("by how much")
    and only levels stated ("to up to $4.95 billion"). Rows and questions asking no figure are never
    "other"; :func:`ppkit.answer.quantity.not_of_asked_kind` checks percents, ratios and a row's years."""
    if p.kind == "row" or asked.yes_no or not asked.figure:
        return False
    if asked.by:
        return not states_change(p)
    if asked.per_share:  # a figure per share: one written per share, or a dollar figure with no scale word
        return not (_PER_SHARE.search(p.text) or _UNSCALED_DOLLARS.search(p.text))
    if asked.kind == "amount" and asked.unit == "amount":
        numbers = [n for n in _NUMBER.findall(_DATE.sub("", p.text)) if not _YEAR.fullmatch(n.strip("()$"))
                   and not re.fullmatch(r"\d{1,2}", n)]
        return bool(numbers) and not _MONEY.search(p.text) and not _PERCENT.search(p.text)
    return False


def about_quantity(p: Passage, quantity: Quantity | None) -> bool:
    """Whether passage ``p`` is about the quantity asked (:func:`ppkit.answer.asked.asked_quantity`): it holds
    each of its phrases as consecutive content words ("merchandise inventories", not "inventory shrink ...
    merchandise margin"), one of its money words if it names any, and, a sentence, the plural of a total over
    several; a row is read by its label and its table's caption. No quantity named: any passage is.

    >>> from ppkit.retrieval.types import Section
    >>> s = Section("D", "0001", "D > MD&A", 1, 1, "Gross profit rose due to lower merchandise margin.", 1, 1.0)
    >>> about_quantity(section_passages(s)[0], Quantity((("merchandis", "inventori"),)))
    False
    """
    if quantity is None:
        return True
    words = quantity_words(f"{p.caption} {p.label}" if p.kind == "row" else p.text)
    runs = {tuple(words[i: i + n]) for n in {len(ph) for ph in quantity.phrases} for i in range(len(words) - n + 1)}
    if quantity.plural and p.kind != "row" and not re.search(rf"\b{re.escape(quantity.plural)}\b", p.text, re.I):
        return False  # one of several named (a sentence on "a new credit agreement"): not their total
    return all(ph in runs for ph in quantity.phrases) and (not quantity.any_of or bool(quantity.any_of & set(words)))
