"""Verified citations: is every number and quoted phrase of an answer in the text it cites?

:func:`verify_answer` reads an answer and the sections retrieved for it and returns a
plain dict:

* **citations** - the sources the answer names (``(ID: 0085)``, ``AMD#0085``, a breadcrumb line
  under ``Sources:``, or a retrieved table or note named by its number: "Table 9 (USCS)" cites the
  section titled "TABLE 9: USCS ..."), each resolved to retrieved sections; a citation
  that names no retrieved section is listed under ``unretrieved`` (an error: the answer
  cites something it was not given).
* **claims** - every number (``$1,264 million``, ``(607)``, ``5.36%``, ``2.4x``) and every
  quoted phrase (``"..."`` of three words or more) outside the citation markup, with its
  line in the answer and a status:

  - ``verified``: found in a cited section (in any retrieved section when the answer
    cites none), with the source line(s);
  - ``computed``: the result of a formula the answer shows (``$10,811 - $5,207 + $251 = $5,855``),
    or not in the text but what the arithmetic of the answer's own verified numbers gives at the
    precision written (a + b, a - b, a / b, a / b x 100, (a - b) / b x 100, (a + b) / c and
    (a - b) / c in both forms, the average (a + b) / 2 when the answer speaks of an average), with
    the formula. Units are kept apart: a percent is never added to dollars, nor dollars to a bare
    number ("787"), and percents are not divided;
  - ``inconsistent``: the answer's own arithmetic does not give it: the formula it shows, or the
    change it states between two amounts ("decreased 10% (from $6.887 billion to $6.201
    billion)"), see :mod:`ppkit.answer.arithmetic`; even when the number stands somewhere in the
    sources;
  - ``given``: not in the cited text but stated in the question ("if revenue grew ~24.7%, ..."):
    the asker's premise, repeated;
  - ``uncited``: found only in a retrieved section the answer did not cite;
  - ``not_found``: none of these: an unsupported claim.

Numbers are compared as values, not strings: thousands separators, ``$``, ``%``,
parentheses and minus signs (sign is not compared: "a decline of 607" cites "(607)"),
and scale words (``$23.6 billion`` matches a table's ``23,601`` in millions at the
precision written; a table number without a unit may be in thousands, millions or
billions). Integers up to 10 without a unit are skipped (enumerations, "two segments"), and so
are years (1900-2100 without a unit or separator: a period, not a figure); references
("Table 9", "Note 4"), dates ("December 31") and a formula's "× 100" are not claims, nor are
quoted Title Case names of up to six words ("Cost of Goods Sold": a term, not a quotation).

* **wrong_period**: a found figure whose sentence names years, none of them the year heading
  a table column it was found in (nor found in prose naming one of them).
* A figure found only outside the sections the answer cites (``uncited``) makes the answer not
  ``ok``, whether or not its own paragraph carries a citation (``line_cited`` says which): the
  citations are what the answer offers as its support. An answer citing nothing is checked against
  every retrieved section. A section's breadcrumb is sent with it, so its numbers count.
* A citation named after another retrieved section ("Consolidated Statements of Cash Flows
  (ID: 0080)" when 0080 is Liquidity and the statement is 0093) gets ``label`` and ``names`` (the
  sections the name fits) and makes the answer not ``ok``.
``marked_text`` is the answer with ``[unverified]`` after each unsupported claim and
``[inconsistent]`` after each miscomputed one.

:func:`verify_block` checks the answer block's figures and passage against the lines it cites; whether the block
answers the question is :mod:`ppkit.answer.answered`'s (:func:`ppkit.answer.answered.check_block` runs both); the
conductor keeps both under ``verification["block"]``.

This module checks; it does not rewrite answers or call a model.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import chain, permutations

from ..finance.catalogue import catalogue
from .arithmetic import agrees, clause_span, evaluate, shown_formula, stated_change, tolerance
from .question import read_question

__all__ = ["verify_answer", "verify_block", "numbers_with_values", "number_form", "find_number", "format_report", "summary_line", "column_years",
           "mask_references"]

_SCALES = {"thousand": 1e3, "k": 1e3, "million": 1e6, "mn": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9, "b": 1e9,
           "trillion": 1e12}
_NUM = re.compile(
    r"(?<![\w.])(?P<neg>[-−–](?=\$?\d))?(?P<open>\()?(?P<cur>\$)?\s?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?P<close>\))?(?:\s?(?P<pct>%|percent\b|percentage points?\b|pp\b))?"
    r"(?:\s?(?P<scale>thousand|million|billion|trillion|bn|mn)\b|(?P<sscale>[MBK])\b)?(?P<x>x\b)?(?![\w-]*[A-Za-z])",
    re.I)
_CITE_ID = re.compile(r"\bIDs?:?\s*(\d{4,7}(?:\s*(?:,|/|&|and)\s*(?:IDs?:?\s*)?\d{4,7})*)\b", re.I)
_CITE_DOC = re.compile(r"\b([A-Za-z][\w.&-]*)#(\d{4,7})\b")
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
          r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_REF_NUM = r"\d+(?:\.\d+)*[A-Z]?(?:[-–]\d+[A-Z]?)*(?:\(\w{1,3}\))*"  # "10.1", "1A", "13a-14(a)", "15(d)"
_MARKUP = [
    re.compile(r"\(?\b(?:Source:?\s*)?IDs?:?\s*\d{4,7}(?:\s*(?:,|/|&|and)\s*(?:IDs?:?\s*)?\d{4,7})*\)?", re.I),
    re.compile(r"\b[A-Za-z][\w.&-]*#\d{4,7}\b"),
    re.compile(r"\blines?\s+\d+(?:\s*[-–]\s*\d+)?", re.I),
    re.compile(r"\bp\.\s?\d+(?:\s*[-–]\s*\d+)?(?:,\s*\d+(?:\s*[-–]\s*\d+)?)*"),  # PDF pages: "p.18-19, 22"
    # references, not figures: "Tables 9, 11 and 15", "Note 7", "Item 1A"
    re.compile(r"\b(?:tables?|notes?|items?|parts?|figures?|exhibits?|pages?|sections?|rules?|schedules?)\s+"
               rf"{_REF_NUM}(?:\s*(?:,\s*(?:and\s+)?|and\s+|&\s*){_REF_NUM})*", re.I),
    re.compile(rf"\b{_MONTH}\.?\s+\d{{1,2}}\b", re.I),  # a date: "December 31" (not "declined 18%")
    re.compile(rf"\b\d{{1,2}}\s+{_MONTH}\b", re.I),  # "31 December"
    # SEC file numbers: "(1-7657)", "File No. 001-12345", "Commission file number 0-12345"
    re.compile(r"\bfile\s+(?:no\.?|number)\s*:?\s*\d+(?:-\d+)+", re.I),
    re.compile(r"\(\s*\d{1,3}-\d{3,6}\s*\)"),

    re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+"),  # list markers
    re.compile(r"^\s*#+\s*"),
]
_CONSTANT = re.compile(r"(?:[×x*]|multiplied\s+by|times)\s*100\b(?!\s*%)", re.I)  # a formula's "× 100"
_CITE_NAMED = re.compile(r"\b(tables?|notes?)\s+(\d+[A-Z]?(?:\s*(?:,\s*(?:and\s+)?|and\s+|&\s*)\d+[A-Z]?)*)", re.I)
_QUOTE = re.compile(r"[“\"]([^”\"\n]{12,400})[”\"]")
_PAGES = re.compile(r"^\s*Pages:\s")  # the PDF pages ppkit appends under the Sources (retrieval.types.pages_line)
_SOURCES = re.compile(r"^\W*sources?\W*:?\W*$|^\W*sources?:", re.I)


def numbers_with_values(text: str) -> list[dict]:
    """Numbers in ``text`` with their values: ``{"text", "value", "decimals", "scale", "percent", "span"}``.

    >>> [n["value"] for n in numbers_with_values("Revenue was $23.6 billion, (607) and 5.36%")]
    [23.6, 607.0, 5.36]
    """
    out = []
    for m in _NUM.finditer(text):
        num = m.group("num")
        start = m.start()
        if m.group("open") and not m.group("close"):  # "($1,264 million / ...": the bracket is prose
            start = m.start("cur") if m.group("cur") else m.start("num")
        scale_word = (m.group("scale") or m.group("sscale") or "").lower()
        if m.group("sscale") and not m.group("cur"):
            scale_word = ""  # "5 M" without a $ is too ambiguous to be a scale
        out.append({
            "text": text[start : m.end()].strip(), "value": float(num.replace(",", "")),
            "decimals": len(num.split(".")[1]) if "." in num else 0, "scale": _SCALES.get(scale_word),
            "percent": bool(m.group("pct")), "multiple": bool(m.group("x")), "currency": bool(m.group("cur")),
            "negative": bool(m.group("neg") or (m.group("open") and m.group("close"))),
            "span": (start, m.end()),
        })
    return out


def _norm(s: str) -> str:
    s = s.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    s = re.sub(r"[*_`]|<[^>]+>", "", s)
    return re.sub(r"\s+", " ", s).strip().casefold()


def _numbered_lines(section) -> list[tuple[int, str]]:
    """(source line, text) of what was sent for ``section`` (``[…]`` cut markers skipped): the source
    line of each rendered line (``Section.line_numbers``: a table row is its ``<tr>`` line, not a
    position in the rendered text), else the lines of ``sent_ranges`` in order."""
    raw_lines = section.text.split("\n")
    if section.line_numbers and len(section.line_numbers) == len(raw_lines):
        return [(ln, t) for ln, t in zip(section.line_numbers, raw_lines) if ln and t != "[…]"]
    nums = [ln for a, b in section.sent_ranges for ln in range(a, b + 1)] or \
        list(range(section.line_start, section.line_end + 1))
    out, j = [], 0
    for raw in section.text.split("\n"):
        if raw == "[…]":
            continue
        out.append((nums[j] if j < len(nums) else section.line_end, raw))
        j += 1
    return out


def _matches(claim: dict, doc_num: dict) -> bool:
    tol = tolerance(claim["decimals"])
    if claim["scale"] is None or (doc_num["scale"] is not None and doc_num["scale"] == claim["scale"]):
        if abs(doc_num["value"] - claim["value"]) <= tol:
            return True
    if claim["scale"] is None:
        return False
    scales = [doc_num["scale"]] if doc_num["scale"] is not None else [1.0, 1e3, 1e6, 1e9]
    return any(abs(doc_num["value"] * s / claim["scale"] - claim["value"]) <= tol for s in scales)


_DAYS_AFTER = re.compile(r"^\s*(?:calendar\s+)?days?\b", re.I)


def number_form(n: dict, after: str = "") -> str:
    """The form of a number of :func:`numbers_with_values` as written: ``percent``, ``multiple`` (``2.4x``),
    ``days`` (``after``, the text that follows it, says days), ``money`` (``$``, a scale word) or ``number``."""
    if n["percent"]:
        return "percent"
    if n["multiple"]:
        return "multiple"
    if after and _DAYS_AFTER.match(after):
        return "days"
    return "money" if n["currency"] or n["scale"] else "number"


def _fits(n: dict, kind: str) -> bool:
    """Can a result of ``kind`` be written as ``n``? A percent is a percent (a share × 100, a change, or a
    difference of percents), a money amount is a sum or difference of amounts, a bare number anything."""
    if n["percent"]:
        return kind == "percent"
    if n["currency"] or n["scale"]:
        return kind == "money"
    return not n["multiple"] or kind == "multiple"


_AMOUNTS = ("money", "number")


def _derivations(vals: list[tuple[str, float, str]], average: bool = False):
    """(formula, value, kind) of the arithmetic the checker tries on the answer's verified numbers
    (``vals``: text, value, :func:`_kind`). Units are respected: only like numbers are added or
    subtracted (not a percent to dollars, nor dollars to a bare "787"), only amounts are divided (a
    ratio of two percents is not a computation an answer means); an average only when the answer
    speaks of one."""
    for (ta, a, ka), (tb, b, kb) in permutations(vals, 2):
        if ka == kb:
            yield f"{ta} + {tb}", a + b, ka
            yield f"{ta} - {tb}", a - b, ka
            if average:
                yield f"({ta} + {tb}) / 2", (a + b) / 2, ka
        if ka in _AMOUNTS and kb in _AMOUNTS and b:
            yield f"{ta} / {tb}", a / b, "multiple"
            yield f"{ta} / {tb} × 100", a / b * 100, "percent"
            yield f"({ta} - {tb}) / {tb} × 100", (a - b) / b * 100, "percent"
    amounts = [v for v in vals if v[2] in _AMOUNTS]
    if len(amounts) <= 12:  # three-operand forms only for short answers: fewer chance matches
        for (ta, a, ka), (tb, b, kb), (tc, c, _) in permutations(amounts, 3):
            if c and ka == kb:
                for op, v in (("+", a + b), ("-", a - b)):
                    yield f"({ta} {op} {tb}) / {tc}", v / c, "multiple"
                    yield f"({ta} {op} {tb}) / {tc} × 100", v / c * 100, "percent"


def _find_quote(phrase: str, sections) -> list[dict]:
    want = _norm(phrase)
    hits = []
    for s in sections:
        lines = _numbered_lines(s)
        joined, starts = "", []
        for ln, t in lines:
            starts.append((len(joined), ln))
            joined += _norm(t) + " "
        pos = joined.find(want)
        if pos >= 0:
            line = max((ln for off, ln in starts if off <= pos), default=s.line_start)
            hits.append({"section_id": s.section_id, "line": line})
    return hits


def _paragraph(lines: list[str], line: int) -> list[str]:
    """The answer's lines from the blank line before ``line`` (1-based) to the blank line after it."""
    a = b = line - 1
    while a > 0 and lines[a - 1].strip():
        a -= 1
    while b + 1 < len(lines) and lines[b + 1].strip():
        b += 1
    return lines[a:b + 1]


def _find_quote_parts(phrase: str, sections) -> list[dict]:
    """A quote with elisions (``...``, ``…``) is found when each part is (in the same section); trailing
    punctuation inside the quote marks is not compared."""
    parts = [p.strip(" .,;:") for p in re.split(r"\.{3}|…", phrase)]
    parts = [p for p in parts if len(p.split()) >= 2] or [phrase.strip(" .,;:")]
    hits = None
    for p in parts:
        found = _find_quote(p, sections)
        if hits is None:
            hits = found
        else:
            ok = {h["section_id"] for h in found}
            hits = [h for h in hits if h["section_id"] in ok]
        if not hits:
            return []
    return hits or []


def _citations(text: str, sections) -> tuple[list[dict], list[str]]:
    cites: list[dict] = []
    seen = set()
    for m in _CITE_DOC.finditer(text):
        key = f"{m.group(1)}#{m.group(2)}"
        if key not in seen:
            seen.add(key)
            ids = [s.section_id for s in sections if s.section_id.casefold() == key.casefold()]
            cites.append({"cited": key, "section_ids": ids, "retrieved": bool(ids)})
    for m in _CITE_ID.finditer(text):
        for nid in re.findall(r"\d{4,7}", m.group(1)):  # "ID: 0062, 0059", "ID 0080/0081"
            if nid not in seen:
                seen.add(nid)
                ids = [s.section_id for s in sections if s.node_id == nid]
                cites.append({"cited": f"ID {nid}", "section_ids": ids, "retrieved": bool(ids)})
    # breadcrumb lines under "Sources:" without an id
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines) if _SOURCES.match(ln.strip())), None)
    if start is not None:
        for ln in lines[start + 1 :]:
            item = _norm(re.sub(r"^\s*[-*+]\s*", "", ln))
            if not item or _CITE_ID.search(ln) or _CITE_DOC.search(ln) or _PAGES.match(ln):
                continue
            ids = [s.section_id for s in sections if _norm(s.breadcrumb) == item or _norm(s.breadcrumb).endswith(item)]
            cites.append({"cited": ln.strip(), "section_ids": ids, "retrieved": bool(ids)})
    # a table or note named by its number on a line citing no id ("in Table 9 (USCS)", "Tables 9, 11 and 15"): a
    # citation of the retrieved section titled so (on a line with ids, the name is the id's label, checked below);
    # a number naming no retrieved section is left alone (it may be the filing's, not sent)
    for line in text.split("\n"):
        if _CITE_ID.search(line) or _CITE_DOC.search(line):
            continue
        for key, ids in _named_sections(line, sections):
            if key not in seen:
                seen.add(key)
                cites.append({"cited": key, "section_ids": ids, "retrieved": True, "by_name": True})
    unretrieved = [c["cited"] for c in cites if not c["retrieved"]]
    _check_labels(text, sections, cites)
    return cites, unretrieved


def _named_sections(text: str, sections) -> list[tuple[str, list[str]]]:
    """("Table 9", ids of the retrieved sections titled "Table 9 ...") for each table or note ``text`` names."""
    out = []
    for m in _CITE_NAMED.finditer(text):
        kind = m.group(1).rstrip("sS").casefold()
        for num in re.findall(r"\d+[A-Z]?", m.group(2)):
            title = re.compile(rf"{kind}\s+{num}(?![\w.])", re.I)
            ids = [s.section_id for s in sections if title.match(s.breadcrumb.rsplit(" > ", 1)[-1].strip())]
            if ids:
                out.append((f"{kind.title()} {num}", ids))
    return out


_LABEL_STOP = {"the", "and", "for", "from", "with", "according", "based", "source", "sources", "reference", "see",
               "section", "sections", "table", "tables", "note", "notes", "item", "part", "page", "per", "data",
               "provided", "text", "context", "under", "also", "this", "that", "which", "its", "our"}
_LABEL_SEPS = ("**", "*", "_", "(", ")", "[", '"', "“", "”", ". ", "; ", ": ", ", ", " - ", " – ")


def _label_words(s: str) -> set[str]:
    return {w.rstrip("s") for w in re.findall(r"[a-z]{3,}", _norm(s)) if w not in _LABEL_STOP}


def _label(line: str, start: int, end: int) -> str:
    """The name an answer gives a cited id on its line: the words just before ``(ID: 0085)`` back to the
    emphasis, bracket or punctuation that opens them ("**Consolidated Statements of Operations (ID: 0085)**"),
    else a bracket right after it ("ID: 0068 (Free Cash Flow table)"); "" when it is longer than a title."""
    head = re.sub(r"[\s*_(\[,;:.]*(?:(?:source|reference)s?\s*:?\s*)?[\s*_(\[]*$", "", line[:start], flags=re.I)
    title = ""
    quoted = re.search(r"[“\"]([^“”\"]{3,80})[”\"]$", head)
    if quoted:  # a quoted name ("Consolidated Statements of Operations"), not a quotation
        title = quoted.group(1) if _is_name(quoted.group(1)) else ""
    elif not head.endswith((")", "”", "'")):  # after another citation's own name: none
        cut = max((head.rfind(sep) + len(sep) for sep in _LABEL_SEPS if sep in head), default=0)
        title = head[cut:].strip()
    if len(_label_words(title)) < 2:
        m = re.match(r"[\s*_]*\(([^()\n]{3,80})\)", line[end:])
        title = m.group(1) if m else ""
    return title if len(title.split()) <= 12 else ""


def _check_labels(text: str, sections, cites: list[dict]) -> None:
    """A citation whose name is another retrieved section's ("Consolidated Statements of Cash Flows
    (ID: 0080)" when 0080 is Liquidity and the cash-flow statement is 0093) gets ``"label"`` and
    ``"names"``: the sections the name fits. A name fits a section when all its words (two or more) are
    in the section's breadcrumb, or the name is in its text (a table caption); it is flagged only when
    it fits none of the ids it is written with and fits another retrieved section."""
    crumbs = {s.section_id: _label_words(s.breadcrumb) for s in sections}
    by_cite = {c["cited"]: c for c in cites}
    for line in text.split("\n"):
        prev = 0
        for m in _CITE_ID.finditer(line):
            group = [by_cite.get(f"ID {nid}") for nid in re.findall(r"\d{4,7}", m.group(1))]
            ids = {i for c in group if c for i in c["section_ids"]}
            title = _label(line, m.start(), m.end())
            # the table or note named just before the id, in the same sentence ("Table 3 (ID: 0066)",
            # "(Source: Table 4, ID: 0069)", "Table 2: Total Revenues ... Summary (ID: 0063)")
            ref = [r for r in _CITE_NAMED.finditer(line, prev, m.start())
                   if m.start() - r.end() <= 80 and ". " not in line[r.end():m.start()]][-1:]
            prev = m.end()
            named = {i for r in ref for _, found in _named_sections(r.group(0), sections) for i in found}
            if ids and named and not ids & named:  # "Table 3 (ID: 0066)" when 0066 is not Table 3
                for c in group:
                    if c and "names" not in c:
                        c["label"], c["names"] = ref[0].group(0), sorted(named)
                continue
            words = _label_words(title)
            if not ids or len(words) < 2 or named:
                continue

            def fits(s):
                return words <= crumbs[s.section_id] or _norm(title) in _norm(s.text)
            if any(fits(s) for s in sections if s.section_id in ids):
                continue
            names = [s.section_id for s in sections if s.section_id not in ids and fits(s)]
            if names:
                for c in group:
                    if c and "names" not in c:
                        c["label"], c["names"] = title, names


def verify_answer(text: str, sections, *, question: str = "", min_value: float = 10.0) -> dict:
    """Check an answer's numbers and quotes against the sections it cites.

    Args:
        text: the answer.
        sections: the retrieved :class:`ppkit.retrieval.types.Section` objects.
        question: the question answered; a figure it states ("if revenue grew ~24.7%, ...") is the
            asker's premise: repeated in the answer it is ``given``, not a claim the sources must hold.
        min_value: integers without a unit up to this value are skipped.

    Returns:
        ``{"ok", "counts", "claims", "citations", "unretrieved", "checked_against", "marked_text"}``
        (see the module docstring).

    >>> verify_answer("Operating income was $1,264 million (ID: 0085).", sections)["ok"]  # doctest: +SKIP
    True
    """
    cites, unretrieved = _citations(text, sections)
    # a table named by number widens what the answer cites; alone it is too weak a citation to narrow the
    # check from every retrieved section to it
    explicit = any(not c.get("by_name") for c in cites)
    cited_ids = {i for c in cites if explicit or not c.get("by_name") for i in c["section_ids"]}
    cited = [s for s in sections if s.section_id in cited_ids] or list(sections)
    others = [s for s in sections if s not in cited]
    lines = text.split("\n")
    masked = [_mask(ln) for ln in lines]
    claims = _claims(lines, masked, min_value)
    _look_up(claims, cited, others)
    _check_given(claims, question)
    for c in claims:  # does the claim's paragraph cite a source?
        c["line_cited"] = any(_CITE_ID.search(ln) or _CITE_DOC.search(ln) for ln in _paragraph(lines, c["answer_line"]))
    _check_periods(claims, lines, cited + others)
    _check_shown(claims, [_mask(ln, constants=False) for ln in lines])  # "(a / b) × 100 = 5.36" keeps its 100
    _derive(claims, average=bool(re.search(r"\b(?:average|avg|mean)\b", text, re.I)))
    _check_changes(claims, masked)
    counts = {k: sum(1 for c in claims if c["status"] == k)
              for k in ("verified", "computed", "given", "uncited", "wrong_period", "not_found", "inconsistent")}
    mislabeled = [c for c in cites if c.get("names")]
    marked = _marked(lines, claims)
    for c in claims:
        c.pop("_n", None)
        c["span"] = list(c["span"])
    return {
        # a figure found only in sections the answer does not cite is not supported by its citations
        "ok": not (counts["not_found"] or counts["wrong_period"] or counts["inconsistent"] or counts["uncited"]
                   or unretrieved or mislabeled),
        "counts": {"claims": len(claims), **counts, "citations": len(cites), "unretrieved": len(unretrieved),
                   "mislabeled": len(mislabeled)},
        "claims": claims, "citations": cites, "unretrieved": unretrieved,
        "checked_against": [s.section_id for s in cited],
        "marked_text": "\n".join(marked),
    }


def mask_references(text: str) -> str:
    """``text`` with what is never a value blanked out, offsets kept: citation markup, line and page
    numbers, references ("Note 7", "Item 1A", "Exhibit 10.1", "Section 13"), dates ("December 31",
    "31 December") and SEC file numbers ("(1-7657)", "File No. 001-12345").

    >>> mask_references("Exhibit 10.1 (1-7657) shows $5 million").strip()
    'shows $5 million'
    """
    return "\n".join(_mask(ln) for ln in text.split("\n"))


def _mask(line: str, constants: bool = True) -> str:
    """``line`` with citation markup, references, dates and (``constants``) a formula's "× 100" blanked
    out, offsets kept."""
    for rx in _MARKUP + ([_CONSTANT] if constants else []):
        line = rx.sub(lambda m: " " * len(m.group(0)), line)
    return line


def _claims(lines: list[str], masked_lines: list[str], min_value: float) -> list[dict]:
    """The numbers (with their values in ``_n``) and quotes the answer states before its Sources."""
    src_start = next((i for i, ln in enumerate(lines) if _SOURCES.match(ln.strip())), len(lines))
    claims: list[dict] = []
    for i, line in enumerate(lines[:src_start], start=1):
        if line.lstrip().startswith("[Gemini could not answer"):  # ppkit's own note
            continue
        masked = masked_lines[i - 1]
        for n in numbers_with_values(masked):
            plain = n["decimals"] == 0 and not (n["percent"] or n["currency"] or n["scale"] or n["multiple"])
            # small counts ("two segments": 2) and years ("in 2022": a period, checked by _check_periods)
            trivial = plain and (n["value"] <= min_value or (1900 <= n["value"] <= 2100 and "," not in n["text"]))
            if not trivial:
                claims.append({"kind": "number", "text": n["text"], "answer_line": i, "span": n["span"], "_n": n})
        for m in _QUOTE.finditer(masked):
            words = m.group(1).split()
            if _is_name(m.group(1)):
                continue  # a Title Case name ("Cost of Goods Sold"): a term the answer uses, not a quote
            if len(words) >= 3:
                # the quote as written (a date inside it is masked as a value, not as words of the source)
                claims.append({"kind": "quote", "text": line[m.start(1):m.end(1)], "answer_line": i, "span": m.span()})
    return claims


def _is_name(s: str) -> bool:
    """Up to six words in Title Case ("Cost of Goods Sold"): a name, not a sentence."""
    words = s.split()
    return len(words) <= 6 and all(w[:1].isupper() or w.lower() in _SMALL for w in words)


def _section_numbers(sections) -> dict:
    """section id -> (line, number) of every number in it; the breadcrumb (sent with the text) at its first line.
    The numbers are shared between calls (:func:`_line_numbers`): read them, never change them."""
    return {s.section_id: [(s.line_start, n) for n in _line_numbers(s.breadcrumb)]
            + [(ln, n) for ln, t in _numbered_lines(s) for n in _line_numbers(t)] for s in sections}


@lru_cache(maxsize=16_384)
def _line_numbers(text: str) -> tuple[dict, ...]:
    """:func:`numbers_with_values` of a section's line, remembered: the same sections are checked for many answers."""
    return tuple(numbers_with_values(text))


def find_number(number: dict, sections) -> list[dict]:
    """Every place (``{"section_id", "line"}``) in ``sections`` holding ``number`` (from
    :func:`numbers_with_values`), compared as the verifier compares (value at the precision written, scale)."""
    doc_nums = _section_numbers(sections)
    return [{"section_id": s.section_id, "line": ln} for s in sections
            for ln, d in doc_nums[s.section_id] if _matches(number, d)]


def _look_up(claims: list[dict], cited: list, others: list) -> None:
    """Set each claim's ``status`` and ``where``: found in a cited section, only in an uncited one, or not."""
    doc_nums = _section_numbers(cited + others)
    for c in claims:
        if c["kind"] == "quote":
            where = _find_quote_parts(c["text"], cited)
            c["status"] = "verified" if where else None
            if not where:
                where = _find_quote_parts(c["text"], others)
                c["status"] = "uncited" if where else "not_found"
            c["where"] = where
            continue
        for pool, status in ((cited, "verified"), (others, "uncited")):
            where = [{"section_id": s.section_id, "line": ln} for s in pool
                     for ln, d in doc_nums[s.section_id] if _matches(c["_n"], d)]
            if where:
                c["status"], c["where"] = status, where[:5]
                break
        else:
            c["status"], c["where"] = "not_found", []


def _check_given(claims: list[dict], question: str) -> None:
    """A number not found in the cited sections that the question itself states is ``given``."""
    asked = numbers_with_values(_mask(question))
    for c in claims:
        if c["kind"] == "number" and c["status"] in ("not_found", "uncited") and any(
                _matches(c["_n"], q) and c["_n"]["percent"] == q["percent"] for q in asked):
            c["status"], c["where"] = "given", []


_YEAR = re.compile(r"(?<!\d)(?:FY\s?)?(20\d\d)(?!\d)", re.I)
_SMALL = {"of", "and", "the", "for", "in", "on", "to", "a", "an", "&", "or", "from"}


def _column_year(rows: list[str], i: int, claim: dict) -> str | None:
    """The year heading the table column where ``claim``'s number sits in row ``i`` (None: not a table
    cell, or no year above it)."""
    cells = rows[i].strip().strip("|").split("|")
    j = next((k for k, cell in enumerate(cells) if any(_matches(claim, d) for d in numbers_with_values(cell))), None)
    if j is None:
        return None
    for r in range(i - 1, -1, -1):
        if not rows[r].lstrip().startswith("|"):
            return None
        head = rows[r].strip().strip("|").split("|")
        if len(head) == len(cells):
            y = _YEAR.findall(head[j])
            if len(y) == 1:
                return y[0]
    return None


def column_years(number: dict, where: list[dict], sections, by_id: dict | None = None) -> set[str]:
    """The years heading the table columns where ``number`` (from :func:`numbers_with_values`) was found
    (``where``: ``[{"section_id", "line"}]``, a claim's places); prose lines give none."""
    by_id = by_id or {s.section_id: _numbered_lines(s) for s in sections}
    out = set()
    for w in where:
        rows = [t for _, t in by_id[w["section_id"]]]
        for k, (ln, t) in enumerate(by_id[w["section_id"]]):
            if ln == w["line"] and t.lstrip().startswith("|"):
                y = _column_year(rows, k, number)
                if y:
                    out.add(y)
    return out


def _check_periods(claims: list[dict], lines: list[str], sections) -> None:
    """A found figure whose sentence names years, none of them the year of a table column it was
    found in, nor found in prose that names one of them, is ``wrong_period``: "revenue of $16,434 million in 2022" when
    16,434 is the 2021 column."""
    by_id = {s.section_id: _numbered_lines(s) for s in sections}
    for c in claims:
        if c["kind"] != "number" or c["status"] not in ("verified", "uncited"):
            continue
        line = lines[c["answer_line"] - 1]
        said = set(_YEAR.findall(line[slice(*clause_span(line, c["span"]))]))
        if not said:
            continue
        known = column_years(c["_n"], c["where"], sections, by_id)
        # prose giving the figure with the year said
        agrees = any(ln == w["line"] and not t.lstrip().startswith("|") and set(_YEAR.findall(t)) & said
                     for w in c["where"] for ln, t in by_id[w["section_id"]])
        if known and not known & said and not agrees:
            c["status"], c["column_years"] = "wrong_period", sorted(known)


def _check_shown(claims: list[dict], masked: list[str]) -> None:
    """A number the answer equates to a formula it shows ("$10,811 - $5,207 + $251 = $5,855") is
    ``computed`` when the formula gives it, ``inconsistent`` when it does not (even if the number
    happens to be in a source: the answer's arithmetic is wrong)."""
    for c in claims:
        if c["kind"] != "number":
            continue
        shown = shown_formula(masked[c["answer_line"] - 1], c["span"])
        if shown is None:
            continue
        if not agrees(c["_n"], shown[1]):
            c["status"], c["formula"] = "inconsistent", shown[0]
        elif c["status"] in ("not_found", "uncited"):  # the answer shows how it got the number
            c["status"], c["formula"] = "computed", shown[0]


def _check_changes(claims: list[dict], masked: list[str]) -> None:
    """A percent stated as the change between two amounts of its sentence ("decreased 10% (from $6.887
    billion to $6.201 billion)") that the amounts do not give is ``inconsistent``."""
    for c in claims:
        if c["kind"] != "number" or c["status"] == "inconsistent":
            continue
        line = [d["_n"] for d in claims if d["kind"] == "number" and d["answer_line"] == c["answer_line"]]
        change = stated_change(masked[c["answer_line"] - 1], c["_n"], line)
        if change is None:
            continue
        t = tolerance(c["_n"]["decimals"])
        if not any(lo - t <= c["_n"]["value"] <= hi + t for lo, hi in change[1]):
            c["status"], c["formula"] = "inconsistent", change[0]


def _derive(claims: list[dict], average: bool = False, rounds: int = 3) -> None:
    """Numbers not found that are arithmetic of the answer's own verified numbers become ``computed``.

    A result can feed the next round (22.20% and 5.36% computed first, then their difference of
    16.84 points); a result written twice ("= 39,999.5; 1,320 / 39,999.5") keeps the formula it was computed by.
    """
    for _ in range(rounds):
        formulas = {c["text"]: c["formula"] for c in claims if c.get("formula") and c["status"] == "computed"}
        operands = list(dict.fromkeys((c["text"], c["_n"]["value"], number_form(c["_n"])) for c in claims
                                      if c["kind"] == "number" and c["status"] in ("verified", "computed", "given")))
        changed = False
        for c in claims:
            if c["kind"] != "number" or c["status"] != "not_found" or len(operands) < 2:
                continue
            found = _formula_for(c["_n"], operands, average)
            if found:
                c["status"], c["formula"], changed = "computed", formulas.get(found, found), True
        if not changed:
            break


def _formula_for(n: dict, operands: list[tuple[str, float, str]], average: bool = False) -> str | None:
    """A formula over ``operands`` whose value is ``n``'s, within its rounding.

    A signed match is preferred ("22.20% - 5.36%" over "5.36% - 22.20%"); the claim carries no
    sign ("declined 10%"), so a negative result that matches in size is the fallback.
    """
    tol = tolerance(n["decimals"])
    found = None
    # a result the answer restates first (``operands`` holds no not-found claim, so the same text is another
    # place of the answer), then arithmetic over the other numbers
    others = [o for o in operands if o[0] != n["text"]]
    for formula, v, kind in chain(operands, _derivations(others, average)):
        if not _fits(n, kind):
            continue
        if abs(v - n["value"]) <= tol:
            return formula
        if found is None and abs(-v - n["value"]) <= tol:
            found = f"-({formula})"
    return found


def _marked(lines: list[str], claims: list[dict]) -> list[str]:
    """The answer's lines with ``[unverified]`` after each number or quote that was not found, ``[inconsistent]``
    after each number its own formula or stated change does not give."""
    marked = list(lines)
    tags = {"not_found": " [unverified]", "inconsistent": " [inconsistent]"}
    for c in sorted(claims, key=lambda c: (c["answer_line"], -c["span"][1])):
        if c["status"] in tags:
            ln = marked[c["answer_line"] - 1]
            marked[c["answer_line"] - 1] = ln[: c["span"][1]] + tags[c["status"]] + ln[c["span"][1]:]
    return marked


def format_report(report: dict) -> str:
    """A few readable lines for a verification report."""
    c = report["counts"]
    out = [f"verification: {'OK' if report['ok'] else 'PROBLEMS'} - {c['claims']} claims: {c['verified']} verified, "
           f"{c['computed']} computed, "
           + (f"{c['given']} given in the question, " if c.get("given") else "")
           + f"{c['uncited']} only in uncited sections, {c['not_found']} not found; "
           f"{c['citations']} citations, {c['unretrieved']} not among the retrieved sections"
           + (f"; {c['inconsistent']} inconsistent with the answer's own arithmetic" if c.get("inconsistent") else "")
           + (f"; {c['mislabeled']} citations named after another section" if c.get("mislabeled") else "")]
    for cl in report["claims"]:
        where = ", ".join(f"{w['section_id']} line {w['line']}" for w in cl.get("where", [])[:2])
        extra = f" = {cl['formula']}" if cl.get("formula") else (f" at {where}" if where else "")
        out.append(f"  answer line {cl['answer_line']}: {cl['text']!r} {cl['status']}{extra}")
    for u in report["unretrieved"]:
        out.append(f"  cited but not retrieved: {u}")
    for ci in report["citations"]:
        if ci.get("names"):
            out.append(f"  {ci['cited']} is named {ci['label']!r}, which is {', '.join(ci['names'])}")
    return "\n".join(out)


def summary_line(report: dict) -> str:
    """The verification in one short line: the verdict, then only the counts that are not zero.

    >>> summary_line({"ok": True, "counts": {"claims": 8, "verified": 8, "computed": 0, "uncited": 0,
    ...                                      "not_found": 0, "citations": 2, "unretrieved": 0}})
    'verification: OK - 8 claims: 8 verified; 2 citations'
    """
    c = report["counts"]
    names = (("verified", "verified"), ("computed", "computed"), ("given", "given in the question"),
             ("uncited", "only in uncited sections"), ("wrong_period", "of another period"), ("not_found", "not found"))
    found = ", ".join(f"{c[k]} {label}" for k, label in names if c.get(k))
    cites = (f"{c['citations']} citation{'s' if c['citations'] != 1 else ''}"
             + "".join(f", {c[k]} {label}" for k, label in (("unretrieved", "not among the retrieved sections"),
                                                              ("inconsistent", "inconsistent with the answer's "
                                                                               "own arithmetic"),
                                                              ("mislabeled", "named after another section"))
                       if c.get(k)))
    return (f"verification: {'OK' if report['ok'] else 'PROBLEMS'} - {c['claims']} claims"
            + (f": {found}" if found else "") + f"; {cites}")


# -- the answer block: its figures and sentences against its cited lines, and whether it answers

def asked_for(question: str, asked=None) -> dict:
    """What a question asks for, as the block check reads it: ``{"asks": "yes_no" | "list" | "percent" |
    "ratio" | "amount" | "passage", "years": [...]}`` (the fiscal years it names, as strings), from the one
    reader :func:`ppkit.answer.question.read_question`.

    >>> asked_for("What is AMD's quick ratio for FY2022?")
    {'asks': 'ratio', 'years': ['2022']}
    >>> asked_for("For Boeing, did it pay a dividend in 2022?")["asks"]
    'yes_no'
    """
    a = asked if asked is not None else read_question(mask_references(question))
    asks = {"yes_no": "yes_no", "percent": "percent", "ratio": "ratio", "days": "ratio", "amount": "amount",
            "per_share": "amount", "count": "amount"}.get(a.type, "passage")
    return {"asks": asks, "years": [str(y) for y in a.years]}


def _cited_sections(block, sections) -> list:
    """Each cited section cut to the lines its citations name (its breadcrumb kept)."""
    from dataclasses import replace

    out = []
    for s in sections:
        spans = [(c.line_start, c.line_end) for c in block.citations if (c.doc, c.node) == (s.doc, s.node_id)]
        if not spans:
            continue
        kept = [(ln, t) for ln, t in _numbered_lines(s) if any(a <= ln <= b for a, b in spans)]
        out.append(replace(s, text="\n".join(t for _, t in kept), line_numbers=tuple(ln for ln, _ in kept),
                           sent_ranges=tuple(spans)))
    return out


def _sum_of_cited(claim: dict, cited) -> str | None:
    """A formula adding two to four distinct figures of the cited lines that gives ``claim``'s value
    (a block states a total whose parts are its cited rows: "9,981" = cash + investments + receivables)."""
    from itertools import combinations

    nums = list(dict.fromkeys((d["text"], d["value"]) for s in cited for _, t in _numbered_lines(s)
                              for d in numbers_with_values(t) if not (d["percent"] or d["decimals"] == 0
                                                                      and 1900 <= d["value"] <= 2100)))[:16]
    tol = tolerance(claim["decimals"])
    for r in (2, 3, 4):
        for combo in combinations(nums, r):
            if abs(sum(v for _, v in combo) - claim["value"]) <= tol:
                return " + ".join(t for t, _ in combo)
    return None


_FIGURE_WORDS = re.compile(r"\b(?:thousand|million|billion|trillion|days?|percent|percentage points?|a share|per "
                           r"share)\b", re.I)


def _quoted_parts(block) -> list[str]:
    """What of a block is quoted from its lines (any one of them found will do): a ``figure`` block is a table
    row written out, its figure first ("$25,867 million: Revenues, Commercial Airplanes, 2022 (...)"; earlier
    "Revenues, Commercial Airplanes: $25,867 million ..."), so only its row's label is the source's words, and
    the group label before a comma may stand on a line not cited: each piece of the label will do; a figure of a
    sentence quotes the sentence ("$4.2 billion: “...”"). Its figures are claims, checked one by one. A passage
    is quoted whole."""
    text = block.text.rstrip("…")
    if block.kind != "figure" or ": " not in text:
        return [text]
    head, rest = text.split(": ", 1)
    if re.search(r"[A-Za-z]{3}", _FIGURE_WORDS.sub("", head)):
        return [head.rsplit(", ", 1)[-1]]  # the label first
    rest = rest.strip()
    if rest[:1] in "“\"":
        return [rest.strip("“”\"…")]
    label = re.split(r"\s\(", rest, maxsplit=1)[0]
    pieces = [p for p in label.split(", ") if re.search(r"[A-Za-z]{2}", _YEAR.sub("", p)) and len(p) >= 5]
    return pieces or [label]


_SHOWN = re.compile(r"[(\-−–$\d][\d,.$()\s+\-−–×*/÷]*\d\)?")  # a run of figures and operators: a shown formula?


def _shown_formulas(text: str) -> list[tuple[str, tuple[float, float]]]:
    """(formula, its interval) for each formula the text shows without its result ("(3,512 - 1,222, ...)")."""
    out = []
    for m in _SHOWN.finditer(mask_references(text)):
        run = m.group(0).strip(" ,")
        # the formula may start after a figure ("1.57 ((4,835 + ...) / 6,369"): each token start, longest first;
        # a bracket at either end may be the prose's ("(3,512 - 1,222, $ millions)")
        starts = [0] + [i for i in range(1, len(run)) if run[i - 1] == " " and run[i] != " "]
        found = None
        for a in starts:
            part = run[a:].strip()
            for cand in (part, part[:-1] if part.endswith(")") else part):
                for c in (cand, cand[1:] if cand.startswith("(") else cand):
                    if found is None and (iv := evaluate(c)) is not None:
                        found = (c, iv)
        if found:
            out.append(found)
    return out


def _formula_constants(text: str, claims: list[dict]) -> None:
    """A whole number of a computed block that its formula multiplies by ("365 × (...)") and that is a constant of
    a catalogue formula (the days of a year) is ``computed``: the formula's, not the sources'."""
    def nums(node):
        return [node[1]] if node[0] == "num" else [v for x in node[1:] if isinstance(x, tuple) for v in nums(x)]

    constants = {v for m in catalogue().measures.values() for v in nums(m.formula)}
    for c in claims:
        if c["kind"] == "number" and c["status"] == "not_found" and re.fullmatch(r"\d+", c["text"]) and \
                float(c["text"]) in constants and re.search(rf"(?<![\d,.]){c['text']}\s*[×x*]", text):
            c["status"], c["formula"] = "computed", "a constant of the formula"


def _signed(n: dict) -> float:
    return -n["value"] if n["negative"] else n["value"]


def _block_arithmetic(text: str, claims: list[dict], cited) -> None:
    """A block figure not in its cited lines is ``computed`` when the block shows its formula ("$2,290 million
    (3,512 - 1,222, $ millions)"), or it is the sum or difference of two figures of the cited lines or of
    the block's own checked figures (a second year's free cash flow, the change between two years), or, for
    a percent, their ratio, change or difference of percents. Signs count ("(450)" is -450); the written
    precision is the tolerance; years are never operands. Changes ``claims`` in place."""
    shown = _shown_formulas(text)
    pool = [n for s in cited for _, t in _numbered_lines(s) for n in numbers_with_values(mask_references(t))
            if not (n["decimals"] == 0 and not n["percent"] and 1900 <= n["value"] <= 2100)]
    for _ in range(2):  # a figure computed in the first pass is an operand in the second
        own = [n for c in claims if c["status"] in ("verified", "computed") and (n := c.get("_n") or
               next(iter(numbers_with_values(c["text"])), None))]
        amounts = list(dict.fromkeys((n["text"], _signed(n)) for n in pool + own if not n["percent"]))[:24]
        percents = list(dict.fromkeys((n["text"], _signed(n)) for n in pool + own if n["percent"]))[:24]
        for c in claims:
            if c["kind"] != "number" or c["status"] != "not_found" or not numbers_with_values(c["text"]):
                continue
            n = numbers_with_values(c["text"])[0]
            formula = next((f for f, iv in shown if agrees(n, iv)), None) or _two_of(n, amounts, percents)
            if formula:
                c["status"], c["formula"] = "computed", formula


def _two_of(n: dict, amounts: list[tuple[str, float]], percents: list[tuple[str, float]]) -> str | None:
    """A formula of two operands giving ``n`` (signed) at its written precision, or None."""
    v, tol = _signed(n), tolerance(n["decimals"])
    for (ta, a), (tb, b) in permutations(amounts, 2):
        if not n["percent"]:
            if abs(a + b - v) <= tol:
                return f"{ta} + {tb}"
            if abs(a - b - v) <= tol:
                return f"{ta} - {tb}"
        elif b:
            if abs((a - b) / abs(b) * 100 - v) <= tol:
                return f"({ta} - {tb}) / {tb} × 100"
            if abs(a / b * 100 - abs(v)) <= tol:
                return f"{ta} / {tb} × 100"
    if n["percent"]:
        for (ta, a), (tb, b) in permutations(percents, 2):
            if abs(a - b - v) <= tol:
                return f"{ta} - {tb}"
    return None


def verify_block(block, sections, *, question: str = "", asked=None) -> dict:
    """Check an answer block (:class:`ppkit.answer.block.AnswerBlock`) against the lines it cites (the quote
    check; whether it answers the question is :func:`ppkit.answer.answered.check_block`'s).

    **verified**: every figure of the block is in its cited lines, or computed from them (a formula it shows, the
    arithmetic :func:`verify_answer` re-derives, a sum of two to four cited figures, or a constant of a catalogue
    formula it multiplies by), and a ``passage`` or ``figure`` block's sentence (a figure block's row label) is in
    them; a block stating figures or a passage and citing nothing is not verified. File, exhibit, note and page
    numbers and dates are never values (:func:`mask_references`). ``claims[].where`` name source lines.

    Returns ``{"verified", "kind", "confidence", "asks", "years", "reasons", "claims"}`` (``reasons``: why the
    quotes do not check; ``asks`` and ``years``: :func:`asked_for`, of ``asked`` when the question was read already).
    """
    ask = asked_for(question, asked)
    base = {"asks": ask["asks"], "years": ask["years"], "kind": block.kind,
            "confidence": None if block.confidence is None else round(block.confidence, 3)}
    cited = _cited_sections(block, sections)
    reasons = []
    claims: list[dict] = []
    if block.kind != "not_found":
        rep = verify_answer(block.text, cited, question=question) if cited else None
        claims = rep["claims"] if rep else []
        for c in claims:
            if c["kind"] == "number" and c["status"] == "not_found":
                formula = _sum_of_cited(numbers_with_values(c["text"])[0], cited) if numbers_with_values(c["text"]) \
                    else None
                if formula:
                    c["status"], c["formula"] = "computed", formula
        _block_arithmetic(block.text, claims, cited)
        if block.kind == "computed":
            _formula_constants(block.text, claims)
        bad = [c for c in claims if c["status"] not in ("verified", "computed", "given")]
        reasons += [f"{c['text']!r} is {c['status'].replace('_', ' ')} in the cited lines" for c in bad]
        if block.kind in ("passage", "figure") and cited and not any(_find_quote_parts(p, cited)
                                                                         for p in _quoted_parts(block)):
            reasons.append("the passage is not in the cited lines")
        if not cited and (claims or block.kind in ("passage", "figure", "computed")):
            reasons.append("the block cites no retrieved line")
        if not cited and block.kind in ("passage", "figure", "computed"):
            claims = [{"kind": "number", "text": n["text"], "status": "not_found", "where": []}
                      for n in numbers_with_values(mask_references(block.text))]
    return {**base, "verified": not reasons, "reasons": reasons, "claims": claims}
