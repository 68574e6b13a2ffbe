"""Boilerplate sections: what a filing must carry but a reader rarely asks about.

:func:`boilerplate_kind` names a section that is an exhibit index, a subsidiary list, a plan or
agreement document, a certification, a signature page or cover-page legal text, from two kinds of
evidence that need no model and no list of filings:

* its **title** (the breadcrumb's last element): "Exhibit Index", "Subsidiaries of the Registrant",
  "Certification Pursuant to Section 302", "Signatures", "Power of Attorney";
* its **shape**: a table whose rows start with exhibit numbers ("10.1", "31.2", "101.INS"), a high density
  of "incorporated by reference", check-mark boxes and "Commission File Number" (the cover page),
  "/s/" signature lines, "I, ..., certify that", a legal document's "shall" and numbered sections.

:func:`asks_for` says whether a question asks for that kind (a question about exhibits or
subsidiaries keeps them). Retrieval moves such sections below the content it recalled
(:func:`demote`, after the re-ranker), and the answer stage demotes such passages
(:mod:`ppkit.answer.passages`). Nothing is dropped: a demoted section stays a candidate, and is sent when
the content runs out.

The rules were written for SEC filings. Retrieval applies them only to documents whose catalog form type is a
filing (:func:`filing_docs`): in a paper or a credit agreement, numbered sections, "shall" and signature lines
are the content. A section that holds an Item of the filing with prose of its own ("Item 8.01 Other Events."
and its paragraph, left inside an 8-K's cover section by a flat PDF tree) is content whatever the cover or
exhibit lines around it (:func:`boilerplate_kind`).
"""

from __future__ import annotations

import re

from dataclasses import replace
from functools import lru_cache
from weakref import WeakKeyDictionary

from ..core.ids import breadcrumb_titles
from ..core.text import stems
from ..documents.cover import FORMS
from .types import Candidate

__all__ = ["BOILERPLATE_KINDS", "boilerplate_kind", "asks_for", "demote", "filing_docs", "filings_of"]

BOILERPLATE_KINDS = ("exhibits", "subsidiaries", "plan", "certification", "signatures", "cover")

_TITLE = {
    "exhibits": re.compile(r"\bexhibits?\b|\bfinancial statement schedules\b", re.I),
    # "PepsiCo, Inc. and Subsidiaries" heads a consolidated statement: the group, not a list of it
    "subsidiaries": re.compile(r"(?<!\band )\bsubsidiaries\b", re.I),
    "plan": re.compile(r"\b(?:incentive|stock|equity|compensation|savings|retirement|deferred)\b.*\bplan\b|"
                       r"\b(?:agreement|indenture|by-?laws|articles of incorporation|certificate of incorporation)\b",
                       re.I),
    "certification": re.compile(r"\bcertifications?\b|\bsection (?:302|906)\b|\bsarbanes", re.I),
    "signatures": re.compile(r"^\W*(?:signatures?|power of attorney)\W*$", re.I),
    "cover": re.compile(r"\bsecurities registered pursuant\b|\bcover page\b", re.I),
}
_EXHIBIT_NO = re.compile(r"^\s*\|?\s*\**\(?\d{1,3}(?:\.\d{1,3}[a-z]?|\.[A-Z]{3})?\)?\**\*?\s*\|")
_BY_REFERENCE = re.compile(r"incorporated (?:herein )?by reference", re.I)
# a check box "[ ]" / "[x]", not the empty brackets of a Markdown image or link ("![](fig1.png)", "[](#note)")
_CHECK = re.compile(r"indicate by check mark|commission file number|(?<!!)\[\s*[x ]?\s*\](?!\()|☐|☒", re.I)
_SIGNED = re.compile(r"/s/")
_CERTIFY = re.compile(r"\bI,\s+[A-Z][^,]{2,60},\s+certify\b|\bhereby certif", re.I)
_LEGAL = re.compile(r"\bshall\b", re.I)
_NUMBERED = re.compile(r"^\s*(?:section|article)\s+\d+(?:\.\d+)*", re.I | re.M)
# an Item of a filing on a line of its own ("Item 8.01 Other Events.", "ITEM 7. MANAGEMENT'S ..."), not the
# exhibits, signatures or summary Items, which are boilerplate themselves
_ITEM = re.compile(r"^\W*item\s+\d{1,2}(?:\.\d{2})?[a-c]?\b(?!.*\b(?:exhibits?|signatures?|summary)\b)", re.I)
ITEM_PROSE = 400  # characters of prose under an Item (no boilerplate marker in it) that make a section content

# the words a question uses when it asks for each kind (stems)
_ASKS = {
    "exhibits": {"exhibit", "agreement", "indentur", "bylaw", "charter", "certif", "certifi"},  # what they list
    "subsidiaries": {"subsidiari"},
    "plan": {"plan", "agreement", "indentur", "bylaw", "charter", "award", "grant"},
    "certification": {"certif", "certifi", "sarban", "302", "906"},
    "signatures": {"sign", "signatur", "signatori", "attorney"},
    "cover": {"cover", "registr", "registrant", "filer", "exchang", "ticker", "symbol", "outstand", "incorpor",
              "headquart", "address", "commiss", "file"},
}


def boilerplate_kind(breadcrumb: str, text: str) -> str | None:
    """The kind of boilerplate a section is (one of :data:`BOILERPLATE_KINDS`), or None for content.

    Memoised on ``(breadcrumb, text)`` (a pure function of them; every question re-reads the same
    candidate sections, and the regular expressions over their whole text were a fifth of an offline answer's
    CPU). The cache is bounded (:data:`_KIND_CACHE` entries).

    >>> boilerplate_kind("AMD > Part IV > Exhibit Index", "| 10.1 | Credit Agreement |\\n| 31.1 | Cert |")
    'exhibits'
    >>> boilerplate_kind("AMD > Item 7 > Results of Operations", "Net revenue was $23.6 billion.") is None
    True
    """
    return _kind(breadcrumb, text)


_KIND_CACHE = 8192  # sections: about the 50 candidates of 160 questions


@lru_cache(maxsize=_KIND_CACHE)
def _kind(breadcrumb: str, text: str) -> str | None:
    titles = breadcrumb_titles(breadcrumb)
    title = titles[-1] if titles else breadcrumb
    lines = [ln for ln in text.split("\n") if ln.strip()]
    rows = [ln for ln in lines if ln.lstrip().startswith("|")]
    size = max(1, len(text))
    if len(rows) >= 4 and sum(1 for r in rows if _EXHIBIT_NO.match(r)) >= 0.5 * len(rows):
        return "exhibits"
    item = _holds_item(lines)
    if not item and len(_BY_REFERENCE.findall(text)) >= max(3, size / 1500):
        return "exhibits"
    if _CERTIFY.search(text) or _TITLE["certification"].search(title):
        return "certification"
    if len(_SIGNED.findall(text)) >= 3 or _TITLE["signatures"].search(title):
        return "signatures"
    if (not item and len(_CHECK.findall(text)) >= 3) or _TITLE["cover"].search(title):
        return "cover"
    for kind in ("exhibits", "subsidiaries", "plan"):
        if _TITLE[kind].search(title):
            return kind
    if len(_LEGAL.findall(text)) >= max(6, size / 800) and len(_NUMBERED.findall(text)) >= 3:
        return "plan"
    return None


def _holds_item(lines: list[str]) -> bool:
    """Whether the (non-blank) ``lines`` hold an Item of a filing followed by at least :data:`ITEM_PROSE`
    characters of prose (no table row, no cross-reference or check-mark line) before the next Item: the
    filing's content, not a table of contents (Item after Item) or cover text."""
    prose = None  # characters of prose under the current Item; None before the first
    for ln in lines:
        if _ITEM.match(ln) and len(ln) < 200:
            prose = 0
        elif prose is not None and not ln.lstrip().startswith(("|", "#")) \
                and not _BY_REFERENCE.search(ln) and not _CHECK.search(ln):
            prose += len(ln.strip())
            if prose >= ITEM_PROSE:
                return True
    return False


def filing_docs(catalog: dict[str, dict]) -> frozenset[str]:
    """The documents of a catalog (``{doc: metadata}``, :func:`ppkit.retrieval.analyze.catalog_of`) whose form
    type is a filing (:data:`ppkit.documents.cover.FORMS`: 10-K, 10-Q, 8-K, ..., an earnings release): those the
    boilerplate rules are meant for.

    >>> sorted(filing_docs({"AMD_10K": {"form_type": "10-K"}, "paper": {"form_type": None}, "deal": {}}))
    ['AMD_10K']
    """
    return frozenset(d for d, meta in catalog.items() if (meta or {}).get("form_type") in FORMS)


_IS_FILING: WeakKeyDictionary = WeakKeyDictionary()  # index -> {doc: whether its catalog form type is a filing}


def filings_of(index, docs) -> frozenset[str]:
    """The documents among ``docs`` (names in ``index``, a :class:`ppkit.indexing.index.SearchIndex`) whose
    catalog form type is a filing (:func:`filing_docs`), each document's metadata read once per index (reading
    the whole catalog took 0.7 ms a question on the 75-document shelf)."""
    seen = _IS_FILING.setdefault(index, {})
    for d in docs:
        if d not in seen:
            seen[d] = bool(filing_docs({d: index.record(d).metadata or {}}))
    return frozenset(d for d in docs if seen[d])


def asks_for(question: str, kind: str) -> bool:
    """Whether ``question`` asks for boilerplate of ``kind`` (then it is not demoted).

    >>> asks_for("Which subsidiaries does AMD list?", "subsidiaries")
    True
    """
    return bool(set(stems(question)) & _ASKS.get(kind, set()))


def _related(c: Candidate, top: Candidate) -> bool:
    """Is ``c`` a child of ``top`` (below it in the same document's tree) or its neighbour (the same parent,
    the next or previous heading)?"""
    if c.doc != top.doc or c.node_id == top.node_id:
        return False
    if c.breadcrumb.startswith(top.breadcrumb + " > "):
        return True
    parent = top.breadcrumb.rpartition(" > ")[0]
    return (c.breadcrumb.rpartition(" > ")[0] == parent and c.node_id.isdigit() and top.node_id.isdigit()
            and abs(int(c.node_id) - int(top.node_id)) == 1)


def demote(question: str, ranked: list[Candidate], k: int, *,
           filings: frozenset[str] | set[str] | None = None) -> tuple[list[Candidate], list[str]]:
    """The re-ranked candidates with boilerplate the question does not ask for moved below the content.

    A slot of the first ``k`` a boilerplate section frees goes first to a recalled child or neighbour of the
    top section (the section the re-ranker trusts most), then to the next content candidate in order.
    ``stage2_rank`` is renumbered; nothing is dropped.

    Args:
        question: the question as asked (a question about exhibits or certifications keeps them).
        ranked: the candidates in the re-ranker's order (their ``text`` read for the shape of boilerplate).
        k: the sections that will be sent.
        filings: the documents whose sections can be boilerplate (:func:`filing_docs` of the index's catalog);
            ``None``: every document.

    Returns:
        ``(candidates, notes)``: the new order and one note per section moved out of the first ``k``.

    >>> demote("What was revenue?", [], 5)
    ([], [])
    """
    kinds = [boilerplate_kind(c.breadcrumb, c.text or c.snippet) if filings is None or c.doc in filings else None
             for c in ranked]
    low = [i for i, kind in enumerate(kinds) if kind is not None and not asks_for(question, kind)]
    if not any(i < k for i in low):
        return ranked, []
    content = [c for i, c in enumerate(ranked) if i not in low]
    kept = [c for c in ranked[:k] if c in content]
    freed = k - len(kept)
    rest = [c for c in content if c not in kept]
    if content and freed:  # the top section's children and neighbours first, among the content recalled
        top = content[0]
        near = [c for c in rest if _related(c, top) and (c.stage2_score is None or c.stage2_score > 0)][:freed]
        rest = near + [c for c in rest if c not in near]
    order = kept + rest + [ranked[i] for i in low]
    notes = [f"boilerplate ({kinds[i]}) moved below the content: {ranked[i].section_id}" for i in low if i < k]
    return [replace(c, stage2_rank=n) for n, c in enumerate(order, start=1)], notes
