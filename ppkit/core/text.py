"""Small text helpers shared by the lexical parts: tokens, stems, stopwords, numbers.

Kept dependency-light: PyStemmer's English Snowball stemmer when it is installed,
else a crude suffix stripper (documented as such).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["tokens", "stems", "STOPWORDS", "numbers_in", "sentences", "clip", "stem", "without_invisible",
           "without_possessive"]

# characters that show nothing beside the format characters (category Cf: zero-width spaces and joiners, direction
# marks, the soft hyphen): the combining grapheme joiner, variation selectors, Mongolian free variation selectors,
# Khmer inherent vowels, the Hangul fillers and the blank Braille pattern (Unicode's Default_Ignorable_Code_Point
# property, and U+2800, which renders as a blank)
_INVISIBLE = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2800\u3164\ufe00-\ufe0f\uffa0"
                        "\U000e0100-\U000e01ef]")

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself just me more
    most my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves also per vs versus via within without across among
    whether many much show shows tell give given using used use based""".split()
)

_WORD = re.compile(r"[a-z0-9]+(?:[.'’][a-z0-9]+)*")


def tokens(text: str) -> list[str]:
    """Lower-case word and number tokens (``"Q4'22 FY2022"`` -> ``["q4'22", "fy2022"]``)."""
    return _WORD.findall(text.casefold())


@lru_cache(maxsize=1)
def _stemmer():
    try:
        import Stemmer

        return Stemmer.Stemmer("english").stemWord
    except ImportError:  # crude fallback; install PyStemmer for Snowball stems
        def strip(w: str) -> str:
            for suf in ("ations", "ation", "ings", "ing", "ies", "es", "s", "ed", "ly"):
                if w.endswith(suf) and len(w) - len(suf) >= 3:
                    return w[: -len(suf)]
            return w
        return strip


@lru_cache(maxsize=200_000)
def stem(w: str) -> str:
    """One word's stem (Snowball English): ``stem("ratios") == "ratio"``."""
    return _stemmer()(w)


def stems(text: str, *, drop_stopwords: bool = True) -> list[str]:
    """Stemmed content tokens of ``text`` (a new list each call; the stems of a text seen recently are
    remembered, since the same sections' sentences are stemmed again for every question that reaches them)."""
    return list(_stems(text, drop_stopwords))


@lru_cache(maxsize=32_768)  # a few MB at most; a 10-K's retrieved sentences, table rows and titles fit
def _stems(text: str, drop_stopwords: bool) -> tuple[str, ...]:
    return tuple(stem(t) for t in tokens(text) if not (drop_stopwords and t in STOPWORDS))


_NUM = re.compile(r"\(?-?\$?\d[\d,]*(?:\.\d+)?%?\)?")


def numbers_in(text: str) -> list[str]:
    """Numeric tokens as written (``$1,264``, ``(607)``, ``5.36%``)."""
    return [m.group(0) for m in _NUM.finditer(text) if any(c.isdigit() for c in m.group(0))]


_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"“$])")
# a full stop that ends an abbreviation, not a sentence: "PepsiCo, Inc. The", "U.S. Treasury", "No. 4", "J. Smith",
# a 10-K Item's number before its title ("see Item 1A. Risk Factors")
_ABBREV = re.compile(r"(?:\b(?:Inc|Corp|Co|Ltd|Cos|Bros|No|Nos|Mr|Mrs|Ms|Dr|St|Jr|Sr|vs|approx|Fig|Figs|Eq|Eqs|Sec|"
                     r"Ref|Vol|Dept|Gov|Mt|e\.g|i\.e|cf|al)|(?<!\b[A-Z]\.)(?:\b[A-Z]\.){2,}|\b[A-Z]|\bItems?\s+\d+[A-Z]?)\.$")


def sentences(text: str) -> list[str]:
    """Split prose into sentences: end punctuation, space, capital, except after an abbreviation.

    >>> sentences("PepsiCo, Inc. Sales grew in the U.S. Market share fell. Costs rose.")
    ['PepsiCo, Inc. Sales grew in the U.S. Market share fell.', 'Costs rose.']
    """
    out: list[str] = []
    start = 0
    for m in _SENT.finditer(text):
        if _ABBREV.search(text[max(start, m.start() - 12): m.start()]):
            continue
        out.append(text[start: m.start()])
        start = m.end()
    out.append(text[start:])
    return [s for s in out if s.strip()]


def clip(text: str, n: int) -> str:
    """``text`` with whitespace collapsed, cut at a word boundary to at most ``n`` characters (``…`` marks a cut)."""
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= n else text[: n].rsplit(" ", 1)[0] + "…"


def without_possessive(word: str) -> str:
    """``word`` without a possessive "'s" at its end (either apostrophe).

    >>> without_possessive("AMD's"), without_possessive("Boeing’s"), without_possessive("sales")
    ('AMD', 'Boeing', 'sales')
    """
    return word[:-2] if len(word) > 1 and word[-1] == "s" and word[-2] in "'’" else word


def without_invisible(text: str) -> str:
    """``text`` without the characters that show nothing (format characters such as zero-width spaces, variation
    selectors, the combining grapheme joiner, Hangul fillers, the blank Braille pattern).

    >>> without_invisible("a\u200b\u034fb\u3164\u2800c")
    'abc'
    """
    if text.isascii():
        return text
    return _INVISIBLE.sub("", "".join(ch for ch in text if unicodedata.category(ch) != "Cf"))
