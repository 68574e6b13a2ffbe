"""The PDF extractors measured: ``ppkit bench extraction`` (speed, memory and heading agreement with the
reference Markdown, per backend side by side in one run) and ``ppkit bench split-words`` (headings per
filing and the split-word repair).

Usage:

    ppkit bench extraction [--backends offline,layout] [--workers 2] [--out DIR]
    ppkit bench split-words DIR        (DIR: a folder of `ppkit extract` output, NAME.md + NAME.pages.json)

``extraction`` extracts the three 10-K PDFs and the three paper PDFs with each backend, ``workers``
PDFs at a time (largest first), each in its own process, whose CPU time and peak memory come from the
operating system (``os.wait4``); pages/s is all pages over the backend's wall time. It writes the
Markdown under ``--out`` (default ``<cache>/extract_bench``) and prints a Markdown table. ``split-words``
writes nothing.
"""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ...core.config import cache_dir
from ...core.data import data_dir
from ...documents.extract import pdf_page_count
from ...documents.repair import join_split_words, repair_markdown
from ...documents.tree import parse_markdown
from ...documents.treecheck import check_tree, heading_agreement

__all__ = ["PAIRS", "ExtractRun", "run_extractions", "extraction_table", "split_words_report"]

PAIRS = {  # extracted stem -> reference Markdown (relative to the data folder)
    "BOEING_2022_10K": "10k/Boeing.md",
    "AMERICANEXPRESS_2022_10K": "10k/AMEX.md",
    "PEPSICO_2022_10K": "10k/PepsiCo.md",
    "CLIP": "papers/CLIP/CLIP.md",
    "Galore": "papers/Galore/Galore.md",
    "NemoBot": "papers/NemoBot/NemoBot.md",
}


def _pdf_of(stem: str) -> Path:
    return data_dir() / ("10k_pdf" if stem.endswith("_10K") else "papers_pdf") / f"{stem}.pdf"


@dataclass(frozen=True)
class ExtractRun:
    """One backend over the :data:`PAIRS` PDFs: per document (wall s, CPU s, peak RSS MB), and the whole run."""

    backend: str
    out_dir: Path
    per_doc: dict  # stem -> (wall s, CPU s, peak RSS MB)
    wall: float  # the whole run, ``workers`` PDFs at a time
    workers: int


_CHILD = ("import sys; from ppkit.documents.extract import extract_pdf; "
          "extract_pdf(sys.argv[1], sys.argv[2], backend=sys.argv[3], progress=False)")


def run_extractions(backend: str, out_dir: Path, *, workers: int = 2) -> ExtractRun:
    """Extract every PDF of :data:`PAIRS` with ``backend``, ``workers`` processes at a time, largest first."""
    out_dir.mkdir(parents=True, exist_ok=True)
    todo = sorted(PAIRS, key=lambda s: -pdf_page_count(_pdf_of(s)))
    running: dict[int, tuple[str, float]] = {}  # pid -> (stem, start)
    per_doc = {}
    t0 = time.perf_counter()
    while todo or running:
        while todo and len(running) < workers:
            stem = todo.pop(0)
            proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(_pdf_of(stem)), str(out_dir), backend])
            running[proc.pid] = (stem, time.perf_counter())
        pid, status, usage = os.wait4(-1, 0)
        if pid not in running:
            continue
        stem, start = running.pop(pid)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"extracting {stem} with {backend} failed (exit {os.waitstatus_to_exitcode(status)})")
        per_doc[stem] = (time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)
    return ExtractRun(backend, out_dir, per_doc, time.perf_counter() - t0, workers)


def _problems(tree, text: str) -> int:
    return sum(f.kind in ("numbering_level", "level_jump") for f in check_tree(tree, lines=text.split("\n")))


def extraction_table(runs: list[ExtractRun]) -> list[str]:
    """The lines of ``ppkit bench extraction``'s output: a summary per backend, then one row per document and
    backend (the backends of one document side by side)."""
    lines = ["| backend | pages | wall s | pages/s | CPU s | pages per CPU s | processes |", "|---|---|---|---|---|---|---|"]
    pages_of = {stem: len(json.loads((r.out_dir / f"{stem}.pages.json").read_text())["pages"])
                for r in runs[:1] for stem in PAIRS}
    for r in runs:
        n = sum(pages_of.values())
        cpu = sum(c for _, c, _ in r.per_doc.values())
        lines.append(f"| {r.backend} | {n} | {r.wall:.0f} | {n / r.wall:.1f} | {cpu:.0f} | {n / cpu:.1f} | {r.workers} |")
    lines += ["", "| document | backend | pages | wall s | CPU s | peak RSS MB | reference headings | extracted headings "
              "| titles found | precision | levels equal (raw) | steps agree (raw) | levels equal (repaired) "
              "| steps agree (repaired) | level problems, raw -> repaired |", "|---|" + "---|" * 14]
    for stem, ref_rel in PAIRS.items():
        ref_text = (data_dir() / ref_rel).read_text(encoding="utf-8")
        ref = parse_markdown(ref_text, stem)
        ref_rep = repair_markdown(ref_text).tree(stem)
        for r in runs:
            md = r.out_dir / f"{stem}.md"
            pm = json.loads(md.with_name(stem + ".pages.json").read_text())
            outline = [(o["level"], o["title"], o["page"]) for o in pm.get("outline", [])] or None
            ext_text = md.read_text(encoding="utf-8")
            ext = parse_markdown(ext_text, stem)
            ext_rep = repair_markdown(ext_text, outline=outline)
            raw = heading_agreement(ext, ref)
            rr = heading_agreement(ext_rep.tree(stem), ref_rep)
            wall, cpu, rss = r.per_doc[stem]
            lines.append(f"| {stem} | {r.backend} | {len(pm['pages'])} | {wall:.1f} | {cpu:.1f} | {rss:.0f} "
                         f"| {raw.n_reference} | {raw.n_extracted} | {raw.titles_found:.1%} | {raw.precision:.1%} "
                         f"| {raw.level_agreement:.1%} | {raw.step_agreement:.1%} | {rr.level_agreement:.1%} "
                         f"| {rr.step_agreement:.1%} | {_problems(ext, ext_text)} -> "
                         f"{_problems(ext_rep.tree(stem), ext_rep.text)} |")
    return lines


def default_out() -> Path:
    """Where ``ppkit bench extraction`` writes the Markdown: ``<cache>/extract_bench/<backend>``."""
    return cache_dir() / "extract_bench"


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
