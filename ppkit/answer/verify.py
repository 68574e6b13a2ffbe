"""Verified citations: is every number and quoted phrase of an answer in the text it cites?

:func:`verify_answer` reads an answer and the sections retrieved for it and returns a
plain dict:

* **citations** - the sources the answer names (``(ID: 0085)``, ``AMD#0085``, or a
  breadcrumb line under ``Sources:``), each resolved to retrieved sections; a citation
  that names no retrieved section is listed under ``unretrieved`` (an error: the answer
  cites something it was not given).
* **claims** - every number (``$1,264 million``, ``(607)``, ``5.36%``, ``2.4x``) and every
  quoted phrase (``"..."`` of three words or more) outside the citation markup, with its
  line in the answer and a status:

  - ``verified``: found in a cited section (in any retrieved section when the answer
    cites none), with the source line(s);
  - ``computed``: not in the text, but the arithmetic from the answer's own verified
    numbers gives it at the precision written (a + b, a - b, a / b, a / b x 100,
    (a - b) / b x 100, (a + b) / c and (a - b) / c in both forms, the average (a + b) / 2), with the formula;
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
* A figure found only outside the sections its own paragraph cites makes the answer not ``ok``
  (``line_cited``); without a citation in its paragraph it stays a remark (``uncited``).
``marked_text`` is the answer with ``[unverified]`` after each unsupported claim.

This module checks; it does not rewrite answers or call a model.
"""

from __future__ import annotations

import re
from itertools import permutations

__all__ = ["verify_answer", "numbers_with_values", "format_report", "column_years"]

_SCALES = {"thousand": 1e3, "k": 1e3, "million": 1e6, "mn": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9, "b": 1e9,
           "trillion": 1e12}
_NUM = re.compile(
    r"(?<![\w.])(?P<neg>[-−–](?=\$?\d))?(?P<open>\()?(?P<cur>\$)?\s?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?P<close>\))?(?:\s?(?P<pct>%|percent\b|percentage points?\b|pp\b))?"
    r"(?:\s?(?P<scale>thousand|million|billion|trillion|bn|mn)\b|(?P<sscale>[MBK])\b)?(?P<x>x\b)?(?![\w-]*[A-Za-z])",
    re.I)
_CITE_ID = re.compile(r"\bIDs?:?\s*(\d{4,7}(?:\s*(?:,|/|&|and)\s*(?:IDs?:?\s*)?\d{4,7})*)\b", re.I)
_CITE_DOC = re.compile(r"\b([A-Za-z][\w.&-]*)#(\d{4,7})\b")
_MARKUP = [
    re.compile(r"\(?\b(?:Source:?\s*)?IDs?:?\s*\d{4,7}(?:\s*(?:,|/|&|and)\s*(?:IDs?:?\s*)?\d{4,7})*\)?", re.I),
    re.compile(r"\b[A-Za-z][\w.&-]*#\d{4,7}\b"),
    re.compile(r"\blines?\s+\d+(?:\s*[-–]\s*\d+)?", re.I),
    re.compile(r"\bp\.\s?\d+(?:\s*[-–]\s*\d+)?(?:,\s*\d+(?:\s*[-–]\s*\d+)?)*"),  # PDF pages: "p.18-19, 22"
    # references, not figures: "Tables 9, 11 and 15", "Note 7", "Item 1A"
    re.compile(r"\b(?:tables?|notes?|items?|parts?|figures?|exhibits?|pages?)\s+\d+[A-Z]?"
               r"(?:\s*(?:,\s*(?:and\s+)?|and\s+|&\s*)\d+[A-Z]?)*", re.I),
    re.compile(r"(?:[×x*]|multiplied\s+by|times)\s*100\b(?!\s*%)", re.I),  # a formula's constant
    re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b", re.I),  # a date

    re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+"),  # list markers
    re.compile(r"^\s*#+\s*"),
]
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
    """(source line, text) of what was sent for ``section`` (``[…]`` cut markers skipped)."""
    nums = [ln for a, b in section.sent_ranges for ln in range(a, b + 1)] or \
        list(range(section.line_start, section.line_end + 1))
    out, j = [], 0
    for raw in section.text.split("\n"):
        if raw == "[…]":
            continue
        out.append((nums[j] if j < len(nums) else section.line_end, raw))
        j += 1
    return out


def _tol(decimals: int) -> float:
    return 0.5 * 10 ** (-decimals) + 1e-9


def _matches(claim: dict, doc_num: dict) -> bool:
    tol = _tol(claim["decimals"])
    if claim["scale"] is None or (doc_num["scale"] is not None and doc_num["scale"] == claim["scale"]):
        if abs(doc_num["value"] - claim["value"]) <= tol:
            return True
    if claim["scale"] is None:
        return False
    scales = [doc_num["scale"]] if doc_num["scale"] is not None else [1.0, 1e3, 1e6, 1e9]
    return any(abs(doc_num["value"] * s / claim["scale"] - claim["value"]) <= tol for s in scales)


def _derivations(vals: list[tuple[str, float]]):
    """(formula, value) of the arithmetic the checker tries on the answer's verified numbers."""
    for (ta, a), (tb, b) in permutations(vals, 2):
        yield f"{ta} + {tb}", a + b
        yield f"{ta} - {tb}", a - b
        yield f"({ta} + {tb}) / 2", (a + b) / 2  # an average of two years
        if b:
            yield f"{ta} / {tb}", a / b
            yield f"{ta} / {tb} × 100", a / b * 100
            yield f"({ta} - {tb}) / {tb} × 100", (a - b) / b * 100
    if len(vals) <= 12:  # three-operand forms only for short answers: fewer chance matches
        for (ta, a), (tb, b), (tc, c) in permutations(vals, 3):
            if c:
                for op, v in (("+", a + b), ("-", a - b)):
                    yield f"({ta} {op} {tb}) / {tc}", v / c
                    yield f"({ta} {op} {tb}) / {tc} × 100", v / c * 100


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
    unretrieved = [c["cited"] for c in cites if not c["retrieved"]]
    return cites, unretrieved


def verify_answer(text: str, sections, *, min_value: float = 10.0) -> dict:
    """Check an answer's numbers and quotes against the sections it cites.

    Args:
        text: the answer.
        sections: the retrieved :class:`ppkit.retrieval.types.Section` objects.
        min_value: integers without a unit up to this value are skipped.

    Returns:
        ``{"ok", "counts", "claims", "citations", "unretrieved", "checked_against", "marked_text"}``
        (see the module docstring).

    >>> verify_answer("Operating income was $1,264 million (ID: 0085).", sections)["ok"]  # doctest: +SKIP
    True
    """
    cites, unretrieved = _citations(text, sections)
    cited_ids = {i for c in cites for i in c["section_ids"]}
    cited = [s for s in sections if s.section_id in cited_ids] or list(sections)
    others = [s for s in sections if s not in cited]
    lines = text.split("\n")
    claims = _claims(lines, min_value)
    _look_up(claims, cited, others)
    for c in claims:  # does the claim's paragraph cite a source? (then an uncited figure contradicts it)
        c["line_cited"] = any(_CITE_ID.search(ln) or _CITE_DOC.search(ln) for ln in _paragraph(lines, c["answer_line"]))
    _check_periods(claims, lines, cited + others)
    _derive(claims)
    counts = {k: sum(1 for c in claims if c["status"] == k)
              for k in ("verified", "computed", "uncited", "wrong_period", "not_found")}
    marked = _marked(lines, claims)
    for c in claims:
        c.pop("_n", None)
        c["span"] = list(c["span"])
    return {
        # a figure only in sections other than those its paragraph of the answer cites counts against it
        "ok": counts["not_found"] == 0 and counts["wrong_period"] == 0 and not unretrieved
              and not any(c["status"] == "uncited" and c.get("line_cited") for c in claims),
        "counts": {"claims": len(claims), **counts, "citations": len(cites), "unretrieved": len(unretrieved)},
        "claims": claims, "citations": cites, "unretrieved": unretrieved,
        "checked_against": [s.section_id for s in cited],
        "marked_text": "\n".join(marked),
    }


def _claims(lines: list[str], min_value: float) -> list[dict]:
    """The numbers (with their values in ``_n``) and quotes the answer states before its Sources."""
    src_start = next((i for i, ln in enumerate(lines) if _SOURCES.match(ln.strip())), len(lines))
    claims: list[dict] = []
    for i, line in enumerate(lines[:src_start], start=1):
        if line.lstrip().startswith(("[offline extractive answer", "[Gemini could not answer")):  # ppkit's own notes
            continue
        masked = line
        for rx in _MARKUP:  # blank citation markup out, keeping offsets
            masked = rx.sub(lambda m: " " * len(m.group(0)), masked)
        for n in numbers_with_values(masked):
            plain = n["decimals"] == 0 and not (n["percent"] or n["currency"] or n["scale"] or n["multiple"])
            # small counts ("two segments": 2) and years ("in 2022": a period, checked by _check_periods)
            trivial = plain and (n["value"] <= min_value or (1900 <= n["value"] <= 2100 and "," not in n["text"]))
            if not trivial:
                claims.append({"kind": "number", "text": n["text"], "answer_line": i, "span": n["span"], "_n": n})
        for m in _QUOTE.finditer(masked):
            words = m.group(1).split()
            if len(words) <= 6 and all(w[:1].isupper() or w.lower() in _SMALL for w in words):
                continue  # a Title Case name ("Cost of Goods Sold"): a term the answer uses, not a quote
            if len(words) >= 3:
                claims.append({"kind": "quote", "text": m.group(1), "answer_line": i, "span": m.span()})
    return claims


def _look_up(claims: list[dict], cited: list, others: list) -> None:
    """Set each claim's ``status`` and ``where``: found in a cited section, only in an uncited one, or not."""
    doc_nums = {s.section_id: [(ln, n) for ln, t in _numbered_lines(s) for n in numbers_with_values(t)]
                for s in cited + others}  # section id -> (line, number) of every number in it
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


_YEAR = re.compile(r"(?<!\d)(?:FY\s?)?(20\d\d)(?!\d)", re.I)
_SMALL = {"of", "and", "the", "for", "in", "on", "to", "a", "an", "&", "or", "from"}


def _clause(line: str, span: tuple[int, int]) -> str:
    """The sentence of ``line`` around ``span`` (bounded by ". ", "; " or the line's ends)."""
    a = max(line.rfind(". ", 0, span[0]), line.rfind("; ", 0, span[0]))
    ends = [i for i in (line.find(". ", span[1]), line.find("; ", span[1])) if i >= 0]
    return line[a + 1 if a >= 0 else 0: min(ends) if ends else len(line)]


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
        said = set(_YEAR.findall(_clause(lines[c["answer_line"] - 1], c["span"])))
        if not said:
            continue
        known = column_years(c["_n"], c["where"], sections, by_id)
        # prose giving the figure with the year said
        agrees = any(ln == w["line"] and not t.lstrip().startswith("|") and set(_YEAR.findall(t)) & said
                     for w in c["where"] for ln, t in by_id[w["section_id"]])
        if known and not known & said and not agrees:
            c["status"], c["column_years"] = "wrong_period", sorted(known)


def _derive(claims: list[dict], rounds: int = 3) -> None:
    """Numbers not found that are arithmetic of the answer's own verified numbers become ``computed``.

    A result can feed the next round (22.20% and 5.36% computed first, then their difference of
    16.84 points).
    """
    for _ in range(rounds):
        operands = list(dict.fromkeys((c["text"], c["_n"]["value"]) for c in claims
                                      if c["kind"] == "number" and c["status"] in ("verified", "computed")))
        changed = False
        for c in claims:
            if c["kind"] != "number" or c["status"] != "not_found" or len(operands) < 2:
                continue
            found = _formula_for(c["_n"], [o for o in operands if o[0] != c["text"]])
            if found:
                c["status"], c["formula"], changed = "computed", found, True
        if not changed:
            break


def _formula_for(n: dict, operands: list[tuple[str, float]]) -> str | None:
    """A formula over ``operands`` whose value is ``n``'s, within its rounding.

    A signed match is preferred ("22.20% - 5.36%" over "5.36% - 22.20%"); the claim carries no
    sign ("declined 10%"), so a negative result that matches in size is the fallback.
    """
    tol = _tol(n["decimals"])
    found = None
    for formula, v in _derivations(operands):
        if abs(v - n["value"]) <= tol:
            return formula
        if found is None and abs(-v - n["value"]) <= tol:
            found = f"-({formula})"
    return found


def _marked(lines: list[str], claims: list[dict]) -> list[str]:
    """The answer's lines with ``[unverified]`` after each number or quote that was not found."""
    marked = list(lines)
    for c in sorted(claims, key=lambda c: (c["answer_line"], -c["span"][1])):
        if c["status"] == "not_found":
            ln = marked[c["answer_line"] - 1]
            marked[c["answer_line"] - 1] = ln[: c["span"][1]] + " [unverified]" + ln[c["span"][1]:]
    return marked


def format_report(report: dict) -> str:
    """A few readable lines for a verification report."""
    c = report["counts"]
    out = [f"verification: {'OK' if report['ok'] else 'PROBLEMS'} - {c['claims']} claims: {c['verified']} verified, "
           f"{c['computed']} computed, {c['uncited']} only in uncited sections, {c['not_found']} not found; "
           f"{c['citations']} citations, {c['unretrieved']} not among the retrieved sections"]
    for cl in report["claims"]:
        where = ", ".join(f"{w['section_id']} line {w['line']}" for w in cl.get("where", [])[:2])
        extra = f" = {cl['formula']}" if cl.get("formula") else (f" at {where}" if where else "")
        out.append(f"  answer line {cl['answer_line']}: {cl['text']!r} {cl['status']}{extra}")
    for u in report["unretrieved"]:
        out.append(f"  cited but not retrieved: {u}")
    return "\n".join(out)
