"""The Gemini re-ranker: the model picks from the numbered candidate breadcrumbs.

The online twin of :class:`ppkit.retrieval.rerank.StructuralReranker` (same ``rerank``
interface): the model sees the question and the candidates' breadcrumbs with
150-character snippets, as the reference system does (50 candidates there), and returns the ids it chose;
an unusable reply keeps stage-1 order and says so in ``last_notes``. With stage 1 per filing
(:func:`ppkit.retrieval.retrieve.retrieve`, a scope of 2-4 filings) the list holds each filing's candidates, so
the prompt grows with them: ``len(reranker.prompt(q, retrieval.candidates))`` roughly doubles for two filings
and triples for three.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from ..core.config import Config
from ..core.ids import ROOT_ID
from ..llm.client import LLMError, fall_back, parse_json
from ..llm.fence import DATA_RULE, block
from ..llm.parts import GeminiPart

__all__ = ["GeminiReranker", "parse_ranking"]

# --------------------------------------------------------------------------- rerank

_RERANK_SYSTEM = """You select the document sections that answer a question.
You are given the question and a numbered list of candidate sections: each has its breadcrumb
(document > section path) and the first characters of its text. Choose the sections most likely to
contain the information needed to answer the question, most relevant first. Prefer the section that
holds the figures or statements themselves over sections that only mention them.
Return JSON: {"ids": [numbers from the list]}.
""" + DATA_RULE

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


class GeminiReranker(GeminiPart):
    """Re-ranking by Gemini over the numbered breadcrumb list (+ snippets), as the reference does.

    Args:
        config: a :class:`ppkit.Config`; ``config.k`` is how many sections the model is asked to pick
            (unless ``select`` is given).
        client: a :class:`ppkit.llm.client.GeminiClient` (default: made from ``config`` on first use).
        snippet_chars: characters of each section's text shown after its breadcrumb.
        select: how many sections to ask for.

    The chosen candidates come first in the model's order, then the others in stage-1
    order; ``stage2_score`` falls from 1.0 by rank, and ``features["gemini_choice"]`` is the
    model's rank for the chosen ones. A bad reply or a failed call hands the candidates to
    ``fallback`` (the offline re-ranker; the pipeline passes the structural one), or keeps
    stage-1 order without one, and says so in ``last_notes`` (retrieve copies them into the
    trace) and in the run's fallbacks (:func:`ppkit.llm.client.fall_back`).
    """

    name = "gemini"
    uses_search_text = False  # the model reads the question as asked
    role = "rerank"

    def __init__(self, config: Config | None = None, client=None, snippet_chars: int = 150, *,
                 select: int | None = None, fallback=None):
        super().__init__(config, client)
        self.snippet_chars = snippet_chars
        self.select = select
        self.fallback = fallback  # the offline re-ranker used when the call fails or the reply is unusable

    def __repr__(self) -> str:
        return f"GeminiReranker(model={self.config.gemini_model!r}, snippet_chars={self.snippet_chars})"

    def _snippet(self, c) -> str:
        """The first ``snippet_chars`` of the section's text below its heading, HTML table tags removed
        (LlamaParse writes tables as HTML; 150 characters of ``<table> <thead> <tr>`` say nothing)."""
        if not c.text:
            return c.snippet[: self.snippet_chars]
        body = c.text.split("\n", 1)[1] if "\n" in c.text and c.node_id != ROOT_ID else c.text
        return " ".join(_TAG.sub(" ", body).split())[: self.snippet_chars].rstrip()

    def prompt(self, question: str, candidates) -> str:
        """The user prompt: the question and the numbered candidate list."""
        m = min(self.select or self.config.k, len(candidates))
        # one line per candidate: breadcrumbs and snippets hold no newline, so no row can be forged
        rows = [f"{i}. {' '.join(c.breadcrumb.split())} :: {self._snippet(c)}" for i, c in enumerate(candidates, start=1)]
        return (block("question", question) + "\n\nCandidate sections (number. breadcrumb :: start of text):\n"
                + block("candidates", "\n".join(rows))
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
                return self._fallback(question, candidates, f"the call failed: {e}")
            reply = e.reply  # not JSON as a whole: look for the JSON inside it
        chosen, notes = parse_ranking(reply, len(candidates))
        self.last_notes += [f"Gemini re-ranker: {n}" for n in notes]
        if not chosen:
            return self._fallback(question, candidates, "the reply was unusable")
        choice = {i: r for r, i in enumerate(chosen, start=1)}  # candidate position -> model's rank
        rest = [i for i in range(len(candidates)) if i not in choice]
        n = len(candidates)
        out = []
        for pos, i in enumerate(chosen + rest):
            feats = {"gemini_choice": choice[i]} if i in choice else {}
            out.append(replace(candidates[i], stage2_score=round(1.0 - pos / n, 4), features=feats))
        return out

    def _fallback(self, question: str, candidates, why: str) -> list:
        """The offline twin's order (``fallback``), else stage-1 order; recorded and noted either way."""
        if self.fallback is not None:
            self.last_notes.append(fall_back("re-ranking", f"Gemini re-ranking: {why}", self.fallback.name + " re-ranker"))
            ranked = self.fallback.rerank(question, candidates)
            self.last_notes += list(getattr(self.fallback, "last_notes", []))
            return ranked
        self.last_notes.append(fall_back("re-ranking", f"Gemini re-ranking: {why}", "stage-1 order"))
        return [replace(c, stage2_score=c.stage1_score, features={}) for c in candidates]
