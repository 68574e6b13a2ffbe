"""Retrieval on the benchmark from the offline extraction, raw and level-repaired, beside the reference Markdown.

Usage (after `ppkit extract ... --backend offline` of the three 10-K PDFs into OFFLINE_DIR):

    python scripts/bench_extraction.py OFFLINE_DIR WORK_DIR [--step repair|index|bench|table|all] [--mode auto]

Steps, in order (``all`` runs them one after the other; each step reuses what exists):

1. ``repair``: ``ppkit.documents.repair.repair_file`` of each extraction into ``WORK_DIR/repaired/`` (with the
   ``.repair.json`` record; the PDF outline from ``.pages.json`` is used).
2. ``index``: three indexes, built one at a time, the documents named ``AMEX``, ``Boeing``, ``PepsiCo``:
   ``index-reference`` (the reference Markdown of the same three filings), ``index-raw`` (the
   extraction as it came) and ``index-repaired``.
3. ``bench``: the Comprehensive and FinanceBench dev questions on each index, gold made over the
   reference Markdown and transferred onto the index (``ppkit.bench.runs.transfer``; identity on the
   reference index), no baselines; ``WORK_DIR/results/<index>-<questions>.json``.
4. ``table``: the Markdown table of the results (printed).

Everything runs offline (``PPKIT_OFFLINE=1`` is set): local MiniLM, rule noise filter, structural
re-ranker. Indexes and results go under WORK_DIR (e.g. ``.ppkit/extract``), never into the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ppkit.core.data import benchmark_path, data_dir

FILINGS = {  # document name -> PDF stem of the extraction
    "AMEX": "AMERICANEXPRESS_2022_10K",
    "Boeing": "BOEING_2022_10K",
    "PepsiCo": "PEPSICO_2022_10K",
}
VARIANTS = ("reference", "raw", "repaired")
QUESTIONS = {"comprehensive": "comprehensive_questions.xlsx", "financebench": "financebench_dev.jsonl"}


def _sources(variant: str, offline: Path, work: Path) -> list[Path]:
    if variant == "reference":
        return [data_dir() / "10k" / f"{doc}.md" for doc in FILINGS]
    folder = offline if variant == "raw" else work / "repaired"
    return [folder / f"{stem}.md" for stem in FILINGS.values()]


def repair(offline: Path, work: Path) -> None:
    from ppkit.documents.repair import repair_file

    for stem in FILINGS.values():
        src = offline / f"{stem}.md"
        if not src.is_file():
            sys.exit(f"missing {src}: run `ppkit extract ../shared/data/10k_pdf/{stem}.pdf --out {offline} "
                     "--backend offline` first")
        rep = repair_file(src, work / "repaired" / f"{stem}.md")
        print(f"repaired {stem}: {rep}", file=sys.stderr)


def index(offline: Path, work: Path) -> None:
    from ppkit import build_index
    from ppkit.indexing.index import IndexFormatError

    for variant in VARIANTS:  # one at a time: each embeds thousands of chunks on a shared machine
        paths = _sources(variant, offline, work)
        try:  # incremental: unchanged documents are reused
            idx = build_index(paths, work / f"index-{variant}", names=list(FILINGS), progress=False)
        except IndexFormatError as e:  # built by another pipeline version or settings
            print(f"index-{variant}: rebuilding from scratch ({str(e).splitlines()[0]})", file=sys.stderr)
            idx = build_index(paths, work / f"index-{variant}", names=list(FILINGS), progress=False, fresh=True)
        b = idx.manifest["build"]
        print(f"index-{variant}: {len(idx.chunks)} chunks ({b['chunks_embedded']} embedded) in "
              f"{b['seconds_total']:.0f} s", file=sys.stderr)


def bench(work: Path) -> None:
    from ppkit import load_index
    from ppkit.bench.runs.transfer import run_transfer_benchmark

    out = work / "results"
    out.mkdir(parents=True, exist_ok=True)
    for variant in VARIANTS:
        idx = load_index(work / f"index-{variant}")
        for name, file in QUESTIONS.items():
            result = run_transfer_benchmark(idx, benchmark_path(file)).to_dict()
            (out / f"{variant}-{name}.json").write_text(json.dumps(result, ensure_ascii=False, indent=1), "utf-8")
            t = result["transfer"]
            print(f"{variant} {name}: {result['n']} questions; {t['sections']} gold sections, "
                  f"{t['coverage']:.0%} transferred {t['by_how']}", file=sys.stderr)


def table(work: Path, mode: str = "auto") -> str:
    """One row per (index, question set, k): hit, recall, context characters, gold in the 50 candidates."""
    rows = ["| index | questions | n | gold transferred | k | hit | recall | context chars | gold in 50 |",
            "|---|---|---|---|---|---|---|---|---|"]
    for name in QUESTIONS:
        for variant in VARIANTS:
            path = work / "results" / f"{variant}-{name}.json"
            if not path.is_file():
                continue
            r = json.loads(path.read_text("utf-8"))
            m, t = r["modes"][mode], r["transfer"]
            moved = f"{t['coverage']:.0%} of {t['sections']}"
            for k in ("3", "5"):
                rows.append(f"| {variant} | {name} | {r['n']} | {moved} | {k} | {m[k]['hit']:.2f} | "
                            f"{m[k]['recall']:.2f} | {m[k]['context_chars_mean']:,.0f} | "
                            f"{m['candidates']['hit']:.2f} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("offline", type=Path, help="folder of the offline extractions (NAME.md + NAME.pages.json)")
    p.add_argument("work", type=Path, help="folder for the repaired files, the indexes and the results")
    p.add_argument("--step", choices=["repair", "index", "bench", "table", "all"], default="all")
    p.add_argument("--mode", default="auto", help="document-filter mode shown in the table (auto, none, gold)")
    a = p.parse_args(argv)
    os.environ["PPKIT_OFFLINE"] = "1"  # the offline measurement: no Gemini noise filter or re-ranker, even with a key
    steps = ["repair", "index", "bench", "table"] if a.step == "all" else [a.step]
    if "repair" in steps:
        repair(a.offline, a.work)
    if "index" in steps:
        index(a.offline, a.work)
    if "bench" in steps:
        bench(a.work)
    if "table" in steps:
        print(table(a.work, a.mode))
    return 0


if __name__ == "__main__":
    sys.exit(main())
