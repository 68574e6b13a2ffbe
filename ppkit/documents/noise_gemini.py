"""The Gemini noise filter: one JSON-schema call per document over its skeleton tree.

The online twin of :class:`ppkit.documents.noise.RuleNoiseFilter` (same ``decide``
interface): the model sees one line per heading (node id, level, title, the start of its
own text) and names the noise sections; a reply it cannot use falls back to the rules.
"""

from __future__ import annotations

from ..core.config import Config
from ..core.ids import ROOT_ID
from ..llm.client import LLMError, fall_back
from ..llm.fence import DATA_RULE, block, escape
from ..llm.parts import GeminiPart
from .noise import CATEGORIES, NoiseDecision, RuleNoiseFilter

__all__ = ["GeminiNoiseFilter"]

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


class GeminiNoiseFilter(GeminiPart):
    """Noise filter by Gemini: one JSON-schema call per document over its skeleton tree.

    Args:
        config: a :class:`ppkit.Config` (model, endpoint).
        client: a :class:`ppkit.llm.client.GeminiClient` (default: made from ``config`` on first use).
        preview_chars: characters of each section's own text shown after its title.

    ``decide`` returns decisions with ``filter="gemini"``; ids or categories in the reply
    that do not exist are ignored and noted in ``last_notes`` (and ``notes[doc]``). A reply
    that is not JSON, or a call that failed after its retries, falls back to the offline title
    rules (decisions then say ``rule`` or ``fuzzy``), also noted (and recorded by
    :func:`ppkit.llm.client.fall_back`).
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
            row = f"{n.node_id} | L{n.level} | {'  ' * (n.depth - 1)}{' '.join(n.title.split())}"
            if lines is not None and self.preview_chars > 0:
                own = " ".join(" ".join(lines[n.line_start : n.text_end]).split())  # text below the heading
                if own:
                    row += f" | {own[: self.preview_chars]}"
            out.append(row)
        return "\n".join(out)

    def system(self) -> str:
        """The system instruction (the six categories and the rules)."""
        cats = "\n".join(f"- {c}: {label}" for c, label in CATEGORIES.items())
        return _NOISE_SYSTEM.format(categories=cats) + "\n" + DATA_RULE

    def prompt(self, tree, lines: list[str] | None = None) -> str:
        """The user prompt for one document (what notebook 03 shows)."""
        return (f"Document: {' '.join(escape(tree.doc).split())}\n"
                "Skeleton (node id | level | title | start of its own text):\n"
                + block("skeleton", self.skeleton(tree, lines)))

    def decide(self, tree, lines: list[str] | None = None) -> dict[str, NoiseDecision]:
        """Decisions for the nodes the model calls noise (others are kept); a failed call gives the
        offline title rules' decisions, noted and recorded as a fallback."""
        notes: list[str] = []
        self.last_notes = self.notes[tree.doc] = notes
        if not tree.headings():
            return {}
        try:
            res = self._generate(self.prompt(tree, lines), system=self.system(), schema=_NOISE_SCHEMA,
                                 temperature=0.0)
        except LLMError as e:
            if e.reply is None:  # the call failed: the offline twin decides, and the fallback is recorded
                notes.append(fall_back("noise filter", f"{tree.doc}: {e}", "title rules"))
                return RuleNoiseFilter(None).decide(tree, lines)
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
            if nid not in tree.nodes or nid == ROOT_ID:
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
