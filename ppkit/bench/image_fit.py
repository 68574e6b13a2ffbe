"""Fitting the offline image selection's thresholds, leave-one-paper-out.

The selection (:func:`ppkit.answer.images.select_images`) has two thresholds: ``threshold``
(the least share of the question's idf-weighted terms an image's caption and discussion must
hold) and ``ratio`` (the least share of the best image's score). They are fit on the
multimodal benchmark by a grid search that maximises image hit + image precision, and reported
two ways:

* **in-sample**: one fit over all questions, scored on the same questions (optimistic);
* **leave-one-paper-out (LOPO)**: for each paper P, a fit over the questions that do not touch
  P, applied to the questions whose first paper is P; every question is scored once, by a fit
  that never saw its paper. This is the number to quote for unseen questions.

Nothing is fit to single questions: the grid has two parameters shared by all. Retrieval runs
once per question (at the largest k); each k scores the first k sections.

    python -m ppkit.bench.image_fit --questions ../shared/data/benchmarks/multimodal_queries.json --k 1 --k 3 --k 5
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from ..answer.images import ImageChoice, score_images, select_images
from ..core.config import Config
from ..pipeline import default_reranker, reference_index
from .gold import load_gold
from .loaders import load_questions
from .metrics import image_hit, image_key, image_precision, mean

__all__ = ["Scored", "collect", "evaluate", "fit", "lopo", "GRID_THRESHOLDS", "GRID_RATIOS"]

GRID_THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(1, 13))  # 0.05 .. 0.60
GRID_RATIOS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


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
            out[k].append(Scored(qid, q["text"], papers, g, tuple(score_images(q["text"], secs)), tuple(secs)))
    return out


def evaluate(rows: list[Scored], threshold: float, ratio: float) -> dict:
    """Image hit and precision of the selection with these thresholds over ``rows``."""
    per = []
    for r in rows:
        chosen = select_images(r.question, list(r.sections), threshold=threshold, ratio=ratio, scored=list(r.scored))
        keys = [image_key(c.section.doc, c.image.path) for c in chosen]
        per.append({"hit": image_hit(keys, list(r.gold)), "precision": image_precision(keys, list(r.gold)),
                    "shown": len(keys)})
    return {"image_hit": mean(per, "hit"), "image_precision": mean(per, "precision"),
            "images_shown_mean": mean(per, "shown"), "per_question": per}


def _objective(m: dict) -> float:
    return (m["image_hit"] or 0.0) + (m["image_precision"] or 0.0)


def fit(rows: list[Scored]) -> tuple[float, float]:
    """The (threshold, ratio) of the grid with the best hit + precision over ``rows`` (ties: the lower pair)."""
    best = None
    for t in GRID_THRESHOLDS:
        for ra in GRID_RATIOS:
            v = _objective(evaluate(rows, t, ra))
            if best is None or v > best[0] + 1e-9:
                best = (v, t, ra)
    assert best is not None
    return best[1], best[2]


def lopo(rows: list[Scored]) -> dict:
    """Leave-one-paper-out: each question scored by a fit on the questions that do not touch its first paper."""
    folds, per = {}, {}
    for paper in sorted({r.papers[0] for r in rows if r.papers}):
        train = [r for r in rows if paper not in r.papers]
        test = [r for r in rows if r.papers and r.papers[0] == paper]
        t, ra = fit(train)
        folds[paper] = {"threshold": t, "ratio": ra, "n_train": len(train), "n_test": len(test)}
        for r, m in zip(test, evaluate(test, t, ra)["per_question"]):
            per[r.qid] = m
    vals = list(per.values())
    return {"image_hit": mean(vals, "hit"), "image_precision": mean(vals, "precision"),
            "images_shown_mean": mean(vals, "shown"), "folds": folds}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ppkit.bench.image_fit", description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", required=True)
    ap.add_argument("--k", type=int, action="append")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    ks = sorted(set(a.k or [3, 5]))
    fmt, questions = load_questions(a.questions)
    index = reference_index("papers", config=Config.from_env())
    gold = load_gold(fmt, questions, Path(a.questions), index)
    rows = collect(index, questions, gold, ks)
    out = {}
    for k in ks:
        t, ra = fit(rows[k])
        ins = evaluate(rows[k], t, ra)
        ins.pop("per_question")
        out[str(k)] = {"in_sample": {"threshold": t, "ratio": ra, **ins}, "lopo": lopo(rows[k])}
        lo = out[str(k)]["lopo"]
        print(f"k={k}: in-sample (threshold {t}, ratio {ra}) hit {ins['image_hit']:.2f} precision "
              f"{ins['image_precision'] or 0:.2f} shown {ins['images_shown_mean']:.2f}; LOPO hit "
              f"{lo['image_hit']:.2f} precision {lo['image_precision'] or 0:.2f} shown {lo['images_shown_mean']:.2f} "
              f"folds {json.dumps({p: (f['threshold'], f['ratio']) for p, f in lo['folds'].items()})}")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
