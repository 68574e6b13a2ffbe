"""Fitting the section alignment's weights and thresholds to human alignments, in-sample and leave-one-pair-out.

What is fitted (:class:`ppkit.compare.align.AlignWeights`), on the visible human alignments only (the agreements'
Articles 1-4 of Emerson, the papers whole; the Corning pair is never fitted on):

1. the first pass's weights: a **conditional logit** (McFadden 1973): for each section of A that the person gave
   a counterpart, a softmax over all of B's sections, maximising the log of the probability mass on the person's
   counterparts (sure and likely), with an L2 penalty :data:`L2` (L-BFGS, analytic gradient);
2. the second pass's weights, the same way, on the first-pass and consistency signals, the latter computed from
   the first pass's fitted score;
3. ``none_z`` on :data:`NONE_GRID` and ``none_stand`` on :data:`STAND_GRID`: the pair of values that makes the
   most sections right (first counterpart right, or no counterpart where the person gave none); on ties, the one
   that leaves the fewest of all sections without a counterpart, then the lowest ``none_stand``;
4. ``extra`` on :data:`EXTRA_GRID`: the best pairs F1 over all links, the smallest on ties.

:func:`fit_weights` fits on the pairs it is given; :func:`leave_one_out` fits on all pairs but one and scores
that one (two pairs: each is scored with what the other taught).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from ...compare.align import AlignWeights, align, decide, score_matrix
from ...compare.sections import DocSections
from ...compare.signals import FIRST, SECOND, consistency, first_pass
from ..data.alignments import GoldAlignment
from ..measures.alignment import AlignmentScore, score_alignment

__all__ = ["PairData", "pair_data", "fit_logit", "fit_weights", "leave_one_out", "predict", "L2",
           "NONE_GRID", "STAND_GRID", "EXTRA_GRID"]

L2 = 0.01  # penalty on the squared weights (the signals are 0..1, or -log ranks)
NONE_GRID = tuple(round(-4.0 + 0.1 * i, 1) for i in range(41))  # robust z of a section's stand-out: -4 .. 0
STAND_GRID = tuple(round(0.2 * i, 1) for i in range(51))  # a section's stand-out (decide): 0 .. 10
EXTRA_GRID = tuple(round(0.1 * i, 1) for i in range(31))  # logit units below the best: 0 .. 3


@dataclass(frozen=True)
class PairData:
    """One aligned pair of documents ready for fitting: its sections, first-pass signals and gold rows."""

    name: str
    sa: DocSections
    sb: DocSections
    gold: GoldAlignment
    signals: dict  # first-pass signal -> len(A) x len(B) array
    rows: tuple[tuple[int, tuple[int, ...]], ...]  # (A's row, B's gold columns) of scored sections with a counterpart


def pair_data(name: str, index, gold: GoldAlignment) -> PairData:
    """The pair of ``gold`` in ``index``, its signals computed once."""
    sa, sb = DocSections(index, gold.a_doc), DocSections(index, gold.b_doc)
    ia, ib = {x: i for i, x in enumerate(sa.nodes)}, {x: j for j, x in enumerate(sb.nodes)}
    rows = tuple((ia[r.a], cols) for r in gold.rows if r.scored and r.a in ia
                 if (cols := tuple(ib[x.node] for x in r.b if x.node in ib)))
    return PairData(name, sa, sb, gold, first_pass(sa, sb), rows)


def _loss(w: np.ndarray, data: list[tuple[np.ndarray, tuple]]) -> tuple[float, np.ndarray]:
    """Negative log-likelihood of the gold counterparts under a per-row softmax, and its gradient."""
    loss, grad = L2 * float(w @ w), 2 * L2 * w
    for x, rows in data:  # x: len(A) x len(B) x signals
        for i, cols in rows:
            s = x[i] @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            g = np.asarray(cols)
            q = p[g] / p[g].sum()
            loss -= float(np.log(p[g].sum()))
            grad -= q @ x[i][g] - p @ x[i]
    return loss, grad


def fit_logit(data: list[tuple[np.ndarray, tuple]]) -> np.ndarray:
    """The conditional-logit weights (see the module) for ``data``: ``[(signals array, rows), ...]``."""
    d = data[0][0].shape[-1]
    return minimize(_loss, np.zeros(d), args=(data,), jac=True, method="L-BFGS-B").x


def _stack(sig: dict, names) -> np.ndarray:
    return np.stack([sig[k] for k in names], axis=-1)


def _second(p: PairData, first: dict[str, float]) -> dict:
    return {**p.signals, **consistency(p.sa, p.sb, score_matrix(p.signals, first))}


def predict(p: PairData, w: AlignWeights) -> dict[str, list[str]]:
    """``{A's section: [B's sections, best first]}`` of the alignment with weights ``w`` (containers left out)."""
    links = align(p.sa, p.sb, w, signals=p.signals).links
    return {a: [lk.b for lk in ls] for a, ls in links.items() if a not in p.sa.containers}


def _rows_right(pairs: list[PairData], scores: list[np.ndarray], none_z: float, none_stand: float
                ) -> tuple[int, int]:
    """(sections right, -sections of A without a counterpart) under the two no-counterpart thresholds."""
    right = empty = 0
    for p, s in zip(pairs, scores):
        keep = decide(s, none_z, 0.0, none_stand)
        gold = {r.a: {x.node for x in r.b} for r in p.gold.rows if r.scored}
        for i, a in enumerate(p.sa.nodes):
            empty += not keep[i]
            if a in gold:
                right += (not keep[i]) if not gold[a] else bool(keep[i] and p.sb.nodes[keep[i][0]] in gold[a])
    return right, -empty


def fit_weights(pairs: list[PairData], *, fitted_on: str = "", command: str = "") -> AlignWeights:
    """All of :class:`AlignWeights` fitted on ``pairs`` (see the module)."""
    w1 = fit_logit([(_stack(p.signals, FIRST), p.rows) for p in pairs])
    first = dict(zip(FIRST, map(float, w1)))
    sigs = [_second(p, first) for p in pairs]
    w2 = fit_logit([(_stack(s, FIRST + SECOND), p.rows) for s, p in zip(sigs, pairs)])
    second = dict(zip(FIRST + SECOND, map(float, w2)))
    scores = [score_matrix(s, second) for s in sigs]
    none_z, none_stand = max(((z, t) for z in NONE_GRID for t in STAND_GRID),
                             key=lambda zt: (*_rows_right(pairs, scores, *zt), -zt[1]))

    def f1(extra: float) -> tuple[float, float]:
        total = sum((score_alignment(p.gold, predict(p, AlignWeights(first, second, none_z, extra, none_stand)))
                     for p in pairs), start=_zero())
        found_gold = total.pairs_found + total.pairs_gold
        return (2 * total.pairs_hit / found_gold if found_gold else 0.0, -extra)

    extra = max(EXTRA_GRID, key=f1)
    return AlignWeights(first, second, none_z, extra, none_stand, fitted_on, command)


def _zero() -> AlignmentScore:
    return AlignmentScore(0, 0, 0, 0, 0, 0, 0)


def leave_one_out(pairs: list[PairData]) -> dict[str, tuple[AlignWeights, AlignmentScore]]:
    """Each pair scored with the weights fitted on the others: ``{name: (weights, score)}``."""
    out = {}
    for p in pairs:
        others = [q for q in pairs if q is not p]
        w = fit_weights(others, fitted_on=", ".join(q.name for q in others))
        out[p.name] = (w, score_alignment(p.gold, predict(p, w)))
    return out
