"""Passages: the quotable pieces of the retrieved sections, sentences and table rows, read once.

:func:`section_passages` cuts a section into **sentences** (prose split after rejoining a sentence cut by a page
break, a page number and a "Table of Contents" line between two halves, never cutting at an abbreviation: "Inc.",
"U.S.", "No.": :func:`ppkit.core.text.sentences`), **pairs** of neighbouring sentences, and **table rows** that
hold a value, each with its table's column names (the periods), its units caption ("(in millions except per
share amounts)"), the group label above it and the table's caption. Rows without values (a group label) are never
quoted, but name the rows under them. :func:`render_row` writes a row as a statement ("Net revenue: $86,392
million in 2022 ($79,474 million in 2021)"), the asked year's column first.

This module reads text; it ranks nothing (:mod:`ppkit.answer.select`) and computes no figures
(:mod:`ppkit.answer.metrics`, :mod:`ppkit.answer.candidates`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from functools import lru_cache

from ..core.text import sentences, stems
from ..documents.tree import text_heading_line
from ..retrieval.types import Section

__all__ = ["Passage", "section_passages", "render_row", "cells"]

# page furniture between the halves of a sentence cut by a page break: "16", "<u>Table of Contents</u>"
_FURNITURE = re.compile(r"^\s*(?:\d{1,3}|[ivxlc]{1,6}|page \d+(?: of \d+)?|\[?(?:<u>)?table of contents(?:</u>)?"
                        r"(?:\]\([^)]*\))?|-{3,}|\*{3,})\s*$", re.I)
_END = re.compile(r"[.!?:;][\"”’)\]*]*$")
_UNITS = re.compile(r"(?:\b(?:in|\$\s*in|dollars in|amounts in)\s+|\(\s*(?:\$\s*)?)(thousands|millions|billions)\b",
                    re.I)
_PER_SHARE = re.compile(r"\bper (?:common |diluted |basic )?share\b|\bper unit\b|\bearnings per\b|\beps\b", re.I)
_YEAR = re.compile(r"(?<![\d,.$])(?:19|20)\d{2}(?![\d,])")
_DATE = re.compile(r"\b(?:january|february|march|april|may|june|july|august|september|october|november|december)"
                   r"\s+\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b", re.I)

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
