"""PDF -> Markdown from the PDF's text layer alone: characters with their font, size and position.

The default offline backend of :mod:`ppkit.documents.extract` (``--backend offline``). It reads every
character through ``pypdfium2`` (PDFium's bindings; Apache-2.0/BSD, a core dependency), so the
default install extracts PDFs; it never imports pymupdf. Chosen by measurement: on 30 pages of the
Boeing 10-K, per-character text, box, size and font cost 17 ms a page with pypdfium2 and 510 ms a page
with pdfplumber (pdfminer.six) on the same machine.

How a page becomes Markdown:

1. **Words** from characters in content order: a whitespace character, a gap wider than a third of the
   font size, or a jump to another baseline ends a word.
2. **Lines**: words clustered by vertical centre and sorted left to right. A page whose words leave a
   vertical gutter near the middle, with prose aligned on both sides, is read as two columns (left
   column, then right column, band by band between full-width lines).
3. **Running headers and footers** dropped: lines in the top or bottom tenth of the page whose text,
   digits aside, repeats on a fifth of the pages (at least three), and page numbers there.
4. **Tables**: runs of lines split into several cells by wide gaps (a font scaled by a matrix judged by its
   glyphs' height). Columns are the gaps shared by the rows with figures that have the most cells (a header
   cell over several columns is split back where its words part; a phrase spanning them goes to the first
   column it covers); leading rows without amounts merge into the header row; a lone ``$`` or ``%`` joins
   its amount. A row set over lines half a line apart (a label on two lines with its figures centred beside
   it, a header cell on two lines) is one row; a wrapped label joins its figures where rows stand further
   apart than lines; where every row is ruled (:mod:`ppkit.documents.pdfrules`), each band between two rules
   is one row and vertical rules give the columns. A bold title set apart above a table is no row of it, and
   the empty middle of a table of figures is no gutter between two columns. Written as a Markdown table with
   its header row, under the heading and the units caption before it.
5. **Headings** from per-document statistics: the body size is the most common character size; a short
   block (at most :data:`MAX_TITLE` characters) is a heading when its size is clearly above the body
   size, or when it is entirely bold (or entirely italic and standing alone), or when it starts with a
   numbering scheme (``PART II``, ``Item 7A.``, ``3.2``) in a heading style. Never a heading: a sentence
   in emphasis (eight words or more ending in ``.``, ``;`` or ``,``), a block with a long number, phone or
   file number or a units caption, or one that starts where no prose line of its page starts and is
   centred neither on the page nor in its column (a table's column label). Levels rank the heading
   styles found in the document (size, then bold, then capitals); :mod:`ppkit.documents.repair` fixes
   levels later from numbering and the PDF's outline, which is returned too.
6. **Paragraphs**: consecutive lines of one style with line spacing between them join into one line; a
   paragraph opening with ``#`` (a footnote marker) is escaped, so Markdown never reads it as a heading.

It does not OCR (a page without a text layer yields no text), does not read images, and does not
judge the tree it produces (see :mod:`ppkit.documents.treecheck`).
"""

from __future__ import annotations

import collections
import ctypes
import importlib.metadata
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import MissingDependency
from ..core.progress import progress_bar
from .pdfbase import PageTexts, open_pdfium
from .pdfguard import read_page
from .pdfrules import Grid, read_rules, ruled_grids
from .titles import strip_numbering

__all__ = ["TextLayerExtractor", "MAX_TITLE"]

MAX_TITLE = 200  # characters: a longer block is never a heading
_BAND = 0.10  # top/bottom share of the page where running headers and footers live
_PAGE_NO = re.compile(r"^\W*(?:page\s+)?(?:\d{1,4}|[ivxlc]{1,6})(?:\s+of\s+\d+)?\W*$", re.I)
_AMOUNT = re.compile(r"^[$€£(]*-?[\d,.]+%?\)?%?$|^[—–-]+$")
_YEAR = re.compile(r"^(?:19|20)\d\d$")
_NUMBERED = re.compile(r"^(?:PART\s+[IVX]+\b|Item\s+\d+[A-C]?\b|ITEM\s+\d+[A-C]?\b|Note\s+\d+\b|NOTE\s+\d+\b"
                       r"|[IVX]+\.\s+[A-Z]|[A-Z]\.\d+\.?\s+[A-Z]|(?:ARTICLE|Article|SECTION|Section)\s+(?:[IVX]+|\d+(?:\.\d+)?)\b"
                       r"|\d+(?:\.\d+){0,3}\.?\s+[A-Z]|[A-Z]\.\s+[A-Z]|Appendix\b|APPENDIX\b)")
_NOT_TITLE = re.compile(r"\d{5,}|\(\d{3}\)\s*\d{3}|\b\d{1,3}-\d{4,}\b"  # zip codes, phone and file numbers
                        r"|\((?:dollars |amounts |\$ )?in (?:millions|thousands|billions)|except per share", re.I)
_SENTENCE_END = re.compile(r"[.;,]\W*$")
_BOLD_NAME = re.compile(r"bold|black|heavy|semibold|demi", re.I)
_ITALIC_NAME = re.compile(r"italic|oblique", re.I)


@dataclass
class _Word:
    x0: float
    x1: float
    y0: float  # bottom (PDF coordinates: y grows upwards)
    y1: float  # top
    text: str
    size: float
    bold: int  # characters in a bold font
    italic: int
    lig: bool = False  # ends in a wide "f" that PDFium split from the next word: maybe one word with "ff"

    @property
    def mid(self) -> float:
        return (self.y0 + self.y1) / 2

    @property
    def em(self) -> float:
        """The font size as set on the page: the reported size, or the glyphs' height when that is less than half
        of it (a PDF that scales its text by a matrix reports sizes such as 416 for text 9 points high)."""
        h = self.y1 - self.y0
        return h if 0 < h < 0.5 * self.size else self.size


@dataclass
class _Line:
    words: list[_Word]
    page: int
    top: float  # of the page: 0 at the top edge, 1 at the bottom
    bottom: float
    right: float = 0.0  # the right margin of its column (set per page): a line ending short of it ends a paragraph
    pw: float = 612.0  # page width
    left: float = 0.0  # the left margin of its column (set per page)
    starts: frozenset = frozenset()  # x / 6 where at least three long lines of its page start (set per page)
    fixed: tuple = ()  # (x0, x1, text) cells of a table row assembled from several lines (see _row_line)
    parts: tuple = ()  # the lines such a row was assembled from
    _memo: dict = field(default_factory=dict, repr=False, compare=False)  # style() and cells(), read many times

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)

    @property
    def x0(self) -> float:
        return min(w.x0 for w in self.words)

    @property
    def y0(self) -> float:
        return min(w.y0 for w in self.words)

    @property
    def y1(self) -> float:
        return max(w.y1 for w in self.words)

    def style(self) -> tuple[float, bool, bool]:
        """(size of most characters, rounded to 0.5; all bold; all italic)."""
        got = self._memo.get("style")
        if got is None:
            got = self._memo["style"] = self._style()
        return got

    def _style(self) -> tuple[float, bool, bool]:
        sizes = collections.Counter()
        n = bold = italic = 0
        for w in self.words:
            k = len(w.text)
            sizes[round(w.size * 2) / 2] += k
            n, bold, italic = n + k, bold + w.bold, italic + w.italic
        return sizes.most_common(1)[0][0], bold >= 0.9 * n, italic >= 0.9 * n

    def cells(self) -> list[tuple[float, float, str]]:
        """(x0, x1, text) runs of words split at gaps wider than the font size; ``$`` joins its amount."""
        if self.fixed:
            return list(self.fixed)
        got = self._memo.get("cells")
        if got is None:
            got = self._memo["cells"] = self._cells()
        return list(got)

    def _cells(self) -> list[tuple[float, float, str]]:
        out: list[list] = []
        for w in self.words:
            if out and w.x0 - out[-1][1] <= max(w.em, 4.0):
                out[-1][1], out[-1][2] = w.x1, out[-1][2] + " " + w.text
            else:
                out.append([w.x0, w.x1, w.text])
        merged: list[list] = []
        for c in out:
            if merged and merged[-1][2] in ("$", "€", "£", "(") :
                merged[-1][1], merged[-1][2] = c[1], merged[-1][2] + c[2]
            elif merged and c[2] in ("%", ")", "%)"):
                merged[-1][1], merged[-1][2] = c[1], merged[-1][2] + c[2]
            else:
                merged.append(c)
        return [(a, b, _tidy_cell(t)) for a, b, t in merged]


def _tidy_cell(text: str) -> str:
    """A cell's text with a currency sign or an opening bracket joined to its amount (``$ 41,250`` ->
    ``$41,250``)."""
    return re.sub(r"^([$€£(]+)\s+", r"\1", text)


# ---------------------------------------------------------------------------- reading characters


def _font_style(raw, R, c: int, cache: dict, buf) -> tuple[bool, bool]:
    """(bold, italic) of character ``c``, from its font's name, weight and flags (cached per font)."""
    flags = ctypes.c_int(0)
    n = R.FPDFText_GetFontInfo(raw, c, buf, 128, ctypes.byref(flags))
    key = (buf.raw[:n], R.FPDFText_GetFontWeight(raw, c), flags.value)
    got = cache.get(key)
    if got is None:
        name = key[0].rstrip(b"\0").decode("latin-1")
        bold = bool(_BOLD_NAME.search(name)) or key[1] >= 600 or bool(key[2] & (1 << 18))
        italic = bool(_ITALIC_NAME.search(name)) or bool(key[2] & (1 << 6))
        got = cache[key] = (bold, italic)
    return got


def _text_object_address():
    """``FPDFText_GetTextObject`` returning the object's address as an int (cheap to compare per character),
    through a function pointer of its own so the binding's shared prototype is left as it is."""
    global _GET_OBJ
    if _GET_OBJ is None:
        import pypdfium2_raw.bindings as B  # the package pypdfium2.raw re-exports

        fn = B._libs["pdfium"]["FPDFText_GetTextObject"]
        fn.argtypes, fn.restype = B.FPDFText_GetTextObject.argtypes, ctypes.c_void_p
        _GET_OBJ = fn
    return _GET_OBJ


_GET_OBJ = None


def _text(chars: list[str]) -> str:
    """Characters (UTF-16 code units, so a surrogate pair arrives as two) joined into a string."""
    t = "".join(chars)
    if any("\ud800" <= ch <= "\udfff" for ch in t):
        t = t.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return t


def _page_words(page, R, cache: dict) -> list[_Word]:
    """The words of one page, in content order."""
    tp = page.get_textpage()
    try:
        raw = tp.raw
        n = R.FPDFText_CountChars(raw)
        rect = R.FS_RECTF()
        buf = ctypes.create_string_buffer(128)
        words: list[_Word] = []
        chars: list[str] = []  # of the open word; its box, size and style counts in the locals below
        wx0 = wx1 = wy0 = wy1 = wsize = 0.0
        wbold = witalic = 0
        get_u, get_box, get_size = R.FPDFText_GetUnicode, R.FPDFText_GetLooseCharBox, R.FPDFText_GetFontSize
        get_weight, get_obj = R.FPDFText_GetFontWeight, _text_object_address()
        last_key = None
        bold = italic = False
        broken = False  # a whitespace character since the last letter: the word ends unless a ligature spans it
        lig = False  # the last letter was an "f" as wide as "ff" and the break after it was PDFium's own
        last_w = 0.0

        def close(lig_next: bool = False) -> None:
            words.append(_Word(wx0, wx1, wy0, wy1, _text(chars), wsize, wbold, witalic, lig_next))

        for c in range(n):
            u = get_u(raw, c)
            if u <= 32 or u == 0xA0 or u == 0xFFFE or u == 0xFEFF or 0x2000 <= u <= 0x200B:
                if chars and not broken:
                    lig = chars[-1] == "f" and last_w > 0.4 * wsize and R.FPDFText_IsGenerated(raw, c) == 1
                broken = True
                continue
            get_box(raw, c, rect)
            size = get_size(raw, c)
            x0, x1, y0, y1 = rect.left, rect.right, rect.bottom, rect.top
            if chars and (broken or x0 - wx1 > 0.1 * (y1 - y0) or x0 < wx0 - 1
                          or abs(y0 + y1 - wy0 - wy1) > max(y1 - y0, 1.0)):
                # maybe an "ff" ligature whose glyph maps to one "f" ("Af iliates"): _join_ligatures decides
                close(broken and lig and 0x61 <= u <= 0x7A and abs(x0 - wx1) < 0.15 * size)
                chars = []
            broken = lig = False
            # and, where a word starts, its text object: two fonts of one size and weight (Helvetica and
            # Helvetica-Bold) differ; a font change inside a word is rare, so the check is per word, not per character
            key = (size, get_weight(raw, c), get_obj(raw, c) if not chars or last_key is None else last_key[2])
            if key != last_key:
                (bold, italic), last_key = _font_style(raw, R, c, cache, buf), key
            if not chars:
                wx0, wx1, wy0, wy1, wsize, wbold, witalic = x0, x1, y0, y1, size, 0, 0
            else:
                if x1 > wx1:
                    wx1 = x1
                if y0 < wy0:
                    wy0 = y0
                if y1 > wy1:
                    wy1 = y1
                if size > wsize:
                    wsize = size
            chars.append(chr(u) if u != 0xFFFD else "?")
            last_w = x1 - x0
            wbold += bold
            witalic += italic
        if chars:
            close()
        return words
    finally:
        tp.close()


_CORE = re.compile(r"[a-z]+")


def _join_ligatures(pages: dict[int, list[_Word]]) -> None:
    """Join "Af" + "iliates" into "Affiliates" where an "ff" ligature lost a letter and split a word: the
    part after the split is joined when it is rare as a word of its own in the document (fewer than 3 times
    outside such splits), so "of" + "our" stays two words. Changes the lists in place."""
    vocab = collections.Counter()
    for words in pages.values():
        for a, b in zip([None] + words, words):
            if not (a is not None and a.lig) and (m := _CORE.match(b.text)):
                vocab[m.group()] += 1
    for p, words in pages.items():
        out: list[_Word] = []
        for w in words:
            prev = out[-1] if out else None
            m = _CORE.match(w.text)
            if prev is not None and prev.lig and m and vocab[m.group()] < 3:
                prev.text, prev.x1, prev.lig = prev.text + "f" + w.text, w.x1, w.lig
                prev.bold, prev.italic = prev.bold + w.bold, prev.italic + w.italic
            else:
                out.append(w)
        pages[p] = out


# ---------------------------------------------------------------------------- lines and columns


def _cluster(words: list[_Word]) -> list[list[_Word]]:
    """Words grouped into lines by vertical centre, top to bottom, each line left to right."""
    lines: list[list[_Word]] = []
    for w in sorted(words, key=lambda w: -w.mid):
        # the smaller of the two heights: a large title beside a small line is not one line with it
        h = max(min(w.y1 - w.y0, lines[-1][0].y1 - lines[-1][0].y0) if lines else w.y1 - w.y0, 1.0)
        if lines and abs(lines[-1][0].mid - w.mid) <= 0.4 * h:
            lines[-1].append(w)
        else:
            lines.append([w])
    return [sorted(ws, key=lambda w: w.x0) for ws in lines]


def _gutter(lines: list[list[_Word]], width: float) -> float | None:
    """The x of a two-column page's gutter, or None: a vertical strip near the middle that few lines
    cross, with lines of aligned prose on both sides."""
    if len(lines) < 12:
        return None
    lo, hi = int(width * 0.35), int(width * 0.65)
    crossing = [0] * (hi - lo)  # x - lo -> lines with a word over x
    for ws in lines:
        covered = set()
        for w in ws:
            covered.update(range(max(lo, int(w.x0) + 1), min(hi, int(w.x1 + 0.999))))
        for x in covered:
            crossing[x - lo] += 1
    best = min((crossing[x - lo], x) for x in range(lo, hi, 2))
    cross, g = best
    if cross > 0.15 * len(lines):
        return None
    left = [ws for ws in lines if any(w.x1 <= g for w in ws) and not any(w.x0 < g < w.x1 for w in ws)]
    right = [ws for ws in lines if any(w.x0 >= g for w in ws) and not any(w.x0 < g < w.x1 for w in ws)]
    if len(left) < 0.3 * len(lines) or len(right) < 0.3 * len(lines):
        return None
    if _figures_column(right, g):
        return None
    # prose columns: most left parts start at one x, and so do most right parts
    lstart = collections.Counter(round(min(w.x0 for w in ws if w.x1 <= g) / 3) for ws in left)
    rstart = collections.Counter(round(min(w.x0 for w in ws if w.x0 >= g) / 3) for ws in right)
    if lstart.most_common(1)[0][1] < 0.5 * len(left) or rstart.most_common(1)[0][1] < 0.5 * len(right):
        return None
    # and prose fills its column: most left parts run to the gutter (a table's label column does not)
    if sum(1 for ws in left if max(w.x1 for w in ws if w.x1 <= g) >= g - 0.08 * width) < 0.5 * len(left):
        return None
    return float(g)


def _figures_column(right: list[list[_Word]], g: float) -> bool:
    """Whether the parts of lines right of a gutter are mostly amounts alone: a table's figure columns beside its
    labels (a balance sheet whose middle is empty), not a second column of prose (nor a column holding a table
    whose rows keep their labels)."""
    parts = [[w for w in ws if w.x0 >= g] for ws in right]
    pure = sum(1 for p in parts if p and all(_is_amount(w.text) or w.text in ("$", "%") for w in p))
    return pure >= 0.6 * len(parts)


def _reading_order(words: list[_Word], width: float) -> list[list[_Word]]:
    """Lines in reading order: top to bottom, or column by column between full-width lines."""
    lines = _cluster(words)
    g = _gutter(lines, width)
    if g is None:
        return lines
    out: list[list[_Word]] = []
    left: list[_Word] = []
    right: list[_Word] = []
    for ws in lines:
        lw = [w for w in ws if w.x1 <= g]
        rw = [w for w in ws if w.x0 >= g]
        full = len(lw) + len(rw) < len(ws) or (lw and rw and rw[0].x0 - lw[-1].x1 < 0.8 * lw[-1].em
                                               and lw[-1].x1 > g - 0.1 * width)
        if full:
            out.extend(_cluster(left) + _cluster(right))
            left, right = [], []
            out.append(ws)
        else:
            left.extend(lw)
            right.extend(rw)
    out.extend(_cluster(left) + _cluster(right))
    return out


# ---------------------------------------------------------------------------- tables


def _is_amount(text: str) -> bool:
    return bool(_AMOUNT.match(text.replace(" ", ""))) and not _YEAR.match(text.strip())


def _stack_cells(lines: list[_Line], columns: list[tuple[float, float]] | None = None) -> list[tuple[float, float, str]]:
    """The cells of one table row set over several lines, top to bottom: with ``columns`` (from vertical rules)
    every column's text, empty ones included; else cells that overlap across the lines joined ("Service and" over
    "Parts"), the others side by side. A word broken with a hyphen at a cell's line end is joined again."""
    out: list[list] = []  # [x0, x1, text]
    if columns:
        out = [[a + 1.5, b - 1.5, ""] for a, b in columns]
    for ln in sorted(lines, key=lambda ln: -ln.y1):
        cells = ln.cells() if not columns else _column_cells(ln, columns)
        for a, b, t in cells:
            if columns:
                hit = next(c for c in out if c[0] == a)
            else:
                hit = next((c for c in out if a < c[1] and b > c[0]), None)
                if hit is None:
                    out.append([a, b, t])
                    continue
                hit[0], hit[1] = min(hit[0], a), max(hit[1], b)
            glue = "" if hit[2].endswith("-") and t[:1].islower() else " "
            hit[2] = (hit[2][:-1] if glue == "" else hit[2]) + glue + t if hit[2] else t
    return [(a, b, t) for a, b, t in sorted(out, key=lambda c: c[0])]


def _column_cells(ln: _Line, columns: list[tuple[float, float]]) -> list[tuple[float, float, str]]:
    """The words of one line put in the columns between vertical rules, by their centres: ``(x0, x1, text)``
    with the column's inner edges, for the columns that get words."""
    texts: dict[int, list[str]] = {}
    for w in ln.words:
        mid = (w.x0 + w.x1) / 2
        i = min(range(len(columns)), key=lambda i: 0 if columns[i][0] <= mid <= columns[i][1]
                else min(abs(mid - columns[i][0]), abs(mid - columns[i][1])))
        texts.setdefault(i, []).append(w.text)
    return [(columns[i][0] + 1.5, columns[i][1] - 1.5, _tidy_cell(" ".join(t))) for i, t in sorted(texts.items())]


def _row_line(lines: list[_Line], cells: list[tuple[float, float, str]]) -> _Line:
    """One table row from the lines it was set over, with its ``cells`` fixed; each cell's size and style from
    the words under it."""
    words_all = [w for ln in lines for w in ln.words]
    y0, y1 = min(w.y0 for w in words_all), max(w.y1 for w in words_all)
    words = []
    for a, b, t in cells:
        under = [w for w in words_all if a - 2 <= (w.x0 + w.x1) / 2 <= b + 2] or words_all
        n = sum(len(w.text) for w in under) or 1
        k = len(t)
        words.append(_Word(a, b, y0, y1, t, max(w.size for w in under),
                           round(k * sum(w.bold for w in under) / n), round(k * sum(w.italic for w in under) / n)))
    first = lines[0]
    parts = tuple(p for ln in lines for p in (ln.parts or (ln,)))
    return _Line([w for w in words if w.text] or words[:1], first.page, min(ln.top for ln in lines),
                 max(ln.bottom for ln in lines), first.right, first.pw, first.left, first.starts, fixed=tuple(cells),
                 parts=parts)


def _subline(a: _Line, b: _Line) -> bool:
    """``b`` is part of the same table row as ``a``, set half a line lower: a cell's text centred beside a label
    wrapped over two lines, or a header cell over two lines. Its centre is less than 0.8 of the font size below
    ``a``'s (two lines of text are a whole line apart), the sizes agree, and no word of one is over a word of the
    other."""
    if a.page != b.page or abs(a.y0 + a.y1 - b.y0 - b.y1) >= 1.6 * max(a.words[0].em, b.words[0].em):
        return False  # a whole line apart (most lines)
    sa, sb = min(w.em for w in a.words), min(w.em for w in b.words)
    if max(sa, sb) > 1.25 * min(sa, sb) or abs((a.y0 + a.y1) / 2 - (b.y0 + b.y1) / 2) >= 0.8 * min(sa, sb):
        return False
    return not any(u.x0 < v.x1 - 1 and v.x0 < u.x1 - 1 for u in a.words for v in b.words)


def _merge_sublines(lines: list[_Line]) -> list[_Line]:
    """The lines with each table row that was set over lines half a line apart joined into one row
    (:func:`_subline`); only where one of the lines is split into cells."""
    out: list[_Line] = []
    chain: list[_Line] = []

    def flush() -> None:
        if len(chain) == 1:
            out.append(chain[0])
        elif chain:
            out.append(_row_line(chain, _stack_cells(chain)))

    for ln in lines:
        if chain and _subline(chain[-1], ln) and (len(ln.cells()) >= 2 or any(len(c.cells()) >= 2 for c in chain)):
            chain.append(ln)
        else:
            flush()
            chain = [ln]
    flush()
    return out


def _join_wrapped(rows: list[_Line]) -> list[_Line]:
    """A table's rows with each label that wraps over lines joined to the row of its figures, where the rows
    stand further apart than the lines of a label: a line holding only a label (one cell, in the first column)
    closer to a row of figures above or below it than 0.75 of the usual distance between two rows of figures
    joins that row (the closer one). Where rows are a line apart (a filing's statements) nothing is joined."""
    mids = [(ln.y0 + ln.y1) / 2 for ln in rows]
    figs = [k for k, ln in enumerate(rows) if _tabular(ln)]
    steps = sorted(mids[a] - mids[b] for a, b in zip(figs, figs[1:]) if b == a + 1 and rows[a].page == rows[b].page)
    if len(steps) < 2:
        return rows
    pitch = steps[len(steps) // 2]
    first = min(c[1] for ln in rows if len(ln.cells()) >= 2 for c in ln.cells()[:1]) if figs else 0.0
    target: dict[int, int] = {}  # label line -> the row of figures it joins
    for k, ln in enumerate(rows):
        cs = ln.cells()
        if len(cs) != 1 or _tabular(ln) or cs[0][0] > first:
            continue
        near = [(abs(mids[k] - mids[t]), t) for t in (k - 1, k + 1) if 0 <= t < len(rows) and _tabular(rows[t])
                and rows[t].page == ln.page]
        # a label between its row and the next label line of the same cell: follow the chain to the row
        for t in (k - 1, k + 1):
            if not any(t2 == t for _, t2 in near) and 0 <= t < len(rows) and len(rows[t].cells()) == 1:
                u = t + (t - k)
                if 0 <= u < len(rows) and _tabular(rows[u]) and abs(mids[k] - mids[t]) < 0.75 * pitch:
                    near.append((abs(mids[k] - mids[u]) - pitch, u))
        if near:
            gap, t = min(near)
            if gap < 0.75 * pitch:
                target[k] = t
    if not target:
        return rows
    groups: dict[int, list[int]] = {}
    for k in range(len(rows)):
        groups.setdefault(target.get(k, k), []).append(k)
    out = []
    for k in range(len(rows)):
        if k in target:
            continue
        members = [rows[m] for m in groups.get(k, [k])]
        out.append(rows[k] if len(members) == 1 else _row_line(members, _stack_cells(members)))
    return out


def _grid_rows(lines: list[_Line], grids: list[Grid]) -> dict[int, tuple[int, list[_Line]]]:
    """``{first line: (end line, rows)}`` for each ruled grid of the page that is a table of rows: the lines
    inside it are consecutive, none crosses its sides, each band between two rules holds at most one line with
    amounts (else the rules mark only the header and the totals, and the rows are found from the lines), and at
    least two bands are split into cells. Each band becomes one row, whatever lines its cells were set over."""
    out: dict[int, tuple[int, list[_Line]]] = {}
    for g in grids:
        inside: list[int] = []
        crossing = False
        for k, ln in enumerate(lines):
            mid, x1 = (ln.y0 + ln.y1) / 2, max(w.x1 for w in ln.words)
            if not (g.bottom < mid < g.top) or x1 < g.x0 or ln.x0 > g.x1:
                continue
            if ln.x0 < g.x0 - 3 or x1 > g.x1 + 3:
                crossing = True
                break
            inside.append(k)
        if crossing or len(inside) < 2 or inside != list(range(inside[0], inside[-1] + 1)) \
                or any(k in out or any(a <= k < b for a, (b, _) in out.items()) for k in inside):
            continue
        rows: list[_Line] = []
        cols = g.columns()
        ok = True
        for hi, lo in g.bands():
            band = [lines[k] for k in inside if lo < (lines[k].y0 + lines[k].y1) / 2 < hi]
            if not band:
                continue
            if sum(1 for ln in band if _tabular(ln)) > 1:
                ok = False
                break
            parts = [p for ln in band for p in (ln.parts or (ln,))]
            rows.append(_row_line(parts, _stack_cells(parts, cols)))
        if ok and sum(1 for r in rows if sum(1 for c in r.cells() if c[2]) >= 2) >= 2:
            out[inside[0]] = (inside[-1] + 1, rows)
    return out


def _page_grids(page, R, words: list[_Word], width: float) -> list[Grid]:
    """The ruled grids of a page that has figures (eight amounts or more: a table of two rows, two columns and
    their totals); other pages' drawings are not read (reading them costs a tenth of a page's extraction)."""
    if sum(1 for w in words if w.text[:1] in "$(0123456789" and _is_amount(w.text)) < 8:
        return []
    return ruled_grids(read_rules(page, R), width)


def _column_of(a: float, b: float, cols: list[list[float]]) -> int:
    """The first column a span ``a``..``b`` overlaps, else the nearest by centre."""
    over = [i for i, (ca, cb) in enumerate(cols) if a < cb and b > ca]
    return over[0] if over else min(range(len(cols)), key=lambda i: abs((cols[i][0] + cols[i][1]) / 2 - (a + b) / 2))


def _split_cell(row: _Line, a: float, b: float, cols: list[list[float]]) -> list[tuple[int, str]]:
    """A cell over several columns split back into its columns: its words, line by line (top to bottom for a
    row set over several lines), cut where a gap wider than half the font size separates words of two columns
    (header cells set close together); a phrase spanning columns ("Years ended December 31") stays whole, in its
    first column."""
    out: list[tuple[int, str]] = []
    for ln in sorted(row.parts or (row,), key=lambda ln: -ln.y1):
        runs: list[list] = []  # [column, words, right edge]
        for w in sorted((w for w in ln.words if a - 1 <= (w.x0 + w.x1) / 2 <= b + 1), key=lambda w: w.x0):
            col = _column_of(w.x0, w.x1, cols)
            if runs and (w.x0 - runs[-1][2] <= 0.5 * w.em or col == runs[-1][0]):
                runs[-1][1].append(w.text)
                runs[-1][2] = w.x1
            else:
                runs.append([col, [w.text], w.x1])
        out += [(c, _tidy_cell(" ".join(ws))) for c, ws, _ in runs]
    return out


def _table_markdown(rows: list[_Line], *, head: int | None = None) -> str:
    """A Markdown table from lines of cells: columns from the rows with figures that have the most cells (from
    all rows when fewer than two have figures) and from header cells right of them; ``head``: the header
    rows (default: the leading rows without amounts, at most three)."""
    cells = [r.cells() for r in rows]
    basis = [cs for r, cs in zip(rows, cells) if _tabular(r)]
    basis = basis if len(basis) >= 2 else cells
    most = max(len(c) for c in basis)
    spans: list[list[float]] = []
    for cs in basis:
        if len(cs) >= max(2, 0.6 * most):
            for a, b, _ in cs:
                spans.append([a, b])
    # columns only the header fills, right of every column of figures (rows with figures leave them empty); a
    # header cell between two columns of figures ("2022" over its two columns) is no column of its own
    end = max((b for _, b in spans), default=0.0)
    spans += [[a, b] for cs in cells if len(cs) >= 2 for a, b, _ in cs if a > end]
    spans.sort()
    cols: list[list[float]] = []
    for a, b in spans:
        if cols and a <= cols[-1][1] + 1:
            cols[-1][1] = max(cols[-1][1], b)
        else:
            cols.append([a, b])
    grid: list[list[str]] = []
    for r, cs in zip(rows, cells):
        row = [""] * len(cols)
        for a, b, t in cs:
            over = [i for i, (ca, cb) in enumerate(cols) if a < cb and b > ca]
            pieces = _split_cell(r, a, b, cols) if len(over) >= 2 else []
            for i, piece in pieces or [(_column_of(a, b, cols), t)]:
                row[i] = (row[i] + " " + piece).strip()
        grid.append(row)
    # header: leading rows without amounts (years and labels only), at most three, merged per column
    n_head = 0
    while head is None and n_head < min(3, len(grid) - 1) and not any(_is_amount(c) for c in grid[n_head][1:] if c):
        n_head += 1
    n_head = max(n_head, 1) if head is None else head
    header = [" ".join(r[i] for r in grid[:n_head] if r[i]) for i in range(len(cols))]
    out = ["| " + " | ".join(_cell(h) for h in header) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in grid[n_head:]]
    return "\n".join(out)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


# ---------------------------------------------------------------------------- the document


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\d+", "#", text.casefold())).strip()


def _edge(lines: list[_Line], k: int) -> tuple[bool, bool]:
    """(at the top, at the bottom) of its page: in the top/bottom band, or among the first/last two lines."""
    ln = lines[k]
    return ln.top < _BAND or k < 2, ln.bottom > 1 - _BAND or k >= len(lines) - 2


def _running(lines_by_page: dict[int, list[_Line]]) -> set[str]:
    """Texts (digits aside) of lines in the top/bottom band that repeat on many pages."""
    counts = collections.Counter()
    for lines in lines_by_page.values():
        counts.update({_norm(ln.text) for k, ln in enumerate(lines) if _edge(lines, k) != (False, False)})
    need = max(3, 0.2 * len(lines_by_page))
    return {t for t, n in counts.items() if n >= need}


def _margins(lines: list[_Line], width: float) -> list[_Line]:
    """Set each line's right margin: the most common right edge (to 6 pt) of the long lines that end on
    the same side of the page's middle (so each column of a two-column page has its own)."""
    ends: dict[bool, collections.Counter] = {True: collections.Counter(), False: collections.Counter()}
    starts: dict[bool, collections.Counter] = {True: collections.Counter(), False: collections.Counter()}
    for ln in lines:
        x1 = max(w.x1 for w in ln.words)
        if len(ln.text) >= 40:
            ends[x1 > width * 0.55][round(x1 / 6)] += 1
            starts[x1 > width * 0.55][round(ln.x0 / 6)] += 1
    starts_all = collections.Counter(round(ln.x0 / 6) for ln in lines if len(ln.text) >= 40)
    col = frozenset(x + d for x, n in starts_all.items() if n >= 3 for d in (-1, 0, 1))
    for ln in lines:
        ln.starts = col
        side = max(w.x1 for w in ln.words) > width * 0.55
        c = ends[side] or ends[True]
        ln.right, ln.pw = (c.most_common(1)[0][0] * 6 if c else width), width
        c = starts[side] or starts[True]
        ln.left = c.most_common(1)[0][0] * 6 if c else 0.0
    return lines


def _centered(ln: _Line) -> bool:
    """The line is centred on the page and does not fill it."""
    x0, x1 = ln.x0, max(w.x1 for w in ln.words)
    return abs((x0 + x1) / 2 - ln.pw / 2) < 0.05 * ln.pw and x1 - x0 < 0.75 * ln.pw


def _wraps(ln: _Line) -> bool:
    """The line runs to its column's right margin, so the text goes on in the next line."""
    x1 = max(w.x1 for w in ln.words)
    return x1 >= ln.right - max(3 * ln.words[-1].em, 15) and x1 - ln.x0 >= 0.6 * (ln.right - ln.left)


def _blocks(lines: list[_Line], grids: list[Grid] = ()) -> list[tuple[str, list[_Line]]]:
    """("grid" | "table" | "text", lines): grids are ruled tables, one row per band between two rules
    (:func:`_grid_rows`); tables are runs of multi-cell lines; text lines join into paragraphs when style and
    spacing agree."""
    out: list[tuple[str, list[_Line]]] = []
    ruled = _grid_rows(lines, list(grids)) if grids else {}
    i = 0
    while i < len(lines):
        if i in ruled:
            i, rows = ruled[i]
            out.append(("grid", rows))
            continue
        j = _table_end(lines, i)
        if j > i:
            out.append(("table", _join_wrapped(lines[i:j])))
            i = j
            continue
        ln = lines[i]
        if out and out[-1][0] == "text":
            prev = out[-1][1][-1]
            if _near(prev, ln, 1.0) and prev.style() == ln.style() and not _tabular(ln) and _wraps(prev) \
                    and len(out[-1][1]) < 40 and not _NUMBERED.match(ln.text):
                out[-1][1].append(ln)
                i += 1
                continue
        out.append(("text", [ln]))
        i += 1
    return out


def _table_end(lines: list[_Line], i: int) -> int:
    """End (exclusive) of the table starting at line ``i``, or ``i`` when none starts there. A table is a
    run of near lines split into cells, at least two of them with amounts or years; a short one-cell line
    between such rows (a bold row label like "Liabilities") stays in it. A title set apart above its table (a
    line all in bold, without figures, further above the next line than the table's lines are apart) is no row
    of it."""
    if len(lines[i].cells()) < 2 or _title_above(lines, i):
        return i
    j, last, rows = i + 1, i + 1 if _tabular(lines[i]) else i, int(_tabular(lines[i]))
    while j < len(lines) and _near(lines[j - 1], lines[j], 2.5):
        ln = lines[j]
        if len(ln.cells()) >= 2:
            rows += _tabular(ln)
            j += 1
            last = j if _tabular(ln) else last
        elif len(ln.text) <= 80 and any(_tabular(x) for x in lines[j + 1:j + 3]):
            j += 1
        else:
            break
    return last if rows >= 2 and last > i + 1 else i


def _titled(ln: _Line) -> bool:
    """A line all in bold, of at most two cells, none with an amount or a year: a title with its filer beside it
    ("Consolidated Statements of Income" and "Corning Incorporated and Subsidiary Companies")."""
    return ln.style()[1] and len(ln.cells()) <= 2 and not _tabular(ln)


def _title_above(lines: list[_Line], i: int) -> bool:
    """Line ``i`` is a title set apart above what follows it: :func:`_titled`, and the gap below it is wider than
    one and a half times the gap between the two lines after it (and over two points)."""
    ln = lines[i]
    if not _titled(ln) or i + 2 >= len(lines):
        return False
    a, b = lines[i + 1], lines[i + 2]
    if a.page == b.page == ln.page and ln.y0 - a.y1 > max(1.5 * (a.y0 - b.y1), 2.0):
        ln._memo["title"] = True  # read by _heading_style: such a title of two cells may still be a heading
        return True
    return False


def _tabular(ln: _Line) -> bool:
    cs = ln.cells()
    return len(cs) >= 2 and any(_is_amount(t) or _YEAR.match(t) for _, _, t in cs[1:])


def _near(a: _Line, b: _Line, factor: float) -> bool:
    """b starts below a within ``factor`` line heights."""
    h = max(a.y1 - a.y0, 1.0)
    return a.page == b.page and 0 <= a.y0 - b.y1 <= factor * h * 0.6 + 2 and b.y1 <= a.y1


def _join(lines: list[_Line]) -> str:
    text = ""
    for ln in lines:
        t = ln.text
        if text.endswith("-") and t[:1].islower():
            text = text[:-1] + t
        else:
            text = f"{text} {t}" if text else t
    return text


def _outline(doc) -> tuple[tuple[int, str, int], ...]:
    """The PDF's bookmarks as (1-based level, title, 1-based page), those without a page left out."""
    out = []
    for b in doc.get_toc():
        dest = b.get_dest()
        index = dest.get_index() if dest is not None else None
        if index is not None:
            out.append((b.level + 1, b.get_title(), index + 1))
    return tuple(out)


class TextLayerExtractor:
    """The text-layer extractor (see the module docstring). Implements ``Extractor``.

    Args:
        header / footer: keep running page headers and footers (off: they repeat on every page).
    """

    def __init__(self, *, header: bool = False, footer: bool = False):
        try:
            import pypdfium2  # noqa: F401
        except ImportError as e:  # a core dependency: only a broken install lands here
            raise MissingDependency(f"the offline extractor needs pypdfium2 ({e}): pip install pypdfium2") from None
        self.header, self.footer = header, footer
        self.name = f"textlayer-{TEXTLAYER_VERSION}-pypdfium2-{importlib.metadata.version('pypdfium2')}"

    def extract_pages(self, pdf: Path, pages: list[int] | None, *, progress: bool = True) -> PageTexts:
        import pypdfium2.raw as R

        doc = open_pdfium(pdf)
        try:
            numbers = pages if pages is not None else list(range(1, len(doc) + 1))
            words: dict[int, list[_Word]] = {}
            grids: dict[int, list[Grid]] = {}  # page -> its ruled grids (pages with figures only)
            sizes: dict[int, tuple[float, float]] = {}
            cache: dict = {}
            for pno in progress_bar(numbers, desc=f"{pdf.name} pages", unit="page", disable=not progress):
                page = read_page(doc, pno, pdf)  # reported, timed; a broken page tree is one line
                try:
                    sizes[pno] = page.get_size()
                    words[pno] = _page_words(page, R, cache)
                    grids[pno] = _page_grids(page, R, words[pno], sizes[pno][0])
                finally:
                    page.close()
            _join_ligatures(words)
            by_page: dict[int, list[_Line]] = {}
            for pno, ws in words.items():
                width, height = sizes[pno]
                by_page[pno] = _margins([_Line(line, pno, 1 - max(w.y1 for w in line) / height,
                                               1 - min(w.y0 for w in line) / height)
                                         for line in _reading_order(ws, width)], width)
            md = self._markdown(by_page, grids)
            outline = _outline(doc)
            return PageTexts(page_count=len(doc), pages=tuple((p, md[p]) for p in numbers), outline=outline)
        finally:
            doc.close()

    def _markdown(self, by_page: dict[int, list[_Line]], grids: dict[int, list[Grid]] | None = None) -> dict[int, str]:
        running = _running(by_page)
        kept: dict[int, list[_Line]] = {}
        for p, lines in by_page.items():
            keep = []
            for k, ln in enumerate(lines):
                top, bottom = _edge(lines, k)
                if (top and not self.header or bottom and not self.footer) and \
                        (_norm(ln.text) in running or _PAGE_NO.match(ln.text)):
                    continue
                keep.append(ln)
            kept[p] = keep
        body = _body_sizes(kept)
        blocks = {p: _blocks(_merge_sublines(lines), (grids or {}).get(p, ())) for p, lines in kept.items()}
        styles: dict[tuple, int] = {}
        heads: dict[int, set[int]] = {}
        for p, bs in blocks.items():
            for k, (kind, lines) in enumerate(bs):
                st = _heading_style(kind, lines, body[p], bs, k)
                if st is not None:
                    heads.setdefault(p, set()).add(k)
                    styles[st] = styles.get(st, 0) + 1
        rank = {st: min(i + 1, 6) for i, st in enumerate(sorted(styles, reverse=True))}
        out: dict[int, str] = {}
        for p, bs in blocks.items():
            parts = []
            for k, (kind, lines) in enumerate(bs):
                if kind in ("table", "grid"):
                    parts.append(_table_markdown(lines, head=1 if kind == "grid" else None))
                elif k in heads.get(p, ()):
                    level = rank[_heading_style(kind, lines, body[p], bs, k)]
                    parts.append("#" * level + " " + _join(lines))
                else:  # a footnote marker "#" opening a paragraph would make it a Markdown heading
                    text = _join(lines)
                    parts.append("\\" + text if text.startswith("#") else text)
            out[p] = "\n\n".join(parts) + ("\n\n" if parts else "")  # a blank line before the next page
        return out


def _body_sizes(kept: dict[int, list[_Line]]) -> dict[int, float]:
    """The body text size of each page: its most common character size when the page has enough text
    (an exhibit set in another size keeps its own), else the document's."""
    total = collections.Counter()
    per_page = {}
    for p, lines in kept.items():
        c = collections.Counter()
        for ln in lines:
            for w in ln.words:
                c[round(w.size * 2) / 2] += len(w.text)
        per_page[p] = c
        total.update(c)
    doc = total.most_common(1)[0][0] if total else 10.0
    return {p: c.most_common(1)[0][0] if sum(c.values()) >= 800 else doc for p, c in per_page.items()}


def _heading_style(kind: str, lines: list[_Line], body: float, blocks, k: int) -> tuple | None:
    """The heading style (size, bold, capitals, not italic) of a block, or None when it is not a heading."""
    if kind != "text" or len(lines) > 3:
        return None
    text = _join(lines)
    letters = sum(ch.isalpha() for ch in text)
    if len(text) > MAX_TITLE or letters < 4 or letters < 0.6 * len(text.replace(" ", "")):
        plain = strip_numbering(text).replace(" ", "")  # "4.06 Vesting.": its numbering is no reason to refuse
        if len(text) > MAX_TITLE or sum(ch.isalpha() for ch in plain) < max(4, 0.6 * len(plain)):
            return None
    if not (text[:1].isupper() or text[:1].isdigit()) or any(len(ln.cells()) > 1 and not ln._memo.get("title")
                                                             for ln in lines):
        return None  # figure labels and table fragments: lower-case starts, cells spread over the line
    if _NOT_TITLE.search(text):
        return None  # cover-page addresses, phone and file numbers; a statement's units caption
    first = lines[0]
    if first.starts and round(first.x0 / 6) not in first.starts and not _centered(first) \
            and abs(first.x0 + max(w.x1 for w in first.words) - first.left - first.right) > 0.1 * first.pw \
            and first.x0 > first.left + 0.1 * max(first.right - first.left, 1.0):
        return None  # starts where no prose line of its page starts, centred neither on the page nor in its
        # column: a table's column label
    size, bold, italic = first.style()
    caps = text.upper() == text
    numbered = bool(_NUMBERED.match(text))
    if numbered and len(lines) == 1 and len(text) <= 80 and not _wraps(first) and size >= body * 0.95 \
            and not text.endswith((",", ";")):
        return (size, bold, caps, not italic)  # "4.06 Vesting.", "2.01 Account:": a numbered line of its own
    if text.startswith("(") and text.endswith(")") or text.endswith(":"):  # a unit line or a lead-in
        return None
    if caps and len(lines) <= 2 and len(text) <= 100 and letters >= 6 and size >= body * 0.95 \
            and all(_centered(ln) for ln in lines):
        return (size, bold, caps, not italic)  # a centred line in capitals
    alone = k + 1 >= len(blocks) or blocks[k + 1][0] == "table" or blocks[k + 1][1][0].style() != first.style()
    if size >= body * 1.15 and len(text) <= 120:
        return (size, bold, caps, not italic)
    if not numbered and _SENTENCE_END.search(text) and len(text.split()) >= 8:
        return None  # a sentence in bold or italics (a risk factor's lead-in): emphasis, not a title
    if bold and size >= body * 0.85 and not text.endswith((",", ";")):
        return (size, bold, caps, not italic)
    if italic and size >= body * 0.95 and alone and len(lines) <= 2 and not text[:1].islower():
        return (size, bold, caps, not italic)
    if numbered and (caps or size > body) and len(text) <= 100:
        return (size, bold, caps, not italic)
    return None


TEXTLAYER_VERSION = 8  # bump when the rules above change what a PDF becomes (5, 6 and 7: versions measured, not kept)
