"""The offline extractor measured: ``ppkit bench extraction`` (heading agreement, time and memory against
the reference Markdown) and ``ppkit bench split-words`` (headings per filing and the split-word repair).

Usage (after extracting each PDF under /usr/bin/time -v, one at a time):

    for pdf in ../shared/data/10k_pdf/*.pdf ../shared/data/papers_pdf/*.pdf; do
      n=$(basename "$pdf" .pdf)
      /usr/bin/time -v python -m ppkit.cli extract "$pdf" --out .ppkit/extract_bench/offline \
          --backend offline --quiet 2> .ppkit/extract_bench/logs/$n.time
    done
    ppkit bench extraction .ppkit/extract_bench/offline .ppkit/extract_bench/logs
    ppkit bench split-words DIR        (DIR: a folder of `ppkit extract` output, NAME.md + NAME.pages.json)

Each prints a Markdown table or a few lines. Neither writes anything.
"""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

from ...core.data import data_dir
from ...documents.repair import join_split_words, repair_markdown
from ...documents.tree import parse_markdown
from ...documents.treecheck import check_tree, heading_agreement

__all__ = ["PAIRS", "extraction_table", "split_words_report"]

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


def extraction_table(out_dir: str | Path, log_dir: str | Path) -> list[str]:
    """The lines of ``ppkit bench extraction``'s Markdown table, one row per pair of :data:`PAIRS`."""
    lines = ["| document | pages | wall s | CPU s | peak RSS MB | reference headings | extracted headings "
             "| titles found | precision | levels equal (raw) | steps agree (raw) | levels equal (repaired) "
             "| steps agree (repaired) | level problems in extraction, raw -> repaired |",
             "|---|" + "---|" * 13]
    for stem, ref_rel in PAIRS.items():
        md = Path(out_dir) / f"{stem}.md"
        if not md.is_file():
            lines.append(f"| {stem} | not extracted |")
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
        lines.append(f"| {stem} | {pages} | {wall:.0f} | {cpu:.0f} | {rss:.0f} | {raw.n_reference} | {raw.n_extracted} "
                     f"| {raw.titles_found:.1%} | {raw.precision:.1%} | {raw.level_agreement:.1%} "
                     f"| {raw.step_agreement:.1%} | {rr.level_agreement:.1%} | {rr.step_agreement:.1%} "
                     f"| {_problems(ext, ext_text)} -> {_problems(ext_rep.tree(stem), ext_rep.text)} |")
    return lines


_WORD = re.compile(r"[A-Za-z]{2,}")


def _vocab(texts) -> collections.Counter:
    c = collections.Counter()
    for t in texts:
        c.update(w.casefold() for w in _WORD.findall(re.sub(r"</?[a-zA-Z][^>]*>", " ", t)))
    return c


def _heading_words(text: str) -> list[str]:
    return [w.casefold() for n in parse_markdown(text, "d").headings() for w in _WORD.findall(n.title)]


def split_words_report(folder: str | Path) -> list[str]:
    """The lines of ``ppkit bench split-words``: heading words rare in the filings before and after
    :func:`ppkit.documents.repair.join_split_words`, filings with under 3 headings, words joined, lines kept."""
    docs = sorted(str(p) for p in Path(folder).glob("*.pages.json"))
    raw = {Path(p).name[:-11]: Path(p[:-11] + ".md").read_text() for p in docs}
    fixed = {d: join_split_words(t) for d, t in raw.items()}
    lines = []
    for label, texts in (("before", raw), ("after", {d: f.text for d, f in fixed.items()})):
        v = _vocab(texts.values())
        hw = [w for t in texts.values() for w in _heading_words(t)]
        frag = [w for w in hw if v[w] <= 2]
        lines.append(f"{label}: heading words {len(hw)}, of them rare in the {len(texts)} filings (<= 2 occurrences): "
                     f"{len(frag)}")
    heads = {d: len(parse_markdown(f.text, d).headings()) for d, f in fixed.items()}
    few = sorted((n, d) for d, n in heads.items() if n < 3)
    lines.append(f"filings: {len(raw)}; with < 3 headings: {len(few)}: {few}")
    lines.append(f"words joined: {sum(len(f.joins) for f in fixed.values())} in "
                 f"{sum(1 for f in fixed.values() if f.joins)} filings")
    lines.append(f"lines kept: {all(raw[d].count(chr(10)) == f.text.count(chr(10)) for d, f in fixed.items())}")
    return lines
