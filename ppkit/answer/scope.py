"""Scope: does the retrieved text mention what the question names (its company, its years)?

:func:`missing_from` lists what a question names that none of the retrieved sections mention
(text or breadcrumb), by two rules that need no model:

* **names** - a capitalised word of the question (:func:`ppkit.retrieval.analyze.question_names`) that
  appears in no section: "Tesla" when only AMD's filing was retrieved;
* **years** - a year the question asks about (``FY2015``, ``fiscal 2015``, ``2015``, ``FY15``) that
  appears in no section: the filing does not cover it.

What never counts as missing: a name of a retrieved document's company (the name the question used to select
it, :attr:`ppkit.retrieval.analyze.QueryFilters.company_docs`, or the document's own name: the filing may use its
legal name where the question uses a short one; capitals spelling its initials: ``JnJ``), a line item's name
(``Revenue``, ``COGS``), an abbreviation (``D&A``, ``P&L``, ``EPS``, ``FX``, or capitals
whose initials spell words of the sections: ``NIM`` for "net interest margin"), and the generic words that
:func:`ppkit.retrieval.analyze.question_names` leaves out (Figure, Table, Note, Item, instruction verbs). A name
written as the question's subject (``Intel's``) that selected no indexed company is missing even when a section
mentions it (a competitor named in another company's filing).

A line item or measure the catalogue knows by that name or abbreviation (``Revenue``, ``COGS``, ``DSO``:
:func:`ppkit.finance.read.mentions`) is no name either. :func:`not_found_line` words what is missing as the answer
block ("Not found: ..."), and :func:`abstained` reads an answer (offline or Gemini) for such a statement.

This module does not judge whether the passages answer the question (:mod:`ppkit.answer.select` does).
"""

from __future__ import annotations

import re

from ..finance.read import mentions
from ..retrieval.analyze import Analysis, name_words
from ..retrieval.types import Section

__all__ = ["missing_from", "refused", "not_found_line", "abstained"]

_ABSTAIN = re.compile(r"^\W*(not found|not computed|not meaningful|no evidence|cannot be answered|the (retrieved |provided )?(text|"
                      r"section|context|filing)s? (do|does) not (contain|mention|report|cover))", re.I)


# abbreviations that name no company or thing a section must mention (finance ones are the catalogue's)
_ABBREVIATIONS = {"fx", "qoq", "ttm", "ltm", "ytd", "gaap", "sec", "ipo", "esg", "kpi", "kpis", "ai", "ml", "us", "usa",
                  "uk", "eu", "ceo", "cfo", "coo", "cto", "fy", "gpu", "cpu", "bps", "pp"}
_SEP = r"(?:[\s-]+(?:(?:and|of|the|&|on|to|for)[\s-]+)?)"


def _abbreviation(name: str, hay: str) -> bool:
    """Whether ``name`` is an abbreviation: a known one, one with ``&`` or ``/`` (D&A, P&L), or capitals whose
    initials begin consecutive words of ``hay`` (``NIM``: "net interest margin")."""
    low = name.casefold().rstrip(".")
    if low in _ABBREVIATIONS or "&" in name or "/" in name:
        return True
    letters = "".join(c for c in name if c.isascii() and c.isalpha())
    if not (2 <= len(letters) <= 6 and sum(c.isupper() for c in letters) >= max(2, len(letters) - 1)):
        return False
    return re.search(r"\b" + _SEP.join(rf"{c}\w*" for c in letters.casefold()) + r"\b", hay) is not None


def _own_names(sections: list[Section], analysis: Analysis) -> set[str]:
    """The words of the names the retrieved documents go by: as the question named their company, and their ids."""
    docs = {s.doc for s in sections}
    # a document id's words ("BLOCK_2020_10K": block): the underscores separate them
    words = {w.casefold() for d in docs for w in re.findall(r"[^\W_]+(?:[&.-][^\W_]+)*", d)}
    f = analysis.filters
    for name, chosen in (f.company_docs.items() if f is not None else ()):
        if docs & set(chosen):
            words |= name_words(name)
    return words


def _unknown_subjects(question: str, analysis: Analysis) -> list[str]:
    """Names written as the question's subject (``Intel's``) when the analysis selected no indexed company."""
    f = analysis.filters
    if f is None or f.companies:
        return []
    return [n for n in analysis.names if _subject(n, question)]


def _subject(name: str, question: str) -> bool:
    """Whether ``question`` writes ``name`` as a subject, possessive: "Intel's", "Intel’s"."""
    return re.search(r"(?<![\w])" + re.escape(name) + r"['’]s\b", question) is not None


def _initials(name: str, sections: list[Section]) -> bool:
    """Whether the capitals of a mixed-case short name spell the initials of a retrieved document's name
    ("JnJ" for JOHNSON_JOHNSON_2022_10K, "P&G" for PROCTER_GAMBLE_...): the company's own short name."""
    caps = "".join(c for c in name if c.isupper())
    if not 2 <= len(caps) <= 4 or len(name) > 6:
        return False
    for doc in {s.doc for s in sections}:
        words = [w for w in re.findall(r"[^\W\d_]+", doc) if not re.fullmatch(r"(?i)q\d|k|q|earnings|\d+k", w)]
        if "".join(w[0] for w in words).casefold() == caps.casefold():
            return True
    return False


def _line_item(name: str) -> bool:
    """Whether a capitalised word of the question is a line item's or a measure's name or abbreviation in the
    catalogue ("Revenue", "COGS", "DSO"): no name of a company or a thing the sections must mention."""
    return any(m.kind in ("measure", "concept", "operation") for m in mentions(name))


def missing_from(question: str, sections: list[Section], analysis: Analysis | None = None) -> dict[str, list]:
    """``{"names": [...], "years": [...]}``: what the question names that no section mentions (the names and
    years of ``analysis`` when given, else read from ``question``)."""
    analysis = analysis or Analysis.of(question)
    hay = "\n".join(s.breadcrumb + "\n" + s.text for s in sections).casefold()
    own = _own_names(sections, analysis)
    subjects = _unknown_subjects(question, analysis)
    names = [n for n in analysis.names
             if n in subjects or not (n.casefold() in own or _abbreviation(n, hay) or _initials(n, sections)
                                      or _line_item(n)
                                      or re.search(r"(?<![\w])" + re.escape(n.casefold()) + r"(?![\w])", hay))]
    years = [y for y in dict.fromkeys(analysis.years) if not re.search(rf"(?<!\d){y}(?!\d)", hay)]
    return {"names": names, "years": years}


def refused(question: str, sections: list[Section], analysis: Analysis, missing: dict[str, list] | None = None) -> bool:
    """Whether the sections cannot answer ``question`` because of what is missing from them
    (:func:`missing_from`): a year they do not cover, or a name they never mention, unless the analysis chose a
    retrieved document's company by the question's words and no missing name is written as the question's
    subject ("Intel's"): a capitalised instruction word ("Reckon") is no name of another company."""
    missing = missing if missing is not None else missing_from(question, sections, analysis)
    if missing["years"]:
        return True
    if not missing["names"]:
        return False
    f = analysis.filters
    chosen = f is not None and bool({s.doc for s in sections} & set(f.matched))
    subject = any(_subject(n, question) for n in missing["names"])
    return not chosen or subject


def not_found_line(missing: dict[str, list]) -> str:
    """The answer block when something the question names is missing from the sections ("Not found: ...")."""
    parts = []
    if missing["names"]:
        parts.append("never mention " + ", ".join(f"'{n}'" for n in missing["names"]))
    if missing["years"]:
        parts.append("do not cover " + ", ".join(f"FY{y}" for y in missing["years"]))
    return "Not found: the retrieved sections " + " and ".join(parts) + "."


def abstained(answer: str) -> bool:
    """Whether an answer says it cannot answer from its sources (its first lines, after ppkit's own note).

    >>> abstained("Not found: the retrieved sections never mention 'Tesla'.")
    True
    """
    head = [ln for ln in answer.split("\n") if ln.strip() and not ln.lstrip().startswith("[")][:2]
    return any(_ABSTAIN.search(ln) for ln in head)
