"""The events of an answer stream, named as the HTTP stream names them.

One question answered by the conductor (:func:`ppkit.pipeline.stream`) is a sequence of typed events,
in this order:

* ``analysis`` - what the question asks (filters chosen, metric, years, names, anchors);
* ``sections`` - the ranked sections retrieved (doc, node id, breadcrumb, lines, pages);
* ``answer`` - the short answer block (text, kind, citations), for a synthesizer that writes one;
* ``delta`` - pieces of the answer text, in order (the offline answer streams too, line by line);
* ``citation`` - each section the answer cites, once;
* ``verification`` - the check of the answer's figures, quotes and citations against the sections;
* ``done`` - the whole :class:`ppkit.answer.synth.Answer`, the timings and its ``mode`` (who wrote the text);
* ``error`` - instead of the rest, when the question cannot be answered (the exception it raised).

A synthesizer's own stream (:meth:`ppkit.answer.synth.Synthesizer.stream`) yields only ``delta`` (and
``answer``) events and *returns* ``(text, info)`` as the generator's value; :func:`collect` runs it to the
end. ``data()`` gives each event's JSON-ready payload (the ``data:`` line of a Server-Sent Event).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = ["Event", "AnalysisEvent", "SectionsEvent", "AnswerEvent", "Delta", "Citation", "VerificationEvent",
           "Done", "ErrorEvent", "EVENT_TYPES", "collect"]

EVENT_TYPES = ("analysis", "sections", "answer", "delta", "citation", "verification", "done", "error")


@dataclass(frozen=True)
class Event:
    """One event of an answer stream; ``type`` is its name in the stream."""

    type: ClassVar[str] = ""

    def data(self) -> dict:
        """The event's payload as plain JSON-ready data."""
        raise NotImplementedError


@dataclass(frozen=True)
class AnalysisEvent(Event):
    type: ClassVar[str] = "analysis"
    analysis: dict  # ppkit.retrieval.analyze.Analysis.to_dict()

    def data(self) -> dict:
        return self.analysis


@dataclass(frozen=True)
class SectionsEvent(Event):
    type: ClassVar[str] = "sections"
    sections: list[dict]  # rank, doc, node_id, breadcrumb, line_start, line_end, pages, score

    def data(self) -> dict:
        return {"sections": self.sections}


@dataclass(frozen=True)
class AnswerEvent(Event):
    """The short answer block: the answer in one to three cited lines, before the evidence."""

    type: ClassVar[str] = "answer"
    text: str
    kind: str  # what the block states, e.g. "figure", "computed", "not found"
    citations: list[dict] = field(default_factory=list)

    def data(self) -> dict:
        return {"text": self.text, "kind": self.kind, "citations": self.citations}


@dataclass(frozen=True)
class Delta(Event):
    type: ClassVar[str] = "delta"
    text: str

    def data(self) -> dict:
        return {"text": self.text}


@dataclass(frozen=True)
class Citation(Event):
    type: ClassVar[str] = "citation"
    doc: str | None  # None: the id cited was not among the sections sent
    node_id: str
    breadcrumb: str
    in_context: bool

    def data(self) -> dict:
        return {"doc": self.doc, "node_id": self.node_id, "breadcrumb": self.breadcrumb, "in_context": self.in_context}


@dataclass(frozen=True)
class VerificationEvent(Event):
    type: ClassVar[str] = "verification"
    report: dict | None  # ppkit.answer.verify.verify_answer's report; None when verification is off

    def data(self) -> dict:
        return {"report": self.report}


@dataclass(frozen=True)
class Done(Event):
    type: ClassVar[str] = "done"
    answer: Any  # ppkit.answer.synth.Answer
    seconds: dict = field(default_factory=dict)

    def data(self) -> dict:
        return {"seconds": self.seconds, "mode": getattr(self.answer, "mode", None)}


@dataclass(frozen=True)
class ErrorEvent(Event):
    type: ClassVar[str] = "error"
    error: BaseException

    def data(self) -> dict:
        return {"error": type(self.error).__name__, "message": str(self.error)}


def collect(stream: Generator[Event, None, Any]) -> tuple[list[Event], Any]:
    """Run a stream to its end: the events it yielded and the value it returned.

    >>> def s():
    ...     yield Delta("a")
    ...     return "done"
    >>> collect(s())
    ([Delta(text='a')], 'done')
    """
    events: list[Event] = []
    while True:
        try:
            events.append(next(stream))
        except StopIteration as stop:
            return events, stop.value
