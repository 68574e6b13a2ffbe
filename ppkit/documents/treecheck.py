"""The tree check: what in a document's heading tree will hurt retrieval.

``ppkit tree FILE.md --check`` prints these findings. Each is a small frozen
:class:`Finding` naming the heading (node id) and the 1-based line:

========================  ========  ===================================================
kind                      severity  why it hurts
========================  ========  ===================================================
``level_jump``            warning   ``#`` then ``###``: the breadcrumb misses a level
``numbering_level``       warning   ``Item 1A`` at ``#`` but ``Item 1`` at ``##``: the
                                    numbering says siblings, the levels say otherwise
``giant_section``         warning   own text over ``giant_chars``: the synthesizer gets
                                    a trimmed slice of it
``empty_heading``         error     a heading with no title: a blank breadcrumb
``empty_section``         info      no text and no subsections: nothing to retrieve
``text_before_heading``   warning   text before the first heading belongs to no section
``toc_block``             warning   a table of contents: its lines name every section,
                                    so it matches every question
``duplicate_title``       warning   two headings with one breadcrumb: a citation cannot
                                    tell them apart
``heading_like_line``     info      a bold-only line or ``ITEM 7.`` in plain text: a
                                    heading the extractor missed
``unclosed_fence``        error     a code fence never closed: a Markdown reader hides
                                    every later heading in one code block (the tree
                                    reads on after it as Markdown)
``comment_heading``       info      a ``#`` line inside an HTML comment: not a heading
``long_title``            warning   a heading over ``MAX_TITLE_CHARS``: read as text (a
                                    page the extractor folded into one line)
``setext_heading``        info      ``Title`` over ``===``/``---``: a heading (level 1/2);
                                    a ``---`` meant as a rule needs a blank line above
``unclosed_comment``      warning   ``<!--`` never closed: it hides nothing
========================  ========  ===================================================

The check reads, it never changes the file; :mod:`ppkit.documents.repair` is the optional fix
for levels. :func:`heading_agreement` compares an extraction's headings with a
reference Markdown's (titles found, levels agreeing), for measuring extractors.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import InvalidInput
from ..core.ids import ROOT_ID
from .repair import find_toc_blocks, heading_kinds, numbered_structure
from .titles import normalize_title, plain_title
from .tree import Tree, body_start, code_fences, html_comments, read_lines, skipped_headings

__all__ = ["lcs_pairs", "Finding", "check_tree", "format_report", "Agreement", "heading_agreement"]

SEVERITIES = ("error", "warning", "info")

_BOLD_ONLY = re.compile(r"^\s*(\*\*|__)(?=\S)(.+?)(?<=\S)\1\s*(?::\s*)?$")
_ITEM_LINE = re.compile(r"^\s*(?:\*\*\s*)?(ITEM|Item)\s+\d{1,2}[A-C]?\.", re.M)
_PART_LINE = re.compile(r"^\s*(?:\*\*\s*)?PART\s+[IV]{1,4}\b(?:\*\*)?\s*$")


@dataclass(frozen=True)
class Finding:
    """One problem the check found."""

    kind: str
    node_id: str  # the heading concerned ("0000": the document root)
    line: int  # 1-based line in the Markdown
    message: str
    severity: str = "warning"  # error | warning | info

    def __repr__(self) -> str:
        return f"Finding({self.severity} {self.kind} node {self.node_id} line {self.line}: {self.message})"


def _body_lines(lines: list[str], tree: Tree) -> list[tuple[int, str]]:
    """(line, text) of non-heading lines outside code fences."""
    heading_lines = {ln for n in tree.headings() for ln in range(n.line_start, body_start(lines, n))}
    inside, _ = code_fences(lines)
    return [(i, s) for i, s in enumerate(lines, start=1) if i not in inside and i not in heading_lines]


def _chars(lines: list[str], a: int, b: int) -> int:
    return sum(len(s.strip()) for s in lines[a - 1:b])


def check_tree(tree: Tree, source: str | Path | None = None, *, lines: list[str] | None = None,
               giant_chars: int = 20_000) -> list[Finding]:
    """Check a document's tree for what will hurt retrieval.

    Args:
        tree: the tree (``build_tree(path)``).
        source: the Markdown file (default ``tree.source``); read for the body lines.
        lines: the document's lines instead of reading ``source``.
        giant_chars: own-text size (stripped characters) above which a section is giant.
            Indexed 10-K sections have a median of 1.4k characters and a 90th percentile
            of 6.6k; the synthesizer gets 6k of a section by default.

    Returns:
        Findings sorted by line, then kind.

    >>> from ppkit.documents.tree import parse_markdown
    >>> t = "# A\\ntext\\n### B\\ntext\\n"
    >>> [f.kind for f in check_tree(parse_markdown(t, "d"), lines=t.splitlines())]
    ['level_jump']
    """
    if lines is None:
        src = source if source is not None else tree.source
        if not src:
            raise InvalidInput("check_tree needs the document's lines: pass source= or lines=")
        lines = read_lines(src)
    heads = tree.headings()
    out: list[Finding] = []

    # level jumps (markdownlint MD001): relative to the previous heading
    for prev, n in zip(heads, heads[1:]):
        if n.level > prev.level + 1:
            out.append(Finding("level_jump", n.node_id, n.line_start,
                               f"level {n.level} right after level {prev.level} ({prev.title!r})", "warning"))

    # levels against numbering: siblings by numbering at different levels, children not deeper
    kinds = heading_kinds(tree, lines)
    for i, (parent, sib) in enumerate(numbered_structure(kinds)):
        n, k = heads[i], kinds[i]
        if k is None:
            continue
        if sib is not None and heads[sib].level != n.level:
            out.append(Finding("numbering_level", n.node_id, n.line_start,
                               f"{k.label} is at level {n.level} but {kinds[sib].label} "
                               f"({heads[sib].node_id}) is at level {heads[sib].level}", "warning"))
        elif sib is None and parent is not None and n.level <= heads[parent].level:
            out.append(Finding("numbering_level", n.node_id, n.line_start,
                               f"{k.label} (level {n.level}) should sit inside {kinds[parent].label} "
                               f"({heads[parent].node_id}, level {heads[parent].level})", "warning"))

    for n in heads:
        own = _chars(lines, body_start(lines, n), n.text_end)
        if not n.raw_title.strip() or n.title == "(untitled)":
            out.append(Finding("empty_heading", n.node_id, n.line_start, "heading without a title", "error"))
        elif own == 0 and not n.children:
            out.append(Finding("empty_section", n.node_id, n.line_start,
                               f"{n.title!r} has no text and no subsections", "info"))
        if own > giant_chars:
            out.append(Finding("giant_section", n.node_id, n.line_start,
                               f"{n.title!r} holds {own:,} characters of its own text (> {giant_chars:,})", "warning"))

    root = tree.root
    before = _chars(lines, 1, root.text_end)
    if heads and before:
        out.append(Finding("text_before_heading", ROOT_ID, 1,
                           f"{before:,} characters before the first heading belong to no section", "warning"))
    elif not heads and before:
        out.append(Finding("text_before_heading", ROOT_ID, 1, "the document has no headings at all", "warning"))

    for ln in code_fences(lines)[1]:
        out.append(Finding("unclosed_fence", tree.node_at_line(ln).node_id, ln,
                           f"a code fence ({lines[ln - 1].strip()[:20]!r}) that is never closed: the lines after "
                           "it are read as Markdown, headings included; close it or remove it", "error"))

    for ln, kind, why in skipped_headings(lines):
        out.append(Finding(kind, tree.node_at_line(ln).node_id, ln, f"{lines[ln - 1].strip()[:60]!r}: {why}",
                           "warning" if kind == "long_title" else "info"))
    for ln in html_comments(lines)[1]:
        out.append(Finding("unclosed_comment", tree.node_at_line(ln).node_id, ln,
                           "an HTML comment (<!--) that is never closed: the lines after it are read as Markdown",
                           "warning"))

    titles = {normalize_title(n.title) for n in heads}
    for a, b, entries in find_toc_blocks(lines, titles):
        node = tree.node_at_line(a)
        out.append(Finding("toc_block", node.node_id, a,
                           f"table of contents ({len(entries)} entries, lines {a}-{b}) inside {node.title!r}",
                           "warning"))

    by_path: dict[tuple[str, ...], list] = defaultdict(list)  # casefolded breadcrumb -> nodes
    for n in heads:
        by_path[tuple(t.casefold() for t in n.path)].append(n)
    for path, nodes in by_path.items():
        for n in nodes[1:]:
            out.append(Finding("duplicate_title", n.node_id, n.line_start,
                               f"breadcrumb {n.breadcrumb!r} also names {nodes[0].node_id}"
                               f" ({len(nodes)} headings share it)", "warning"))

    for ln, s in _body_lines(lines, tree):
        what = None
        if (m := _BOLD_ONLY.match(s)) and len(m.group(2)) <= 120 and "**" not in m.group(2):
            what = "a bold-only line"
        elif _ITEM_LINE.match(s) and len(s) <= 200 and not s.lstrip().startswith("|"):
            what = "an ITEM line in plain text"
        elif _PART_LINE.match(s):
            what = "a PART line in plain text"
        if what:
            node = tree.node_at_line(ln)
            out.append(Finding("heading_like_line", node.node_id, ln,
                               f"{what} looks like a missed heading: {plain_title(s)[:80]!r}", "info"))
    out.sort(key=lambda f: (f.line, f.kind))
    return out


def format_report(findings: list[Finding]) -> str:
    """A readable report: a count per kind, then one line per finding."""
    if not findings:
        return "tree check: no findings"
    counts = Counter((f.severity, f.kind) for f in findings)
    order = {s: i for i, s in enumerate(SEVERITIES)}
    head = ", ".join(f"{c} {k} ({s})" for (s, k), c in sorted(counts.items(), key=lambda x: (order[x[0][0]], x[0][1])))
    rows = [f"tree check: {len(findings)} findings: {head}"]
    for f in findings:
        rows.append(f"  line {f.line:>6}  {f.node_id}  {f.severity:<7}  {f.kind}: {f.message}")
    return "\n".join(rows)


# ---------------------------------------------------------------------------- extraction vs reference


@dataclass(frozen=True)
class Agreement:
    """How an extraction's headings agree with a reference's.

    Titles are matched on :func:`~ppkit.documents.titles.normalize_title`, in document order
    (a longest common subsequence), so a title found twice in the reference needs two
    matches.
    """

    n_reference: int
    n_extracted: int
    matched: int
    levels_equal: int  # matched pairs with the same ``#`` depth
    steps_agree: int  # consecutive matched pairs whose step (deeper/same/shallower) agrees
    n_steps: int

    @property
    def titles_found(self) -> float:
        """Share of the reference's headings found in the extraction (recall)."""
        return self.matched / self.n_reference if self.n_reference else 0.0

    @property
    def precision(self) -> float:
        """Share of the extraction's headings that the reference also has."""
        return self.matched / self.n_extracted if self.n_extracted else 0.0

    @property
    def level_agreement(self) -> float:
        """Share of matched headings at the same level."""
        return self.levels_equal / self.matched if self.matched else 0.0

    @property
    def step_agreement(self) -> float:
        """Share of consecutive matched pairs whose level step agrees (robust to an offset)."""
        return self.steps_agree / self.n_steps if self.n_steps else 0.0

    def to_dict(self) -> dict:
        return {"n_reference": self.n_reference, "n_extracted": self.n_extracted, "matched": self.matched,
                "titles_found": round(self.titles_found, 4), "precision": round(self.precision, 4),
                "level_agreement": round(self.level_agreement, 4), "step_agreement": round(self.step_agreement, 4)}

    def __repr__(self) -> str:
        return (f"Agreement(found {self.matched}/{self.n_reference} = {self.titles_found:.1%}, "
                f"precision {self.precision:.1%}, levels equal {self.level_agreement:.1%}, "
                f"steps agree {self.step_agreement:.1%})")


def lcs_pairs(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """Index pairs of a longest common subsequence of a and b (O(len(a)*len(b)))."""
    n, m = len(a), len(b)
    dp = [[0] * (m + 1) for _ in range(n + 1)]  # dp[i][j] = LCS of a[i:], b[j:]
    for i in range(n - 1, -1, -1):
        ai, row, nxt = a[i], dp[i], dp[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = nxt[j + 1] + 1 if ai == b[j] else max(nxt[j], row[j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if a[i] == b[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif dp[i + 1][j] >= dp[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def heading_agreement(extracted: Tree, reference: Tree) -> Agreement:
    """Compare an extraction's headings with a reference's.

    >>> from ppkit.documents.tree import parse_markdown
    >>> ref = parse_markdown("# A\\n## B\\n## C\\n", "r")
    >>> ext = parse_markdown("### A\\n### B\\n### X\\n", "e")
    >>> heading_agreement(ext, ref).titles_found
    0.6666666666666666
    """
    ref = [n for n in reference.headings() if normalize_title(n.title)]
    ext = [n for n in extracted.headings() if normalize_title(n.title)]
    pairs = lcs_pairs([normalize_title(n.title) for n in ref], [normalize_title(n.title) for n in ext])
    equal = sum(ref[i].level == ext[j].level for i, j in pairs)

    def sign(x: int) -> int:
        return (x > 0) - (x < 0)

    steps = list(zip(pairs, pairs[1:]))
    agree = sum(sign(ref[i2].level - ref[i1].level) == sign(ext[j2].level - ext[j1].level)
                for (i1, j1), (i2, j2) in steps)
    return Agreement(n_reference=len(ref), n_extracted=len(ext), matched=len(pairs), levels_equal=equal,
                     steps_agree=agree, n_steps=len(steps))
