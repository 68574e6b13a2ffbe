"""Query latency after load: first-time and repeated ``retrieve`` over the visible question sets.

    python scripts/bench_latency.py [--index DIR] [--json OUT]

Without ``--index`` it opens the cached reference index of the four 10-Ks (built if missing).
Prints the load time, then p50/p95/max of ``Index.retrieve`` in ms for each question asked the
first time, and again for the same questions asked a second time (what a warm cache gives); wall
clock and this process's CPU time (``cpu_*``: steadier on a shared machine; with 2 threads it can
exceed the wall time).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import ppkit
from ppkit.bench.loaders import load_questions
from ppkit.core.data import data_dir

SETS = ("benchmarks/comprehensive_questions.xlsx", "benchmarks/financebench_dev.jsonl")


def _stats(ms: list[float], cpu: list[float]) -> dict:
    return {"n": len(ms), "p50_ms": round(float(np.percentile(ms, 50)), 1),
            "p95_ms": round(float(np.percentile(ms, 95)), 1), "max_ms": round(max(ms), 1),
            "cpu_p50_ms": round(float(np.percentile(cpu, 50)), 1), "cpu_p95_ms": round(float(np.percentile(cpu, 95)), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", help="index folder (default: the cached reference 10-K index)")
    ap.add_argument("--json", help="write the numbers here")
    args = ap.parse_args()
    t = time.perf_counter()
    index = ppkit.load_index(args.index) if args.index else ppkit.reference_index("10k", progress=False)
    index.embedder.embed_query("warm up")  # the model load belongs to loading, not to the first query
    load_s = time.perf_counter() - t
    questions = [q["text"] for s in SETS for q in load_questions(data_dir() / s)[1]]
    out = {"index": str(index.folder), "embedder": index.embedder.name, "load_s": round(load_s, 2)}
    for label in ("first", "repeat"):
        ms, cpu = [], []
        for q in questions:
            t, c = time.perf_counter(), time.process_time()
            index.retrieve(q, k=5)
            ms.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
        out[label] = _stats(ms, cpu)
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
