"""Query analysis: filters taken from the question before search.

Offline and rule-based (:func:`analyze_query`):

* **companies** - a document is selected when the question names it, by its indexed
  name or by the manifest metadata (``company``, ``aliases``; ``ticker`` matched in
  capitals only, so "BA" selects Boeing but "ba" does not), case-insensitively on word
  boundaries. Names that became filters are left out of the search text: inside the
  document every chunk says "AMD", so the name carries no information there.
* **years** - ``FY2022``, ``fiscal 2021``, ``2022``, ``FY22``: documents whose
  ``fiscal_year`` is one of them. A 10-K also reports the two years before its own, so
  when no document has such a fiscal year the year filter is dropped (with a note)
  rather than emptying the search. Years stay in the search text.
* **Items** - ``Item 7``, ``Item 1A`` and the distinctive Item names ("risk factors",
  "MD&A", "legal proceedings"...): only sections in those Items (see
  :mod:`ppkit.documents.metadata`). A document without any section in the Items is searched
  whole, with a note (PepsiCo's financial statements sit inside its Item 7 pages).

A question that names no company searches everything. Filters are applied *before*
search: :meth:`QueryFilters.scope` gives ``{doc: None | [Items]}``, which FAISS turns
into allowed chunk ids and Qdrant into a payload filter.

Online (:func:`analyze_query_online`): Gemini reads the question and the list of
indexed documents and fills a JSON schema with the same fields; its choices are checked
against the index (unknown documents are dropped, with a note).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import date
from functools import lru_cache

from ..core.text import STOPWORDS, stems, without_possessive
from ..documents.anchors import Anchor, find_anchors
from ..documents.cover import parse_date
from ..documents.metadata import (
    ITEM_TITLES,
    company_acronyms,
    normalise_company,
    normalise_item,
    short_company_name,
)
from ..indexing.index import SearchIndex
from ..llm.client import GeminiClient, online_or_offline
from ..llm.fence import DATA_RULE, block
from ..finance.catalogue import Measure
from ..finance.read import read_measure

__all__ = ["chosen_names", "name_words", "Analysis", "analyze_question", "QueryFilters", "question_names", "question_terms", "question_years", "analyze_query", "analyze_catalog", "analyze_query_online", "analyze", "ANALYZE_SCHEMA",
           "parse_periods", "choose_filings", "same_period", "company_groups", "catalog_of"]


@dataclass(frozen=True)
class QueryFilters:
    """Filters for one question."""

    docs: list[str] | None = None  # None: no document restriction
    matched: dict = field(default_factory=dict)  # doc -> the words that selected it
    search_text: str = ""  # the question without the names that became filters
    analyzer: str = "offline-names"
    companies: list[str] = field(default_factory=list)  # the first-choice filing of each company named, in order
    years: list[int] = field(default_factory=list)  # fiscal years mentioned (a span is filled in)
    items: list[str] = field(default_factory=list)  # 10-K Items mentioned ("7", "1A")
    notes: list[str] = field(default_factory=list)  # filters dropped and why
    quarters: list[list[int]] = field(default_factory=list)  # [fiscal year, quarter] pairs mentioned
    forms: list[str] = field(default_factory=list)  # forms the question names ("10-K", "8-K", ...)
    company_docs: dict = field(default_factory=dict)  # company as named -> its filings searched, best first

    @property
    def comparison(self) -> bool:
        """The question names more than one company."""
        return len(self.companies) > 1

    def scope(self, index: SearchIndex) -> dict | None:
        """``{doc: None | [Items]}`` to search, or ``None`` for everything.

        An Item filter is kept for a document only when it has sections in those Items.
        """
        if self.docs is None and not self.items:
            return None
        docs = self.docs if self.docs is not None else index.docs
        out = {}
        for d in docs:
            items = None
            if self.items:
                have = set(index.section_items(d).values())
                items = [i for i in self.items if i in have] or None
            out[d] = items
        return out

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Analysis:
    """What one question asks, read once by the conductor (:mod:`ppkit.pipeline`) and handed to every stage.

    Retrieval takes its ``filters`` (and its ``anchors`` for the image channel); the answer stage takes
    the ``metric`` to compute, the ``years`` and ``names`` whose absence means "Not found", and the
    ``anchors`` that choose images. No stage reads the question text for these again.

    Attributes:
        question: the question as searched (a follow-up already rewritten into a standalone question).
        filters: the documents, periods and 10-K Items chosen from the question; None when the caller
            chose the documents or turned filtering off.
        metric: the measure asked for (:func:`ppkit.finance.read.read_measure`), or None.
        years: the fiscal years named (:func:`question_years`), in order of appearance.
        names: the capitalised names the question uses (:func:`question_names`).
        anchors: the figures, tables, equations and sections it names (:func:`ppkit.documents.anchors.find_anchors`).
        terms: its stems without the anchors' words (:func:`question_terms`), what images are matched on.
    """

    question: str
    filters: QueryFilters | None = None
    metric: Measure | None = None
    years: tuple[int, ...] = ()
    names: tuple[str, ...] = ()
    anchors: tuple[Anchor, ...] = ()
    terms: frozenset[str] = frozenset()

    @classmethod
    def of(cls, question: str, filters: QueryFilters | None = None) -> Analysis:
        """The question-only parts read from ``question``, with ``filters`` chosen by :func:`analyze`.

        >>> Analysis.of("What is AMD's quick ratio for FY2022?").metric.name
        'quick ratio'
        """
        anchors = tuple(find_anchors(question))
        return cls(question, filters, read_measure(question), tuple(question_years(question)),
                   tuple(question_names(question)), anchors, frozenset(question_terms(question, anchors)))

    def to_dict(self) -> dict:
        """The analysis as plain data (the ``analysis`` event of an answer stream)."""
        return {"question": self.question, "filters": self.filters.to_dict() if self.filters is not None else None,
                "metric": self.metric.name if self.metric is not None else None, "years": list(self.years),
                "names": list(self.names), "anchors": [f"{a.kind} {a.number}" for a in self.anchors]}


_CAP = re.compile(r"\b([A-Z][\w&.-]*[A-Za-z0-9])(?:['’]s)?\b")
# capitalised words a question uses that are not names
_GENERIC = {"fy", "q1", "q2", "q3", "q4", "usd", "us", "u.s", "gaap", "non-gaap", "ebitda", "eps", "ceo", "cfo",
            "capex", "roa", "roe", "d/e", "ppe", "pp&e", "cogs", "sg&a", "r&d", "ai", "item", "part", "note",
            "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
            "november", "december", "answer", "define", "round", "please", "give", "based", "using", "calculate",
            "what", "how", "which", "who", "when", "where", "why", "does", "did", "is", "was", "are", "were",
            "the", "in", "as", "for", "by", "according", "assume", "chief", "executive", "officer", "officers",
            "balance", "sheet", "income", "statement", "statements", "cash", "flow", "flows", "inc", "inc.",
            "corporation", "company", "co", "corp",
            # document parts a question points at ("Figure 5", "Fig. 5", "Table 2", "Note 7", "Exhibit 21")
            "figure", "figures", "fig", "figs", "table", "tables", "tab", "notes", "items", "section", "sections",
            "exhibit", "exhibits", "appendix", "schedule", "chapter", "equation", "eq", "page", "algorithm", "step",
            # instruction verbs that open a clause after a comma ("For AMEX, Compute ...")
            "compute", "calculate", "estimate", "compare", "assess", "explain", "describe", "identify", "list",
            "determine", "evaluate", "quantify", "reconcile", "summarize", "summarise", "discuss", "provide",
            "analyze", "analyse", "show", "find", "name", "state", "tell", "can", "should", "would", "could",
            "has", "have", "do", "also", "then", "if", "yes", "no", "and", "or", "not"}
# ordinary English words a question may capitalise (a title-cased metric, an emphasis: "the Highest EBITDAR
# Contribution", "the Real change in Sales"): superlatives and comparatives, adjectives of measure and period,
# measure and period nouns, weekdays. None is a name, whatever the question; a word list, no question's wording.
_ORDINARY = frozenset("""
    highest lowest largest smallest biggest greatest best worst most least top bottom maximum minimum max min
    higher lower larger smaller bigger greater better worse more less fewer fewest latest earliest newest oldest
    first last next previous prior current recent final initial overall total net gross average mean median
    real nominal organic adjusted unadjusted reported underlying comparable core constant diluted basic
    operating annual annualized quarterly monthly weekly daily fiscal calendar full half year years quarter
    quarters month months week weeks day days period periods ended ending beginning
    new old high low major minor key main primary secondary other same each every all any both only
    positive negative strong weak good bad significant material approximate approximately estimated
    revenue revenues sales income profit profits loss losses margin margins growth change changes increase
    decrease decline contribution contributions expense expenses cost costs earnings assets liabilities equity
    debt dividend dividends return returns rate rates ratio ratios share shares price prices value values
    volume volumes capital expenditure expenditures spending performance
    amount amounts number numbers percentage percent segment segments region regions business businesses
    product products category categories unit units operations activities investing financing
    monday tuesday wednesday thursday friday saturday sunday
""".split())


def question_terms(question: str, anchors: Sequence[Anchor] | None = None) -> set[str]:
    """The question's stems, without the anchors it names ("Table 1" is an anchor, not a match term);
    ``anchors``: the question's, when already found.

    >>> sorted(question_terms("How does the training loss in Figure 3 change with the rank?"))
    ['chang', 'loss', 'rank', 'train']
    """
    found = find_anchors(question) if anchors is None else anchors
    for a in found:
        question = question.replace(a.text, " ")
    return set(stems(question))


def question_names(question: str) -> list[str]:
    """The capitalised words of a question that name something: not a sentence's first word, a stop word,
    a fiscal-year token, a generic finance word or an ordinary English word capitalised for emphasis or title case
    (a superlative, an adjective or noun of measure or period: "Highest", "Real", "Revenue").

    >>> question_names("What was Tesla's revenue in FY2022?")
    ['Tesla']
    >>> question_names("Which region had the Highest EBITDAR Contribution for MGM?")
    ['EBITDAR', 'MGM']
    """
    out = []
    for m in _CAP.finditer(question):
        w = m.group(1)
        before = question[: m.start()].rstrip()
        if not before or before[-1] in ".?!:;" or any(ch.isdigit() for ch in w):
            continue  # a sentence's first word ("Define ...", "Answer in ..."); "FY2022", "10-K"
        if w.casefold() in STOPWORDS or w.casefold().rstrip(".") in _GENERIC or w.casefold() in _ORDINARY:
            continue
        out.append(w)
    return list(dict.fromkeys(out))


# Item names distinctive enough to mean the Item when a question uses them
_ITEM_PHRASES = {
    r"risk factors": "1A", r"md&a|md and a": "7", r"management['’]s discussion(?: and analysis)?": "7",
    r"legal proceedings": "3", r"unresolved staff comments": "1B", r"mine safety": "4",
    r"quantitative and qualitative disclosures? about market risk": "7A", r"controls and procedures": "9A",
    r"executive compensation": "11", r"principal accountant fees": "14",
    r"financial statements and supplementary data": "8",
}
_ITEM_REF = re.compile(r"\bitems?\s+(\d{1,2}[a-c]?)\b", re.I)
_YEAR = re.compile(r"\b(?:fy\s?'?|fiscal\s+(?:year\s+)?)?((?:19|20)\d{2})(?!\d)|\bfy\s?'?(\d{2})\b", re.I)
_JOINER = r"(?:\s*(?:,|;|/|&|\band\b|\bor\b|\bvs\.?|\bversus\b|\bwith\b|\bcompared (?:to|with)\b)\s*)+"
_Y = r"(?:fy\s?|fiscal\s+(?:year\s+)?)?'?((?:19|20)?\d{2})"
_ORD = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}
_QUARTER_RX = [  # (pattern, group of the quarter, group of the year)
    (re.compile(r"\bq([1-4])\s*(?:of\s+|,\s*|\s)?" + _Y + r"(?!\d)", re.I), 1, 2),  # Q2 2023, Q2 of FY2023, Q2'23
    (re.compile(r"\bfy\s?'?((?:19|20)?\d{2})\s*q([1-4])\b", re.I), 2, 1),  # FY2023Q1
    (re.compile(r"\b([1-4])q\s?" + _Y + r"(?!\d)", re.I), 1, 2),  # 2Q23
    (re.compile(r"\b(first|second|third|fourth|1st|2nd|3rd|4th)[\s-]+(?:[a-z]+\s+)?quarter\s+(?:of\s+)?(?:the\s+)?"
                + _Y + r"(?!\d)", re.I), 1, 2),
    (re.compile(r"\b((?:19|20)\d{2})\s+(first|second|third|fourth)[\s-]+quarter\b", re.I), 2, 1),
]
_SPAN = re.compile(r"\b(?:between|from)\s+(?:fy\s?|fiscal\s+(?:year\s+)?)?((?:19|20)\d{2})\s+(?:and|to|through|-|–)\s+"
                   r"(?:fy\s?|fiscal\s+(?:year\s+)?)?((?:19|20)\d{2})\b|\bfy\s?((?:19|20)\d{2})\s*[-–]\s*fy\s?((?:19|20)\d{2})\b",
                   re.I)
# the forms a question names, one group each, in the order of _FORM_NAMES
_FORM_WORDS = re.compile(r"(\b10-?k\b|\bannual report\b)|(\b10-?q\b)|(\b8-?k\b)|"
                         r"(\bearnings (?:release|report|call)|\bpress release\b)", re.I)
_FORM_NAMES = ("10-K", "10-Q", "8-K", "earnings release")
_DATE_Q = re.compile(r"\b((?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2},?\s+(?:19|20)\d{2})\b",
                     re.I)
_FISCAL_MARK = re.compile(r"\b(?:fy\s?'?|fiscal\s+(?:year\s+)?)(?:(?:19|20)\d{2}|\d{2})\b(?:\s*[-–]\s*fy\s?(?:19|20)\d{2})?",
                          re.I)
_DATE_DMY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+((?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*)\.?,?\s+"
                       r"((?:19|20)\d{2})\b", re.I)
# the order forms are preferred in when the period does not decide (an annual figure: the 10-K)
_FORM_RANK = {"10-K": 0, "10-KT": 0, "20-F": 0, "10-Q": 1, "earnings release": 2, "8-K": 3}
_ANNUAL = tuple(form for form, rank in _FORM_RANK.items() if rank == 0)  # annual reports


def _year4(y: str) -> int:
    return int(y) if len(y) == 4 else 2000 + int(y)


def question_years(question: str) -> list[int]:
    """The years a question names (``FY2022``, ``fiscal 2021``, ``2020``, ``FY22`` -> 2022), in order.

    >>> question_years("FY22 revenue against fiscal 2021 and 2020")
    [2022, 2021, 2020]
    """
    return [int(m.group(1)) if m.group(1) else 2000 + int(m.group(2)) for m in _YEAR.finditer(question)]


def _years(question: str) -> list[int]:
    out = question_years(question)
    for m in _SPAN.finditer(question):  # "between FY2019 and FY2021": every year of the span
        a, b = sorted(int(g) for g in m.groups() if g)
        if b - a <= 10:
            out += range(a, b + 1)
    return sorted(set(out))


def parse_periods(question: str) -> tuple[list[int], list[list[int]], list[date]]:
    """(fiscal years, [fiscal year, quarter] pairs, full dates) a question names.

    >>> parse_periods("Did revenue grow between FY2020 and FY2022, and in Q2 of FY2023?")[:2]
    ([2020, 2021, 2022, 2023], [[2023, 2]])
    """
    quarters = []
    for rx, gq, gy in _QUARTER_RX:
        for m in rx.finditer(question):
            q = m.group(gq).lower()
            quarters.append([_year4(m.group(gy)), _ORD.get(q) or int(q)])
    quarters = sorted({tuple(x) for x in quarters})
    dates = [d for d in (parse_date(m.group(1)) for m in _DATE_Q.finditer(question)) if d]
    for m in _DATE_DMY.finditer(question):  # "1st July 2022"
        d = parse_date(f"{m.group(2)} {m.group(1)}, {m.group(3)}")
        if d:
            dates.append(d)
    years = sorted(set(_years(question)) | {y for y, _ in quarters})
    return years, [list(x) for x in quarters], dates


def _items(question: str) -> list[str]:
    found = [normalise_item(m.group(1)) for m in _ITEM_REF.finditer(question)]
    for rx, item in _ITEM_PHRASES.items():
        if re.search(rf"\b(?:{rx})(?!\w)", question, re.I):
            found.append(item)
    return [i for i in dict.fromkeys(found) if i in ITEM_TITLES]


def _clean(search: str) -> str:
    """Tidy the text left when names were cut out (``\\x00`` marks where a name was)."""
    for _ in range(2):  # twice: three or more names
        search = re.sub(rf"\x00{_JOINER}\x00", "\x00", search)
    # "the current ratios of <names> at the end" -> "the current ratios at the end"
    search = re.sub(r"\b(?:of|for|between|at|by|from|in|about|and)\s+\x00", "", search, flags=re.I)
    search = search.replace("\x00", " ")
    search = re.sub(r"\(\s*[,;]?\s*\)", "", search)  # "( )" left by a name in brackets
    search = re.sub(r"^\W+|\s+(?=[,.?])", "", " ".join(search.split()))
    search = re.sub(r",\s*([,?.])", r"\1", search)
    return search.strip()


# ---- the catalog: which documents belong to which company, and the names that select it ----

def catalog_of(index: SearchIndex, docs: Sequence[str] | None = None) -> dict[str, dict]:
    """``{doc: metadata}`` of an index (what the analyzer reads), or of those of its ``docs`` it holds."""
    have = set(index.docs) if docs is not None else set()
    held = index.docs if docs is None else [d for d in docs if d in have]
    return {d: (index.record(d).metadata or {}) for d in held}


def company_groups(catalog: dict[str, dict]) -> list[list[str]]:
    """The documents of each company: filings whose normalised names are equal or one starts
    the other ("Adobe Systems Incorporated" and "Adobe Inc."), or that share a ticker.

    >>> company_groups({"a": {"company": "Adobe Systems Inc."}, "b": {"company": "Adobe Inc."}, "c": {}})
    [['a', 'b'], ['c']]
    """
    docs = list(catalog)
    parent = {d: d for d in docs}

    def find(d):
        while parent[d] != d:
            parent[d] = parent[parent[d]]
            d = parent[d]
        return d

    keys = {d: normalise_company(catalog[d].get("company") or "") for d in docs}
    for i, a in enumerate(docs):
        for b in docs[i + 1:]:
            ka, kb = keys[a], keys[b]
            ta, tb = catalog[a].get("ticker"), catalog[b].get("ticker")
            same = (ka and kb and (ka == kb or ka.startswith(kb + " ") or kb.startswith(ka + " "))) or (ta and ta == tb)
            if same:
                parent[find(b)] = find(a)
    groups: dict[str, list[str]] = {}
    for d in docs:
        groups.setdefault(find(d), []).append(d)
    return list(groups.values())


def _group_names(catalog: dict[str, dict], group: list[str]) -> list[tuple[str, bool, bool]]:
    """(name, case-sensitive, not at the question's start) triples that select ``group``."""
    names: list[tuple[str, bool, bool]] = []
    for d in group:
        meta = catalog[d]
        names.append((d, False, False))
        names += [(a, False, False) for a in meta.get("aliases", []) or []]
        if meta.get("company"):
            short = short_company_name(meta["company"])
            names += [(meta["company"], False, False), (short, False, False)]
            names += [(a, True, False) for a in company_acronyms(meta["company"])]
            words = short.split()
            for n in range(len(words) - 1, 0, -1):  # leading words: "JPMorgan" of "JPMorgan Chase", "MGM Resorts"
                prefix = " ".join(words[:n]).rstrip(" ,&")
                if len(prefix) >= 3 and prefix[:1].isupper():
                    names.append((prefix, True, n == 1))
        if meta.get("ticker"):
            names.append((meta["ticker"], True, False))
    out, seen = [], set()
    for n, cs, mid in names:
        if n and len(n) >= 2 and (n, cs) not in seen:
            seen.add((n, cs))
            out.append((n, cs, mid))
    return out


@lru_cache(maxsize=4096)  # every question tries every name of the catalog
def _name_rx(name: str, case_sensitive: bool) -> re.Pattern:
    # "Coca-Cola" also matches "Coca Cola" and "CocaCola"; a possessive "'s" is part of the mention
    body = r"[\s\-]*".join(re.escape(p) for p in re.split(r"[\s\-]+", name.strip()))
    return re.compile(rf"(?<![\w&]){body}(?:['’]s)?(?![\w&])", flags=0 if case_sensitive else re.I)


def _mentions(catalog: dict[str, dict], groups: list[list[str]], question: str) -> list[tuple[int, int, int, str]]:
    """(start, end, group index, name) of each company the question names, in order of mention.

    A name shared by two companies ("American" of American Express and American Water Works)
    selects neither; a one-word prefix of a name ("Verizon" of Verizon Communications) must be
    written with its capital and not open the question (where "General ..." is any word).
    """
    owners: dict[tuple[str, bool], set[int]] = {}
    flags: dict[tuple[str, bool], bool] = {}
    for gi, group in enumerate(groups):
        for name, cs, mid in _group_names(catalog, group):
            owners.setdefault((name if cs else name.lower(), cs), set()).add(gi)
            flags[(name if cs else name.lower(), cs)] = mid
    found = []
    for (name, cs), gis in owners.items():
        if len(gis) != 1:
            continue
        for m in _name_rx(name, cs).finditer(question):
            if flags[(name, cs)] and _opens_sentence(question, m.start()):
                continue
            found.append((m.start(), m.end(), next(iter(gis)), without_possessive(m.group(0))))
    found.sort(key=lambda x: (-(x[1] - x[0]), x[0]))
    taken: list[tuple[int, int, int, str]] = []
    used = bytearray(len(question))  # 1 where a taken mention lies: linear, not mentions x mentions
    for f in found:  # the longest mention wins where mentions overlap
        if not any(used[f[0]:f[1]]):
            taken.append(f)
            used[f[0]:f[1]] = b"\x01" * (f[1] - f[0])
    return sorted(taken)


def _opens_sentence(text: str, i: int) -> bool:
    """Whether ``text[i:]`` opens the text or a sentence (only spaces back to ``.?!:``); looks back
    over the spaces alone, so a long question costs linear time, not a scan of its whole start."""
    j = i
    while j > 0 and text[j - 1].isspace():
        j -= 1
    return i == 0 or (j > 0 and text[j - 1] in ".?!:")


# ---- which filing of a company answers the question ----

def _filing_score(meta: dict, years: list[int], quarters: list[list[int]], dates: list[date],
                  forms: list[str]) -> tuple:
    """A sort key (higher is better) for one filing; its first element is 0 when nothing of the
    question's period, date or form matched (the filing is then only a fallback)."""
    fy, q, form = meta.get("fiscal_year"), meta.get("quarter"), meta.get("form_type")
    end = meta.get("period_end")
    match = 0.0
    if dates and end and any(d.isoformat() == end for d in dates):
        match = 5.0  # "on May 26, 2023": the filing reporting that very date (an 8-K)
    elif quarters:
        ty, tq = max(quarters)  # the latest quarter named: its filing also reports the earlier ones
        if fy == ty and q == tq:
            match = 4.0
        elif fy == ty and q is None and form in _ANNUAL:
            match = 2.0  # no filing of that quarter: the annual report of its fiscal year
    elif years and fy is not None:
        ty = max(years)  # "between FY2021 and FY2022": the FY2022 10-K reports both years
        annual = form in _ANNUAL
        if fy == ty and annual:
            match = 4.0
        elif fy == ty and form == "earnings release" and q == 4:
            match = 3.0  # a full-year release
        elif annual and ty < fy <= ty + 2:
            match = 2.0 - 0.1 * (fy - ty)  # a later annual report restates the year as a comparative
        elif fy == ty:
            match = 1.0
    if forms and form in forms:
        match += 10.0  # a form the question names ("the 8-K filed on ...") comes before the period
    return (match, -_FORM_RANK.get(form, 9), fy or 0, q or 0)


def _period_terms(question: str) -> tuple[list[int], list[list[int]], list[date], list[str]]:
    """(years, quarters, dates, forms) a question names, as :func:`choose_filings` weighs them."""
    years, quarters, dates = parse_periods(question)
    # years written as fiscal years ("FY 2021") are the period asked about; a bare year beside them
    # is usually something else ("... expect to pay for retirees in 2024")
    marked = [y for y in _years(" ".join(m.group(0) for m in _FISCAL_MARK.finditer(question)))]
    named = {m.lastindex for m in _FORM_WORDS.finditer(question)}
    return sorted(set(marked)) or years, quarters, dates, [f for i, f in enumerate(_FORM_NAMES, 1) if i in named]


def choose_filings(catalog: dict[str, dict], docs: list[str], question: str) -> tuple[list[str], list[str]]:
    """(the filings to search, all of ``docs`` best first) for one company's ``docs``.

    The filings to search are those whose period (or date, or form) the question names, with
    the best score; when it names none, the latest annual report and the filings after it; when
    it names one that no filing matches, all of ``docs``.

    >>> choose_filings(cat, ["X_2021_10K", "X_2022_10K", "X_2023Q2_10Q"], "X's FY2022 revenue?")[0]  # doctest: +SKIP
    ['X_2022_10K']
    """
    years, quarters, dates, forms = _period_terms(question)
    scored = sorted(docs, key=lambda d: _filing_score(catalog[d], years, quarters, dates, forms), reverse=True)
    best = _filing_score(catalog[scored[0]], years, quarters, dates, forms)
    if best[0] <= 0:
        if not (years or quarters or dates or forms):
            return _latest_filings(catalog, docs), scored
        return list(docs), scored
    chosen = [d for d in scored if _filing_score(catalog[d], years, quarters, dates, forms)[0] == best[0]][:1]
    if years and not (quarters or dates or forms):
        # a year's figures are reported twice: in its annual report and in its full-year (Q4) earnings release,
        # which alone carries the non-GAAP measures; both are searched and the ranking chooses between them
        chosen += [d for d in scored if d not in chosen and _full_year_release(catalog[d], catalog[chosen[0]])]
    return chosen, scored


def _filing_order(meta: dict) -> tuple[int, int]:
    """(fiscal year, quarter) of a filing, an annual report as its fourth quarter, a filing of no quarter first."""
    q = meta.get("quarter") or (4 if meta.get("form_type") in _ANNUAL else 0)
    return (meta.get("fiscal_year") or 0, q)


def same_period(a: dict, b: dict) -> bool:
    """Whether two filings (metadata) report the same fiscal period: the fiscal year's annual report and its
    full-year (fourth-quarter) release, or a quarter's 10-Q and its release. 8-Ks report events, not periods.

    >>> same_period({"form_type": "10-K", "fiscal_year": 2022}, {"form_type": "earnings release", "fiscal_year": 2022, "quarter": 4})
    True
    """
    if "8-K" in (a.get("form_type"), b.get("form_type")):
        return False
    order = _filing_order(a)
    return order[0] > 0 and order[1] > 0 and order == _filing_order(b)


def _latest_filings(catalog: dict[str, dict], docs: list[str]) -> list[str]:
    """The filings that answer a question naming no period (it asks about the present): the latest annual
    report and every filing of its fiscal year's end or later (the full-year release, later 10-Qs, 8-Ks), and
    any filing whose year is unknown (it cannot be placed). A company without an annual report of known year
    keeps all of ``docs``.

    >>> _latest_filings({"a": {"form_type": "10-K", "fiscal_year": 2021}, "b": {"form_type": "10-K", "fiscal_year": 2022},
    ...                  "c": {"form_type": "10-Q", "fiscal_year": 2023, "quarter": 1}}, ["a", "b", "c"])
    ['b', 'c']
    """
    annual = [_filing_order(catalog[d]) for d in docs
              if catalog[d].get("form_type") in _ANNUAL and catalog[d].get("fiscal_year")]
    if not annual:
        return list(docs)
    latest = max(annual)
    return [d for d in docs if not catalog[d].get("fiscal_year") or _filing_order(catalog[d]) >= latest]


def _full_year_release(meta: dict, annual: dict) -> bool:
    """Whether ``meta`` is the full-year earnings release of the fiscal year of the annual report ``annual``."""
    return (meta.get("form_type") == "earnings release" and meta.get("quarter") == 4
            and annual.get("form_type") in _ANNUAL
            and meta.get("fiscal_year") is not None and meta.get("fiscal_year") == annual.get("fiscal_year"))


def _docs_for_years(catalog: dict[str, dict], pool: list[str], years: list[int], notes: list[str]) -> list[str] | None:
    """The documents of ``pool`` whose fiscal year is in ``years``, and those whose fiscal year is not known (a
    document without metadata is searched: the filter does not apply to it); None: no restriction."""
    fys = {d: catalog[d].get("fiscal_year") for d in pool}
    if not years or not any(fys.values()):
        return None
    if not any(fys[d] in years for d in pool):
        notes.append(f"no document has fiscal year {', '.join(map(str, years))}: not filtered by year "
                     "(a 10-K also reports earlier years)")
        return None
    kept = [d for d in pool if fys[d] in years or fys[d] is None]
    return kept if len(kept) < len(pool) else None


def analyze_catalog(catalog: dict[str, dict], question: str) -> QueryFilters:
    """:func:`analyze_query` over ``{doc: metadata}`` instead of an index (what the benchmark uses)."""
    groups = company_groups(catalog)
    mentions = _mentions(catalog, groups, question)
    search = question
    for start, end, _, _ in sorted(mentions, reverse=True):
        search = search[:start] + "\x00" + search[end:]
    notes: list[str] = []
    years, quarters, _ = parse_periods(question)
    terms = _period_terms(question)
    company_docs: dict[str, list[str]] = {}
    matched: dict[str, str] = {}
    companies: list[str] = []
    for _, _, gi, name in mentions:
        if name in company_docs:
            continue
        chosen, ranked = choose_filings(catalog, groups[gi], question)
        company_docs[name] = chosen
        companies.append(ranked[0])
        for d in chosen:
            matched[d] = name
        if (years or quarters) and len(chosen) > 1 and _filing_score(catalog[ranked[0]], *terms)[0] <= 0:
            notes.append(f"no filing of {name} matches the period named: all {len(chosen)} of its filings searched")
        elif not any(terms) and len(chosen) < len(groups[gi]):
            notes.append(f"no period named: {name}'s latest annual report and the filings after it searched "
                         f"({len(chosen)} of its {len(groups[gi])} filings)")
    if company_docs:
        docs = list(dict.fromkeys(d for ds in company_docs.values() for d in ds))  # two names of one company
    else:
        docs = _docs_for_years(catalog, list(catalog), years, notes)
    return QueryFilters(docs=docs, matched=matched, search_text=_clean(search) or question,
                        analyzer="offline-rules", companies=companies, years=years, items=_items(question),
                        notes=notes, quarters=quarters, forms=terms[3], company_docs=company_docs)


def analyze_query(index: SearchIndex, question: str) -> QueryFilters:
    """The companies, periods, forms and 10-K Items a question names, as filters.

    The company is a hard filter: only the filings of the companies named are searched. Among a
    company's filings, the period decides (see :func:`choose_filings`): the 10-K of the fiscal
    year named (the latest, for a span, since a 10-K also reports the year before), the 10-Q
    or release of the quarter named, the filing of the date named. A question naming no period
    asks about the present: the latest annual report and the filings after it are searched. When
    no filing matches the period named, all of the company's filings are searched - the period
    never empties the search.

    >>> analyze_query(index, "For AMD, what is the current ratio?").docs  # doctest: +SKIP
    ['AMD']
    >>> analyze_query(index, "Compare the current ratios of AMD and Boeing").search_text  # doctest: +SKIP
    'Compare the current ratios'
    """
    return analyze_catalog(catalog_of(index), question)


_ANALYZE_FIELDS = {
    "companies": {"type": "array", "items": {"type": "string"},
                  "description": "document names (exactly as listed) of the companies the question is about"},
    "years": {"type": "array", "items": {"type": "integer"}, "description": "fiscal years the question names"},
    "items": {"type": "array", "items": {"type": "string"},
              "description": "10-K Items the question points at, like '7' or '1A'; empty if none"},
    "search_text": {"type": "string",
                    "description": "the question rewritten for searching inside one filing: no company names"},
}
ANALYZE_SCHEMA = {"type": "object", "properties": _ANALYZE_FIELDS, "required": list(_ANALYZE_FIELDS)}

_SYSTEM = ("You turn a question about SEC filings into search filters. Use only the document names listed. "
           "Name a company only if the question is about it. Reply with JSON only. " + DATA_RULE)


def analyze_query_online(index: SearchIndex, question: str, *, client=None) -> QueryFilters:
    """Gemini's reading of the question (JSON schema), checked against the index.

    Args:
        client: an object with ``generate(prompt, system=, schema=) -> LLMResult``
            (default :class:`ppkit.llm.client.GeminiClient` with the index's config).

    Raises:
        ppkit.llm.client.LLMError: the call failed (no key, network, unusable reply).
    """
    if client is None:
        client = GeminiClient(config=index.config)
    rows = []
    for d in index.docs:
        meta = index.record(d).metadata or {}
        rows.append(f"- {d}: company={meta.get('company')!r}, ticker={meta.get('ticker')!r}, "
                    f"fiscal_year={meta.get('fiscal_year')!r}, aliases={meta.get('aliases', [])!r}")
    prompt = ("Documents in the index:\n" + block("documents", "\n".join(" ".join(r.split()) for r in rows))
              + "\n\n10-K Items: " + "; ".join(f"{k} {v}" for k, v in ITEM_TITLES.items()) + "\n\n"
              + block("question", question))
    res = client.generate(prompt, system=_SYSTEM, schema=ANALYZE_SCHEMA)
    data = res.data if isinstance(res.data, dict) else {}
    notes: list[str] = []
    companies = []
    for name in data.get("companies", []) or []:
        try:
            companies.append(index.resolve_doc(str(name)))
        except KeyError:
            notes.append(f"Gemini named {name!r}, which is not an indexed document: ignored")
    companies = list(dict.fromkeys(companies))
    years = sorted({int(y) for y in data.get("years", []) or [] if str(y).isdigit()})
    items = []
    for it in data.get("items", []) or []:
        try:
            items.append(normalise_item(it))
        except ValueError:
            notes.append(f"Gemini gave {it!r} as an Item: ignored")
    items = [i for i in dict.fromkeys(items) if i in ITEM_TITLES]
    by_year = _docs_for_years(catalog_of(index), companies or index.docs, years, notes)
    docs = by_year if by_year is not None else (companies or None)
    search = str(data.get("search_text") or "").strip() or question
    return QueryFilters(docs=docs, matched={d: "gemini" for d in companies}, search_text=search,
                        analyzer="gemini", companies=companies, years=years, items=items, notes=notes)


def analyze_question(index: SearchIndex, question: str, *, filters: bool = True,
                     docs: Sequence[str] | None = None) -> Analysis:
    """What ``question`` asks, read once: its filters (with ``filters``; Gemini's reading when the config is
    online, :func:`analyze`) and its metric, years, names, anchors and match terms (:meth:`Analysis.of`).
    ``filters=False`` when the caller chose the documents (``docs``) or turned filtering off. A name by which the
    question calls a chosen document's company (its ticker "JPM", a short name) is no name the sections must
    mention (:func:`chosen_names`): the analyzer would have resolved it to that company's filings.

    >>> analyze_question(index, "What is AMD's quick ratio for FY2022?").metric.name  # doctest: +SKIP
    'quick ratio'
    """
    analysis = Analysis.of(question, analyze(index, question) if filters else None)
    if filters or not docs or not analysis.names:
        return analysis
    own = chosen_names(catalog_of(index, docs), question)  # the chosen documents' metadata only, not the shelf's
    return replace(analysis, names=tuple(n for n in analysis.names if n not in own)) if own else analysis


def chosen_names(catalog: dict[str, dict], question: str) -> set[str]:
    """The question's names (:func:`question_names`) that name a company of ``catalog`` (the documents a caller
    chose) as the analyzer resolves names (:func:`analyze_catalog`: ticker, short name, initialism).

    >>> sorted(chosen_names({"JPM_2021Q1_10Q": {"company": "JPMorgan Chase & Co.", "ticker": "JPM"}},
    ...                     "Which of JPM's segments had the lowest net revenue?"))
    ['JPM']
    """
    words = {w for *_, name in _mentions(catalog, company_groups(catalog), question) for w in name_words(name)}
    return {n for n in question_names(question) if name_words(n.casefold()) <= words} if words else set()


def name_words(name: str) -> set[str]:
    """The words of a name, case-folded, ``&``, ``.`` and ``-`` kept inside them: ``"AT&T Inc."`` -> ``{"at&t",
    "inc."}``."""
    return {w.casefold() for w in re.findall(r"[\w&.-]+", name)}


def analyze(index: SearchIndex, question: str, *, online: bool | None = None, client=None) -> QueryFilters:
    """Online analysis when the index's config is online (``online=None``), else offline.

    An online failure falls back to the offline analyzer and says so in ``notes``.
    """
    cfg = index.config
    if online is None:
        online = bool(cfg.online and cfg.analyze_online)
    if not online:
        return analyze_query(index, question)
    res, note = online_or_offline(lambda: analyze_query_online(index, question, client=client),
                                  lambda: analyze_query(index, question), "analyzer")
    return res if note is None else replace(res, notes=res.notes + [note])
