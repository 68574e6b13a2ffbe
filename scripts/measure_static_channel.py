"""Stage-1 recall with the static embedding as an extra channel beside MiniLM (issue #15, item 4).

For every runnable question of the visible sets: the 50 stage-1 candidates of the MiniLM reference index
(``--retrieval`` dense or hybrid) and the 50 of the static-embedder reference index (dense), fused by
reciprocal rank fusion (k = 60, :func:`ppkit.indexing.lexical.rrf`) over the two candidate rankings, first
50 kept. Prints the share of gold sections among the 50 (the bench's "stage 1: gold recall among
candidates"), MiniLM alone, static alone and fused, per set.

Fusing the two top-50 lists approximates a channel fused inside :func:`ppkit.retrieval.hybrid.recall_sections`
(a section past 50 in both lists cannot enter; one past 50 in one list enters only through the other).

    python scripts/measure_static_channel.py [--retrieval hybrid]
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from ppkit.bench.fit_rerank import VISIBLE_SETS, load_sets, runnable
from ppkit.bench.gold import gold_lines
from ppkit.bench.harness import bench_view
from ppkit.bench.metrics import Sent, covered
from ppkit.core.config import Config
from ppkit.core.data import benchmark_path
from ppkit.indexing.lexical import rrf


def _ranking(r) -> list:
    return [c for c in sorted(r.candidates, key=lambda c: c.stage1_rank)]


def _recall(cands, g) -> float:
    return len(covered([Sent(c.doc, ((c.line_start, c.line_end),), 0) for c in cands], g)) / len(g)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--retrieval", default="dense", choices=["dense", "hybrid"])
    args = ap.parse_args(argv)
    config = Config.from_env()
    paths = [benchmark_path(n) for n in VISIBLE_SETS]
    minilm = load_sets(paths, replace(config, embedder="local"))
    static = load_sets(paths, replace(config, embedder="static"))
    print(f"| set (stage 1 of MiniLM: {args.retrieval}) | questions | MiniLM | static | MiniLM + static (RRF) |")
    print("| --- | --- | --- | --- | --- |")
    for a, b in zip(minilm, static):
        va, vb = bench_view(a.index), bench_view(b.index)
        rows = []
        for q in runnable(a):
            g = gold_lines(a.gold.qrels[q["qid"]], va.trees)
            ra = _ranking(va.retrieve(q["text"], k=5, retrieval=args.retrieval))
            rb = _ranking(vb.retrieve(q["text"], k=5, retrieval="dense"))
            by_key = {c.section_id: c for c in rb} | {c.section_id: c for c in ra}
            fused = rrf({"minilm": [c.section_id for c in ra], "static": [c.section_id for c in rb]})
            rows.append((_recall(ra, g), _recall(rb, g), _recall([by_key[k] for k, _ in fused[:50]], g)))
        n = len(rows)
        means = [sum(r[i] for r in rows) / n for i in range(3)]
        print(f"| {a.name} | {n} | " + " | ".join(f"{m:.3f}" for m in means) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
