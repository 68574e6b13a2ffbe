"""The shapes a comparison hands across layers: sections, counterparts, pairs, the fit check, the result.

``Comparison.to_dict()`` is the frozen JSON of ``ppkit compare --json`` and ``POST /v1/compare``:
``{"a", "b", "criteria", "mode", "fit", "pairs": [{"a": {"node", "title", "breadcrumb", "lines": [first, last]},
"b": [{"node", "title", "breadcrumb", "lines", "score", "reason", "diff", ...}, ...]}, ...], "unmatched_b",
"timings", "notes"}``; ``a.lines[0]`` is the heading's line, ``b`` is ordered best first and an empty ``b``
means no counterpart.

This module holds data only: the alignment is :mod:`ppkit.compare.align`, the run
:mod:`ppkit.compare.comparison`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Protocol

from .diff import PairDiff

__all__ = ["SectionRef", "Rating", "Counterpart", "Pair", "FitCheck", "Comparison", "Searcher", "Rater",
           "SCORE_LEGEND"]

# what a counterpart's score means, for every view that shows it (report, notebook, web page)
SCORE_LEGEND = ("score: how sure the alignment is that the section of B does the job of the section of A, 0 to 1 "
                "(its share of the alignment's belief among all of B's sections, so the counterparts of one section "
                "sum to at most 1; for a heading with no text of its own, the share of its sections whose "
                "counterparts lie under its counterpart)")


class Searcher(Protocol):
    """Retrieval in one document: ``search(query, doc, k, retrieval=None)`` -> ``[(node_id, score), ...]`` best
    first; ``retrieval`` names the stage-1 recall (``"dense"``, ``"bm25"``, ``"hybrid"``; ``None``: the index's)."""

    def __call__(self, query: str, doc: str, k: int, retrieval: str | None = None) -> list[tuple[str, float]]: ...


@dataclass(frozen=True)
class SectionRef:
    """A section of one document: node id, title, breadcrumb and line range (heading line to last line of its own
    text)."""

    doc: str
    node: str
    title: str
    breadcrumb: str
    line_start: int
    line_end: int
    excerpt: str = ""  # the head of its text (set on the sections of pairs)

    def to_dict(self) -> dict:
        d = {"node": self.node, "title": self.title, "breadcrumb": self.breadcrumb,
             "lines": [self.line_start, self.line_end]}
        return {**d, "excerpt": self.excerpt} if self.excerpt else d


@dataclass(frozen=True)
class Rating:
    """The reference's rating of a pair (online): level, the pair's role, risk direction, analysis."""

    level: str  # significant | moderate | aligned | unrelated
    role: str = ""
    risk: str = ""
    analysis: str = ""


@dataclass(frozen=True)
class Counterpart:
    """A section of B that does the job of a section of A: the alignment's score, the reason in words, what differs."""

    section: SectionRef
    score: float  # 0..1, see SCORE_LEGEND
    diff: PairDiff
    reason: str = ""  # "shared terms: Swing Line Loan; same title; Article 2 <-> ARTICLE 2 (7 of 24 sections)"
    rating: Rating | None = None

    def to_dict(self) -> dict:
        d = {**self.section.to_dict(), "score": round(self.score, 4), "reason": self.reason,
             "diff": self.diff.to_dict()}
        if self.rating is not None:
            d["rating"] = asdict(self.rating)
        return d


@dataclass(frozen=True)
class Pair:
    """A section of A and its counterparts in B, best first (none: "no counterpart"); ``container``: a heading with
    no text of its own, paired through its children."""

    a: SectionRef
    b: tuple[Counterpart, ...]
    container: bool = False

    def to_dict(self) -> dict:
        d = {"a": self.a.to_dict(), "b": [c.to_dict() for c in self.b]}
        return {**d, "container": True} if self.container else d


@dataclass(frozen=True)
class FitCheck:
    """Whether the criteria fit both documents, and the sections that show it."""

    fits: bool
    reason: str
    a_sections: tuple[str, ...] = ()  # titles of A's sections that match the criteria
    b_sections: tuple[str, ...] = ()
    online: bool = False


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`ppkit.compare.comparison.compare_documents`; ``to_json()`` is what
    ``ppkit compare --json`` prints."""

    a: str
    b: str
    criteria: str | None
    pairs: tuple[Pair, ...]
    # whole documents: every section of B no pair holds;
    # criteria: B's sections retrieved for the criteria that no pair holds
    unmatched_b: tuple[SectionRef, ...]
    fit: FitCheck | None = None
    timings: dict = field(default_factory=dict)  # phase -> seconds
    notes: tuple[str, ...] = ()  # fallbacks and what was skipped

    @property
    def mode(self) -> str:
        return "whole" if self.criteria is None else "criteria"

    @property
    def sections(self) -> tuple[Pair, ...]:
        """The pairs of sections with text of their own (containers left out)."""
        return tuple(p for p in self.pairs if not p.container)

    @property
    def no_counterpart(self) -> tuple[SectionRef, ...]:
        """A's sections (containers left out) that have no counterpart in B."""
        return tuple(p.a for p in self.sections if not p.b)

    def __repr__(self) -> str:
        matched = sum(1 for p in self.sections if p.b)
        return (f"Comparison({self.a!r} vs {self.b!r}, {self.mode}: {len(self.sections)} sections of A, {matched} "
                f"matched, {len(self.unmatched_b)} of B unmatched)")

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "criteria": self.criteria, "mode": self.mode,
                "fit": asdict(self.fit) if self.fit else None, "pairs": [p.to_dict() for p in self.pairs],
                "unmatched_b": [s.to_dict() for s in self.unmatched_b], "timings": self.timings,
                "notes": list(self.notes)}

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kw)


class Rater(Protocol):
    """The online part: a fit check and a rating per pair (the Gemini rater implements it)."""

    def fit(self, criteria: str, a: str, a_titles: list[str], b: str, b_titles: list[str]) -> FitCheck | None: ...

    def rate(self, criteria: str | None, a: SectionRef, a_text: str, b: SectionRef, b_text: str) -> Rating | None: ...
