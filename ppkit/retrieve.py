"""Two-stage retrieval and pointer loading.

Stage 1 recalls the ``recall`` (200) chunks nearest to the question, then dedups
them by (doc, node id) in rank order to the first ``candidates`` (50) sections.
Stage 2 hands those sections (breadcrumb, snippet, stage-1 evidence) to a
re-ranker, which orders them; the top ``k`` become pointers, and each pointer's
**full** section text is read from the source Markdown (hash-checked), trimmed to
a per-section budget when it is larger (the trim is recorded).

Shapes: :class:`Candidate` (a section in the funnel), :class:`Section` (what the
synthesizer gets), :class:`Retrieval` (both plus a trace). ``Retrieval.run()``
gives the ranx/BEIR shape ``{section_id: score}``.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from .markup import render
from .tree import Image

__all__ = ["Candidate", "Section", "Retrieval", "retrieve", "recall_candidates", "make_candidate", "load_sections",
           "section_id"]


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


def _rendered(index, doc: str, a: int, b: int) -> list[tuple[int, str]]:
    """(source line, text) of lines a..b, HTML tables rendered as pipe rows (see ppkit.markup)."""
    return render(index.lines(doc)[a - 1 : b], a)


def _unit_text(index, doc: str, node_id: str) -> tuple[int, int, str]:
    a, b = index.units(doc)[node_id]
    return a, b, "\n".join(t for _, t in _rendered(index, doc, a, b))


def make_candidate(index, doc: str, node_id: str, chunk_scores, rank: int, *, chunk_hits: int | None = None,
                   snippet_chars: int = 150, **extra) -> Candidate:
    """A Candidate for section (doc, node_id): its unit's rendered text and snippet, and the
    similarities of its chunks (best first; the best is the stage-1 score)."""
    a, b, text = _unit_text(index, doc, node_id)
    body = text.split("\n", 1)[1] if "\n" in text and node_id != "0000" else text
    scores = tuple(sorted((float(x) for x in chunk_scores), reverse=True))
    return Candidate(doc, node_id, index.trees[doc][node_id].breadcrumb, scores[0], rank,
                     len(scores) if chunk_hits is None else chunk_hits, scores, a, b,
                     " ".join(body.split())[:snippet_chars], text, **extra)


def recall_candidates(index, question: str, *, docs: list[str] | None = None, recall: int = 200,
                      candidates: int = 50, query_vec: np.ndarray | None = None,
                      snippet_chars: int = 150) -> tuple[list[Candidate], dict]:
    """Stage 1: the top ``recall`` chunks, deduplicated to the first ``candidates`` sections.

    Returns (candidates in stage-1 order, trace info).
    """
    t0 = time.perf_counter()
    qv = index.embedder.embed_query(question) if query_vec is None else query_vec
    t_embed = time.perf_counter() - t0
    ids, scores = index.store.search(qv, recall, allowed_ids=index.chunk_ids(docs))
    t_search = time.perf_counter() - t0 - t_embed
    order: list[tuple[str, str]] = []  # (doc, node) in order of first appearance
    hits: dict[tuple[str, str], list[float]] = {}  # (doc, node) -> chunk scores, best first
    for cid, s in zip(ids, scores):
        c = index.chunk(int(cid))
        key = (c.doc, c.node_id)
        if key not in hits:
            hits[key] = []
            order.append(key)
        hits[key].append(float(s))
    out = [make_candidate(index, doc, node_id, hits[(doc, node_id)], rank, snippet_chars=snippet_chars)
           for rank, (doc, node_id) in enumerate(order[:candidates], start=1)]
    info = {"chunks_recalled": int(len(ids)), "sections_recalled": len(order), "candidates": len(out),
            "seconds": {"embed_query": round(t_embed, 4), "vector_search": round(t_search, 4)}}
    return out, info


def statement_candidates(index, question: str, present: list[Candidate], *, docs: list[str] | None,
                         query_vec: np.ndarray, snippet_chars: int = 150) -> list[Candidate]:
    """Structural recall: the primary financial statements that report what the question asks about.

    Dense recall handles tables badly (a statement is rows of numbers), so when a question asks
    for a concept that one of the primary statements reports (see :func:`ppkit.rerank.statements_asked`),
    those statement sections of the searched documents join the candidates if stage 1 missed them.
    Their stage-1 score is their best chunk's similarity; ``chunk_hits`` is 0.
    """
    from .rerank import statement_kind, statements_asked

    kinds = statements_asked(question)
    if not kinds:
        return []
    have = {(c.doc, c.node_id) for c in present}
    out = []
    for doc in (docs if docs is not None else index.docs):
        doc = index.resolve_doc(doc)
        tree = index.trees[doc]
        for node_id in index.units(doc):
            if (doc, node_id) in have or statement_kind(tree[node_id].title) not in kinds:
                continue
            chunks = index.chunks_of(doc, node_id)
            if not chunks:
                continue
            sims = index.store.vectors(np.asarray([c.chunk_id for c in chunks], dtype=np.int64)) @ query_vec
            out.append(make_candidate(index, doc, node_id, sims, len(present) + len(out) + 1, chunk_hits=0,
                                      snippet_chars=snippet_chars))
    return out


def _trim(index, doc: str, node_id: str, a: int, b: int, qv: np.ndarray | None,
          budget: int) -> tuple[list[tuple[int, str]], tuple, bool, int]:
    """The section's rendered text within ``budget`` characters: its heading plus its chunks most
    similar to the question, in document order, ``[…]`` marking each cut.

    Returns (numbered lines sent, line ranges sent, trimmed?, characters of the whole section).
    """
    full = _rendered(index, doc, a, b)
    full_chars = sum(len(t) + 1 for _, t in full) - 1
    if full_chars <= budget:
        return full, ((a, b),), False, full_chars
    chunks = index.chunks_of(doc, node_id)
    chosen: list = []
    used = len(full[0][1]) + 1
    if chunks and qv is not None:
        sims = index.store.vectors(np.asarray([c.chunk_id for c in chunks], dtype=np.int64)) @ qv
        for j in np.argsort(-sims):
            c = chunks[int(j)]
            size = len(c.body) + 6
            if used + size <= budget:
                chosen.append(c)
                used += size
    if not chosen:  # no chunk fits (or no chunk geometry): keep the head, line by line
        out, used = [], 0
        for ln, t in full:
            if used + len(t) + 1 > budget and out:
                break
            out.append((ln, t))
            used += len(t) + 1
        return out + [(0, "[…]")], ((a, out[-1][0]),), True, full_chars
    chosen.sort(key=lambda c: c.line_start)
    # merge overlapping line ranges (the heading line first), then render them from the source
    ranges: list[list[int]] = [[a, a]]
    for c in chosen:
        if c.line_start <= ranges[-1][1] + 1:
            ranges[-1][1] = max(ranges[-1][1], c.line_end)
        else:
            ranges.append([c.line_start, c.line_end])
    out: list[tuple[int, str]] = []
    for x, y in ranges:
        if out:
            out.append((0, "[…]"))
        out.extend(_rendered(index, doc, x, y))
    if y < b:
        out.append((0, "[…]"))
    return out, tuple((x, y) for x, y in ranges), True, full_chars


def load_sections(index, chosen: list[Candidate], *, budget: int, query_vec: np.ndarray | None = None) -> list[Section]:
    """Follow the pointers: read each chosen section from its (hash-checked) source."""
    out = []
    for rank, c in enumerate(chosen, start=1):
        a, b = index.units(c.doc)[c.node_id]
        numbered, ranges, trimmed, full_chars = _trim(index, c.doc, c.node_id, a, b, query_vec, budget)
        text = "\n".join(t for _, t in numbered)
        tree = index.trees[c.doc]
        images = tuple(im for n in tree.nodes.values() if a <= n.line_start <= b for im in n.images
                       if any(x <= im.line <= y for x, y in ranges))
        score = c.stage2_score if c.stage2_score is not None else c.stage1_score
        out.append(Section(c.doc, c.node_id, c.breadcrumb, a, b, text, rank, float(score), ranges,
                           full_chars, trimmed, images, tuple(ln for ln, _ in numbered)))
    return out


def retrieve(index, question: str, k: int | None = None, *, docs: list[str] | None = None, reranker=None,
             recall: int | None = None, candidates: int | None = None, budget: int | None = None,
             auto_filter: bool = True, retrieval: str | None = None, filters=None, decompose: bool = True,
             statement_recall: bool = True):
    """Two-stage retrieval over ``index``.

    Args:
        question: the user's question.
        k: sections to return (default ``config.k``, 5).
        docs: restrict to these documents (names as indexed). ``None``: the documents the
            question names (:func:`ppkit.analyze.analyze_query`), or all when it names none.
        auto_filter: with ``docs=None``, take the document filter from the question (default);
            ``False`` searches all documents.
        statement_recall: add the primary financial statements the question's concepts call for
            to the candidates when stage 1 missed them (:func:`statement_candidates`).
        reranker: any object with ``rerank(question, candidates) -> candidates``;
            default: Gemini when the config is online, else the structural re-ranker.
        recall / candidates: stage-1 sizes (200 / 50).
        budget: characters of one section sent on (default ``config.section_budget``).
        retrieval: stage-1 recall, ``"dense"``, ``"bm25"`` or ``"hybrid"`` (RRF of the two
            section rankings; see :mod:`ppkit.hybrid`); default ``config.extra["retrieval"]``
            or :data:`ppkit.hybrid.DEFAULT_RETRIEVAL`.
        filters: a :class:`ppkit.analyze.QueryFilters` to use instead of analysing the question.
            Its ``search_text`` (names removed) is searched with, unless ``config.extra["strip_names"]``
            is False (then the question as asked).
        decompose: a question naming several companies is answered by one filtered
            sub-retrieval per company, merged so each is represented (:mod:`ppkit.compare`).

    Returns:
        A :class:`Retrieval` with the k sections, all candidates in stage-2 order, and a trace.

    >>> index.retrieve("What is AMD's quick ratio?", k=5).sections[0].breadcrumb  # doctest: +SKIP
    """
    cfg = index.config
    k = cfg.k if k is None else k
    if k < 1:
        raise ValueError("k must be at least 1")
    if not question or not question.strip():
        raise ValueError("the question is empty")
    recall = cfg.recall_chunks if recall is None else recall
    n_cand = cfg.candidates if candidates is None else candidates
    budget = cfg.section_budget if budget is None else budget
    if reranker is None:
        from .rerank import default_reranker

        reranker = default_reranker(index)
    from .hybrid import DEFAULT_RETRIEVAL, recall_sections

    mode = retrieval or cfg.extra.get("retrieval", DEFAULT_RETRIEVAL)
    t0 = time.perf_counter()
    if filters is None and docs is None and auto_filter:
        from .analyze import analyze

        filters = analyze(index, question)
    if docs is not None:  # the caller's documents win over the analyzer's
        scope = {d: None for d in docs}
    else:
        scope = filters.scope(index) if filters is not None else None
        docs = filters.docs if filters is not None else None
        if decompose and filters is not None and filters.comparison:
            from .compare import retrieve_decomposed

            return retrieve_decomposed(index, question, filters, k=k, reranker=reranker, recall=recall,
                                       candidates=n_cand, budget=budget, retrieval=mode)
    # The names that became filters stay in the search text unless config.extra["strip_names"] is True:
    # stripping them measured worse (Comprehensive hit@3 0.90 -> 0.80, `ppkit bench retrieval`), since
    # a filing's own prose names the company where it reports on it.
    strip = cfg.extra.get("strip_names", False)
    search_text = filters.search_text if filters is not None and filters.companies and strip else question
    te = time.perf_counter()
    qv = index.embedder.embed_query(search_text)
    t_embed = time.perf_counter() - te
    cands, info = recall_sections(index, search_text, qv, mode=mode, scope=scope, recall=recall,
                                  candidates=n_cand)
    info["seconds"] = {"embed_query": round(t_embed, 4), **info["seconds"]}
    injected = (statement_candidates(index, search_text, cands, docs=list(scope) if scope else None, query_vec=qv)
                if statement_recall else [])
    cands = cands + injected
    info["statements_added"] = [c.section_id for c in injected]
    t1 = time.perf_counter()
    calls_before = len(getattr(reranker, "calls", []))
    # an LLM re-ranker reads the question as asked; the structural one scores the search text
    # (the filtered names would only add noise inside the filtered documents)
    ranked = reranker.rerank(search_text if getattr(reranker, "uses_search_text", False) else question, cands)
    t2 = time.perf_counter()
    ranked = [replace(c, stage2_rank=i) for i, c in enumerate(ranked, start=1)]
    sections = load_sections(index, ranked[:k], budget=budget, query_vec=qv)
    t3 = time.perf_counter()
    trace = {
        "k": k, "search_text": search_text, "docs_filter": docs, "filter_source": ("question" if filters and filters.docs else
                                                      "caller" if docs else "none"), "recall": recall, "reranker": getattr(reranker, "name", type(reranker).__name__),
        "filters": filters.to_dict() if filters is not None else None, "scope": scope,
        "embedder": index.embedder.name, **info,
        "seconds": {**info["seconds"], "stage1": round(t1 - t0, 4), "stage2": round(t2 - t1, 4),
                    "load": round(t3 - t2, 4), "total": round(t3 - t0, 4)},
        "trimmed": [{"section_id": s.section_id, "chars_total": s.chars_total, "chars_sent": len(s.text)}
                    for s in sections if s.trimmed],
        "context_chars": sum(len(s.text) for s in sections),
        "model_calls": list(getattr(reranker, "calls", []))[calls_before:],
        "notes": list(getattr(reranker, "last_notes", [])),
    }
    return Retrieval(question, sections, ranked, trace)
