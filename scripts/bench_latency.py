"""Query latency after load: first-time and repeated ``retrieve`` over the visible question sets.

    python scripts/bench_latency.py [--index DIR] [--retrieval MODE] [--questions FILE ...] [--ask] [--json OUT]

Without ``--index`` it opens the cached reference index of the four 10-Ks (built if missing).
``--retrieval``: the stage-1 mode (default the config's, dense); with a ``+static`` mode the static
channel's table and chunk vectors are loaded (or computed and cached) with the index, like the model.
Prints the load time, then p50/p95/max of ``Index.retrieve`` in ms for each question asked the
first time, and again for the same questions asked a second time (what a warm cache gives), each also for
the questions whose filter leaves 2-4 filings (``*_2to4_filings``: stage 1 per filing); wall
clock and this process's CPU time (``cpu_*``: steadier on a shared machine; with 2 threads it can
exceed the wall time). ``--ask``: time ``Index.ask`` (the whole offline answer) instead of ``retrieve``, and
add the mean CPU seconds an answer (``cpu_mean_ms``), on one core.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

import ppkit
from ppkit.bench.data.loaders import load_questions
from ppkit.core.config import RETRIEVAL_MODES
from ppkit.core.data import data_dir
from ppkit.indexing.static_channel import static_chunk_vectors

SETS = ("benchmarks/comprehensive_questions.xlsx", "benchmarks/financebench_dev.jsonl")


def _stats(ms: list[float], cpu: list[float]) -> dict:
    return {"n": len(ms), "cpu_mean_ms": round(float(np.mean(cpu)), 1), "p50_ms": round(float(np.percentile(ms, 50)), 1),
            "p95_ms": round(float(np.percentile(ms, 95)), 1), "max_ms": round(max(ms), 1),
            "cpu_p50_ms": round(float(np.percentile(cpu, 50)), 1), "cpu_p95_ms": round(float(np.percentile(cpu, 95)), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", help="index folder (default: the cached reference 10-K index)")
    ap.add_argument("--retrieval", choices=RETRIEVAL_MODES, help="stage-1 recall (default: the config's)")
    ap.add_argument("--questions", action="append", metavar="FILE",
                    help="question set(s) to ask (repeatable; default the Comprehensive and FinanceBench dev sets)")
    ap.add_argument("--ask", action="store_true", help="time Index.ask (the whole answer) on one core")
    ap.add_argument("--json", help="write the numbers here")
    args = ap.parse_args()
    t = time.perf_counter()
    index = ppkit.load_index(args.index) if args.index else ppkit.reference_index("10k", progress=False)
    index.embedder.embed_query("warm up")  # the model load belongs to loading, not to the first query
    mode = args.retrieval or index.config.retrieval
    if mode.endswith("+static"):  # so does the static channel's (table, tokenizer, chunk vectors)
        static_chunk_vectors(index).embedder.embed_query("warm up")
    load_s = time.perf_counter() - t
    files = args.questions or [data_dir() / s for s in SETS]
    questions = [q["text"] for f in files for q in load_questions(f)[1]]
    out = {"index": str(index.folder), "embedder": index.embedder.name, "retrieval": mode, "load_s": round(load_s, 2),
           "timed": "ask" if args.ask else "retrieve"}
    if args.ask and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    for label in ("first", "repeat"):
        ms, cpu, several = [], [], []
        for q in questions:
            t, c = time.perf_counter(), time.process_time()
            r = index.ask(q, k=5, retrieval=mode) if args.ask else index.retrieve(q, k=5, retrieval=mode)
            ms.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
            several.append(bool(r.trace.scope) and 2 <= len(r.trace.scope) <= 4)
        out[label] = _stats(ms, cpu)
        if any(several):  # the questions whose filter leaves 2-4 filings (stage 1 per filing, unless it is off)
            out[label + "_2to4_filings"] = _stats([m for m, s in zip(ms, several) if s],
                                                  [c for c, s in zip(cpu, several) if s])
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
