"""Stage 2 with fitted weights: a logistic model over the structural re-ranker's features.

:class:`FittedReranker` computes the same general features as
:class:`ppkit.retrieval.rerank.StructuralReranker` (stage-1 evidence, breadcrumb similarity and
overlap, BM25 over the candidates' text, numeric density, the statement rule), z-scores each over
the question's candidates, and scores every candidate with a logistic model::

    p(relevant) = sigmoid(intercept + sum_f coef_f * x_f)

whose coefficients were *fitted* on the visible question sets (``python -m ppkit.bench.fit.rerank``
writes them to ``fitted_rerank.json`` beside this module), instead of the hand-set weights. The
model's ``threshold`` is a relevance cut: :func:`relevant_k` keeps, of the top ``k``, the sections
whose probability reaches it (at least one), so ``k`` shrinks when the candidates are weak.

``domain_rules`` says whether the financial-statement rule (the ``statement`` feature and the
statement sections stage 1 adds) is used: the fit keeps it only when leave-one-company-out
validation showed it helps. Off, the statement feature is left out and the statement sections
that stage 1 added (no stage-1 ``recall`` record) are ranked after the recalled ones.

The committed model was fitted on about 50 candidates per question; with stage 1 per filing (a scope of 2-4
filings) it scores 100-200. The z-scoring keeps the features on the scale it was fitted on; the threshold was
chosen on the smaller lists (nested leave-one-company-out figures with stage 1 per filing: README, "Out-of-sample").

This module only applies a model; fitting, and the cross-validation that chooses its settings,
live in :mod:`ppkit.bench.fit.rerank` and :mod:`ppkit.bench.fit.cv`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..core.errors import InvalidInput, MissingFile
from .rerank import StructuralReranker, zscore
from .types import Candidate

__all__ = ["FittedModel", "FittedReranker", "FEATURES", "design_matrix", "relevant_k", "keep_count", "sigmoid", "DEFAULT_MODEL_PATH"]

DEFAULT_MODEL_PATH = Path(__file__).with_name("fitted_rerank.json")
# the model's inputs: z-scores (over the question's candidates) of the structural features, and the
# raw best-chunk similarity (an absolute signal: lets the probability fall when every candidate is weak)
FEATURES = ("dense", "hits", "path_sem", "path_lex", "text_lex", "numeric", "statement", "dense_raw")


def design_matrix(feats: dict[str, np.ndarray], candidates: list[Candidate], names=FEATURES) -> np.ndarray:
    """The model's input rows (one per candidate, columns in ``names`` order).

    >>> design_matrix({"dense": np.array([1.0, 3.0])}, cands, names=("dense",)).tolist()  # doctest: +SKIP
    [[-1.0], [1.0]]
    """
    cols = []
    for name in names:
        if name == "dense_raw":
            cols.append(np.array([c.stage1_score for c in candidates], dtype=float))
        else:
            cols.append(zscore(np.asarray(feats.get(name, np.zeros(len(candidates))), dtype=float)))
    return np.stack(cols, axis=1) if cols else np.zeros((len(candidates), 0))


@dataclass(frozen=True)
class FittedModel:
    """A fitted stage-2 model: coefficients per feature, intercept, relevance threshold.

    Attributes:
        features: the input names (a subset of :data:`FEATURES`, in column order).
        coef: one coefficient per feature.
        intercept: the logistic intercept.
        threshold: :func:`relevant_k`'s probability cut.
        domain_rules: use the financial-statement rule (feature and added statement sections).
        meta: how it was fitted (training sets, commit, settings, cross-validation), for the record.
    """

    features: tuple[str, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float = 0.0
    domain_rules: bool = True
    meta: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        if len(self.features) != len(self.coef):
            raise InvalidInput(f"a fitted model needs one coefficient per feature: {len(self.features)} features, "
                               f"{len(self.coef)} coefficients")
        unknown = [f for f in self.features if f not in FEATURES]
        if unknown:
            raise InvalidInput(f"unknown feature(s) {unknown} in the fitted model: known are {', '.join(FEATURES)}")

    def logits(self, x: np.ndarray) -> np.ndarray:
        return x @ np.asarray(self.coef, dtype=float) + self.intercept

    def to_dict(self) -> dict:
        return {"features": list(self.features), "coef": [round(float(c), 6) for c in self.coef],
                "intercept": round(float(self.intercept), 6), "threshold": float(self.threshold),
                "domain_rules": bool(self.domain_rules), "meta": self.meta}

    @classmethod
    def from_dict(cls, d: dict) -> FittedModel:
        return cls(tuple(d["features"]), tuple(float(c) for c in d["coef"]), float(d["intercept"]),
                   float(d.get("threshold", 0.0)), bool(d.get("domain_rules", True)), d.get("meta", {}))

    @classmethod
    def load(cls, path: Path | str | None = None) -> FittedModel:
        """The model in ``path`` (default: the committed ``fitted_rerank.json``)."""
        path = Path(path) if path is not None else DEFAULT_MODEL_PATH
        if not path.is_file():
            raise MissingFile(f"no fitted re-ranker at {path}: run `python -m ppkit.bench.fit.rerank`")
        return cls.from_dict(json.loads(path.read_text(encoding="utf-8")))


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -40, 40)))


class FittedReranker:
    """Stage 2 by a fitted logistic model over general features (a :class:`ppkit.retrieval.rerank.Reranker`).

    ``stage2_score`` is the model's probability that the section is relevant; sections holding an
    anchor the question names still go first, as in the structural re-ranker.

    Args:
        embedder: for the breadcrumb similarity (``None`` leaves that feature at zero).
        model: a :class:`FittedModel` (default: the committed one).
        structural: a structural re-ranker whose features (and breadcrumb vectors) to share; default:
            a new one over ``embedder``.

    >>> FittedReranker(index.embedder).rerank(question, candidates)[0].stage2_score  # doctest: +SKIP
    0.83
    """

    name = "fitted"
    uses_search_text = True

    def __init__(self, embedder=None, model: FittedModel | None = None, *, structural: StructuralReranker | None = None):
        self.model = model or FittedModel.load()
        # its features (and breadcrumb vector cache), not its weights
        self._features = structural if structural is not None else StructuralReranker(embedder)
        self.calls: list[dict] = []
        self.last_notes: list[str] = []

    def __repr__(self) -> str:
        return f"FittedReranker({dict(zip(self.model.features, self.model.coef))}, threshold={self.model.threshold})"

    def features(self, question: str, candidates: list[Candidate]) -> dict[str, np.ndarray]:
        return self._features.features(question, candidates)

    def rerank(self, question: str, candidates: list[Candidate]) -> list[Candidate]:
        if not candidates:
            return []
        feats = self.features(question, candidates)
        names = [f for f in self.model.features if self.model.domain_rules or f != "statement"]
        coef = dict(zip(self.model.features, self.model.coef))
        x = design_matrix(feats, candidates, names)
        p = sigmoid(x @ np.array([coef[f] for f in names]) + self.model.intercept)
        out = [replace(c, stage2_score=round(float(s), 4),
                       features={k: round(float(v[i]), 4) for k, v in feats.items()})
               for i, (c, s) in enumerate(zip(candidates, p))]
        added_last = not self.model.domain_rules  # statement sections stage 1 added have no stage-1 record

        def key(c: Candidate):
            return (-c.features.get("anchor", 0.0), added_last and not c.recall, -(c.stage2_score or 0.0),
                    c.stage1_rank)

        return sorted(out, key=key)


def relevant_k(ranked: list[Candidate], k: int, threshold: float) -> int:
    """How many of the first ``k`` ranked candidates to keep: those whose ``stage2_score`` reaches
    ``threshold``, counted from the top until the first that does not; at least 1.

    >>> relevant_k([c(0.9), c(0.4), c(0.7)], 3, 0.5)  # doctest: +SKIP
    1
    """
    return min(keep_count([c.stage2_score or 0.0 for c in ranked], k, threshold), max(1, len(ranked)))


def keep_count(scores, k: int, threshold: float) -> int:
    """How many of the first ``k`` of ``scores`` (best first) reach ``threshold`` before the first that
    does not; at least 1 (:func:`relevant_k` over plain numbers).

    >>> keep_count([0.9, 0.4, 0.7], 3, 0.5)
    1
    """
    n = 0
    for s in list(scores)[:k]:
        if s < threshold:
            break
        n += 1
    return max(1, n)
