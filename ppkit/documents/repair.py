"""Heading-level repair: levels from what the document says, not from ``#`` depth.

Extractors get heading levels wrong (a segment heading at ``#`` right after
``## Client``; an offline extractor putting nearly everything at ``###``). This
module infers each heading's level from, in order of trust:

1. **Numbering** (:func:`heading_number`): ``PART I`` > ``Item 1A`` > ``NOTE 4`` /
   financial statements; ``1`` > ``1.2`` > ``1.2.3`` (also ``B.1``); IEEE style
   ``II.`` > ``A.``. Headings of one scheme are siblings; a deeper scheme nests
   under the nearest heading of a shallower one; returning to a scheme closes the
   ones opened inside it.
2. **The PDF's outline** (bookmarks, recorded in the page map by ``ppkit extract``)
   and **the document's own table of contents** (a TOC block in the Markdown): an
   unnumbered heading that the TOC lists after ``Item 15`` (e.g. ``Signatures``)
   becomes a sibling of the items.
3. **Repeated headers**: a title that repeats at least three times with no text of
   its own (``The Boeing Company and Subsidiaries`` above each statement) is made a
   sibling of the heading that follows it, so it cannot swallow that section.
4. Everything else is **unnumbered**: it keeps the extractor's parent relations
   among the unnumbered headings of its run (its parent is the nearest earlier
   unnumbered heading with a smaller raw level), re-rooted one level below the
   innermost open numbered heading. A run ends at the next numbered heading.
   Financial statements are leaves: what follows them belongs to the item. In papers,
   back matter (References, Acknowledgments, Appendix) closes the numbered sections
   and becomes a sibling of the outermost one.

Repair only rewrites the ``#`` run of existing heading lines: no heading is added
or removed and no line moves. Node ids are assigned in file order
(:mod:`ppkit.documents.tree`), so node ``0042`` of the repaired tree is the same heading line
as node ``0042`` of the raw tree; parents, breadcrumbs and subtree ends change. The
repaired Markdown is a separate file with a record of every change
(:func:`repair_file`): a recorded choice, never a silent rewrite of the original.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from ..core.errors import InvalidInput, MissingFile
from ..core.io import atomic_write
from .titles import normalize_title, plain_title
from .tree import Tree, body_start, parse_markdown

__all__ = ["Numbering", "heading_number", "LevelChange", "Repair",
           "repair_markdown", "repair_file", "numbered_structure", "find_toc_blocks", "heading_kinds",
           "WordJoins", "join_split_words", "JOIN_VERSION"]

_ROMAN = "IVXLC"
_RE_PART = re.compile(r"^part\s+([ivx]{1,5})\b", re.I)
_RE_ITEM = re.compile(r"^items?\s+(\d{1,2}[a-c]?)(?=[.:,\s\u2013\u2014-]|$)", re.I)
_RE_NOTE = re.compile(r"^note\s+(\d{1,2})(?=[.:\s\u2013\u2014-]|$)", re.I)
_RE_ROMAN = re.compile(r"^([IVX]{1,5})\.\s+\S")
_RE_NUM = re.compile(r"^(\d{1,2}|[A-Z])((?:\.\d{1,2})*)\.?\s+[A-Za-z(\"\u201c]")
_RE_LETTER = re.compile(r"^([A-Z])[.)]\s+\S")
_RE_STATEMENT = re.compile(
    r"^(?:consolidated\s+)?(?:statements?\s+of\b|balance\s+sheets?\b)", re.I)
_RE_APPENDIX = re.compile(r"^(references|bibliography|appendix|appendices|supplementary)", re.I)
# back matter closes the numbered sections: it is a sibling of the outermost one
_RE_BACK = re.compile(r"^(references|bibliography|acknowledge?ments?|appendix|appendices|impact statement|"
                      r"supplementary material|signatures?)\b", re.I)

# schemes whose headings are leaves: the unnumbered headings after a financial
# statement belong to the item around it, not to the statement
_LEAF_SCHEMES = {"statement"}


@dataclass(frozen=True)
class Numbering:
    """What a heading's title says about its place: scheme, family, rank, label."""

    scheme: str  # part | item | note | statement | roman | letter | num | outline | toc
    family: str  # schemes of one family nest by rank (10k, ieee, num, outline)
    rank: int  # 1 = outermost within the family
    label: str  # "PART II", "Item 1A", "3.2", ...


def heading_number(title: str, *, appendix_letters: bool = False) -> Numbering | None:
    """The numbering scheme a heading title uses, or None when it has none.

    Args:
        title: the heading's display title.
        appendix_letters: treat ``A.`` as the top of the ``1`` / ``1.2`` family
            (papers whose appendices are ``A.``, ``B.1``); else ``A.`` is an
            IEEE-style subsection below ``II.``.

    >>> heading_number("Item 1A. Risk Factors")
    Numbering(scheme='item', family='10k', rank=2, label='Item 1A')
    >>> heading_number("3.2 Low-Rank Property").rank
    2
    """
    t = plain_title(title)
    if m := _RE_PART.match(t):
        return Numbering("part", "10k", 1, f"PART {m.group(1).upper()}")
    if m := _RE_ITEM.match(t):
        return Numbering("item", "10k", 2, f"Item {m.group(1).upper()}")
    if m := _RE_NOTE.match(t):
        return Numbering("note", "10k", 3, f"Note {m.group(1)}")
    if _RE_STATEMENT.match(t):
        return Numbering("statement", "10k", 3, t)
    if m := _RE_ROMAN.match(t):
        return Numbering("roman", "ieee", 1, m.group(1))
    if m := _RE_NUM.match(t):
        first, rest = m.group(1), m.group(2)
        depth = 1 + rest.count(".")
        if first.isdigit() or depth > 1:
            return Numbering("num", "num", depth, first + rest)
    if m := _RE_LETTER.match(t):
        if appendix_letters:
            return Numbering("num", "num", 1, m.group(1))
        return Numbering("letter", "ieee", 2, m.group(1))
    return None


# ---------------------------------------------------------------------------- table of contents

# each run of leaders is tried once, from its start (the same matches: one inside a run would start earlier)
_PAGE_TAIL = re.compile(r"(?<![\s.\u2026])[\s.\u2026]+(\d{1,3}|[ivxlc]{1,6})\s*$", re.I)
_PAGE_CELL = re.compile(r"(?<![\W_])[\W_]*(\d{1,3}|page)[\W_]*", re.I)
_NEUTRAL = re.compile(r"^\s*</?(table|thead|tbody|tfoot|colgroup|col)\b[^>]*>\s*$|^[\s|:-]+$", re.I)


def _units(lines: list[str]) -> list[tuple[int, int, list[str] | None, str]]:
    """The document as (first line, last line, table cells or None, text) units.

    A Markdown table row or an HTML ``<tr>`` (over several lines) is one unit with
    cells; any other non-blank line is a text unit; table scaffolding lines
    (``<table>``, ``|---|``) are units with no cells and no text.
    """
    out = []
    i, n = 0, len(lines)
    while i < n:
        s = lines[i].strip()
        if not s:
            i += 1
            continue
        if _NEUTRAL.match(s):
            out.append((i + 1, i + 1, None, ""))
            i += 1
            continue
        if s.lower().startswith("<tr"):
            j = i
            while j < n - 1 and "</tr>" not in lines[j].lower() and j - i < 60:
                j += 1
            block = " ".join(lines[i:j + 1])
            cells = [re.sub(r"<[^>]+>", " ", c) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", block, re.S | re.I)]
            out.append((i + 1, j + 1, [plain_title(c) for c in cells], ""))
            i = j + 1
            continue
        if s.startswith("|"):
            out.append((i + 1, i + 1, [plain_title(c) for c in s.strip("|").split("|")], ""))
        else:
            out.append((i + 1, i + 1, None, s))
        i += 1
    return out


def _toc_unit_titles(cells: list[str] | None, text: str) -> list[str] | None:
    """Entry titles of one unit if it looks like a TOC entry (ends in a page number), else None."""
    if cells is not None:
        cells = [c for c in cells if c]
        if not cells or not _PAGE_CELL.fullmatch(cells[-1]) or len(cells) > 6:
            return None
        body = cells[:-1]
        out, rest = [], []
        for c in body:  # a row holding "PART I" and "Item 4." names two entries
            if _RE_PART.match(c) and len(body) > 1:
                out.append(c)
            else:
                rest.append(c)
        if rest:
            out.append(plain_title(" ".join(rest)))
        return out or None
    if not text or len(text) > 250 or text.startswith("#"):
        return None
    body = _PAGE_TAIL.sub("", text.lstrip("-*+ "))
    if body == text.lstrip("-*+ ") or not re.search(r"[A-Za-z]{3}", body):
        return None
    return [plain_title(body)]


def find_toc_blocks(lines: list[str], titles: set[str], min_entries: int = 5) -> list[tuple[int, int, list[str]]]:
    """Table-of-contents blocks: (first line, last line, entry titles), lines 1-based inclusive.

    A block is a run of units (table rows, HTML rows, short lines) that end in a page
    number, at least ``min_entries`` of them, with only blank lines or table
    scaffolding between them, at least half of whose entries name a heading of the
    document (``titles``, normalized) or carry 10-K numbering (PART, Item, Note).
    The last condition tells a TOC from a financial table, whose rows also end in numbers.
    """
    blocks = []
    run: list[tuple[int, int, list[str]]] = []

    def named(entry: str) -> bool:
        num = heading_number(entry)
        return normalize_title(entry) in titles or (num is not None and num.family == "10k")

    def close():
        entries = [t for _, _, ts in run for t in ts]
        if len(run) >= min_entries and 2 * sum(map(named, entries)) >= len(entries):
            blocks.append((run[0][0], run[-1][1], entries))

    for a, b, cells, text in _units(lines):
        if cells is None and not text:
            continue  # scaffolding does not break a block
        entry = _toc_unit_titles(cells, text)
        if entry is None:
            # a header row without a page number ("PART I" alone) does not break a block either
            if run and cells is not None and len([c for c in cells if c]) <= 2:
                continue
            close()
            run = []
        else:
            run.append((a, b, entry))
    close()
    return blocks


def _toc_schemes(entries: list[str]) -> dict[str, Numbering]:
    """normalized title -> scheme for unnumbered TOC entries: that of the last numbered entry above."""
    out: dict[str, Numbering] = {}
    last: Numbering | None = None
    for e in entries:
        num = heading_number(e)
        if num is not None:
            last = num
            continue
        key = normalize_title(e)
        if last is not None and key and key not in out:
            out[key] = Numbering("toc", last.family, last.rank, f"{e[:40]!r} (TOC, after {last.label})")
    return out


# ---------------------------------------------------------------------------- level inference


@dataclass(frozen=True)
class _Head:
    index: int
    line: int
    raw_level: int
    title: str


def _classify(heads: list[_Head], lines: list[str], outline) -> list[Numbering | None]:
    norm = [normalize_title(h.title) for h in heads]
    # appendix letters: "B.1" headings exist, or "A." comes after References/Appendix
    has_letter_decimal = any(re.match(r"^[A-Z]\.\d", plain_title(h.title)) for h in heads)
    after_refs = False
    kinds: list[Numbering | None] = []
    for h in heads:
        kinds.append(heading_number(h.title, appendix_letters=has_letter_decimal or after_refs))
        after_refs = after_refs or bool(_RE_APPENDIX.match(plain_title(h.title)))

    # the PDF outline: titles matched in order, numbering prefixes stripped
    if outline:
        queue = [(lv, normalize_title(re.sub(r"^[\dIVXA-Z.]+\s+", "", t))) for lv, t, *_ in outline]
        k = 0
        for i, h in enumerate(heads):
            if kinds[i] is not None:
                continue
            key = normalize_title(re.sub(r"^[\dIVXA-Z.]+\s+", "", plain_title(h.title)))
            for j in range(k, len(queue)):
                if queue[j][1] == key:
                    kinds[i] = Numbering("outline", "outline", queue[j][0], f"outline level {queue[j][0]}")
                    k = j + 1
                    break

    # the document's own TOC block
    toc: dict[str, Numbering] = {}
    for _, _, entries in find_toc_blocks(lines, set(norm)):
        for key, num in _toc_schemes(entries).items():
            toc.setdefault(key, num)
    for i, h in enumerate(heads):
        if kinds[i] is None and norm[i] in toc:
            kinds[i] = toc[norm[i]]
    return kinds


def heading_kinds(tree: Tree, lines: list[str], outline=None) -> list[Numbering | None]:
    """What each heading of ``tree`` says about its level (numbering, outline, TOC), in pre-order.

    The same classification repair uses; the tree check uses it to find levels that
    contradict the numbering.
    """
    heads = [_Head(i, n.line_start, n.level, n.title) for i, n in enumerate(tree.headings())]
    return _classify(heads, lines, outline)


def numbered_structure(kinds: list[Numbering | None]) -> list[tuple[int | None, int | None]]:
    """For each numbered heading: (index of its numbering parent, index of its previous numbering sibling).

    Unnumbered headings get ``(None, None)``. The parent is the heading the numbering
    nests under (``Item 7`` for ``Note 3``; ``3`` for ``3.2``; an outer scheme for a
    new one); the sibling is the previous heading of the same scheme under that parent.
    """
    out: list[tuple[int | None, int | None]] = []
    stack: list[tuple[str, int, int]] = []  # (family, rank, heading index)
    for i, k in enumerate(kinds):
        if k is None:
            out.append((None, None))
            continue
        sib = None
        if k.family == "outline":
            # outline levels are absolute: close everything at or below this depth
            while len(stack) >= k.rank:
                depth = len(stack)
                _, _, j = stack.pop()
                if depth == k.rank:
                    sib = j
        elif any(f == k.family for f, _, _ in stack):
            while stack:
                f, r, j = stack[-1]
                if f == k.family and r < k.rank:
                    break
                stack.pop()
                if f == k.family and r == k.rank:
                    sib = j
                    break
        parent = stack[-1][2] if stack else None
        out.append((parent, sib))
        stack.append((k.family, k.rank, i))
    return out


def _infer_levels(heads: list[_Head], kinds: list[Numbering | None], lines: list[str]) -> list[tuple[int, str]]:
    """(new level, reason) per heading."""
    n = len(heads)
    levels: list[int] = [0] * n
    reasons: list[str] = [""] * n
    struct = numbered_structure(kinds)
    ctx: list[int] = []  # indices of the open numbered headings, innermost last
    run: list[tuple[int, int]] = []  # (raw level, new level) of the open unnumbered headings in this context
    back_level = 0  # level of the last back-matter heading (0: none yet)
    repeated = _repeated_headers(heads, kinds, lines)  # heading index -> times its title repeats
    for i, h in enumerate(heads):
        k = kinds[i]
        if k is not None:
            parent, sib = struct[i]
            if sib is not None:
                levels[i] = levels[sib]
                reasons[i] = f"{k.label}: sibling of {kinds[sib].label}"
            elif parent is not None:
                levels[i] = min(6, levels[parent] + 1)
                reasons[i] = f"{k.label}: inside {kinds[parent].label}"
            else:
                levels[i] = 1
                reasons[i] = f"{k.label}: outermost numbering"
            # the open numbered headings: this one (unless a leaf scheme) and its numbering ancestors
            chain, p = ([] if k.scheme in _LEAF_SCHEMES else [i]), parent
            while p is not None:
                chain.append(p)
                p = struct[p][0]
            ctx = chain[::-1]
            run = []
            continue
        if _RE_BACK.match(plain_title(h.title)) and (back_level or ctx and kinds[ctx[0]].family != "10k"):
            levels[i] = levels[ctx[0]] if ctx else back_level
            reasons[i] = "back matter: sibling of the outermost numbered heading"
            back_level = levels[i]
            ctx, run = [], [(0, levels[i])]  # what follows nests under it (raw level 0: never popped)
            continue
        base = levels[ctx[-1]] + 1 if ctx else 1
        while run and run[-1][0] >= h.raw_level:  # the raw parent is the nearest shallower open heading
            run.pop()
        levels[i] = min(6, run[-1][1] + 1 if run else base)
        if i not in repeated:  # a repeated header is never a parent (it takes the next heading's level below)
            run.append((h.raw_level, levels[i]))
        under = f"inside {kinds[ctx[-1]].label}" if ctx else "before any numbered heading"
        reasons[i] = f"unnumbered, {under}" + (", keeps its raw parent" if run[:-1] else "")

    # repeated headers: a sibling of the heading that follows
    for i in sorted(repeated, reverse=True):
        levels[i] = levels[i + 1]
        reasons[i] = f"repeated header ({repeated[i]}x, no text): level of the next heading"
    return list(zip(levels, reasons))


def _repeated_headers(heads: list[_Head], kinds: list[Numbering | None], lines: list[str]) -> dict[int, int]:
    """heading index -> repeat count, for unnumbered titles seen 3+ times, never with text of their own
    and always followed by another heading (page or statement headers such as "ACME Inc. and Subsidiaries")."""
    groups: dict[str, list[int]] = {}
    for i, h in enumerate(heads):
        if kinds[i] is None:
            groups.setdefault(normalize_title(h.title), []).append(i)
    out = {}
    for idx in groups.values():
        if len(idx) < 3 or idx[-1] == len(heads) - 1:
            continue
        if all(not any(ln.strip() for ln in lines[heads[i].line: heads[i + 1].line - 1]) for i in idx):
            out.update({i: len(idx) for i in idx})
    return out


# ---------------------------------------------------------------------------- public API


@dataclass(frozen=True)
class LevelChange:
    """One heading whose level repair changed (ids and lines are the raw tree's, which repair keeps)."""

    node_id: str
    line: int
    title: str
    old_level: int
    new_level: int
    reason: str


@dataclass(frozen=True)
class Repair:
    """The repaired Markdown and the record of what changed."""

    text: str
    changes: tuple[LevelChange, ...]
    n_headings: int
    source_sha256: str
    sha256: str

    def tree(self, doc: str, *, source: str = "", doc_dir: Path | None = None) -> Tree:
        """The repaired Markdown's tree (same node ids and lines as the raw tree)."""
        return parse_markdown(self.text, doc, source=source, doc_dir=doc_dir)

    def record(self) -> dict:
        """The change record saved beside the repaired file (no text)."""
        return {
            "method": "ppkit.documents.repair: numbering > PDF outline / TOC > repeated headers > relative raw depth",
            "n_headings": self.n_headings, "n_changed": len(self.changes),
            "source_sha256": self.source_sha256, "sha256": self.sha256,
            "changes": [asdict(c) for c in self.changes],
        }

    def __repr__(self) -> str:
        return f"Repair({len(self.changes)} of {self.n_headings} heading levels changed)"


_HASHES = re.compile(r"^( {0,3})(#{1,6})(?=[ \t]|$)")


def repair_markdown(text: str, *, outline=None) -> Repair:
    """Repair heading levels of a Markdown string.

    Args:
        text: the Markdown (e.g. as an extractor emitted it).
        outline: the PDF's bookmarks as ``(level, title, page)`` (``PageMap.outline``), if any.

    Returns:
        A :class:`Repair`; ``text`` differs from the input only in the ``#`` runs of heading lines (a setext
        heading whose level changes is written as an ATX heading on its first line, its other lines blank).

    >>> repair_markdown("# PART I\\n# Item 1. Business\\n").text
    '# PART I\\n## Item 1. Business\\n'
    """
    raw = parse_markdown(text, "doc")
    lines = text.replace("\r\n", "\n").split("\n")
    nodes = raw.headings()
    heads = [_Head(i, n.line_start, n.level, n.title) for i, n in enumerate(nodes)]
    kinds = _classify(heads, lines, outline)
    inferred = _infer_levels(heads, kinds, lines)
    changes = []
    for n, (level, why) in zip(nodes, inferred):
        if level == n.level:
            continue
        line = lines[n.line_start - 1]
        bom = "\ufeff" if line.startswith("\ufeff") else ""  # the tree reads a first line without its BOM
        if _HASHES.match(line[len(bom):]):
            lines[n.line_start - 1] = bom + _HASHES.sub(lambda m, lv=level: m.group(1) + "#" * lv, line[len(bom):], 1)
        else:  # a setext heading: written as an ATX heading in place, line numbers kept
            end = body_start(lines, n)
            lines[n.line_start - 1: end - 1] = ["#" * level + " " + n.raw_title] + [""] * (end - 1 - n.line_start)
        changes.append(LevelChange(n.node_id, n.line_start, n.title, n.level, level, why))
    out = "\n".join(lines)
    return Repair(text=out, changes=tuple(changes), n_headings=len(nodes),
                  source_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
                  sha256=hashlib.sha256(out.encode("utf-8")).hexdigest())


def repair_file(path: str | Path, out: str | Path | None = None) -> Repair:
    """Repair a Markdown file into a new file, with the change record beside it.

    Uses the PDF outline from ``X.pages.json`` when the file was made by ``ppkit extract``.

    Args:
        path: the Markdown file (never modified).
        out: the repaired file (default ``X.repaired.md`` beside ``X.md``); its record is
            ``<out stem>.repair.json``.
    """
    path = Path(path)
    if not path.is_file():
        raise MissingFile(f"no such Markdown file: {path}")
    out = Path(out) if out is not None else path.with_name(path.stem + ".repaired.md")
    if out.resolve() == path.resolve():
        raise InvalidInput(f"repair writes a new file; {out} is the input")
    outline = None
    pages = path.with_name(path.stem + ".pages.json")
    if pages.is_file():
        outline = json.loads(pages.read_text(encoding="utf-8")).get("outline") or None
        outline = [(o["level"], o["title"], o["page"]) for o in outline] if outline else None
    rep = repair_markdown(path.read_text(encoding="utf-8"), outline=outline)
    atomic_write(out, rep.text)
    rec = rep.record() | {"source": str(path), "output": str(out), "outline_used": bool(outline)}
    atomic_write(out.with_name(out.stem + ".repair.json"), json.dumps(rec, ensure_ascii=False, indent=1) + "\n")
    return rep


# ---------------------------------------------------------------------------- split words

JOIN_VERSION = 1  # bump when join_split_words changes (PDF extractions in the cache are re-derived)
_WORD = re.compile(r"[A-Za-z]+")
# what may stand between the two parts of a split word: spaces and inline markup only (``** **<u>``)
_TAG = re.compile(r"</?[a-zA-Z][^<>]*>")
_GAP = re.compile(r"(?:[ \t]|\*\*?|</?u>)+")


@dataclass(frozen=True)
class WordJoins:
    """The text with letter-spaced words joined, and what was joined (``(line, joined word)``)."""

    text: str
    joins: tuple[tuple[int, str], ...]

    def __repr__(self) -> str:
        return f"WordJoins({len(self.joins)} words joined)"


def _letter(a: str, b: str) -> bool:
    """A single letter that is no word of its own ("a" and "I" are, except after a roman numeral: "II I")."""
    return len(b) == 1 and (b not in "aAI" or (b == "I" and set(a) <= set("IVX")))


def join_split_words(text: str, *, min_count: int = 2, rare: int = 2) -> WordJoins:
    """Join words that PDF extraction split apart: ``Busines** **<u>s.</u>**`` -> ``Business.</u>**``,
    ``OVERVI EW`` -> ``OVERVIEW``, ``RESULTS OF OPERATI ONS`` -> ``RESULTS OF OPERATIONS``.

    Letter-spaced type (wide tracking in headings, an underlined last letter) comes out of the
    extractor as two tokens. Two neighbouring tokens ``a`` and ``b`` (letters only, separated by
    spaces and inline markup only) are joined when, counted case-insensitively over the document
    itself (its own vocabulary; no dictionary):

    * ``a+b`` occurs at least ``min_count`` times as a whole word elsewhere, and
    * ``a`` or ``b`` occurs at most ``rare`` times on its own (a fragment), so two ordinary words
      (``in come``) are never merged; a single letter ``b`` counts as a fragment unless it is the
      word ``a`` or ``I`` (``are a`` stays; ``Dat a`` and ``PART II I`` join);
    * ``b`` is lower case or ``a`` all capitals, and no hyphen follows (``Regulation S-K`` stays).

    Only the gap between the two parts is removed (markup in it goes, so ``<u>`` may stay
    unbalanced); no line is added or removed, so a page map's line numbers stay valid. Text
    inside code fences is joined too (extracted PDFs have none). This does not split words that
    extraction glued together.

    >>> join_split_words("OVERVI EW\\nthe overview and an overview\\n").text.split("\\n")[0]
    'OVERVIEW'
    """
    counts: dict[str, int] = {}
    for w in _WORD.findall(_TAG.sub(" ", text)):
        key = w.casefold()
        counts[key] = counts.get(key, 0) + 1
    joins: list[tuple[int, str]] = []

    def fix(line: str, lineno: int) -> str:
        out, pos = [], 0
        words = list(_WORD.finditer(_TAG.sub(lambda m: " " * len(m.group()), line)))  # "<u>" is no word
        i = 0
        while i < len(words) - 1:
            a, b = words[i], words[i + 1]
            gap = line[a.end():b.start()]
            joined = (a.group() + b.group()).casefold()
            ca, cb = counts.get(a.group().casefold(), 0), counts.get(b.group().casefold(), 0)
            shape = b.group().islower() or a.group().isupper()  # not "Regulation S-K"
            if (gap and _GAP.fullmatch(gap) and len(a.group()) >= 2 and shape and line[b.end():b.end() + 1] != "-"
                    and counts.get(joined, 0) >= min_count and (_letter(a.group(), b.group()) or ca <= rare if len(b.group()) == 1 else min(ca, cb) <= rare)):
                out.append(line[pos:a.end()])
                pos = b.start()  # the gap goes
                joins.append((lineno, a.group() + b.group()))
                i += 2  # one join per fragment: "R ESULT S" stays a rarity left alone
                continue
            i += 1
        return "".join(out) + line[pos:]

    lines = text.split("\n")
    out = "\n".join(fix(line, i) for i, line in enumerate(lines, 1))
    return WordJoins(out, tuple(joins))
