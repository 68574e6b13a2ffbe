"""Synthesizers: retrieved sections -> an Answer that cites them, its short answer block first.

A synthesizer is any object with ``name``, ``calls``, ``stream(question, sections, analysis)``
(a generator of :mod:`ppkit.answer.events` ``delta`` events that returns ``(text, info)``) and
``synthesize(question, sections, analysis)`` (the same text and notes at once). It is given the
sections and the question's analysis and never retrieves: the conductor (:func:`ppkit.pipeline.stream`)
retrieves and hands the sections to :func:`ppkit.answer.compose.answer_stream`, which calls the
synthesizer, verifies and assembles the :class:`Answer`.

:class:`ExtractiveSynthesizer` (offline default) writes no prose of its own. It states the answer
block first (:mod:`ppkit.answer.block`): the best passage of all the sections, ranked jointly by what
the question asks (:mod:`ppkit.answer.passages`: stemmed-term overlap weighted by rarity, the asked
type and year, the section's rank; a table row written with its column headers and units), or, when
the question asks for a financial metric (:mod:`ppkit.answer.metrics`), the metric computed from the
retrieved primary statements with every input cited, or which inputs are missing. Below it come the
passages that support it, with breadcrumb and source line numbers (``evidence="all"``: the best
passages of every section); its ``Answer.mode`` (``"offline"``, a field, not a line of the text) says it
is extractive. It never paraphrases; that is the online synthesizer's job
(:class:`ppkit.answer.synth_gemini.GeminiSynthesizer`, which answers only from the sections in XML-delimited
blocks and cites breadcrumbs under ``Sources:``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Protocol

from ..core.errors import ConfigError
from ..core.ids import breadcrumb_titles
from ..core.text import clip, expand_terms, stems
from ..documents.tree import Image
from ..retrieval.analyze import Analysis
from ..retrieval.types import Section, Trace, pages_label, pages_line
from .abstain import abstention_line, metric_answers, missing_from
from .block import MAX_CHARS, AnswerBlock, change_block, cite_line, not_stated
from .events import AnswerEvent, Delta, Event
from .images import DEFAULT_RATIO, DEFAULT_THRESHOLD, score_images, select_images
from .judgement import existence_block, judgement_block
from .metrics import adjusted_block, compute_metric, format_metric, metric_block
from .passages import (Asked, Passage, about_quantity, asked_quantity, asked_type, other_kind, rank_passages,
                       render_row, stated_change, states_change, yes_or_no)
from .quantity import compute_quantity, impact_on_margin, not_computed, not_of_asked_kind, table_total
from .verify import summary_line
from .which import not_determined, selects, uncomputed_formula, which_block

__all__ = ["Answer", "AnswerTrace", "Synthesizer", "ExtractiveSynthesizer", "EVIDENCE", "MODES", "answer_mode",
           "image_record", "line_deltas"]

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
        if self.verification:  # one line: how many figures were found, re-derived, or not found
            lines += ["", summary_line(self.verification)]
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
    """The answer block first, then the passages that support it (offline, deterministic).

    The block (:mod:`ppkit.answer.block`) is the abstention, the computed metric, or the best passage of all
    the sections ranked jointly by what the question asks (:mod:`ppkit.answer.passages`); a table row is
    written with its column headers and units.

    Args:
        per_section: passages quoted per section with ``evidence="all"``.
        max_chars: cap on one quoted passage.
        evidence: ``"support"`` (default): below the block only the passages it quotes and at most ``extra``
            more; ``"all"``: the best ``per_section`` passages of every section.
        extra: passages shown beside the block's own with ``evidence="support"``.
        image_threshold / max_images: images of the sections shown with the answer
            (:func:`ppkit.answer.images.select_images`; ``max_images=0`` shows none).
    """

    name = "extractive"

    def __init__(self, per_section: int = 3, max_chars: int = 400, *, evidence: str = "support", extra: int = 2,
                 image_threshold: float | None = None, image_ratio: float | None = None, max_images: int = 3):
        if evidence not in EVIDENCE:
            raise ConfigError(f"evidence must be one of {', '.join(EVIDENCE)}, not {evidence!r}")
        self.per_section = per_section
        self.max_chars = max_chars
        self.evidence = evidence
        self.extra = extra
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
        own = _own_names(sections, analysis)
        asked = asked_type(question, analysis.years)
        ranked = rank_passages(question, sections, asked, q_terms=q, exclude=own)
        # what the question names (a company, a year) that no section mentions: say so first, compute nothing
        missing = missing_from(question, sections, analysis)
        refusal = abstention_line(missing)
        # a financial metric: computed from the statements, every input cited (or which inputs are missing);
        # a figure the statements of the company asked about give is never blocked by an abstention
        # a question asking which one (a segment, a region) is never answered by the metric's total
        which = selects(question, asked)
        metric = (compute_metric(question, sections, analysis.metric, years=analysis.years)
                  if analysis.metric is not None and not which else None)
        if refusal is not None and metric is not None and metric.ok and metric_answers(metric, missing, analysis):
            refusal = None
        elif refusal is not None:
            metric = None
        formula = uncomputed_formula(question) if analysis.metric is None else None
        block, used = _block(question, refusal, metric, ranked, sections, asked, q - own, which=which,
                             formula=formula)
        out = [block.text, ""]
        cited = {c.node for c in block.citations}
        if metric is not None:  # the steps and the cited inputs under the headline (the block)
            rest = format_metric(metric).split("\n")[1:]
            if metric.ok and metric.steps:  # every step, the last one too (the headline it held is the block now)
                rest = [ln for ln in rest if not ln.startswith("Steps: ")]
                rest.insert(1 if rest and rest[0].startswith("Formula: ") else 0,
                            "Steps: " + "; ".join(metric.steps) + ".")
            if self.evidence != "all":  # an input's section is named once, under Sources: its row and line here
                rest = [_without_breadcrumbs(ln, metric) for ln in rest]
            out += rest + ([""] if rest else [])
            cited |= {li.node_id for li in metric.inputs}
        if self.evidence == "all":
            shown = [p for s in sections for p in self._best_of(s, ranked)]
        else:
            more = 0 if metric is not None and metric.ok else self.extra
            shown = used + _more(ranked, used, more)
        evidence = self._evidence(shown, sections, full=self.evidence == "all", used_by_block=used,
                                  block_text=block.text)
        out += evidence
        quoted = {p.section.section_id for p in shown}
        listed = (sections if self.evidence == "all"
                  else [s for s in sections if s.section_id in quoted or s.node_id in cited])
        out.append("Sources:")  # the full breadcrumbs with the full pack; else the document and the section's title
        out += [f"- {s.breadcrumb if self.evidence == 'all' else _crumb(s.breadcrumb)} (ID: {s.node_id})"
                for s in listed]
        out += [pages_line(listed)] if pages_line(listed) else []
        images, image_info = self._images(question, sections, analysis)
        notes = {"passages_quoted": len(shown), "images": images, **image_info, "block": block,
                 "asked": asked.kind + (" yes/no" if asked.yes_no else ""),
                 "passages": [{"section_id": p.section.section_id, "line": p.line, "kind": p.kind,
                               "score": round(sc, 3)} for sc, p in ranked[:5]]}
        if refusal is not None:
            notes["abstained"] = missing
        if metric is not None:
            notes["metric"] = {"name": metric.metric.name, "year": metric.year, "doc": metric.doc, "value": metric.value,
                               "unit": metric.metric.unit, "missing": list(metric.missing),
                               "inputs": [f"{li.doc}#{li.node_id}:{li.line}" for li in metric.inputs]}
        return "\n".join(out), notes

    def _best_of(self, section: Section, ranked: list) -> list[Passage]:
        """A section's best ``per_section`` single sentences and rows (the full pack)."""
        own = [p for _, p in ranked if p.section is section and p.kind != "pair"]
        return own[: self.per_section]

    def _evidence(self, shown: list[Passage], sections: list[Section], *, full: bool,
                  used_by_block: tuple[Passage, ...] | list[Passage] = (), block_text: str = "") -> list[str]:
        """The quoted passages grouped by section in rank order, each with its source line (and page); a row
        after its table's header line."""
        out = []
        for s in sections:
            mine = sorted((p for p in shown if p.section is s), key=lambda p: p.line)
            if not mine and not full:
                continue
            # the document once: the breadcrumb's root names it where it is the document's id
            cite = pages_label(s.pages) if s.breadcrumb.startswith(f"{s.doc} >") else s.cite()
            out.append(f"From {_short(s.breadcrumb, 60)} ({cite + ', ' if cite else ''}lines {s.line_start}-{s.line_end}):")
            if not mine:
                out.append("  (no sentence in this section shares terms with the question)")
            done: set[int] = set()
            for p in mine:
                pieces = ([(p.header_line, p.header_text)] if p.header_line and p.header_line not in done else [])
                pieces.append((p.line, p.text))
                for ln, t in pieces:
                    done.add(ln)
                    t = t if len(t) <= self.max_chars else t[: self.max_chars] + "…"
                    if not full and p in used_by_block and p.kind != "row" and ln == p.line and p.text in block_text:
                        t = "quoted in the answer above"  # the block is this sentence: its place, not its words again
                    elif not full and ln != p.header_line and p not in used_by_block:
                        t = clip(t, 160)  # a passage beside the block's: its start says what it is
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


def _without_breadcrumbs(line: str, metric) -> str:
    """A metric's input line without its section's breadcrumb (``row "X" in AMD > … > Cash Flows, line 12
    (ID: 0093)`` -> ``row "X", line 12 (ID: 0093)``): the id names the section, listed under Sources."""
    for li in list(metric.inputs) + list(getattr(metric.compare, "inputs", None) or ()):
        line = line.replace(f" in {li.breadcrumb}, line {li.line} (ID: {li.node_id})",
                            f", line {li.line} (ID: {li.node_id})")
    return line


def _own_names(sections: list[Section], analysis: Analysis) -> set[str]:
    """Stems of the documents' own names (their names, first breadcrumb titles, the words that chose them):
    every passage of a filing is about its company, so the company's name chooses no passage."""
    words = [s.doc for s in sections] + [breadcrumb_titles(s.breadcrumb)[0] for s in sections if s.breadcrumb]
    if analysis.filters is not None:
        words += [str(w) for w in analysis.filters.matched.values()]
    return set(stems(" ".join(re.sub(r"[_#]", " ", w) for w in words)))


def _more(ranked: list, used: list[Passage], n: int) -> list[Passage]:
    """Up to ``n`` more passages scoring at least half the best, none overlapping those already shown."""
    if not ranked or n <= 0:
        return []
    best = ranked[0][0]
    out: list[Passage] = []
    taken = {(p.section.section_id, ln) for p in used for ln in range(p.line, p.line_end + 1)}
    for score, p in ranked:
        if len(out) >= n or score < 0.5 * best:
            break
        span = {(p.section.section_id, ln) for ln in range(p.line, p.line_end + 1)}
        if p.kind == "pair" or span & taken:
            continue
        out.append(p)
        taken |= span
    return out


def _cite(p: Passage):
    """The block's citations of a passage: a row's header line and the row, or the sentence's lines."""
    if p.kind == "row":
        return tuple(cite_line(p.section, ln) for ln in p.lines())
    return (cite_line(p.section, p.line, p.line_end),)


def _block(question: str, refusal: str | None, metric, ranked: list, sections: list[Section], asked: Asked,
           q_terms: set[str], *, which: bool = False, formula: str | None = None) -> tuple[AnswerBlock, list[Passage]]:
    """The answer block and the passages it quotes: the abstention, the computed metric, or the best passage
    of all sections (a row as a statement with its headers and units, kind ``figure``; a yes/no question
    clearly answered by a sentence, ``yes_no``). ``which``: the question asks which one
    (:func:`ppkit.answer.which.which_block`); ``formula``: the line saying the formula it asks is not computed."""
    if refusal is not None:
        return AnswerBlock(refusal, "not_found"), []
    if which:  # the one named by the highest or lowest row, else the comparison computed, else not determined
        return (which_block(question, asked, ranked, q_terms, sections) or compute_quantity(question, asked, sections)
                or not_determined(asked, ranked))
    impact = impact_on_margin(question, metric, ranked)  # "the impact of X on the margin": X, in points of it
    if impact is not None:
        block, used = impact
        return AnswerBlock(block.text, block.kind, block.citations + metric_block(metric, sections).citations), used
    adjusted = adjusted_block(question, metric, sections)  # the company's own adjusted measure: not the formula's
    if adjusted is not None:
        return adjusted, []
    if metric is not None and (metric.ok or metric.reason):
        block = metric_block(metric, sections)  # "Did it grow ...?", "a healthy quick ratio?": the figures' yes or no
        return judgement_block(question, metric, block) or block, []
    computed = compute_quantity(question, asked, sections)  # a share, ratio or change of the rows found
    if computed is not None:
        return computed
    if metric is not None:
        return metric_block(metric, sections), []
    if formula is not None:  # never a passage for a formula not computed: it does not answer
        return AnswerBlock(formula, "not_found"), []
    if not ranked:
        return AnswerBlock("Not found: no retrieved sentence shares terms with the question.", "not_found"), []
    best = ranked[0][1]
    if asked.kind == "drivers" and not asked.yes_no:  # what drove a change is said in words, not a table row
        best = next((p for _, p in ranked if p.kind != "row"), best)
    if asked.yes_no:  # yes or no from the best passage that clearly answers it, else say the sources do not
        for _, p in ranked[:5]:
            yes = yes_or_no(question, p, q_terms, asked.years)
            if yes is not None:
                return AnswerBlock(clip(f"{yes}. {p.text}", MAX_CHARS), "yes_no", _cite(p)), [p]
        said = existence_block(question, [p for _, p in ranked], asked.years, sections)  # "Has it paid dividends?": the sentence
        if said is not None:
            return said
        shown = render_row(best, asked.years) if best.kind == "row" else best.text
        return AnswerBlock(clip(f"The sources do not say; the closest passage: {shown}", MAX_CHARS), "inputs",
                           _cite(best)), [best]
    about = asked_quantity(question)  # the quantity named ("the increase in <X>", "<A> compare to <B>", "pay to <Y>")
    if about is not None and not about_quantity(best, about):  # a passage on another quantity answers nothing asked
        top, closest = ranked[0][0], best
        best = next((p for sc, p in ranked[:10] if sc >= 0.5 * top and about_quantity(p, about)
                     and not (asked.kind == "drivers" and p.kind == "row")), None)
        if best is None:
            shown = render_row(closest, asked.years) if closest.kind == "row" else closest.text
            text = f"No passage found is about the quantity asked; the closest passage: {shown}"
            return AnswerBlock(clip(text, MAX_CHARS), "inputs", _cite(closest)), [closest]
    if asked.by:  # a difference asked: a close passage stating the quantity's two values, or a change figure
        close = [p for sc, p in ranked[:5] if sc >= 0.6 * ranked[0][0]]
        best = next((p for p in close if stated_change(p, q_terms)), None) or next(
            (p for p in close if states_change(p)), best)
        changed = change_block(best, asked, q_terms, _cite(best))
        if changed is not None:
            return changed, [best]
    total = table_total(best, asked)  # a sentence introducing a table ("... is as follows:"): its total row
    if total is not None:
        text = f"{render_row(total, asked.years)} ({best.text.rstrip(' :')})"
        return AnswerBlock(clip(text, MAX_CHARS), "figure", _cite(total) + _cite(best)), [total, best]
    if other_kind(best, asked):  # a count where money is asked, a level where a change is: not the answer
        return not_stated(asked, best.text, _cite(best)), [best]
    if not_of_asked_kind(best, asked):  # never another quantity as the answer line
        shown = render_row(best, asked.years) if best.kind == "row" else best.text
        return not_computed(asked, shown, best, _cite(best)), [best]
    if best.kind == "row":
        return AnswerBlock(clip(render_row(best, asked.years), MAX_CHARS), "figure", _cite(best)), [best]
    return AnswerBlock(clip(best.text, MAX_CHARS), "passage", _cite(best)), [best]


def image_record(section: Section, image: Image, *, reason: str = "") -> dict:
    """The plain-dict form of an image chosen for an answer: where it is, its caption, why it was chosen,
    and its size in pixels (a view never shows it larger: ``width``/``height`` 0 when unknown)."""
    return {"path": image.path, "label": image.label or image.alt, "doc": section.doc, "node_id": section.node_id,
            "breadcrumb": section.breadcrumb, "resolved": image.resolved, **({"kind": image.kind} if image.kind else {}),
            "reason": reason, "width": image.width, "height": image.height}
