"""Section-bounded chunks with a breadcrumb prefix.

A chunk never crosses a heading: each kept node's own text is cut on its own, at
paragraph, then line, then word boundaries, to about ``size`` characters with
about ``overlap`` characters repeated between neighbours. A Markdown table row
(a line starting with ``|``) is never split, even when it alone is longer than
``size``. Every chunk's text starts with ``[Doc > Section > Subsection]`` so that
the embedder sees where the words live (it reads only the first ~1,000
characters, so the breadcrumb goes first).

A section with no text of its own above its subsections (``# Advanced Micro Devices, Inc.``
directly above ``## Consolidated Balance Sheets``) gets no chunk: its title still lives in
every descendant's breadcrumb. A short section (at most ``min_chars`` characters of its own)
directly under its parent's unit is folded into that unit; any other section with text gets
a unit of its own, however short ("Chief executive: Jane Doe." above its subsections, a
Japanese sentence of 13 characters), so every character of a kept section is indexed (see
:func:`section_units`).

This module does not embed and does not decide what is noise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.errors import InvalidInput
from ..core.ids import ROOT_ID
from ..core.markup import render
from .tree import Tree, body_start

__all__ = ["Chunk", "section_units", "chunk_tree", "split_text", "split_line", "split_numbered", "fixed_size_chunks"]


@dataclass(frozen=True)
class Chunk:
    """A piece of one section's text, ready to embed."""

    chunk_id: int
    doc: str
    node_id: str
    seq: int  # position within its section
    line_start: int  # first source line of the body (1-based)
    line_end: int  # last source line of the body (inclusive)
    breadcrumb: str
    text: str  # "[breadcrumb]\n" + body

    @property
    def body(self) -> str:
        return self.text.split("\n", 1)[1] if "\n" in self.text else ""

    def __repr__(self) -> str:
        return f"Chunk({self.doc}#{self.node_id}.{self.seq} lines {self.line_start}-{self.line_end}, {len(self.text)} chars)"


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*")
_SPACES = re.compile(r"\s+")


def _segments(text: str, rx: re.Pattern) -> list[str]:
    """``text`` cut after each match of ``rx`` (the separators kept: joined, the segments are ``text``)."""
    out, i = [], 0
    for m in rx.finditer(text):
        if m.end() > i:
            out.append(text[i:m.end()])
            i = m.end()
    if i < len(text):
        out.append(text[i:])
    return out


def split_line(line: str, size: int, *, sentences: bool = True) -> list[str]:
    """Cut one line longer than ``size`` into pieces of at most ``size`` characters: at sentence ends
    (``sentences``), else at spaces, and a run without spaces (CJK text, a long token) every ``size``
    characters, so every character is in a piece; only the spaces at the cuts are dropped.

    >>> split_line("One two. Three four five. Six.", 14)
    ['One two.', 'Three four', 'five. Six.']
    >>> split_line("一二三四五六七", 3)
    ['一二三', '四五六', '七']
    """
    if len(line) <= size:
        return [line]
    atoms: list[tuple[str, bool]] = []  # (text, a long sentence's first word: a piece starts there)
    for seg in (_segments(line, _SENTENCE_END) if sentences else [line]):
        if len(seg.rstrip()) <= size:
            atoms.append((seg, False))
            continue
        words = [w[i:i + size] for w in _segments(seg, _SPACES) for i in range(0, len(w), size)]
        atoms.extend((w, sentences and j == 0) for j, w in enumerate(words))
    pieces, cur = [], ""
    for a, new_piece in atoms:
        if cur and (new_piece or len((cur + a).rstrip()) > size):
            pieces.append(cur.strip())
            cur = a
        else:
            cur += a
    pieces.append(cur.strip())
    return [p for p in pieces if p]


def split_text(lines: list[str], first_line: int, size: int = 2000, overlap: int = 200) -> list[tuple[int, int, str]]:
    """Cut ``lines`` (numbered from ``first_line``) into (line_start, line_end, text) pieces.

    See :func:`split_numbered`.

    >>> [p[:2] for p in split_text(["a" * 30, "", "b" * 30], 1, size=40, overlap=0)]
    [(1, 2), (3, 3)]
    """
    return split_numbered([(first_line + i, line) for i, line in enumerate(lines)], size, overlap)


def split_numbered(numbered: list[tuple[int, str]], size: int = 2000, overlap: int = 200) -> list[tuple[int, int, str]]:
    """Cut (source line, text) pairs into (line_start, line_end, text) pieces.

    Breaks prefer a blank line in the second half of a piece, then any line end;
    a line longer than ``size`` is cut at spaces unless it is a table row. The
    next piece starts with the last whole lines of the previous one that fit in
    ``overlap`` characters.
    """
    # atoms: (line number, text); long prose lines become several atoms with the same number
    atoms: list[tuple[int, str]] = []
    for ln, line in numbered:
        if len(line) > size and not line.lstrip().startswith("|"):
            atoms.extend((ln, part) for part in split_line(line, size, sentences=False))
        else:
            atoms.append((ln, line))
    while atoms and not atoms[-1][1].strip():
        atoms.pop()
    while atoms and not atoms[0][1].strip():
        atoms.pop(0)
    if not atoms:
        return []

    pieces = []
    start = 0
    while start < len(atoms):
        length, end = 0, start
        while end < len(atoms) and (end == start or length + len(atoms[end][1]) + 1 <= size):
            length += len(atoms[end][1]) + 1
            end += 1
        if end < len(atoms):
            # prefer to stop at a paragraph break in the second half of the piece
            run = 0
            best = None
            for j in range(start, end):
                run += len(atoms[j][1]) + 1
                if not atoms[j][1].strip() and run >= size // 2:
                    best = j + 1
            if best is not None and best > start:
                end = best
        chunk = atoms[start:end]
        text = "\n".join(a[1] for a in chunk).strip("\n")
        if text.strip():
            pieces.append((chunk[0][0], chunk[-1][0], text))
        if end >= len(atoms):
            break
        # overlap: back up over whole atoms worth at most `overlap` characters
        back, nxt = 0, end
        while nxt - 1 > start and back + len(atoms[nxt - 1][1]) + 1 <= overlap:
            nxt -= 1
            back += len(atoms[nxt][1]) + 1
        while nxt < end and not atoms[nxt][1].strip():
            nxt += 1
        start = nxt if nxt > start else end
    return pieces


def _body_chars(tree: Tree, lines: list[str], node_id: str) -> int:
    n = tree[node_id]
    first = body_start(lines, n)  # a setext heading's underline is not text
    return sum(len(line.strip()) for line in lines[first - 1 : n.text_end])


def section_units(tree: Tree, lines: list[str], kept: set[str] | None = None, *, min_chars: int = 40) -> dict[str, tuple[int, int]]:
    """Which nodes get chunks, and the line range each one's unit covers.

    Returns ``{node_id: (first line, last line)}``. A unit is the node's own text,
    extended over directly following short descendants (they are folded in). Nodes
    with no text of their own get no unit; every other node gets one, or is folded
    into the unit right above it, so nothing is lost.
    """
    kept = set(tree.nodes) if kept is None else kept
    units: dict[str, tuple[int, int]] = {}  # node_id -> (first line, last line)
    last_unit: str | None = None  # the unit that ends right above the current heading
    for n in tree:
        if n.node_id not in kept:
            last_unit = None
            continue
        chars = _body_chars(tree, lines, n.node_id)
        short = chars <= min_chars
        if chars == 0 and n.children:
            continue  # nothing of its own: its title lives on in the children's breadcrumbs
        if short and n.node_id != ROOT_ID:
            host = last_unit
            if host is not None and _is_ancestor(tree, host, n.node_id) and units[host][1] == n.line_start - 1:
                units[host] = (units[host][0], n.text_end)
                continue
            if chars == 0:
                continue  # an empty leaf: nothing to find
        if n.node_id == ROOT_ID and chars == 0:
            continue
        units[n.node_id] = (n.line_start, n.text_end)
        last_unit = n.node_id
    return units


def _is_ancestor(tree: Tree, anc: str, node_id: str) -> bool:
    p = tree[node_id].parent_id
    while p is not None:
        if p == anc:
            return True
        p = tree[p].parent_id
    return False


def chunk_tree(tree: Tree, lines: list[str], kept: set[str] | None = None, *, size: int = 2000,
               overlap: int = 200, min_chars: int = 40, first_id: int = 0) -> list[Chunk]:
    """Structure-guided chunks of one document.

    Args:
        tree: the document's tree; ``lines`` its lines (HTML tables in them are embedded
            as compact pipe rows, see :mod:`ppkit.core.markup`).
        kept: node ids that survived the noise filter (default: all).
        size / overlap: characters per chunk body and repeated between chunks.
        first_id: chunk id of the first chunk (ids are unique within an index).

    Returns:
        Chunks in document order, each prefixed with ``[breadcrumb]``.
    """
    out: list[Chunk] = []
    cid = first_id
    for node_id, (first, last) in section_units(tree, lines, kept, min_chars=min_chars).items():
        n = tree[node_id]
        body_first = body_start(lines, n) if first == n.line_start else first  # the heading is in the prefix
        prefix = f"[{n.breadcrumb}]\n"
        # HTML tables are rendered as pipe rows (ppkit.core.markup); line numbers stay those of the source
        body = render(lines[body_first - 1 : last], body_first)
        for seq, (a, b, text) in enumerate(split_numbered(body, size, overlap)):
            out.append(Chunk(cid, tree.doc, node_id, seq, a, b, n.breadcrumb, prefix + text))
            cid += 1
    return out


def fixed_size_chunks(text: str, *, size: int = 2000, overlap: int = 200) -> list[tuple[int, int, str]]:
    """Blind baseline: cut the whole document every ``size`` characters (``overlap`` repeated),
    ignoring headings. Returns (start offset, end offset, text)."""
    if overlap >= size:
        raise InvalidInput("overlap must be smaller than size")
    out, i = [], 0
    while i < len(text):
        out.append((i, min(i + size, len(text)), text[i : i + size]))
        if i + size >= len(text):
            break
        i += size - overlap
    return out
