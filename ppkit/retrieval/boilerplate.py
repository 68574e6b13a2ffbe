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
subsidiaries keeps them). The answer stage demotes such passages
(:mod:`ppkit.answer.passages`). This module does not drop anything: a demoted section is still sent.
"""

from __future__ import annotations

import re

from ..core.ids import breadcrumb_titles
from ..core.text import stems

__all__ = ["BOILERPLATE_KINDS", "boilerplate_kind", "asks_for"]

BOILERPLATE_KINDS = ("exhibits", "subsidiaries", "plan", "certification", "signatures", "cover")

_TITLE = {
    "exhibits": re.compile(r"\bexhibits?\b|\bfinancial statement schedules\b", re.I),
    "subsidiaries": re.compile(r"\bsubsidiaries\b", re.I),
    "plan": re.compile(r"\b(?:incentive|stock|equity|compensation|savings|retirement|deferred)\b.*\bplan\b|"
                       r"\b(?:agreement|indenture|by-?laws|articles of incorporation|certificate of incorporation)\b",
                       re.I),
    "certification": re.compile(r"\bcertifications?\b|\bsection (?:302|906)\b|\bsarbanes", re.I),
    "signatures": re.compile(r"^\W*(?:signatures?|power of attorney)\W*$", re.I),
    "cover": re.compile(r"\bsecurities registered pursuant\b|\bcover page\b", re.I),
}
_EXHIBIT_NO = re.compile(r"^\s*\|?\s*\**\(?\d{1,3}(?:\.\d{1,3}[a-z]?|\.[A-Z]{3})?\)?\**\*?\s*\|")
_BY_REFERENCE = re.compile(r"incorporated (?:herein )?by reference", re.I)
_CHECK = re.compile(r"indicate by check mark|commission file number|\[\s*[x ]?\s*\]|☐|☒", re.I)
_SIGNED = re.compile(r"/s/")
_CERTIFY = re.compile(r"\bI,\s+[A-Z][^,]{2,60},\s+certify\b|\bhereby certif", re.I)
_LEGAL = re.compile(r"\bshall\b", re.I)
_NUMBERED = re.compile(r"^\s*(?:section|article)\s+\d+(?:\.\d+)*", re.I | re.M)

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

    >>> boilerplate_kind("AMD > Part IV > Exhibit Index", "| 10.1 | Credit Agreement |\\n| 31.1 | Cert |")
    'exhibits'
    >>> boilerplate_kind("AMD > Item 7 > Results of Operations", "Net revenue was $23.6 billion.") is None
    True
    """
    titles = breadcrumb_titles(breadcrumb)
    title = titles[-1] if titles else breadcrumb
    lines = [ln for ln in text.split("\n") if ln.strip()]
    rows = [ln for ln in lines if ln.lstrip().startswith("|")]
    size = max(1, len(text))
    if len(rows) >= 4 and sum(1 for r in rows if _EXHIBIT_NO.match(r)) >= 0.5 * len(rows):
        return "exhibits"
    if len(_BY_REFERENCE.findall(text)) >= max(3, size / 1500):
        return "exhibits"
    if _CERTIFY.search(text) or _TITLE["certification"].search(title):
        return "certification"
    if len(_SIGNED.findall(text)) >= 3 or _TITLE["signatures"].search(title):
        return "signatures"
    if len(_CHECK.findall(text)) >= 3 or _TITLE["cover"].search(title):
        return "cover"
    for kind in ("exhibits", "subsidiaries", "plan"):
        if _TITLE[kind].search(title):
            return kind
    if len(_LEGAL.findall(text)) >= max(6, size / 800) and len(_NUMBERED.findall(text)) >= 3:
        return "plan"
    return None


def asks_for(question: str, kind: str) -> bool:
    """Whether ``question`` asks for boilerplate of ``kind`` (then it is not demoted).

    >>> asks_for("Which subsidiaries does AMD list?", "subsidiaries")
    True
    """
    return bool(set(stems(question)) & _ASKS.get(kind, set()))
