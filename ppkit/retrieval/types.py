"""The shapes that pass between retrieval's stages.

:class:`Candidate` (a section in the funnel, with its stage-1 and stage-2 scores),
:class:`Section` (a pointer into the source plus the text sent to the synthesizer) and
:class:`Retrieval` (both, plus a trace). ``Retrieval.run()`` gives the ranx/BEIR shape
``{section_id: score}``; section ids are ``"doc#node"`` (:func:`section_id`).
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field, fields, is_dataclass

from ..core.ids import section_id
from ..documents.tree import Image

__all__ = ["Candidate", "ImageLink", "Section", "Retrieval", "Trace", "RecallInfo", "section_id", "pages_label",
           "pages_line"]


def pages_label(pages) -> str:
    """Pages for a citation, runs joined: ``(5, 6, 7, 9)`` -> ``"p.5-7, 9"``; ``""`` for none.

    Pages are 1-based PDF page numbers (the page a PDF viewer shows as 1 is page 1; FinanceBench's
    ``evidence_page_num`` is zero-based, so its 4 is page 5 here).

    >>> pages_label([5, 6, 7, 9])
    'p.5-7, 9'
    """
    runs: list[list[int]] = []
    for p in sorted(set(pages)):
        if runs and p == runs[-1][1] + 1:
            runs[-1][1] = p
        else:
            runs.append([p, p])
    return "p." + ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in runs) if runs else ""


def pages_line(sections) -> str:
    """The line an answer ends with to cite PDF pages: ``"Pages: AMD p.5-6; 3M_2018_10K p.18"`` (the
    pages of the lines sent, per section, in order; ``""`` when no section has a page map)."""
    cites = [s.cite() for s in sections if s.pages]
    return "Pages: " + "; ".join(dict.fromkeys(cites)) if cites else ""


@dataclass(frozen=True)
class Candidate:
    """A section that stage 1 recalled."""

    doc: str
    node_id: str
    breadcrumb: str
    stage1_score: float  # best chunk similarity
    stage1_rank: int  # 1-based stage-1 order (by best chunk; with stage 1 per filing, the round-robin merge)
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
        """The fields but ``text`` (what ``dataclasses.asdict`` gives, copied as it copies), and ``section_id``.
        Written out: ``asdict`` deep-copies the section text only to drop it, a tenth of an answer's time."""
        d = {f: _plain(getattr(self, f)) for f in _CANDIDATE_FIELDS}
        d["section_id"] = self.section_id
        return d


_CANDIDATE_FIELDS = tuple(f.name for f in fields(Candidate) if f.name != "text")
_ATOMS = (str, int, float, bool, type(None))


def _plain(value):
    """``value`` copied as ``dataclasses.asdict`` copies a field's value: dicts, lists and tuples rebuilt,
    plain scalars as they are, anything else through ``asdict`` (a dataclass) or ``copy.deepcopy``."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:
        return {_plain(k): _plain(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return kind(_plain(v) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return copy.deepcopy(value)


@dataclass(frozen=True)
class ImageLink:
    """An image offered with a section by the image channel (:mod:`ppkit.retrieval.image_channel`).

    ``via`` says how it was reached, strongest first: ``anchor`` (the question names its figure
    or table number), ``in section`` (linked from the section's own lines, sent or trimmed away),
    ``discussed in section`` (the section's text names its figure: "as shown in Figure 5"),
    ``recalled`` (its record - caption and the sentences that discuss it - matched the question).
    """

    image: Image
    node_id: str  # the node whose text links the image
    via: tuple[str, ...]
    recall_score: float = 0.0  # the record's match when recalled

    def __repr__(self) -> str:
        return f"ImageLink({self.image.path} via {'/'.join(self.via)}: {self.image.label[:40]!r})"


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
    image_links: tuple[ImageLink, ...] = field(default=(), repr=False)  # the image channel's candidates
    # 1-based PDF pages of the non-blank lines in `text` (not of the whole section); () without a page map
    pages: tuple[int, ...] = ()
    page_lines: tuple[tuple[int, int, int], ...] = field(default=(), repr=False)  # (page, first, last line) sent
    # the primary statements it holds as its document's tree shows them ("balance", ...; () when not read:
    # :func:`ppkit.retrieval.metric_statements.with_statements`)
    statements: tuple[str, ...] = field(default=(), repr=False)

    def page_of(self, line: int) -> int | None:
        """The 1-based PDF page of a source line of this section (None without a page map)."""
        return next((p for p, a, b in self.page_lines if a <= line <= b), None)

    def cite(self) -> str:
        """``"AMD p.5-6"`` (the pages of the lines sent), or just the document without a page map."""
        return f"{self.doc} {pages_label(self.pages)}".strip()

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
        d.pop("image_links")
        d.pop("page_lines")
        d.pop("statements")
        d["section_id"] = self.section_id
        return d


@dataclass(frozen=True)
class RecallInfo:
    """What stage 1 did: the recall mode, how many chunks and sections it found, per-list sizes, timings."""

    retrieval: str  # one of ppkit.core.config.RETRIEVAL_MODES ("dense", "hybrid+static", ...)
    chunks_recalled: int  # distinct chunks over all lists
    sections_recalled: int  # distinct sections among them
    candidates: int  # sections kept (the first ``candidates``)
    lists: dict[str, dict[str, int]]  # list name -> {"chunks": n, "sections": n}
    rrf_k: int | None  # the RRF constant (hybrid only)
    seconds: dict[str, float]  # step -> seconds


@dataclass(frozen=True)
class Trace:
    """How one retrieval went: filters, stage sizes, timings, trims and model calls.

    ``to_dict()`` is the JSON form (``ppkit ask --json``, notebooks); ``decomposition`` is set
    for comparison questions (one sub-retrieval per company, see
    :func:`ppkit.retrieval.retrieve.retrieve_decomposed`).
    """

    k: int
    search_text: str  # the text searched with
    docs_filter: list[str] | None  # the documents searched (None: all)
    filter_source: str  # "question" | "caller" | "none"
    recall: int  # stage-1 chunks
    reranker: str
    filters: dict | None  # the analyzer's QueryFilters as a dict
    scope: dict | None  # doc -> None | [10-K Items]
    embedder: str
    retrieval: str  # stage-1 mode
    chunks_recalled: int
    sections_recalled: int
    candidates: int
    lists: dict[str, dict[str, int]]
    rrf_k: int | None
    seconds: dict  # step -> seconds (a comparison: "sub_queries" -> their totals)
    statements_added: list[str]  # section ids added by statement recall
    trimmed: list[dict]  # {"section_id", "chars_total", "chars_sent"} of trimmed sections
    context_chars: int
    model_calls: list[dict]
    notes: list[str]
    decomposition: list[dict] | None = None  # comparison questions: {"doc", "search_text", "scope", "sections"}
    # online stages that failed and fell back to their offline twins: {"stage", "used", "reason"}
    fallbacks: list[dict] = field(default_factory=list)

    @classmethod
    def blank(cls, **fields_) -> Trace:
        """A trace with empty counts, for a Retrieval made by hand (tests, notebooks): ``Trace.blank(k=3)``."""
        base = dict(k=0, search_text="", docs_filter=None, filter_source="none", recall=0, reranker="", filters=None,
                    scope=None, embedder="", retrieval="dense", chunks_recalled=0, sections_recalled=0, candidates=0,
                    lists={}, rrf_k=None, seconds={}, statements_added=[], trimmed=[], context_chars=0,
                    model_calls=[], notes=[])
        return cls(**{**base, **fields_})

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(Trace)}
        if d["decomposition"] is None:
            del d["decomposition"]
        return d


@dataclass(frozen=True)
class Retrieval:
    """The result of :func:`retrieve`."""

    question: str
    sections: list[Section]
    candidates: list[Candidate]  # in stage-2 order
    trace: Trace

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
                "candidates": [c.to_dict() for c in self.candidates], "trace": self.trace.to_dict()}
