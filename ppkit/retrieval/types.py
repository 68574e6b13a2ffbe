"""The shapes that pass between retrieval's stages.

:class:`Candidate` (a section in the funnel, with its stage-1 and stage-2 scores),
:class:`Section` (a pointer into the source plus the text sent to the synthesizer) and
:class:`Retrieval` (both, plus a trace). ``Retrieval.run()`` gives the ranx/BEIR shape
``{section_id: score}``; section ids are ``"doc#node"`` (:func:`section_id`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..documents.tree import Image

__all__ = ["Candidate", "Section", "Retrieval", "section_id"]


def section_id(doc: str, node_id: str) -> str:
    """The id of a section in runs and qrels: ``"AMD#0066"``."""
    return f"{doc}#{node_id}"


@dataclass(frozen=True)
class Candidate:
    """A section that stage 1 recalled."""

    doc: str
    node_id: str
    breadcrumb: str
    stage1_score: float  # best chunk similarity
    stage1_rank: int  # 1-based, by best chunk
    chunk_hits: int  # recalled chunks of this section
    chunk_scores: tuple[float, ...]  # their similarities, best first
    line_start: int
    line_end: int
    snippet: str  # first characters of the section's text (after the heading)
    text: str = field(default="", repr=False)  # the section's full unit text (for re-rankers)
    stage2_score: float | None = None
    stage2_rank: int | None = None
    features: dict = field(default_factory=dict, repr=False)
    recall: dict = field(default_factory=dict, repr=False)  # stage-1 mode, rank in each list, fused score

    @property
    def section_id(self) -> str:
        return section_id(self.doc, self.node_id)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("text")
        d["section_id"] = self.section_id
        return d


@dataclass(frozen=True)
class Section:
    """A retrieved section: a pointer into the source and the text sent on."""

    doc: str
    node_id: str
    breadcrumb: str
    line_start: int  # the section's first line (its heading)
    line_end: int  # the section's last line
    text: str  # what is sent to the synthesizer: rendered (HTML tables as rows), trimmed to the budget
    rank: int
    score: float
    sent_ranges: tuple[tuple[int, int], ...] = ()  # line ranges actually in `text`
    chars_total: int = 0  # characters of the whole section
    trimmed: bool = False
    images: tuple[Image, ...] = ()
    line_numbers: tuple[int, ...] = field(default=(), repr=False)  # source line of each line of `text` (0: a cut)

    @property
    def section_id(self) -> str:
        return section_id(self.doc, self.node_id)

    def contains_line(self, line: int) -> bool:
        """Whether source line ``line`` is in the text that was sent."""
        return any(a <= line <= b for a, b in self.sent_ranges)

    def __repr__(self) -> str:
        trim = f", trimmed from {self.chars_total}" if self.trimmed else ""
        return (f"Section(#{self.rank} {self.doc}#{self.node_id} lines {self.line_start}-{self.line_end}, "
                f"{len(self.text)} chars{trim}: {self.breadcrumb!r})")

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("line_numbers")
        d["section_id"] = self.section_id
        return d


@dataclass(frozen=True)
class Retrieval:
    """The result of :func:`retrieve`."""

    question: str
    sections: list[Section]
    candidates: list[Candidate]  # in stage-2 order
    trace: dict

    def run(self) -> dict[str, float]:
        """``{section_id: stage-2 score}`` over all candidates (the ranx/BEIR run shape for one query)."""
        return {c.section_id: float(c.stage2_score if c.stage2_score is not None else c.stage1_score)
                for c in self.candidates}

    @property
    def context_chars(self) -> int:
        return sum(len(s.text) for s in self.sections)

    def __repr__(self) -> str:
        lines = [f"Retrieval({self.question!r}: {len(self.candidates)} candidates -> {len(self.sections)} sections, "
                 f"{self.context_chars} chars)"]
        lines += [f"  {s.rank}. {s.doc}#{s.node_id} [{s.line_start}-{s.line_end}] {s.breadcrumb}" for s in self.sections]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"question": self.question, "sections": [s.to_dict() for s in self.sections],
                "candidates": [c.to_dict() for c in self.candidates], "trace": self.trace}
