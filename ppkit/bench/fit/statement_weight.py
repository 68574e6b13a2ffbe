"""The structural re-ranker's ``statement`` weight, chosen leave-one-company-out over every visible set:
``ppkit bench statement-weight``.

The weight says how much a section that is the primary financial statement reporting a concept the
question asks about (balance sheet for working capital, cash flows for capital expenditure) counts
beside the other features. For each weight of the grid, every runnable question of the visible sets
(Comprehensive 40 and FinanceBench dev 5 on the four 10-Ks, the multimodal 20 on the papers, and with
``--shelf DIR`` the FinanceBench questions on an index of the 74 filings) is retrieved with the
pipeline's own filter; then for each company (paper) the weight is chosen on the questions that share no
company with its own (:func:`ppkit.bench.fit.cv.loco_choice`: most hits at k=3 plus k=5; a tie keeps the earlier
weight of the grid) and scored on its own questions.
With several ``--retrieval`` modes the grid is every (stage 1, weight) pair, chosen jointly the same way.
Prints in-sample rows per setting and the leave-one-company-out row, per set.

    ppkit bench statement-weight --shelf /work/cache/shelf/ix [--grid 0.8,1.0,1.2,1.6] \
        [--retrieval dense --retrieval hybrid+static]
"""

from __future__ import annotations

from ...core.config import Config
from ...core.data import benchmark_path
from ...core.errors import InvalidInput
from ...retrieval.rerank import StructuralReranker
from ..runs.harness import BenchPlan, run_retrieval_bench
from .cv import loco_choice, loco_table
from .rerank import VISIBLE_SETS, load_sets, question_companies, set_companies

__all__ = ["weight_grid", "statement_weight"]


def weight_grid(grid: str, retrieval: list[str] | None, config: Config) -> list[tuple[str, float]]:
    """Every (stage 1, weight) pair of ``grid`` (comma-separated weights) and the ``retrieval`` modes
    (default the config's)."""
    try:
        weights = [float(w) for w in grid.split(",")]
    except ValueError:
        raise InvalidInput(f"--grid {grid!r}: give comma-separated numbers, e.g. 0.8,1.0,1.2,1.6") from None
    return [(mode, w) for mode in (retrieval or [config.retrieval]) for w in weights]


def statement_weight(grid: list[tuple[str, float]], config: Config, shelf: str | None = None) -> list[str]:
    """The lines printed by ``ppkit bench statement-weight``: the weights chosen leave-one-company-out, then the
    table."""
    rows: dict[tuple[str, str], dict[tuple[str, float], dict]] = {}
    company: dict[tuple[str, str], frozenset[str]] = {}  # every company a question is about (comparisons: several)
    # the visible sets on their reference indexes, the shelf's questions on its index; companies agreed across
    # sets (ppkit.bench.fit.cv.company_keys: the reference AMD and the shelf's AMD filings are one company)
    sets = load_sets([benchmark_path(n) for n in VISIBLE_SETS], config, shelf_index=shelf)
    companies = set_companies(sets)
    for qs in sets:
        for mode, w in grid:
            reranker = StructuralReranker.for_index(qs.index, weights={**StructuralReranker.DEFAULT_WEIGHTS, "statement": w})
            res = run_retrieval_bench(qs.index, qs.questions, qs.gold, benchmark=qs.name,
                                      plan=BenchPlan((3, 5), (f"auto:{mode}",)), reranker=reranker)
            for p in res.per_question:
                a = p["modes"][f"auto:{mode}"]
                rows.setdefault((qs.name, p["qid"]), {})[(mode, w)] = {"h3": a["3"]["hit"], "h5": a["5"]["hit"],
                                                                  "p5": a["5"].get("page_hit")}
                company[(qs.name, p["qid"])] = question_companies(qs, p["qid"], companies)
    keys = list(rows)
    qid = {k: f"{k[0]}:{k[1]}" for k in keys}
    chosen = loco_choice({qid[k]: {w: rows[k][w]["h3"] + rows[k][w]["h5"] for w in grid} for k in keys},
                         {qid[k]: company[k] for k in keys}, grid)
    return [f"weight chosen leave-one-company-out for each of {len(chosen)} questions "
            f"({len(set().union(*company.values()))} companies/papers): "
            + ", ".join(f"{m} {w}: {sum(1 for v in chosen.values() if v == (m, w))}" for m, w in grid),
            "\n".join(loco_table({qid[k]: rows[k] for k in keys}, chosen, grid,
                                  [("hit@3", "h3"), ("hit@5", "h5"), ("page hit@5", "p5")],
                                  label=lambda g: f"{g[0]} {g[1]}"))]
