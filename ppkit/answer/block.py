"""The answer block: the answer itself in one to three cited lines, printed before any evidence.

An :class:`AnswerBlock` is what a reader came for. Its contract:

* ``text`` is the statement only: no ids, breadcrumbs, line or page numbers inside it (those are in
  ``citations``); the asked-for figure first, with its unit and period, then at most its inputs; computed
  figures with at least three significant digits; at most :data:`MAX_CHARS` characters.
* ``kind`` is one of :data:`KINDS`: ``computed`` (a figure ppkit computed from cited inputs), ``figure`` (a
  figure stated in a source), ``passage`` (a sentence or row quoted from a source), ``yes_no`` (the text
  begins with "Yes" or "No"), ``not_found`` (the sources do not answer, and why), ``not_meaningful`` (the
  measure does not apply to this kind of company, and why in words), ``inputs`` (the asked share, ratio,
  change or yes/no is not stated: the text says so, then what the sources show instead).
* ``citations`` name the source lines the statement rests on (:class:`BlockCitation`).

Every synthesizer fills it (offline :class:`ppkit.answer.synth.ExtractiveSynthesizer`, online
:class:`ppkit.answer.synth_gemini.GeminiSynthesizer`); the conductor sends it as the ``answer`` event.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.text import clip
from ..retrieval.types import Section
from .asked import Asked
from .passages import Passage, prose_figure, stated_change

__all__ = ["AnswerBlock", "BlockCitation", "KINDS", "MAX_CHARS", "cite_line", "change_block", "not_stated"]

KINDS = ("computed", "figure", "passage", "yes_no", "not_found", "not_meaningful", "inputs")
MAX_CHARS = 400


@dataclass(frozen=True)
class BlockCitation:
    """A source span an answer block rests on: a document's section and its source lines (and PDF pages)."""

    doc: str
    node: str
    line_start: int
    line_end: int
    pages: tuple[int, ...] = ()

    def to_dict(self) -> dict:
        return {"doc": self.doc, "node": self.node, "line_start": self.line_start, "line_end": self.line_end,
                "pages": list(self.pages)}


@dataclass(frozen=True)
class AnswerBlock:
    """The short answer: ``text`` (the statement), ``kind`` (one of :data:`KINDS`) and its ``citations``."""

    text: str
    kind: str
    citations: tuple[BlockCitation, ...] = field(default_factory=tuple)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"answer block kind {self.kind!r} is not one of {', '.join(KINDS)}")

    def to_dict(self) -> dict:
        return {"text": self.text, "kind": self.kind, "citations": [c.to_dict() for c in self.citations]}

    def __str__(self) -> str:
        return self.text


def cite_line(section: Section, line: int, line_end: int | None = None) -> BlockCitation:
    """A citation of ``section``'s source lines ``line``..``line_end`` with the PDF pages they fall on.

    >>> from ppkit.retrieval.types import Section
    >>> s = Section(rank=1, doc="AMD", node_id="0089", breadcrumb="AMD > Balance Sheets", score=1.0,
    ...             line_start=10, line_end=20, text="x")
    >>> cite_line(s, 12).to_dict()
    {'doc': 'AMD', 'node': '0089', 'line_start': 12, 'line_end': 12, 'pages': []}
    """
    end = line if line_end is None else line_end
    pages = tuple(sorted({p for ln in range(line, end + 1) if (p := section.page_of(ln))}))
    return BlockCitation(section.doc, section.node_id, line, end, pages)


def _num(v: float) -> str:
    """A computed figure with at least three significant digits: 1.00, 12.5, 400."""
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.1f}" if abs(v) >= 10 else f"{v:,.2f}"


def change_block(p: Passage, asked: Asked, q_terms: set[str], cites) -> AnswerBlock | None:
    """The change asked as a difference ("By how many points did it raise its guidance?") computed from the two
    values sentence ``p`` states of it ("9 percent (previously 8 percent)": up 1.00 percentage point), kind
    ``computed``, cited by ``cites``; None when the question asks no difference or ``p`` states no such pair.

    >>> from ppkit.answer.passages import asked_type, section_passages
    >>> s = Section("D", "0001", "D > Outlook", 1, 1, "EPS to rise 9 percent (previously 8 percent).", 1, 1.0)
    >>> change_block(section_passages(s)[0], asked_type("By how much did EPS guidance rise?"), set(), ()).text
    'Up 1.00 percentage point, to 9 percent from 8 percent (9 - 8): EPS to rise 9 percent (previously 8 percent).'
    """
    pair = stated_change(p, q_terms) if asked.by else None
    if pair is None:
        return None
    old, new = (prose_figure(x) for x in pair)
    diff = new[0] - old[0]
    unit = (" percentage point" + ("" if abs(diff) == 1 else "s") if new[1]
            else f" {new[2]}" if new[2] else "")
    money = "$" if "$" in pair[1] else ""
    head = f"{'Up' if diff >= 0 else 'Down'} {money}{_num(abs(diff))}{unit}, to {pair[1]} from {pair[0]}"
    text = f"{head} ({_plain(new[0])} - {_plain(old[0])}): {p.text}"
    return AnswerBlock(clip(text, MAX_CHARS), "computed", tuple(cites))


def _plain(v: float) -> str:
    return f"{v:,.0f}" if v == int(v) else f"{v:,}"


def not_stated(asked: Asked, shown: str, cites) -> AnswerBlock:
    """The honest block when the closest passage holds figures of another kind than asked
    (:func:`ppkit.answer.passages.other_kind`): the asked figure is not stated, then that passage (``inputs``).

    >>> not_stated(Asked("amount", unit="amount"), "We had 118,400 employees.", ()).text
    'The amount asked is not stated in the passages found; the closest passage: We had 118,400 employees.'
    """
    what = "change" if asked.by else "figure per share" if asked.per_share else "amount"
    text = f"The {what} asked is not stated in the passages found; the closest passage: {shown}"
    return AnswerBlock(clip(text, MAX_CHARS), "inputs", tuple(cites))
