"""Synthesizers: retrieved sections -> an Answer that cites them.

A synthesizer is any object with ``name``, ``calls``, ``stream(question, sections, analysis)``
(a generator of :mod:`ppkit.answer.events` ``delta`` events that returns ``(text, info)``) and
``synthesize(question, sections, analysis)`` (the same text and notes at once). It is given the
sections and the question's analysis and never retrieves: the conductor (:func:`ppkit.pipeline.stream`)
retrieves and hands the sections to :func:`ppkit.answer.compose.answer_stream`, which calls the
synthesizer, verifies and assembles the :class:`Answer`.

:class:`ExtractiveSynthesizer` (offline default) writes no prose of its own: for
each selected section it quotes the sentences and table rows that best match the
question (stemmed-term overlap weighted by rarity across the sections), with the
breadcrumb and source line numbers, and it says that it is extractive. When the question
asks for a financial metric (:mod:`ppkit.answer.metrics`) it first computes it from the
retrieved primary statements, citing every input, or says which inputs are missing. It
never paraphrases; that is the online synthesizer's job
(:class:`ppkit.answer.synth_gemini.GeminiSynthesizer`, which answers only from the sections
in XML-delimited blocks and cites breadcrumbs under ``Sources:``).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Protocol

from ..core.text import expand_terms, sentences, stems
from ..documents.tree import Image
from ..retrieval.analyze import Analysis
from ..retrieval.types import Section, Trace, pages_label, pages_line
from .abstain import abstention_line, missing_from
from .block import AnswerBlock, cite_line
from .events import AnswerEvent, Delta, Event
from .images import DEFAULT_RATIO, DEFAULT_THRESHOLD, score_images, select_images
from .metrics import compute_metric, format_metric
from .verify import format_report

__all__ = ["Answer", "AnswerTrace", "Synthesizer", "ExtractiveSynthesizer", "EXTRACTIVE_NOTE", "image_record",
           "line_deltas"]

EXTRACTIVE_NOTE = ("[offline extractive answer: no language model was used; the passages below are quoted "
                   "from the retrieved sections, best-matching first. Set GEMINI_API_KEY for a written answer.]")


@dataclass(frozen=True)
class AnswerTrace(Trace):
    """The retrieval's trace plus what synthesis did (its ``seconds`` and ``model_calls`` include it)."""

    synthesizer: str = ""
    synthesis: dict = field(default_factory=dict)  # the synthesizer's own notes (matches, sources, image scores)
    candidate_details: list[dict] = field(default_factory=list)  # every candidate in stage-2 order, as dicts
    rewrite: dict | None = None  # a follow-up question rewritten with the previous turn (ppkit.retrieval.conversation)

    def to_dict(self) -> dict:
        d = super().to_dict()
        # the JSON keeps the retrieval's keys in place; "candidates" becomes the candidates themselves
        d.update(synthesizer=self.synthesizer, synthesis=self.synthesis, candidates=self.candidate_details)
        if self.rewrite is not None:
            d["rewrite"] = self.rewrite
        return d


@dataclass(frozen=True)
class Answer:
    """An answer with the sections it used, the images to show, and a trace."""

    question: str
    text: str
    sections: list[Section]
    mode: str  # "extractive" | "gemini"
    images: list[dict] = field(default_factory=list)  # {"path", "label", "doc", "node_id", "resolved"}
    trace: AnswerTrace | None = None
    verification: dict | None = None
    block: AnswerBlock | None = None  # the answer in one to three cited lines (ppkit.answer.block)

    def __repr__(self) -> str:
        return f"Answer({self.mode}, {len(self.sections)} sections, {len(self.text)} chars)"

    def warnings(self) -> list[str]:
        """What a reader of this answer must know: online stages that fell back to their offline
        twins, citations of sections that were not retrieved, claims not found in the sections."""
        out = []
        for fb in (self.trace.fallbacks if self.trace is not None else []):
            out.append(f"online {fb['stage']} failed; used the offline {fb['used']} ({fb['reason'][:160]})")
        v = self.verification or {}
        if v.get("unretrieved"):
            out.append("the answer cites sections that were not retrieved: " + ", ".join(v["unretrieved"])
                       + " (do not trust those citations)")
        b = v.get("block") or {}
        if b and not b.get("verified", True):
            out.append("the answer block is not verified against its cited lines: " + "; ".join(
                r for r in b.get("reasons", []) if not r.startswith("not answered"))[:240])
        if b and not b.get("answered", True) and self.block is not None and self.block.kind != "not_found":
            out.append(f"the answer block may not answer the question (asked: {b.get('asks')}): "
                       + next((r[len("not answered: "):] for r in b.get("reasons", []) if r.startswith("not answered")),
                              ""))
        n = (v.get("counts") or {}).get("not_found", 0)
        if n:
            out.append(f"{n} number{'s' if n != 1 else ''} or quote{'s' if n != 1 else ''} in the answer "
                       "not found in the retrieved sections (marked [unverified] in the verification's marked_text)")
        return out

    def __str__(self) -> str:
        lines = [self.text, "", "Retrieved sections:"]
        for s in self.sections:
            trim = f" (sent {len(s.text)} of {s.chars_total} chars)" if s.trimmed else ""
            pages = f", {pages_label(s.pages)}" if s.pages else ""
            lines.append(f"  {s.rank}. {s.breadcrumb}  [{s.doc}#{s.node_id}, lines {s.line_start}-{s.line_end}{pages}]"
                         f"{trim}")
        if self.images:
            lines.append("Images:")
            lines += [f"  {im['path']}  ({im.get('label', '')}) from {im['doc']}#{im['node_id']}" for im in self.images]
        if self.verification:  # one line: how many figures were found, re-derived, or not found
            lines += ["", format_report(self.verification).split("\n")[0]]
        warnings = self.warnings()
        if warnings:
            lines += ["", "WARNING:"] + [f"  - {w}" for w in warnings]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {
            "question": self.question, "mode": self.mode, "text": self.text,
            "sections": [{"doc": s.doc, "node_id": s.node_id, "breadcrumb": s.breadcrumb,
                          "line_start": s.line_start, "line_end": s.line_end, "rank": s.rank,
                          "score": s.score, "trimmed": s.trimmed, "chars_total": s.chars_total,
                          "sent_ranges": [list(r) for r in s.sent_ranges], "pages": list(s.pages),
                          "text": s.text} for s in self.sections],
            "images": self.images, "trace": self.trace.to_dict() if self.trace is not None else {},
            "verification": self.verification,
            "answer": self.block.to_dict() if self.block is not None else None,
        }

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kw)

    def _repr_markdown_(self) -> str:  # notebooks
        out = [self.text.replace("\n", "  \n"), "", "**Retrieved sections**", ""]
        out += [f"{s.rank}. `{s.doc}#{s.node_id}` {s.breadcrumb} (lines {s.line_start}-{s.line_end})" for s in self.sections]
        return "\n".join(out)


class Synthesizer(Protocol):
    """Retrieved sections -> answer text and notes; ``calls`` lists the model calls it made (empty offline).

    ``stream`` yields :class:`ppkit.answer.events.Delta` pieces of the text as they are written and returns
    ``(text, info)``; ``synthesize`` returns the same pair at once. ``analysis`` is the question's
    (:class:`ppkit.retrieval.analyze.Analysis`); without it the synthesizer reads the question itself.
    """

    name: str
    calls: list[dict]

    def stream(self, question: str, sections: list[Section],
               analysis: Analysis | None = None) -> Generator[Event, None, tuple[str, dict]]: ...

    def synthesize(self, question: str, sections: list[Section],
                   analysis: Analysis | None = None) -> tuple[str, dict]: ...


def line_deltas(text: str) -> Generator[Delta, None, None]:
    """``text`` as one delta per line (each but the last keeps its newline), so the pieces join to ``text``.

    >>> [d.text for d in line_deltas("a\nb")]
    ['a\n', 'b']
    """
    for piece in text.splitlines(keepends=True):
        yield Delta(piece)


def _units(section: Section) -> list[tuple[int, str]]:
    """(source line, passage) pieces of a section: table rows whole, prose split into sentences."""
    out = []
    numbers = section.line_numbers or (section.line_start,) * len(section.text.split("\n"))
    for ln, raw in zip(numbers, section.text.split("\n")):
        s = raw.strip()
        if not ln or not s or s.startswith("#") or set(s) <= set("|-: "):
            continue
        if s.startswith("|"):
            out.append((ln, s))
        else:
            out.extend((ln, sent) for sent in sentences(s))
    return out


class ExtractiveSynthesizer:
    """Quote the best-matching sentences and table rows of each section (offline, deterministic).

    Args:
        per_section: passages quoted per section.
        max_chars: cap on one quoted passage.
        image_threshold / max_images: images of the sections shown with the answer
            (:func:`ppkit.answer.images.select_images`; ``max_images=0`` shows none).
    """

    name = "extractive"

    def __init__(self, per_section: int = 3, max_chars: int = 400, *, image_threshold: float | None = None,
                 image_ratio: float | None = None, max_images: int = 3):
        self.per_section = per_section
        self.max_chars = max_chars
        self.image_threshold = image_threshold
        self.image_ratio = image_ratio
        self.max_images = max_images
        self.calls: list[dict] = []  # no model calls: the Synthesizer interface's trace of them

    def stream(self, question: str, sections: list[Section],
               analysis: Analysis | None = None) -> Generator[Event, None, tuple[str, dict]]:
        """The answer block, then the answer written whole streamed line by line; returns ``(text, info)``."""
        text, info = self.synthesize(question, sections, analysis)
        block = info.get("block")
        if block is not None:
            yield AnswerEvent(block.text, block.kind, [c.to_dict() for c in block.citations])
        yield from line_deltas(text)
        return text, info

    def synthesize(self, question: str, sections: list[Section],
                   analysis: Analysis | None = None) -> tuple[str, dict]:
        analysis = analysis or Analysis.of(question)
        # a ratio is quoted through the line items it is computed from (quick ratio -> current assets...)
        q = set(stems(question + " " + expand_terms(question)))
        pieces = [(s, ln, p, set(stems(p))) for s in sections for ln, p in _units(s)]
        df = Counter(t for *_, st in pieces for t in st)
        n = max(1, len(pieces))
        out = [EXTRACTIVE_NOTE, ""]
        quoted = 0
        # what the question names (a company, a year) that no section mentions: say so first, compute nothing
        missing = missing_from(question, sections, analysis)
        refusal = abstention_line(missing)
        # a financial metric: computed from the statements, every input cited (or which inputs are missing)
        metric = (compute_metric(question, sections, analysis.metric, years=analysis.years)
                  if refusal is None and analysis.metric is not None else None)
        if refusal is not None:
            out += [refusal, ""]
        elif metric is not None:
            out += [format_metric(metric), ""]
        ranked = []  # every section's scored passages, for the block
        for s in sections:
            scored = []
            for sec, ln, p, st in pieces:
                if sec is not s:
                    continue
                score = sum(math.log(1 + n / df[t]) for t in q & st)
                if score > 0:
                    scored.append((score, ln, p))
            best = sorted(scored, key=lambda x: (-x[0], x[1]))[: self.per_section]
            ranked += [(score, s.rank, ln, p, s) for score, ln, p in best]
            out.append(f"From {s.breadcrumb} ({s.cite()}, lines {s.line_start}-{s.line_end}):")
            if not best:
                out.append("  (no sentence in this section shares terms with the question)")
            for _, ln, p in sorted(best, key=lambda x: x[1]):
                p = p if len(p) <= self.max_chars else p[: self.max_chars] + "…"
                page = s.page_of(ln)
                out.append(f"  - line {ln}{f' (p.{page})' if page else ''}: {p}")
                quoted += 1
            out.append("")
        out.append("Sources:")
        out += [f"- {s.breadcrumb} (ID: {s.node_id})" for s in sections]
        out += [pages_line(sections)] if pages_line(sections) else []
        images, image_info = self._images(question, sections, analysis)
        notes = {"passages_quoted": quoted, "images": images, **image_info,
                 "block": _block(refusal, metric, ranked, sections)}
        if refusal is not None:
            notes["abstained"] = missing
        if metric is not None:
            notes["metric"] = {"name": metric.metric.name, "year": metric.year, "doc": metric.doc, "value": metric.value,
                               "unit": metric.metric.unit, "missing": list(metric.missing),
                               "inputs": [f"{li.doc}#{li.node_id}:{li.line}" for li in metric.inputs]}
        return "\n".join(out), notes

    def _images(self, question: str, sections: list[Section], analysis: Analysis) -> tuple[list[dict], dict]:
        """The images to show (records) and, for the trace, every candidate image's score."""
        threshold = DEFAULT_THRESHOLD if self.image_threshold is None else self.image_threshold
        ratio = DEFAULT_RATIO if self.image_ratio is None else self.image_ratio
        scored = score_images(question, sections, analysis=analysis)
        chosen = select_images(question, sections, threshold=threshold, ratio=ratio, max_images=self.max_images,
                               scored=scored, analysis=analysis)
        best = [{"doc": c.section.doc, "path": c.image.path, "score": c.score, "reason": c.reason}
                for c in scored[:10]]  # the best ten, for the trace
        return ([image_record(c.section, c.image, reason=c.reason) for c in chosen],
                {"image_threshold": threshold, "image_ratio": ratio, "image_scores": best})


def _block(refusal: str | None, metric, ranked: list, sections: list[Section]) -> AnswerBlock:
    """The answer block: the abstention, the computed metric, or the best-scoring passage of any section."""
    if refusal is not None:
        return AnswerBlock(refusal, "not_found")
    if metric is not None:
        if not metric.ok:
            return AnswerBlock(format_metric(metric).split("\n")[0], "not_found")
        cites = tuple(cite_line(s, li.line) for li in metric.inputs
                      for s in sections if (s.doc, s.node_id) == (li.doc, li.node_id))
        return AnswerBlock(format_metric(metric).split("\n")[0], "computed", cites)
    if not ranked:
        return AnswerBlock("Not found: no retrieved sentence shares terms with the question.", "not_found")
    _, _, ln, p, s = max(ranked, key=lambda x: (x[0], -x[1], -x[2]))
    return AnswerBlock(p, "passage", (cite_line(s, ln),))


def image_record(section: Section, image: Image, *, reason: str = "") -> dict:
    """The plain-dict form of an image chosen for an answer: where it is, its caption, why it was chosen,
    and its size in pixels (a view never shows it larger: ``width``/``height`` 0 when unknown)."""
    return {"path": image.path, "label": image.label or image.alt, "doc": section.doc, "node_id": section.node_id,
            "breadcrumb": section.breadcrumb, "resolved": image.resolved, **({"kind": image.kind} if image.kind else {}),
            "reason": reason, "width": image.width, "height": image.height}
