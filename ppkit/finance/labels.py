"""Phrases matched on stemmed words: a statement row's label against a concept's labels, a question against the
catalogue's names.

A text is read as **words** (Snowball stems, :func:`ppkit.core.text.stem`; stop words and bracketed asides such as
"(loss)" or "(Note 4)" left out; hyphenated words split) and **boundaries** (a comma, colon, semicolon, dash or
bracket where the text had one). A phrase of the catalogue is words too, with two marks of its own:

* ``*`` stands for one to three words ("total * shareholders' equity" names "Total PepsiCo Common Shareholders'
  Equity");
* a phrase ending in ``…`` names any label it begins ("depreciation and amortization…").

:func:`label_match` says whether a label **is** a phrase (``"exact"``: every word matched), **begins with** it and
then qualifies it (``"prefix"``: a boundary or a qualifying word follows, as in "Accounts receivable, net of
allowances" or "Net income attributable to Acme"), or neither; "Total liabilities and equity" is not "total
liabilities", "Receivables from affiliates" not "receivables". :func:`find_phrases` finds phrases in running text,
the longest first where they overlap. Nothing here knows finance: the phrases come from the catalogue.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..core.text import stem

__all__ = ["words", "phrase", "label_match", "find_phrases", "QUALIFIERS"]

# words that qualify the phrase before them rather than name another row ("..., net of", "attributable to")
QUALIFIERS = frozenset(stem(w) for w in ("net", "attributable", "less", "excluding", "including", "after",
                                           "before", "gross"))
_ASIDE = re.compile(r"\([^()]*\)")
_MARKUP = re.compile(r"<[^<>]+>|[*_`]")
_TOKEN = re.compile(r"[a-z0-9&]+(?:'[a-z0-9]+)?|[,;:(—–]|\s-\s|…|\*")
_BOUNDARY = frozenset(",;:(—–")
# function words only: "other", "total", "net", "not" and the like name a different row and are kept
_FUNCTION = frozenset("a an the of and to in for by from on with at as or its their our".split())
_LEAD = re.compile(r"^\s*(?:less|add|plus|deduct)\s*:\s*")  # "Less: current portion of long-term debt"
_WILD = "zzwildcard"



@lru_cache(maxsize=65_536)
def words(text: str, asides: bool = False) -> tuple[str, ...]:
    """The stems of ``text``'s words, ``"|"`` for a boundary, ``"*"`` and ``"…"`` kept (phrase marks); bracketed
    asides left out unless ``asides`` (a question's "(DSO)" is kept, a row label's "(Note 4)" is not).

    >>> words("Accounts receivable, net of allowances (Note 4)")
    ('account', 'receiv', '|', 'net', 'allow')
    """
    t = text.casefold().replace("’", "'").replace("‘", "'")
    t = _LEAD.sub("", _MARKUP.sub(" ", t.replace("*", f" {_WILD} ") if "*" in t and " * " in f" {t} " else t))
    while not asides and _ASIDE.search(t):
        t = _ASIDE.sub(" ", t)
    t = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", t).replace("...", "…")
    out: list[str] = []
    for tok in _TOKEN.findall(t):
        tok = tok.strip()
        if tok in _BOUNDARY or tok == "-":
            if out and out[-1] != "|":
                out.append("|")
        elif tok in ("*", "…") or tok == _WILD:
            out.append("*" if tok == _WILD else tok)
        elif tok not in _FUNCTION:
            out.append(stem(tok.split("'")[0]) if "'" in tok and not tok.endswith("'s") else stem(tok.replace("'s", "")))
    while out and out[-1] == "|":
        out.pop()
    return tuple(out)


@lru_cache(maxsize=8192)
def phrase(text: str) -> tuple[tuple[str, ...], bool]:
    """A catalogue phrase as ``(words, open_ended)``: its stems (``*`` kept) and whether it ends in ``…``."""
    w = [x for x in words(text) if x != "|"]
    open_ended = bool(w) and w[-1] == "…"
    return tuple(x for x in w if x != "…"), open_ended


def _match_at(label: tuple[str, ...], pos: int, pat: tuple[str, ...]) -> list[int]:
    """The positions in ``label`` (boundaries skipped) where ``pat`` can end when it starts at ``pos``."""
    if not pat:
        return [pos]
    out = []
    head, rest = pat[0], pat[1:]
    if head == "*":
        j, n = pos, 0
        while j < len(label) and n < 3:
            if label[j] == "|":
                break
            j, n = j + 1, n + 1
            out += _match_at(label, j, rest)
        return out
    j = pos
    while j < len(label) and label[j] == "|" and head != "|":
        j += 1
    if j < len(label) and label[j] == head:
        return _match_at(label, j + 1, rest)
    return []


def label_match(label: str, text: str) -> str | None:
    """``"exact"`` when ``label`` is the phrase ``text``, ``"prefix"`` when it begins with it and then qualifies it,
    else None (see the module docstring).

    >>> label_match("Total Acme Shareholders' Equity", "total * shareholders' equity")
    'exact'
    >>> label_match("Net income attributable to Acme Corp.", "net income"), label_match("Net income per share", "net income")
    ('prefix', None)
    >>> label_match("Total liabilities and equity", "total liabilities")
    """
    lab = words(label)
    pat, open_ended = phrase(text)
    if not pat or not lab:
        return None
    best = None
    for end in _match_at(lab, 0, pat):
        rest = [w for w in lab[end:]]
        if not [w for w in rest if w != "|"]:
            return "exact"
        if open_ended or rest[0] == "|" or rest[0] in QUALIFIERS:
            best = "prefix"
    return best


def find_phrases(text: str, phrases: dict[tuple[str, ...], object]) -> list[tuple[int, int, object]]:
    """``(start, end, value)`` word spans of ``text`` (:func:`words`, boundaries kept as words) where a phrase of
    ``phrases`` (``{words: value}``, no marks) occurs, the longest first where they overlap, in text order.

    >>> w = words("What was the quick ratio and the current ratio?")
    >>> [v for _, _, v in find_phrases("What was the quick ratio and the current ratio?",
    ...                                {words("quick ratio"): "q", words("ratio"): "r", words("current ratio"): "c"})]
    ['q', 'c']
    """
    w = words(text, True)
    longest = max((len(p) for p in phrases), default=0)
    found = []
    for i in range(len(w)):
        for n in range(min(longest, len(w) - i), 0, -1):
            key = w[i:i + n]
            if key in phrases:
                found.append((i, i + n, phrases[key]))
    found.sort(key=lambda f: (f[0] - f[1], f[0]))
    taken: list[tuple[int, int, object]] = []
    for f in found:
        if all(f[1] <= t[0] or f[0] >= t[1] for t in taken):
            taken.append(f)
    return sorted(taken, key=lambda f: f[0])
