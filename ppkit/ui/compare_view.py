"""A notebook view of a document comparison: what to read first, two breadcrumb columns joined by lines, and a
pair's texts side by side with the differences highlighted.

    view = CompareView(index, "Emerson", "TRoadhouse", criteria="liens and guarantees")
    view.select(0)            # the first pair: both texts side by side in view.texts
    view                      # in JupyterLab: choose the documents and the criteria, click a pair

:func:`read_first_html` lists the sections with no counterpart both ways; :func:`alignment_html` draws the
sections of A (left) and B (right), one row each, with an SVG line between every pair (blue from a score of 0.5,
grey below), under a legend that says what the score means; :func:`side_by_side_html` shows two texts in two
columns, the words only in A struck through in red and the words only in B underlined in green
(:class:`difflib.SequenceMatcher` over words), then the figures, dates and names that changed. The columns wrap
below each other when the box is narrower than two of them (:data:`COLUMN_PX` each) and the box scrolls
sideways rather than cut a column off. All of it is static HTML, so a headless run shows it too.

This module only displays: the comparison comes from :func:`ppkit.pipeline.compare`.
"""

from __future__ import annotations

import difflib
import html
import re

from ..compare.diff import ValueChange
from ..compare.report import read_first
from ..compare.types import SCORE_LEGEND, Comparison
from ..core.style import PRE, block
from ..pipeline import compare

__all__ = ["CompareView", "alignment_html", "side_by_side_html", "read_first_html", "COLUMN_PX", "STRONG"]

_ROW = 22  # pixels per section row in the alignment
COLUMN_PX = 460  # the side-by-side columns' width before they wrap below each other
STRONG = 0.5  # a pair's line is blue from this score, grey below
_WORD = re.compile(r"\S+|\s+")


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _short(title: str, n: int = 60) -> str:
    return title if len(title) <= n else title[: n - 1] + "…"


def alignment_html(cmp: Comparison, *, width: int = 900) -> str:
    """Two columns of section titles (A's compared sections, then B's sections in document order) with a
    line from each section of A to each of its counterparts; B's unmatched sections are grey. Containers (headings
    with no text of their own) are left out: their sections carry the lines."""
    a_rows = [p.a for p in cmp.sections]
    b_seen: dict[str, object] = {}
    for p in cmp.sections:
        for c in p.b:
            b_seen.setdefault(c.section.node, c.section)
    for s in cmp.unmatched_b:
        b_seen.setdefault(s.node, s)
    b_rows = sorted(b_seen.values(), key=lambda s: s.line_start)
    b_pos = {s.node: i for i, s in enumerate(b_rows)}
    col = (width - 120) // 2
    height = max(len(a_rows), len(b_rows), 1) * _ROW + 4
    lines = []
    for i, p in enumerate(cmp.sections):
        for c in p.b:
            j = b_pos[c.section.node]
            colour = "#2563eb" if c.score >= STRONG else "#94a3b8"
            lines.append(f"<line x1='{col}' y1='{i * _ROW + _ROW // 2}' x2='{col + 120}' "
                         f"y2='{j * _ROW + _ROW // 2}' stroke='{colour}' stroke-width='1.5'/>")
    unmatched = {s.node for s in cmp.unmatched_b}
    texts = [f"<text x='{col - 6}' y='{i * _ROW + 15}' text-anchor='end' font-size='12'>"
             f"<title>{_e(s.breadcrumb)}</title>{_e(_short(s.title))}</text>" for i, s in enumerate(a_rows)]
    texts += [f"<text x='{col + 126}' y='{j * _ROW + 15}' font-size='12' "
              f"fill='{'#94a3b8' if s.node in unmatched else '#111'}'><title>{_e(s.breadcrumb)}</title>"
              f"{_e(_short(s.title))}</text>" for j, s in enumerate(b_rows)]
    head = (f"<div><b>{_e(cmp.a)}</b> ({len(a_rows)} sections) &#8594; <b>{_e(cmp.b)}</b> "
            f"({len(b_rows)} sections; grey titles: no section of {_e(cmp.a)} pairs them)</div>"
            f"<div class='ppkit-legend' style='color:#475569'>Lines: blue from a score of {STRONG}, grey below. "
            f"{_e(SCORE_LEGEND[0].upper() + SCORE_LEGEND[1:])}.</div>")
    # as wide as its box up to ``width`` pixels, scaled down (not cut off) in a narrower one
    svg = (f"<svg class='ppkit-alignment' viewBox='0 0 {width} {height}' width='100%' "
           f"preserveAspectRatio='xMinYMin meet' style='max-width:{width}px;font-family:sans-serif'>"
           f"{''.join(lines)}{''.join(texts)}</svg>")
    return block(head + f"<div style='max-height:30em;overflow:auto;max-width:100%'>{svg}</div>")


def read_first_html(cmp: Comparison) -> str:
    """The sections with no counterpart, both ways, as two lists (what a reviewer reads first)."""
    parts = []
    for head, items in read_first(cmp):
        shown = "".join(f"<li>{_e(x)}</li>" for x in items[:40]) or "<li>none</li>"
        more = f"<li>… and {len(items) - 40} more</li>" if len(items) > 40 else ""
        parts.append(f"<div style='flex:1 1 {COLUMN_PX}px;min-width:0'><b>{_e(head)}</b> ({len(items)})"
                     f"<ul style='margin:2px 0'>{shown}{more}</ul></div>")
    return block("<div class='ppkit-read-first' style='display:flex;flex-wrap:wrap;gap:8px;max-width:100%'>"
                 + "".join(parts) + "</div>")


def _values_html(values: tuple[ValueChange, ...]) -> str:
    if not values:
        return ""
    rows = "".join(f"<tr><td>{_e(v.kind)}</td><td>{_e(v.a)}</td><td>{_e(v.b)}</td></tr>" for v in values)
    return ("<table class='ppkit-values' style='border-collapse:collapse;margin-top:4px'><tr><th>changed</th>"
            f"<th>in A</th><th>in B</th></tr>{rows}</table>")


def side_by_side_html(a_text: str, b_text: str, *, a_title: str = "A", b_title: str = "B",
                      max_chars: int = 8000, values: tuple[ValueChange, ...] = ()) -> str:
    """Two texts in two columns, the words only in A struck in red, the words only in B underlined in green;
    below them, ``values``: the figures, dates and names that changed (:attr:`PairDiff.values`).

    >>> "<del" in side_by_side_html("the fee is 0.10%", "the fee is 0.15%")
    True
    """
    wa, wb = _WORD.findall(a_text[:max_chars]), _WORD.findall(b_text[:max_chars])
    left, right = [], []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes():
        xa, xb = _e("".join(wa[i1:i2])), _e("".join(wb[j1:j2]))
        if op == "equal":
            left.append(xa)
            right.append(xb)
            continue
        if xa:
            left.append(f"<del class='ppkit-only-a' style='background:#fee2e2;color:#991b1b'>{xa}</del>")
        if xb:
            right.append(f"<ins class='ppkit-only-b' style='background:#dcfce7;color:#166534'>{xb}</ins>")
    cut = " [… cut]" if max(len(a_text), len(b_text)) > max_chars else ""
    cols = "".join(f"<div class='ppkit-column' style='flex:1 1 {COLUMN_PX}px;min-width:0;max-width:100%'>"
                   f"<b>{_e(t)}</b><pre style='{PRE}'>{''.join(body)}{cut}</pre></div>"
                   for t, body in ((a_title, left), (b_title, right)))
    box = ("display:flex;flex-wrap:wrap;gap:8px;max-width:100%;box-sizing:border-box;overflow-x:auto")
    return block(f"<div class='ppkit-side-by-side' style='{box}'>{cols}</div>{_values_html(values)}")


class CompareView:
    """Choose two documents and a criterion, see the alignment, click a pair to read both texts.

    Args:
        index: a loaded :class:`ppkit.Index` holding the documents.
        a, b: the documents to compare first (default: the index's first two).
        criteria: the first criterion (``""``: whole documents).
        n: sections of A in criteria mode.

    Controls: ``doc_a``, ``doc_b`` (dropdowns), ``criteria`` (text), ``run`` (button), ``pair`` (the list of
    pairs: a click shows both texts in ``texts``). ``comparison`` holds the last result.
    """

    def __init__(self, index, a: str | None = None, b: str | None = None, *, criteria: str = "", n: int = 10):
        import ipywidgets as W

        docs = list(index.docs)
        self.index, self.n = index, n
        self.comparison: Comparison | None = None
        self.doc_a = W.Dropdown(options=docs, value=index.resolve_doc(a) if a else docs[0], description="A")
        self.doc_b = W.Dropdown(options=docs, value=index.resolve_doc(b) if b else docs[1], description="B")
        self.criteria = W.Text(value=criteria, placeholder="criteria (empty: whole documents)",
                               description="criteria", layout=W.Layout(width="60%"))
        self.run = W.Button(description="Compare")
        full = W.Layout(width="auto", max_width="100%")  # each HTML box as wide as the output, no wider
        self.status = W.HTML(layout=full)
        self.first = W.HTML(layout=full)
        self.alignment = W.HTML(layout=full)
        self.pair = W.Select(options=[], rows=8, description="pairs", layout=W.Layout(width="95%"))
        self.texts = W.HTML(layout=full)
        self.widget = W.VBox([W.HBox([self.doc_a, self.doc_b]), W.HBox([self.criteria, self.run]), self.status,
                              self.first, self.alignment, self.pair, self.texts], layout=W.Layout(width="100%"))
        self.run.on_click(lambda _: self.refresh())
        self.pair.observe(lambda _: self._show(), names="value")
        self.refresh()

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)

    def refresh(self) -> Comparison:
        """Compare the chosen documents with the criteria; the first pair is selected."""
        crit = self.criteria.value.strip() or None
        self.comparison = compare(self.doc_a.value, self.doc_b.value, crit, index=self.index, n=self.n)
        cmp = self.comparison
        fit = f"; fit: {cmp.fit.reason}" if cmp.fit else ""
        self.status.value = block(_e(repr(cmp) + fit))
        self.first.value = read_first_html(cmp)
        self.alignment.value = alignment_html(cmp)
        options = [(f"{i + 1}. {p.a.title}  ↔  {c.section.title}  (score {c.score:.2f})", (i, j))
                   for i, p in enumerate(cmp.pairs) if not p.container for j, c in enumerate(p.b)]
        self.pair.options = options
        self.pair.value = options[0][1] if options else None
        self._show()
        return cmp

    def select(self, i: int, j: int = 0) -> None:
        """Show pair ``i`` (a section of A) with its ``j``-th counterpart."""
        self.pair.value = (i, j)

    def _show(self) -> None:
        if self.comparison is None or self.pair.value is None:
            self.texts.value = block("<i>no pair to show</i>")
            return
        i, j = self.pair.value
        p = self.comparison.pairs[i]
        c = p.b[j]
        ta = self.index.rendered_text(self.comparison.a, p.a.line_start, p.a.line_end)
        tb = self.index.rendered_text(self.comparison.b, c.section.line_start, c.section.line_end)
        head = block(f"<div class='ppkit-pair-reason'>score {c.score:.2f}: {_e(c.reason)}</div>")
        self.texts.value = head + side_by_side_html(ta, tb, a_title=p.a.breadcrumb, b_title=c.section.breadcrumb,
                                                    values=c.diff.values)

    def summary_html(self) -> str:
        """What to read first, the alignment and the selected pair's texts as static HTML (for a headless run)."""
        return self.status.value + self.first.value + self.alignment.value + self.texts.value
