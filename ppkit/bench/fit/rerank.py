"""Fit the stage-2 model on the visible question sets: ``python -m ppkit.bench.fit.rerank``.

Steps (all deterministic: fixed orders, no random state, scikit-learn's lbfgs):

1. **Collect** (:func:`collect`): every question of every set is retrieved with the structural
   re-ranker; each re-rank call (one per question, one per company for a comparison question)
   becomes a :class:`Group`: its candidates' general features (see
   :class:`ppkit.retrieval.rerank.StructuralReranker`) and labels (1: the candidate's lines hold a
   gold heading line).
2. **Choose** (:func:`choose`): the regularisation ``C``, whether the financial-statement rule is
   used (``domain_rules``) and the relevance ``threshold`` are chosen by leave-one-company-out
   cross-validation over the groups given (:func:`ppkit.bench.fit.cv.loco_folds`), scored on the
   held-out companies' candidates: mean of hit@3 and recall@5 among the candidates that hold gold.
   The threshold is the largest on its grid whose held-out recall at the shrunk k stays within
   ``THRESHOLD_SLACK`` of recall@5.
3. **Fit** (:func:`fit_model`): a logistic regression (class-balanced) on all candidates of the
   groups given, with the chosen settings, into a :class:`ppkit.retrieval.rerank_fitted.FittedModel`.

``main`` runs 1-3 on all visible sets and writes ``ppkit/retrieval/fitted_rerank.json`` with the
training sets (file, questions, sha256) and the commit it was fitted at. The nested evaluation
(outer folds around 2-3) is :mod:`ppkit.bench.fit.loco`.

More question sets: pass ``--with FILE`` (any file ``ppkit bench retrieval`` reads), or add it to
:data:`VISIBLE_SETS`; ``--shelf-index DIR`` pools the FinanceBench questions
(``../shared/data/financebench/questions.jsonl``) asked of an index of the FinanceBench filings
(:func:`shelf_set`). Questions are folded by company (:func:`ppkit.bench.fit.cv.company_keys`), so a
company's questions share a fold whichever set and index they come from.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...core.config import Config
from ...core.data import benchmark_path, financebench_dir
from ...core.errors import MissingDependency
from ...core.ids import split_section_id
from ...core.io import atomic_write
from ...pipeline import load_index, reference_index
from ...retrieval.analyze import catalog_of
from ...retrieval.rerank import StructuralReranker
from ...retrieval.rerank_fitted import DEFAULT_MODEL_PATH, FEATURES, FittedModel, design_matrix, keep_count, sigmoid
from .cv import company_keys, loco_folds
from ..data.gold import GoldSet, gold_lines, load_gold
from ..runs.harness import bench_view
from ..data.loaders import load_questions
from ..measures.metrics import Sent, covered

__all__ = ["VISIBLE_SETS", "SHELF_SET", "QuestionSet", "Group", "load_sets", "shelf_set", "set_companies",
           "question_companies", "collect", "choose", "fit_model", "C_GRID", "THRESHOLD_GRID", "main"]

VISIBLE_SETS = ("comprehensive_questions.xlsx", "financebench_dev.jsonl", "multimodal_queries.json")
SHELF_SET = "financebench_shelf"  # the name of the FinanceBench questions pooled on a shelf index
C_GRID = (0.01, 0.1, 1.0, 10.0)  # logistic regularisation, strongest first (ties keep the simpler model)
THRESHOLD_GRID = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
THRESHOLD_SLACK = 0.02  # the threshold may cost at most this much held-out recall against k=5


@dataclass(frozen=True)
class QuestionSet:
    """A question file with its gold and the index it is asked of."""

    name: str  # the file's stem (SHELF_SET for the shelf)
    path: Path
    fmt: str
    questions: list
    gold: GoldSet
    index: object
    index_dir: str | None = None  # the index folder, when not a reference index


@dataclass(frozen=True)
class Group:
    """One re-rank call: its candidates' features and labels."""

    qid: str
    set: str
    companies: frozenset
    feats: dict  # feature -> array over candidates
    stage1: np.ndarray  # best-chunk similarity per candidate
    added: np.ndarray  # bool: a statement section stage 1 added (no stage-1 recall record)
    y: np.ndarray  # 1: the candidate holds a gold heading line

    def x(self, names) -> np.ndarray:
        cands = [_Stage1(float(s)) for s in self.stage1]
        return design_matrix(self.feats, cands, names)


@dataclass(frozen=True)
class _Stage1:  # what design_matrix reads of a candidate
    stage1_score: float


def shelf_set(folder, config: Config, questions: Path | None = None) -> QuestionSet:
    """The FinanceBench questions (``questions``, default ``financebench/questions.jsonl`` of the data)
    with gold, asked of the index in ``folder`` (the FinanceBench filings; questions about filings the
    index lacks are left out by :func:`runnable`)."""
    path = Path(questions) if questions else financebench_dir() / "questions.jsonl"
    fmt, qs = load_questions(path)
    index = load_index(folder, config=config)
    return QuestionSet(SHELF_SET, path, fmt, qs, load_gold(fmt, qs, path, index), index, str(folder))


def load_sets(paths, config: Config, *, progress: bool = False, shelf_index=None) -> list[QuestionSet]:
    """The question sets in ``paths`` with gold, each with the reference index of its corpus, and with
    ``shelf_index`` (a folder) the FinanceBench questions on that index (:func:`shelf_set`) last."""
    indexes: dict[str, object] = {}
    out = []
    for p in paths:
        p = Path(p)
        fmt, questions = load_questions(p)
        corpus = "papers" if fmt == "multimodal" else "10k"
        if corpus not in indexes:
            indexes[corpus] = reference_index(corpus, config=config, progress=progress)
        out.append(QuestionSet(p.stem, p, fmt, questions, load_gold(fmt, questions, p, indexes[corpus]),
                               indexes[corpus]))
    if shelf_index:
        out.append(shelf_set(shelf_index, config))
    return out


def set_companies(sets: list[QuestionSet]) -> dict[str, dict[str, str]]:
    """``{set name: {doc: company key}}`` agreed across ``sets`` (:func:`ppkit.bench.fit.cv.company_keys`)."""
    return company_keys({qs.name: catalog_of(qs.index) for qs in sets})


def question_companies(qs: QuestionSet, qid: str, companies: dict[str, dict[str, str]]) -> frozenset:
    """The companies a question is about (keys of :func:`set_companies`; a document without one is its own)."""
    keys = companies.get(qs.name, {})
    return frozenset(keys.get(d, d) for d in question_docs(qs, qid))


def question_docs(qs: QuestionSet, qid: str) -> list[str]:
    """The indexed documents a question is about (its gold's, as the retrieval benchmark takes them)."""
    return qs.gold.docs.get(qid) or sorted({split_section_id(sid)[0] for sid in qs.gold.qrels[qid]})


def runnable(qs: QuestionSet) -> list[dict]:
    """The questions of ``qs`` with gold in its index."""
    trees = qs.index.trees
    return [q for q in qs.questions if q["qid"] in qs.gold.qrels
            and all(split_section_id(sid)[0] in trees for sid in qs.gold.qrels[q["qid"]])]


class _Recorder:
    """A re-ranker that records the features and candidates of every call, then defers to ``inner``."""

    def __init__(self, inner: StructuralReranker):
        self.inner, self.name, self.uses_search_text = inner, inner.name, inner.uses_search_text
        self.calls, self.last_notes = inner.calls, inner.last_notes
        self.seen: list[tuple[dict, list]] = []  # (features, candidates) per call

    def rerank(self, question, candidates):
        if candidates:
            self.seen.append((self.inner.features(question, candidates), list(candidates)))
        return self.inner.rerank(question, candidates)


def label(cands, g) -> np.ndarray:
    """1 for each candidate whose line range holds a gold heading line of ``g``."""
    return np.array([1.0 if covered([Sent(c.doc, ((c.line_start, c.line_end),), 0)], g) else 0.0 for c in cands])


def collect(sets: list[QuestionSet], *, on_retrieval=None, views: dict | None = None,
            structural: dict | None = None, options: dict | None = None,
            companies: dict | None = None) -> list[Group]:
    """Retrieve every runnable question with the structural re-ranker and record one Group per re-rank call.

    ``on_retrieval(qs, q, retrieval)`` is called with each retrieval (the caller's in-sample scoring);
    ``views`` / ``structural``: per set name, the index view and structural re-ranker to use;
    ``options``: retrieve options (:class:`ppkit.retrieval.retrieve.RetrieveOptions` fields) for stage 1;
    ``companies``: :func:`set_companies` of ``sets`` (computed when not given).
    """
    companies = companies if companies is not None else set_companies(sets)
    groups = []
    for qs in sets:
        view = (views or {}).get(qs.name) or bench_view(qs.index)
        rec = _Recorder((structural or {}).get(qs.name) or StructuralReranker.for_index(view, path_vectors=False))
        for q in runnable(qs):
            g = gold_lines(qs.gold.qrels[q["qid"]], view.trees)
            rec.seen.clear()
            r = view.retrieve(q["text"], k=5, reranker=rec, **(options or {}))
            if on_retrieval is not None:
                on_retrieval(qs, q, r)
            for feats, cands in rec.seen:
                groups.append(Group(f"{qs.name}:{q['qid']}", qs.name, question_companies(qs, q["qid"], companies),
                                    feats, np.array([c.stage1_score for c in cands]),
                                    np.array([not c.recall for c in cands]), label(cands, g)))
    return groups


def _names(domain_rules: bool) -> tuple[str, ...]:
    return tuple(f for f in FEATURES if domain_rules or f != "statement")


def _fit(groups: list[Group], C: float, domain_rules: bool) -> tuple[np.ndarray, float]:
    try:
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        raise MissingDependency("fitting the re-ranker needs scikit-learn: pip install 'ppkit[bench]'") from None
    use = [g for g in groups if g.y.any()]
    names = _names(domain_rules)
    x = np.vstack([g.x(names) for g in use])
    y = np.concatenate([g.y for g in use])
    m = LogisticRegression(C=C, class_weight="balanced", max_iter=2000).fit(x, y)
    return m.coef_[0], float(m.intercept_[0])


def _order(g: Group, p: np.ndarray, domain_rules: bool) -> np.ndarray:
    """Candidate indices best first, as FittedReranker orders them (anchors aside)."""
    last = g.added if not domain_rules else np.zeros(len(p), bool)
    return np.array(sorted(range(len(p)), key=lambda i: (bool(last[i]), -round(float(p[i]), 4), i)), dtype=int)


def _proxy(g: Group, order: np.ndarray, p: np.ndarray, threshold: float | None = None) -> dict:
    """Held-out candidate-level scores of one group: hit@3, recall@5, and recall at the shrunk k."""
    pos = g.y.sum()
    out = {"hit3": float(g.y[order[:3]].any()), "recall5": float(g.y[order[:5]].sum() / pos)}
    if threshold is not None:
        keep = keep_count(p[order], 5, threshold)
        out.update(k=keep, recall_k=float(g.y[order[:keep]].sum() / pos))
    return out


def _predict(model_coef, intercept, g: Group, domain_rules: bool) -> np.ndarray:
    return sigmoid(g.x(_names(domain_rules)) @ model_coef + intercept)


def choose(groups: list[Group]) -> dict:
    """The settings (``C``, ``domain_rules``, ``threshold``) chosen by leave-one-company-out over ``groups``.

    Returns ``{"C", "domain_rules", "threshold", "grid": [{C, domain_rules, score, hit3, recall5}],
    "thresholds": [{threshold, recall_k, k_mean}], "folds": n}``.
    """
    by_q: dict[str, frozenset] = {}
    for g in groups:
        by_q[g.qid] = by_q.get(g.qid, frozenset()) | g.companies
    folds = loco_folds(by_q)
    grid = []
    preds: dict[tuple, list] = {}  # (C, domain) -> [(group, p)] held out
    for domain in (True, False):
        for C in C_GRID:
            held = []
            for f in folds:
                train = set(f.train)
                tr = [g for g in groups if g.qid in train]
                if not any(g.y.any() for g in tr):
                    continue
                coef, b = _fit(tr, C, domain)
                test = set(f.test)
                held += [(g, _predict(coef, b, g, domain)) for g in groups if g.qid in test and g.y.any()]
            scores = [_proxy(g, _order(g, p, domain), p) for g, p in held]
            hit3 = float(np.mean([s["hit3"] for s in scores])) if scores else 0.0
            rec5 = float(np.mean([s["recall5"] for s in scores])) if scores else 0.0
            grid.append({"C": C, "domain_rules": domain, "score": round((hit3 + rec5) / 2, 4),
                         "hit3": round(hit3, 4), "recall5": round(rec5, 4)})
            preds[(C, domain)] = held
    best = max(grid, key=lambda r: r["score"])  # the first of equals: domain rules on, strongest regularisation
    held = preds[(best["C"], best["domain_rules"])]
    thresholds = []
    for t in THRESHOLD_GRID:
        s = [_proxy(g, _order(g, p, best["domain_rules"]), p, t) for g, p in held]
        thresholds.append({"threshold": t, "recall_k": round(float(np.mean([x["recall_k"] for x in s])), 4) if s else 0.0,
                           "k_mean": round(float(np.mean([x["k"] for x in s])), 3) if s else 0.0})
    ok = [r for r in thresholds if r["recall_k"] >= best["recall5"] - THRESHOLD_SLACK]
    threshold = max(r["threshold"] for r in ok) if ok else 0.0
    return {"C": best["C"], "domain_rules": best["domain_rules"], "threshold": threshold, "grid": grid,
            "thresholds": thresholds, "folds": len(folds)}


def fit_model(groups: list[Group], settings: dict, meta: dict | None = None) -> FittedModel:
    """The logistic model on all ``groups`` with ``settings`` (from :func:`choose`)."""
    domain = settings["domain_rules"]
    coef, b = _fit(groups, settings["C"], domain)
    return FittedModel(_names(domain), tuple(float(c) for c in coef), b, float(settings["threshold"]), domain,
                       meta or {})


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _commit() -> str:
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "ppkit"], cwd=here, capture_output=True,
                               text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head.stdout.strip() + ("+uncommitted" if dirty.stdout.strip() else "") if head.returncode == 0 else "unknown"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ppkit.bench.fit.rerank", description=__doc__.split("\n\n")[0])
    ap.add_argument("--with", dest="more", action="append", default=[], metavar="FILE",
                    help="another question set to fit on (repeatable)")
    ap.add_argument("--shelf-index", metavar="DIR",
                    help="also fit on the FinanceBench questions asked of this index of the FinanceBench filings")
    ap.add_argument("--out", default=str(DEFAULT_MODEL_PATH), help=f"where to write the model ({DEFAULT_MODEL_PATH.name})")
    args = ap.parse_args(argv)
    config = Config.from_env()
    paths = [benchmark_path(n) for n in VISIBLE_SETS] + [Path(p) for p in args.more]
    sets = load_sets(paths, config, shelf_index=args.shelf_index)
    groups = collect(sets)
    settings = choose(groups)
    meta = {"fitted_by": "python -m ppkit.bench.fit.rerank", "commit": _commit(),
            "training_sets": [{"file": qs.path.name, "questions": len(runnable(qs)), "sha256": _sha256(qs.path),
                               **({"index": qs.index_dir} if qs.index_dir else {})} for qs in sets],
            "groups": len(groups), "candidates": int(sum(len(g.y) for g in groups)),
            "positives": int(sum(g.y.sum() for g in groups)),
            "model": "logistic regression (scikit-learn lbfgs, class_weight=balanced) on z-scored features",
            "chosen_by": "leave-one-company-out over the training sets (ppkit.bench.fit.rerank.choose)",
            "settings": settings}
    model = fit_model(groups, settings, meta)
    out = Path(args.out)
    atomic_write(out, (json.dumps(model.to_dict(), indent=1) + "\n").encode("utf-8"))
    print(f"wrote {out}: C={settings['C']} domain_rules={settings['domain_rules']} threshold={settings['threshold']}",
          file=sys.stderr)
    for f, c in zip(model.features, model.coef):
        print(f"  {f:10s} {c:+.3f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
