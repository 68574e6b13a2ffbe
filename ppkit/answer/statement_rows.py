"""A primary statement's rows as Markdown or a PDF's text layer leaves them: labels, values, the years of the columns.

:func:`statement_rows` yields each row of a statement section (its source line, its cells, the years of the header
above it) from a Markdown table, or from the running text a PDF's text layer makes of one (:func:`flat_rows`): a
header line of years or dates, with a units caption or period words, or run into the first rows ("(In millions) 2021
2020 2019 Net sales $ 14,082 ..."); a cell holding both years' values; a note reference inside a label; a label
broken over two rows. :func:`cell_value` reads one value, sign kept. It knows nothing of metrics
(:mod:`ppkit.answer.metrics` reads line items from these rows).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from ..retrieval.types import Section

__all__ = ["cell_value", "flat_rows", "header_years", "scale_of", "statement_rows", "rows_of"]

_VALUE = re.compile(r"^\(?-?\$?\s?\(?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\)?\s?%?$")
_DASH = {"—", "–", "-", "—%", "$—", "$ —", "$-"}
_HEAD_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
# the statement's unit: "(In millions)", "($ in millions, except per share data)", "(Millions, except ...)"
_SCALE = re.compile(r"\bin (millions|thousands|billions)\b|\(\s*(?:\$|dollars|(?-i:[A-Z]{3}))?\s*(millions|thousands|billions)\b",
                    re.I)


@lru_cache(maxsize=32_768)  # a statement's cells are read again for every concept and question
def cell_value(cell: str) -> float | None:
    """A table cell's value, sign kept ("(1,500)" -> -1500.0, "$ 6,043" -> 6043.0, a dash -> 0.0); None if none.

    >>> cell_value("(1,500)"), cell_value("—"), cell_value("n/a"), cell_value("5,363 $")
    (-1500.0, 0.0, None, 5363.0)
    """
    c = cell.replace("*", "").replace(" ", "").strip()
    if len(c) > 1 and c.endswith("$"):  # a PDF table's "$" split off to the cell's end ("5,363 $")
        c = c[:-1]
    if c in {d.replace(" ", "") for d in _DASH}:
        return 0.0
    m = _VALUE.match(c)
    if not m:
        return None
    v = float(m.group(1).replace(",", ""))
    return -v if (c.startswith("(") or c.startswith("-") or c.startswith("$(")) else v


_MONTHS = (r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
           r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?")
# a text line that is only a statement's column header: years, or dates ("February 2, 2019 February 3, 2018")
_PERIOD_WORDS = r"(?:(?:(?:fiscal\s+)?(?:years?|quarters?)|periods?|twelve months|(?:52|53)\s+weeks)\s+ended,?\s*)"
_YEARS_LINE = re.compile(rf"^(?:\([^)]*\)\s*)?{_PERIOD_WORDS}?(?:(?:(?:{_MONTHS})\.?\s+\d{{1,2}},?\s+)?(?:19|20)\d\d\s*)+$",
                         re.I)
# a PDF text line that runs the header's years into the first rows: "(In millions) 2021 2020 2019 Net sales $ 14,082 ..."
_LEAD_YEARS = re.compile(r"^(?:\([^)]*\)\s*)?((?:(?:19|20)\d\d\s+){2,})(?=[A-Za-z])")
_CELL = re.compile(r"^\(?-?\$?\(?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\)?%?$|^[—–-]$")


def flat_rows(line: str, n: int) -> list[list[str]]:
    """The rows of a statement whose PDF text layer ran them into one line ("Total net sales 177,866 232,887
    Operating expenses: Cost of sales 111,934 139,156"): each label followed by exactly ``n`` values (the years of
    the header line above); a group heading ending in ":" is not part of the next label; a run of another number
    of values (a footnote, "Level 2") is no row.

    >>> flat_rows("Total net sales $ 177,866 $ 232,887 Operating expenses: Cost of sales (111,934) — Note 2 x", 2)
    [['Total net sales', '177,866', '232,887'], ['Cost of sales', '(111,934)', '—']]
    """
    rows, label, vals = [], [], []
    for tok in line.split() + [""]:
        if tok == "$":
            continue
        if tok and _CELL.match(tok.replace("$", "")) and label:
            vals.append(tok.replace("$", ""))
            continue
        if vals:
            if len(vals) == n:
                rows.append([" ".join(label).rsplit(":", 1)[-1].strip()] + vals)
            label, vals = [], []
        if tok:
            label.append(tok)
    return [r for r in rows if re.search(r"[A-Za-z]", r[0])]


# a units caption on a header line, in brackets or not: "(In millions, except per share amounts)", "$ in millions"
_CAPTION = re.compile(r"\(?\s*(?:\$\s*)?(?:dollars\s+|amounts\s+)?in\s+(?:millions|thousands|billions)\b[^()\d]*\)?", re.I)
# a note reference inside a row's label: "Inventories, net (Note 6)", "(Notes 11 and 14)"
_NOTE_REF = re.compile(r"\((?:see\s+)?notes?\s+\d+[\w\s,]*?\)", re.I)


def _split_cells(cells: list[str]) -> list[str]:
    """A PDF table's row with the years' values run into one cell ("| Total current assets | 16,525 15,134 |") as
    one cell a value; a cell holding anything but values stays as it is."""
    out = cells[:1]
    for c in cells[1:]:
        toks = [t for t in c.replace("$", " ").split() if t]
        out.extend(toks if len(toks) >= 2 and all(_CELL.match(t) for t in toks) else [c])
    return out


def statement_rows(section: Section, years: Sequence[int] = ()):
    """(source line, cells) of the table rows sent for ``section``, with the years of the header above each
    (``years``: the header's when the section continues a statement whose header is in the section before it); a
    statement the PDF text layer wrote as running text (a line of years, then lines of labels and values) is read
    by :func:`flat_rows`."""
    numbers = section.line_numbers or (section.line_start,) * len(section.text.split("\n"))
    years = list(years)
    cont = ""
    for ln, raw in zip(numbers, section.text.split("\n")):
        s = raw.strip()
        if not s.startswith("|"):
            s = _NOTE_REF.sub(" ", _CAPTION.sub(" ", s)).strip()
            lead = _LEAD_YEARS.match(s)
            if _YEARS_LINE.match(s) and len(_HEAD_YEAR.findall(s)) >= 2:
                years = [int(y) for y in _HEAD_YEAR.findall(s)]
            elif lead:
                years = [int(y) for y in _HEAD_YEAR.findall(lead.group(1))]
                for cells in flat_rows(s[lead.end():], len(years)):
                    yield ln, cells, years
            elif years and s and not s.startswith("#"):
                for cells in flat_rows(s, len(years)):
                    yield ln, cells, years
            continue
        cells = _split_cells([c.strip() for c in s.strip("|").split("|")])
        vals = [cell_value(c) for c in cells]
        head = [int(y) for c in cells for y in _HEAD_YEAR.findall(c)]
        # a header row: every cell holding a number is a year
        if len(head) >= 2 and all(v is None or 1900 <= v <= 2100 for v in vals):
            years = head
            continue
        if cont and cells:  # the label the row before left hanging ("NET INCOME ATTRIBUTABLE TO SHAREOWNERS OF")
            cells = [f"{cont} {cells[0]}"] + cells[1:]
        cont = cells[0] if cells and _HANGING.search(cells[0]) and all(v is None for v in vals[1:]) \
            and not any(c.strip() for c in cells[1:]) else ""
        yield ln, cells, years


_ROWS: dict[tuple, tuple] = {}  # (text, line numbers, first line, years) -> its rows; a statement comes back
_ROWS_KEPT = 512                # question after question: read once, the oldest dropped first


def rows_of(section: Section, years: Sequence[int] = ()) -> tuple:
    """:func:`statement_rows` of ``section`` as a tuple, read once per text and header years in a process (the
    callers read the rows, never change them)."""
    key = (section.text, section.line_numbers, section.line_start, tuple(years))
    rows = _ROWS.get(key)
    if rows is None:
        rows = _ROWS[key] = tuple(statement_rows(section, years))
        if len(_ROWS) > _ROWS_KEPT:
            _ROWS.pop(next(iter(_ROWS)), None)
    return rows


# a label a PDF table broke over two rows ends in a word that needs what follows
_HANGING = re.compile(r"\b(?:of|to|and|for|the|in|from|by|on|attributable)$", re.I)


def header_years(text: str, years: Sequence[int] = ()) -> list[int]:
    """The years of the last header line of ``text`` (a statement's title section holding only its header), else
    ``years``.

    >>> header_years("CONSOLIDATED BALANCE SHEETS\\nDecember 31, 2017 2016 (In millions except par value)")
    [2017, 2016]
    """
    out = list(years)
    for raw in text.split("\n"):
        t = _CAPTION.sub(" ", raw).strip()
        if _YEARS_LINE.match(t) and len(_HEAD_YEAR.findall(t)) >= 2:
            out = [int(y) for y in _HEAD_YEAR.findall(t)]
    return out


def scale_of(section: Section) -> str:
    """The unit a statement states for its amounts ("millions", "thousands", "billions"), or ""."""
    m = _SCALE.search(section.text) or _SCALE.search(section.breadcrumb)
    return (m.group(1) or m.group(2)).casefold() if m else ""
