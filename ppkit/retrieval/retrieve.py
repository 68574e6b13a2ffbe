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
from dataclasses import replace

from ..core.errors import InvalidInput
from .analyze import analyze
from .hybrid import recall_sections
from .pointers import load_sections
from .recall import statement_candidates
from .rerank import StructuralReranker
from .types import Retrieval

__all__ = ["retrieve", "retrieve_decomposed", "merge_round_robin"]


def retrieve(index, question: str, k: int | None = None, *, docs: list[str] | None = None, reranker=None,
             recall: int | None = None, candidates: int | None = None, budget: int | None = None,
             auto_filter: bool = True, retrieval: str | None = None, filters=None, decompose: bool = True,
             statement_recall: bool = True):
    """Two-stage retrieval over ``index``.

    Args:
        question: the user's question.
        k: sections to return (default ``config.k``, 5).
        docs: restrict to these documents (names as indexed). ``None``: the documents the
            question names (:func:`ppkit.retrieval.analyze.analyze_query`), or all when it names none.
        auto_filter: with ``docs=None``, take the document filter from the question (default);
            ``False`` searches all documents.
        statement_recall: add the primary financial statements the question's concepts call for
            to the candidates when stage 1 missed them (:func:`statement_candidates`).
        reranker: any object with ``rerank(question, candidates) -> candidates``; default: a new
            structural re-ranker (:func:`ppkit.pipeline.retrieve` chooses Gemini when the config is
            online, and keeps one structural re-ranker per index).
        recall / candidates: stage-1 sizes (200 / 50).
        budget: characters of one section sent on (default ``config.section_budget``).
        retrieval: stage-1 recall, ``"dense"``, ``"bm25"`` or ``"hybrid"`` (RRF of the two
            section rankings; see :mod:`ppkit.retrieval.hybrid`); default ``config.retrieval``.
        filters: a :class:`ppkit.retrieval.analyze.QueryFilters` to use instead of analysing the question.
            Its ``search_text`` (names removed) is searched with, only when ``config.strip_names`` is
            True (else the question as asked).
        decompose: a question naming several companies is answered by one filtered
            sub-retrieval per company, merged so each is represented (:mod:`ppkit.retrieval.compare`).

    Returns:
        A :class:`Retrieval` with the k sections, all candidates in stage-2 order, and a trace.

    >>> index.retrieve("What is AMD's quick ratio?", k=5).sections[0].breadcrumb  # doctest: +SKIP
    """
    cfg = index.config
    k = cfg.k if k is None else k
    if k < 1:
        raise InvalidInput("k must be at least 1")
    if not question or not question.strip():
        raise InvalidInput("the question is empty")
    recall = cfg.recall_chunks if recall is None else recall
    n_cand = cfg.candidates if candidates is None else candidates
    budget = cfg.section_budget if budget is None else budget
    if reranker is None:  # the pipeline chooses it (ppkit.pipeline.default_reranker)
        reranker = StructuralReranker(index.embedder)

    mode = retrieval or cfg.retrieval
    t0 = time.perf_counter()
    if filters is None and docs is None and auto_filter:
        filters = analyze(index, question)
    if docs is not None:  # the caller's documents win over the analyzer's
        scope = {d: None for d in docs}
    else:
        scope = filters.scope(index) if filters is not None else None
        docs = filters.docs if filters is not None else None
        if decompose and filters is not None and filters.comparison:
            return retrieve_decomposed(index, question, filters, k=k, reranker=reranker, recall=recall,
                                       candidates=n_cand, budget=budget, retrieval=mode)
    # The names that became filters stay in the search text unless config.strip_names is True:
    # stripping them measured worse (Comprehensive hit@3 0.90 -> 0.80, `ppkit bench retrieval`), since
    # a filing's own prose names the company where it reports on it.
    strip = cfg.strip_names
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


def merge_round_robin(lists: list[list], k: int) -> list:
    """Take from each list in turn (first items first) until ``k`` items, at least one per list.

    >>> merge_round_robin([["a1", "a2", "a3"], ["b1"]], 3)
    ['a1', 'b1', 'a2']
    """
    k = max(k, sum(1 for x in lists if x))
    out, depth = [], 0
    while len(out) < k and any(depth < len(x) for x in lists):
        for x in lists:
            if depth < len(x) and len(out) < k:
                out.append(x[depth])
        depth += 1
    return out


def retrieve_decomposed(index, question: str, filters, *, k: int, reranker=None, recall=None, candidates=None,
                        budget=None, retrieval: str | None = None):
    """One sub-retrieval per document in ``filters.docs`` (the companies named), merged.

    Returns:
        A :class:`ppkit.retrieval.types.Retrieval` whose sections are the merge (re-numbered
        1..n) and whose trace has ``decomposition``: each sub-query, its document and
        the sections it gave.
    """
    t0 = time.perf_counter()
    docs = filters.docs or filters.companies
    subs = []
    for doc in docs:
        sub_filters = replace(filters, docs=[doc], companies=[doc], matched={doc: filters.matched.get(doc, "")})
        # the sub-question names only its own company (searched with when names are not stripped)
        sub_q = f"For {filters.matched.get(doc) or doc}: {filters.search_text}"
        subs.append(retrieve(index, sub_q, k, reranker=reranker, recall=recall, candidates=candidates,
                             budget=budget, retrieval=retrieval, filters=sub_filters, decompose=False))
    sections = [replace(s, rank=i) for i, s in enumerate(merge_round_robin([r.sections for r in subs], k), start=1)]
    cands = merge_round_robin([r.candidates for r in subs], sum(len(r.candidates) for r in subs))
    first = subs[0].trace
    trace = {
        "k": k, "search_text": filters.search_text, "docs_filter": list(docs), "filter_source": "question",
        "recall": first.get("recall"), "reranker": first.get("reranker"), "embedder": first.get("embedder"),
        "retrieval": first.get("retrieval"), "filters": filters.to_dict(),
        "decomposition": [{"doc": d, "search_text": r.trace["search_text"], "scope": r.trace.get("scope"),
                           "sections": [s.section_id for s in r.sections]} for d, r in zip(docs, subs)],
        "candidates": len(cands), "chunks_recalled": sum(r.trace.get("chunks_recalled", 0) for r in subs),
        "seconds": {"total": round(time.perf_counter() - t0, 4),
                    "sub_queries": [r.trace["seconds"].get("total") for r in subs]},
        "trimmed": [t for r in subs for t in r.trace.get("trimmed", [])
                    if t["section_id"] in {s.section_id for s in sections}],
        "context_chars": sum(len(s.text) for s in sections),
        "model_calls": [c for r in subs for c in r.trace.get("model_calls", [])],
        "notes": [f"comparison of {len(docs)} documents: one sub-retrieval each, merged round-robin"]
                 + [n for r in subs for n in r.trace.get("notes", [])],
    }
    return Retrieval(question, sections, cands, trace)
