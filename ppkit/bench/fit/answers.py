"""The answer selector fitted and calibrated: ``ppkit bench fit-answers``.

:func:`gather` asks every development question as ``ppkit ask`` would (retrieval, the statements a measure needs)
and keeps, instead of an answer, what the selector sees: the question read (:func:`ppkit.answer.question.read_question`),
its scope decision, and every type-compatible candidate (:mod:`ppkit.answer.candidates`) with its features
(:func:`ppkit.answer.select.features`; the focus similarity for the best :data:`SHORTLIST` by the other features)
and its **label**: the strict judge's verdict of the block it would make
(:func:`ppkit.bench.measures.answer_judge.judge_block`).

:func:`fit` fits the feature weights by a **conditional logit** (for each question, a softmax over its
candidates; the likelihood of the candidates the judge finds correct; L2 penalty), then a **Platt calibration**
of the best candidate's score into the probability that it is correct, then the **threshold** of that confidence
above which a block states its answer (the lowest that keeps the share of wrong blocks at or under
``max_wrong``). :func:`loco` does all three **leave-one-company-out**: for each company, fitted on the others,
decided on its questions; the out-of-sample table is the headline, the in-sample one beside it. Nothing is fitted
on a sealed set (:func:`gather` refuses one).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from ...answer.candidates import candidates
from ...answer.question import in_scope, read_question
from ...answer.scope import missing_from, refused
from ...answer.select import (FEATURES, Selector, _closest, admissible, agreement, compatible, features,
                              load_selector, rank_candidates, share)
from ...answer.synth import cached_vectors
from ...core.errors import InvalidInput
from ...core.text import clip
from ..measures.answer_judge import judge_block, out_of_scope

__all__ = ["QuestionData", "Asked", "ask_all", "read_all", "gather", "fit", "loco", "evaluate", "fit_markdown", "SHORTLIST"]

SHORTLIST = 64
_KIND_OF = {"cell": "figure", "clause": "figure", "computed": "computed", "which": "figure", "yes_no": "yes_no",
            "passage": "passage", "not_meaningful": "not_meaningful"}


@dataclass
class QuestionData:
    """One development question as the selector sees it."""

    qid: str
    company: str
    qtype: str
    asked_type: str
    reference: str
    scope_verdict: str  # the judge's verdict of a "not found" block (used when the scope check refuses)
    refused: bool  # the scope check: a name or year of the question no section mentions
    hedge_verdict: str  # the judge's verdict of the closest block when nothing is compatible
    feats: np.ndarray = field(default_factory=lambda: np.zeros((0, len(FEATURES))))
    verdicts: list[str] = field(default_factory=list)
    hedged: list[str] = field(default_factory=list)  # each candidate's verdict when shown as "closest"
    texts: list[str] = field(default_factory=list)


class _Recorder:
    """A synthesizer that writes nothing and keeps what it was given (question, sections, analysis)."""

    name = "recorder"

    def __init__(self):
        self.calls: list[dict] = []
        self.seen = None

    def stream(self, question, sections, analysis=None):
        self.seen = (question, list(sections), analysis)
        return "", {}
        yield  # a generator

    def synthesize(self, question, sections, analysis=None):
        self.seen = (question, list(sections), analysis)
        return "", {}


def _company(q: dict) -> str:
    name = q.get("company") or q.get("doc") or ""
    return re.sub(r"[^a-z0-9]", "", name.casefold().split("_")[0]) or "-"


@dataclass(frozen=True)
class Asked:
    """A development question as asked: the question dict, the question searched, the sections the answer stage
    got, the analysis, and the index's embedder."""

    q: dict
    question: str
    sections: list
    analysis: object
    embedder: object = None


def ask_all(index, questions: list[dict], *, k: int = 5, corpora: dict | None = None, progress=None) -> list[Asked]:
    """Every question with a reference asked as ``ppkit ask`` would, keeping what the answer stage gets.

    ``corpora`` ``{corpus: index}`` routes questions of a set spanning corpora."""
    if any(q.get("sealed") for q in questions):
        raise InvalidInput("a sealed question set is never fitted on: use development sets")
    out = []
    for q in questions:
        if not (q.get("answer") or "").strip():
            continue
        corpus = q.get("corpus") or ""
        ix = corpora.get(corpus) if corpora and corpus else index
        if ix is None:
            continue
        rec = _Recorder()
        ix.ask(q["text"], k, synthesizer=rec, verify=False)
        question, sections, analysis = rec.seen
        out.append(Asked(q, question, sections, analysis, getattr(ix, "embedder", None)))
        if progress is not None:
            progress(out[-1])
    return out


def read_all(asked: list[Asked], *, selector: Selector | None = None) -> list[QuestionData]:
    """What the selector sees of each asked question (see the module docstring); ``selector`` orders the shortlist
    whose similarity is computed (default: the package's)."""
    selector = selector or load_selector()
    return [_read(a, selector) for a in asked]


def _read(a: Asked, selector: Selector) -> QuestionData:
    q, question, sections, analysis = a.q, a.question, a.sections, a.analysis
    ref = q["answer"].strip()
    qtype = q.get("question_type") or q.get("category") or ""
    facts = q.get("key_facts") or ()

    def judge(text, kind):
        return judge_block(text, kind, ref, question, qtype=qtype, key_facts=facts)["verdict"]

    asked = in_scope(read_question(question, analysis), sections)
    missing = missing_from(question, sections, analysis)
    every = candidates(asked, sections) if sections else []
    agree = agreement(every)
    cands = [c for c in every if compatible(asked, c)]
    ranked = rank_candidates(asked, cands, selector, None)
    short = {id(c) for _, c, _ in ranked[:SHORTLIST]}
    labels = [judge(c.text, _KIND_OF[c.kind]) for c in cands]
    sims = {}
    need = [c for c, v in zip(cands, labels) if id(c) in short or v == "correct"]
    if a.embedder is not None and need:
        vecs = cached_vectors(a.embedder, tuple([asked.focus or asked.question] + [clip(c.context, 300) for c in need]))
        sims = {id(c): float(v @ vecs[0]) for c, v in zip(need, vecs[1:])}
    rows, hedged, texts = [], [], []
    feats = [features(asked, c, sims.get(id(c), 0.0), agree.get(id(c), 0.0)) for c in cands]
    keep = [i for i, f in enumerate(feats) if admissible(asked, cands[i], f)]
    cands, feats, labels = [cands[i] for i in keep], [feats[i] for i in keep], [labels[i] for i in keep]
    for c, fd in zip(cands, feats):
        rows.append([fd[f] for f in FEATURES])
        shown = c.extra.get("sentence") or c.wide if c.kind == "clause" else c.text
        hedged.append(judge(f"Not stated directly; the closest passage: {shown}", "closest"))
        texts.append(clip(c.text, 160))
    fallback = None if rows or not sections else _closest(asked, every, [], None)
    return QuestionData(q["qid"], _company(q), qtype, asked.type, ref,
                        judge("Not found: the retrieved sections never mention it.", "not_found"),
                        refused(question, sections, analysis, missing),
                        judge(fallback.text, "closest") if fallback is not None else
                        judge("Not found: no retrieved passage is about it.", "not_found"),
                        np.asarray(rows, dtype=float).reshape(-1, len(FEATURES)), labels, hedged, texts)


def gather(index, questions: list[dict], *, k: int = 5, corpora: dict | None = None, selector: Selector | None = None,
           progress=None) -> list[QuestionData]:
    """:func:`ask_all` then :func:`read_all`."""
    return read_all(ask_all(index, questions, k=k, corpora=corpora, progress=progress), selector=selector)


# ---- fitting ----------------------------------------------------------------------------------------------------

def _conditional_logit(data: list[QuestionData], l2: float = 0.1, steps: int = 400) -> np.ndarray:
    """Weights maximising, over questions with a correct candidate, log P(correct | question) under a softmax of
    ``features @ w``; gradient ascent with L2. Returns the weights (no bias: a softmax ignores it)."""
    items = [(d.feats, np.array([v == "correct" for v in d.verdicts], dtype=float)) for d in data
             if not d.refused and len(d.verdicts) and any(v == "correct" for v in d.verdicts)]
    w = np.zeros(len(FEATURES))
    if not items:
        return w
    lr = 0.5
    for _ in range(steps):
        grad = -l2 * w
        for x, y in items:
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            pos = y / y.sum()
            grad += x.T @ (pos - p)
        w += lr * grad / len(items)
    return w


def _best(d: QuestionData, w: np.ndarray) -> int | None:
    if d.refused or not len(d.verdicts):
        return None
    return int(np.argmax(d.feats @ w))


def _top(d: QuestionData, w: np.ndarray) -> tuple[int, float, float, float] | None:
    """(index, score, logit of its share, its computed feature) of the best candidate of ``d`` under ``w``
    (:func:`ppkit.answer.select.share`)."""
    if d.refused or not len(d.verdicts):
        return None
    s = d.feats @ w
    i = int(np.argmax(s))
    p = min(max(share(s), 1e-6), 1 - 1e-6)
    return i, float(s[i]), math.log(p / (1 - p)), float(d.feats[i][FEATURES.index("computed")])


def _platt(x: np.ndarray, correct: list[bool], steps: int = 3000) -> tuple[float, ...]:
    """The calibration ``(a, b, c, d)``: P(correct) = 1 / (1 + exp(-(a * score + b * logit(share) + c * computed +
    d))), by logistic regression of the best candidates' correctness on their score, share and computed feature."""
    if not len(x) or all(correct) or not any(correct):
        return 1.0, 0.0, 0.0, 0.0
    X = np.column_stack([x, np.ones(len(x))])
    y = np.asarray(correct, dtype=float)
    w = np.zeros(X.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(X @ w)))
        w += 0.5 * (X.T @ (y - p) / len(y) - 1e-3 * np.r_[w[:-1], 0.0])
    return tuple(float(v) for v in w)


def _decide(d: QuestionData, w: np.ndarray, bias: float, cal: tuple[float, ...], threshold: float) -> tuple[str, float | None]:
    """The verdict of the block the selector would write for ``d``, and its confidence."""
    if d.refused:
        return d.scope_verdict, None
    top = _top(d, w)
    if top is None:
        return d.hedge_verdict, None
    i, score, lead, computed = top
    a, b, c, e = (tuple(cal) + (0.0, 0.0, 0.0))[:4]
    z = a * (score + bias) + b * lead + c * computed + e  # lead: the logit of the best candidate's share
    conf = 1 / (1 + math.exp(-z)) if z > -60 else 0.0
    if conf >= threshold:
        return d.verdicts[i], conf
    return d.hedged[i], conf


def _threshold(data: list[QuestionData], w, bias, cal, max_wrong: float) -> float:
    """The lowest confidence threshold whose blocks are wrong for at most ``max_wrong`` of the judged questions."""
    best = 1.0
    for t in np.linspace(0.05, 0.95, 37):
        verdicts = [_decide(d, w, bias, cal, float(t))[0] for d in data]
        judged = [v for v in verdicts if v != "unjudged"]
        if judged and sum(v == "wrong" for v in judged) / len(judged) <= max_wrong:
            return float(t)
    return best


def fit(data: list[QuestionData], *, max_wrong: float = 0.05, l2: float = 0.1) -> Selector:
    """A :class:`ppkit.answer.select.Selector` fitted on ``data`` (weights, calibration, threshold)."""
    w = _conditional_logit(data, l2=l2)
    tops = [(t, d.verdicts[t[0]] == "correct") for d in data if (t := _top(d, w)) is not None]
    cal = _platt(np.array([[s, m, k] for (_, s, m, k), _ in tops]).reshape(-1, 3), [c for _, c in tops])
    t = _threshold(data, w, 0.0, cal, max_wrong)
    return Selector({f: round(float(x), 4) for f, x in zip(FEATURES, w)}, 0.0, tuple(round(x, 4) for x in cal),
                    round(t, 3))


def _vector(s: Selector) -> np.ndarray:
    return np.array([s.weights.get(f, 0.0) for f in FEATURES])


def evaluate(data: list[QuestionData], selector: Selector) -> list[dict]:
    """Each question's verdict and confidence under ``selector``."""
    w = _vector(selector)
    out = []
    for d in data:
        v, conf = _decide(d, w, selector.bias, selector.calibration, selector.threshold)
        i = _best(d, w)
        out.append({"qid": d.qid, "company": d.company, "type": d.qtype, "asked": d.asked_type, "verdict": v,
                    "confidence": conf, "chosen": d.texts[i] if i is not None else "",
                    "selected_correct": i is not None and d.verdicts[i] == "correct",
                    "any_correct": any(x == "correct" for x in d.verdicts),
                    "scope": out_of_scope(d.reference, d.qtype), "hedged": v in ("partial",) or
                    (i is not None and conf is not None and conf < selector.threshold)})
    return out


def loco(data: list[QuestionData], *, max_wrong: float = 0.05, l2: float = 0.1) -> list[dict]:
    """Leave-one-company-out: each company's questions decided by a selector fitted on the others."""
    by = defaultdict(list)
    for d in data:
        by[d.company].append(d)
    out = []
    for company, held in by.items():
        train = [d for d in data if d.company != company]
        out += evaluate(held, fit(train, max_wrong=max_wrong, l2=l2))
    return out


def summary(rows: list[dict]) -> dict:
    """Counts and rates of :func:`evaluate` rows (judged rows only)."""
    judged = [r for r in rows if r["verdict"] != "unjudged"]
    n = len(judged)
    c = {v: sum(r["verdict"] == v for r in judged) for v in ("correct", "wrong", "partial", "missing", "abstained")}
    answerable = [r for r in judged if not r["scope"]]
    return {"n": n, **c, "correct_rate": c["correct"] / n if n else None, "wrong_rate": c["wrong"] / n if n else None,
            "hedged_rate": sum(r["hedged"] for r in answerable) / len(answerable) if answerable else None,
            "abstained_rate": c["abstained"] / len(answerable) if answerable else None,
            "selected_correct": sum(r["selected_correct"] for r in judged),
            "any_correct": sum(r["any_correct"] for r in judged)}


def calibration_bins(rows: list[dict], edges=(0.0, 0.2, 0.4, 0.6, 0.8, 1.0)) -> list[dict]:
    """The share of best candidates that are correct by confidence bin (questions with a confidence)."""
    rows = [r for r in rows if r["confidence"] is not None and r["verdict"] != "unjudged"]
    out = []
    for lo, hi in zip(edges, edges[1:]):
        inside = [r for r in rows if lo <= r["confidence"] < hi or hi == edges[-1] and r["confidence"] == hi]
        if inside:
            k = sum(r["selected_correct"] for r in inside)
            out.append({"bin": f"{lo:.1f}-{hi:.1f}", "n": len(inside), "correct": k, "share": k / len(inside)})
    return out


def _rate(x) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def fit_markdown(in_sample: list[dict], out_of_sample: list[dict], selector: Selector) -> str:
    """The in-sample and leave-one-company-out tables, by type, and the calibration of the out-of-sample one."""
    head = ("| rows | n | correct | wrong | partial | missing | abstained | correct rate | wrong rate | hedged rate "
            "| best candidate correct | a correct candidate exists |")
    sep = "| " + " | ".join(["---"] * 12) + " |"

    def line(label, rows):
        s = summary(rows)
        return (f"| {label} | {s['n']} | {s['correct']} | {s['wrong']} | {s['partial']} | {s['missing']} | "
                f"{s['abstained']} | {_rate(s['correct_rate'])} | {_rate(s['wrong_rate'])} | {_rate(s['hedged_rate'])} "
                f"| {s['selected_correct']} | {s['any_correct']} |")

    out = [head, sep, line("leave-one-company-out", out_of_sample), line("in-sample", in_sample), "",
           "By question type (leave-one-company-out):", "", head, sep]
    types = sorted({r["type"] or "-" for r in out_of_sample})
    out += [line(t, [r for r in out_of_sample if (r["type"] or "-") == t]) for t in types]
    out += ["", "Calibration (leave-one-company-out): the share of best candidates correct by confidence", "",
            "| confidence | n | correct | share |", "| --- | --- | --- | --- |"]
    out += [f"| {b['bin']} | {b['n']} | {b['correct']} | {b['share']:.2f} |" for b in calibration_bins(out_of_sample)]
    w = ", ".join(f"{k} {v:+.3f}" for k, v in selector.weights.items())
    cal = ", ".join(f"{x:.3f}" for x in selector.calibration)
    out += ["", f"Weights (all data): {w}; calibration (score, logit share, computed, constant) {cal}; "
                f"threshold {selector.threshold:.2f}"]
    return "\n".join(out)
