"""The honest protocol's two tools: leave-one-company-out folds and bootstrap intervals.

:func:`loco_folds` splits questions by the companies (documents) they are about: the test part of
a fold holds the questions about one company, and the training part holds only questions that share
*no* company with any test question (a comparison question about AMD and Boeing is tested in one
fold and never trains a fold that tests AMD or Boeing). Nested use: the outer folds' training part
is split again by :func:`loco_folds` to choose settings, so the outer company is never seen while
choosing.

:func:`bootstrap_ci` is the percentile bootstrap over questions (Efron & Tibshirani 1993, ch. 13):
resample the per-question values with replacement ``resamples`` times (fixed seed), take the mean of
each resample, report the 2.5th and 97.5th percentiles. The sets are small: 21 questions give
intervals of about +-0.15 around a hit rate.

:func:`company_keys` names the company of every document of every pooled set, so that questions
about one company fall in one fold whichever index they are asked of (the reference ``AMD`` and
the shelf's ``AMD_2015_10K`` are one company).

None of them looks at scores or models; :mod:`ppkit.bench.fit.rerank` uses them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...documents.metadata import normalise_company
from ...retrieval.analyze import company_groups

__all__ = ["Fold", "loco_folds", "loco_choice", "loco_table", "bootstrap_ci", "company_keys", "RESAMPLES", "SEED"]

RESAMPLES = 2000
SEED = 0


@dataclass(frozen=True)
class Fold:
    """One leave-one-company-out fold: the company held out, the question ids to train and to test on."""

    company: str
    train: tuple[str, ...]
    test: tuple[str, ...]


def loco_folds(companies: dict[str, frozenset[str] | set[str] | list[str]]) -> list[Fold]:
    """Leave-one-company-out folds over questions.

    Args:
        companies: ``{qid: the companies (documents) the question is about}``.

    Returns:
        One fold per company that some question is *first* about (companies sorted by name; a
        question belongs to the fold of the first of its companies in that order, so each question
        is tested exactly once). A fold's training questions share no company with its test
        questions. Folds without training or test questions are left out.

    >>> [(f.company, f.train, f.test) for f in loco_folds({"a1": {"A"}, "b1": {"B"}, "ab": {"A", "B"}})]
    [('A', (), ('a1', 'ab')), ('B', ('a1',), ('b1',))]
    """
    comp = {qid: frozenset(c) for qid, c in companies.items()}
    empty = [qid for qid, c in comp.items() if not c]
    if empty:
        raise ValueError(f"questions without a company cannot be folded: {empty[:5]}")
    names = sorted({c for cs in comp.values() for c in cs})
    folds = []
    assigned: set[str] = set()
    for name in names:
        test = tuple(qid for qid in comp if name in comp[qid] and qid not in assigned)
        if not test:
            continue
        assigned.update(test)
        held = frozenset().union(*(comp[qid] for qid in test))
        train = tuple(qid for qid in comp if not (comp[qid] & held))
        folds.append(Fold(name, train, test))
    return folds


def company_keys(catalogs: dict[str, dict[str, dict]]) -> dict[str, dict[str, str]]:
    """The company of each document, agreed across sets: ``{set: {doc: key}}``.

    Args:
        catalogs: ``{set: {doc: metadata}}`` (:func:`ppkit.retrieval.analyze.catalog_of` of each set's index).

    The documents of all sets are grouped together by :func:`ppkit.retrieval.analyze.company_groups`
    (equal normalised names, one name starting the other, or a shared ticker). A group's key is its
    shortest normalised company name; a document without a company name or ticker in any group is
    its own company, keyed by its name (papers), so with one document per company the folds are
    those of the documents.

    >>> company_keys({"ref": {"AMD": {"company": "Advanced Micro Devices, Inc.", "ticker": "AMD"}, "CLIP": {}},
    ...               "shelf": {"AMD_2015_10K": {"company": "Advanced Micro Devices, Inc."}}})
    {'ref': {'AMD': 'advanced micro devices', 'CLIP': 'CLIP'}, 'shelf': {'AMD_2015_10K': 'advanced micro devices'}}
    """
    union = {(name, doc): meta or {} for name, cat in catalogs.items() for doc, meta in cat.items()}
    out: dict[str, dict[str, str]] = {name: {} for name in catalogs}
    for group in company_groups(union):
        names = {normalise_company(union[m].get("company") or "") for m in group} - {""}
        tickers = {str(union[m]["ticker"]).lower() for m in group if union[m].get("ticker")}
        key = (min(names, key=lambda n: (len(n), n)) if names else min(tickers) if tickers
               else min(doc for _, doc in group))
        for name, doc in group:
            out[name][doc] = key
    return out


def loco_choice(scores: dict[str, dict], companies: dict[str, frozenset[str] | set[str] | list[str]],
                grid: list) -> dict[str, object]:
    """One setting chosen leave-one-company-out: for each question, the value of ``grid`` with the best
    total score over the training questions of its fold (:func:`loco_folds`), never over its own company.

    Args:
        scores: ``{qid: {value: score}}``, each question's score under each value of ``grid``.
        companies: ``{qid: companies}`` as :func:`loco_folds` takes them.
        grid: the values, in order of preference: a tie keeps the earlier one.

    Returns:
        ``{qid: the value its fold chose}`` for every question tested in some fold.

    >>> loco_choice({"a": {1: 1, 2: 0}, "b": {1: 0, 2: 1}, "c": {1: 0, 2: 1}},
    ...             {"a": {"A"}, "b": {"B"}, "c": {"C"}}, [1, 2])
    {'a': 2, 'b': 1, 'c': 1}
    """
    out = {}
    for fold in loco_folds(companies):
        best = max(grid, key=lambda v: (sum(scores[q][v] for q in fold.train), -grid.index(v)))
        out.update({q: best for q in fold.test})
    return out


def loco_table(rows: dict[str, dict], chosen: dict[str, object], grid: list, columns: list[tuple[str, str]],
               label=str) -> list[str]:
    """A Markdown table of settings measured per question: for each set, one row per setting of ``grid`` and a
    **LOCO** row, where each question has the setting its fold chose (:func:`loco_choice`).

    Args:
        rows: ``{"set:qid": {setting: {column key: value or None}}}``.
        chosen: ``{"set:qid": setting}`` from :func:`loco_choice`.
        columns: ``(header, key)`` pairs; a cell is the mean of the values that are not ``None``
            (``chars`` keys as whole numbers, the others to three decimals), blank when every value is ``None``.
        label: a setting's name in the table.

    >>> loco_table({"s:a": {1: {"hit": 1.0}, 2: {"hit": 0.0}}}, {"s:a": 1}, [1, 2], [("hit@3", "hit")])[2:]
    ['| s | 1 | 1 | 1.000 |', '| s | 2 | 1 | 0.000 |', '| s | **LOCO** | 1 | 1.000 |']
    """
    out = ["| set | setting | questions | " + " | ".join(h for h, _ in columns) + " |",
           "| --- | --- | --- |" + " --- |" * len(columns)]
    for name in dict.fromkeys(k.split(":")[0] for k in rows):
        keys = [k for k in rows if k.split(":")[0] == name]
        for tag, pick in [*((label(v), lambda k, v=v: v) for v in grid), ("**LOCO**", lambda k: chosen[k])]:
            cells = []
            for _, key in columns:
                vals = [rows[k][pick(k)][key] for k in keys if rows[k][pick(k)][key] is not None]
                mean = sum(vals) / len(vals) if vals else None
                cells.append("" if mean is None else f"{mean:,.0f}" if key == "chars" else f"{mean:.3f}")
            out.append(f"| {name} | {tag} | {len(keys)} | " + " | ".join(cells) + " |")
    return out


def bootstrap_ci(values, *, resamples: int = RESAMPLES, seed: int = SEED, level: float = 0.95) -> dict:
    """Mean of ``values`` and its percentile-bootstrap interval.

    ``None`` values are left out; with none left the mean and interval are ``None``.

    >>> bootstrap_ci([1, 1, 1, 1])
    {'mean': 1.0, 'lo': 1.0, 'hi': 1.0, 'n': 4}
    """
    v = np.asarray([x for x in values if x is not None], dtype=float)
    if not len(v):
        return {"mean": None, "lo": None, "hi": None, "n": 0}
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, len(v), size=(resamples, len(v)))].mean(axis=1)
    a = (1 - level) / 2 * 100
    lo, hi = np.percentile(means, [a, 100 - a])
    return {"mean": round(float(v.mean()), 4), "lo": round(float(lo), 4), "hi": round(float(hi), 4), "n": len(v)}
