"""Heading agreement, time and memory of the offline extractor against the reference Markdown.

Usage (after extracting each PDF under /usr/bin/time -v, one at a time):

    for pdf in ../shared/data/10k_pdf/*.pdf ../shared/data/papers_pdf/*.pdf; do
      n=$(basename "$pdf" .pdf)
      /usr/bin/time -v python -m ppkit.cli extract "$pdf" --out .ppkit/extract_bench/offline \
          --backend offline --quiet 2> .ppkit/extract_bench/logs/$n.time
    done
    python scripts/measure_extraction.py .ppkit/extract_bench/offline .ppkit/extract_bench/logs

Prints a Markdown table. Writes nothing.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from ppkit.core.data import data_dir
from ppkit.documents.repair import repair_markdown
from ppkit.documents.tree import parse_markdown
from ppkit.documents.treecheck import check_tree, heading_agreement

PAIRS = {  # extracted stem -> reference Markdown (relative to the data folder)
    "BOEING_2022_10K": "10k/Boeing.md",
    "AMERICANEXPRESS_2022_10K": "10k/AMEX.md",
    "PEPSICO_2022_10K": "10k/PepsiCo.md",
    "CLIP": "papers/CLIP/CLIP.md",
    "Galore": "papers/Galore/Galore.md",
    "NemoBot": "papers/NemoBot/NemoBot.md",
}


def _time_log(path: Path) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MB) from a /usr/bin/time -v log."""
    text = path.read_text()
    wall = rss = None
    cpu = sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", text))
    if m := re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", text):
        wall = int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    if m := re.search(r"Maximum resident set size \(kbytes\): (\d+)", text):
        rss = int(m.group(1)) / 1024
    return wall, cpu, rss


def _problems(tree, text: str) -> int:
    return sum(f.kind in ("numbering_level", "level_jump") for f in check_tree(tree, lines=text.split("\n")))


def main(out_dir: str, log_dir: str) -> None:
    print("| document | pages | wall s | CPU s | peak RSS MB | reference headings | extracted headings "
          "| titles found | precision | levels equal (raw) | steps agree (raw) | levels equal (repaired) "
          "| steps agree (repaired) | level problems in extraction, raw -> repaired |")
    print("|---|" + "---|" * 13)
    for stem, ref_rel in PAIRS.items():
        md = Path(out_dir) / f"{stem}.md"
        if not md.is_file():
            print(f"| {stem} | not extracted |")
            continue
        pm = json.loads(md.with_name(stem + ".pages.json").read_text())
        pages = len(pm["pages"])
        outline = [(o["level"], o["title"], o["page"]) for o in pm.get("outline", [])] or None
        ext_text = md.read_text(encoding="utf-8")
        ref_text = (data_dir() / ref_rel).read_text(encoding="utf-8")
        ext, ref = parse_markdown(ext_text, stem), parse_markdown(ref_text, stem)
        ext_rep = repair_markdown(ext_text, outline=outline)
        ref_rep = repair_markdown(ref_text)
        raw = heading_agreement(ext, ref)
        rr = heading_agreement(ext_rep.tree(stem), ref_rep.tree(stem))
        wall, cpu, rss = _time_log(Path(log_dir) / f"{stem}.time")
        print(f"| {stem} | {pages} | {wall:.0f} | {cpu:.0f} | {rss:.0f} | {raw.n_reference} | {raw.n_extracted} "
              f"| {raw.titles_found:.1%} | {raw.precision:.1%} | {raw.level_agreement:.1%} | {raw.step_agreement:.1%} "
              f"| {rr.level_agreement:.1%} | {rr.step_agreement:.1%} "
              f"| {_problems(ext, ext_text)} -> {_problems(ext_rep.tree(stem), ext_rep.text)} |")


if __name__ == "__main__":
    main(*sys.argv[1:3])
