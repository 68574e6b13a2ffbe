"""MiniLM reading 128 word pieces instead of 256: CPU per build and what it costs in retrieval (issue 29).

Builds each document set twice under ``--out`` (``LocalEmbedder(max_seq_length=N)``, each build in a child
process whose CPU seconds, user + system, are read from ``getrusage``), runs ``ppkit bench retrieval`` on
both, and prints the table of docs/results/speed.md ("MiniLM reading 128 word pieces") and, per question,
what moved between the two lengths. Run it niced, one heavy job at a time::

    nice -n 19 python scripts/bench_seq_length.py --out /tmp/seq \\
        --subset SUBSET_MD   # optional: Markdown + page maps of a shelf subset

Sets: ``10k``, the four 10-Ks of ``../shared/data/10k`` with the Comprehensive questions and
``financebench_dev.jsonl`` (mode ``auto``); ``subset`` (with ``--subset DIR``), ``DIR/*.md`` with the
FinanceBench questions (modes ``auto`` and ``gold``; questions whose filing is not indexed are skipped).
Existing builds in ``--out`` are kept unless ``--fresh`` (their CPU is then read from ``build.json``).
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build(paths: list[str], folder: Path, length: int, fresh: bool) -> dict:
    """Index ``paths`` into ``folder`` reading ``length`` word pieces; returns chunks and CPU seconds."""
    record = folder / "build.json"
    if record.exists() and not fresh:
        return json.loads(record.read_text())
    before = _children_cpu()
    subprocess.run([sys.executable, __file__, "--build-one", str(length), str(folder), *paths], check=True)
    manifest = json.loads((folder / "manifest.json").read_text())
    out = {"length": length, "cpu_s": round(_children_cpu() - before, 1),
           "chunks": sum(d.get("n_chunks", 0) for d in manifest["documents"]),
           "embedder": manifest["embedder"]["name"]}
    record.write_text(json.dumps(out, indent=1))
    return out


def _build_one(length: int, folder: str, paths: list[str]) -> None:
    import ppkit
    from ppkit.indexing.embed import LocalEmbedder

    ppkit.build_index(paths, folder, embedder=LocalEmbedder(max_seq_length=length), fresh=True, progress=False)


def embed_cpu(folder: Path, length: int, n: int) -> dict:
    """CPU ms a chunk embedding ``n`` chunks of ``folder`` (drawn with seed 0) at ``length``, in a child process."""
    out = subprocess.run([sys.executable, __file__, "--embed-one", str(length), str(folder), str(n)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _embed_one(length: int, folder: str, n: int) -> None:
    import numpy as np

    from ppkit.indexing.embed import LocalEmbedder

    texts = [json.loads(line)["text"] for line in open(Path(folder) / "chunks.jsonl", encoding="utf-8")]
    texts = [texts[i] for i in np.random.default_rng(0).choice(len(texts), min(n, len(texts)), replace=False)]
    embedder = LocalEmbedder(max_seq_length=length)
    embedder.embed_documents(texts[:4])  # loads the model and the graph
    before = resource.getrusage(resource.RUSAGE_SELF)
    embedder.embed_documents(texts)
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    print(json.dumps({"length": length, "n": len(texts), "cpu_ms_per_chunk": round(1000 * cpu / len(texts), 1)}))


def bench(folder: Path, questions: Path, modes: str, fresh: bool) -> dict:
    """``ppkit bench retrieval`` at k=3 and k=5 on ``folder``; returns its JSON report."""
    out = folder / f"bench-{questions.stem}.json"
    if not out.exists() or fresh:
        with open(folder / f"bench-{questions.stem}.txt", "w") as log:
            subprocess.run(["ppkit", "bench", "retrieval", "--questions", str(questions), "--index", str(folder),
                            "--k", "3", "--k", "5", "--modes", modes, "--no-baselines", "--json", str(out)],
                           check=True, stdout=log, stderr=subprocess.STDOUT)
    return json.loads(out.read_text())


def _score(report: dict, mode: str, k: str, key: str) -> float | None:
    results = (report.get("modes") or {}).get(mode) or (report["results"] if mode == report.get("headline_mode")
                                                         else {})
    value = (results.get(k) or {}).get(key)
    return None if value is None else round(value, 3)


def moved(a: dict, b: dict, mode: str) -> list[str]:
    """Questions whose hit or page hit at k=3 or 5 differs between reports ``a`` and ``b`` in ``mode``."""
    rows = []
    other = {q["qid"]: q for q in b["per_question"]}
    for q in a["per_question"]:
        r = other.get(q["qid"])
        if r is None:
            continue
        for key in ("hit", "page_hit"):
            before = [(q["modes"].get(mode) or {}).get(k, {}).get(key) for k in ("3", "5")]
            after = [(r["modes"].get(mode) or {}).get(k, {}).get(key) for k in ("3", "5")]
            if before != after:
                rows.append(f"{q['qid']}: {key}@3/@5 {before[0]}/{before[1]} -> {after[0]}/{after[1]}  "
                            f"({q['question'][:90]})")
    return rows


def main(argv: list[str] | None = None) -> None:
    """Build, bench and print the table (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/ppkit-seq"))
    ap.add_argument("--subset", type=Path, help="folder of a shelf subset's Markdown (NAME.md + NAME.pages.json)")
    ap.add_argument("--lengths", type=int, nargs="+", default=[256, 128])
    ap.add_argument("--sets", nargs="+", default=["10k", "subset"])
    ap.add_argument("--fresh", action="store_true", help="rebuild and bench again")
    ap.add_argument("--embed-sample", type=int, default=256, metavar="N",
                    help="also time embedding alone over N chunks of the first set's index (0: skip)")
    args = ap.parse_args(argv)
    bench_dir = DATA / "benchmarks"
    sets = {"10k": (sorted(str(p) for p in (DATA / "10k").glob("*.md")),
                    [bench_dir / "comprehensive_questions.xlsx", bench_dir / "financebench_dev.jsonl"], "auto")}
    if args.subset:
        sets["subset"] = (sorted(str(p) for p in args.subset.glob("*.md")),
                          [DATA / "financebench" / "questions.jsonl"], "auto,gold")
    print("| set | questions | word pieces | chunks | build CPU s | build CPU s per chunk | hit@3 / @5 | recall@3 / @5 | "
          "page hit@3 / @5 | gold-filter page hit@5 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    moves = []
    for name in [s for s in args.sets if s in sets]:
        paths, question_files, modes = sets[name]
        reports = {}
        for length in args.lengths:
            folder = args.out / f"{name}-{length}"
            built = build(paths, folder, length, args.fresh)
            for questions in question_files:
                report = reports[length, questions.name] = bench(folder, questions, modes, args.fresh)
                gold = _score(report, "gold", "5", "page_hit") if "gold" in modes else None
                cells = [" / ".join("-" if c is None else f"{c:.2f}" for c in
                                    (_score(report, "auto", k, key) for k in ("3", "5")))
                         for key in ("hit", "recall", "page_hit")]
                print(f"| {name} | {questions.name} (n={report['n']}) | {length} | {built['chunks']} | "
                      f"{built['cpu_s']} | {built['cpu_s'] / max(built['chunks'], 1):.3f} | "
                      + " | ".join(cells) + f" | {'-' if gold is None else f'{gold:.2f}'} |")
        first, *rest = args.lengths
        for length in rest:
            for questions in question_files:
                for mode in modes.split(","):
                    for row in moved(reports[first, questions.name], reports[length, questions.name], mode):
                        moves.append(f"{name} {questions.name} {mode} {first}->{length}: {row}")
    if args.embed_sample:
        folder = args.out / f"{args.sets[0]}-{args.lengths[0]}"
        for length in args.lengths:
            print(f"\nembedding alone, {folder.name} chunks: {embed_cpu(folder, length, args.embed_sample)}")
    print("\nPer question, what moved:" if moves else "\nNo question moved.")
    for row in moves:
        print("  " + row)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--build-one":
        _build_one(int(sys.argv[2]), sys.argv[3], sys.argv[4:])
    elif len(sys.argv) > 1 and sys.argv[1] == "--embed-one":
        _embed_one(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
    else:
        main()
