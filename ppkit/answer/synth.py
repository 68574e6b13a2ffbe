"""Synthesizers: retrieved sections -> an Answer that cites them, its short answer block first.

A synthesizer is any object with ``name``, ``calls``, ``stream(question, sections, analysis)``
(a generator of :mod:`ppkit.answer.events` ``delta`` events that returns ``(text, info)``) and
``synthesize(question, sections, analysis)`` (the same text and notes at once). It is given the
sections and the question's analysis and never retrieves: the conductor (:func:`ppkit.pipeline.stream`)
retrieves and hands the sections to :func:`ppkit.answer.compose.answer_stream`, which calls the
synthesizer, verifies and assembles the :class:`Answer`.

:class:`ExtractiveSynthesizer` (offline default) writes no prose of its own. It states the answer
block first (:mod:`ppkit.answer.block`), chosen by the answer selector (:mod:`ppkit.answer.select`: every table
cell, sentence figure, computed measure and passage of all the sections scored on the same features, with a
calibrated confidence; below the threshold the block says the answer is not stated and shows the closest
passage as such). Below the block come the computed measure's steps and inputs, or the passages that support
it (the chosen one and the next best), with breadcrumb and source line numbers (``evidence="all"``: every
section's best); its ``Answer.mode`` (``"offline"``, a field, not a line of the text) says it is extractive. It
never paraphrases; that is the online synthesizer's job (:class:`ppkit.answer.synth_gemini.GeminiSynthesizer`,
which answers only from the sections in XML-delimited blocks and cites breadcrumbs under ``Sources:``).
"""

from __future__ import annotations

import json
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..core.errors import ConfigError
from ..core.ids import breadcrumb_titles
from ..core.text import clip
from ..documents.tree import Image
from ..retrieval.analyze import Analysis
from ..retrieval.types import Section, Trace, pages_label, pages_line
from .answered import verdict, verdict_line
from .block import AnswerBlock
from .events import AnswerEvent, Delta, Event
from .images import DEFAULT_RATIO, DEFAULT_THRESHOLD, score_images, select_images
from .metrics import format_metric
from .select import Selection, select
from .verify import summary_line

__all__ = ["Answer", "AnswerTrace", "Synthesizer", "ExtractiveSynthesizer", "EVIDENCE", "MODES", "answer_mode",
           "cached_vectors", "image_record", "line_deltas"]

# who wrote an answer's text (``Answer.mode``), as a view labels it; the text itself never says
MODES = {"offline": "offline: extractive, quoted from the sources (no language model)",
         "gemini": "written by Gemini from the cited sections"}
# what an answer prints below its block: "support" (the passages the block quotes and a few more), or "all"
# (the best passages of every section, as before the answer block)
EVIDENCE = ("support", "all")


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
    mode: str  # "offline" | "gemini": who wrote the text (answer_mode; trace.synthesizer names the part)
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
            out.append("the answer block is not verified against its cited lines: " + "; ".join(b.get("reasons", []))[:240])
        elif b and b.get("answered") is False and self.block is not None and self.block.states:
            out.append(verdict(v, self.block)["label"])  # "quotes check, but the block may not answer ...: why"
        n = (v.get("counts") or {}).get("not_found", 0)
        if n:
            out.append(f"{n} number{'s' if n != 1 else ''} or quote{'s' if n != 1 else ''} in the answer "
                       "not found in the retrieved sections (marked [unverified] in the verification's marked_text)")
        return out

    def _head(self) -> list[str]:
        """The answer block, when the text does not already state it (an answer written before blocks)."""
        if self.block is None or self.block.text in self.text:
            return []
        return [f"Answer: {self.block.text}", ""]

    def __str__(self) -> str:
        lines = self._head() + [self.text, "", "Retrieved sections:"]
        doc = None
        for s in self.sections:  # the section's own title (its id names the document): the JSON keeps the path
            trim = f" (sent {len(s.text)} of {s.chars_total} chars)" if s.trimmed else ""
            pages = f", {pages_label(s.pages)}" if s.pages else ""
            title = clip(breadcrumb_titles(s.breadcrumb)[-1], 50) if s.breadcrumb else s.node_id
            where = f"#{s.node_id}" if s.doc == doc else f"{s.doc}#{s.node_id}"  # the document named once in a run
            doc = s.doc
            lines.append(f"  {s.rank}. {title}  [{where}, lines {s.line_start}-{s.line_end}{pages}]{trim}")
        if self.images:
            lines.append("Images:")
            lines += [f"  {im['path']}  ({im.get('label', '')}) from {im['doc']}#{im['node_id']}" for im in self.images]
        if self.verification:  # the verdict (verified only when the block also answers), then the counts
            lines += ["", verdict_line(self.verification, self.block), summary_line(self.verification)]
        warnings = self.warnings()
        if warnings:
            lines += ["", "WARNING:"] + [f"  - {w}" for w in warnings]
        lines += ["", f"Mode: {MODES.get(self.mode, self.mode)}"]
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
            "answer": {**self.block.to_dict(), "mode": self.mode} if self.block is not None else None,
        }

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kw)

    def _repr_markdown_(self) -> str:  # notebooks
        out = [h.replace("Answer:", "**Answer:**", 1) for h in self._head()]
        out += [self.text.replace("\n", "  \n"), "", "**Retrieved sections**", ""]
        out += [f"{s.rank}. `{s.doc}#{s.node_id}` {s.breadcrumb} (lines {s.line_start}-{s.line_end})" for s in self.sections]
        return "\n".join(out + ["", f"*{MODES.get(self.mode, self.mode)}*"])


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


def answer_mode(synthesizer: str) -> str:
    """``Answer.mode`` of a text written by the synthesizer named ``synthesizer``: ``"gemini"`` for Gemini's,
    ``"offline"`` for any other (the extractive one, or the twin a failed Gemini call fell back to).

    >>> answer_mode("extractive"), answer_mode("gemini")
    ('offline', 'gemini')
    """
    return "gemini" if synthesizer == "gemini" else "offline"


def line_deltas(text: str) -> Generator[Delta, None, None]:
    """``text`` as one delta per line (each but the last keeps its newline), so the pieces join to ``text``.

    >>> [d.text for d in line_deltas("a\nb")]
    ['a\n', 'b']
    """
    for piece in text.splitlines(keepends=True):
        yield Delta(piece)


class ExtractiveSynthesizer:
    """The answer block first, then the evidence that supports it (offline, deterministic).

    The block is the answer selector's (:func:`ppkit.answer.select.select`); a computed measure is followed by its
    steps and cited inputs, any other block by the passages it quotes and the next best candidates'.

    Args:
        per_section: passages quoted per section with ``evidence="all"``.
        max_chars: cap on one quoted passage.
        evidence: ``"support"`` (default): below the block only what it quotes and at most ``extra`` more;
            ``"all"``: the best ``per_section`` candidates of every section.
        extra: passages shown beside the block's own with ``evidence="support"``.
        image_threshold / max_images: images of the sections shown with the answer
            (:func:`ppkit.answer.images.select_images`; ``max_images=0`` shows none).
        embedder: the index's embedding model (anything with ``embed_documents``), for the selector's focus
            similarity; None: the selector scores without it.
        selector: the selector's weights (:class:`ppkit.answer.select.Selector`; default: the package's fitted ones).
    """

    name = "extractive"

    def __init__(self, per_section: int = 3, max_chars: int = 400, *, evidence: str = "support", extra: int = 2,
                 image_threshold: float | None = None, image_ratio: float | None = None, max_images: int = 3,
                 embedder=None, selector=None):
        if evidence not in EVIDENCE:
            raise ConfigError(f"evidence must be one of {', '.join(EVIDENCE)}, not {evidence!r}")
        self.per_section = per_section
        self.max_chars = max_chars
        self.evidence = evidence
        self.extra = extra
        self.image_threshold = image_threshold
        self.image_ratio = image_ratio
        self.max_images = max_images
        self.embedder = embedder
        self.selector = selector
        self.calls: list[dict] = []  # no model calls: the Synthesizer interface's trace of them

    def stream(self, question: str, sections: list[Section],
               analysis: Analysis | None = None) -> Generator[Event, None, tuple[str, dict]]:
        """The answer block, then the answer written whole streamed line by line; returns ``(text, info)``."""
        text, info = self.synthesize(question, sections, analysis)
        block = info.get("block")
        if block is not None:
            yield AnswerEvent(block.text, block.kind, [c.to_dict() for c in block.citations], block.type,
                              block.confidence)
        yield from line_deltas(text)
        return text, info

    def _embed(self, texts: list[str]):
        return cached_vectors(self.embedder, tuple(texts))

    def synthesize(self, question: str, sections: list[Section],
                   analysis: Analysis | None = None) -> tuple[str, dict]:
        analysis = analysis or Analysis.of(question)
        sel = select(question, sections, analysis, embed=self._embed if self.embedder is not None else None,
                     selector=self.selector)
        block = sel.block
        out = [block.text, ""]
        metric = sel.chosen.extra.get("metric") if sel.chosen is not None else None
        cited = {c.node for c in block.citations}
        if metric is not None and block.kind in ("computed", "not_meaningful", "yes_no"):
            rest = format_metric(metric).split("\n")[1:]
            if metric.ok and metric.steps:  # every step, the last one too (the block states its result)
                rest = [ln for ln in rest if not ln.startswith("Steps: ")]
                rest.insert(1 if rest and rest[0].startswith("Formula: ") else 0,
                            "Steps: " + "; ".join(metric.steps) + ".")
            if self.evidence != "all":  # an input's section is named once, under Sources: its row and line here
                rest = [_without_breadcrumbs(ln, metric) for ln in rest]
            out += rest + ([""] if rest else [])
            cited |= {li.node_id for li in metric.inputs}
        elif metric is not None and block.kind == "closest" and metric.inputs:  # the inputs found, as such
            found = [ln for ln in format_metric(metric).split("\n") if ln.startswith("Found: ")]
            out += found + [""]
            cited |= {li.node_id for li in metric.inputs}
        shown = self._shown(sel, sections)
        out += self._evidence(shown, sections, quoted=sel.chosen if block.states else None)
        quoted = {c.section.section_id for c in shown}
        listed = (sections if self.evidence == "all"
                  else [s for s in sections if s.section_id in quoted or s.node_id in cited])
        out.append("Sources:")  # the full breadcrumbs with the full pack; else the document and the section's title
        out += [f"- {s.breadcrumb if self.evidence == 'all' else _crumb(s.breadcrumb)} (ID: {s.node_id})"
                for s in listed]
        out += [pages_line(listed)] if pages_line(listed) else []
        images, image_info = self._images(question, sections, analysis)
        notes = {"passages_quoted": len(shown), "images": images, **image_info, "block": block,
                 "asked": sel.asked.type, "focus": sel.asked.focus,
                 "measure": sel.asked.measure_name or None,
                 "confidence": None if sel.confidence is None else round(sel.confidence, 3),
                 "candidates": [{"kind": c.kind, "section_id": c.section.section_id, "lines": list(c.lines),
                                 "score": round(sc, 3), "text": clip(c.text, 120),
                                 "features": {k: round(v, 3) for k, v in f.items()}}
                                for sc, c, f in sel.ranked[:5]]}
        if metric is not None:
            notes["metric"] = {"name": metric.metric.name, "year": metric.year, "doc": metric.doc,
                               "value": metric.value, "unit": metric.metric.unit, "missing": list(metric.missing),
                               "inputs": [f"{li.doc}#{li.node_id}:{li.line}" for li in metric.inputs]}
        return "\n".join(out), notes

    def _shown(self, sel: Selection, sections: list[Section]) -> list:
        """The candidates whose lines the evidence quotes: the chosen one and the next best of other lines (with
        ``evidence="all"``, the best ``per_section`` of every section)."""
        ranked = [c for _, c, _ in sel.ranked if c.lines]
        if self.evidence == "all":
            return [c for s in sections for c in [x for x in ranked if x.section is s][: self.per_section]]
        out, seen = [], set()
        first = [sel.chosen] if sel.chosen is not None and sel.chosen.lines and sel.block.kind != "closest" else []
        for c in first + ranked:
            key = (c.section.section_id, c.lines[-1])
            if key in seen:
                continue
            seen.add(key)
            out.append(c)
            if len(out) >= 1 + self.extra:
                break
        return out

    def _evidence(self, shown: list, sections: list[Section], quoted=None) -> list[str]:
        """The quoted lines grouped by section in rank order, each with its source line (and page); a sentence the
        block quotes (``quoted``, its candidate) is not printed again."""
        out = []
        full = self.evidence == "all"
        for s in sections:
            mine = [c for c in shown if c.section is s]
            if not mine and not full:
                continue
            cite = pages_label(s.pages) if s.breadcrumb.startswith(f"{s.doc} >") else s.cite()
            out.append(f"From {_short(s.breadcrumb, 60)} ({cite + ', ' if cite else ''}lines {s.line_start}-{s.line_end}):")
            if not mine:
                out.append("  (nothing in this section is of the kind asked)")
            done: set[int] = set()
            for c in sorted(mine, key=lambda c: c.lines[0]):
                for ln in c.lines:
                    if ln in done:
                        continue
                    done.add(ln)
                    t = _line_text(s, ln)
                    t = t if len(t) <= self.max_chars else t[: self.max_chars] + "…"
                    if self.evidence != "all" and c is quoted and c.kind in ("passage", "clause", "yes_no"):
                        t = "quoted in the answer above"  # the block is this sentence: its place, not its words
                    page = s.page_of(ln)
                    out.append(f"  - line {ln}{f' (p.{page})' if page else ''}: {t}")
            out.append("")
        return out

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


_VECTORS: dict[tuple[int, str], np.ndarray] = {}  # (embedder id, text) -> unit vector; the oldest dropped first
_VECTORS_KEPT = 50_000


def cached_vectors(embedder, texts: tuple[str, ...]):
    """Unit vectors of ``texts`` by ``embedder``, each text embedded once per process (row labels and clauses
    come back question after question)."""
    key = id(embedder)
    todo = [t for t in dict.fromkeys(texts) if (key, t) not in _VECTORS]
    if todo:
        embed = getattr(embedder, "embed_short", None) or embedder.embed_documents  # few texts: no model start-up
        vecs = np.asarray(embed(todo), dtype=np.float32)
        vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-9)
        for t, v in zip(todo, vecs):
            _VECTORS[(key, t)] = v
        while len(_VECTORS) > _VECTORS_KEPT:
            _VECTORS.pop(next(iter(_VECTORS)))
    rows: list[np.ndarray] = [np.asarray(_VECTORS[(key, t)]) for t in texts]
    return np.stack(rows)


def _without_breadcrumbs(line: str, metric) -> str:
    """A metric's input line without its section's breadcrumb (``row "X" in AMD > … > Cash Flows, line 12
    (ID: 0093)`` -> ``row "X", line 12 (ID: 0093)``): the id names the section, listed under Sources."""
    for li in list(metric.inputs) + list(getattr(metric.compare, "inputs", None) or ()):
        line = line.replace(f" in {li.breadcrumb}, line {li.line} (ID: {li.node_id})",
                            f", line {li.line} (ID: {li.node_id})")
    return line


def _line_text(section: Section, line: int) -> str:
    """The text of source line ``line`` as sent in ``section`` ("" when it was not sent)."""
    numbers = section.line_numbers or tuple(range(section.line_start, section.line_start + section.text.count("\n") + 1))
    for ln, raw in zip(numbers, section.text.split("\n")):
        if ln == line:
            return raw.strip()
    return ""


def _short(breadcrumb: str, n: int = 70) -> str:
    """A breadcrumb of at most about ``n`` characters: its document and last title when it is longer."""
    if len(breadcrumb) <= n:
        return breadcrumb
    titles = breadcrumb_titles(breadcrumb)
    return clip(f"{titles[0]} > … > {titles[-1]}", n) if len(titles) > 1 else clip(breadcrumb, n)


def _crumb(breadcrumb: str) -> str:
    """A breadcrumb as its document and its section's whole title ("AMD > … > Data Center"): a source line
    the reader can find, without the path between (the retrieved sections' list and the JSON keep it)."""
    titles = breadcrumb_titles(breadcrumb)
    return f"{titles[0]} > … > {titles[-1]}" if len(titles) > 2 else breadcrumb


def image_record(section: Section, image: Image, *, reason: str = "") -> dict:
    """The plain-dict form of an image chosen for an answer: where it is, its caption, why it was chosen,
    and its size in pixels (a view never shows it larger: ``width``/``height`` 0 when unknown)."""
    return {"path": image.path, "label": image.label or image.alt, "doc": section.doc, "node_id": section.node_id,
            "breadcrumb": section.breadcrumb, "resolved": image.resolved, **({"kind": image.kind} if image.kind else {}),
            "reason": reason, "width": image.width, "height": image.height}
