"""Heading titles: numbering prefixes and the normal form titles are matched in.

One place for what several stages need to know about a title: whether it carries its own
numbering (``Item 7.``, ``Note 5``, ``3.2``, ``(a)``, ``IV.``) and what it is without it
(:func:`numbering_prefix`, :func:`strip_numbering`, :func:`is_numbered`), and the normal form
used to compare titles across documents and against rules (:func:`normalize_title`). Which
*scheme* a numbering belongs to (10-K Items, IEEE sections, outline numbers) and its rank is
:func:`ppkit.documents.repair.heading_number`'s job.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["numbering_prefix", "strip_numbering", "is_numbered", "normalize_title", "plain_title"]

# "Item 7.", "PART II", "Note 5 –", "Section 4.", "3.2 ", "IV. ", "(a) ", "A.7 ", "ERW.3 "
_NUMBERED = re.compile(
    r"^\s*((part|item|section|chapter|appendix|note|schedule|exhibit|article)\s+[ivxlc\d]+[a-z]?\b[.:)]?"
    r"|[ivxlc]+[.)]\s|[a-z][.)]\s|\([a-z\d]{1,4}\)\s|[a-z]{0,4}\.?\d+(\.\d+)*[.)]?\s)",
    re.I,
)
_TAG = re.compile(r"<[^<>]+>")


def numbering_prefix(title: str) -> str:
    """The numbering a title starts with (``"Item 7."`` of ``"Item 7. MD&A"``), or ``""``."""
    m = _NUMBERED.match(title)
    return m.group(0) if m else ""


def is_numbered(title: str) -> bool:
    """Whether a heading carries its own numbering (``Item 7.``, ``Note 5``, ``3.2``, ``(a)``).

    >>> is_numbered("ITEM 7. MANAGEMENT'S DISCUSSION"), is_numbered("Gaming")
    (True, False)
    """
    return bool(numbering_prefix(title))


def strip_numbering(title: str, times: int = 2) -> str:
    """The title without its numbering prefixes (up to ``times`` of them: ``"Part II Item 7. MD&A"``)."""
    t = title.strip()
    for _ in range(times):
        t = t[len(numbering_prefix(t)):].strip()
    return t


def plain_title(title: str) -> str:
    """A title without emphasis markers and odd spacing, case kept: ``"**Item  7.**"`` -> ``"Item 7."``."""
    t = unicodedata.normalize("NFKC", title).replace("*", "").replace("_", " ")
    return re.sub(r"\s+", " ", t).strip()


def normalize_title(title: str, *, drop_numbering: bool = False) -> str:
    """Casefolded title without markup, punctuation, emphasis or odd spacing, for matching.

    ``drop_numbering`` also drops its numbering prefixes (the noise rules judge ``"7. References:"``
    as ``"references"``).

    >>> normalize_title("**Item  7.** Management’s Discussion")
    'item 7 management s discussion'
    >>> normalize_title("7.06 Effect of Specific References:", drop_numbering=True)
    'effect of specific references'
    """
    t = _TAG.sub(" ", unicodedata.normalize("NFKC", title).casefold())
    if drop_numbering:
        t = strip_numbering(t.replace("*", " "))
    t = re.sub(r"[^\w\s]|_", " ", t)
    return re.sub(r"\s+", " ", t).strip()
