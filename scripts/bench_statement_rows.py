"""The rows of the primary statements in PDF extractions: how many keep their label and figures on one line.

For each Markdown file given (``ppkit extract`` output, or the ``<stem>.md`` of an extraction cache entry), the
sections that hold a primary statement (:func:`ppkit.retrieval.statements.section_statement_kinds`: the balance
sheet, the statement of operations, the statement of cash flows) are read line by line, HTML tables rendered as
pipe rows. A **row of figures** is a table row with a figure in a cell after the first, or a line of text with
figures; it is **whole** when it is a table row whose first cell holds the row's label (two letters or more). A
table row of figures with an empty first cell (the label went elsewhere) and a text line of figures (a row left
as prose, or several rows run together: one row counted for every two figures) are not. Years are not figures.

Usage (the version-4 cache beside the current one, say)::

    python scripts/bench_statement_rows.py /work/cache/pdf/*/textlayer-4-*/*.md --json rows.json

Prints the whole rows, all rows and the share, in all and per file. It measures the extraction only; it does
not index or ask anything.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from ppkit.core.markup import render
from ppkit.documents.tree import build_tree, read_lines
from ppkit.retrieval.statements import section_statement_kinds

_FIGURE = re.compile(r"^\(?[$€£]?\(?-?\d[\d,]*(?:\.\d+)?\)?%?$")
_YEAR = re.compile(r"^(?:19|20)\d\d$")


def _figures(text: str) -> int:
    return sum(1 for tok in text.replace("$", " ").split()
               if _FIGURE.match(tok.strip(",;:*")) and not _YEAR.match(tok.strip(",;:*()")))


def count_rows(lines: list[str]) -> tuple[int, int]:
    """(whole rows, rows of figures) among rendered statement lines (see the module docstring)."""
    whole = total = 0
    for _, text in render(lines):
        s = text.strip()
        if s.startswith("|"):
            cells = [c.strip() for c in s.strip("|").split("|")]
            if set("".join(cells)) <= set("-: "):
                continue  # the header's separator row
            if any(_figures(c) for c in cells[1:]):
                total += 1
                whole += sum(ch.isalpha() for ch in cells[0]) >= 2
        elif s and not s.startswith("#"):
            n = _figures(s)
            words = sum(1 for tok in s.split() if any(ch.isalpha() for ch in tok))
            if n >= 2 and 2 * n >= words:  # figures as prose: a row, or several run together
                total += (n + 1) // 2
    return whole, total


def file_rows(md: Path) -> dict:
    """The statement sections of one file and their rows."""
    tree = build_tree(md, md.stem)
    lines = read_lines(md)
    whole = total = sections = 0
    for node in tree.headings():
        body = [b for _, b in render(lines[node.line_start - 1: node.text_end])]
        if section_statement_kinds(tree, lines, node.node_id, body):
            w, t = count_rows(lines[node.line_start: node.text_end])
            whole, total, sections = whole + w, total + t, sections + 1
    return {"file": str(md), "sections": sections, "whole": whole, "rows": total}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("markdown", nargs="+", type=Path, help="extracted Markdown files (raw.md files are skipped)")
    ap.add_argument("--json", type=Path, help="write the per-file counts here")
    args = ap.parse_args(argv)
    files = [f for f in args.markdown if f.name != "raw.md"]
    per = [file_rows(f) for f in files]
    whole, total = sum(p["whole"] for p in per), sum(p["rows"] for p in per)
    for p in per:
        share = p["whole"] / p["rows"] if p["rows"] else float("nan")
        print(f"{Path(p['file']).stem:45s} {p['sections']:3d} sections {p['whole']:5d} / {p['rows']:5d} {share:.3f}")
    print(f"all {len(per)} files: {sum(p['sections'] for p in per)} statement sections, {whole} of {total} rows "
          f"whole ({whole / max(total, 1):.3f})")
    if args.json:
        args.json.write_text(json.dumps({"whole": whole, "rows": total, "files": per}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
