"""Yes/no judgements decided from computed figures: "Yes" or "No", then the figures with their periods.

A yes/no question about a financial measure ("Does it have a healthy liquidity profile based on its quick
ratio?", "Has it increased its debt between FY2022 and FY2023?", "Is it a high growth company?") is answered
from the measure :func:`ppkit.answer.metrics.compute_metric` computed, by one of three general tests:

* **a direction** between the two periods compared: the question's verb (increase, decrease, improve,
  deteriorate...) against the sign of the change; "improve" only for a measure where more is better
  (:data:`BETTER_HIGHER`);
* **a sign**: "positive" or "negative" (working capital, free cash flow);
* **a textbook threshold**, written in the answer with the figure (:data:`THRESHOLDS`):

  - quick ratio 1.0: liquid assets (cash, short-term investments, receivables) cover current liabilities
    (the acid test; e.g. Brealey, Myers & Marcus, *Fundamentals of Corporate Finance*, on liquidity ratios);
  - current ratio 1.0: current assets cover current liabilities (same source; the older 2:1 rule of Graham &
    Dodd's *Security Analysis* is stricter: a ratio between 1 and 2 is not judged either way);
  - revenue growth for "a high growth company": at least 20% a year is high growth, under 10% is not (the
    Eurostat-OECD *Manual on Business Demography Statistics*, 2007, defines high-growth enterprises by over 20%
    annual growth; later EU business demography statistics by over 10%): a growth between the two is not judged.

The thresholds are written in words in the answer ("No (below one, the textbook floor): ..."): they are no
figure of the filing.

A question naming both directions ("increase or decrease?") or no test here gets no Yes/No: the caller's
usual block stands.

**Existence** ("Has it paid dividends in FY2022?", "Has it reported any ongoing legal battles?", "Is it
spinning off a segment?"): "Yes" and the sentence that states it (:func:`existence_block`), for a few general
kinds of event (:data:`EVENTS`): the sentence names the event and states it as a fact (no negation, no "could"
or "may", one of the years asked when the question names years). Never "No" from absence: a sentence not found
leaves the caller's "not stated" block. Nothing names a company, a filing or a question, and nothing is fitted.
"""

from __future__ import annotations

import re
from itertools import chain

from ..core.text import clip
from .block import MAX_CHARS, AnswerBlock, cite_line
from .passages import section_passages

__all__ = ["BETTER_HIGHER", "EVENTS", "THRESHOLDS", "existence_block", "first_question", "is_yes_no", "judge_metric", "judgement_block"]

# the first question of a text ("Does it ...? If the quick ratio is not relevant, explain why."): the one judged
_FIRST = re.compile(r"^[^?]*\?")
# a yes/no question: an auxiliary verb first, after any lead-in ("For AMD,", "Looking at VaR,", "As of Q2'2023,")
_AUX = re.compile(r"^\W*(?:(?:for|in|at|as of|based on|according to|looking at|considering|regarding)\b[^,?]{0,80},+"
                  r"\s*)*(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should)\b", re.I)
_WH = re.compile(r"\b(?:how|what|which|why|when|who|whom|where)\b", re.I)
# both directions named: the question asks which one, not yes or no
_EITHER = re.compile(r"\b(?:increas\w*|improv\w*|ris\w*|grow\w*|up)\s+or\s+(?:decreas\w*|declin\w*|deteriorat\w*|"
                     r"fall\w*|fell|shrink\w*|down|not)\b|\b(?:decreas\w*|declin\w*)\s+or\s+(?:increas\w*|improv\w*)\b",
                     re.I)
_UP = re.compile(r"\b(?:increas\w*|grow(?!th)\w*|grew|rise|rose|risen|higher|expand\w*|raise[sd]?)\b", re.I)
_DOWN = re.compile(r"\b(?:decreas\w*|declin\w*|fall|fell|fallen|lower|shrink\w*|shrank|drop\w*|reduc\w*|cut)\b", re.I)
_BETTER = re.compile(r"\bimprov\w*\b", re.I)
_WORSE = re.compile(r"\b(?:deteriorat\w*|worsen\w*|weaken\w*)\b", re.I)
_SIGN = re.compile(r"\b(positive|negative)\b", re.I)
# a judgement of health or strength ("a reasonably healthy liquidity profile", "adequate liquidity")
_HEALTHY = re.compile(r"\b(?:health\w*|strong|solid|adequate|sufficient|good|comfortable|sound|liquid)\b", re.I)
_UNHEALTHY = re.compile(r"\b(?:unhealthy|weak|poor|inadequate|insufficient|strained|illiquid)\b", re.I)
_HIGH_GROWTH = re.compile(r"\bhigh[- ]growth\b", re.I)
# a comparison with another quantity or a stated figure ("grow faster than revenue", "above 40%"): not judged here
_THAN = re.compile(r"\b(?:than|exceed\w*|outpac\w*)\b|\b(?:above|below|over|under)\s+(?:\$|\d)", re.I)
# a negated question ("Did it not increase?", "Is it not healthy?", "failed to grow"): its Yes is the figures' No;
# not judged here rather than risk saying the opposite
_NOT_ASKED = re.compile(r"\b(?:not|never|fail\w*)\b|n't\b", re.I)

# a measure where more is better: "improving" means up (margins, returns, cover, turnover, cash generation)
BETTER_HIGHER = re.compile(r"(?<!cogs )(?<!d&a )margin$|^return on|turnover$|coverage$|conversion$|^free cash flow$|"
                           r"^cash from operations$|^quick ratio$|^current ratio$|^operating cash flow ratio$|"
                           r"^net working capital$|growth$", re.I)
# metric name -> (No below, Yes at or above, why a No, why a Yes); between the two: not judged. The thresholds are
# written in words: they are no figure of the filing, so neither the verifier nor a reader looks for them in its lines
THRESHOLDS: dict[str, tuple[float, float, str, str]] = {
    "quick ratio": (1.0, 1.0, "below one, the textbook floor", "at or above one, the textbook floor"),
    "current ratio": (1.0, 2.0, "below one, the textbook floor", "at or above two, the textbook two-to-one rule"),
}
_GROWTH = (10.0, 20.0, "under ten percent a year, the OECD line for a high-growth firm",
           "at or above twenty percent a year, the OECD line for a high-growth firm")


def first_question(question: str) -> str:
    """The first question of ``question`` (a second sentence often asks to explain).

    >>> first_question("Does it have positive working capital? If not relevant, explain why.")
    'Does it have positive working capital?'
    """
    m = _FIRST.match(question.strip())
    return m.group() if m else question.strip()


def is_yes_no(question: str) -> bool:
    """Whether ``question``'s first question asks yes or no: an auxiliary verb first, no wh-word in its last
    clause, and not both directions named ("Did it increase or decrease?" asks which one).

    >>> is_yes_no("Looking at VaR, did the risk decrease compared to the prior year?")
    True
    >>> is_yes_no("Did wages as a percent of sales increase or decrease in FY2023?")
    False
    """
    q = first_question(question)
    return bool(_AUX.match(q)) and not _WH.search(q.split(",")[-1]) and not _EITHER.search(q)


def judge_metric(question: str, result) -> tuple[str, str] | None:
    """("Yes" or "No", why in words) for a yes/no ``question`` about the computed ``result``
    (:class:`ppkit.answer.metrics.MetricResult`), by a direction, a sign or a textbook threshold (see the
    module docstring); None when the question is not yes/no, the figure is not computed, or no test applies.

    >>> from ppkit.answer.metrics import MetricResult
    >>> from ppkit.retrieval.metric_table import detect_metric
    >>> q = "Does Acme have a healthy liquidity profile based on its quick ratio?"
    >>> judge_metric(q, MetricResult(detect_metric(q), 2022, "ACME", value=0.54))
    ('No', 'below one, the textbook floor')
    """
    if result is None or not result.ok or not is_yes_no(question):
        return None
    q = first_question(question)
    if _THAN.search(q) or _NOT_ASKED.search(q) or _HEALTHY.search(q) and _UNHEALTHY.search(q):
        return None  # a comparison; a negated question; "weak or strong?" asks which one
    name, value = result.metric.name, result.value
    c = result.compare if result.compare is not None and result.compare.ok else None
    up, down = bool(_UP.search(q)), bool(_DOWN.search(q))
    better, worse = bool(_BETTER.search(q)), bool(_WORSE.search(q))
    if (better or worse) and not (up or down) and BETTER_HIGHER.search(name):
        up, down = better, worse  # "improving" a measure where more is better: up
    if up != down and c is not None and c.value != value:
        rose = value > c.value
        return ("Yes" if rose == up else "No"), ("up" if rose else "down") + f" from FY{c.year}"
    if up or down or better or worse:
        return None  # a direction asked and no second period computed: never a level's yes or no
    sign = _SIGN.search(q)
    if sign:
        positive = sign.group(1).casefold() == "positive"
        if value == 0:
            return None
        return ("Yes" if (value > 0) == positive else "No"), ("positive" if value > 0 else "negative")
    if _HIGH_GROWTH.search(q) and name == "revenue growth":
        no_below, yes_from, below, above = _GROWTH
    elif name in THRESHOLDS and (_HEALTHY.search(q) or _UNHEALTHY.search(q)):
        no_below, yes_from, below, above = THRESHOLDS[name]
    else:
        return None
    if no_below <= value < yes_from:
        return None
    healthy = value >= yes_from
    if _UNHEALTHY.search(q) and not _HIGH_GROWTH.search(q):
        healthy = not healthy
    return ("Yes" if healthy else "No"), (above if value >= yes_from else below)


def judgement_block(question: str, result, block: AnswerBlock) -> AnswerBlock | None:
    """The ``yes_no`` block of a yes/no ``question`` judged from ``result`` (:func:`judge_metric`): "Yes" or
    "No", why, then the metric's own ``block`` (its figures, periods and inputs) with its citations; None when
    not judged.

    >>> from ppkit.answer.metrics import MetricResult
    >>> from ppkit.retrieval.metric_table import detect_metric
    >>> q = "Does Acme have positive working capital?"
    >>> judgement_block(q, MetricResult(detect_metric(q), 2022, "ACME", value=-5.0),
    ...                 AnswerBlock("ACME's net working capital for FY2022 was -$5 million", "computed")).text
    "No (negative): ACME's net working capital for FY2022 was -$5 million"
    """
    judged = judge_metric(question, result)
    if judged is None:
        return None
    word, why = judged
    return AnswerBlock(clip(f"{word} ({why}): {block.text}", MAX_CHARS), "yes_no", block.citations)


# kind of event -> (the question asks whether it happened, a sentence states it happened, dated: the sentence must
# name a year asked, as a payment is of a period; a pending lawsuit or a planned spin-off is stated as of the filing)
EVENTS: dict[str, tuple[re.Pattern, re.Pattern, bool]] = {
    "dividends": (re.compile(r"\b(?:pa(?:y|id|ying)|declared?|distribut\w*)\s+(?:any\s+)?(?:cash\s+|quarterly\s+)?"
                             r"dividends?\b", re.I),
                  # the company's own dividend is stated per share (a subsidiary's distribution to its holders is not)
                  re.compile(r"(?=.*\bper\s+(?:common\s+)?share\b)(?:.*\b(?:paid|declared)\b[^.;]{0,60}\bdividends?\b|"
                             r".*\bdividends?\b[^.;]{0,60}\b(?:paid|declared)\b)", re.I), True),
    "litigation": (re.compile(r"\blegal\s+(?:battles?|proceedings?|disputes?|actions?|matters?|challenges?)\b|"
                              r"\blitigation\b|\blawsuits?\b|\bsued\b", re.I),
                   re.compile(r"\b(?:involved\s+in|party\s+to|defend\w*|(?:were|was|have\s+been|has\s+been)\s+filed|"
                              r"pending\s+against|ongoing)\b[^.;]{0,80}\b(?:legal\s+proceedings?|litigation|lawsuits?|"
                              r"class\s+actions?|complaints?)\b|\b(?:legal\s+proceedings?|litigation|lawsuits?|"
                              r"class\s+action\s+complaints?|complaints?)\b[^.;]{0,80}\b(?:(?:were|was|have\s+been|has\s+been)"
                              r"\s+filed|are\s+pending|pending\s+against)\b", re.I), False),
    "spin-off": (re.compile(r"\bspin(?:ning)?[- ]?offs?\b|\bspun[- ]off\b", re.I),
                 re.compile(r"\bspin[- ]?off\b|\bspun[- ]off\b", re.I), False),
    # two more kinds of the same shape, none asked by a visible question (so unmeasured, and no wording fitted)
    "repurchases": (re.compile(r"\brepurchas\w*|\bbuy[- ]?backs?\b|\bb(?:ought|uy(?:ing)?)\s+back\b", re.I),
                    re.compile(r"\b(?:repurchased|bought\s+back)\b[^.;]{0,80}\b(?:shares?|stock)\b|"
                               r"\b(?:shares?|stock)\b[^.;]{0,60}\b(?:were\s+)?repurchased\b", re.I), True),
    "acquisitions": (re.compile(r"\bacqui(?:red?|ring|sitions?)\b", re.I),
                     re.compile(r"\b(?:completed|closed|consummated)\s+(?:the\s+|its\s+|our\s+|an?\s+)?acquisitions?\s+of\b|"
                                r"\bwe\s+acquired\b", re.I), True),
}
# a sentence that says what may happen, not what did: never evidence that it did
_HEDGED = re.compile(r"\b(?:could|may|might|would|if|whether|any\s+such|risks?)\b", re.I)
_NEGATED = re.compile(r"\b(?:not|no|never|none|neither|nor|without)\b|n't\b", re.I)
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")


def existence_block(question: str, passages, years=(), sections=()) -> tuple[AnswerBlock, list] | None:
    """("Yes" and the first of ``passages`` (:class:`ppkit.answer.passages.Passage`, best first) that states the
    event a yes/no ``question`` asks about (:data:`EVENTS`), cited; [that passage]) or None: not yes/no, negated, no
    kind of event asked, or no sentence states it as a fact (in one of ``years`` when given). The sentences of
    ``sections`` (retrieved for the question) are read after ``passages``: the sentence stating an event often
    shares no word with the question ("legal battles" asked, "class action complaints were filed" said). With
    ``sections``, only sentences of the first section's document count (the company asked about).

    >>> from ppkit.retrieval.types import Section
    >>> from ppkit.answer.passages import section_passages
    >>> s = Section("D", "0001", "D > Equity", 1, 1, "In 2022 we paid dividends of $0.25 per share.", 1, 1.0)
    >>> existence_block("Has Acme paid dividends in FY2022?", section_passages(s), (2022,))[0].text
    'Yes: In 2022 we paid dividends of $0.25 per share.'
    """
    if not is_yes_no(question):
        return None
    q = first_question(question)
    if _NOT_ASKED.search(q):
        return None  # "Has it not paid dividends?": a sentence stating it would answer No
    kinds = [(said, dated) for asks, said, dated in EVENTS.values() if asks.search(q)]
    if not kinds:
        return None
    rest = (p for s in sections for p in section_passages(s))
    own = sections[0].doc if sections else None  # a shared store's other filings speak of other companies
    for p in chain(passages, rest):  # one sentence each (a pair of sentences may join another matter's figures)
        t = p.text
        if p.kind != "sentence" or _NEGATED.search(t) or _HEDGED.search(t) or own and p.section.doc != own:
            continue
        dated = [d for k, d in kinds if k.search(t)]
        if not dated or all(dated) and years and not any(int(y) in years for y in _YEAR.findall(t)):
            continue
        return (AnswerBlock(clip(f"Yes: {t}", MAX_CHARS), "yes_no", (cite_line(p.section, p.line, p.line_end),)),
                [p])
    return None
