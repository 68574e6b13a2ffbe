"""Compact rendering of Markdown source lines: HTML tables become one pipe row per ``<tr>``.

Extractors such as LlamaParse write tables as HTML with one tag per line (in the
reference 10-Ks a quarter of the bytes are table markup), so a 2000-character
chunk of a financial statement holds a handful of numbers and a 256-token
embedder sees mostly ``<td>``. ppkit therefore embeds, scores and sends the
*rendered* text, while every piece keeps the number of the source line it came
from, so pointers and line ranges still name the source exactly.

Rendering rules:

* a row ``<tr>…</tr>`` becomes ``| cell | cell |`` (empty cells dropped, inner tags
  removed, entities unescaped), numbered by the line its ``<tr`` is on;
* ``<table>``, ``<thead>``, ``<tbody>`` and their closing tags disappear;
* a ``<table>`` that never closes is left as it is (never swallow the document);
* every other line is kept as written, minus ``<u>``/``</u>`` and ``<br>`` markup.

This module does not touch Markdown pipe tables or prose.
"""

from __future__ import annotations

import html
import re

__all__ = ["render", "figure_rows"]

_TABLE_OPEN = re.compile(r"<table\b", re.I)
_TABLE_CLOSE = re.compile(r"</table\s*>", re.I)
# a row (a cell) runs to its closing tag and never over the next row's (cell's) opening: an unclosed one is
# skipped in time linear in the text
_ROW = re.compile(r"<tr\b[^<>]*>((?:(?!<tr\b|</tr).)*)</tr\s*>", re.I | re.S)
_CELL = re.compile(r"<t[hd]\b[^<>]*>((?:(?!<t[hd]\b|</t[hd]).)*)</t[hd]\s*>", re.I | re.S)
_TAG = re.compile(r"<[^<>]+>")
_INLINE = re.compile(r"</?u>|<br\s*/?>", re.I)


def _cell_text(raw: str) -> str:
    return " ".join(html.unescape(_TAG.sub(" ", raw)).split())


def _render_table(block: list[str], first_line: int) -> list[tuple[int, str]]:
    text = "\n".join(block)
    out = []
    for m in _ROW.finditer(text):
        cells = [c for c in (_cell_text(x) for x in _CELL.findall(m.group(1))) if c]
        if cells:
            out.append((first_line + text.count("\n", 0, m.start()), "| " + " | ".join(cells) + " |"))
    return out


def render(lines: list[str], first_line: int = 1) -> list[tuple[int, str]]:
    """(source line number, rendered text) for ``lines`` numbered from ``first_line``.

    >>> render(["<table>", "<tr><td>Cash</td>", "<td>$5</td></tr>", "</table>"])
    [(2, '| Cash | $5 |')]
    """
    out: list[tuple[int, str]] = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        if _TABLE_OPEN.search(line):
            j = i
            while j < n and not _TABLE_CLOSE.search(lines[j]):
                j += 1
            opened, closed = _TABLE_OPEN.search(line), _TABLE_CLOSE.search(lines[j]) if j < n else None
            if opened and closed:  # a closed table: render it
                before = line[: opened.start()]
                if before.strip():
                    out.append((first_line + i, _INLINE.sub(" ", before).rstrip()))
                out.extend(_render_table(lines[i : j + 1], first_line + i))
                after = lines[j][closed.end():]
                if after.strip():
                    out.append((first_line + j, _INLINE.sub(" ", after).strip()))
                i = j + 1
                continue
        out.append((first_line + i, _INLINE.sub("", line) if "<" in line else line))
        i += 1
    return out


_NUMBER_CELL = re.compile(r"^\(?-?\$?\(?\d[\d,.]*\)?%?$")
_CELL_MARKUP = re.compile(r"<[^<>]+>|[*_`\s]+")


def figure_rows(lines: list[str]) -> int:
    """How many table rows of ``lines`` hold two or more numbers: a financial statement's years side
    by side (a table of contents has one page number a row). HTML tables are rendered first.

    >>> figure_rows(["| Net sales | 1,200 | 1,100 |", "| Contents | 41 |", "prose 2022 2021"])
    1
    """
    n = 0
    for _, text in render(lines):
        if text.lstrip().startswith("|"):
            cells = [_CELL_MARKUP.sub("", c) for c in text.strip().strip("|").split("|")]
            n += sum(1 for c in cells if _NUMBER_CELL.match(c)) >= 2
    return n
