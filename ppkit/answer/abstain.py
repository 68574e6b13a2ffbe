"""Abstention: does the retrieved text contain what the question asks about?

:func:`missing_from` lists what a question names that none of the retrieved sections mention
(text or breadcrumb), by two rules that need no model:

* **names** - a capitalised word of the question (not a sentence's first word, not a stop word, not a
  fiscal-year token) that appears in no section: "Tesla" when only AMD's filing was retrieved;
* **years** - a year the question asks about (``FY2015``, ``fiscal 2015``, ``2015``, ``FY15``) that
  appears in no section: the filing does not cover it.

A metric the statements cannot give is the third reason, decided by :mod:`ppkit.answer.metrics`
(its inputs are missing). :func:`abstention_line` words the result as the answer's first line
("Not found: ..."), and :func:`abstained` reads an answer (offline or Gemini) for such a statement.

This module does not judge whether the quoted passages answer the question: a question whose
names and years are all present is not abstained on here.
"""

from __future__ import annotations

import re

from ..core.text import STOPWORDS
from ..retrieval.analyze import question_years
from ..retrieval.types import Section

__all__ = ["missing_from", "abstention_line", "abstained"]

_CAP = re.compile(r"\b([A-Z][\w&.-]*[A-Za-z0-9])(?:['’]s)?\b")
# capitalised words a question uses that are not names
_GENERIC = {"fy", "q1", "q2", "q3", "q4", "usd", "us", "u.s", "gaap", "non-gaap", "ebitda", "eps", "ceo", "cfo",
            "capex", "roa", "roe", "d/e", "ppe", "pp&e", "cogs", "sg&a", "r&d", "ai", "item", "part", "note",
            "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
            "november", "december", "answer", "define", "round", "please", "give", "based", "using", "calculate",
            "what", "how", "which", "who", "when", "where", "why", "does", "did", "is", "was", "are", "were",
            "the", "in", "as", "for", "by", "according", "assume", "chief", "executive", "officer", "officers",
            "balance", "sheet", "income", "statement", "statements", "cash", "flow", "flows", "inc", "inc.",
            "corporation", "company", "co", "corp"}
_ABSTAIN = re.compile(r"^\W*(not found|not computed|no evidence|cannot be answered|the (retrieved |provided )?(text|"
                      r"section|context|filing)s? (do|does) not (contain|mention|report|cover))", re.I)


def _names(question: str) -> list[str]:
    out = []
    for m in _CAP.finditer(question):
        w = m.group(1)
        if re.fullmatch(r"\s*|.*[.?!:;]\s*", question[: m.start()], re.S) or any(ch.isdigit() for ch in w):
            continue  # a sentence's first word ("Define ...", "Answer in ..."); "FY2022", "10-K"
        if w.casefold() in STOPWORDS or w.casefold().rstrip(".") in _GENERIC:
            continue
        out.append(w)
    return list(dict.fromkeys(out))


def missing_from(question: str, sections: list[Section]) -> dict[str, list]:
    """``{"names": [...], "years": [...]}``: what the question names that no section mentions."""
    hay = "\n".join(s.breadcrumb + "\n" + s.text for s in sections).casefold()
    names = [n for n in _names(question) if not re.search(r"(?<![\w])" + re.escape(n.casefold()) + r"(?![\w])", hay)]
    years = [y for y in dict.fromkeys(question_years(question)) if not re.search(rf"(?<!\d){y}(?!\d)", hay)]
    return {"names": names, "years": years}


def abstention_line(missing: dict[str, list]) -> str | None:
    """The answer's first line when something asked for is missing, else None."""
    parts = []
    if missing["names"]:
        parts.append("never mention " + ", ".join(f"'{n}'" for n in missing["names"]))
    if missing["years"]:
        parts.append("do not cover " + ", ".join(f"FY{y}" for y in missing["years"]))
    if not parts:
        return None
    return ("Not found: the retrieved sections " + " and ".join(parts)
            + ", so they do not answer this question. The closest passages follow.")


def abstained(answer: str) -> bool:
    """Whether an answer says it cannot answer from its sources (its first lines, after ppkit's own note).

    >>> abstained("Not found: the retrieved sections never mention 'Tesla'.")
    True
    """
    head = [ln for ln in answer.split("\n") if ln.strip() and not ln.lstrip().startswith("[")][:2]
    return any(_ABSTAIN.search(ln) for ln in head)
