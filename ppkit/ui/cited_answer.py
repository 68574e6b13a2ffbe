"""A cited-answer widget for any index: ask, read the answer block first, then the evidence behind it.

What it shows, top to bottom: the controls (question box, **k**, document filter, **Ask**, **New
conversation**), the cues (:mod:`ppkit.ui.cues`: a name the index does not know, a filter against the
question, no good match), the **answer block** (``answer.block``: one to three cited lines), the
**computed figure** when the answer computed a metric (formula inputs, each cited), the **verification**
(how many numbers and quotes were found in the cited lines, and every warning), the **evidence** (the
answer's text and the sections it was written from, each with document, node, lines and pages), the
images, and the **conversation** so far (a follow-up is rewritten with the earlier turns, as
:func:`ppkit.ask` does with ``history``).

Every piece is also a plain function of an :class:`~ppkit.answer.synth.Answer` returning HTML
(:func:`block_html`, :func:`evidence_html`, ...), and :meth:`CitedAnswer.summary_html` puts them together,
so a headless run (nbmake) and a rendered notebook show the answer, not only a widget placeholder.
This module only displays: the answer comes from :meth:`ppkit.Index.ask`.
"""

from __future__ import annotations

import html

from ..answer.answered import verdict
from ..answer.synth import MODES
from ..answer.verify import format_report
from ..core.style import block, readable_glyphs
from ..indexing.index import SearchIndex
from .answer_view import answer_html, image_widgets
from .cues import cues_html, retrieval_cues
from .widgets import _widgets

__all__ = ["CitedAnswer", "answer_widget", "block_html", "computed_html", "verification_html", "evidence_html", "history_html"]

_H = "font-size:13px;font-weight:600;margin:8px 0 2px 0"
_MARK = {"computed": "computed", "figure": "figure", "passage": "passage", "yes_no": "yes / no",
         "not_found": "not found", "not_meaningful": "not meaningful"}


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _pages(pages) -> str:
    pages = list(pages or [])
    if not pages:
        return ""
    return f", p. {pages[0]}" if len(pages) == 1 else f", pp. {pages[0]}-{pages[-1]}"


def _mode(answer) -> str:
    """The small label saying who wrote the answer (``answer.mode``: offline or gemini)."""
    mode = getattr(answer, "mode", "")
    return (f" <span class='ppkit-mode' title='{_e(MODES.get(mode, mode))}' style='font-weight:400;font-size:11px;"
            f"color:#555;border:1px solid #ccc;border-radius:3px;padding:0 4px'>{_e(mode)}</span>" if mode else "")


def block_html(answer) -> str:
    """The answer block (what the answer says, in one to three lines) with its kind, its mode label and
    citations."""
    b = answer.block
    if b is None:  # an answer written without a block: its first paragraph
        first = next((p for p in answer.text.split("\n\n") if p.strip() and not p.startswith("[")), answer.text)
        return block(f"<div style='{_H}'>Answer{_mode(answer)}</div><div>{_e(first.strip())}</div>")
    cites = "; ".join(f"<code>{_e(c.doc)}#{_e(c.node)}</code> lines {c.line_start}-{c.line_end}{_pages(c.pages)}"
                      if c.line_end != c.line_start else
                      f"<code>{_e(c.doc)}#{_e(c.node)}</code> line {c.line_start}{_pages(c.pages)}"
                      for c in b.citations)
    colour = "#7a4b00" if b.kind in ("not_found", "not_meaningful") else "#14532d"
    return block(f"<div style='{_H}'>Answer <span style='font-weight:400;color:#555'>({_e(_MARK.get(b.kind, b.kind))})"
                 f"</span>{_mode(answer)}</div><div class='ppkit-answer-block' style='font-size:15px;color:{colour};"
                 f"border-left:4px solid {colour};padding:4px 8px;background:#f6f8f6'>"
                 f"{_e(readable_glyphs(b.text))}</div>"
                 + (f"<div style='color:#555;font-size:12px'>cited: {cites}</div>" if cites else ""))


def computed_html(answer) -> str:
    """The metric the answer computed (name, value, inputs by document, node and line; what was missing);
    empty when it computed none."""
    m = (getattr(answer.trace, "synthesis", None) or {}).get("metric") or {}
    if not m:
        return ""
    value = m.get("value")
    shown = "not computed" if value is None else f"{value:,} ({_e(m.get('unit', ''))})"
    rows = "".join(f"<li><code>{_e(i)}</code></li>" for i in m.get("inputs") or [])
    missing = (f"<div>missing inputs: {_e(', '.join(map(str, m['missing'])))}</div>" if m.get("missing") else "")
    return block(f"<div style='{_H}'>Computed figure</div><div>{_e(m.get('name', ''))}, {_e(m.get('doc', ''))} "
                 f"{_e(m.get('year', ''))}: <b>{shown}</b></div>"
                 + (f"<div>inputs (document#node:line):<ul style='margin:2px 0'>{rows}</ul></div>" if rows else "")
                 + missing)


_VERDICT_COLOUR = {"verified": "#14532d", "unanswered": "#7a4b00", "unchecked": "#555", "problems": "#b00020",
                   "none": "#555"}


def verification_html(answer) -> str:
    """The verdict on the answer block ("verified" only when its quotes check and it answers the question:
    :func:`ppkit.answer.answered.verdict`) with its kind and confidence, the text's verification in one line, and
    every warning a reader must know."""
    parts = []
    if answer.verification:
        d = verdict(answer.verification, answer.block)
        parts.append(f"<span class='ppkit-verdict' data-status='{d['status']}' style='color:"
                     f"{_VERDICT_COLOUR[d['status']]};font-weight:600'>[{_e(d['label'])}]</span>"
                     + (f" <span style='color:#555'>({_e(d['beside'])})</span>" if d["beside"] else ""))
        parts.append(_e(format_report(answer.verification).split(chr(10))[0]))
    shown = parts[0] if parts else ""
    parts += [f"<span style='color:#b00020'>warning:</span> {_e(w)}" for w in answer.warnings()
              if _e(w) not in shown]  # the verdict already says the block may not answer
    if not parts:
        return ""
    return block(f"<div style='{_H}'>Verification</div>" + "<br>".join(parts))


def evidence_html(answer) -> str:
    """The answer's text (the quoted passages, rendered from Markdown) and the sections it was written from."""
    rows = "".join(
        f"<li><code>{_e(s.doc)}#{_e(s.node_id)}</code> {_e(s.breadcrumb)} "
        f"<span style='color:#555'>(lines {s.line_start}-{s.line_end}{_pages(s.pages)}"
        f"{f', sent {len(s.text):,} of {s.chars_total:,} characters' if s.trimmed else ''})</span></li>"
        for s in answer.sections)
    return (f"<div style='{_H}'>Evidence</div>" + answer_html(answer, sections=False)
            + block(f"<div style='{_H}'>Sections retrieved</div><ol style='margin:2px 0'>{rows}</ol>"))


def history_html(answers: list) -> str:
    """The conversation so far, oldest first: each question (as rewritten, when it was) and its answer block."""
    if not answers:
        return ""
    items = []
    for a in answers:
        rw = getattr(a.trace, "rewrite", None)
        asked = (f"{_e(rw['original'])} <span style='color:#555'>(read as: {_e(a.question)})</span>"
                 if rw and rw.get("original") and rw["original"] != a.question else _e(a.question))
        items.append(f"<li><b>Q:</b> {asked}<br><b>A:</b> {_e(a.block.text if a.block else a.text[:200])}</li>")
    return block(f"<div style='{_H}'>Conversation ({len(answers)} turn{'s' if len(answers) != 1 else ''})</div>"
                 f"<ol style='margin:2px 0'>{''.join(items)}</ol>")


class CitedAnswer:
    """Ask questions of an index and read cited answers: the answer block first, then the evidence.

    Args:
        index: a loaded :class:`ppkit.Index` (any: the reference 10-Ks, the papers, your own documents).
        question: a first question, asked at once (``""``: none yet).
        k: sections the answer is written from (the slider runs 1-10).
        doc: the document filter: :attr:`AUTO` (the documents the question names), :attr:`ALL`, or a document name.
        width: the widest an image is shown, in pixels (never wider than its own pixels).
        history: keep a conversation: each question is asked with the earlier turns, so "And PepsiCo?"
            after a question about Boeing asks the same of PepsiCo. **New conversation** starts over.

    Controls: ``question`` (text box; Enter asks), ``k`` (slider), ``doc`` (dropdown), ``ask_button``,
    ``new_button``. State: ``answer`` (the last :class:`~ppkit.answer.synth.Answer`), ``answers`` (the
    conversation), ``cues``, ``error``. Moving k or the filter asks the current question again.

    >>> view = CitedAnswer(ppkit.reference_index("10k"), "What is AMD's quick ratio for FY2022?")  # doctest: +SKIP
    >>> view.answer.block.text  # doctest: +SKIP
    """

    AUTO = "(documents the question names)"
    ALL = "(all documents)"

    def __init__(self, index: SearchIndex, question: str = "", *, k: int = 5, doc: str | None = None,
                 width: int = 480, history: bool = True):
        W = _widgets()
        self.index, self.width, self.keep_history = index, width, history
        self.answer = None
        self._asked = ""  # the question as typed (the answer's own may be rewritten with the conversation)
        self.answers: list = []
        self.cues: list[str] = []
        self.error: str | None = None
        if doc is not None and doc not in (self.AUTO, self.ALL):
            doc = index.resolve_doc(doc)
        self.question = W.Text(value=question, placeholder="Ask about the indexed documents (Enter asks)",
                               continuous_update=False, layout=W.Layout(width="70%"))
        self.ask_button = W.Button(description="Ask", button_style="primary")
        self.new_button = W.Button(description="New conversation")
        self.k = W.IntSlider(value=k, min=1, max=10, description="k", continuous_update=False)
        self.doc = W.Dropdown(options=[self.AUTO, self.ALL, *index.docs], value=doc or self.AUTO,
                              description="documents", layout=W.Layout(width="45%"))
        self.status = W.HTML()
        self.cue_box = W.HTML()
        self.block_box = W.HTML()
        self.computed_box = W.HTML()
        self.verification_box = W.HTML()
        self.evidence_box = W.HTML(layout=W.Layout(max_height="40em", overflow="auto"))
        self.images = W.VBox([])
        self.history_box = W.HTML()
        self.widget = W.VBox([W.HBox([self.question, self.ask_button, self.new_button]), W.HBox([self.k, self.doc]),
                              self.status, self.cue_box, self.block_box, self.computed_box, self.verification_box,
                              self.evidence_box, self.images, self.history_box])
        self.question.observe(lambda _: self.ask(), names="value")
        self.ask_button.on_click(lambda _: self.ask())
        self.new_button.on_click(lambda _: self.reset())
        self.k.observe(lambda _: self.ask(again=True), names="value")
        self.doc.observe(lambda _: self.ask(again=True), names="value")
        if question.strip():
            self.ask()

    def __repr__(self) -> str:
        block_text = self.answer.block.text if self.answer is not None and self.answer.block else None
        return f"CitedAnswer({self.question.value!r}, k={self.k.value}, doc={self.doc.value!r}, block={block_text!r})"

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    def _options(self) -> dict:
        if self.doc.value == self.AUTO:
            return {}
        if self.doc.value == self.ALL:
            return {"auto_filter": False}
        return {"docs": [self.doc.value]}

    def ask(self, question: str | None = None, *, again: bool = False):
        """Ask ``question`` (default: the text box's) and show the answer; returns it (None on an error, which is
        shown in the widget). ``again``: the same question with new settings, which replaces the last turn."""
        if question is not None and question != self.question.value:
            self.question.value = question  # its observer asks
            return self.answer
        q = self.question.value.strip()
        if not q:
            return None
        if again and self.answers:
            self.answers.pop()  # the same turn asked with another k or filter
        history = self.answers[-3:] if self.keep_history else None
        self.status.value = block(f"<i>asking: {_e(q)}</i>")
        try:
            answer = self.index.ask(q, self.k.value, history=history or None, **self._options())
        except Exception as e:  # shown in the widget: an exception in a callback would vanish into a log
            self.error, self.answer = f"{type(e).__name__}: {e}", None
            self.status.value = block(f"<span style='color:#b00020'><b>Asking failed.</b> {_e(self.error)}</span>")
            return None
        self.error, self.answer, self._asked = None, answer, q
        if self.keep_history:
            self.answers.append(answer)
        manual = self.doc.value if self.doc.value not in (self.AUTO, self.ALL) else None
        self.cues = retrieval_cues(self.index, answer.question, answer, manual_doc=manual)
        self._render()
        return answer

    def reset(self) -> None:
        """Start a new conversation: forget the earlier turns and clear the answer."""
        self.answers, self.answer, self.cues, self.error = [], None, [], None
        for box in (self.status, self.cue_box, self.block_box, self.computed_box, self.verification_box,
                    self.evidence_box, self.history_box):
            box.value = ""
        self.images.children = []

    def _render(self) -> None:
        a = self.answer
        self.status.value = block(f"<small>k = {int(self.k.value)} · {_e(self.doc.value)} · "
                                  f"{len(a.sections)} sections · asked: {_e(self._asked)}</small>")
        self.cue_box.value = cues_html(self.cues)
        self.block_box.value = block_html(a)
        self.computed_box.value = computed_html(a)
        self.verification_box.value = verification_html(a)
        self.evidence_box.value = evidence_html(a)
        self.images.children = image_widgets(a, self.width)
        self.history_box.value = history_html(self.answers[:-1]) if len(self.answers) > 1 else ""

    def summary_html(self, *, evidence: bool = True) -> str:
        """The current answer as static HTML (cues, block, computed figure, verification, evidence, history),
        for a rendered or headless run."""
        if self.answer is None:
            return block(f"<i>{_e(self.error or 'No question asked yet.')}</i>")
        a = self.answer
        parts = [block(f"<b>Q:</b> {_e(a.question)} <small>(k = {int(self.k.value)})</small>"), cues_html(self.cues),
                 block_html(a), computed_html(a), verification_html(a)]
        if evidence:
            parts.append(evidence_html(a))
        parts.append(history_html(self.answers[:-1]) if len(self.answers) > 1 else "")
        return "".join(p for p in parts if p)


def answer_widget(index: SearchIndex, *, k: int = 5, question: str = "", width: int = 480) -> CitedAnswer:
    """A :class:`CitedAnswer` on ``index``, asking ``question`` at once when one is given.

    >>> answer_widget(ppkit.reference_index("papers"), question="How does the Nemobot system flow work?")  # doctest: +SKIP
    """
    return CitedAnswer(index, question, k=k, width=width)
