"""The online twin of the comparison's judgement: Gemini checks the criteria fit and rates each pair.

As the reference system's DocComparator does, with its fields: a pair is rated ``significant`` (🔴),
``moderate`` (🟡), ``aligned`` (🟢) or ``unrelated``, with the role the two sections play, the risk
direction (which side the difference favours) and a short analysis, written as a legal-counsel or
research reviewer. Every string taken from a document (titles, breadcrumbs, section text) or from the
user (the criteria) is fenced (:mod:`ppkit.llm.fence`). A failed call or an unusable reply returns
``None`` and records the fallback (:func:`ppkit.llm.client.fall_back`); the comparison then keeps its
offline fit check and reports the pair without a rating.

It does not choose sections or compute differences (:mod:`ppkit.compare.align`).
"""

from __future__ import annotations

import html

from ..llm.client import LLMError, fall_back
from ..llm.fence import DATA_RULE, block, escape
from ..llm.parts import GeminiPart
from .types import FitCheck, Rating, SectionRef

__all__ = ["GeminiCompareRater", "LEVELS"]

LEVELS = ("significant", "moderate", "aligned", "unrelated")
_TEXT_CHARS = 6000  # characters of each section's text sent for a rating

_FIT_SYSTEM = """You check whether two documents can be compared on the given criteria.
You are given the criteria and, for each document, the titles of its sections that retrieval found for
them. Answer whether both documents hold sections that address the criteria.
Return JSON: {"fits": true|false, "reason": "one sentence"}.
""" + DATA_RULE

_FIT_SCHEMA = {"type": "object", "properties": {"fits": {"type": "boolean"}, "reason": {"type": "string"}},
               "required": ["fits", "reason"]}

_RATE_SYSTEM = """You compare a section of document A with a section of document B, as legal counsel
(for agreements) or as a research reviewer (for papers). Judge how they differ on the criteria:
"significant" (a material discrepancy), "moderate" (a difference in detail or scope), "aligned" (they
say the same), or "unrelated" (the sections do not address the same matter). Name the role the sections
play, the risk direction (which party or side the difference favours; "" when none), and write a
short analysis (at most four sentences) citing what each section says.
Return JSON: {"level": ..., "role": ..., "risk": ..., "analysis": ...}.
""" + DATA_RULE

_RATE_SCHEMA = {"type": "object", "properties": {
    "level": {"type": "string", "enum": list(LEVELS)}, "role": {"type": "string"},
    "risk": {"type": "string"}, "analysis": {"type": "string"}}, "required": ["level", "role", "risk", "analysis"]}


def _section(tag_doc: str, ref: SectionRef, text: str) -> str:
    attrs = f'doc="{html.escape(tag_doc)}" breadcrumb="{html.escape(ref.breadcrumb)}"'
    return f"<section {attrs}>\n{escape(text[:_TEXT_CHARS])}\n</section>"


class GeminiCompareRater(GeminiPart):
    """Gemini's fit check and pair ratings (the :class:`ppkit.compare.types.Rater` of the online path)."""

    role = "compare"

    def fit_prompt(self, criteria: str, a: str, a_titles: list[str], b: str, b_titles: list[str]) -> str:
        """The fit check's prompt: both documents' retrieved titles in one fenced block, then the criteria."""
        lines = [f"Document A ({a}):"] + [f"- {t}" for t in a_titles]
        lines += [f"Document B ({b}):"] + [f"- {t}" for t in b_titles]
        return block("documents", "\n".join(lines)) + "\n\n" + block("question", f"Criteria: {criteria}")

    def rate_prompt(self, criteria: str | None, a: SectionRef, a_text: str, b: SectionRef, b_text: str) -> str:
        """The rating prompt: the two sections fenced in ``<sections>``, then the criteria."""
        what = f"Criteria: {criteria}" if criteria else "Criteria: everything the sections say"
        return ("<sections>\n" + _section("A", a, a_text) + "\n" + _section("B", b, b_text) + "\n</sections>\n\n"
                + block("question", what))

    def _ask(self, prompt: str, system: str, schema: dict, stage: str, used: str) -> dict | None:
        """The parsed JSON reply, or ``None`` with the fallback recorded when the call fails."""
        try:
            data = self._generate(prompt, system=system, schema=schema).data
        except LLMError as e:
            self.last_notes.append(fall_back(stage, e, used))
            return None
        return data if isinstance(data, dict) else {}

    def fit(self, criteria: str, a: str, a_titles: list[str], b: str, b_titles: list[str]) -> FitCheck | None:
        """Gemini's fit check, or ``None`` (and a recorded fallback) when the call or its reply fails."""
        data = self._ask(self.fit_prompt(criteria, a, a_titles, b, b_titles), _FIT_SYSTEM, _FIT_SCHEMA,
                         "comparison fit check", "term rule")
        if data is None:
            return None
        if not isinstance(data.get("fits"), bool):
            self.last_notes.append(fall_back("comparison fit check", "the reply has no fits field", "term rule"))
            return None
        return FitCheck(data["fits"], str(data.get("reason", "")), tuple(a_titles), tuple(b_titles), online=True)

    def rate(self, criteria: str | None, a: SectionRef, a_text: str, b: SectionRef, b_text: str) -> Rating | None:
        """Gemini's rating of one pair, or ``None`` (and a recorded fallback) when the call or its reply fails."""
        data = self._ask(self.rate_prompt(criteria, a, a_text, b, b_text), _RATE_SYSTEM, _RATE_SCHEMA,
                         "comparison rating", "computed differences only")
        if data is None:
            return None
        level = str(data.get("level", "")).strip().casefold()
        if level not in LEVELS:
            self.last_notes.append(fall_back("comparison rating", f"unusable level {level!r}",
                                             "computed differences only"))
            return None
        return Rating(level, str(data.get("role", "")), str(data.get("risk", "")), str(data.get("analysis", "")))
