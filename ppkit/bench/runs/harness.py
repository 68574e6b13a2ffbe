"""The retrieval benchmark: ppkit against gold sections, beside the baselines, in one run.

For every question with gold, ppkit retrieves ``max(ks)`` sections once per
document-filter mode (the top 3 are the first 3 of the top 5: ranking does not
depend on k, and each section's text is trimmed on its own):

* ``auto``: the pipeline's own filter (:func:`ppkit.retrieval.analyze.analyze_query`), the default;
* ``none``: one index over all documents, no filter (cross-document contamination
  possible: ``wrong_doc`` is the share of sent sections from another document);
* ``gold``: restricted to the question's gold document(s).

It records hit@k, recall@k and context characters (:mod:`ppkit.bench.measures.metrics`), and
"gold in the candidates": whether the 50 sections that stage 1 handed to the
re-ranker held a gold heading (what stage 1 lost versus what stage 2 lost). The
baselines (:mod:`ppkit.bench.runs.baselines`) search with the same query text and the
same document filter as ppkit in that mode, at k=3, 5, 10 and at *equal context*:
as many top chunks as fit in the characters ppkit sent at k=5 for that question.

Output (:func:`run_retrieval_bench`, a :class:`ppkit.bench.runs.results.RetrievalBench`) is, as JSON, the
``bench retrieval --json`` contract::

    {"benchmark", "n", "results": {"3": {"hit", "recall", "context_chars_mean", ...}, "5": {...}},
     "per_question": [...], "modes": {...}, "baselines": {...}, "gold": {...}, "definitions": {...}}

``results`` is the headline: mode ``auto``.
"""

from __future__ import annotations

import contextlib
import sys
import time
from dataclasses import dataclass
from types import SimpleNamespace

from ...core.errors import InvalidInput
from ...core.ids import split_section_id
from ...core.progress import progress_bar
from ...indexing.index import SearchIndex
from ...pipeline import default_reranker
from ...retrieval.analyze import catalog_of, company_groups, same_period
from ..data.gold import GoldSet, gold_lines
from ..measures.metrics import (
    EvidenceFeatures,
    Sent,
    covered,
    evidence_features,
    findable,
    gold_pages,
    image_metrics,
    page_scores,
    mean,
    score_question,
    text_features,
)
from .results import KScores, RetrievalBench, as_json

__all__ = ["BenchPlan", "run_retrieval_bench", "markdown_table", "DEFINITIONS", "MODES", "bench_view", "one_torch_thread"]

MODES = ("auto", "none", "gold")
# the multimodal set's image measures (ppkit.bench.measures.metrics), per question and averaged
IMAGE_KEYS = ("image_hit", "image_precision", "image_reachable", "image_hit_by_caption", "image_precision_by_caption")

DEFINITIONS = {
    "hit@k": "1 when at least one gold heading line lies inside the text sent for one of the first k "
             "sections/chunks (Section.contains_line over its sent_ranges), averaged over questions",
    "recall@k": "share of a question's gold sections whose heading line lies inside the text sent for the first "
                "k items, averaged over questions",
    "hit_overlap / recall_overlap": "lenient variants: a gold section counts when any line of its own text "
                                    "(heading to next heading) was sent",
    "all_gold": "1 when every gold section's heading line lies inside the text sent for the first k items "
                "(recall@k = 1), averaged over questions",
    "evidence_recall": "share of the gold evidence's numbers (normalised: no thousands separators, $ or trailing "
                       "decimal zeros; >= 3 digits or a decimal part, no years or citation ids; percentages keep "
                       "their %; '23.6 billion' also matches a figure one unit down that rounds to it) and key "
                       "phrases (prose evidence: consecutive non-overlapping runs of 8 normalised tokens) that "
                       "appear in the text sent for the first k items of the question's own documents; each "
                       "feature counts once, only features the gold sections' own text holds count; evidence: "
                       "FinanceBench evidence_text, the Comprehensive reference answer's figures (numbers only); "
                       "averaged over the n_evidence questions that have such features",
    "context_chars_mean": "mean characters sent for the first k items",
    "candidates": "the same measures over the stage-1 candidate sections (their full line ranges): what "
                  "stage 1 kept before re-ranking (50; 50 per filing when 2-4 filings are searched; plus the "
                  "statements that statement recall added)",
    "wrong_doc": "share of the first k items that come from a document other than the question's",
    "wrong_company": "share of the first k items from a filing of another company (companies as the index's "
                     "metadata groups its filings: by name or ticker); only in an index of several companies",
    "wrong_period": "share of the first k items from a filing of the question's company that reports another "
                    "period (another fiscal year or quarter, or an 8-K)",
    "other_form": "share of the first k items from another filing of the question's company that reports the "
                  "same period (the fiscal year's 10-K beside its full-year earnings release, a quarter's 10-Q "
                  "beside its release); before this column existed they counted as wrong_period",
    "modes": "auto = the pipeline's own document filter (from the question); none = one index over all "
             "documents, no filter; gold = filtered to the question's gold document(s); a suffix names the "
             "stage-1 recall when it is not the default: auto:bm25, none:hybrid (dense, bm25 or hybrid RRF)",
    "chunk baselines": "a chunk covers the source lines of its text; a header-path chunk also covers its "
                       "section's heading line (its prefix carries it); hit = a gold heading line inside a "
                       "sent chunk's lines, exactly as for ppkit",
    "equal_context": "per question, as many top chunks as fit in the characters ppkit sent at k=5 in the same "
                     "mode (at least one)",
    "baseline query": "the same query text and document filter as ppkit in that mode",
    "image_hit / image_precision": "multimodal set: at least one image the offline synthesizer chose for the k "
                                   "sections is one of the reference's (questions with reference images); the "
                                   "share of chosen images that are (questions where some were chosen); "
                                   "n_image_hit / n_image_precision count those questions",
    "image_reachable": "a reference image is among the images the selection can choose from for the k sections "
                       "(the image channel's candidates; the ceiling of image_hit)",
    "by_caption": "the same against every image whose caption the reference's label names",
    "images_shown_mean": "images chosen per question",
}


class _MemoEmbedder:
    """The index's embedder with its query vectors remembered for the run: each question is
    embedded once per distinct search text instead of once per mode, re-ranker and baseline."""

    def __init__(self, inner):
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self._queries: dict[str, object] = {}  # text -> vector

    def embed_query(self, text: str):
        if text not in self._queries:
            self._queries[text] = self.inner.embed_query(text)
        return self._queries[text]

    def embed_documents(self, texts, *, progress: bool = False):
        return self.inner.embed_documents(texts, progress=progress)

    def __getattr__(self, name):  # anything else the inner embedder offers
        return getattr(self.inner, name)


@contextlib.contextmanager
def one_torch_thread():
    """Run the query loop with one torch thread (restored afterwards).

    The loop embeds one short query at a time, which gains nothing from a second
    thread; on a shared machine the threads' spin-waiting made each query embedding
    many times slower than with one thread."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(n)


def bench_view(index: SearchIndex):
    """A shallow copy of ``index`` whose embedder remembers query vectors (the caller's index is not changed)."""
    import copy

    view = copy.copy(index)
    view.embedder = _MemoEmbedder(index.embedder)
    return view


def _sent_of_candidates(cands) -> list[Sent]:
    return [Sent(c.doc, ((c.line_start, c.line_end),), len(c.text), label=c.section_id) for c in cands]


def _first_gold_rank(items, gold) -> int | None:
    for i, it in enumerate(items, start=1):
        if covered([it], gold):
            return i
    return None


def _equal_context(items: list[Sent], budget: int) -> list[Sent]:
    out, used = [], 0
    for it in items:
        if out and used + it.chars > budget:
            break
        out.append(it)
        used += it.chars
    return out


def _aggregate(rows: list[dict], ks) -> dict:
    out = {}
    for k in ks:
        per = [r[str(k)] for r in rows]
        out[str(k)] = {"hit": mean(per, "hit"), "recall": mean(per, "recall"),
                       "hit_overlap": mean(per, "hit_overlap"), "recall_overlap": mean(per, "recall_overlap"),
                       "context_chars_mean": mean(per, "context_chars"), "wrong_doc": mean(per, "wrong_doc"),
                       **_source_means(per),
                       "n": len(per), "all_gold": mean(per, "all_gold"),
                       "evidence_recall": mean(per, "evidence_recall"),
                       "n_evidence": sum(r.get("evidence_recall") is not None for r in per)}
        out[str(k)].update(_page_means(per))  # PDF evidence pages (FinanceBench over PDFs)
        if any("image_hit" in r for r in per):  # the multimodal set: images chosen for the answer
            for key in IMAGE_KEYS:
                out[str(k)][key] = mean(per, key)
            out[str(k)]["n_image_hit"] = sum(r.get("image_hit") is not None for r in per)
            out[str(k)]["n_image_precision"] = sum(r.get("image_precision") is not None for r in per)
            out[str(k)]["images_shown_mean"] = mean([{"v": len(r.get("images", []))} for r in per], "v")
    return out


def _source_means(per: list[dict]) -> dict:
    """Mean wrong_company, wrong_period and other_form, where the rows have them (an index of several companies)."""
    if not any("wrong_company" in r for r in per):
        return {}
    return {key: mean(per, key) for key in ("wrong_company", "wrong_period", "other_form")}


def _page_means(per: list[dict]) -> dict:
    """Mean page_hit and page_recall, where the rows have them (evidence pages of indexed PDFs)."""
    if not any("page_hit" in r for r in per):
        return {}
    return {"page_hit": mean(per, "page_hit"), "page_recall": mean(per, "page_recall"),
            "n_pages": sum(r.get("page_hit") is not None for r in per)}


def _r(x, nd=4):
    return None if x is None else round(float(x), nd)


def _round(d):
    if isinstance(d, dict):
        return {k: _round(v) for k, v in d.items()}
    if isinstance(d, float):
        return _r(d, 4 if abs(d) < 100 else 1)
    return d


@dataclass(frozen=True)
class BenchPlan:
    """What a retrieval benchmark runs: ppkit's cut-offs and document-filter modes, and the baselines'.

    Attributes:
        ks: cut-offs for ppkit (the headline reports these).
        modes: document-filter modes (``auto`` is the headline; ``"auto:hybrid"`` runs a mode with
            another stage-1 recall).
        baseline_ks / baseline_modes: cut-offs and filter modes for the baselines.
    """

    ks: tuple[int, ...] = (3, 5)
    modes: tuple[str, ...] = MODES
    baseline_ks: tuple[int, ...] = (3, 5, 10)
    baseline_modes: tuple[str, ...] = ("auto", "none")


@dataclass(frozen=True)
class _Run:
    """One benchmark run's fixed parts, shared by its questions."""

    index: object  # the index as the bench sees it (see bench_view)
    ks: list[int]
    modes: tuple[str, ...]
    reranker: object
    baselines: dict
    bks: list[int]
    baseline_modes: tuple[str, ...]
    gold_features: dict = None  # gold sections -> text_features of their own text (evidence_recall's "findable")
    # doc -> every indexed filing of its company (the index's metadata groups them); empty with one company
    company_of: dict = None
    period_of: dict = None  # doc -> the filings of its company that report its period (itself included)

    def company(self, qdocs: list[str]) -> set[str] | None:
        """The filings of the companies of ``qdocs`` (None with a single company in the index: nothing to tell)."""
        if not self.company_of or not qdocs:
            return None
        return set().union(*(self.company_of.get(d, {d}) for d in qdocs))

    def same(self, qdocs: list[str]) -> set[str]:
        """The filings that report the period of ``qdocs`` (a fiscal year's 10-K and its full-year release)."""
        return set().union(*(self.period_of.get(d, {d}) for d in qdocs)) if self.period_of and qdocs else set()

    def with_pages(self, items: list) -> list:
        """Baseline items with the PDF pages of their line ranges (empty without a page map)."""
        return [SimpleNamespace(doc=it.doc, pages=tuple(p for p, _, _ in self.index.pages_of(it.doc, it.ranges)))
                for it in items]

    def evidence(self, texts: list[tuple[str, bool]], g: list) -> EvidenceFeatures | None:
        """The question's evidence features that occur in the own text of its gold sections ``g``
        (None: no evidence given)."""
        if not texts:
            return None
        feats = [evidence_features(t, phrases=not figures_only) for t, figures_only in texts]
        union = EvidenceFeatures(frozenset().union(*(f.numbers for f in feats)),
                                 frozenset().union(*(f.scaled for f in feats)),
                                 frozenset().union(*(f.phrases for f in feats)))
        key = tuple(g)
        if key not in self.gold_features:
            self.gold_features[key] = text_features("\n".join("\n".join(self.index.lines(doc)[line - 1:end])
                                                              for _, doc, line, end in g))
        return findable(union, self.gold_features[key])


def _bench_question(run: _Run, q: dict, g: list, qdocs: list[str], gold_images=None,
                    evidence: EvidenceFeatures | None = None) -> dict:
    """One question in every mode, with the baselines: its per-question row."""
    row = {"qid": q["qid"], "question": q["text"], "docs": qdocs, "gold": [x[0] for x in g],
           "evidence_features": None if evidence is None else len(evidence), "modes": {}}
    for mode in run.modes:
        row["modes"][mode] = _bench_mode(run, q, g, qdocs, mode, gold_images, evidence)
    head = row["modes"]["auto"] if "auto" in row["modes"] else next(iter(row["modes"].values()))
    row["results"] = {str(k): head[str(k)] for k in run.ks}
    return row


def _bench_mode(run: _Run, q: dict, g: list, qdocs: list[str], mode: str, gold_images,
                evidence: EvidenceFeatures | None = None) -> dict:
    """One question in one mode: ppkit's scores at each k, its candidates', images, and the baselines'."""
    ks, kmax = run.ks, max(run.ks)
    filt, _, recall_mode = mode.partition(":")  # "auto:hybrid" -> filter "auto", stage-1 recall "hybrid"
    kw = {"auto_filter": False} if filt == "none" else {"docs": qdocs} if filt == "gold" else {}
    if recall_mode:
        kw["retrieval"] = recall_mode
    r = run.index.retrieve(q["text"], k=kmax, reranker=run.reranker, **kw)
    cands = _sent_of_candidates(r.candidates)
    entry = {**score_question(r.sections, g, ks, doc=qdocs, evidence=evidence, company=run.company(qdocs),
                            same=run.same(qdocs)),
             "candidates": {"hit": 1.0 if covered(cands, g) else 0.0, "recall": len(covered(cands, g)) / len(g),
                            "n": len(cands), "first_gold_rank": _first_gold_rank(cands, g)},
             "sections": [s.section_id for s in r.sections],
             "covered": {str(k): covered(r.sections[:k], g) for k in ks},
             "filter": r.trace.docs_filter, "search_text": r.trace.search_text,
             # an online stage that fell back to its offline twin: never silent in a benchmark
             "fallbacks": list(r.trace.fallbacks)}
    pages = gold_pages(q.get("evidence") or [], lambda d: d in run.index.trees and bool(run.index.page_ranges(d)))
    for k in ks if pages else ():  # the PDF pages of the lines sent, against the evidence pages
        entry[str(k)].update(page_scores(r.sections[:k], pages))
    if gold_images is not None:  # which images the offline synthesizer would show, against the reference's
        images, by_caption = gold_images
        for k in ks:
            m = image_metrics(q["text"], r.sections[:k], images, gold_by_caption=by_caption)
            entry[str(k)].update({key: m[key] for key in IMAGE_KEYS})
            entry[str(k)]["images"] = m["images"]
    if mode in run.baseline_modes and run.baselines:
        budget = entry[str(5 if 5 in ks else kmax)]["context_chars"]
        entry["baselines"] = _baselines_for(run, r.trace.search_text or q["text"], r.trace.docs_filter, g, qdocs,
                                            budget, pages)
    return entry


def _baselines_for(run: _Run, text: str, docs, g: list, qdocs: list[str], budget: int, pages=None) -> dict:
    """Each baseline's scores for one question, at its cut-offs and at ppkit's context size
    (with ``pages``, the gold PDF pages, also their page scores)."""
    out = {}
    company, same = run.company(qdocs), run.same(qdocs)
    for name, b in run.baselines.items():
        items = b.search(text, 200, docs=docs, query_vec=run.index.embedder.embed_query(text))
        bs = score_question(items, g, run.bks, doc=qdocs, company=company, same=same)
        eq = _equal_context(items, budget)
        bs["equal_context"] = {**score_question(eq, g, [len(eq)], doc=qdocs, company=company, same=same)[str(len(eq))],
                               "budget": budget}
        if pages:
            for k in run.bks:
                bs[str(k)].update(page_scores(run.with_pages(items[:k]), pages))
            bs["equal_context"].update(page_scores(run.with_pages(eq), pages))
        out[name] = bs
    return out


def run_retrieval_bench(index: SearchIndex, questions: list[dict], gold: GoldSet, *, benchmark: str = "",
                        plan: BenchPlan | None = None, baselines: dict | None = None, reranker=None,
                        progress: bool = False) -> RetrievalBench:
    """Run the retrieval benchmark.

    Args:
        index: a loaded :class:`ppkit.Index` holding the gold documents.
        questions: question dicts (``qid``, ``text``); those without gold are listed under
            ``skipped``, never dropped silently.
        gold: the :class:`GoldSet` for these questions.
        plan: cut-offs and modes (:class:`BenchPlan`; default k=3 and 5, modes auto, none, gold).
        baselines: ``{name: baseline}`` from :func:`ppkit.bench.runs.baselines.build_baselines` (``None``: none).
        reranker: stage 2 (default: the index's default re-ranker, created once and reused).

    Returns:
        A :class:`ppkit.bench.runs.results.RetrievalBench`; ``to_dict()`` is the JSON (see the module docstring).

    >>> run_retrieval_bench(index, questions, gold, benchmark="comprehensive").results["5"].hit  # doctest: +SKIP
    """
    t0 = time.perf_counter()
    plan = plan or BenchPlan()
    ks = sorted({int(k) for k in plan.ks})
    if not ks or ks[0] < 1:
        raise InvalidInput("k must be at least 1")
    modes, baselines = tuple(plan.modes), baselines or {}
    view = bench_view(index)
    # one re-ranker for the whole run, so that its breadcrumb vectors are computed once
    run = _Run(view, ks, modes, reranker or default_reranker(view), baselines, sorted({int(k) for k in plan.baseline_ks}),
               tuple(m for m in plan.baseline_modes if m in modes) if baselines else (), {}, *_companies_and_periods(view))
    todo, skipped = _runnable(view, questions, gold)
    per_question = []
    if todo:
        view.embedder.embed_query(todo[0]["text"])  # loads the model (and torch) before the thread setting below
    images = getattr(gold, "images", None) or None
    evidence = getattr(gold, "evidence", None) or {}
    with one_torch_thread():
        for q in progress_bar(todo, desc=f"bench {benchmark}", disable=not progress):
            qid = q["qid"]
            qdocs = gold.docs.get(qid) or sorted({split_section_id(sid)[0] for sid in gold.qrels[qid]})
            g = gold_lines(gold.qrels[qid], view.trees)
            per_question.append(_bench_question(run, q, g, qdocs,
                                                (images.get(qid, []), gold.images_by_caption.get(qid, []))
                                                if images else None, run.evidence(evidence.get(qid, []), g)))
    modes_out = _mode_summaries(per_question, modes, ks)
    headline = "auto" if "auto" in modes else modes[0]
    results = {str(k): KScores.from_dict(modes_out[headline][str(k)]).to_dict() for k in ks}  # the headline
    fell_back = [r["qid"] for r in per_question if any(e.get("fallbacks") for e in r["modes"].values())]
    return RetrievalBench.from_dict(_round({
        "benchmark": benchmark,
        "n": len(per_question),
        "fallbacks": len(fell_back),  # questions where an online stage fell back (the run is flagged)
        "fallback_questions": fell_back,
        "results": results,
        "headline_mode": headline,
        "per_question": per_question,
        "modes": modes_out,
        "baselines": _baseline_summaries(per_question, run),
        "skipped": skipped,
        "gold": gold.report(),
        "index": {"folder": str(index.folder) if index.folder else None, "documents": index.docs,
                  "embedder": index.embedder.name, "chunks": len(index.chunks)},
        "reranker": run.reranker.name,
        "definitions": DEFINITIONS,
        "seconds": round(time.perf_counter() - t0, 2),
    }))


def _companies_and_periods(index: SearchIndex) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(doc -> the filings of its company, doc -> those of them that report its period), over an index of
    several companies (both empty otherwise)."""
    catalog = catalog_of(index)
    groups = company_groups(catalog)
    if len(groups) < 2:
        return {}, {}
    company = {d: set(group) for group in groups for d in group}
    period = {d: {e for e in company[d] if e == d or same_period(catalog[d], catalog[e])} for d in company}
    return company, period


def _runnable(index: SearchIndex, questions: list[dict], gold: GoldSet) -> tuple[list[dict], dict[str, str]]:
    """The questions with gold in this index, and why each other one is skipped (``{qid: reason}``)."""
    skipped: dict[str, str] = {}
    todo = []
    for q in questions:
        qid = q["qid"]
        if qid not in gold.qrels:
            skipped[qid] = gold.unmapped.get(qid, "no gold")
            continue
        absent = sorted({split_section_id(sid)[0] for sid in gold.qrels[qid]} - set(index.trees))
        if absent:
            skipped[qid] = f"gold document(s) not in the index: {absent}"
            continue
        todo.append(q)
    return todo, skipped


def _mode_summaries(per_question: list[dict], modes: tuple[str, ...], ks: list[int]) -> dict:
    """Per mode: means at each k and of the candidates (``size``: their mean number per question, the statements
    that statement recall added included); for ``auto``, how often the filter was exact."""
    out = {}
    for mode in modes:
        entries = [r["modes"][mode] for r in per_question]
        cands = [e["candidates"] for e in entries]
        out[mode] = {**_aggregate(entries, ks),
                     "candidates": {"hit": mean(cands, "hit"), "recall": mean(cands, "recall"), "n": len(cands),
                                    "size": mean(cands, "n")}}
    if "auto" in modes and per_question:
        exact = [{"v": float(r["modes"]["auto"]["filter"] == r["docs"])} for r in per_question]
        named = [{"v": float(r["modes"]["auto"]["filter"] is not None)} for r in per_question]
        out["auto"]["filter"] = {"exact": mean(exact, "v"), "filtered": mean(named, "v")}
    return out


def _baseline_summaries(per_question: list[dict], run: _Run) -> dict:
    """Per mode and baseline: means at each cut-off and at ppkit's context size."""
    out: dict[str, dict] = {}
    for mode in run.baseline_modes:
        out[mode] = {}
        for name in run.baselines:
            rows = [r["modes"][mode]["baselines"][name] for r in per_question]
            if not rows:
                continue
            agg = _aggregate(rows, run.bks)
            eq = [r["equal_context"] for r in rows]
            agg["equal_context"] = {"hit": mean(eq, "hit"), "recall": mean(eq, "recall"),
                                    "hit_overlap": mean(eq, "hit_overlap"), "recall_overlap": mean(eq, "recall_overlap"),
                                    "context_chars_mean": mean(eq, "context_chars"), "chunks_mean": mean(eq, "n_sent"),
                                    "budget_mean": mean(eq, "budget"), "wrong_doc": mean(eq, "wrong_doc"), "n": len(eq),
                                    **_source_means(eq), **_page_means(eq)}
            out[mode][name] = agg
    return out


def _fmt(x, pct=False):
    if x is None:
        return "–"
    return f"{x:.2f}" if not pct else f"{x:.0%}"


def _chars(x) -> str:
    return "–" if x is None else f"{x:,.0f}"


def markdown_table(result: RetrievalBench | dict) -> str:
    """The benchmark as a Markdown table: ppkit per filter mode and k, then the baselines (page hit and
    the wrong-company and wrong-period shares as columns where the run has them)."""
    result = as_json(result)
    scored = [v for m in result["modes"].values() for k, v in m.items() if k.isdigit()]
    extra = [(key, name, pct) for key, name, pct in (("page_hit", "page hit", False),
                                                     ("wrong_company", "wrong company", True),
                                                     ("wrong_period", "wrong period", True),
                                                     ("other_form", "same period, other filing", True))
             if any(key in v for v in scored)]
    names = ["system", "filter", "k", "hit", "recall", "all gold", "evidence recall", "hit (overlap)",
             "recall (overlap)", "context chars", "wrong doc", *(n for _, n, _ in extra)]
    head = "| " + " | ".join(names) + " |\n|" + " --- |" * len(names)

    def more(v) -> str:
        return "".join(f" {_fmt(v.get(key), pct)} |" for key, _, pct in extra)

    rows = []
    for mode, m in result["modes"].items():
        for k, v in m.items():
            if not k.isdigit():
                continue
            rows.append(f"| ppkit | {mode} | {k} | {_fmt(v['hit'])} | {_fmt(v['recall'])} | {_fmt(v.get('all_gold'))} | "
                        f"{_fmt(v.get('evidence_recall'))} | {_fmt(v['hit_overlap'])} | "
                        f"{_fmt(v['recall_overlap'])} | {_chars(v['context_chars_mean'])} | {_fmt(v['wrong_doc'], True)} |"
                        + more(v))
        c = m["candidates"]
        # mean candidates (50 per filing searched): "50", not "50.0", when every question had the same number
        size = f"{c['size']:.1f}".removesuffix(".0") if c.get("size") is not None else "50"
        rows.append(f"| ppkit candidates | {mode} | {size} | {_fmt(c['hit'])} | {_fmt(c['recall'])} |" + " |" * (len(names) - 5))
    for mode, by_name in result.get("baselines", {}).items():
        for name, agg in by_name.items():
            for k, v in agg.items():
                label = k if k.isdigit() else f"≈ppkit@5 ({v.get('chunks_mean', 0):.1f} chunks)"
                rows.append(f"| {name} | {mode} | {label} | {_fmt(v['hit'])} | {_fmt(v['recall'])} | {_fmt(v.get('all_gold'))} | – | "
                            f"{_fmt(v['hit_overlap'])} | {_fmt(v['recall_overlap'])} | {_chars(v['context_chars_mean'])} | "
                            f"{_fmt(v['wrong_doc'], True)} |" + more(v))
    title = f"**{result['benchmark']}**: {result['n']} questions with gold"
    if result.get("skipped"):
        title += f", {len(result['skipped'])} skipped (no gold: see `skipped`)"
    if result.get("fallbacks"):
        title += (f"\n\nWARNING: {result['fallbacks']} question(s) ran an offline fallback for a failed online "
                  "stage (see `fallback_questions`): these numbers are not the online pipeline's")
    filt = result["modes"].get("auto", {}).get("filter")
    if filt:
        title += f"; the pipeline's filter named exactly the gold document for {filt['exact']:.0%} of questions"
    images = [f"k={k}: image hit {_fmt(v.get('image_hit'))}, image precision {_fmt(v.get('image_precision'))}, "
              f"reachable {_fmt(v.get('image_reachable'))}, by caption {_fmt(v.get('image_hit_by_caption'))} / "
              f"{_fmt(v.get('image_precision_by_caption'))}, shown {_fmt(v.get('images_shown_mean'))}"
              for k, v in result["results"].items() if "image_hit" in v]
    tail = ["", "Images chosen by the offline synthesizer (own filter): " + "; ".join(images)] if images else []
    pages = [f"{mode} k={k}: page hit {_fmt(v.get('page_hit'))}, page recall {_fmt(v.get('page_recall'))} "
             f"({v.get('n_pages')} questions with an evidence page in a PDF of the index)"
             for mode, m in result["modes"].items() for k, v in m.items() if k.isdigit() and "page_hit" in v]
    tail += ["", "Evidence pages among the pages of the lines sent: " + "; ".join(pages)] if pages else []
    return "\n".join([title, "", head, *rows, *tail])
