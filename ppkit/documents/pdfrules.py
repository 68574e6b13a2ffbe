"""Drawn rules of a PDF page: the thin lines and bars a table's cells are ruled with, grouped into grids.

The text-layer extractor (:mod:`ppkit.documents.textlayer`) finds tables from the positions of words; where a
table is also drawn with rules, the rules say exactly which words share a row (a label wrapped over two lines
beside its figures set in the middle of the cell, a header cell over two lines) and, with vertical rules, which
share a column. This module only reads and groups the geometry:

* :func:`read_rules` - the page's path objects that are thin (at most :data:`THIN` points across, at least
  :data:`MIN_LENGTH` long): horizontal rules as ``(y, x0, x1)``, vertical ones as ``(x, y0, y1)``, in PDF
  coordinates (y grows upwards), pieces of one rule joined (HTML renderers draw a border per cell);
* :func:`ruled_grids` - runs of at least three horizontal rules of about the same extent, stacked with no
  wide gap: a :class:`Grid` with the rules' heights (row boundaries, top to bottom) and, where vertical rules
  cross most of its height, the column boundaries.

It does not decide whether a grid is a table of rows (a band may hold several rows when only the header and
the totals are ruled): the extractor checks that against the words in each band. It reads only top-level page
objects (a form XObject's rules are not read) and does not read filled cell backgrounds.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

__all__ = ["Rules", "Grid", "read_rules", "ruled_grids", "THIN", "MIN_LENGTH"]

THIN = 2.5  # points across: a rule, not a box
MIN_LENGTH = 8.0  # points along: shorter marks (bullets, dashes) are no rules
_JOIN = 4.0  # points: pieces of one rule closer than this along it are joined
_SAME = 1.5  # points: pieces this close across are on one rule
_ROW_GAP = 80.0  # points: rules further apart than this do not bound one row of a table
_MIN_RULES = 3  # horizontal rules a grid needs (top, one row boundary, bottom)


@dataclass(frozen=True)
class Rules:
    """A page's rules: ``horizontal`` ``(y, x0, x1)`` top to bottom, ``vertical`` ``(x, y0, y1)`` left to right."""

    horizontal: tuple[tuple[float, float, float], ...] = ()
    vertical: tuple[tuple[float, float, float], ...] = ()


@dataclass(frozen=True)
class Grid:
    """A ruled region: ``ys`` the heights of its horizontal rules (top to bottom, so ``ys[0]`` is its top and
    ``ys[-1]`` its bottom), ``x0``/``x1`` its extent, ``xs`` column boundaries from vertical rules (left to right,
    its edges included; empty when it has none)."""

    ys: tuple[float, ...]
    x0: float
    x1: float
    xs: tuple[float, ...] = ()

    @property
    def top(self) -> float:
        return self.ys[0]

    @property
    def bottom(self) -> float:
        return self.ys[-1]

    def bands(self) -> list[tuple[float, float]]:
        """``(upper y, lower y)`` of each row between two consecutive rules, top to bottom."""
        return list(zip(self.ys, self.ys[1:]))

    def columns(self) -> list[tuple[float, float]]:
        """``(x0, x1)`` of each column between two vertical rules (empty without vertical rules)."""
        return [(a, b) for a, b in zip(self.xs, self.xs[1:]) if b - a >= MIN_LENGTH]


def _join(pieces: list[tuple[float, float, float]]) -> tuple[tuple[float, float, float], ...]:
    """Pieces ``(across, start, end)`` joined into rules: the same position across, touching along."""
    out: list[list[float]] = []
    for c, a, b in sorted(pieces, key=lambda p: (round(p[0] / _SAME), p[1])):
        last = out[-1] if out else None
        if last is not None and abs(last[0] - c) <= _SAME and a <= last[2] + _JOIN:
            last[2] = max(last[2], b)
        else:
            out.append([c, a, b])
    return tuple((c, a, b) for c, a, b in out)


def read_rules(page, R) -> Rules:
    """The rules drawn on one page (a ``pypdfium2`` page; ``R``: ``pypdfium2.raw``), read through PDFium's
    page objects: every path whose bounding box is thin one way and long the other."""
    raw = page.raw
    get, kind, bounds = R.FPDFPage_GetObject, R.FPDFPageObj_GetType, R.FPDFPageObj_GetBounds
    path = R.FPDF_PAGEOBJ_PATH
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    refs = [ctypes.byref(v) for v in (left, bottom, right, top)]
    horizontal: list[tuple[float, float, float]] = []
    vertical: list[tuple[float, float, float]] = []
    for k in range(R.FPDFPage_CountObjects(raw)):
        obj = get(raw, k)
        if kind(obj) != path or not bounds(obj, *refs):
            continue
        x0, y0, x1, y1 = left.value, bottom.value, right.value, top.value
        if y1 - y0 <= THIN and x1 - x0 >= MIN_LENGTH:
            horizontal.append(((y0 + y1) / 2, x0, x1))
        elif x1 - x0 <= THIN and y1 - y0 >= MIN_LENGTH:
            vertical.append(((x0 + x1) / 2, y0, y1))
    h = sorted(_join(horizontal), key=lambda r: -r[0])
    return Rules(tuple(h), _join(vertical))


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


def _columns(rules: Rules, top: float, bottom: float, x0: float, x1: float) -> tuple[float, ...]:
    """Column boundaries of the region: vertical rules inside it that cross at least half its height."""
    height = max(top - bottom, 1.0)
    covered: dict[float, float] = {}  # x -> length inside the region
    for x, a, b in rules.vertical:
        if x0 - _JOIN <= x <= x1 + _JOIN:
            key = next((k for k in covered if abs(k - x) <= _SAME), x)
            covered[key] = covered.get(key, 0.0) + _overlap(a, b, bottom, top)
    inner = sorted(x for x, n in covered.items() if n >= 0.5 * height and x0 + _JOIN < x < x1 - _JOIN)
    if not inner:
        return ()
    return (x0, *inner, x1)


def ruled_grids(rules: Rules, page_width: float) -> list[Grid]:
    """Grids of horizontal rules (see the module docstring): at least :data:`_MIN_RULES` rules, each at least
    a fifth of the page wide and covering most of the grid's extent, consecutive ones at most
    :data:`_ROW_GAP` points apart.

    >>> r = Rules(horizontal=((700, 50, 500), (680, 50, 500), (660, 52, 499)))
    >>> ruled_grids(r, 612)[0].ys
    (700, 680, 660)
    """
    wide = [r for r in rules.horizontal if r[2] - r[1] >= 0.2 * page_width]
    groups: list[list[tuple[float, float, float]]] = []
    for y, a, b in wide:  # top to bottom
        for g in groups:
            gy, ga, gb = g[-1]
            if gy - y <= _ROW_GAP and _overlap(a, b, ga, gb) >= 0.9 * max(b - a, gb - ga):
                g.append((y, a, b))
                break
        else:
            groups.append([(y, a, b)])
    out = []
    for g in groups:
        if len(g) < _MIN_RULES:
            continue
        x0, x1 = min(r[1] for r in g), max(r[2] for r in g)
        ys = tuple(r[0] for r in g)
        out.append(Grid(ys, x0, x1, _columns(rules, ys[0], ys[-1], x0, x1)))
    return out
