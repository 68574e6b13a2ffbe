"""Which primary financial statement a section holds, as PDF extraction leaves it.

The structural re-ranker's ``statement`` feature and structural recall
(:func:`ppkit.retrieval.recall.statement_candidates`) need to know that a section *is* the balance
sheet, the statement of operations or the statement of cash flows. Curated Markdown titles it plainly
("Consolidated Balance Sheets"); a filing extracted from its PDF does not, in four ways measured on the
FinanceBench shelf:

1. the title carries the filer and the period: "3M Company and Subsidiaries Consolidated Statement of
   Cash Flows Years ended December 31", "SQUARE, INC. CONSOLIDATED STATEMENTS OF OPERATIONS",
   "... Consolidated Statements of Income ($ in millions, except per share data";
2. the title is an empty heading and the table sits under the next heading, a caption line:
   "CONSOLIDATED BALANCE SHEETS" then "(in thousands, except share and per share data)" or
   "At January 1, 2023 and January 2, 2022";
3. the title is no heading at all but a line of the body or the first cell of the statement's table,
   so the statement hides in the section before it ("Critical Audit Matter"); such a line is followed by
   the statement's units, period or table, never by a paragraph ("Balance Sheet:" over the MD&A's
   discussion of it is a subtitle);
4. the statement is split over the headings after its title, its own captions and period lines:
   "Consolidated Statements of Financial Position" then "Assets" and "Liabilities and equity", or
   "CONSOLIDATED BALANCE SHEETS", "ASSETS", "Current assets", ..., "Stockholders' equity"; its title
   heading holds only the units and the period.

The text layer also leaves a statement's rows as run-on prose ("Net product sales $ 79,268 $ 94,665
Net service sales 27,738 41,322 ...") or one table cell with both years ("| Cash | $9,889 $ 8,348 |"),
so a line counts as figures by its share of numbers, not only as a table row with two number cells.

A section after the first note ("Note 14 — Supplemental Financial Information > Statement of Cash Flows",
"Notes to Consolidated Financial Statements", or a PDF's flat "Note 2 - Impact of Adoption of New Standards"
then "Consolidated Statements of Operations") is a note's table, a parent company's or an investee's
statements, not the primary statement. The notes begin at "Notes to ... Financial Statements" or at note
1 (or A); a cross-reference that the extraction made a heading ("Note 14 for additional information.",
"Note 6 of our Notes to ...", an isolated "Note 16. Commitments and Contingencies" long before note 1)
does not begin them.

:func:`statement_kind` reads a title (cases 1); :func:`section_statement_kinds` reads a section of a
tree (cases 2 to 4). A statement with no title anywhere is not recognised (content alone would also
match the MD&A's summary tables). Nothing here is about one filer: the vocabulary is the statements'
standard names.
"""

from __future__ import annotations

import re
import weakref
from functools import lru_cache

from ..core.markup import figure_rows, render
from ..finance.catalogue import catalogue, formula_concepts
from ..finance.read import mentions

__all__ = ["statement_kind", "statements_asked", "asks_for_part", "asks_for_reasons", "asks_for_adjusted",
           "beyond_statements", "section_statement_kinds", "figure_lines",
           "STATEMENT_KINDS"]

# The name of each primary statement (its standard titles): statement -> the pattern of its name. Which statement
# reports a concept asked is the finance catalogue's (each concept's statement).
_STATEMENTS: dict[str, re.Pattern] = {
    "balance": re.compile(r"balance sheets?|statements? of (consolidated )?financial (position|condition)", re.I),
    "operations": re.compile(r"statements? of (consolidated )?(operations|income|earnings)|^(consolidated )?income "
                             r"statements?", re.I),
    "cash_flows": re.compile(r"statements? of (consolidated )?cash flows?", re.I),
}
STATEMENT_KINDS = tuple(_STATEMENTS)

_QUALIFIER = r"(?:(?:the|consolidated|combined|condensed)\s+)*"
# the statement's name, after an optional filer ("X and Subsidiaries", "X, INC.") and qualifiers
_NAME = re.compile(r"(?P<prefix>.*?)\b" + _QUALIFIER + r"(?P<name>statements? of (?:consolidated )?(?:financial "
                   r"(?:position|condition)|operations|income|earnings|cash flows?)|balance sheets?|"
                   r"income statements?)\b(?P<rest>.*)$", re.I)
# words that make the text before a statement's name something other than its filer
# ("Analysis of the", "Notes to", "Key", "Selected", "Index to")
_NOT_FILER = re.compile(r"\b(of|to|the|in|on|for|from|by|with|analysis|selected|summary|key|notes?|index|data|"
                        r"supplemental|information|discussion|review|highlights?|changes?|see|our)\b", re.I)
# what may follow the name: the period, the units, "(continued)", "(unaudited)"
_AFTER = re.compile(r"^[\s\-–—:,.]*(?:(?:for )?(?:the )?(?:(?:fiscal )?(?:years?|quarters?)|periods?|"
                    r"(?:three|six|nine|twelve|thirteen|twenty.\w+|fifty.\w+) (?:months|weeks)) ended\b.*|"
                    r"(?:at|as of)\b.*|\(.*|(?:unaudited|continued)\b.*|"
                    # the filer after the name: "... Income Corning Incorporated and Subsidiary Companies"
                    r"[\w.,&' ]{1,60}\band (?:its )?(?:consolidated )?subsidiar(?:y|ies)\b.*)?$", re.I)
# a note of the financial statements: "Note 14 — ...", "NOTE B. ...", "Notes to Consolidated Financial Statements"
# ("NOTE TO INVESTORS CONCERNING FORWARD-LOOKING STATEMENTS" in an earnings release is none)
# (a note's number is one or two digits, not "Notes 4.50% due 2027" nor "Note 2025 Outlook"; its letter a capital)
_NOTE = re.compile(r"^(?:notes?\s+(?:\d{1,2}\b(?![.,]\d|%)|(?-i:[A-Z])\b)|notes?\s+to\s+(?:the\s+)?"
                   r"(?:(?:unaudited|interim|consolidated|combined|condensed)\s+)*financial statements\b)", re.I)
# the note that opens the notes: "Note 1", "NOTE A", "Notes to Consolidated Financial Statements"
_FIRST_NOTE = re.compile(r"^(?:notes?\s+(?:1|(?-i:A))\b(?![.,]\d|%)|notes?\s+to\b)", re.I)
# a cross-reference the extraction made a heading: "Note 14 for additional information.", "Note 6 of our Notes to"
_CROSS_REF = re.compile(r"^notes?\s+(?:\d{1,2}|[A-Z])\b[\s,]*(?:of|for|to|in|and|on|under|within)\b", re.I)
_MARKUP = re.compile(r"<[^>]+>|[*_`#>]+")
_NOTE_START: dict[int, tuple] = {}  # id(tree) -> (weak reference to it, first note's position, positions)


def _plain(text: str) -> str:
    return " ".join(_MARKUP.sub(" ", text).split())


@lru_cache(maxsize=16384)  # statement recall asks it of every section title of the searched documents, per question
def statement_kind(title: str) -> str | None:
    """Which primary statement a title names, if any (``"Consolidated Balance Sheets"`` -> ``"balance"``).

    Only titles that *are* a statement count: a filer may precede the name and a period or units may
    follow it ("Amcor plc and Subsidiaries Consolidated Statements of Income ($ in millions"), but
    "Selected Income Statement Data" or "Analysis of the Consolidated Statements of Cash Flows" are not one.

    >>> statement_kind("3M Company and Subsidiaries Consolidated Statement of Cash Flows Years ended December 31")
    'cash_flows'
    """
    m = _NAME.match(_plain(title))
    if not m:
        return None
    prefix = m.group("prefix").strip(" -–—:,.")
    if prefix and (_NOT_FILER.search(prefix) or not re.search(r"[A-Za-z]", prefix)):
        return None
    if not _AFTER.match(m.group("rest")):
        return None
    name = m.group("name")
    return next((kind for kind, pattern in _STATEMENTS.items() if pattern.search(name)), None)


def statements_asked(question: str) -> set[str]:
    """The statement kinds that report what the question asks about: the statements of the catalogue's concepts
    behind each measure or row it names (:func:`ppkit.finance.read.mentions`), or a statement it names itself.

    >>> sorted(statements_asked("What was the quick ratio and the capex?"))
    ['balance', 'cash_flows']
    """
    cat = catalogue()
    kinds: set[str] = set()
    for m in mentions(question):
        if m.kind == "measure":
            kinds |= {cat.concepts[c].statement for c in formula_concepts(cat.measures[m.id].formula)}
        elif m.kind == "concept":
            kinds.add(cat.concepts[m.id].statement)
    kinds |= {kind for kind, pattern in _STATEMENTS.items() if pattern.search(question)}
    return kinds & set(_STATEMENTS)


# a part of the company: a segment or division, or a geography ("US sales", "international sales growth",
# "which geographic region", "the Data Center segment", "sales in Europe"). The words in lower case, the
# places not followed by another capitalised word, so that a name ("Marriott International", "U.S. Steel",
# "Europe Holdings") or "U.S. GAAP" is no part.
_PART = re.compile(r"\b(?:segments?|divisions?|business units?|product lines?|geograph(?:y|ic|ical|ies)|regions?|"
                   r"regional|countr(?:y|ies)|domestic|international|foreign|overseas)\b|"
                   r"\b(?:U\.S\.|US|United States|North America|Latin America|Americas|Europe|EMEA|APAC|Asia)(?![\w.])"
                   r"(?!\s+(?:GAAP|[A-Z]))|\bnon-U\.?S\.?(?!\w)")


def asks_for_part(question: str) -> bool:
    """Whether the question asks about a part of the company (a segment, a division, a region or country), not
    the whole. The primary statements report the consolidated whole, so they do not answer it: the sales of
    one region or one segment are in the MD&A, a release's regional table or the segment note (general
    accounting knowledge, like :func:`statements_asked`).

    >>> asks_for_part("How did US sales growth compare to international sales growth?")
    True
    >>> asks_for_part("What was Marriott International's U.S. GAAP net income?")
    False
    """
    return bool(_PART.search(question))


# a question that asks what caused a change ("What drove operating margin change", "Why did ... raise guidance"):
# the statements give the figures, the discussion (MD&A, a release's commentary) gives the causes
_REASONS = re.compile(r"\b(?:what|which)\s+(?:factors?\s+)?(?:drove|drives|caused|causes|led to)\b|"
                      r"\bdrivers?\s+(?:of|behind)\b|\bwhy\s+(?:did|has|have|was|were|is|are|does|do)\b|"
                      r"\breasons?\s+(?:for|behind)\b", re.I)
# a measure the company defines beside the statements: adjusted, non-GAAP, organic or constant-currency figures,
# or a figure with effects taken out ("excluding the impact of FX"); its reconciliation tables report it
# ("excluding leases" takes out a line, not an effect: the statements still report it)
_ADJUSTED = re.compile(r"\b(?:adjusted|non[- ]?gaap|organic|constant[- ]currency|pro[- ]forma)\b|"
                       r"\bexclud(?:e|es|ing)\s+(?:[\w-]+\s+){0,2}(?:impacts?|effects?)\b", re.I)  # "excluding (the) currency effects"


def asks_for_reasons(question: str) -> bool:
    """Whether the question asks what caused a change (its drivers, its reasons), which the discussion of the
    figures answers, not the statements that report them.

    >>> asks_for_reasons("What drove gross margin change as of FY2022?")
    True
    >>> asks_for_reasons("If gross margin is not a useful metric, then state that and explain why.")
    False
    """
    return bool(_REASONS.search(question))


def asks_for_adjusted(question: str) -> bool:
    """Whether the question asks for a measure defined beside the primary statements: an adjusted, non-GAAP,
    organic or constant-currency figure, or one with effects excluded. The statements report GAAP figures; the
    company's reconciliation or its discussion reports these.

    >>> asks_for_adjusted("What was the adjusted non-GAAP EBITDA for FY2023?")
    True
    >>> asks_for_adjusted("What was the FY2023 EBITDA?")
    False
    >>> asks_for_adjusted("What was total debt excluding operating leases?")
    False
    """
    return bool(_ADJUSTED.search(question))


def beyond_statements(question: str) -> bool:
    """Whether the primary statements cannot answer the question although it names a concept they report: it asks
    about a part of the company (:func:`asks_for_part`), the causes of a change (:func:`asks_for_reasons`) or an
    adjusted measure (:func:`asks_for_adjusted`). The structural re-ranker gives no statement match then."""
    return asks_for_part(question) or asks_for_reasons(question) or asks_for_adjusted(question)


def _title_lines(lines: list[str]) -> list[str]:
    """Lines of a section body that could be a statement's title: the first cell of each table's first row,
    and short text lines whose next text is not prose (a statement's title is followed by its units, period
    or table; "Balance Sheet:" over a paragraph in the MD&A is a discussion's subtitle)."""
    out, prev_table = [], False
    for i, ln in enumerate(lines):
        s = ln.strip()
        table = s.startswith("|")
        if table and not prev_table:
            out.append(s.strip("|").split("|")[0])
        elif s and not table and len(s) <= 160 and not _prose(_next_text(lines, i)):
            out.append(s)
        prev_table = table
    return out


def _next_text(lines: list[str], i: int) -> list[str]:
    """The first non-blank line after ``lines[i]``, as a list (empty at the end)."""
    return next(([ln] for ln in lines[i + 1:] if ln.strip()), [])


def _under_note(tree, node_id: str) -> bool:
    """Whether a heading before the section (in document order, never the section itself) is a note of the
    financial statements: the notes follow the primary statements, so what is titled like a statement after
    them is a note's table or another entity's statements (a parent company's, an investee's), under the note
    in curated Markdown and beside it in an extracted PDF.

    >>> _under_note(tree, "0150")  # "Note 14 — ... > Balance Sheet > Statement of Cash Flows"  # doctest: +SKIP
    True
    """
    first, order = _note_start(tree)
    return first is not None and order.get(node_id, -1) > first


def _note_start(tree) -> tuple[int | None, dict[str, int]]:
    """(position of the tree's first note heading in document order or None, each node's position), computed
    once per tree (a tree is immutable; the cache holds it weakly, keyed by identity)."""
    hit = _NOTE_START.get(id(tree))
    if hit is not None and hit[0]() is tree:
        return hit[1], hit[2]
    order = {nid: i for i, nid in enumerate(tree.nodes)}
    notes = [(order[nid], _plain(node.title)) for nid, node in tree.nodes.items() if node.parent_id is not None]
    notes = [(i, t) for i, t in notes if _NOTE.match(t) and not _CROSS_REF.match(t)]
    # the notes open with note 1 or "Notes to ..."; a lone later note before that is a cross-reference
    first = next((i for i, t in notes if _FIRST_NOTE.match(t)), notes[0][0] if notes else None)
    _NOTE_START[id(tree)] = (weakref.ref(tree), first, order)
    weakref.finalize(tree, _NOTE_START.pop, id(tree), None)  # gone with the tree
    return first, order


_FIGURE = re.compile(r"^\(?-?\$?\(?-?\d[\d,]*(?:\.\d+)?\)?%?$")
# headings that end a statement's run of captions: another statement or schedule, the notes, a report, an Item
_RUN_ENDS = re.compile(r"statements?\b|balance sheets?|\bnotes?\b|report|\bitem\b|\bpart\b|schedule|index|"
                       r"signatures?|exhibit|selected|summary|highlights|discussion|analysis|opinion", re.I)
_RUN_MAX = 10  # caption headings a statement runs over (a balance sheet's Assets, Current assets, ..., Equity)
_PROSE_WORDS = 25  # a line of at least this many words, mostly words, is prose: no statement's caption
_RUNS: dict[int, tuple] = {}  # id(tree) -> (weak reference to it, {node_id: kind of the statement it continues})


def _figure_line(line: str) -> tuple[int, int]:
    """(numbers, words) of a line, the table's bars and a lone currency sign left out."""
    nums = words = 0
    for tok in line.replace("|", " ").split():
        tok = tok.strip(",;:*")
        if not tok or tok == "$":
            continue
        if _FIGURE.match(tok):
            nums += 1
        else:
            words += 1
    return nums, words


def figure_lines(lines: list[str]) -> int:
    """Rows of figures in ``lines`` as a PDF's text layer leaves them: table rows with two or more
    numbers (two years in one cell too) and, in run-on prose, one row for every three numbers of a line
    that is at least a third numbers ("Net sales $ 1,200 $ 1,100 Cost of sales 700 650" -> 1).

    >>> figure_lines(["| Cash | $9,889 $ 8,348 |", "Net sales $ 1,200 $ 1,100 $ 1,000 Cost of sales 700 650 600",
    ...               "Sales rose 5% to $1,200 million in 2022 from $1,100 million in 2021, driven by volume."])
    3
    """
    n = 0
    for _, text in render(lines):
        nums, words = _figure_line(text)
        if text.lstrip().startswith("|"):
            n += nums >= 2
        elif nums >= 3 and nums * 2 >= words:
            n += (nums + 2) // 3
    return n


def _prose(lines: list[str]) -> bool:
    """Whether ``lines`` hold a sentence of prose (long, mostly words): a discussion, not a statement's caption."""
    for ln in lines:
        if ln.lstrip().startswith("|"):
            continue
        nums, words = _figure_line(ln)
        if words >= _PROSE_WORDS and nums * 4 < words:
            return True
    return False


def _statement_runs(tree, lines: list[str]) -> dict[str, str]:
    """{node_id: statement kind} for the headings that continue a statement after its titled heading (case 4):
    in document order, up to ``_RUN_MAX`` headings without prose of their own and without a title that names
    something else (another statement, the notes, a report, an Item); computed once per tree."""
    hit = _RUNS.get(id(tree))
    if hit is not None and hit[0]() is tree:
        return hit[1]
    first, order = _note_start(tree)
    runs: dict[str, str] = {}
    kind, left = None, 0
    for nid, node in tree.nodes.items():
        if node.parent_id is None:
            continue
        if first is not None and order[nid] >= first:
            break  # the notes: no primary statement after them
        own = statement_kind(node.title)
        if own:
            kind, left = own, _RUN_MAX
        elif kind and left and not _RUN_ENDS.search(_plain(node.title)) \
                and not _prose(lines[node.line_start:node.text_end]):
            runs[nid] = kind
            left -= 1
        else:
            kind = None
    _RUNS[id(tree)] = (weakref.ref(tree), runs)
    weakref.finalize(tree, _RUNS.pop, id(tree), None)
    return runs


def section_statement_kinds(tree, lines: list[str], node_id: str, body: list[str], *,
                            min_rows: int = 5) -> frozenset[str]:
    """The primary statements a section holds, by its title, a title heading before it whose statement
    runs over this section's captions (an empty title, "Assets", "Years ended December 31"), or a title
    line in its body; only a section with figures holds one (a statement's years side by side,
    :func:`figure_lines`).

    Args:
        tree: the document's :class:`ppkit.documents.tree.Tree` (``node_id`` -> Node, ids in pre-order).
        lines: the document's source lines (read for the headings before the section).
        node_id: the section's node.
        body: the section's lines as indexed, rendered (HTML tables as pipe rows,
            :func:`ppkit.core.markup.render`), its heading first.
        min_rows: rows of figures that the section must have for a title line in its body to count (one
            such row when its own title, or the statement it continues, names the statement).

    >>> section_statement_kinds(tree, lines, "0012", body)  # doctest: +SKIP
    frozenset({'balance'})
    """
    rows = max(figure_rows(body), figure_lines(body))
    if rows == 0:
        return frozenset()  # a discussion titled "Balance Sheet:" in the MD&A is not the statement
    if _under_note(tree, node_id):
        return frozenset()  # a note's table titled "Statement of Cash Flows" is not the statement
    own = statement_kind(tree[node_id].title)
    if own:
        return frozenset({own})
    run = _statement_runs(tree, lines).get(node_id)
    if run:
        return frozenset({run})
    if rows < min_rows:
        return frozenset()
    return frozenset(k for k in map(statement_kind, _title_lines(body[1:])) if k)
