"""In-sample and out-of-sample retrieval figures: ``ppkit bench retrieval --cv loco``.

Three stage-2 variants, each question retrieved for real (own document filter, k up to 5):

* ``handset``: the structural re-ranker with its hand-set weights. They were set by looking at
  these very questions, so its figures are in-sample only (an optimistic bound on its
  out-of-sample ones).
* ``fitted_in``: the fitted model (:mod:`ppkit.bench.fit.rerank`) chosen and fitted on *all* the
  questions, scored on the same questions (in-sample).
* ``fitted_loco``: nested leave-one-company-out. For each company (outer fold), the settings are
  chosen by leave-one-company-out over the *other* companies' questions (inner folds), the model
  is fitted on them, and the held-out company's questions are scored: the out-of-sample figure.

Each measure is a mean over questions with its 95% percentile-bootstrap interval
(:func:`ppkit.bench.fit.cv.bootstrap_ci`, 2000 resamples, seed 0). ``candidates`` is stage 1: the share
of gold sections among the candidate sections handed to stage 2. ``threshold`` rows are the fitted
model with its relevance cut (:func:`ppkit.retrieval.rerank_fitted.relevant_k`): k shrinks below 5
when the candidates are weak. ``page_hit`` (questions whose evidence names PDF pages, on an index
that holds the page map: the FinanceBench shelf): a gold page among the pages of the sections sent.
Folds are by company (:func:`ppkit.bench.fit.rerank.set_companies`): a company's questions share a
fold whichever set and index they come from. Everything is deterministic.
"""

from __future__ import annotations

from ...retrieval.rerank import StructuralReranker
from ...retrieval.rerank_fitted import FittedReranker, keep_count
from .cv import RESAMPLES, SEED, bootstrap_ci, loco_folds
from .rerank import (QuestionSet, choose, collect, fit_model, question_companies, question_docs, runnable,
                         set_companies)
from ..data.gold import gold_lines
from ..runs.harness import bench_view, one_torch_thread
from ..measures.metrics import Sent, covered, gold_pages, page_scores, score_question

__all__ = ["loco_bench", "loco_markdown", "loco_pooled", "score_retrieval", "VARIANTS"]

KS = (1, 2, 3, 4, 5)
VARIANTS = {"handset": "hand-set (in-sample)", "fitted_in": "fitted (in-sample)",
            "fitted_loco": "fitted (out-of-sample, LOCO)"}
_PAIRED = (("3", "hit"), ("5", "hit"), ("5", "recall"), ("5", "all_gold"), ("5", "page_hit"))
_MEASURES = (("3", "hit"), ("5", "hit"), ("3", "recall"), ("5", "recall"), ("3", "all_gold"), ("5", "all_gold"),
             ("5", "context_chars"), ("3", "page_hit"), ("5", "page_hit"), ("candidates", "recall"), ("candidates", "hit"),
             ("threshold", "hit"), ("threshold", "recall"), ("threshold", "k"), ("threshold", "context_chars"))


def score_retrieval(r, g, qdocs, threshold: float | None = None, pages: set | None = None) -> dict:
    """One retrieval's scores: ``{"1".."5": {hit, recall, all_gold, context_chars}, "candidates": {hit, recall, n}}``,
    with gold ``pages`` ``{(doc, page)}`` also ``page_hit`` at each k, and with ``threshold`` ``"threshold"``:
    the scores at the shrunk k (and ``k``)."""
    sc = score_question(r.sections, g, KS, doc=qdocs)
    row = {str(k): {m: sc[str(k)][m] for m in ("hit", "recall", "all_gold", "context_chars")} for k in KS}
    for k in KS if pages else ():
        row[str(k)]["page_hit"] = page_scores(r.sections[:k], pages)["page_hit"]
    cands = [Sent(c.doc, ((c.line_start, c.line_end),), len(c.text)) for c in r.candidates]
    inside = covered(cands, g)
    row["candidates"] = {"hit": float(bool(inside)), "recall": len(inside) / len(g), "n": len(cands)}
    if threshold is not None:
        keep = keep_count([s.score for s in r.sections], 5, threshold)
        row["threshold"] = {**row[str(keep)], "k": keep}
    return row


def _summary(rows: list[dict]) -> dict:
    out: dict[str, dict] = {}
    for part, m in _MEASURES:
        vals = [r[part][m] for r in rows if m in r.get(part, {})]  # page_hit: only questions with gold pages
        if vals:
            out.setdefault(part, {})[m] = bootstrap_ci(vals, resamples=RESAMPLES, seed=SEED)
    return out


def loco_bench(sets: list[QuestionSet], *, options: dict | None = None) -> dict:
    """Nested leave-one-company-out over all questions of ``sets``; see the module docstring.

    ``options``: retrieve options for every retrieval (stage 1: ``retrieval``, ``section_slots``, ...).

    Returns ``{"cv", "resamples", "seed", "sets": {name: {"n", variant: {part: {measure: {mean, lo, hi, n}}}}},
    "folds": [{company, train, test, settings}], "settings_all", "per_question": {variant: {key: row}},
    "pooled": loco_pooled(...)}`` (``key``: ``"set:qid"``).
    """
    options = dict(options or {})
    views = {qs.name: bench_view(qs.index) for qs in sets}
    structural = {qs.name: StructuralReranker.for_index(views[qs.name], path_vectors=False) for qs in sets}
    by_key = {f"{qs.name}:{q['qid']}": (qs, q) for qs in sets for q in runnable(qs)}
    gold = {key: gold_lines(qs.gold.qrels[q["qid"]], views[qs.name].trees) for key, (qs, q) in by_key.items()}
    docs = {key: question_docs(qs, q["qid"]) for key, (qs, q) in by_key.items()}
    companies = set_companies(sets)
    pages = {key: gold_pages(q.get("evidence") or [],
                             lambda d, ix=qs.index: d in ix.trees and bool(ix.page_ranges(d)))
             for key, (qs, q) in by_key.items()}
    rows: dict[str, dict] = {v: {} for v in VARIANTS}

    def handset(qs, q, r):
        key = f"{qs.name}:{q['qid']}"
        rows["handset"][key] = score_retrieval(r, gold[key], docs[key], pages=pages[key])

    def fitted(key, model) -> dict:
        qs, q = by_key[key]
        rr = FittedReranker(model=model, structural=structural[qs.name])
        r = views[qs.name].retrieve(q["text"], k=5, reranker=rr, **options)
        return score_retrieval(r, gold[key], docs[key], threshold=model.threshold, pages=pages[key])

    with one_torch_thread():
        groups = collect(sets, on_retrieval=handset, views=views, structural=structural, options=options,
                         companies=companies)
        folds = loco_folds({key: question_companies(qs, q["qid"], companies) for key, (qs, q) in by_key.items()})
        fold_info = []
        for f in folds:
            train = set(f.train)
            tr = [g for g in groups if g.qid in train]
            if not any(g.y.any() for g in tr):  # nothing to learn from: the fold's questions stay unscored
                fold_info.append({"company": f.company, "train": len(f.train), "test": len(f.test), "settings": None})
                continue
            settings = choose(tr)
            model = fit_model(tr, settings)
            for key in f.test:
                rows["fitted_loco"][key] = fitted(key, model)
            fold_info.append({"company": f.company, "train": len(f.train), "test": len(f.test),
                              "settings": {k: settings[k] for k in ("C", "domain_rules", "threshold")},
                              "coef": dict(zip(model.features, [round(c, 4) for c in model.coef]))})
        settings_all = choose(groups)
        model_all = fit_model(groups, settings_all)
        for key in by_key:
            rows["fitted_in"][key] = fitted(key, model_all)
    out_sets = {}
    for qs in sets:
        keys = [k for k in by_key if by_key[k][0] is qs]
        out_sets[qs.name] = {"n": len(keys), "format": qs.fmt,
                             **{v: _summary([rows[v][k] for k in keys if k in rows[v]]) for v in VARIANTS}}
    result = {"cv": "loco", "options": options, "resamples": RESAMPLES, "seed": SEED, "sets": out_sets,
              "folds": fold_info, "settings_all": {k: settings_all[k] for k in ("C", "domain_rules", "threshold")},
              "coef_all": dict(zip(model_all.features, [round(c, 4) for c in model_all.coef])),
              "per_question": rows}
    return {**result, "pooled": loco_pooled(result)}


def loco_pooled(result: dict) -> dict:
    """All questions of all sets together: ``{"n", variant: summary, "paired": {part: {measure: {mean, lo, hi, n,
    won, lost}}}}``; ``paired`` is fitted out-of-sample minus hand-set in-sample per question (the questions
    both scored), bootstrapped the same way; ``won``/``lost``: questions where the difference is > 0 / < 0."""
    rows = result["per_question"]
    keys = [k for k in rows["handset"] if k in rows["fitted_loco"]]
    out: dict = {"n": len(keys), **{v: _summary([rows[v][k] for k in keys if k in rows[v]]) for v in VARIANTS}}
    paired: dict = {}
    for part, m in _PAIRED:
        both = [(rows["fitted_loco"][k][part].get(m), rows["handset"][k][part].get(m)) for k in keys]
        diff = [a - b for a, b in both if a is not None and b is not None]
        if diff:
            paired.setdefault(part, {})[m] = {**bootstrap_ci(diff, resamples=RESAMPLES, seed=SEED),
                                              "won": sum(d > 0 for d in diff), "lost": sum(d < 0 for d in diff)}
    return {**out, "paired": paired}


def _cell(ci: dict | None, chars: bool = False) -> str:
    if not ci or ci.get("mean") is None:
        return "–"
    if chars:
        return f"{ci['mean']:,.0f} [{ci['lo']:,.0f}, {ci['hi']:,.0f}]"
    return f"{ci['mean']:.2f} [{ci['lo']:.2f}, {ci['hi']:.2f}]"


def loco_markdown(result: dict) -> str:
    """The in-sample and out-of-sample figures per set, and pooled, as Markdown tables (mean [95% CI])."""
    out = [f"Nested leave-one-company-out ({len(result['folds'])} outer folds); mean [95% bootstrap CI, "
           f"{result['resamples']} resamples, seed {result['seed']}]. Out-of-sample is the honest figure."]
    head = "| measure | " + " | ".join(VARIANTS.values()) + " |\n| --- |" + " --- |" * len(VARIANTS)
    tables = dict(result["sets"])
    if result.get("pooled") and len(result["sets"]) > 1:
        tables["all sets pooled"] = result["pooled"]
    for name, s in tables.items():
        out += ["", f"**{name}** ({s['n']} questions)", "", head]
        for part, m in _MEASURES:
            label = (f"{m}@{part}" if part.isdigit() else f"stage 1: gold {m} among candidates" if part == "candidates"
                     else f"{m} with threshold")
            cells = [_cell(s[v].get(part, {}).get(m), chars=m == "context_chars") for v in VARIANTS]
            if all(c == "–" for c in cells):
                continue
            out.append(f"| {label} | " + " | ".join(cells) + " |")
    paired = (result.get("pooled") or {}).get("paired") or {}
    if paired:
        out += ["", "fitted out-of-sample minus hand-set in-sample, per question, all sets pooled:", "",
                "| measure | difference [95% CI] | won | lost |", "| --- | --- | --- | --- |"]
        for part, ms in paired.items():
            for m, d in ms.items():
                out.append(f"| {m}@{part} | {d['mean']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}] | {d['won']} | {d['lost']} |")
    return "\n".join(out)
