"""Abstention: does the retrieved text contain what the question asks about?

:func:`missing_from` lists what a question names that none of the retrieved sections mention
(text or breadcrumb), by two rules that need no model:

* **names** - a capitalised word of the question (:func:`ppkit.retrieval.analyze.question_names`) that
  appears in no section: "Tesla" when only AMD's filing was retrieved;
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

from ..retrieval.analyze import Analysis
from ..retrieval.types import Section

__all__ = ["missing_from", "abstention_line", "abstained"]

_ABSTAIN = re.compile(r"^\W*(not found|not computed|no evidence|cannot be answered|the (retrieved |provided )?(text|"
                      r"section|context|filing)s? (do|does) not (contain|mention|report|cover))", re.I)


def missing_from(question: str, sections: list[Section], analysis: Analysis | None = None) -> dict[str, list]:
    """``{"names": [...], "years": [...]}``: what the question names that no section mentions (the names and
    years of ``analysis`` when given, else read from ``question``)."""
    analysis = analysis or Analysis.of(question)
    hay = "\n".join(s.breadcrumb + "\n" + s.text for s in sections).casefold()
    names = [n for n in analysis.names if not re.search(r"(?<![\w])" + re.escape(n.casefold()) + r"(?![\w])", hay)]
    years = [y for y in dict.fromkeys(analysis.years) if not re.search(rf"(?<!\d){y}(?!\d)", hay)]
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
