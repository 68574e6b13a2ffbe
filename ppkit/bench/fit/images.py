"""Fitting the offline image selection's thresholds, leave-one-paper-out.

The selection (:func:`ppkit.answer.images.select_images`) has two thresholds: ``threshold``
(the least share of the question's idf-weighted terms an image's caption and discussion must
hold) and ``ratio`` (the least share of the best image's score); the scoring has two priors
(:func:`ppkit.answer.images.with_priors`: a decay per section rank and a factor for images only
recall reached); ``max_images`` caps how many are shown; with ``--stop-at``, ``stop_at`` (a strong match
shows alone) joins them. They are fit on the multimodal benchmark by a grid search that maximises
image hit + image precision, and reported two ways:

* **in-sample**: one fit over all questions, scored on the same questions (optimistic);
* **leave-one-paper-out (LOPO)**: for each paper P, a fit over the questions that do not touch
  P, applied to the questions whose first paper is P; every question is scored once, by a fit
  that never saw its paper. This is the number to quote for unseen questions.

Nothing is fit to single questions: the grid has five parameters (six with ``--stop-at``) shared by all. Retrieval runs
once per question (at the largest k); each k scores the first k sections.

    python -m ppkit.bench.fit.images --questions ../shared/data/benchmarks/multimodal_queries.json --k 1 --k 3 --k 5
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from ...answer.images import ImageChoice, score_images, select_images, with_priors
from ...core.config import Config
from ...pipeline import default_reranker, reference_index
from ..data.gold import load_gold
from ..data.loaders import load_questions
from ..measures.metrics import image_hit, image_key, image_precision, mean

__all__ = ["Scored", "collect", "evaluate", "fit", "lopo", "explain", "GRID_THRESHOLDS", "GRID_RATIOS"]

GRID_THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(1, 11))  # 0.05 .. 0.50
GRID_RATIOS = (0.0, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
GRID_RANK_DECAY = (1.0, 0.7, 0.5)
GRID_RECALLED = (1.0, 0.5)
GRID_MAX_IMAGES = (3,)  # (1, 2, 3) measured worse out of sample (leave-one-paper-out): too many knobs for 20 questions
GRID_STOP_AT = (None,)  # ``--stop-at``: also fit select_images(stop_at=...) over (None, 0.3, 0.4, 0.5, 0.6)


@dataclass(frozen=True)
class Scored:
    """One question at one k: its papers, its gold images and every candidate image scored."""

    qid: str
    question: str
    papers: tuple[str, ...]
    gold: tuple[str, ...]
    scored: tuple[ImageChoice, ...]
    sections: tuple = ()


def collect(index, questions: list[dict], gold, ks: list[int]) -> dict[int, list[Scored]]:
    """Retrieve each question once (largest k) and score the candidate images of the first k sections."""
    reranker = default_reranker(index)
    out: dict[int, list[Scored]] = {k: [] for k in ks}
    for q in questions:
        qid = q["qid"]
        if qid not in gold.qrels:
            continue
        r = index.retrieve(q["text"], k=max(ks), reranker=reranker)
        papers = tuple(gold.docs.get(qid) or ())
        g = tuple(gold.images.get(qid, {}))
        for k in ks:
            secs = r.sections[:k]
            raw = score_images(q["text"], secs, rank_decay=1.0, recalled=1.0)  # priors applied per grid point
            out[k].append(Scored(qid, q["text"], papers, g, tuple(raw), tuple(secs)))
    return out


Params = tuple[float, float, float, float, int, float | None]  # (threshold, ratio, rank_decay, recalled, max_images, stop_at)


def evaluate(rows: list[Scored], params: tuple) -> dict:
    """Image hit and precision of the selection with these parameters over ``rows``."""
    threshold, ratio, decay, recalled, max_images, *rest = params
    stop_at = rest[0] if rest else None
    per = []
    for r in rows:
        scored = with_priors(list(r.scored), rank_decay=decay, recalled=recalled)
        chosen = select_images(r.question, list(r.sections), threshold=threshold, ratio=ratio, scored=scored,
                               max_images=max_images, stop_at=stop_at)
        keys = [image_key(c.section.doc, c.image.path) for c in chosen]
        per.append({"hit": image_hit(keys, list(r.gold)), "precision": image_precision(keys, list(r.gold)),
                    "shown": len(keys), "chosen": keys})
    return {"image_hit": mean(per, "hit"), "image_precision": mean(per, "precision"),
            "images_shown_mean": mean(per, "shown"), "per_question": per}


def _objective(m: dict) -> float:
    return (m["image_hit"] or 0.0) + (m["image_precision"] or 0.0)


def fit(rows: list[Scored], stops: tuple = GRID_STOP_AT) -> Params:
    """The grid point with the best hit + precision over ``rows`` (ties: the first in grid order)."""
    best = None
    for stop in stops:
        for m in GRID_MAX_IMAGES:
            for decay in GRID_RANK_DECAY:
                for rec in GRID_RECALLED:
                    for t in GRID_THRESHOLDS:
                        for ra in GRID_RATIOS:
                            v = _objective(evaluate(rows, (t, ra, decay, rec, m, stop)))
                            if best is None or v > best[0] + 1e-9:
                                best = (v, (t, ra, decay, rec, m, stop))
    assert best is not None
    return best[1]


def lopo(rows: list[Scored], stops: tuple = GRID_STOP_AT) -> dict:
    """Leave-one-paper-out: each question scored by a fit on the questions that do not touch its first paper."""
    folds, per = {}, {}
    for paper in sorted({r.papers[0] for r in rows if r.papers}):
        train = [r for r in rows if paper not in r.papers]
        test = [r for r in rows if r.papers and r.papers[0] == paper]
        params = fit(train, stops)
        folds[paper] = {"params": list(params), "n_train": len(train), "n_test": len(test)}
        for r, m in zip(test, evaluate(test, params)["per_question"]):
            per[r.qid] = m
    vals = list(per.values())
    return {"image_hit": mean(vals, "hit"), "image_precision": mean(vals, "precision"),
            "images_shown_mean": mean(vals, "shown"), "folds": folds, "per_question": per}


def _figure_of(c: ImageChoice) -> tuple[str, str]:
    return (c.section.doc, c.image.figure or c.image.path)


def explain(r: Scored, chosen_keys: list[str]) -> dict:
    """Why one question's selection hit or missed: what was shown, where each reference image stood.

    ``cause`` is ``hit``, ``no reference image``, ``not a candidate`` (no reference file among the image
    channel's candidates), ``same figure, another file`` (a shown file shares a reference file's caption
    number) or ``ranked below`` (a reference file was a candidate but not chosen). Each shown file is
    ``reference``, ``same figure as a reference`` or ``other``; each reference file ``shown``, ``candidate N``
    (its place among the candidates by their match, before the priors) or ``not a candidate``.
    """
    by_key = {}
    for i, c in enumerate(r.scored):
        by_key.setdefault(image_key(c.section.doc, c.image.path), (i, c))
    gold_figs = {_figure_of(by_key[g][1]) for g in r.gold if g in by_key}
    shown = []
    for k in chosen_keys:
        c = by_key[k][1]
        what = "reference" if k in r.gold else "same figure as a reference" if _figure_of(c) in gold_figs else "other"
        shown.append({"image": k, "label": c.image.label[:80], "is": what})
    reference = [{"image": g, "is": "shown" if g in chosen_keys else f"candidate {by_key[g][0] + 1}" if g in by_key
                  else "not a candidate", "label": by_key[g][1].image.label[:80] if g in by_key else ""}
                 for g in r.gold]
    if not r.gold:
        cause = "no reference image"
    elif set(chosen_keys) & set(r.gold):
        cause = "hit"
    elif not any(g in by_key for g in r.gold):
        cause = "not a candidate"
    elif any(s["is"] == "same figure as a reference" for s in shown):
        cause = "same figure, another file"
    else:
        cause = "ranked below"
    return {"qid": r.qid, "cause": cause, "shown": shown, "reference": reference}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ppkit.bench.fit.images", description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", required=True)
    ap.add_argument("--k", type=int, action="append")
    ap.add_argument("--json")
    ap.add_argument("--explain", action="store_true",
                    help="list, per question at the largest k, what was shown (LOPO parameters) and where each reference image stood")
    ap.add_argument("--stop-at", action="store_true",
                    help="also fit the strong-match stop (select_images stop_at) over None, 0.3 .. 0.6")
    a = ap.parse_args(argv)
    stops = (None, 0.3, 0.4, 0.5, 0.6) if a.stop_at else GRID_STOP_AT
    ks = sorted(set(a.k or [3, 5]))
    fmt, questions = load_questions(a.questions)
    index = reference_index("papers", config=Config.from_env())
    gold = load_gold(fmt, questions, Path(a.questions), index)
    rows = collect(index, questions, gold, ks)
    out = {}
    for k in ks:
        params = fit(rows[k], stops)
        ins = evaluate(rows[k], params)
        out[str(k)] = {"in_sample": {"params": list(params), **ins}, "lopo": lopo(rows[k], stops)}
        lo = out[str(k)]["lopo"]
        print(f"k={k}: in-sample (threshold, ratio, rank decay, recalled, max images, stop at = {params}) hit {ins['image_hit']:.2f} "
              f"precision {ins['image_precision'] or 0:.2f} shown {ins['images_shown_mean']:.2f}; LOPO hit "
              f"{lo['image_hit']:.2f} precision {lo['image_precision'] or 0:.2f} shown {lo['images_shown_mean']:.2f}; "
              f"folds {json.dumps({p: f['params'] for p, f in lo['folds'].items()})}")
    if a.explain:
        k = ks[-1]
        per, causes = out[str(k)]["lopo"]["per_question"], []
        for r in rows[k]:
            if r.qid not in per:
                continue
            e = per[r.qid]["explain"] = explain(r, per[r.qid]["chosen"])
            causes.append(e["cause"])
            print(f"{r.qid} [{e['cause']}] {r.question[:90]}")
            for x in e["shown"]:
                print(f"    shown {x['is']:<26} {x['image']}: {x['label']}")
            for x in e["reference"]:
                print(f"    ref   {x['is']:<26} {x['image']}: {x['label']}")
        print(f"k={k} LOPO by cause: " + ", ".join(f"{c} {causes.count(c)}" for c in sorted(set(causes))))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
