"""ipywidgets views for the notebooks: a skeleton-tree browser and a query explorer.

Each view is a small class whose controls are public ipywidgets attributes, so its
state is driven from Python (and from tests) the way a user drives it in JupyterLab::

    view = TreeView(tree)
    view.select("0066")                 # expands its ancestors and shows its text
    explorer = QueryExplorer(index)
    explorer.query.value = "For AMD, what is the current ratio?"
    explorer.k.value = 3                # explorer.shown_sections now lists 3 section ids

Displaying a view shows the interactive widget. ``summary_html()`` returns a static
HTML summary of the current state; the notebooks display it beside the widget, so a
headless run (nbmake in CI) and a rendered notebook show results, not only a widget
placeholder.

Every HTML block a widget shows is wrapped by :func:`ppkit.core.style.block`, whose inline
style beats JupyterLab's class rules (28 px widget line height, ``word-break: break-all``).
A displayed view shows the state of its object: a later cell that changes the same object
changes the widget shown above it, so a notebook makes one view per cell it displays.

This module only displays: trees, retrieval and scores come from the core modules.
"""

from __future__ import annotations

import html

from ..core.errors import InvalidInput, MissingDependency, NotFound
from ..core.style import PRE as _PRE
from ..core.style import block
from ..documents.tree import Node, Tree, read_lines
from ..indexing.index import SearchIndex
from ..pipeline import default_reranker
from ..retrieval.types import Candidate, Retrieval, Section
from .cues import cues_html, retrieval_cues
from .node_list import node_list
from .render import markdown_html

__all__ = ["TreeView", "QueryExplorer"]


def _widgets():
    try:
        import ipywidgets
    except ImportError:
        raise MissingDependency("ppkit.ui.widgets needs ipywidgets: pip install 'ppkit[notebooks]'") from None
    return ipywidgets


# the node's text rendered (headings, lists, tables), in a scrolling box like the PRE one
_TEXT = ("word-break:normal;overflow-wrap:break-word;font-size:12px;line-height:1.35;max-height:32em;overflow:auto;"
         "background:#fafafa;border:1px solid #ddd;padding:4px 8px;margin:4px 0")


def _esc(text) -> str:
    return html.escape(str(text), quote=True)


def _clip(text: str, max_chars: int) -> str:
    """``text`` up to ``max_chars`` characters, saying how much was left out."""
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + f"\n[… {len(text) - max_chars:,} more characters not shown here]"


# -- skeleton tree ----------------------------------------------------------------------------

def _span(node: Node) -> str:
    """The node's own-text line range; a root with no text before the first heading has none."""
    return f"{node.line_start}-{node.text_end}" if node.text_end >= node.line_start else "none"


class TreeView:
    """A collapsible view of a document's skeleton tree, with the selected node's text beside it.

    Each row shows the title, node id, level, own-text line range and number of figures.
    ``▸`` marks a collapsed node with children, ``▾`` an expanded one.

    Args:
        tree: the document's Tree.
        lines: the document's lines (default: read from ``tree.source``).
        noise: ``{node_id: NoiseDecision}``; flagged nodes are marked in their rows.
        expand_depth: nodes shallower than this start expanded (1: the top headings are visible).
        max_chars: characters of a node's text shown.
        rows: height of the node list.

    Controls: ``nodes`` (the node list; its value is the selected node id; with the list
    focused, the arrow keys move the selection, ``→``/Enter expands and ``←`` collapses, see
    :mod:`ppkit.ui.node_list`), ``toggle`` (expand/collapse the selected node), ``expand_all``,
    ``collapse_all``; ``text`` shows the selected node.
    """

    def __init__(self, tree: Tree, lines: list[str] | None = None, *, noise: dict | None = None,
                 expand_depth: int = 1, max_chars: int = 4000, rows: int = 20):
        if lines is None:
            if not tree.source:
                raise InvalidInput(f"tree {tree.doc!r} was built from text: pass its lines (lines=...)")
            lines = read_lines(tree.source)
        self.tree = tree
        self.lines = lines
        self.noise = dict(noise or {})
        self.max_chars = max_chars
        self.expanded: set[str] = {n.node_id for n in tree if n.children and n.depth < expand_depth}
        self.selected: str = tree.root.node_id
        self._busy = False  # True while options are rewritten (ignore the Select's own events)

        W = _widgets()
        self.nodes = node_list(self._options(), self.selected, rows=rows, layout=W.Layout(width="100%"))
        self.toggle = W.Button(description="expand / collapse", tooltip="open or close the selected node")
        self.expand_all = W.Button(description="expand all")
        self.collapse_all = W.Button(description="collapse all")
        self.text = W.HTML(layout=W.Layout(width="50%"))
        self.search = W.Text(placeholder="find a heading (Enter)", continuous_update=False,
                             layout=W.Layout(width="60%"))
        self.next_match = W.Button(description="next match", layout=W.Layout(width="auto"))
        self.search_status = W.HTML()
        self.matches: list[str] = []
        left = W.VBox([W.HBox([self.toggle, self.expand_all, self.collapse_all]),
                       W.HBox([self.search, self.next_match, self.search_status]), self.nodes],
                      layout=W.Layout(width="50%"))
        self.widget = W.HBox([left, self.text])

        self.nodes.observe(self._on_select, names="value")
        self.nodes.on_msg(lambda _widget, content, _buffers: self.key(content.get("event", "")))
        self.toggle.on_click(lambda _: self.toggle_node(self.selected))
        self.expand_all.on_click(lambda _: self._set_expanded({n.node_id for n in tree if n.children}))
        self.collapse_all.on_click(lambda _: self._set_expanded({tree.root.node_id}))
        self.search.observe(lambda change: self.find(change["new"]), names="value")
        self.next_match.on_click(lambda _: self.find(self.search.value, after=self.selected))
        self._show()

    def __repr__(self) -> str:
        return f"TreeView({self.tree!r}, selected={self.selected!r}, {len(self.visible())} rows visible)"

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    # -- state ---------------------------------------------------------------------------------
    def visible(self) -> list[str]:
        """Node ids shown in the list, in pre-order (children of collapsed nodes are hidden)."""
        out, stack = [], [self.tree.root.node_id]
        while stack:
            nid = stack.pop()
            out.append(nid)
            if nid in self.expanded:
                stack.extend(reversed(self.tree[nid].children))
        return out

    def _facts(self, node: Node) -> str:
        """`` · 2 fig · noise: toc`` for a node with figures or a noise decision."""
        out = f" · {len(node.images)} fig" if node.images else ""
        dec = self.noise.get(node.node_id)
        if dec is not None and dec.noise:
            out += f" · noise: {dec.category or '?'}"
        return out

    def label(self, node: Node) -> str:
        """One row of the list: indent, marker, title, then ``[id · level · lines · figures]``."""
        mark = ("▾ " if node.node_id in self.expanded else "▸ ") if node.children else "· "
        title = node.title if len(node.title) <= 70 else node.title[:69] + "…"
        info = f"{node.node_id} · L{node.level} · {_span(node)}" + self._facts(node)
        # non-breaking spaces: a <select> collapses ordinary leading spaces
        return "\u00a0\u00a0" * node.depth + mark + title + "  [" + info + "]"

    def _options(self) -> list[list[str]]:
        return [[self.label(self.tree[nid]), nid] for nid in self.visible()]

    def _refresh(self) -> None:
        self._busy = True
        try:
            self.nodes.options = self._options()
            self.nodes.value = self.selected if self.selected in self.visible() else None
        finally:
            self._busy = False

    def _set_expanded(self, expanded: set[str]) -> None:
        self.expanded = set(expanded)
        if self.selected not in self.visible():  # the selection was folded away: select its visible ancestor
            nid = self.selected
            while nid not in self.visible():
                nid = self.tree[nid].parent_id
            self.selected = nid
            self._show()
        self._refresh()

    def expand(self, node_id: str) -> None:
        """Show the children of ``node_id``."""
        self._set_expanded(self.expanded | {self.tree[node_id].node_id})

    def collapse(self, node_id: str) -> None:
        """Hide the subtree of ``node_id``."""
        self._set_expanded(self.expanded - {self.tree[node_id].node_id})

    def toggle_node(self, node_id: str) -> None:
        """Expand a collapsed node, collapse an expanded one (leaves are left alone)."""
        if node_id in self.expanded:
            self.collapse(node_id)
        elif self.tree[node_id].children:
            self.expand(node_id)

    def select(self, node_id: str) -> None:
        """Select ``node_id`` (expanding its ancestors) and show its text."""
        node = self.tree[node_id]  # a clear KeyError for a wrong id
        ancestors, p = set(), node.parent_id
        while p is not None:
            ancestors.add(p)
            p = self.tree[p].parent_id
        self.selected = node.node_id
        self._set_expanded(self.expanded | ancestors)
        self._show()

    def find(self, term: str, *, after: str | None = None) -> str | None:
        """Select the first heading whose title contains ``term`` (case-insensitive), or the first
        after node ``after`` (wrapping round); returns its id (None: no match, said in ``search_status``)."""
        term = term.strip().casefold()
        self.matches = [n.node_id for n in self.tree if term and n.node_id != self.tree.root.node_id
                        and term in n.title.casefold()] if term else []
        if not self.matches:
            self.search_status.value = block(f"<small>no heading contains {_esc(term)}</small>" if term else "")
            return None
        later = [m for m in self.matches if after is not None and m > after]
        found = (later or self.matches)[0]
        self.select(found)
        self.search_status.value = block(f"<small>{self.matches.index(found) + 1} of {len(self.matches)}</small>")
        return found

    def key(self, event: str) -> None:
        """What the node list's keys ask for: ``"expand"`` opens the selected node, ``"collapse"``
        closes it, or selects its parent when it is a leaf or already closed (as tree views do)."""
        node = self.tree[self.selected]
        if event == "expand" and node.children and node.node_id not in self.expanded:
            self.expand(node.node_id)
        elif event == "collapse":
            if node.node_id in self.expanded and node.node_id != self.tree.root.node_id:
                self.collapse(node.node_id)
            elif node.parent_id is not None:
                self.select(node.parent_id)

    def _on_select(self, change) -> None:
        if self._busy or change["new"] is None:
            return
        self.selected = change["new"]
        self._show()

    def _show(self) -> None:
        self.text.value = block(self.node_html(self.selected))

    # -- HTML ----------------------------------------------------------------------------------
    def node_html(self, node_id: str) -> str:
        """The node's breadcrumb, line ranges, figures and own text (up to ``max_chars``)."""
        n = self.tree[node_id]
        own = "\n".join(self.lines[n.line_start - 1 : n.text_end])
        facts = [f"<code>{_esc(n.node_id)}</code>", f"level {n.level}",
                 f"own text lines {_span(n)}", f"subtree lines {n.line_start}-{n.subtree_end}",
                 f"{len(n.children)} children", f"{len(n.images)} figures", f"{len(own):,} characters"]
        dec = self.noise.get(n.node_id)
        if dec is not None:
            facts.append(_esc(f"noise: {dec.category} ({dec.filter}: {dec.reason})" if dec.noise
                              else f"kept ({dec.filter}: {dec.reason})"))
        figs = "".join(f"<li><code>{_esc(im.path)}</code> line {im.line}"
                       + (f" - {_esc(im.problem)}" if im.problem else "") + "</li>" for im in n.images)
        return (f"<div><b>{_esc(n.breadcrumb)}</b><br><small>{' · '.join(facts)}</small>"
                + (f"<ul style='margin:2px 0'>{figs}</ul>" if figs else "")
                + f"<div class='ppkit-node-text' style='{_TEXT}'>{markdown_html(_clip(own, self.max_chars))}</div></div>")

    def _details(self, node_id: str) -> str:
        n = self.tree[node_id]
        info = f"{n.node_id} · L{n.level} · lines {_span(n)}" + self._facts(n)
        style = "background:#fff3c4;" if node_id == self.selected else ""
        head = f"<span style='{style}'>{_esc(n.title)}</span> <small style='color:#666'>[{_esc(info)}]</small>"
        if not n.children:
            return f"<div style='margin-left:1.1em'>{head}</div>"
        inner = "".join(self._details(c) for c in n.children)
        return (f"<details{' open' if node_id in self.expanded else ''} style='margin-left:0.6em'>"
                f"<summary>{head}</summary>{inner}</details>")

    def summary_html(self) -> str:
        """Static HTML: the whole tree as nested collapsible ``<details>`` (open where the widget is
        expanded, the selected node highlighted) beside the selected node's text."""
        t = self.tree
        caption = (f"<b>{_esc(t.doc)}</b>: {len(t) - 1} headings, {t.n_lines:,} lines, "
                   f"{sum(len(n.images) for n in t)} figures")
        return block(f"<div>{caption}<div style='display:flex;gap:12px;align-items:flex-start'>"
                     f"<div style='flex:1;max-height:36em;overflow:auto;font-size:12px'>{self._details(t.root.node_id)}</div>"
                     f"<div style='flex:1'>{self.node_html(self.selected)}</div></div></div>")


# -- query explorer ---------------------------------------------------------------------------

class QueryExplorer:
    """Two-stage retrieval, step by step: the 200 → 50 → k funnel (per filing when 2-4 filings are searched), the
    candidates and the chosen k.

    Args:
        index: a loaded :class:`ppkit.Index`.
        question: the first question (``""``: none yet).
        k: sections chosen (the slider runs 1-10).
        doc: the document filter: :attr:`AUTO` (the documents the question names, the
            default of :func:`ppkit.retrieval.retrieve.retrieve`), :attr:`ALL`, or a document name.
        reranker: stage 2 (default: the index's default re-ranker, kept for the session).
        max_chars: characters of the selected section's text shown.

    Controls: ``query`` (text box; a question runs on Enter), ``k`` (slider), ``doc``
    (dropdown), ``section`` (which candidate's full text ``section_text`` shows).

    Retrieval runs once per question and filter at ``k.max``; moving the slider takes
    the first k of that ranking, which is what ``retrieve(question, k)`` returns (stage 2
    orders all candidates whatever k is).
    """

    AUTO = "(documents the question names)"
    ALL = "(all documents)"

    def __init__(self, index: SearchIndex, question: str = "", *, k: int = 5, doc: str | None = None, reranker=None,
                 max_chars: int = 20000):
        self.index = index
        self.reranker = reranker if reranker is not None else default_reranker(index)
        self.max_chars = max_chars
        self.result: Retrieval | None = None  # the ranking at k = k.max
        self.error: str | None = None
        self._busy = False

        W = _widgets()
        if doc is not None and doc not in (self.AUTO, self.ALL):
            doc = index.resolve_doc(doc)
        self.query = W.Text(value=question, placeholder="Ask a question about the indexed documents",
                            continuous_update=False, description="question", layout=W.Layout(width="95%"))
        self.k = W.IntSlider(value=k, min=1, max=10, description="k", continuous_update=False)
        self.doc = W.Dropdown(options=[self.AUTO, self.ALL, *index.docs], value=doc or self.AUTO,
                              description="documents", layout=W.Layout(width="45%"))
        self.status = W.HTML()
        self.funnel = W.HTML()
        self.candidates = W.HTML(layout=W.Layout(max_height="30em", overflow="auto"))
        self.section = W.Dropdown(options=[], description="section", layout=W.Layout(width="95%"))
        self.section_text = W.HTML()
        self.widget = W.VBox([self.query, W.HBox([self.k, self.doc]), self.status, self.funnel,
                              self.candidates, self.section, self.section_text])

        self.query.observe(lambda _: self.refresh(), names="value")
        self.doc.observe(lambda _: self.refresh(), names="value")
        self.k.observe(lambda _: self._render(), names="value")
        self.section.observe(self._on_section, names="value")
        self.refresh()

    def __repr__(self) -> str:
        return f"QueryExplorer({self.query.value!r}, k={self.k.value}, doc={self.doc.value!r}, shown={self.shown_sections})"

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    # -- state ---------------------------------------------------------------------------------
    def _filter(self) -> tuple[list[str] | None, bool]:
        """(docs, auto_filter) for :func:`ppkit.retrieval.retrieve.retrieve`."""
        if self.doc.value == self.AUTO:
            return None, True
        if self.doc.value == self.ALL:
            return None, False
        return [self.doc.value], False

    def refresh(self) -> None:
        """Run retrieval for the current question and filter, then redraw."""
        self.result, self.error = None, None
        question = self.query.value.strip()
        if question:
            docs, auto = self._filter()
            try:
                self.result = self.index.retrieve(question, k=self.k.max, docs=docs, reranker=self.reranker,
                                                  auto_filter=auto)
            except Exception as e:  # shown in the widget: an exception in a callback would vanish into a log
                self.error = f"{type(e).__name__}: {e}"
        self._render(keep_section=False)

    @property
    def chosen(self) -> list[Section]:
        """The k sections retrieval returns for the current state."""
        return self.result.sections[: self.k.value] if self.result is not None else []

    @property
    def shown_sections(self) -> list[str]:
        """Section ids (``doc#node``) of the chosen k, best first."""
        return [s.section_id for s in self.chosen]

    def candidate_rows(self) -> list[dict]:
        """The candidates in stage-2 order: rank, section, breadcrumb, lines, both scores, chosen or not."""
        if self.result is None:
            return []
        chosen = set(self.shown_sections)
        return [{"rank": c.stage2_rank, "section_id": c.section_id, "breadcrumb": c.breadcrumb,
                 "lines": f"{c.line_start}-{c.line_end}", "stage1_rank": c.stage1_rank,
                 "stage1_score": round(c.stage1_score, 4), "stage2_score": c.stage2_score,
                 "chunk_hits": c.chunk_hits, "chosen": c.section_id in chosen}
                for c in self.result.candidates]

    def funnel_counts(self) -> dict:
        """Chunks recalled → distinct sections among them → candidates → chosen, and characters sent."""
        if self.result is None:
            return {}
        t = self.result.trace
        added = len(t.statements_added)
        return {"chunks": t.chunks_recalled, "sections": t.sections_recalled,
                "candidates": len(self.result.candidates) - added, "statements_added": added, "k": len(self.chosen),
                "context_chars": sum(len(s.text) for s in self.chosen)}

    def _candidate(self, section_id: str) -> Candidate:
        for c in self.result.candidates if self.result is not None else []:
            if c.section_id == section_id:
                return c
        raise NotFound(f"{section_id!r} is not among the current candidates")

    # -- rendering -----------------------------------------------------------------------------
    def _render(self, keep_section: bool = True) -> None:
        """Redraw from ``self.result``; a new ranking selects its top section, a new k keeps the selection."""
        self.status.value = block(self.status_html())
        self.funnel.value = block(self.funnel_html())
        self.candidates.value = block(self.candidates_html())
        rows = self.candidate_rows()
        options = [(("✓ " if r["chosen"] else "\u00a0\u00a0 ") + f"{r['rank']}. {r['section_id']} · {r['breadcrumb']}",
                    r["section_id"]) for r in rows]
        keep = self.section.value if keep_section and self.section.value in {r["section_id"] for r in rows} else None
        self._busy = True
        try:
            self.section.options = options
            self.section.value = keep or (rows[0]["section_id"] if rows else None)
        finally:
            self._busy = False
        self._show_section()

    def _on_section(self, change) -> None:
        if not self._busy:
            self._show_section()

    def _show_section(self) -> None:
        self.section_text.value = block(self.section_html(self.section.value)) if self.section.value else ""

    def status_html(self) -> str:
        """What was asked and how the document filter was chosen (or what went wrong)."""
        if self.error:
            return f"<div style='color:#b00020'><b>Retrieval failed.</b> {_esc(self.error)}</div>"
        if self.result is None:
            return "<div><i>Type a question and press Enter.</i></div>"
        t = self.result.trace
        where = {"question": "named in the question", "caller": "chosen in the filter", "none": "none: all documents"}
        docs = ", ".join(t.docs_filter) if t.docs_filter else "all"
        return (f"<div><b>{_esc(self.result.question)}</b><br><small>document filter: {_esc(docs)} "
                f"({where.get(t.filter_source, t.filter_source)}) · searched for: "
                f"<i>{_esc(t.search_text)}</i> · embedder {_esc(t.embedder)} · re-ranker "
                f"{_esc(t.reranker)}</small></div>" + cues_html(self.cues()))

    def cues(self) -> list[str]:
        """What to know before trusting the chosen sections (:func:`ppkit.ui.cues.retrieval_cues`): a name the
        index does not know, a document filter set against the question, no good match."""
        if self.result is None:
            return []
        manual = self.doc.value if self.doc.value not in (self.AUTO, self.ALL) else None
        return retrieval_cues(self.index, self.result.question, self.result, manual_doc=manual)

    def funnel_html(self) -> str:
        """The 200 → 50 → k funnel as a row of boxes (the counts are the trace's: summed over the filings when
        each got its own stage 1)."""
        f = self.funnel_counts()
        if not f:
            return ""
        box = ("<div style='border:1px solid #999;border-radius:4px;padding:4px 10px;text-align:center'>"
               "<div style='font-size:18px'><b>{}</b></div><small>{}</small></div>")
        steps = [box.format(f["chunks"], "chunks recalled (stage 1)"),
                 box.format(f["sections"], "distinct sections among them"),
                 box.format(f["candidates"] + f["statements_added"],
                            "candidate sections (dedup)" + (f" incl. {f['statements_added']} primary statements"
                                                            if f["statements_added"] else "")),
                 box.format(f["k"], f"chosen after re-ranking · {f['context_chars']:,} chars sent")]
        arrow = "<div style='font-size:20px'>→</div>"
        return f"<div style='display:flex;gap:8px;align-items:center;margin:6px 0'>{arrow.join(steps)}</div>"

    def candidates_html(self, limit: int | None = None) -> str:
        """The candidates in stage-2 order, the chosen k highlighted."""
        rows = self.candidate_rows()[:limit]
        if not rows:
            return ""
        head = "".join(f"<th style='text-align:left;padding:2px 6px'>{h}</th>" for h in
                       ("rank", "section", "breadcrumb", "lines", "stage-1 rank", "stage-1 score",
                        "stage-2 score", "chunks"))
        body = []
        for r in rows:
            style = "background:#fff3c4;font-weight:bold" if r["chosen"] else ""
            s2 = "" if r["stage2_score"] is None else f"{r['stage2_score']:.3f}"
            cells = (("✓ " if r["chosen"] else "") + str(r["rank"]), r["section_id"], r["breadcrumb"], r["lines"],
                     r["stage1_rank"], f"{r['stage1_score']:.3f}", s2, r["chunk_hits"])
            # only the breadcrumb wraps: "3246-3488" broken at its hyphen would double a row
            body.append(f"<tr style='{style}'>" + "".join(
                f"<td style='padding:2px 6px;text-align:left{'' if i == 2 else ';white-space:nowrap'}'>{_esc(c)}</td>"
                for i, c in enumerate(cells)) + "</tr>")
        return (f"<table style='border-collapse:collapse;font-size:12px'><thead><tr>{head}</tr></thead>"
                f"<tbody>{''.join(body)}</tbody></table>")

    def section_html(self, section_id: str, max_chars: int | None = None) -> str:
        """A candidate's full section text with its line range (and what was sent, when chosen)."""
        c = self._candidate(section_id)
        chosen = {s.section_id: s for s in self.chosen}
        facts = [f"<code>{_esc(c.section_id)}</code>", f"lines {c.line_start}-{c.line_end} of {_esc(c.doc)}",
                 f"{len(c.text):,} characters", f"stage-2 rank {c.stage2_rank}", f"stage-1 rank {c.stage1_rank}"]
        if section_id in chosen:
            s = chosen[section_id]
            sent = ", ".join(f"{a}-{b}" for a, b in s.sent_ranges)
            facts.append(f"<b>chosen #{s.rank}</b>: {len(s.text):,} characters sent (lines {sent})"
                         + (", trimmed to the section budget" if s.trimmed else ""))
        else:
            facts.append("not chosen")
        text = _clip(c.text, self.max_chars if max_chars is None else max_chars)
        return (f"<div><b>{_esc(c.breadcrumb)}</b><br><small>{' · '.join(facts)}</small>"
                f"<pre style='{_PRE}'>{_esc(text)}</pre></div>")

    def chosen_html(self) -> str:
        """A short table of the chosen k: rank, section, breadcrumb, lines, characters sent."""
        if not self.chosen:
            return self.status_html()
        rows = "".join(
            f"<tr><td>{s.rank}</td><td>{_esc(s.section_id)}</td><td>{_esc(s.breadcrumb)}</td>"
            f"<td>{s.line_start}-{s.line_end}</td><td>{len(s.text):,}{' (trimmed)' if s.trimmed else ''}</td></tr>"
            for s in self.chosen)
        return (f"{self.status_html()}<table style='font-size:12px'><thead><tr><th>rank</th><th>section</th>"
                f"<th>breadcrumb</th><th>lines</th><th>chars sent</th></tr></thead><tbody>{rows}</tbody></table>")

    def summary_html(self, *, candidates: bool = True, text_chars: int = 3000) -> str:
        """Static HTML of the current state: question, funnel, candidates (chosen k highlighted) and
        the selected section's text (up to ``text_chars``)."""
        parts = [self.status_html(), self.funnel_html()]
        if candidates:
            parts.append(f"<div style='max-height:30em;overflow:auto'>{self.candidates_html()}</div>")
        if self.section.value:
            parts.append(self.section_html(self.section.value, max_chars=text_chars))
        return block("<div>" + "".join(parts) + "</div>")
