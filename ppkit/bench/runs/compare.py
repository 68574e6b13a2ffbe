"""Document comparison measured against the reference system's four visible reports.

:func:`parse_report` reads a report of ``../shared/data/comparison/reports`` into the reference's
choices: its criteria, Document 1 and 2, and for each section of Document 1 it analysed (``<h3>N.
title</h3>`` or ``### Comparison #N | title``) the sections of Document 2 it matched (the ``<h4>`` /
``#### ↳`` headings below it, one per matched section; the ``**Matching ...:**`` line is not split,
since titles hold commas). Titles are mapped to indexed sections by normalised title (exact, then the
closest above 85 of 100); a heading the index folded into its parent's section counts as that section.

:func:`run_compare_bench` then measures, offline, with ``ppkit.compare`` and nothing fitted on these reports:

* **sections of A**: recall and precision of the ``n`` sections ppkit chooses against the report's;
* **pairs given the report's A sections**: ppkit's 0-3 counterparts of each of the report's sections of A (the
  whole-document alignment's, restricted to them) against the report's matched sections (recall, precision);

and :func:`run_whole_bench` times whole-document mode on two filings (which sections change).
These reports are an LLM's choices, an anchor rather than a ground truth; further reports are held
out and are not looked up. The human alignments are :mod:`ppkit.bench.runs.alignment`'s.
"""

from __future__ import annotations

import re
import resource
import time
from dataclasses import dataclass, field
from pathlib import Path

from rapidfuzz import fuzz, process

from ...core.data import data_dir
from ...compare.sections import DocSections
from ...documents.titles import normalize_title
from ...pipeline import cached_index, compare

__all__ = ["ReportChoices", "parse_report", "map_title", "run_compare_bench", "compare_markdown", "run_whole_bench",
           "whole_markdown", "default_reports"]

_H3 = re.compile(r"<h3[^>]*>\s*\d+\.\s*(.+?)\s*</h3>|^###\s+Comparison\s+#\d+\s*\|\s*(.+?)\s*$", re.M)
_H4 = re.compile(r"<h4[^>]*>\s*(.+?)\s*</h4>|^####\s+↳\s*(.+?)\s*$", re.M)
_FIELD = re.compile(r"^\*\*(Criteria|Document 1|Document 2):\*\*\s*(.+?)\s*(?:`?<br>`?)?\s*$", re.M)


@dataclass(frozen=True)
class ReportChoices:
    """One report's choices: criteria, documents, and Document 1's sections with their matches (titles)."""

    name: str
    criteria: str
    doc1: str
    doc2: str
    pairs: dict[str, list[str]] = field(default_factory=dict)  # A title -> matched B titles, in order


def parse_report(path: Path) -> ReportChoices:
    """A report's choices, as written (titles not yet mapped to sections)."""
    text = Path(path).read_text(encoding="utf-8")
    fields = {k: v.strip("` ") for k, v in _FIELD.findall(text)}
    heads = [(m.start(), (m.group(1) or m.group(2)).strip()) for m in _H3.finditer(text)]
    pairs: dict[str, list[str]] = {}
    for i, (pos, title) in enumerate(heads):
        end = heads[i + 1][0] if i + 1 < len(heads) else len(text)
        pairs[title] = [(m.group(1) or m.group(2)).strip() for m in _H4.finditer(text, pos, end)]
    return ReportChoices(Path(path).stem, fields.get("Criteria", ""), fields.get("Document 1", ""),
                         fields.get("Document 2", ""), pairs)


def map_title(index, doc: str, title: str) -> str | None:
    """The indexed section (node id) a report's title names: the heading with the same normalised title
    (else the closest above 85), or the indexed section holding that heading; where no heading is close
    (a PDF extraction that kept the heading as text), the section with a line starting with the title;
    None when none does."""
    tree, units = index.trees[doc], index.units(doc)
    keys = {n.node_id: normalize_title(n.title) for n in tree.headings()}
    want = normalize_title(title)
    # a title written twice (a table of contents above the body): the indexed one, else the longest
    same = sorted((nid for nid, k in keys.items() if k == want),
                  key=lambda nid: (nid not in units, -(tree[nid].subtree_end - tree[nid].line_start)))
    hit = same[0] if same else None
    if hit is None:
        best = process.extractOne(want, keys, scorer=fuzz.ratio)
        hit = best[2] if best and best[1] >= 85 else None
    if hit is None:  # not a heading (a PDF extraction may keep it as a line of text): the section holding the
        # longest line that starts with it (the body's "5.08 Negative Pledge. The Company will not...", not a
        # table of contents' "5.08 Negative Pledge 58")
        found = [(len(line), nid) for nid, (a, b) in units.items() for _, line in index.rendered_lines(doc, a, b)
                 if normalize_title(line).startswith(want)]
        return max(found)[1] if found else None
    if hit in units:
        return hit
    line = tree[hit].line_start
    return next((nid for nid, (a, b) in units.items() if a <= line <= b), None)


def _doc_name(index, name: str) -> str:
    """The index's document a report names (its names have typos: "Emesron")."""
    return process.extractOne(name, index.docs, scorer=fuzz.ratio)[0]


def _pr(found: set, gold: set) -> tuple[int, int, int]:
    return len(found & gold), len(found), len(gold)


def run_compare_bench(index, reports: list[Path], *, n: int = 10) -> dict:
    """Sections of A and pairs given the report's A sections, per report and in all (offline)."""
    rows = []
    for path in reports:
        rc = parse_report(path)
        a, b = _doc_name(index, rc.doc1), _doc_name(index, rc.doc2)
        gold_a = {x for x in (map_title(index, a, t) for t in rc.pairs) if x}
        gold_pairs = {(map_title(index, a, t), map_title(index, b, u)) for t, us in rc.pairs.items() for u in us}
        unmapped = sorted(t for t in list(rc.pairs) + [u for us in rc.pairs.values() for u in us]
                          if map_title(index, a, t) is None and map_title(index, b, t) is None)
        gold_pairs = {p for p in gold_pairs if None not in p}
        t0 = time.perf_counter()
        chosen = compare(a, b, rc.criteria, index=index, n=n)
        t_chosen = time.perf_counter() - t0
        given = compare(a, b, rc.criteria, index=index, a_sections=sorted(gold_a)) if gold_a else chosen
        ours_a = {p.a.node for p in chosen.pairs}
        ours_pairs = {(p.a.node, c.section.node) for p in given.pairs for c in p.b}
        title = {**{x.a.node: x.a.title for x in chosen.pairs}, **{x.a.node: x.a.title for x in given.pairs}}
        rows.append({
            "report": rc.name, "a": a, "b": b, "criteria": rc.criteria, "seconds": round(t_chosen, 2),
            "sections": _pr(ours_a, gold_a), "pairs": _pr(ours_pairs, gold_pairs), "unmapped": unmapped,
            "missed_a": sorted(index.trees[a][x].title for x in gold_a - ours_a),
            "extra_a": sorted(title[x] for x in ours_a - gold_a),
            "missed_pairs": sorted(f"{index.trees[a][x].title} -> {index.trees[b][y].title}"
                                   for x, y in gold_pairs - ours_pairs),
            "extra_pairs": sorted(f"{index.trees[a][x].title} -> {index.trees[b][y].title}"
                                  for x, y in ours_pairs - gold_pairs)})
    total = {k: tuple(sum(r[k][i] for r in rows) for i in range(3)) for k in ("sections", "pairs")}
    return {"n": n, "reports": rows, "total": total}


def _ratio(hit: int, of: int) -> str:
    return f"{hit / of:.2f}" if of else "-"


def compare_markdown(result: dict, title: str = "the reference's Markdown") -> str:
    """The table of :func:`run_compare_bench`: recall and precision per report and in all."""
    out = [f"Documents: {title}; n = {result['n']} sections of A, each with its 0-3 counterparts of the "
           "whole-document alignment.", "",
           "| report | A sections recall | A sections precision | pairs recall | pairs precision | seconds |",
           "|---|---|---|---|---|---|"]
    rows = result["reports"] + [{"report": f"**all {len(result['reports'])}**", **result["total"], "seconds": ""}]
    for r in rows:
        (sh, sf, sg), (ph, pf, pg) = r["sections"], r["pairs"]
        out.append(f"| {r['report']} | {_ratio(sh, sg)} ({sh}/{sg}) | {_ratio(sh, sf)} ({sh}/{sf}) | "
                   f"{_ratio(ph, pg)} ({ph}/{pg}) | {_ratio(ph, pf)} ({ph}/{pf}) | {r['seconds']} |")
    return "\n".join(out) + "\n"


def run_whole_bench(paths: list[Path]) -> dict:
    """Whole-document mode on two filings (indexed first, not timed): time, peak memory, what changed."""
    index = cached_index(paths, "compare-corning")  # as ppkit.bench.runs.alignment.CORNING_INDEX
    a, b = index.docs[0], index.docs[1]
    t0 = time.perf_counter()
    result = compare(a, b, index=index)
    seconds = time.perf_counter() - t0
    matched = [p for p in result.sections if p.b]
    changed = [p for p in matched if p.b[0].diff.changed]
    same = len(matched) - len(changed)
    sims = [p.b[0].diff.similarity for p in matched]
    bands = {"0.9-1": sum(s >= 0.9 for s in sims), "0.5-0.9": sum(0.5 <= s < 0.9 for s in sims),
             "0-0.5": sum(s < 0.5 for s in sims)}
    top = sorted(changed, key=lambda p: p.b[0].diff.similarity)[:10]
    return {"a": a, "b": b, "sections_a": len(result.sections), "sections_b": len(DocSections(index, b).nodes),
            "matched": len(matched), "unchanged": same, "changed": len(changed), "similarity_bands": bands,
            "no_counterpart": len(result.sections) - len(matched), "unmatched_b": len(result.unmatched_b),
            "seconds": round(seconds, 2), "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "most_changed": [(p.a.title, p.b[0].section.title, p.b[0].diff.similarity) for p in top]}


def whole_markdown(w: dict) -> str:
    """The whole-document measurement as Markdown."""
    out = [f"{w['a']} vs {w['b']}: {w['sections_a']} sections of A, {w['sections_b']} of B; {w['matched']} matched "
           f"({w['unchanged']} unchanged, {w['changed']} changed), {w['no_counterpart']} of A without a counterpart, "
           f"{w['unmatched_b']} of B unmatched; {w['seconds']} s, peak RSS {w['peak_rss_mb']} MB (the process, "
           "index loading included).", "",
           "Matched pairs by text similarity: " + ", ".join(f"{k}: {v}" for k, v in w["similarity_bands"].items()) + ".",
           "", "| most changed section of A | its counterpart | similarity |", "|---|---|---|"]
    out += [f"| {a} | {b} | {s:.2f} |" for a, b, s in w["most_changed"]]
    return "\n".join(out) + "\n"


def default_reports() -> list[Path]:
    """The four visible reports."""
    return sorted((data_dir() / "comparison" / "reports").glob("*.md"))
