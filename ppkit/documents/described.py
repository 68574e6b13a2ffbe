"""What the user says a document is: its company, period and form, over what was read from it.

A user who uploads a document (``POST /v1/documents`` with ``company``, ``period``, ``form``), indexes one
(``ppkit index FILE --company --period --form``) or edits one (``PATCH /v1/documents/{name}``,
:func:`ppkit.indexing.describe.describe_documents`) says what it is. :func:`described` sets those fields on the
metadata :mod:`ppkit.documents.metadata` read from the cover and the file name: each field said replaces what was
read, its source becomes ``"user"``, and what was said is kept under ``"user"`` so that indexing the same file
again keeps it. ``period`` is a fiscal year or quarter (``FY2024``, ``2024``, ``FY2024Q2``, ``Q2 2024``);
``form`` one of the forms the cover reader knows (:data:`ppkit.documents.cover.FORMS`). :func:`cover_guess` is
what the metadata says, to prefill those three fields (:func:`guess_from_text`: the period from the text only).

It reads no document and decides nothing about questions.
"""

from __future__ import annotations

import re

from ..core.errors import InvalidInput
from .cover import FORMS, read_cover
from .metadata import metadata_from_name, period_label, short_company_name

__all__ = ["described", "parse_period", "normalise_form", "cover_guess", "guess_from_text", "USER_FIELDS"]


USER_FIELDS = ("company", "period", "form")  # what a user may say about a document (upload, CLI, edit)
# one run of blanks between the year and its quarter, however long (two runs side by side were quadratic in a
# run of blanks not followed by a quarter: tests/reliability/test_round_three_patterns.py)
_PERIOD = re.compile(r"^(?:FY\s*)?((?:19|20)\d\d)(?:\s*(?:[-/]\s*)?Q([1-4])|\s*)$"
                     r"|^Q([1-4])\s*(?:FY\s*)?((?:19|20)\d\d)$", re.I)


def parse_period(text: str) -> tuple[int, int | None]:
    """``"FY2024"`` / ``"2024"`` -> ``(2024, None)``; ``"FY2024Q2"`` / ``"2024 Q2"`` / ``"Q2 2024"`` -> ``(2024, 2)``.

    Raises:
        InvalidInput: anything else, with the forms accepted.
    """
    m = _PERIOD.match(" ".join(str(text).split()))
    if not m:
        raise InvalidInput(f"the period {str(text)[:40]!r} is not a fiscal year or quarter: write it like FY2024, "
                           "2024, FY2024Q2 or Q2 2024")
    if m.group(1):
        return int(m.group(1)), int(m.group(2)) if m.group(2) else None
    return int(m.group(4)), int(m.group(3))


def normalise_form(text: str) -> str:
    """A form as the cover reader names it: ``"10k"`` / ``"Form 10-K"`` -> ``"10-K"``, ``"Earnings Release"`` ->
    ``"earnings release"``; anything else is an InvalidInput listing the forms."""
    key = re.sub(r"[^a-z0-9]", "", re.sub(r"^\s*form\s+", "", str(text), flags=re.I).lower())
    for form in FORMS:
        if re.sub(r"[^a-z0-9]", "", form.lower()) == key:
            return form
    raise InvalidInput(f"the form {str(text)[:40]!r} is not one ppkit knows: use one of {', '.join(FORMS)}")


def described(meta: dict, doc: str, *, company: str | None = None, period: str | None = None,
              form: str | None = None) -> dict:
    """``meta`` (a document's metadata) with what the user says it is: each field given replaces what was read
    from the document (an empty string clears it), its source becomes ``"user"``, and ``meta["user"]`` keeps what
    was said (fields said before and not now stay said). Returns a new dict; ``meta`` is not changed.

    Raises:
        InvalidInput: a period or form that cannot be read, or a company name over 200 characters.

    >>> described({"company": None, "sources": {}}, "report", company="Harbor Lights", period="FY2024")["period"]
    'FY2024'
    """
    said = {k: v for k, v in (("company", company), ("period", period), ("form", form)) if v is not None}
    user = {**(meta.get("user") or {}), **{k: " ".join(str(v).split()) for k, v in said.items()}}
    out = {**meta, "sources": dict(meta.get("sources") or {})}
    if "company" in user:
        name = user["company"] or None
        if name is not None and len(name) > 200:
            raise InvalidInput("the company name is over 200 characters: give the name alone")
        aliases = [doc] + ([name, short_company_name(name)] if name else [])
        out["company"], out["aliases"] = name, [a for a in dict.fromkeys(aliases) if a]
        out["sources"]["company"] = "user"
    if "period" in user:
        year, quarter = parse_period(user["period"]) if user["period"] else (None, None)
        out["fiscal_year"], out["quarter"] = year, quarter
        out["sources"]["fiscal_year"] = out["sources"]["quarter"] = "user"
        if year is None or (meta.get("fiscal_year"), meta.get("quarter")) != (year, quarter):
            out["period_end"] = None  # the cover's date was of another period
    if "form" in user:
        out["form_type"] = normalise_form(user["form"]) if user["form"] else None
        out["sources"]["form_type"] = "user"
    out["period"] = period_label(out.get("fiscal_year"), out.get("quarter"))
    out["user"] = user
    return out


def cover_guess(meta: dict) -> dict:
    """``{"company", "period", "form"}`` as the document's metadata gives them (what the cover page says, else the
    file name): the values to prefill when a user is asked what a document is."""
    return {"company": meta.get("company"), "period": meta.get("period"), "form": meta.get("form_type")}


def guess_from_text(lines: list[str], stem: str) -> dict:
    """``{"company", "period", "form"}`` from a document's first lines (its cover page, as Markdown) and, for the
    company and form they do not give, its file name's stem (``BESTBUY_2024Q2_10Q`` -> ``BESTBUY``, ``10-Q``); None
    where neither says. The period never comes from the name, as in :mod:`ppkit.documents.metadata` (a number in a
    name is not always a year: ``scan_2000``)."""
    cover = read_cover(lines)
    meta = {"company": cover.company, "fiscal_year": cover.fiscal_year,
            "quarter": cover.quarter if cover.fiscal_year is not None else None, "form_type": cover.form_type}
    for key, value in metadata_from_name(stem).items():
        if meta.get(key) is None and key not in ("fiscal_year", "quarter"):
            meta[key] = value
    return cover_guess({**meta, "period": period_label(meta["fiscal_year"], meta.get("quarter"))})
