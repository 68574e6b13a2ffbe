"""A notebook view of a document comparison: two breadcrumb columns joined by lines, and a pair's texts
side by side with the differences highlighted.

    view = CompareView(index, "Emerson", "TRoadhouse", criteria="liens and guarantees")
    view.select(0)            # the first pair: both texts side by side in view.texts
    view                      # in JupyterLab: choose the documents and the criteria, click a pair

:func:`alignment_html` draws the sections of A (left) and B (right), one row each, with an SVG line
between every matched pair (grey for a weak match); :func:`side_by_side_html` shows two texts in two
columns, the words only in A struck through in red and the words only in B underlined in green
(:class:`difflib.SequenceMatcher` over words). Both are static HTML, so a headless run shows them too.

This module only displays: the comparison comes from :func:`ppkit.pipeline.compare`.
"""

from __future__ import annotations

import difflib
import html
import re

from ..compare.comparison import Comparison
from ..core.style import PRE, block
from ..pipeline import compare

__all__ = ["CompareView", "alignment_html", "side_by_side_html"]

_ROW = 22  # pixels per section row in the alignment
_WORD = re.compile(r"\S+|\s+")


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _short(title: str, n: int = 60) -> str:
    return title if len(title) <= n else title[: n - 1] + "…"


def alignment_html(cmp: Comparison, *, width: int = 900) -> str:
    """Two columns of section titles (A's compared sections, then B's sections in document order) with a
    line from each section of A to each of its counterparts; B's unmatched sections are grey."""
    a_rows = [p.a for p in cmp.pairs]
    b_seen: dict[str, object] = {}
    for p in cmp.pairs:
        for c in p.b:
            b_seen.setdefault(c.section.node, c.section)
    for s in cmp.unmatched_b:
        b_seen.setdefault(s.node, s)
    b_rows = sorted(b_seen.values(), key=lambda s: s.line_start)
    b_pos = {s.node: i for i, s in enumerate(b_rows)}
    col = (width - 120) // 2
    height = max(len(a_rows), len(b_rows), 1) * _ROW + 4
    lines = []
    for i, p in enumerate(cmp.pairs):
        for c in p.b:
            j = b_pos[c.section.node]
            colour = "#2563eb" if c.score >= 0.5 else "#94a3b8"
            lines.append(f"<line x1='{col}' y1='{i * _ROW + _ROW // 2}' x2='{col + 120}' "
                         f"y2='{j * _ROW + _ROW // 2}' stroke='{colour}' stroke-width='1.5'/>")
    unmatched = {s.node for s in cmp.unmatched_b}
    texts = [f"<text x='{col - 6}' y='{i * _ROW + 15}' text-anchor='end' font-size='12'>"
             f"<title>{_e(s.breadcrumb)}</title>{_e(_short(s.title))}</text>" for i, s in enumerate(a_rows)]
    texts += [f"<text x='{col + 126}' y='{j * _ROW + 15}' font-size='12' "
              f"fill='{'#94a3b8' if s.node in unmatched else '#111'}'><title>{_e(s.breadcrumb)}</title>"
              f"{_e(_short(s.title))}</text>" for j, s in enumerate(b_rows)]
    head = (f"<div><b>{_e(cmp.a)}</b> ({len(a_rows)} sections) &#8594; <b>{_e(cmp.b)}</b> "
            f"({len(b_rows)} sections; grey: no section of {_e(cmp.a)} matched)</div>")
    svg = (f"<svg class='ppkit-alignment' width='{width}' height='{height}' "
           f"style='font-family:sans-serif'>{''.join(lines)}{''.join(texts)}</svg>")
    return block(head + f"<div style='max-height:30em;overflow:auto'>{svg}</div>")


def side_by_side_html(a_text: str, b_text: str, *, a_title: str = "A", b_title: str = "B",
                      max_chars: int = 8000) -> str:
    """Two texts in two columns, the words only in A struck in red, the words only in B underlined in green.

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
    cols = "".join(f"<div style='flex:1;min-width:0'><b>{_e(t)}</b><pre style='{PRE}'>{''.join(body)}{cut}</pre></div>"
                   for t, body in ((a_title, left), (b_title, right)))
    return block(f"<div class='ppkit-side-by-side' style='display:flex;gap:8px'>{cols}</div>")


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
        self.status = W.HTML()
        self.alignment = W.HTML()
        self.pair = W.Select(options=[], rows=8, description="pairs", layout=W.Layout(width="95%"))
        self.texts = W.HTML()
        self.widget = W.VBox([W.HBox([self.doc_a, self.doc_b]), W.HBox([self.criteria, self.run]), self.status,
                              self.alignment, self.pair, self.texts])
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
        self.alignment.value = alignment_html(cmp)
        options = [(f"{i + 1}. {p.a.title}  ↔  {c.section.title}  (match {c.score:.2f}, similarity "
                    f"{c.diff.similarity:.2f})", (i, j)) for i, p in enumerate(cmp.pairs) for j, c in enumerate(p.b)]
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
        self.texts.value = side_by_side_html(ta, tb, a_title=p.a.breadcrumb, b_title=c.section.breadcrumb)

    def summary_html(self) -> str:
        """The alignment and the selected pair's texts as static HTML (for a headless run)."""
        return self.status.value + self.alignment.value + self.texts.value
