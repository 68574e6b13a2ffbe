"""Rules after stage 2, measured over every visible set and chosen leave-one-company-out: ``ppkit bench stage2-rules``.

Each rule takes the structural re-ranker's order (hand-set weights, the default) and moves some sections
down; the bench scores the result on every runnable question of the visible sets (Comprehensive 40 and
FinanceBench dev 5 on the four 10-Ks, the multimodal 20 on the papers, and with ``--shelf DIR`` the
FinanceBench questions on an index of the 74 filings). The rule used for a company's questions is then
chosen on the questions that share no company with them (:func:`ppkit.bench.fit.cv.loco_choice`: most hits at
k=3 and k=5 plus recall@5 and all-gold@5; a tie keeps ``none``), and scored on its own questions: the
out-of-sample row. None of these rules is in the pipeline: this module is the record of what was measured
for them (README, "Tried for issue 15 and not kept").

Rules (each with settings fixed beforehand, not fitted):

* ``none``: the structural order.
* ``short_down``: a section of under 300 characters (a heading and a line) loses 1.0 of its score.
* ``auditor_down``: a section of the auditor's report (its opinion, basis, critical audit matters) loses 1.0.
* ``same_title_down``: a section whose heading repeats the heading of a higher-ranked section of the same
  document under another parent (a segment's "Provisions for credit losses" after the consolidated one)
  goes after the sections that repeat none; a statement continued under the same parent is no repeat.
* ``mmr``: maximal marginal relevance over the breadcrumb vectors for the first five places: a section
  loses 2.0 times by how much its breadcrumb's cosine to an already chosen one exceeds 0.7.

    ppkit bench stage2-rules --shelf SHELF [--rules none,short_down,mmr]
"""

from __future__ import annotations

import re

import numpy as np

from ...core.config import Config
from ...core.data import benchmark_path
from ...core.errors import InvalidInput
from ...core.ids import breadcrumb_path, breadcrumb_titles
from ...retrieval.rerank import StructuralReranker
from ..runs.harness import BenchPlan, run_retrieval_bench
from .cv import loco_choice, loco_table
from .rerank import VISIBLE_SETS, load_sets, question_companies, set_companies

__all__ = ["RULES", "check_rules", "stage2_rules"]

SHORT_CHARS = 300
_AUDITOR = re.compile(r"critical audit matters?|report of independent registered|opinions? on the (consolidated )?"
                      r"financial statements|basis for opinion", re.I)
MEASURES = ("h3", "h5", "r5", "a5")


def _norm(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", title.casefold()).strip()


def _penalised(ranked, down):
    """``ranked`` re-sorted with ``down(c)`` taken off each score (anchors first, ties in the given order)."""
    pos = {id(c): i for i, c in enumerate(ranked)}
    return sorted(ranked, key=lambda c: (-c.features.get("anchor", 0.0), -((c.stage2_score or 0.0) - down(c)),
                                         pos[id(c)]))


def short_down(index, ranked):
    return _penalised(ranked, lambda c: 1.0 if len(c.text) < SHORT_CHARS else 0.0)


def auditor_down(index, ranked):
    return _penalised(ranked, lambda c: 1.0 if _AUDITOR.search(c.breadcrumb) else 0.0)


def same_title_down(index, ranked):
    parents: dict[tuple[str, str], set] = {}
    first, later = [], []
    for c in ranked:
        titles = breadcrumb_titles(c.breadcrumb)
        key, parent = (c.doc, _norm(titles[-1])), tuple(titles[:-1])
        (later if key in parents and parent not in parents[key] else first).append(c)
        parents.setdefault(key, set()).add(parent)
    return first + later


def mmr(index, ranked, lam: float = 2.0, floor: float = 0.7, places: int = 5):
    vecs = index.path_vectors
    paths = [breadcrumb_path(c.breadcrumb) for c in ranked]
    if not ranked or any(p not in vecs for p in paths):
        return ranked
    v = np.stack([vecs[p] for p in paths]).astype(float)
    v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    rest, chosen = list(range(len(ranked))), []
    while rest and len(chosen) < places:
        pen = np.maximum((v[rest] @ v[chosen].T).max(axis=1) - floor, 0.0) if chosen else np.zeros(len(rest))
        best = min(range(len(rest)), key=lambda j: (-ranked[rest[j]].features.get("anchor", 0.0),
                                                    -((ranked[rest[j]].stage2_score or 0.0) - lam * pen[j])))
        chosen.append(rest.pop(best))
    return [ranked[i] for i in chosen + rest]


RULES = {"none": None, "short_down": short_down, "auditor_down": auditor_down, "same_title_down": same_title_down,
         "mmr": mmr}


class _After:
    """The structural re-ranker followed by ``rule``."""

    def __init__(self, inner, index, rule):
        self.inner, self.index, self.rule = inner, index, rule
        self.name, self.uses_search_text = inner.name, inner.uses_search_text
        self.calls, self.last_notes = inner.calls, inner.last_notes

    def rerank(self, question, candidates):
        return self.rule(self.index, self.inner.rerank(question, candidates))


def check_rules(rules: str) -> list[str]:
    """The rule names in ``rules`` (comma-separated); each must be in :data:`RULES` and ``none`` among them."""
    names = [r for r in rules.split(",") if r]
    unknown = [r for r in names if r not in RULES]
    if unknown or "none" not in names:
        raise InvalidInput(f"rules are {', '.join(RULES)} and must include none (got {rules})")
    return names


def stage2_rules(names: list[str], config: Config, shelf: str | None = None) -> list[str]:
    """The lines printed by ``ppkit bench stage2-rules``: the rules chosen leave-one-company-out, then the table."""
    sets = load_sets([benchmark_path(n) for n in VISIBLE_SETS], config, shelf_index=shelf)
    companies = set_companies(sets)
    rows: dict[str, dict[str, dict]] = {}
    company: dict[str, frozenset] = {}
    for qs in sets:
        for name in names:
            structural = StructuralReranker.for_index(qs.index)
            reranker = structural if RULES[name] is None else _After(structural, qs.index, RULES[name])
            res = run_retrieval_bench(qs.index, qs.questions, qs.gold, benchmark=qs.name,
                                      plan=BenchPlan((3, 5), ("auto",)), reranker=reranker)
            for p in res.per_question:
                a, key = p["modes"]["auto"], f"{qs.name}:{p['qid']}"
                rows.setdefault(key, {})[name] = {"h3": a["3"]["hit"], "h5": a["5"]["hit"], "r5": a["5"]["recall"],
                                                  "a5": a["5"]["all_gold"], "p5": a["5"].get("page_hit"),
                                                  "chars": a["5"]["context_chars"]}
                company[key] = question_companies(qs, p["qid"], companies)
    chosen = loco_choice({k: {n: sum(rows[k][n][m] for m in MEASURES) for n in names} for k in rows}, company, names)
    return [f"rule chosen leave-one-company-out for each of {len(chosen)} questions "
            f"({len(set().union(*company.values()))} companies/papers): "
            + ", ".join(f"{n}: {sum(1 for v in chosen.values() if v == n)}" for n in names),
            "\n".join(loco_table(rows, chosen, names, [("hit@3", "h3"), ("hit@5", "h5"), ("recall@5", "r5"),
                                                      ("all gold@5", "a5"), ("page hit@5", "p5"),
                                                      ("chars@5", "chars")]))]
