"""The online parts: Gemini behind the same interfaces as the offline ones.

* :class:`GeminiNoiseFilter` - one call per document over the skeleton tree (node
  id, level, title, the start of its text), JSON-schema output; the
  :class:`ppkit.noise.NoiseFilter` interface.
* :class:`GeminiReranker` - the model picks from the numbered list of candidate
  breadcrumbs with 150-character snippets, as the reference system does; the
  :class:`ppkit.rerank.Reranker` interface.
* :class:`GeminiSynthesizer` - a grounded answer from the sections inside
  XML-delimited blocks, citing breadcrumbs under ``Sources:``; the
  :class:`ppkit.synth.Synthesizer` interface.

All calls go through :class:`ppkit.llm.GeminiClient` (retries, cache, token
counts). Each part keeps ``calls`` (the model calls it made, for traces) and
``last_notes`` (what went wrong in its last call and what it did instead). The
client is created on first use, so ``prompt(...)`` works without a key.

Failure policy: a reply the part cannot use (not JSON, unknown ids) is noted and
handled - the re-ranker keeps stage-1 order, the noise filter falls back to the
offline title rules; a call that failed after its retries raises
:class:`ppkit.llm.LLMError` (nothing is written, so nothing is lost).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import replace

from .config import Config
from .llm import LLMError, parse_json
from .noise import CATEGORIES, NoiseDecision, RuleNoiseFilter

__all__ = ["GeminiNoiseFilter", "GeminiReranker", "GeminiSynthesizer", "parse_ranking", "parse_sources"]


class _GeminiPart:
    """Shared plumbing: a lazily created client and a log of this part's calls."""

    role = ""

    def __init__(self, config: Config | None = None, client=None):
        self.config = config or Config.from_env()
        self._client = client
        self.calls: list[dict] = []  # this part's model calls (see GeminiClient.calls)
        self.last_notes: list[str] = []

    @property
    def client(self):
        if self._client is None:
            from .llm import GeminiClient

            self._client = GeminiClient(config=self.config)
        return self._client

    def _generate(self, prompt: str, **kw):
        """client.generate, with this part's share of the client's call log copied into ``calls``."""
        client = self.client
        before = len(client.calls)
        try:
            return client.generate(prompt, **kw)
        finally:
            self.calls.extend({**c, "role": self.role} for c in client.calls[before:])


# --------------------------------------------------------------------------- noise

_NOISE_SYSTEM = """You find the noise sections of one document before it is indexed for question answering.
A noise section is one whose own text belongs to exactly one of these categories:
{categories}
You are given the document's skeleton: one line per heading with its node id, its level, its title and
the first characters of its own text. Flag a section only when its own content is one of these categories,
judging by the title and the start of its text. Sections that hold substance (business description, risks,
results, financial statements, notes, methods, experiments) are never noise, whatever their position.
When unsure, do not flag: dropping content loses answers, keeping noise costs little.
Return JSON: {{"noise": [{{"node_id": "0003", "category": "toc", "reason": "a few words"}}]}},
with an empty list when nothing is noise."""

_NOISE_SCHEMA = {
    "type": "object",
    "properties": {"noise": {"type": "array", "items": {
        "type": "object",
        "properties": {"node_id": {"type": "string"},
                       "category": {"type": "string", "enum": list(CATEGORIES)},
                       "reason": {"type": "string"}},
        "required": ["node_id", "category", "reason"]}}},
    "required": ["noise"],
}

_LABEL_TO_CATEGORY = {label: c for c, label in CATEGORIES.items()}


class GeminiNoiseFilter(_GeminiPart):
    """Noise filter by Gemini: one JSON-schema call per document over its skeleton tree.

    Args:
        config: a :class:`ppkit.Config` (model, endpoint).
        client: a :class:`ppkit.llm.GeminiClient` (default: made from ``config`` on first use).
        preview_chars: characters of each section's own text shown after its title.

    ``decide`` returns decisions with ``filter="gemini"``; ids or categories in the reply
    that do not exist are ignored and noted in ``last_notes`` (and ``notes[doc]``). A reply
    that is not JSON falls back to the offline title rules (decisions then say ``rule`` or
    ``fuzzy``), also noted.
    """

    name = "gemini"
    role = "noise"

    def __init__(self, config: Config | None = None, client=None, *, preview_chars: int = 80):
        super().__init__(config, client)
        self.preview_chars = preview_chars
        self.notes: dict[str, list[str]] = {}  # doc -> notes of its call

    def __repr__(self) -> str:
        return f"GeminiNoiseFilter(model={self.config.gemini_model!r})"

    def skeleton(self, tree, lines: list[str] | None = None) -> str:
        """The skeleton lines the model sees: ``0003 | L2 | Title | start of text``."""
        out = []
        for n in tree.headings():
            row = f"{n.node_id} | L{n.level} | {'  ' * (n.depth - 1)}{n.title}"
            if lines is not None and self.preview_chars > 0:
                own = " ".join(" ".join(lines[n.line_start : n.text_end]).split())  # text below the heading
                if own:
                    row += f" | {own[: self.preview_chars]}"
            out.append(row)
        return "\n".join(out)

    def system(self) -> str:
        """The system instruction (the six categories and the rules)."""
        cats = "\n".join(f"- {c}: {label}" for c, label in CATEGORIES.items())
        return _NOISE_SYSTEM.format(categories=cats)

    def prompt(self, tree, lines: list[str] | None = None) -> str:
        """The user prompt for one document (what notebook 03 shows)."""
        return (f"Document: {tree.doc}\n"
                f"Skeleton (node id | level | title | start of its own text):\n{self.skeleton(tree, lines)}")

    def decide(self, tree, lines: list[str] | None = None) -> dict[str, NoiseDecision]:
        """Decisions for the nodes the model calls noise (others are kept).

        Raises:
            LLMError: the call failed after its retries.
        """
        notes: list[str] = []
        self.last_notes = self.notes[tree.doc] = notes
        if not tree.headings():
            return {}
        try:
            res = self._generate(self.prompt(tree, lines), system=self.system(), schema=_NOISE_SCHEMA,
                                 temperature=0.0)
        except LLMError as e:
            if e.reply is None:
                raise
            notes.append(f"Gemini noise reply for {tree.doc} was not JSON; used the offline title rules instead")
            return RuleNoiseFilter(None).decide(tree, lines)
        items = res.data.get("noise") if isinstance(res.data, dict) else res.data
        if not isinstance(items, list):
            notes.append(f"Gemini noise reply for {tree.doc} had no 'noise' list; nothing was dropped")
            return {}
        out: dict[str, NoiseDecision] = {}
        for item in items:
            if not isinstance(item, dict):
                notes.append(f"ignored a reply item that is not an object: {item!r}")
                continue
            nid = str(item.get("node_id", "")).strip()
            nid = nid.zfill(4) if nid.isdigit() else nid
            cat = str(item.get("category", "")).strip()
            cat = _LABEL_TO_CATEGORY.get(cat.casefold(), cat)
            if nid not in tree.nodes or nid == "0000":
                notes.append(f"ignored unknown node id {item.get('node_id')!r}")
                continue
            if cat not in CATEGORIES:
                notes.append(f"ignored unknown category {item.get('category')!r} for node {nid}")
                continue
            if nid in out:
                continue
            out[nid] = NoiseDecision(nid, tree[nid].title, True, cat, "gemini",
                                     str(item.get("reason", "")).strip() or f"Gemini: {CATEGORIES[cat]}")
        return out


# --------------------------------------------------------------------------- rerank

_RERANK_SYSTEM = """You select the document sections that answer a question.
You are given the question and a numbered list of candidate sections: each has its breadcrumb
(document > section path) and the first characters of its text. Choose the sections most likely to
contain the information needed to answer the question, most relevant first. Prefer the section that
holds the figures or statements themselves over sections that only mention them.
Return JSON: {"ids": [numbers from the list]}."""

_RERANK_SCHEMA = {"type": "object", "properties": {"ids": {"type": "array", "items": {"type": "integer"}}},
                  "required": ["ids"]}

_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_INT = re.compile(r"^\s*[#\[(]?\s*(\d+)\s*[\])]?\s*\.?\s*$")


def _find_json(text: str):
    """The first JSON object or array inside ``text`` (prose around it allowed), or None."""
    dec = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                return dec.raw_decode(text[i:])[0]
            except ValueError:
                continue
    return None


def parse_ranking(reply, n: int) -> tuple[list[int], list[str]]:
    """Parse a re-ranking reply into 0-based candidate positions.

    Args:
        reply: the parsed JSON (``{"ids": [...]}`` or a list) or the raw reply text (JSON,
            possibly inside prose or a code fence).
        n: number of candidates (valid ids are 1..n).

    Returns:
        (positions in the model's order, without duplicates or out-of-range ids; notes on
        what was dropped). An unusable reply gives ``([], [reason])``.

    >>> parse_ranking('Sure: {"ids": [3, 1, 3, 9]}', 5)
    ([2, 0], ['dropped duplicate id 3', 'dropped id 9 (the list has 1..5)'])
    """
    notes: list[str] = []
    data = reply
    if isinstance(reply, str):
        try:
            data = parse_json(reply)
        except ValueError:
            data = _find_json(reply)
    if isinstance(data, dict):
        data = data.get("ids", next((v for v in data.values() if isinstance(v, list)), None))
    if not isinstance(data, list):
        return [], ["the reply holds no list of ids"]
    out: list[int] = []
    for item in data:
        m = _INT.match(str(item)) if isinstance(item, (int, str)) and not isinstance(item, bool) else None
        if m is None:
            notes.append(f"dropped {item!r} (not an id)")
            continue
        i = int(m.group(1))
        if not 1 <= i <= n:
            notes.append(f"dropped id {i} (the list has 1..{n})")
        elif i - 1 in out:
            notes.append(f"dropped duplicate id {i}")
        else:
            out.append(i - 1)
    if not out:
        notes.append("the reply holds no valid id")
    return out, notes


class GeminiReranker(_GeminiPart):
    """Re-ranking by Gemini over the numbered breadcrumb list (+ snippets), as the reference does.

    Args:
        config: a :class:`ppkit.Config`; ``config.k`` is how many sections the model is asked to pick
            (unless ``select`` is given).
        client: a :class:`ppkit.llm.GeminiClient` (default: made from ``config`` on first use).
        snippet_chars: characters of each section's text shown after its breadcrumb.
        select: how many sections to ask for.

    The chosen candidates come first in the model's order, then the others in stage-1
    order; ``stage2_score`` falls from 1.0 by rank, and ``features["gemini_choice"]`` is the
    model's rank for the chosen ones. A bad reply or a failed call keeps stage-1 order and
    says so in ``last_notes`` (retrieve copies them into the trace).
    """

    name = "gemini"
    role = "rerank"

    def __init__(self, config: Config | None = None, client=None, snippet_chars: int = 150, *,
                 select: int | None = None):
        super().__init__(config, client)
        self.snippet_chars = snippet_chars
        self.select = select

    def __repr__(self) -> str:
        return f"GeminiReranker(model={self.config.gemini_model!r}, snippet_chars={self.snippet_chars})"

    def _snippet(self, c) -> str:
        """The first ``snippet_chars`` of the section's text below its heading, HTML table tags removed
        (LlamaParse writes tables as HTML; 150 characters of ``<table> <thead> <tr>`` say nothing)."""
        if not c.text:
            return c.snippet[: self.snippet_chars]
        body = c.text.split("\n", 1)[1] if "\n" in c.text and c.node_id != "0000" else c.text
        return " ".join(_TAG.sub(" ", body).split())[: self.snippet_chars].rstrip()

    def prompt(self, question: str, candidates) -> str:
        """The user prompt: the question and the numbered candidate list."""
        m = min(self.select or self.config.k, len(candidates))
        rows = [f"{i}. {c.breadcrumb} :: {self._snippet(c)}" for i, c in enumerate(candidates, start=1)]
        return (f"Question: {question}\n\nCandidate sections (number. breadcrumb :: start of text):\n"
                + "\n".join(rows)
                + f"\n\nReturn the numbers of the {m} most relevant section{'s' if m != 1 else ''}, best first.")

    def rerank(self, question: str, candidates) -> list:
        self.last_notes = []
        if not candidates:
            return []
        try:
            res = self._generate(self.prompt(question, candidates), system=_RERANK_SYSTEM, schema=_RERANK_SCHEMA,
                                 temperature=0.0)
            reply = res.data
        except LLMError as e:
            if e.reply is None:
                return self._fallback(candidates, f"Gemini re-ranking failed ({e}); kept stage-1 order")
            reply = e.reply  # not JSON as a whole: look for the JSON inside it
        chosen, notes = parse_ranking(reply, len(candidates))
        self.last_notes += [f"Gemini re-ranker: {n}" for n in notes]
        if not chosen:
            return self._fallback(candidates, "Gemini re-ranker reply was unusable; kept stage-1 order")
        choice = {i: r for r, i in enumerate(chosen, start=1)}  # candidate position -> model's rank
        rest = [i for i in range(len(candidates)) if i not in choice]
        n = len(candidates)
        out = []
        for pos, i in enumerate(chosen + rest):
            feats = {"gemini_choice": choice[i]} if i in choice else {}
            out.append(replace(candidates[i], stage2_score=round(1.0 - pos / n, 4), features=feats))
        return out

    def _fallback(self, candidates, note: str) -> list:
        self.last_notes.append(note)
        return [replace(c, stage2_score=c.stage1_score, features={}) for c in candidates]


# --------------------------------------------------------------------------- synthesis

NO_ANSWER = "The provided sections do not contain the answer."

_SYNTH_SYSTEM = f"""You answer questions about documents using ONLY the sections given inside <section> blocks.
Each block names its document, section id, breadcrumb (its place in the document) and source line range.
Rules:
- Use only facts stated in the sections; do not use outside knowledge. If you compute something, show
  the figures you used and where they come from.
- If the sections do not contain the answer, say exactly: "{NO_ANSWER}" and then say what is missing.
- End with a line "Sources:" followed by one line per section you used, written
  "- <breadcrumb> (ID: <section id>)", copying the breadcrumb and id from the block."""

_IMAGES_RULE = """- After the sections, the prompt lists the images they contain. To show one that directly
  illustrates the answer, write its [SHOW: <file> | <label>] marker on its own line (see
  ppkit.image_markers); never name an image that is not listed."""

_SOURCE_LINE = re.compile(r"^\s*(?:[-*•]|\d+[.)])?\s*(?P<bc>.*?)\s*\(\s*(?:ID|Id|id|node|Node)?\s*[:#]?\s*"
                          r"(?:(?P<doc>[^()#:]+)#)?(?P<id>\d{1,4})\s*\)\s*\.?\s*$")
# "Sources:", "**Sources:**", "## Sources" (a colon, or nothing else on the line); group 2: text after the colon
_HEADER = re.compile(r"^\s*[*_#]*\s*(sources?|images?)\s*[*_]*\s*(?::\s*[*_]*\s*(.*)|[*_]*\s*)$", re.I)


def parse_sources(text: str, sections=()) -> list[dict]:
    """The sources cited under the last ``Sources:`` line of an answer.

    Args:
        text: the answer.
        sections: the :class:`ppkit.retrieve.Section` objects sent; a cited id is matched
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
        doc_hint = (m.group("doc") or (bc.split(" > ", 1)[0] if bc else "")).strip()
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


class GeminiSynthesizer(_GeminiPart):
    """A grounded answer by Gemini from the retrieved sections, citing them under ``Sources:``.

    Args:
        config: a :class:`ppkit.Config`.
        client: a :class:`ppkit.llm.GeminiClient` (default: made from ``config`` on first use).

    ``synthesize`` returns ``(text, info)``; ``info`` has ``sources`` (the parsed citations,
    see :func:`parse_sources`), ``answered`` (False when the model said the sections do not
    contain the answer), ``images`` (those it chose), token counts and ``notes`` (e.g. a
    cited id that was not sent).

    Raises:
        LLMError: the call failed after its retries (no answer is invented).
    """

    name = "gemini"
    role = "synthesize"

    def __repr__(self) -> str:
        return f"GeminiSynthesizer(model={self.config.gemini_model!r})"

    def system(self, sections=()) -> str:
        """The system instruction (with the image rule when a section has images it can show)."""
        from .image_markers import image_catalogue

        if image_catalogue(sections):
            return _SYNTH_SYSTEM + "\n" + _IMAGES_RULE
        return _SYNTH_SYSTEM

    def prompt(self, question: str, sections) -> str:
        """The user prompt: the sections in XML-delimited blocks, then the question."""
        blocks = []
        for s in sections:
            attrs = (f'id="{s.node_id}" doc="{html.escape(s.doc)}" breadcrumb="{html.escape(s.breadcrumb)}" '
                     f'lines="{s.line_start}-{s.line_end}"' + (' trimmed="true"' if s.trimmed else ""))
            body = s.text.replace("</section>", "&lt;/section&gt;")  # a block cannot be closed from inside
            blocks.append(f"<section {attrs}>\n{body}\n</section>")
        from .image_markers import image_catalogue, marker_instructions

        images = f"\n\n{marker_instructions(sections)}" if image_catalogue(sections) else ""
        return "<sections>\n" + "\n".join(blocks) + f"\n</sections>{images}\n\nQuestion: {question}"

    def synthesize(self, question: str, sections) -> tuple[str, dict]:
        self.last_notes = []
        from .image_markers import parse_markers

        res = self._generate(self.prompt(question, sections), system=self.system(sections), temperature=0.0)
        # [SHOW: file | label] markers are checked against the sections' images and taken out of the text
        shown = parse_markers(res.text.strip(), sections)
        text = shown.text
        sources = parse_sources(text, sections)
        notes = list(shown.notes) + [f"cited {c['breadcrumb'] or c['node_id']} (ID {c['node_id']}), which was not among the sections sent"
                 for c in sources if not c["in_context"]]
        if not sources and NO_ANSWER not in text:
            notes.append("the answer cites no sources")
        self.last_notes = notes
        info = {"model": res.model, "sources": sources, "answered": NO_ANSWER not in text,
                "images": shown.images, "tokens_in": res.tokens_in, "tokens_out": res.tokens_out,
                "cached": res.cached, "sections_sent": len(sections),
                "context_chars": sum(len(s.text) for s in sections), "notes": notes}
        return text, info
