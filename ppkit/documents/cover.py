"""The cover page of a filing: form, registrant, ticker and the period it reports.

Offline and rule-based, from the document's own text (:func:`read_cover`):

* **form** - ``10-K``, ``10-Q``, ``8-K``, ``20-F``... from a line that *is* ``FORM 10-K`` (a
  mention inside a sentence, "see our Form 10-Q", does not count); without such a line, a
  press release that reports results ("... Reports Fourth-Quarter 2022 Results",
  "today announced results") is an ``earnings release``.
* **company** - the line above "(Exact name of registrant as specified in its charter)";
  covers without that label (older 10-Ks) give the first name-like line after "Commission
  file number"; a press release gives the name before its exchange tag
  ("Johnson & Johnson (NYSE: JNJ) today announced").
* **ticker** - the first trading symbol of the "Securities registered pursuant to Section
  12(b)" table, or the press release's exchange tag.
* **period** - the date the report covers: "For the fiscal year ended <date>" (10-K; when the
  cover's date is lost, the latest "year(s) ended <date>" of the text, since a 10-K reports no
  year after its own), "For
  the quarterly period ended <date>" (10-Q), "Date of Report ...: <date>" (8-K), "quarter /
  weeks / year ended <date>" (earnings release).

**The fiscal-year rule** (FinanceBench's ``doc_period`` follows it, checked on its 74
filings): a fiscal year is named by the calendar year in which it *ends*, a year ending in
the first week of January counting as the one before (52/53-week calendars). So Best Buy's
year ended January 28, 2023 is FY2023, and a quarter belongs to the fiscal year that
contains it: Amcor's quarter ended December 31, 2022 is Q2 of FY2023 (its year ends in
June). The quarter number comes from the months since the last fiscal year end, which a
10-Q names when it cites its annual report ("Form 10-K for the fiscal year ended June 30,
2022"); failing that, from the longest "six / nine months ended" its statements show; a
press release names it ("second-quarter", "Q4"; a full-year release is Q4). A fiscal year a
press release names in words ("Fourth Quarter Fiscal 2022") is used only when it gives no
end date, since filers differ in how they name years (Ulta's "fiscal 2022" ended in
January 2023). An 8-K reports an event, not a period: its year is the year of the report date.

This module reads text; the file name fallback and the sidecar are in
:mod:`ppkit.documents.metadata`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta

__all__ = ["Cover", "read_cover", "fiscal_year_of", "parse_date", "FORMS"]

FORMS = ("10-K", "10-Q", "8-K", "20-F", "40-F", "10-KT", "6-K", "earnings release")

_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
     "december"], start=1)}
_MONTHS.update({k[:3]: v for k, v in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_DATE = r"((?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\s*,?\s*(?:19|20)\d{2})"
_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}

_FORM_LINE = re.compile(r"^(?:(?:united\s+states\s+)?securities\s+and\s+exchange\s+commission\b.{0,80}?)?form\s+(10-k|10-q|8-k|20-f|40-f|10-kt|6-k)(?:/a)?\b",
                        re.I)
_REGISTRANT = re.compile(r"\(?(?<!\s)\s*exact\s+name\s+of\s+(?:the\s+)?registrant", re.I)
_LABEL = re.compile(r"^\(|commission|file\s+n|exact name|state or other|i\.?r\.?s\.?|identification|"
                    r"washington|securities|annual report|quarterly report|current report|transition|"
                    r"for the |pursuant|form\s|date of report|^or$|^[\d\s\-().,]*$|telephone|address|"
                    r"jurisdiction|of incorporation|state of|organization\)", re.I)
_HEADLINE = re.compile(r"^(.{2,60}?)\s+(?:reports|announces|reported)\b")
_EXCHANGE_TAG = re.compile(r"([A-Z0-9][\w.,&'’\- ]{1,80}?)\s*\(\s*(?:NYSE|NASDAQ|Nasdaq|NYSE American|AMEX)\s*:\s*"
                           r"([A-Z]{1,5}(?:\.[A-Z])?)\b")
_TICKER = re.compile(r"^[A-Z]{1,5}(?:\.[A-Z]{1,2})?$")
_NOT_TICKER = {"LLC", "NYSE", "INC", "NA", "N", "A", "I", "CEO", "USA", "US", "THE", "NONE", "PLC", "CO", "LP"}
_RESULTS = re.compile(r"\b(?:reports?|reported|announces?|announced)\b[^.]{0,120}?\bresults\b|"
                      r"\bresults\s+for\s+(?:the\s+)?(?:first|second|third|fourth|fiscal|full)", re.I)
_QUARTER = re.compile(r"\b(first|second|third|fourth|1st|2nd|3rd|4th)[\s-]+quarter\b|\bq([1-4])\b|\b([1-4])q\s?\d{2}\b",
                      re.I)
_FULL_YEAR = re.compile(r"\b(?:full[\s-]+year|fiscal\s+(?:year\s+)?(?:19|20)\d{2}\s+results|annual\s+results)\b", re.I)
_NAMED_YEAR = re.compile(r"\b(?:fiscal\s+(?:year\s+)?)?((?:19|20)\d{2})\b", re.I)
_MONTHS_ENDED = re.compile(r"\b(three|six|nine|twelve|3|6|9|12|twenty[\s-]six|thirty[\s-]nine|26|39|24|36|"
                           r"(?:[a-z]+|\d{1,2})(?=[\s-]+weeks))[\s-]+(months|weeks)\s+ended\b", re.I)
_SPAN_QUARTERS = {"three": 1, "3": 1, "thirteen": 1, "13": 1, "12": 1, "six": 2, "6": 2, "twenty-six": 2,
                  "twenty six": 2, "26": 2, "24": 2, "nine": 3, "9": 3, "thirty-nine": 3, "thirty nine": 3, "39": 3,
                  "36": 3}


@dataclass(frozen=True)
class Cover:
    """What a filing's cover page (or a press release's header) says about it.

    ``period_end`` is the ISO date the report covers (an 8-K: its report date);
    ``evidence`` maps each found field to the text it was read from.
    """

    form_type: str | None = None
    company: str | None = None
    ticker: str | None = None
    fiscal_year: int | None = None
    quarter: int | None = None  # 1-4 for a quarter; None for a fiscal year or an 8-K
    period_end: str | None = None
    evidence: dict = field(default_factory=dict)  # field -> the text it was read from


def parse_date(text: str) -> date | None:
    """``"December 31, 2018"`` / ``"Sept. 30 2022"`` -> ``date(2018, 12, 31)``; None if not a date."""
    m = re.match(r"([A-Za-z]+)\.?\s+(\d{1,2})\s*,?\s*(\d{4})", text.strip())
    if not m:
        return None
    month = _MONTHS.get(m.group(1).lower()) or _MONTHS.get(m.group(1).lower()[:3])
    try:
        return date(int(m.group(3)), month, int(m.group(2))) if month else None
    except ValueError:
        return None


def _add_months(d: date, months: int) -> date:
    y, m = divmod(d.month - 1 + months, 12)
    return date(d.year + y, m + 1, min(d.day, 28))


def fiscal_year_of(period_end: date, quarter: int | None = None) -> int:
    """The fiscal year a period ending on ``period_end`` belongs to (see the module docstring).

    >>> fiscal_year_of(date(2023, 1, 28)), fiscal_year_of(date(2022, 12, 31), quarter=2)
    (2023, 2023)
    """
    end = period_end - timedelta(days=7)  # a 52/53-week year ending January 1-7 is named by the year before
    if quarter:
        end = _add_months(end, 3 * (4 - quarter))
    return end.year


def _plain(line: str) -> str:
    s = re.sub(r"<br\s*/?>|</?t[dhr]>|\|", " ", line)
    s = re.sub(r"<[^>]+>|^\s*#+\s*|[*_`]+|\[|\]\([^)]*\)", "", s)
    return " ".join(s.split()).strip(" :")


def _form(plain: list[str]) -> tuple[str | None, int]:
    """The cover's form and the line it is on (-1 when none)."""
    for i, s in enumerate(plain[:1500]):
        m = _FORM_LINE.match(s)
        if m:
            return m.group(1).upper(), i
    return None, -1


def _registrant(plain: list[str], start: int) -> str | None:
    for i in range(max(0, start), min(len(plain), start + 300)):
        if not _REGISTRANT.search(plain[i]):
            continue
        before = _REGISTRANT.split(plain[i])[0].strip(" (")
        if before and not _LABEL.search(before):
            return before
        parts: list[str] = []
        for j in range(i - 1, max(-1, i - 6), -1):  # a name broken over lines ("AMCOR" / "PLC")
            s = plain[j]
            if not s:
                continue
            if _LABEL.search(s) or len(s) > 120 or (parts and not s.isupper()):
                break
            parts.insert(0, s)
            if not s.isupper() or len(" ".join(parts)) > 25:
                break
        if parts:
            return " ".join(parts)
    return None


def _after_file_number(plain: list[str], start: int) -> str | None:
    """Older covers without the registrant label: the first name-like line after the file number."""
    for i in range(max(0, start), min(len(plain), start + 60)):
        if re.search(r"commission\s+file\s+n", plain[i], re.I):
            for s in plain[i + 1 : i + 8]:
                if _REGISTRANT.search(s):  # the label with no name above it: the name is not in the text
                    return None
                if s and not _LABEL.search(s) and len(s) <= 80 and re.search(r"[A-Za-z]{2}", s):
                    return s
    return None


# the definition after a name: ``(the "Company")``, ``(together with its subsidiaries, "Acme" or the "Company")``
_DEFINED = re.compile(r"\(\s*(?:together\s+with[^)]{0,60}?)?(?:[“\"][^”\"]{1,30}[”\"]\s*(?:,\s*)?(?:or\s+)?)?(?:the\s+)?"
                      r"[“\"](?:Company|Corporation|Registrant)[”\"]")
_NAME_WORD = re.compile(r"[\w.&'’\-]")  # a character of a word of a name ("AT&T", "Coca-Cola", "Amazon.com")
_NAME_SEP = re.compile(r"[\s,]")  # between the words of a name


# 'In this report, the terms "The Foo Company," "Company," "we," ... mean ...'
_TERMS = re.compile(r"\bthe\s+terms?\s+[“\"]((?:The\s+)?[A-Z][^”\"]{1,70}?)[,.]?[”\"]\s*(?:,\s*)?(?:and\s+|or\s+)?"
                    r"[“\"](?:the\s+)?(?:Company|Corporation|Registrant)[,.]?[”\"]")


def _name_before(s: str, end: int) -> str | None:
    """The name that ends just before ``s[end:]`` (blanks between them skipped), read backwards: words that start
    with a capital, joined by blanks and commas, with ``&``, ``and`` and ``of`` between them, from the earliest
    capital (a name may start inside a word: ``eBay`` gives ``Bay``). It is what a pattern of such words before the
    definition matched at its leftmost start, in time linear in the name: that pattern, tried at every capital,
    took time quadratic in a run of capitals."""
    e = end
    while e > 0 and s[e - 1].isspace():
        e -= 1
    start, pos = None, e
    while True:
        first = pos
        while first > 0 and _NAME_WORD.match(s[first - 1]):
            first -= 1
        word = s[first:pos]
        if not word:
            break
        if "A" <= word[0] <= "Z":
            start = first
        elif word not in ("&", "and", "of"):  # no word of a name: one may still start at a capital inside it
            inner = next((i for i, ch in enumerate(word) if "A" <= ch <= "Z"), None)
            if inner is not None:
                start = first + inner
            break
        gap = first
        while gap > 0 and _NAME_SEP.match(s[gap - 1]):
            gap -= 1
        if gap == first:
            break
        pos = gap
    return s[start:e] if start is not None else None


def _defined_company(plain: list[str]) -> str | None:
    """The name a filing defines as "the Company": ``The Coca-Cola Company (the "Company")``, or
    ``the terms "The Coca-Cola Company," "Company," "we" ... mean``."""
    for s in plain[:3000]:
        name = next((n for m in _DEFINED.finditer(s) if (n := _name_before(s, m.start())) is not None), None)
        if name is None and (m := _TERMS.search(s)):
            name = m.group(1)
        if name is not None and len(name) <= 80:
            return name.strip(" ,")
    return None


def _ticker(lines: list[str], plain: list[str], start: int) -> str | None:
    """The first symbol of the Section 12(b) table: a cell or line of its own, ``Title: SYM,
    Exchange``, or just before the exchange's name ("AMCR New York Stock Exchange")."""
    for i in range(max(0, start), min(len(plain), start + 300)):
        if not re.search(r"section\s+12\s*\(\s*b\s*\)", plain[i], re.I):
            continue
        for j in range(i, min(len(plain), i + 40)):
            if j > i and re.search(r"section\s+12\s*\(\s*g\s*\)|indicate by check", plain[j], re.I):
                break
            cells = re.findall(r"(?:^|\||<td>)\s*(?:\*\*)?([A-Z][A-Z.]{0,5})(?:\*\*)?\s*(?=\||</td>|$)", lines[j].strip())
            cells += re.findall(r"\b([A-Z]{1,5}(?:\.[A-Z])?)\s+(?:The\s+)?(?:New York|Nasdaq|NASDAQ|NYSE)\b", plain[j])
            cells += re.findall(r":\s*([A-Z]{1,5}(?:\.[A-Z])?)\s*,", plain[j])  # "Common Stock: BA, New York ..."
            for tok in cells:
                if _TICKER.match(tok) and tok not in _NOT_TICKER:
                    return tok
    return None


def _dates_after(rx: str, text: str) -> list[date]:
    out = []
    # a few words may sit between the label and the date where a layout interleaves two columns
    # ("For the quarterly period ended Commission file March 31, 2021")
    for m in re.finditer(rx + r"\s*:?\s*(?:[A-Za-z][A-Za-z ]{0,30}?\s)?" + _DATE, text, re.I):
        d = parse_date(m.group(m.lastindex))
        if d:
            out.append(d)
    return out


def _quarter_from_fy_end(text: str, end: date) -> int | None:
    """Months since the last fiscal year end the 10-Q cites ("10-K for the fiscal year ended ...")."""
    for d in _dates_after(r"(?:fiscal\s+)?year\s+ended", text):
        months = (end.year - d.year) * 12 + end.month - d.month + (1 if end.day - d.day > 15 else 0) \
            - (1 if d.day - end.day > 15 else 0)
        if 1 <= months <= 11:
            return max(1, min(3, round(months / 3)))
    return None


def _quarter_from_statements(text: str) -> int | None:
    spans = [_SPAN_QUARTERS.get(" ".join(m.group(1).lower().split()).replace(" ", "-") if "-" in m.group(1) else
                                m.group(1).lower(), None) for m in _MONTHS_ENDED.finditer(text)]
    spans = [s for s in spans if s]
    if not spans:
        return None
    # the longest span the statements show at least twice (a stray "nine months ended" in a note is not enough)
    counts = {q: spans.count(q) for q in set(spans)}
    return max([q for q, c in counts.items() if c >= 2] or [min(counts)])


def _release_quarter(head: str) -> tuple[int | None, str | None]:
    m = _QUARTER.search(head)
    if m:
        q = _ORDINAL.get((m.group(1) or "").lower()) or int(m.group(2) or m.group(3))
        return q, m.group(0)
    m = _FULL_YEAR.search(head)
    return (4, m.group(0)) if m else (None, None)


def read_cover(lines: list[str]) -> Cover:
    """The form, registrant, ticker and period of the document whose lines are ``lines``.

    >>> read_cover(["FORM 10-K", "For the fiscal year ended May 31, 2023", "Commission file number 1-1",
    ...             "ACME CORP", "(Exact name of registrant as specified in its charter)"]).fiscal_year
    2023
    """
    lines = [part for x in lines for part in re.split(r"<br\s*/?>", x)]  # a cover set as one block
    plain = [_plain(x) for x in lines]
    form, at = _form(plain)
    start = max(0, at - 20)
    cover = " ".join(plain[start : start + 250])
    ev: dict[str, str] = {}
    company = ticker = None
    fy = quarter = None
    end: date | None = None
    if form is None:
        head = " ".join(plain[:200])
        if _RESULTS.search(head):
            form, ev["form_type"] = "earnings release", _RESULTS.search(head).group(0)
        tag = _EXCHANGE_TAG.search(head)
        if tag:
            company = re.split(r"[–—-]\s+|\)\s+", tag.group(1))[-1].strip(" ,")
            company = re.sub(r"^.*\b(?:19|20)\d{2}\s*[)]?\s*", "", company).strip(" ,–—-")
            ticker, ev["company"] = tag.group(2), tag.group(0)
        else:  # "Amcor reports fiscal 2023 results ..."
            for s in plain[:200]:
                m = _HEADLINE.match(s)
                if m and _RESULTS.search(s):
                    company = ev["company"] = m.group(1)
                    break
    else:
        ev["form_type"] = plain[at]
        company = _registrant(plain, start) or _after_file_number(plain, start) or _defined_company(plain)
        ticker = _ticker(lines, plain, start)
        if company:
            ev["company"] = company
    if form in ("10-K", "10-KT", "20-F", "40-F"):
        ds = _dates_after(r"(?:fiscal\s+)?year\s+ended", cover)
        if not ds:  # the cover's date did not survive extraction: the latest year the report covers
            ds = sorted(_dates_after(r"(?:fiscal\s+)?years?\s+ended", " ".join(plain)))[-1:]
            ev["period_end"] = "the latest 'year ended' date in the text (none on the cover)"
        if ds:
            end, fy = ds[0], fiscal_year_of(ds[0])
    elif form == "10-Q":
        ds = _dates_after(r"quarterly\s+period\s+ended", cover) or _dates_after(r"period\s+ended", cover)
        if ds:
            end = ds[0]
            body = " ".join(plain)
            quarter = _quarter_from_fy_end(body, end) or _quarter_from_statements(body)
            fy = fiscal_year_of(end, quarter) if quarter else None
    elif form in ("8-K", "6-K"):
        ds = _dates_after(r"date\s+of\s+report[^:]{0,60}", cover)
        if ds:
            end, fy = ds[0], ds[0].year
    elif form == "earnings release":
        head = " ".join(plain[:200])
        quarter, ev["quarter"] = _release_quarter(head)
        ds = _dates_after(r"(?:quarter|period|weeks|months|year)s?\s*(?:\(\W*[a-z\s]+\W*\))?\s+ended", head)
        if quarter and ds:
            end = max(ds)  # the period reported; earlier dates are comparatives
            fy = fiscal_year_of(end, quarter)
        elif quarter:  # "2023 Second-Quarter", "Fourth Quarter Fiscal 2022": the year named beside the quarter
            around = head[max(0, head.find(ev["quarter"]) - 40): head.find(ev["quarter"]) + 60]
            y = _NAMED_YEAR.search(around)
            fy = int(y.group(1)) if y else None
        if not quarter:
            ev.pop("quarter")
    if end is not None:
        ev.setdefault("period_end", end.isoformat())
    return Cover(form, _tidy(company) if company else None, ticker, fy, quarter,
                 end.isoformat() if end else None, ev)


def _tidy(name: str) -> str:
    # an all-capitals cover-page name reads better in title case; mixed case is kept ("PepsiCo, Inc.")
    name = " ".join(name.split()).strip(" ,")
    if name.isupper():  # letter-spaced small capitals split by the extractor: "MGM R ESORTS" -> "MGM RESORTS"
        name = re.sub(r"\b([B-Z]) (?=[A-Z]{2,}\b)", r"\1", name)
    if name.isupper():  # words without a vowel stay in capitals ("CVS Health", "MGM Resorts", "3M")
        name = " ".join(w if len(w) <= 1 or not re.search(r"[AEIOUY]", w) else w[0] + w[1:].lower()
                        for w in name.split())
    return name
