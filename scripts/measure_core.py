"""Measure the core pipeline on the four reference 10-Ks: tree build time per document, and query
latency (median over the 20 first Comprehensive questions) on a loaded index.

Usage (index time and peak memory come from /usr/bin/time around `ppkit index`):

    /usr/bin/time -v ppkit index ../shared/data/10k/*.md --index /tmp/ppk-index --fresh --quiet
    python scripts/measure_core.py --index /tmp/ppk-index
"""

from __future__ import annotations

import argparse
import statistics
import time

import ppkit
from ppkit.core import data
from ppkit.bench.data.loaders import load_questions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True, help="an index folder built from the four 10-Ks")
    ap.add_argument("--runs", type=int, default=7, help="tree builds per document")
    ap.add_argument("--questions", type=int, default=20)
    args = ap.parse_args()

    print("tree build time (ms), median [min-max] of", args.runs, "runs")
    for p in data.tenk_paths():
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            tree = ppkit.build_tree(p)
            times.append((time.perf_counter() - t) * 1000)
        print(f"  {p.stem:8s} {len(tree) - 1:4d} headings  {statistics.median(times):6.1f} [{min(times):.1f}-{max(times):.1f}]")

    t = time.perf_counter()
    index = ppkit.load_index(args.index)
    index.embedder.embed_query("warm up")  # model load is not query latency
    print(f"load index + model: {time.perf_counter() - t:.2f} s")
    _, qs = load_questions(data.benchmark_path("comprehensive_questions.xlsx"))
    qs = qs[: args.questions]
    lat = []
    for q in qs:
        t = time.perf_counter()
        index.ask(q["text"])
        lat.append((time.perf_counter() - t) * 1000)
    print(f"ask() latency over {len(lat)} questions (ms): median {statistics.median(lat):.0f}, "
          f"min {min(lat):.0f}, max {max(lat):.0f}")


if __name__ == "__main__":
    main()
