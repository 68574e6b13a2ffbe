"""The answer block: the answer itself in one to three cited lines, printed before any evidence.

An :class:`AnswerBlock` is what a reader came for. Its contract:

* ``text`` is the statement only: no ids, breadcrumbs, line or page numbers inside it (those are in
  ``citations``); the asked-for figure first, with its unit and period, then at most its inputs; computed
  figures with at least three significant digits; at most :data:`MAX_CHARS` characters.
* ``kind`` is one of :data:`KINDS`: ``computed`` (a figure ppkit computed from cited inputs), ``figure`` (a
  figure stated in a source, first, then where), ``passage`` (a sentence quoted from a source), ``yes_no`` (the
  text begins with "Yes" or "No"), ``closest`` (nothing retrieved states what was asked with enough confidence:
  "Not stated directly; the closest passage: ...", never worded as an answer), ``not_found`` (the sources do not
  answer, and why), ``not_meaningful`` (the measure does not apply to this kind of company, and why in words);
* ``type`` is the answer type asked (:data:`ppkit.answer.question.TYPES`), ``confidence`` the selector's
  calibrated probability that the block states the answer (:mod:`ppkit.answer.select`);
* ``citations`` name the source lines the statement rests on (:class:`BlockCitation`).

Every synthesizer fills it (offline :class:`ppkit.answer.synth.ExtractiveSynthesizer`, online
:class:`ppkit.answer.synth_gemini.GeminiSynthesizer`); the conductor sends it as the ``answer`` event.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..retrieval.types import Section

__all__ = ["AnswerBlock", "BlockCitation", "KINDS", "STATES", "MAX_CHARS", "cite_line"]

KINDS = ("computed", "figure", "passage", "yes_no", "closest", "not_found", "not_meaningful")
STATES = ("computed", "figure", "passage", "yes_no")  # the kinds that state an answer
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
    """The short answer: ``text`` (the statement), ``kind`` (one of :data:`KINDS`), the answer ``type`` asked, the
    ``confidence`` that it answers (None: not scored) and its ``citations``."""

    text: str
    kind: str
    citations: tuple[BlockCitation, ...] = field(default_factory=tuple)
    type: str = ""
    confidence: float | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"answer block kind {self.kind!r} is not one of {', '.join(KINDS)}")

    @property
    def states(self) -> bool:
        """Whether the block states an answer (not a hedge, an abstention or "not meaningful")."""
        return self.kind in STATES

    def to_dict(self) -> dict:
        return {"text": self.text, "kind": self.kind, "type": self.type,
                "confidence": None if self.confidence is None else round(self.confidence, 3),
                "citations": [c.to_dict() for c in self.citations]}

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
