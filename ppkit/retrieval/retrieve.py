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

import numbers
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..core.config import RETRIEVAL_MODES, Config, check_fields
from ..core.errors import InvalidInput
from ..finance.read import glossary_names
from ..indexing.index import SearchIndex
from .analyze import Analysis, QueryFilters, analyze_question
from .boilerplate import demote, filings_of
from .hybrid import recall_sections
from .image_channel import link_images
from .pointers import load_sections
from .recall import statement_candidates
from .rerank import Reranker, StructuralReranker
from .types import Candidate, RecallInfo, Retrieval, Section, Trace

__all__ = ["retrieve", "retrieve_decomposed", "merge_round_robin", "RetrieveOptions", "checked_k", "MAX_QUESTION_CHARS"]


@dataclass(frozen=True)
class RetrieveOptions:
    """The per-call settings of :func:`retrieve`; ``None`` takes the index's Config.

    Attributes:
        k: sections to return (``config.k``, 5).
        docs: restrict to these documents (names as indexed); ``None``: the documents the question names
            (:func:`ppkit.retrieval.analyze.analyze`), or all when it names none.
        recall / candidates: stage-1 sizes (``config.recall_chunks``, 200 / ``config.candidates``, 50).
        budget: characters of one section sent on (``config.section_budget``).
        retrieval: stage-1 recall, ``"dense"``, ``"bm25"`` or ``"hybrid"`` (RRF of the two section
            rankings), ``"dense+static"`` / ``"hybrid+static"`` (the static-embedding channel fused in too;
            see :mod:`ppkit.retrieval.hybrid`); default ``config.retrieval``.
        auto_filter: with ``docs=None``, take the document filter from the question; ``False``
            searches all documents.
        decompose: a question naming several companies is answered by one filtered sub-retrieval
            per company, merged so each is represented.
        statement_recall: add the primary financial statements the question's concepts call for
            to the candidates when stage 1 missed them (:func:`ppkit.retrieval.recall.statement_candidates`).
        section_slots: candidate slots (of ``candidates``) given to the section channel over titles and
            summaries (:mod:`ppkit.retrieval.section_channel`); 0: off.
        separate_filings: a scope of 2 to this many filings gets one stage 1 per filing, merged
            (``config.separate_filings``, 4; see :func:`_stage1`).
        boilerplate: move a filing's boilerplate below the content (:func:`ppkit.retrieval.boilerplate.demote`,
            in the documents whose catalog form type is a filing);
            ``False`` keeps the re-ranker's order (a search inside one legal agreement, whose legal text is
            its content: a comparison's).
    """

    k: int | None = None
    docs: list[str] | None = None
    recall: int | None = None
    candidates: int | None = None
    budget: int | None = None
    retrieval: str | None = None
    auto_filter: bool = True
    decompose: bool = True
    statement_recall: bool = True
    section_slots: int = 0
    separate_filings: int | None = None
    boilerplate: bool = True

    @classmethod
    def of(cls, **options) -> RetrieveOptions:
        """Options from keyword arguments (``None`` values left unset); unknown names are an error.

        >>> RetrieveOptions.of(k=3, retrieval="bm25").k
        3
        """
        check_fields(cls, options, "retrieve option(s)")
        if isinstance(options.get("docs"), (str, bytes, Path)):
            raise InvalidInput(f"docs must be a list of document names, e.g. docs=[{str(options['docs'])!r}]")
        return cls(**{k: v for k, v in options.items() if v is not None})

    def resolved(self, config: Config) -> RetrieveOptions:
        """These options with the unset ones taken from ``config``; a bad value is an error."""
        o = self
        o = replace(o, k=config.k if o.k is None else o.k, recall=config.recall_chunks if o.recall is None else o.recall,
                    candidates=config.candidates if o.candidates is None else o.candidates,
                    budget=config.section_budget if o.budget is None else o.budget,
                    separate_filings=config.separate_filings if o.separate_filings is None else o.separate_filings,
                    retrieval=o.retrieval or config.retrieval)
        if o.retrieval not in RETRIEVAL_MODES:
            raise InvalidInput(f"unknown retrieval mode {o.retrieval!r}: use one of {', '.join(RETRIEVAL_MODES)}")
        return o


def retrieve(index: SearchIndex, question: str, options: RetrieveOptions | None = None, *,
             reranker: Reranker | None = None, analysis: Analysis | None = None) -> Retrieval:
    """Two-stage retrieval over ``index``.

    Args:
        question: the question (as searched: a follow-up already rewritten).
        options: :class:`RetrieveOptions` (``k``, ``docs``, stage-1 sizes and modes); unset ones from the
            index's Config.
        reranker: any :class:`ppkit.retrieval.rerank.Reranker`; default: a new structural re-ranker
            (the pipeline, :func:`ppkit.pipeline.retrieve`, chooses Gemini's when the config is online and
            keeps one structural re-ranker per index).
        analysis: the question's :class:`ppkit.retrieval.analyze.Analysis` (the conductor reads the question
            once); without it the question is analyzed here. Its ``filters`` choose the documents unless
            ``options.docs`` does; their ``search_text`` (names removed) is searched with only when
            ``config.strip_names`` is True (else the question as asked).

    Returns:
        A :class:`Retrieval` with the k sections, all candidates in stage-2 order, and a trace.

    >>> retrieve(index, "What is AMD's quick ratio?", RetrieveOptions(k=5)).sections[0].breadcrumb  # doctest: +SKIP
    """
    opts = (options or RetrieveOptions()).resolved(index.config)
    k = checked_k(question, opts.k, opts.candidates)
    reranker = reranker or StructuralReranker.for_index(index)
    t0 = time.perf_counter()
    if analysis is None:
        analysis = analyze_question(index, question, filters=opts.docs is None and opts.auto_filter, docs=opts.docs)
    filters, docs = analysis.filters, opts.docs
    if docs is None and opts.decompose and filters is not None and filters.comparison:
        return retrieve_decomposed(index, question, filters, k=k, reranker=reranker, options=opts)
    source = "question" if filters and filters.docs else "caller" if docs else "none"
    if docs is not None:  # the caller's documents win over the analyzer's
        scope = _resolved(index, [(d, None) for d in docs])
    else:
        scope = filters.scope(index) if filters is not None else None
        scope = _resolved(index, list(scope.items())) if scope is not None else None
        docs = filters.docs if filters is not None else None
    # The names that became filters stay in the search text unless config.strip_names is True:
    # stripping them measured worse (Comprehensive hit@3, `ppkit bench retrieval`), since
    # a filing's own prose names the company where it reports on it.
    strip = index.config.strip_names and filters is not None and filters.companies
    search_text = filters.search_text if strip else question
    plain = glossary_names(search_text)  # everyday terms ("top line", "buybacks") searched with their formal names
    if plain:
        search_text = f"{search_text} ({plain})"
    te = time.perf_counter()
    qv = index.embedder.embed_query(search_text)
    seconds = {"embed_query": round(time.perf_counter() - te, 4)}
    cands, info, added = _stage1(index, search_text, qv, scope, opts)
    t1 = time.perf_counter()
    ranked, calls = _stage2(reranker, question, search_text, cands)
    # exhibit indexes, certifications... of a filing below the content (a paper's or an agreement's are content)
    ranked, moved = (demote(question, ranked, k, filings=filings_of(index, {c.doc for c in ranked})) if opts.boilerplate
                     else (ranked, []))
    t2 = time.perf_counter()
    sections = load_sections(index, ranked[:k], budget=opts.budget, query_vec=qv, query=search_text)
    # the image channel, over the untrimmed sections
    sections = link_images(index, question, sections, analysis=analysis)
    t3 = time.perf_counter()
    seconds.update(info.seconds, stage1=round(t1 - t0, 4), stage2=round(t2 - t1, 4), load=round(t3 - t2, 4),
                   total=round(t3 - t0, 4))
    trace = Trace(
        k=k, search_text=search_text, docs_filter=docs, filter_source=source, recall=opts.recall,
        reranker=reranker.name, filters=filters.to_dict() if filters is not None else None, scope=scope,
        embedder=index.embedder.name, retrieval=info.retrieval, chunks_recalled=info.chunks_recalled,
        sections_recalled=info.sections_recalled, candidates=info.candidates, lists=info.lists, rrf_k=info.rrf_k,
        seconds=seconds, statements_added=added,
        trimmed=_trimmed(sections), context_chars=sum(len(s.text) for s in sections), model_calls=calls,
        notes=list(reranker.last_notes) + moved + ([f"stage 1 per filing: {len(scope)} filings, {opts.candidates} candidates "
                                             "each, merged"] if _separate(scope, opts) else []))
    return Retrieval(question, sections, ranked, trace)


def _resolved(index: SearchIndex, pairs: list[tuple[str, list | None]]) -> dict:
    """``{doc: None | [Items]}`` keyed by the index's own document names: two names of one document
    ("acme", "ACME") are one entry (all of it if either asks for all, else the union of their Items), so no
    document is searched twice. An unknown name is a KeyError (:meth:`SearchIndex.resolve_doc`)."""
    out: dict[str, list | None] = {}
    for name, items in pairs:
        doc = index.resolve_doc(name)
        if doc not in out:
            out[doc] = list(items) if items else None
        elif out[doc] is not None:
            out[doc] = None if not items else list(dict.fromkeys([*out[doc], *items]))
    return out


def _separate(scope: dict | None, opts: RetrieveOptions) -> bool:
    """Whether ``scope`` gets one stage 1 per filing (2 to ``opts.separate_filings`` filings)."""
    return scope is not None and 1 < len(scope) <= opts.separate_filings


# the longest question read (characters); a question is a few hundred, and analysis time grows with it
MAX_QUESTION_CHARS = 20_000


def checked_k(question: str, k: int, candidates: int | None = None) -> int:
    """``k``, once the question is a non-empty string of at most :data:`MAX_QUESTION_CHARS` characters and
    ``k`` an integer from 1 to ``candidates`` (the sections re-ranked, when given); else an InvalidInput."""
    if not isinstance(question, str):
        raise InvalidInput(f"the question must be a string, not {type(question).__name__}")
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise InvalidInput(f"k must be a whole number of at least 1, not {k!r}")
    if candidates is not None and k > candidates:
        raise InvalidInput(f"k={k} is more than the {candidates} candidate sections re-ranked: ask for k={candidates} "
                           "or fewer (or raise `candidates`)")
    if not question.strip():
        raise InvalidInput("the question is empty")
    if len(question) > MAX_QUESTION_CHARS:
        raise InvalidInput(f"the question has {len(question):,} characters, more than the {MAX_QUESTION_CHARS:,} "
                           "read: shorten it (ask about the passage, do not paste it)")
    return k


def _stage1(index: SearchIndex, search_text: str, qv: np.ndarray, scope: dict | None,
            opts: RetrieveOptions) -> tuple[list[Candidate], RecallInfo, list[str]]:
    """The candidate sections: recalled by ``opts.retrieval``, plus the primary statements asked for
    (their section ids are the third value).

    A scope of 2 to ``opts.separate_filings`` filings (a company's 10-K beside its full-year release, or its
    latest 10-K and the 10-Qs after it) gets one stage 1 per filing, each with its own ``recall`` chunks and
    ``candidates`` sections, merged round-robin: in one shared stage 1 the filings crowd each other out of the
    50 (a short release whose every section mentions the question's words pushes a 10-K's section out), and
    a filing's candidates are those of a search of that filing alone in this index (for dense recall, those
    of a store of that filing alone; BM25 and the static channel keep the whole index's term statistics).
    ``stage1_rank`` is then the position in the merged list (each filing's best first). It measured better
    on the 74-filing FinanceBench shelf (docs/results/financebench-shelf.md,
    ``ppkit bench retrieval --questions ../shared/data/financebench/questions.jsonl --index SHELF``).
    """
    if _separate(scope, opts):
        cands, info = _per_filing(index, search_text, qv, scope, opts)
    else:
        cands, info = recall_sections(index, search_text, qv, mode=opts.retrieval, scope=scope, recall=opts.recall,
                                      candidates=opts.candidates, section_slots=opts.section_slots)
    added = (statement_candidates(index, search_text, cands, docs=list(scope) if scope else None, query_vec=qv)
             if opts.statement_recall else [])
    return cands + added, info, [c.section_id for c in added]


def _per_filing(index: SearchIndex, search_text: str, qv: np.ndarray, scope: dict,
                opts: RetrieveOptions) -> tuple[list[Candidate], RecallInfo]:
    """One stage 1 per filing of ``scope``, the candidate lists merged round-robin (re-numbered), the counts summed."""
    runs = [recall_sections(index, search_text, qv, mode=opts.retrieval, scope={doc: items}, recall=opts.recall,
                            candidates=opts.candidates, section_slots=opts.section_slots)
            for doc, items in scope.items()]
    merged = merge_round_robin([c for c, _ in runs], sum(len(c) for c, _ in runs))
    cands = [replace(c, stage1_rank=i) for i, c in enumerate(merged, start=1)]
    infos = [info for _, info in runs]
    lists = {name: {key: sum(i.lists.get(name, {}).get(key, 0) for i in infos) for key in ("chunks", "sections")}
             for name in dict.fromkeys(n for i in infos for n in i.lists)}
    seconds = {step: round(sum(i.seconds.get(step, 0.0) for i in infos), 4)
               for step in dict.fromkeys(s for i in infos for s in i.seconds)}
    return cands, RecallInfo(infos[0].retrieval, sum(i.chunks_recalled for i in infos),
                             sum(i.sections_recalled for i in infos), len(cands), lists, infos[0].rrf_k, seconds)


def _stage2(reranker: Reranker, question: str, search_text: str,
            cands: list[Candidate]) -> tuple[list[Candidate], list[dict]]:
    """The candidates in the re-ranker's order (``stage2_rank`` set) and the model calls it made."""
    calls_before = len(reranker.calls)
    # an LLM re-ranker reads the question as asked; the structural one scores the search text
    # (the filtered names would only add noise inside the filtered documents)
    ranked = reranker.rerank(search_text if reranker.uses_search_text else question, cands)
    ranked = [replace(c, stage2_rank=i) for i, c in enumerate(ranked, start=1)]
    return ranked, list(reranker.calls)[calls_before:]


def _trimmed(sections: list[Section]) -> list[dict]:
    return [{"section_id": s.section_id, "chars_total": s.chars_total, "chars_sent": len(s.text)}
            for s in sections if s.trimmed]


def _section_id(x) -> str:
    return x.section_id


def merge_round_robin(lists: list[list], k: int, key=None) -> list:
    """Take from each list in turn (first items first) until ``k`` items, at least one per list; with ``key``,
    an item whose key was taken already is skipped (two sub-retrievals over one filing send its section once).

    >>> merge_round_robin([["a1", "a2", "a3"], ["b1"]], 3)
    ['a1', 'b1', 'a2']
    >>> merge_round_robin([["x", "a"], ["x", "b"]], 3, key=str)
    ['x', 'a', 'b']
    """
    k = max(k, sum(1 for x in lists if x))
    out, seen, depth = [], set(), 0
    while len(out) < k and any(depth < len(x) for x in lists):
        for x in lists:
            if depth < len(x) and len(out) < k:
                if key is not None:
                    if key(x[depth]) in seen:
                        continue
                    seen.add(key(x[depth]))
                out.append(x[depth])
        depth += 1
    return out


def retrieve_decomposed(index: SearchIndex, question: str, filters: QueryFilters, *, k: int,
                        reranker: Reranker | None = None, options: RetrieveOptions | None = None) -> Retrieval:
    """One sub-retrieval per company named (over the filings chosen for it), merged.

    Returns:
        A :class:`ppkit.retrieval.types.Retrieval` whose sections are the merge (re-numbered
        1..n) and whose trace has ``decomposition``: each sub-query, its document and
        the sections it gave; its counts are the sums over the sub-retrievals.
    """
    opts = (options or RetrieveOptions()).resolved(index.config)
    t0 = time.perf_counter()
    # one sub-retrieval per company, over the filings chosen for it (one per document without that grouping)
    groups = list(filters.company_docs.values()) or [[d] for d in (filters.docs or filters.companies)]
    docs = [g[0] for g in groups]
    subs = []
    for doc, group in zip(docs, groups):
        sub_filters = replace(filters, docs=list(group), companies=[doc],
                              matched={d: filters.matched.get(d, "") for d in group},
                              company_docs={filters.matched.get(doc, doc): list(group)})
        # the sub-question names only its own company (searched with when names are not stripped)
        sub_q = f"For {filters.matched.get(doc) or doc}: {filters.search_text}"
        subs.append(retrieve(index, sub_q, replace(opts, k=k, docs=None, decompose=False), reranker=reranker,
                             analysis=Analysis.of(sub_q, sub_filters)))
    # two company names can resolve to one filing ("Foot Locker" and "Footlocker"): its sections sent once
    sections = [replace(s, rank=i) for i, s in enumerate(merge_round_robin([r.sections for r in subs], k,
                                                                           key=_section_id), start=1)]
    cands = merge_round_robin([r.candidates for r in subs], sum(len(r.candidates) for r in subs), key=_section_id)
    first, traces = subs[0].trace, [r.trace for r in subs]
    sent = {s.section_id for s in sections}
    trace = Trace(
        k=k, search_text=filters.search_text, docs_filter=list(docs), filter_source="question", recall=first.recall,
        reranker=first.reranker, filters=filters.to_dict(), scope={d: t.scope.get(d) if t.scope else None
                                                                   for d, t in zip(docs, traces)},
        embedder=first.embedder, retrieval=first.retrieval,
        chunks_recalled=sum(t.chunks_recalled for t in traces), sections_recalled=sum(t.sections_recalled for t in traces),
        candidates=len(cands), lists=first.lists, rrf_k=first.rrf_k,
        seconds={"total": round(time.perf_counter() - t0, 4), "sub_queries": [t.seconds.get("total") for t in traces]},
        statements_added=[sid for t in traces for sid in t.statements_added],
        trimmed=[x for t in traces for x in t.trimmed if x["section_id"] in sent],
        context_chars=sum(len(s.text) for s in sections), model_calls=[c for t in traces for c in t.model_calls],
        notes=[f"comparison of {len(docs)} documents: one sub-retrieval each, merged round-robin"]
              + [n for t in traces for n in t.notes],
        decomposition=[{"doc": d, "search_text": t.search_text, "scope": t.scope,
                        "sections": [s.section_id for s in r.sections]} for d, t, r in zip(docs, traces, subs)])
    return Retrieval(question, sections, cands, trace)

