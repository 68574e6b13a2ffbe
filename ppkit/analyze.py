"""Query analysis: filters taken from the question before search.

Offline and rule-based: a document is selected when the question names it, by
its indexed name or by an alias recorded in the index manifest's metadata
(``metadata["aliases"]``, ``metadata["company"]``, ``metadata["ticker"]``),
matched case-insensitively on word boundaries. A question that names no
document searches everything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["QueryFilters", "analyze_query"]


@dataclass(frozen=True)
class QueryFilters:
    """Filters for one question."""

    docs: list[str] | None = None  # None: no document restriction
    matched: dict = field(default_factory=dict)  # doc -> the words that selected it
    search_text: str = ""  # the question without the names that became filters
    analyzer: str = "offline-names"


def _names(index, doc: str) -> list[str]:
    meta = index.record(doc).metadata or {}
    names = [doc, *meta.get("aliases", [])]
    for key in ("company", "ticker"):
        if meta.get(key):
            names.append(meta[key])
    return [n for n in dict.fromkeys(names) if n and len(n) >= 2]


def analyze_query(index, question: str) -> QueryFilters:
    """The documents a question names.

    >>> analyze_query(index, "For AMD, what is the current ratio?").docs  # doctest: +SKIP
    ['AMD']
    """
    matched: dict[str, str] = {}
    search = question
    for doc in index.docs:
        for name in _names(index, doc):
            rx = re.compile(rf"(?<![\w&]){re.escape(name)}(?:['’]s)?(?![\w&])", flags=re.I)
            if rx.search(question):
                matched[doc] = name
                # once a name is a filter it carries no information inside the document
                # (every chunk of it says "AMD"), so it is left out of the search text
                search = rx.sub(" ", search)
                break
    search = re.sub(r"^\W+|\s+(?=[,.?])", "", re.sub(r"\s+", " ", search)).strip()
    return QueryFilters(docs=list(matched) or None, matched=matched, search_text=search or question)
