"""What a question asks for, read once from its wording: the one classifier of the answer stage.

:func:`asked_type` reads a question's **kind** (drivers, share, change, count, amount, date, name, list, other),
whether it is a **yes/no** question, the **unit** of the figure it asks for (a percent, a ratio, an amount, or
none) and the **years** it names. The offline synthesizer ranks passages by it (:mod:`ppkit.answer.passages`),
computes the asked quantity by it (:mod:`ppkit.answer.quantity`), and the verifier's "answered?" check reads the
same answer through :func:`ppkit.answer.verify.asked_for`.

The rules are general wording (interrogatives, the words for a share, a change, a ratio), never a particular
question's. This module reads the question only; it looks at no section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..core.text import stems
from ..retrieval.analyze import question_years

__all__ = ["Asked", "Quantity", "asked_type", "asked_quantity", "quantity_words", "FIGURE_TYPES"]

# what a question asks, by its wording in general: (kind, pattern), first match wins
_KINDS = [
    ("drivers", re.compile(r"\bwhy\b|\bdr(?:ove|ive|ivers?|iving)\b|\breasons?\b|\bcaused?\b|\bfactors?\b|"
                           r"\bexplain|\bcontribut", re.I)),
    ("share", re.compile(r"\bpercent(?:age)?\b|%|\bshare of\b|\bportion\b|\bproportion\b|\bfraction\b|"
                         r"\bmargin\b|\brate\b", re.I)),
    ("change", re.compile(r"\bchange[sd]?\b|\bincrease[sd]?\b|\bdecrease[sd]?\b|\bgr[eo]w(?:th|n)?\b|\bdecline|"
                          r"\byear[- ]over[- ]year\b|\byoy\b", re.I)),
    ("count", re.compile(r"\bhow many\b|\bnumber of\b", re.I)),
    ("amount", re.compile(r"\bhow much\b|\bamount\b|\btotal\b|\bvalue\b|\brevenues?\b|\bsales\b|\bincome\b|"
                          r"\bearnings\b|\bprofit\b|\bloss(?:es)?\b|\bcosts?\b|\bexpenses?\b|\bexpenditures?\b|"
                          r"\bcapex\b|\bcash\b|\bdebt\b|\bassets\b|\bliabilit|\bequity\b|\bdividends?\b|"
                          r"\bbacklog\b|\bspen[dt]\b|\bpaid\b|\bimpact\b|\bcharges?\b|\beps\b|\bbillion\b|"
                          r"\bmillion\b|\bUSD\b|\$", re.I)),
    ("date", re.compile(r"\bwhen\b|\bwhat (?:date|year|day|month)\b|\bwhich (?:date|year)\b", re.I)),
    ("name", re.compile(r"\bwho\b|\bwhich (?:company|companies|firm|segment|customer|product|auditor|person)\b|"
                        r"\bwhat is the name\b|\bnamed?\b", re.I)),
    ("list", re.compile(r"\blist\b|\benumerate\b|\bidentify\b|\bname\s+the\b|\bwhat\s+are\s+the\b|"
                        r"\bwhich\s+\w+(?:\s+\w+)?\s+(?:are|were|did|does|do|has|have)\b", re.I)),
]
# a yes/no question: an auxiliary verb first, after any "For AMD," / "In 2022," lead-in
_YES_NO = re.compile(r"^\W*(?:(?:for|in|at|as of|based on|according to)\b[^,?]{0,80},+\s*)*(?:is|are|was|were|does|"
                     r"do|did|has|have|had|can|could|will|would|should|may|might)\b", re.I)
_WH = re.compile(r"\b(?:how|what|which|why|when|who)\b", re.I)
# the unit of the figure asked: a ratio before a percent ("ratio of repurchases to dividends"), an amount last
_RATIO = re.compile(r"\b(?:ratio|turnover|multiple|times|coverage)\b", re.I)
_PERCENT = re.compile(r"\b(?:percent(?:age)?|margin|rate|share\s+of|growth\s+rate|proportion|portion|fraction)\b|%",
                      re.I)
_AMOUNT = re.compile(r"\b(?:how\s+much|how\s+many|calculate|compute|quantify|what\s+(?:is|was|were)\s+the\s+"
                     r"(?:\w+\s+){0,6}?(?:amount|total|value|revenue|revenues|income|expenses?|costs?|sales|"
                     r"cash|debt|capex|capital\s+expenditures?|eps|dividends?|change))\b", re.I)
# a change asked as a difference: "By how much did X increase?", "how many percentage points did X rise?"
_BY = re.compile(r"\bby how (?:much|many)\b|\bhow (?:much|many (?:percentage|basis) points?) (?:did|has|have|was|were|"
                 r"is|will)\b[^?]*\b(?:increase|decrease|rise|raise|grow|fall|decline|drop|change|lower|cut)", re.I)
# a figure per share or per unit asked: "each shareholder", "per share", "per unit"
_PER_SHARE = re.compile(r"\bper (?:common |diluted |basic )?(?:share|unit)\b|\beach (?:common )?(?:share|shareholder|"
                        r"stockholder|unit)\b", re.I)
FIGURE_TYPES = ("amount", "share", "change", "count")


@dataclass(frozen=True)
class Asked:
    """What a question asks for: ``kind`` (drivers, share, change, count, amount, date, name, list, other),
    whether it is a yes/no question, the years it names, ``unit``: the figure's unit asked ("percent",
    "ratio", "amount"; "" when it asks no figure), and ``by``: a change is asked as a difference ("By how much
    did it increase?"), which a level alone ("increased to $5 billion") does not answer; ``per_share``: a figure per
    share or unit is asked ("how much could each shareholder get?")."""

    kind: str
    yes_no: bool = False
    years: tuple[int, ...] = ()
    unit: str = ""
    by: bool = field(default=False, repr=False)  # a change asked as a difference ("by how much ...?")
    per_share: bool = field(default=False, repr=False)  # a figure per share or unit ("each shareholder")

    @property
    def figure(self) -> bool:
        """A figure is asked for (an amount, a share, a change or a count)."""
        return self.kind in FIGURE_TYPES


def asked_type(question: str, years=None) -> Asked:
    """What ``question`` asks for, by its wording; ``years`` (default: the years the question names).

    >>> asked_type("What was the total revenue in 2022?")
    Asked(kind='amount', yes_no=False, years=(2022,), unit='amount')
    >>> asked_type("For AMD, does the company pay a dividend?").yes_no
    True
    >>> asked_type("What is the ratio of share repurchases to dividends?").unit
    'ratio'
    >>> asked_type("By how much did the credit line increase?").by
    True
    """
    q = question.strip()
    yes_no = bool(_YES_NO.match(q)) and not _WH.search(q.split(",")[-1])
    kind = next((k for k, rx in _KINDS if rx.search(q)), "other")
    unit = ("ratio" if _RATIO.search(q) else "percent" if _PERCENT.search(q)
            else "amount" if _AMOUNT.search(q) else "")
    ys = tuple(years) if years is not None else tuple(sorted(set(question_years(q))))
    return Asked(kind, yes_no, ys, unit, bool(_BY.search(q)), bool(_PER_SHARE.search(q)))


# the quantity a question asks about, by the phrase that names it:
# "what drove the increase in <X>", "why did <X> increase", "how did <A> compare to <B>", "how much ... pay to <Y>"
_END_Q = (r"(?=\s+(?:at|in|for|during|from|over|between|as of|compared|versus|vs\.?|since|through|as an? (?:percent|"
          r"percentage|share|ratio|proportion|fraction)|relative to|is|are|was|were|has|have|had|did|does|do|"
          r"will|would)\b|[?,;]|\.?$)")
_DRIVEN = re.compile(r"\b(?:increase|decrease|change|decline|growth|rise|drop|fall|improvement|reduction|"
                     rf"deterioration)s?\s+in\s+(?P<q>[^?,;]+?){_END_Q}", re.I)
_WHY = re.compile(r"\bwhy\s+(?:did|does|do|has|have|was|were|is|are)\s+(?P<q>[^?,;]+?)\s+(?:increase|decrease|"
                  r"decline|grow|rise|fall|change|drop|improve|deteriorate|go\s+(?:up|down))", re.I)
_DROVE = re.compile(r"\bdr(?:ove|ive|ivers?|iving)\s+(?:of\s+)?(?:the\s+)?(?P<q>[^?,;]+?)\s+(?:increase|decrease|change|"
                    r"decline|growth|rise|drop|fall|improvement|reduction)s?\b", re.I)
_COMPARE = re.compile(r"\bhow\s+(?:did|does|do|has|have|was|were|is|are)\s+(?P<a>[^?,;]+?)\s+compare\s+(?:to|with|"
                      rf"against)\s+(?P<b>[^?,;]+?){_END_Q}", re.I)
_PURPOSE = re.compile(r"\bhow\s+much\b[^?]*?\b(?P<verb>pay|spend|invest|incur|cost|receive|borrow|raise|contribute)\s+"
                      rf"(?:to|for|on|in)\s+(?P<q>[^?,;]+?){_END_Q}", re.I)
# a total over several things: "the total amount it may borrow under its credit agreements" (a plural noun last)
_TOTAL = re.compile(r"\b(?:total|combined|aggregate)\b(?:\s+[\w'’]+){0,6}?\s+(?:under|of|across|from)\s+(?:the\s+|its\s+|"
                    rf"their\s+|all\s+)?(?P<q>(?:[a-z-]+\s+){{0,4}}[a-z-]+[^s\W]s){_END_Q}")
# words that name no quantity of their own ("the merchandise inventories balance" is the inventories)
_GENERIC = frozenset("the a an its their our his her balance balances level levels amount amounts total figure figures "
                     "number value values net position company company's firm overall reported".split())
# the United States written any way ("U.S.", "US", "United States"; never the pronoun "us")
_US = re.compile(r"\bU\.\s?S\.(?:\s?A\.)?|\bUSA?\b|\bUnited States\b")


def quantity_words(text: str) -> list[str]:
    """The content words of ``text`` as stems, in order, "U.S." and "United States" read as one word.

    >>> quantity_words("U.S. sales")
    ['unitedst', 'sale']
    """
    return stems(_US.sub(" unitedstates ", text))


def _words(phrase: str) -> list[str]:
    """A phrase's content stems, a company's possessive ("Ulta Beauty's"), generic words ("balance", "total")
    and figures (years, "FY2023") left out."""
    phrase = re.sub(r"^.*?[\w.&-]+['’]s?\s+(?=\w)", "", phrase) if re.search(r"\w['’]s?\s", phrase) else phrase
    words = [w for w in re.findall(r"[\w.&-]+", phrase) if w.casefold() not in _GENERIC and not re.search(r"\d", w)]
    return quantity_words(" ".join(words))


def _head(phrase: str) -> tuple[str, ...]:
    """The head of a noun phrase: its last two content words (its head noun and the word naming it)."""
    return tuple(_words(phrase))[-2:]


@dataclass(frozen=True)
class Quantity:
    """The quantity a question names: ``phrases`` (stems) a passage must each hold as consecutive words, and
    ``any_of``: words of which it must hold one (the money words of "pay": cost, paid, incur...; empty: none),
    ``plural``: a total over several is asked, which a sentence answers only when it names them in the plural."""

    phrases: tuple[tuple[str, ...], ...]
    any_of: frozenset[str] = frozenset()
    plural: str = ""  # a total over several asked ("the total ... under its credit agreements"): their plural noun


# the words a passage states an amount paid, received or borrowed with, by the question's verb
_PAID = "pay paid payment cost expens incur spend spent charg"
_MONEY_WORDS = {"pay": _PAID, "spend": _PAID, "incur": _PAID, "cost": _PAID,
                "invest": "invest investment capit expenditur spend spent",
                "receive": "receiv receipt proceed", "borrow": "borrow credit loan facil",
                "raise": "rais proceed issu", "contribute": "contribut"}


def asked_quantity(question: str) -> Quantity | None:
    """The quantity a drivers, comparison or amount question asks about, by the phrase naming it (which a
    passage must hold to answer it); None when the wording names none this way.

    A drivers question names it after "the increase in" or between "why did" and its verb (its head phrase,
    two words); a comparison names the words its two sides differ by (one word each: "US" vs "international");
    "how much ... pay to <do Y>" names the object of Y (its last word) and the money words of its verb; "the
    total ... under its <Xs>" names Xs, in the plural.

    >>> asked_quantity("What drove the increase in Acme's merchandise inventories balance in FY2023?").phrases
    (('merchandis', 'inventori'),)
    >>> asked_quantity("How did US sales growth compare to international sales growth in FY2022?").phrases
    (('unitedst',), ('internat',))
    >>> q = asked_quantity("How much does Acme expect to pay to spin off Widgetco in the future?")
    >>> q.phrases, "cost" in q.any_of
    ((('widgetco',),), True)
    >>> asked_quantity("What is the total amount Acme may borrow under its revolving credit agreements?").plural
    'agreements'
    """
    q = question.strip()
    m = _COMPARE.search(q)
    if m:
        a, b = _words(m.group("a")), _words(m.group("b"))
        only_a = [w for w in a if w not in b]
        only_b = [w for w in b if w not in a]
        return Quantity(((only_a[0],), (only_b[0],))) if only_a and only_b else None
    if re.search(r"\b(?:why|dr(?:ove|ive|ivers?|iving)|reasons?|caused?|factors?|explain|contribut)", q, re.I):
        for rx in (_WHY, _DRIVEN, _DROVE):
            m = rx.search(q)
            head = _head(m.group("q")) if m else ()
            if head:
                return Quantity((head,))
    m = _TOTAL.search(q)
    head = _head(m.group("q")) if m else ()
    if head:
        return Quantity((head[-1:],), plural=m.group("q").split()[-1])
    m = _PURPOSE.search(q)
    head = _head(m.group("q")) if m else ()
    if head:
        return Quantity((head[-1:],), frozenset(_MONEY_WORDS[m.group("verb").casefold()].split()))
    return None
