"""The Gemini synthesizer: a grounded answer from the sections, citing breadcrumbs.

The online twin of :class:`ppkit.answer.synth.ExtractiveSynthesizer` (same ``stream`` /
``synthesize`` interface; it streams through the client's streaming call): the sections go inside XML-delimited blocks, the model answers only from
them, stating the answer first in an "Answer:" part (parsed into the answer block, :func:`parse_block`),
and cites breadcrumbs under ``Sources:``; images are asked for with
``[SHOW: file | label]`` markers (:mod:`ppkit.answer.markers`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Generator

from ..core.config import Config
from ..core.ids import breadcrumb_titles
from ..llm.client import LLMError, fall_back
from ..llm.fence import DATA_RULE, block, escape
from ..llm.parts import GeminiPart
from ..retrieval.analyze import Analysis
from ..core.text import clip
from ..retrieval.types import pages_label, pages_line
from .block import MAX_CHARS, AnswerBlock, cite_line
from .events import AnswerEvent, Delta, Event, collect
from .markers import (
    MarkerResult,
    image_catalogue,
    marker_instructions,
    parse_markers,
    strip_markers,
    visual_filter,
)

__all__ = ["GeminiSynthesizer", "parse_sources", "parse_block", "NO_ANSWER"]

# --------------------------------------------------------------------------- synthesis

NO_ANSWER = "The provided sections do not contain the answer."

_SYNTH_SYSTEM = f"""You answer questions about documents using ONLY the sections given inside <section> blocks.
Each block names its document, section id, breadcrumb (its place in the document), source line range
and, for a PDF, the 1-based PDF pages of the text sent.
Rules:
- Begin with a line "Answer:" followed by the answer itself in one to three sentences: the figure asked
  for first, with its unit and period; for a yes/no question begin with "Yes" or "No"; if the measure
  does not apply to this kind of company, say so and why. No ids, breadcrumbs or line numbers in it.
  Then a blank line, then the supporting details.
- Use only facts stated in the sections; do not use outside knowledge. If you compute something, show
  the figures you used and where they come from.
- If the sections do not contain the answer, say exactly: "{NO_ANSWER}" and then say what is missing.
- End with a line "Sources:" followed by one line per section you used, written
  "- <breadcrumb> (ID: <section id>)", copying the breadcrumb and id from the block.
- {DATA_RULE}"""

_IMAGES_RULE = """- After the sections, the prompt lists the images they contain. To show one that directly
  illustrates the answer, write its [SHOW: <file> | <label>] marker on its own line (see
  ppkit.answer.markers); never name an image that is not listed."""

_SOURCE_LINE = re.compile(r"^\s*(?:[-*•]|\d+[.)])?\s*(?P<bc>.*?)\s*\(\s*(?:ID|Id|id|node|Node)?\s*[:#]?\s*"
                          r"(?:(?P<doc>[^()#:]+)#)?(?P<id>\d{1,7})\s*\)\s*\.?\s*$")
# "Sources:", "**Sources:**", "## Sources" (a colon, or nothing else on the line); group 2: text after the colon
_HEADER = re.compile(r"^\s*[*_#]*\s*(sources?|images?)\s*[*_]*\s*(?::\s*[*_]*\s*(.*)|[*_]*\s*)$", re.I)


def parse_sources(text: str, sections=()) -> list[dict]:
    """The sources cited under the last ``Sources:`` line of an answer.

    Args:
        text: the answer.
        sections: the :class:`ppkit.retrieval.types.Section` objects sent; a cited id is matched
            to one of them by id (and document, from the breadcrumb's first element).

    Returns:
        ``[{"node_id", "breadcrumb", "doc", "in_context"}]`` in citation order, without
        duplicates; ``doc`` is None and ``in_context`` False for an id that was not sent.

    >>> parse_sources("42.\\nSources:\\n- AMD > Item 8 (ID: 0085)")[0]["node_id"]
    '0085'
    """
    lines = text.split("\n")
    start = None
    for i, ln in enumerate(lines):
        m = _HEADER.match(ln)
        if m and m.group(1).lower().startswith("source"):
            start = i
    if start is None:
        return []
    first = _HEADER.match(lines[start]).group(2) or ""
    body = ([first] if first.strip() else []) + lines[start + 1 :]
    out, seen = [], set()
    for ln in body:
        m = _SOURCE_LINE.match(ln)
        if not m:
            continue
        nid = m.group("id").zfill(4)
        bc = m.group("bc").strip().strip("*_`\"'").strip()
        doc_hint = (m.group("doc") or (breadcrumb_titles(bc)[0] if bc else "")).strip()
        match = [s for s in sections if s.node_id == nid]
        if len(match) > 1:  # the same id in two documents: the breadcrumb says which
            match = [s for s in match if s.doc == doc_hint] or match[:1]
        sec = match[0] if match else None
        key = (sec.doc if sec else doc_hint, nid)
        if key in seen:
            continue
        seen.add(key)
        out.append({"node_id": nid, "breadcrumb": bc or (sec.breadcrumb if sec else ""),
                    "doc": sec.doc if sec else None, "in_context": sec is not None})
    return out


_ANSWER_HEAD = re.compile(r"^\s*[*_#]*\s*answer\s*[*_]*\s*:\s*[*_]*\s*", re.I)
_IDS = re.compile(r"\s*\((?:[^()]*\bID:?\s*\d{3,7}[^()]*)\)|\s*\[[^\]]*\]|\s*\b(?:source )?lines?\s+\d+(?:\s*[-–]\s*\d+)?",
                  re.I)
_FIGURE = re.compile(r"(?<![\w.])[-$(]?\d[\d,]*(?:\.\d+)?(?![\d,])(?!\d)")
_NOT_MEANINGFUL = re.compile(r"\bnot (?:a )?(?:meaningful|applicable|useful|relevant)\b|\bdoes not apply\b", re.I)


def parse_block(text: str, sections=()) -> AnswerBlock | None:
    r"""The answer block of a written answer: its first "Answer:" part (up to the first blank line), without
    ids or line numbers, its kind inferred and its citations the sources it names (:func:`parse_sources`).

    >>> parse_block("Answer: Yes, revenue grew 9% in 2022.\n\nDetails.\nSources:\n- A (ID: 0001)").kind
    'yes_no'
    """
    lines = text.strip().split("\n")
    start = next((i for i, ln in enumerate(lines[:5]) if _ANSWER_HEAD.match(ln)), None)
    if start is None:
        return None
    part = [_ANSWER_HEAD.sub("", lines[start])]
    for ln in lines[start + 1:]:
        if not ln.strip() or _HEADER.match(ln):
            break
        part.append(ln.strip())
    body = re.sub(r"\s*,\s*(?=[.;]|$)", "", _IDS.sub("", " ".join(part))).strip().strip("*_ ")
    body = clip(body, MAX_CHARS)
    if not body:
        return None
    figures = [m for m in _FIGURE.findall(body) if not re.fullmatch(r"(?:19|20)\d{2}", m)]
    if NO_ANSWER.casefold()[:-1] in body.casefold():
        kind = "not_found"
    elif _NOT_MEANINGFUL.search(body):
        kind = "not_meaningful"
    elif re.match(r"(?:yes|no)\b", body, re.I):
        kind = "yes_no"
    elif figures and re.search(r"=|\b(?:comput|calculat|divid)\w*", body, re.I):
        kind = "computed"
    else:
        kind = "figure" if figures else "passage"
    cites = []
    for c in parse_sources(text, sections):
        sec = next((s for s in sections if s.node_id == c["node_id"] and s.doc == c["doc"]), None)
        if sec is not None:
            cites.append(cite_line(sec, sec.line_start, sec.line_end))
    return AnswerBlock(body, kind, tuple(cites))


def _settled(raw: str) -> str:
    """The part of a reply being streamed that can be shown: its complete lines, up to any image marker not
    yet closed (a marker may span lines)."""
    done = raw[: raw.rfind("\n") + 1]
    start = done.rfind("[SHOW:")
    return done[:start] if start >= 0 and "]" not in done[start:] else done


class GeminiSynthesizer(GeminiPart):
    """A grounded answer by Gemini from the retrieved sections, citing them under ``Sources:``.

    Args:
        config: a :class:`ppkit.Config`.
        client: a :class:`ppkit.llm.client.GeminiClient` (default: made from ``config`` on first use).

    ``synthesize`` returns ``(text, info)``; ``info`` has ``sources`` (the parsed citations,
    see :func:`parse_sources`), ``answered`` (False when the model said the sections do not
    contain the answer), ``images`` (those it chose), token counts and ``notes`` (e.g. a
    cited id that was not sent).

    ``fallback`` (the pipeline passes the extractive synthesizer): when the call fails, its
    answer is given instead, under a line saying so, ``info["synthesizer"]`` names it and the
    fallback is recorded (:func:`ppkit.llm.client.fall_back`).

    Raises:
        LLMError: the call failed after its retries and there is no ``fallback`` (no answer is invented).
    """

    name = "gemini"
    role = "synthesize"

    def __init__(self, config: Config | None = None, client=None, *, fallback=None):
        super().__init__(config, client)
        self.fallback = fallback  # the offline synthesizer used when the call fails (None: raise)

    def __repr__(self) -> str:
        return f"GeminiSynthesizer(model={self.config.gemini_model!r})"

    def system(self, sections=()) -> str:
        """The system instruction (with the image rule when a section has images it can show)."""
        if image_catalogue(sections):
            return _SYNTH_SYSTEM + "\n" + _IMAGES_RULE
        return _SYNTH_SYSTEM

    def prompt(self, question: str, sections) -> str:
        """The user prompt: the sections in XML-delimited blocks, then the question in its own block;
        document text cannot open or close a block (:func:`ppkit.llm.fence.escape`)."""
        blocks = []
        for s in sections:
            attrs = (f'id="{s.node_id}" doc="{html.escape(s.doc)}" breadcrumb="{html.escape(s.breadcrumb)}" '
                     f'lines="{s.line_start}-{s.line_end}"' + (' trimmed="true"' if s.trimmed else "")
                     + (f' pdf_pages="{pages_label(s.pages)[2:]}"' if s.pages else ""))
            # no block can be opened or closed from inside a section (ppkit.llm.fence)
            blocks.append(f"<section {attrs}>\n{escape(s.text)}\n</section>")
        images = f"\n\n{escape(marker_instructions(sections))}" if image_catalogue(sections) else ""
        return "<sections>\n" + "\n".join(blocks) + f"\n</sections>{images}\n\n" + block("question", question)

    # -- the visual filter: Gemini sees the images it asked for before they are shown --------
    visual_check = True  # False: show the marked images without looking at them

    def _look_at_images(self, question: str, shown: MarkerResult) -> MarkerResult:
        """Keep the marked images that the model, seeing their pixels (image parts), says help."""
        if not self.visual_check or not shown.images:
            return shown
        def ask(prompt: str, data: bytes, mime: str) -> str:  # through _generate, so the calls are traced
            return self._generate(prompt, images=[(data, mime)], temperature=0.0).text

        kept, notes = visual_filter(question, shown.images, ask=ask)
        return MarkerResult(shown.text, kept, list(shown.notes) + notes)

    def synthesize(self, question: str, sections, analysis: Analysis | None = None) -> tuple[str, dict]:
        """The grounded answer at once: :meth:`stream` collected."""
        return collect(self.stream(question, sections, analysis))[1]

    def stream(self, question: str, sections,
               analysis: Analysis | None = None) -> Generator[Event, None, tuple[str, dict]]:
        """The answer as the model writes it (``delta`` events, complete lines without image markers),
        through the client's streaming call; returns ``(text, info)``.

        The deltas join to the returned text except where a step after the model changes what was shown
        (the visual filter, or a fallback after the stream broke): the returned text is the answer.
        """
        self.last_notes = []
        shown_so_far = ""
        raw: list[str] = []
        try:
            gen = self._generate_stream(self.prompt(question, sections), system=self.system(sections),
                                        temperature=0.0)
            while True:
                try:
                    piece = next(gen)
                except StopIteration as stop:
                    res = stop.value
                    break
                raw.append(piece)
                clean = strip_markers(_settled("".join(raw)))
                if clean.startswith(shown_so_far) and len(clean) > len(shown_so_far):
                    yield Delta(clean[len(shown_so_far):])
                    shown_so_far = clean
        except LLMError as e:
            if self.fallback is None:
                raise
            note = fall_back("synthesis", e, f"{self.fallback.name} synthesizer")
            banner = (f"[Gemini could not answer ({' '.join(str(e).split())[:160]}); "
                      f"this is the offline {self.fallback.name} answer instead.]")
            yield Delta(("\n" if shown_so_far else "") + banner + "\n")
            text, info = yield from self.fallback.stream(question, sections, analysis)
            self.last_notes = [note]
            return f"{banner}\n{text}", {**info, "synthesizer": self.fallback.name, "notes": [note]}
        text, info = self._finish(question, sections, res)
        if text.startswith(shown_so_far) and len(text) > len(shown_so_far):
            yield Delta(text[len(shown_so_far):])
        block = info.get("block")
        if block is not None:  # known once the sources are: after the text
            yield AnswerEvent(block.text, block.kind, [c.to_dict() for c in block.citations])
        return text, info

    def _finish(self, question: str, sections, res) -> tuple[str, dict]:
        """The model's reply made into the answer: image markers checked and taken out, citations parsed,
        the cited sections' PDF pages added."""
        # [SHOW: file | label] markers are checked against the sections' images and taken out of the text
        shown = parse_markers(res.text.strip(), sections)
        shown = self._look_at_images(question, shown)
        text = shown.text
        sources = parse_sources(text, sections)
        notes = list(shown.notes) + [f"cited {c['breadcrumb'] or c['node_id']} (ID {c['node_id']}), which was not among the sections sent"
                 for c in sources if not c["in_context"]]
        if not sources and NO_ANSWER not in text:
            notes.append("the answer cites no sources")
        cited = pages_line([sec for c in sources if c["in_context"] for sec in sections
                            if sec.node_id == c["node_id"] and sec.doc == c["doc"]])
        text = f"{text}\n{cited}" if cited else text  # the PDF pages of the cited sections' lines sent
        self.last_notes = notes
        info = {"model": res.model, "sources": sources, "answered": NO_ANSWER not in text,
                "images": shown.images, "tokens_in": res.tokens_in, "tokens_out": res.tokens_out,
                "cached": res.cached, "sections_sent": len(sections),
                "context_chars": sum(len(s.text) for s in sections), "notes": notes,
                "block": parse_block(text, sections)}
        if info["block"] is None:  # the model wrote no "Answer:" part: its first paragraph stands in
            first = text.strip().split("\n\n")[0]
            info["block"] = parse_block("Answer: " + first + "\n\n" + text, sections)
        return text, info
