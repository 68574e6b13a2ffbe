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

from ..retrieval.analyze import question_years

__all__ = ["Asked", "asked_type", "FIGURE_TYPES"]

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
