"""What a question asks, read once: the one reader of the answer stage.

:func:`read_question` turns a question (and its :class:`ppkit.retrieval.analyze.Analysis`) into an :class:`Asked`:

* ``type``: the answer type asked: ``amount``, ``percent``, ``ratio``, ``days``, ``per_share``, ``count``, ``date``,
  ``yes_no``, ``which`` (one of a set), or ``narrative`` (a passage: drivers, reasons, descriptions, names);
* ``measure``: the catalogue's measure named (:func:`ppkit.finance.read.read_measure`), which a computed candidate
  evaluates; its unit decides the type when the wording does not;
* ``focus``: the phrase naming what is asked (the question without its interrogatives, names, periods and
  instructions), and its stems through the catalogue (``focus_words``): what a candidate's row label or clause
  must be about;
* ``year`` (the period asked: the latest fiscal year named) and all ``years`` named;
* ``direction``: ``max`` or ``min`` for "which ... the highest / the lowest";
* ``polarity``: for a yes/no question, the change it asks about (``up``: grow, rise, improve; ``down``: fall,
  decline) or ``""``; ``threshold``: a figure it compares with ("above 1.0").

The cues are general English (interrogatives, superlatives, words of change); finance terms come from the
catalogue and the glossary. This module reads the question only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from ..finance.catalogue import Measure, catalogue, formula_concepts
from ..finance.labels import words
from ..finance.read import mentions, read_measure, share_phrases
from ..retrieval.analyze import Analysis

__all__ = ["Asked", "read_question", "in_scope", "TYPES", "FIGURE_TYPES"]

TYPES = ("amount", "percent", "ratio", "days", "per_share", "count", "date", "yes_no", "which", "narrative")
FIGURE_TYPES = ("amount", "percent", "ratio", "days", "per_share", "count")
_UNIT_TYPE = {"usd": "amount", "percent": "percent", "ratio": "ratio", "days": "days", "per_share": "per_share",
              "count": "count"}

# a yes/no question: an auxiliary verb first, after any lead-in clause ("For Acme, did ...", "In 2022, was ...")
_YES_NO = re.compile(r"^\W*(?:(?:for|in|at|as of|based on|according to|given|looking at)\b[^,?]{0,80},+\s*)*"
                     r"(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should)\b", re.I)
_WH = re.compile(r"\b(?:how|what|which|why|when|who|where)\b", re.I)
_SUPERLATIVE = {"highest": "max", "largest": "max", "biggest": "max", "greatest": "max", "most": "max", "top": "max",
                "strongest": "max", "fastest": "max", "best": "max", "lowest": "min", "smallest": "min",
                "least": "min", "weakest": "min", "slowest": "min", "worst": "min", "fewest": "min"}
_WHICH = re.compile(r"\b(?:which|what)\s+(?:\w+\s+){0,3}?(?:had|has|have|was|were|is|are|did|does|saw|showed|"
                    r"generated|contributed|posted|made|brought|produced|accounted)\b|\bwhich\b", re.I)
# the request verbs in their bare form only: "as outlined in the P&L", "described in Note 4" ask nothing
_NARRATIVE = re.compile(r"\bwhy\b|\bhow come\b|\bdr(?:ove|ive|ives|ivers?|iving)\b|\breasons?\b|\bfactors?\b|"
                        r"\b(?:explain|describe|discuss|summari[sz]e|outline)\b|\bcaus(?:e|ed|es)\b|"
                        r"\bwhat\s+(?:is|are|was|were)\s+(?:\w+\s+){0,2}"
                        r"(?:strateg|polic|risks?|plans?|approach|nature|business|purpose|role)|"
                        # "who" asks only where it opens a sentence: after a noun it is a relative pronoun ("an analyst
                        # who can only use the balance sheet") and asks nothing
                        r"(?:^|[.?!;:]\s*)who\b", re.I)
# "when" asks a date before an auxiliary ("when did", "when will"); before a gerund it sets a condition ("when
# computing the ratio, use ...")
_DATE = re.compile(r"\bwhen\s+(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should)\b|"
                   r"\bwhat\s+(?:date|day|month)\b|\bwhich\s+(?:date|day|month)\b|\bon what date\b", re.I)
_COUNT = re.compile(r"\bhow many\b|\bnumber of\b|\bcount of\b|\bheadcount\b", re.I)
_PERCENT = re.compile(r"%|\bpercent(?:age)?\b|\bmargin\b|\brate\b|\bshare of\b|\bproportion\b|\bportion of\b|"
                      r"\bfraction of\b|\bbps\b|\bbasis points\b", re.I)
_RATIO = re.compile(r"\bratio\b|\btimes\b|\bmultiple\b|\bturnover\b|\bcoverage\b|\bturns\b", re.I)
_DAYS = re.compile(r"\bdays\b", re.I)
_PER_SHARE = re.compile(r"\bper (?:common |diluted |basic )?share\b|\beach share\b|\beps\b", re.I)
_AMOUNT = re.compile(r"\bhow much\b|\bamount\b|\$|\busd\b|\bdollars?\b|\bbillion|\bmillion|\bvalue of\b|"
                     r"\bspen[dt]\b|\bpaid\b|\bcost\b|\bworth\b", re.I)
_UP = re.compile(r"\b(?:increas\w*|gr[eo]w\w*|rise|rose|risen|improv\w*|expand\w*|up|higher|more|exceed\w*|"
                 r"above|greater|beat)\b", re.I)
_DOWN = re.compile(r"\b(?:decreas\w*|declin\w*|fall|fell|fallen|drop\w*|shr[iu]nk\w*|contract\w*|down|lower|less|"
                   r"below|deteriorat\w*|weaken\w*)\b", re.I)
_THRESHOLD = re.compile(r"\b(?:above|below|over|under|exceed\w*|greater than|less than|more than|at least)\s+"
                        r"(\$?\d[\d,]*(?:\.\d+)?)\s*(%|x\b)?", re.I)
# a change or comparison with another period asked
_COMPARE = re.compile(r"\bcompar\w*|\bchang\w*|\bvs\.?|\bversus\b|\bdifference\b|\bpercentage points?\b|"
                      r"\bbasis points\b|\bbps\b", re.I)
# words of the question that ask, point or frame rather than name what is asked
_FRAME = frozenset(words(
    "what which how much many was were is are did does do has have had be been being the a an of for in on at to "
    "by from with as its their his her our company company's firm business calculate compute determine provide give "
    "tell show report state find estimate answer round rounded decimal places place using based according "
    "information statement statements shown reported disclosed filing annual report fiscal fy year years quarter "
    "period ended ending end during this that these those there any about approximately roughly usd million "
    "millions billion billions thousand thousands dollar dollars figure number value amount total please why "
    "when who where whether yes no than then over vs versus compared compare between and or"))
_YEAR_WORD = re.compile(r"^(?:fy)?\d{2,4}$|^q[1-4]$|^h[12]$")


@dataclass(frozen=True)
class Asked:
    """What a question asks (see the module docstring)."""

    question: str
    type: str
    focus: str = ""
    focus_words: frozenset[str] = field(default=frozenset(), repr=False)
    measure: Measure | None = field(default=None, repr=False)
    year: int | None = None
    years: tuple[int, ...] = ()
    direction: str = ""
    polarity: str = ""
    threshold: float | None = None
    yes_no: bool = False
    share: tuple[str, str, bool] | None = field(default=None, repr=False)  # (part, whole, ratio) phrases asked
    compare: bool = False  # a change or comparison with another period is asked
    entity: frozenset[str] = field(default=frozenset(), repr=False)  # stems of what the question names besides
    # its company (a segment, a product, a region: "Embedded", "Frito-Lay"): the scope of the figure asked
    quarter: int | None = None  # a quarter asked (1-4), or None
    growth: bool = False  # a growth over the year before asked through an everyday term ("y/y", "year over year")
    adjusted: bool = False  # the company's own adjusted (non-GAAP) measure is asked, not the textbook formula

    @property
    def figure(self) -> bool:
        """A figure is asked for (an amount, a percent, a ratio, days, per share, a count)."""
        return self.type in FIGURE_TYPES

    @property
    def measure_name(self) -> str:
        return self.measure.name if self.measure is not None else ""


def _type(q: str, measure: Measure | None, yes_no: bool, direction: str) -> str:
    if yes_no:
        return "yes_no"
    if direction and _WHICH.search(q):
        return "which"
    if _NARRATIVE.search(q):
        return "narrative"
    if _DATE.search(q):
        return "date"
    if measure is not None and measure.family != "amount":
        return _UNIT_TYPE[measure.unit]
    if _PER_SHARE.search(q) or measure is not None and measure.unit == "per_share":
        return "per_share"
    if _PERCENT.search(q):
        return "percent"
    if _COUNT.search(q) and not _AMOUNT.search(q):
        return "count"
    if _RATIO.search(q):
        return "ratio"
    if _DAYS.search(q):
        return "days"
    if measure is not None or _AMOUNT.search(q):
        return "amount"
    return "narrative"


def _focus(q: str, analysis: Analysis, measure: Measure | None) -> tuple[str, frozenset[str]]:
    """The phrase naming what is asked and its stems (the measure's name and input rows' names added)."""
    own = {w.casefold() for w in analysis.names}
    f = analysis.filters
    if f is not None:
        own |= {str(x).casefold() for v in f.matched.values() for x in (v if isinstance(v, list) else [v])}
        own |= {w.casefold() for name in f.company_docs for w in re.findall(r"[\w&.-]+", name)}
    kept = []
    for tok in re.findall(r"[A-Za-z0-9&][\w&'’.-]*", q):
        low = tok.casefold().rstrip(".").replace("’", "'")
        base = re.sub(r"'s$", "", low)
        if base in own or low in own or _YEAR_WORD.match(base) or not words(base):
            continue
        if set(words(base)) <= _FRAME:
            continue
        kept.append(tok.rstrip("."))
    focus = " ".join(kept)
    stems = set(w for w in words(focus) if w != "|")
    if measure is not None:
        cat = catalogue()
        stems |= {w for w in words(measure.name) if w != "|"}
        for c in dict.fromkeys(formula_concepts(measure.formula)):
            stems |= {w for w in words(cat.concepts[c].name) if w != "|"}
    for m in mentions(q):  # the plain words of an everyday term
        if m.kind == "words":
            stems |= {w for w in words(m.id) if w != "|"}
    return focus, frozenset(stems)


_QUARTER = re.compile(r"\bq([1-4])\b|\b(first|second|third|fourth)[- ]quarter\b|\bq([1-4])\s*(?:fy)?'?\d{2,4}\b|"
                      r"\b(?:19|20)\d\dq([1-4])\b|\bthree months ended\b", re.I)
_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4}
# the company's own adjusted measure asked ("adjusted EBITDA", "non-GAAP", "organic growth", "constant currency")
_ADJUSTED = re.compile(r"\badjusted\b|\bnon[- ]?gaap\b|\borganic\b|\bunderlying\b|\bcomparable\b|"
                       r"\bconstant[- ]currency\b|\bcore\b", re.I)
# an either-or question ("Was it net cash or net debt?"): it asks which, not yes or no
_EITHER = re.compile(r"\b(?:is|was|were|are|did|does|do|has|had)\b[^?]*\bor\b[^?]*\?", re.I)


def _quarter(q: str) -> int | None:
    m = _QUARTER.search(q)
    if m is None:
        return None
    g = next((x for x in m.groups() if x), None)
    if g is None:
        return 0  # a quarter, which one unread ("three months ended")
    return _ORDINAL.get(g.casefold()) or int(g)


def _entity(analysis: Analysis) -> frozenset[str]:
    """Stems of the names the question uses that are not its company's and not the catalogue's terms."""
    own: set[str] = set()
    f = analysis.filters
    if f is not None:
        own |= {str(x).casefold() for v in f.matched.values() for x in (v if isinstance(v, list) else [v])}
        own |= {w.casefold() for name in f.company_docs for w in re.findall(r"[\w&.-]+", name)}
        own |= {w.casefold() for d in (f.docs or []) for w in re.split(r"[_\W]+", d)}
    out: set[str] = set()
    for n in analysis.names:
        if n.casefold() in own or n.casefold().rstrip("'s") in own or mentions(n):
            continue
        out |= {w for w in words(n) if w != "|"}
    return frozenset(out)


def in_scope(asked: Asked, sections) -> Asked:
    """``asked`` with its entity narrowed to what names a part of the company: the words of the documents' own
    names (their ids, their breadcrumbs' first two titles: the document and its title), words found in most of the sections (the company's name,
    which a filing repeats) and words found in none ("Reckon": a capitalised instruction) are left out."""
    if not asked.entity or not sections:
        return asked
    own = set(words(" ".join(re.sub(r"[_#]", " ", s.doc) + " " + " ".join(s.breadcrumb.split(">")[:2])
                             for s in sections)))
    texts = [set(words(f"{s.breadcrumb} {s.text}")) for s in sections]
    common = {w for w in asked.entity if len(texts) >= 3 and sum(w in t for t in texts) >= 0.6 * len(texts)}
    absent = {w for w in asked.entity if not any(w in t for t in texts)}  # a capitalised instruction word
    return replace(asked, entity=frozenset(asked.entity - own - common - absent))


def read_question(question: str, analysis: Analysis | None = None) -> Asked:
    """What ``question`` asks (see the module docstring).

    >>> a = read_question("What was Norwell's acid-test ratio in FY2023?")
    >>> a.type, a.measure.id, a.year
    ('ratio', 'quick_ratio', 2023)
    >>> read_question("Which segment had the highest operating income in 2023?").direction
    'max'
    >>> read_question("Did Norwell's gross margin improve in 2023?").polarity
    'up'
    >>> read_question("What drove the decline in freight costs?").type
    'narrative'
    """
    analysis = analysis or Analysis.of(question)
    q = question.strip()
    measure = analysis.metric if analysis.question == question else read_measure(q)
    yes_no = bool(_YES_NO.match(q)) and not _WH.search(q.split(",")[-1]) and not _EITHER.search(q)
    supers = [d for w, d in _SUPERLATIVE.items() if re.search(rf"\b{w}\b", q, re.I)]
    direction = supers[0] if supers else ""
    kind = _type(q, measure, yes_no, direction)
    focus, stems = _focus(q, analysis, measure)
    polarity = ""
    if yes_no:
        up, down = _UP.search(q), _DOWN.search(q)
        polarity = "up" if up and not down else "down" if down and not up else ""
    m = _THRESHOLD.search(q) if yes_no else None
    threshold = float(m.group(1).replace(",", "").lstrip("$")) if m else None
    years = tuple(analysis.years)
    growth = any(m.kind == "operation" and m.id == "growth" for m in mentions(q))
    return Asked(question, kind, focus, stems, measure, max(years) if years else None, years, direction, polarity,
                 threshold, yes_no, share_phrases(q), bool(_COMPARE.search(q)) or growth, _entity(analysis), _quarter(q),
                 growth, bool(_ADJUSTED.search(q)))
