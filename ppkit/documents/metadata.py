"""Document metadata: who filed it, for which year, and which 10-K Item each section is in.

Derived from the document itself, offline and rule-based (the cover page is read by
:func:`ppkit.documents.cover.read_cover`, which states the fiscal-year rule):

* **company** - the registrant's exact name on the cover, tidied (``THE BOEING COMPANY`` ->
  ``The Boeing Company``), or the name in a press release's header;
* **aliases** - the document's own name, the company name, and the name without legal
  suffixes, a leading "The" or a ``.com`` (``Advanced Micro Devices``, ``Boeing``, ``Amazon``);
* **ticker** - the first trading symbol listed under "Securities registered pursuant
  to Section 12(b)", or a press release's ``(NYSE: JNJ)``;
* **fiscal_year**, **quarter** (1-4, or None for a fiscal year or an 8-K), **period_end**
  (ISO date) and **period** (``"FY2018"``, ``"FY2023Q2"``);
* **form_type** - ``10-K``, ``10-Q``, ``8-K``, ``20-F``... from a ``FORM 10-K`` line on the
  cover, or ``earnings release`` for a press release reporting results;
* **sources** - where each of company, ticker, fiscal_year, quarter and form_type came
  from: ``"cover"``, ``"file name"`` (the fallback for company and form only: ``BESTBUY_2024Q2_10Q`` -> company
  ``BESTBUY``, 10-Q, used only for what the text does not give; the period never comes from a name, where a
  number such as a page count in ``scan_2000.pdf`` would pass for a year) or ``"sidecar"``;
* **section items** - for 10-Ks, the Item each section belongs to (``"1A"``, ``"7"``,
  ``"8"``): the last Item marker at or above the section's heading line, where a marker
  is a heading ``Item 7. ...`` or a line that is bold as a whole (``**Item 1A. Risk
  Factors.**``, how some filings set Items that the parser did not make headings). A
  ``PART II`` heading ends the previous Item. Markers packed within a few lines of each
  other (a table of contents) are ignored. Heading levels are not used: they are noisy in
  parsed filings, document order is not.

A sidecar JSON file next to the document, ``<stem>.meta.json``, overrides any of these
keys (its values replace the derived ones; ``section_items`` maps node ids to Items and
replaces only the nodes it names). Its schema (every key optional)::

    {"company": str, "aliases": [str], "ticker": str, "fiscal_year": int, "quarter": int | null,
     "period_end": "YYYY-MM-DD", "form_type": "10-K" | "10-Q" | "8-K" | "earnings release" | ...,
     "section_items": {node_id: Item}} This module reads documents; it does not decide what
a question asks for (that is :mod:`ppkit.retrieval.analyze`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..core.errors import InvalidInput
from .cover import FORMS, read_cover
from .tree import Tree, clean_title

__all__ = ["document_metadata", "section_items", "sidecar_path", "read_sidecar", "ITEM_TITLES", "normalise_item",
           "normalise_company", "short_company_name", "company_acronyms", "company_matches", "period_label", "metadata_from_name"]

# the 10-K Items (Regulation S-K), for labels and for matching Item names in questions
ITEM_TITLES: dict[str, str] = {
    "1": "Business", "1A": "Risk Factors", "1B": "Unresolved Staff Comments", "1C": "Cybersecurity",
    "2": "Properties", "3": "Legal Proceedings", "4": "Mine Safety Disclosures",
    "5": "Market for Registrant's Common Equity", "6": "[Reserved]",
    "7": "Management's Discussion and Analysis of Financial Condition and Results of Operations",
    "7A": "Quantitative and Qualitative Disclosures About Market Risk",
    "8": "Financial Statements and Supplementary Data",
    "9": "Changes in and Disagreements with Accountants", "9A": "Controls and Procedures",
    "9B": "Other Information", "9C": "Disclosure Regarding Foreign Jurisdictions that Prevent Inspections",
    "10": "Directors, Executive Officers and Corporate Governance", "11": "Executive Compensation",
    "12": "Security Ownership of Certain Beneficial Owners and Management", "13": "Certain Relationships and Related Transactions",
    "14": "Principal Accountant Fees and Services", "15": "Exhibits and Financial Statement Schedules",
    "16": "Form 10-K Summary",
}

_LEGAL_SUFFIX = re.compile(r"(?<![,\s])[,\s]+(inc\.?|incorporated|corp\.?|corporation|company|co\.?|ltd\.?|limited|plc|"
                           r"n\.v\.|s\.a\.|ag|llc|l\.p\.|holdings?)$", re.I)
_ITEM_MARK = re.compile(r"^items?\s+(\d{1,2}[A-C]?)\b(?:\s*[.:(\-–—]|\s*,|\s|$)", re.I)
_PART = re.compile(r"^part\s+(i{1,3}|iv)\b\.?$", re.I)


def normalise_item(item: str) -> str:
    """``"item 7a."`` / ``"7a"`` -> ``"7A"``."""
    m = re.search(r"(\d{1,2})\s*([A-Ca-c])?", str(item))
    if not m:
        raise InvalidInput(f"{item!r} is not a 10-K Item (expected e.g. '7', '1A', 'Item 7A')")
    return m.group(1).lstrip("0") + (m.group(2) or "").upper()


def _plain(line: str) -> str:
    """A line without Markdown/HTML markup: ``# **THE BOEING COMPANY**`` -> ``THE BOEING COMPANY``."""
    s = re.sub(r"^\s*#+\s*", "", line)
    return clean_title(s).strip(" *_:")


def short_company_name(company: str) -> str:
    """``"The Foo Holdings, Inc."`` -> ``"Foo"``; ``"Amazon.com, Inc."`` -> ``"Amazon"``."""
    short = company
    while True:  # strip stacked suffixes: "Foo Holdings, Inc."
        new = _LEGAL_SUFFIX.sub("", short).strip(" ,&")
        if new == short:
            break
        short = new
    short = re.sub(r"^the\s+", "", short, flags=re.I).strip()
    return re.sub(r"\.com$", "", short, flags=re.I).strip()


def _aliases(company: str | None, doc: str) -> list[str]:
    out = [doc]
    if company:
        out += [company, short_company_name(company)]
    return [a for a in dict.fromkeys(out) if a]


def company_acronyms(company: str) -> list[str]:
    """Initialisms of a name of capitalised words: ``"Advanced Micro Devices, Inc."`` -> ``["AMD"]``,
    ``"Johnson & Johnson"`` -> ``["J&J", "JnJ"]`` (three words or more, or two joined by "&"); a name of
    two words is also written by the first two letters of each: ``"American Express"`` -> ``["AMEX", "AmEx"]``.
    """
    words = short_company_name(company).replace("&", " & ").split()
    named = [w for w in words if w != "&"]
    if len(named) < 2 or not all(w[:1].isupper() for w in named):
        return []
    if "&" in words:
        ini = "".join(w[0] if w != "&" else "&" for w in words)
        return [ini, ini.replace("&", "n")]
    if len(named) == 2 and all(len(w) >= 3 and w.isalpha() for w in named):
        return ["".join(w[:2] for w in named).upper(), "".join(w[:2].capitalize() for w in named)]
    return ["".join(w[0] for w in named)] if len(named) >= 3 else []


def normalise_company(name: str) -> str:
    """A company name for comparison: no legal suffix, leading "The", ``.com``, case or punctuation.

    >>> normalise_company("THE COCA-COLA COMPANY"), normalise_company("Coca Cola")
    ('coca cola', 'coca cola')
    """
    s = short_company_name(" ".join(str(name).split()))
    s = re.sub(r"['’.]", "", s.lower())
    return " ".join(re.sub(r"[^\w&]+", " ", s).split())


def company_matches(name: str, meta: dict) -> bool:
    """Whether ``name`` (as a user or a data set writes it) names the company of ``meta``.

    True when its normalised form equals the ticker (any case), an alias, an initialism
    (:func:`company_acronyms`, same case), or the first words
    of the normalised registrant name (``"JPMorgan"`` for ``JPMorgan Chase & Co.``,
    ``"Verizon"`` for ``Verizon Communications Inc.``).
    """
    want = normalise_company(name)
    if not want:
        return False
    if meta.get("ticker") and want == str(meta["ticker"]).lower():
        return True
    if meta.get("company") and name.strip() in company_acronyms(meta["company"]):
        return True
    for cand in [meta.get("company") or ""] + list(meta.get("aliases") or []):
        have = normalise_company(cand)
        if have and (have == want or have.startswith(want + " ")):
            return True
    return False


def period_label(fiscal_year: int | None, quarter: int | None) -> str | None:
    """``(2023, 2)`` -> ``"FY2023Q2"``; ``(2018, None)`` -> ``"FY2018"``."""
    if fiscal_year is None:
        return None
    return f"FY{fiscal_year}" + (f"Q{quarter}" if quarter else "")


_NEVER_FROM_NAME = ("fiscal_year", "quarter")  # the period: from the text or a sidecar only
_NAME_FORMS = {"10K": "10-K", "10Q": "10-Q", "8K": "8-K", "EARNINGS": "earnings release", "20F": "20-F"}


def metadata_from_name(stem: str) -> dict:
    """The fallback: what a file name like ``BESTBUY_2024Q2_10Q`` says (only the keys it gives).

    >>> metadata_from_name("BESTBUY_2024Q2_10Q")
    {'company': 'BESTBUY', 'fiscal_year': 2024, 'quarter': 2, 'form_type': '10-Q'}
    """
    out: dict = {}
    m = re.match(r"^([A-Za-z][A-Za-z&_\-]*?)[_\-\s]+(?:(?:19|20)\d{2}|\d{1,2}K|8K)", stem)
    if m:
        out["company"] = m.group(1).replace("_", " ").strip()
    y = re.search(r"(?<!\d)((?:19|20)\d{2})(?:Q([1-4]))?(?!\d)", stem)
    if y:
        out["fiscal_year"] = int(y.group(1))
        if y.group(2):
            out["quarter"] = int(y.group(2))
    f = re.search(r"(?:^|[_\-\s])(10K|10Q|8K|20F|EARNINGS)(?:$|[_\-\s])", stem, re.I)
    if f:
        out["form_type"] = _NAME_FORMS[f.group(1).upper()]
    return out


def _markers(tree: Tree, lines: list[str]) -> list[tuple[int, str | None]]:
    """(line, Item or None) for every Item marker and PART heading, in document order."""
    heading_lines = {n.line_start: n for n in tree.headings()}
    marks: list[tuple[int, str | None]] = []
    for ln, line in enumerate(lines, start=1):
        node = heading_lines.get(ln)
        if node is not None:
            text = node.title
        else:
            s = line.strip()
            # a line that is bold as a whole: "**Item 1A. Risk Factors.**"
            if not (s.startswith("**") and s.endswith("**") and s.count("**") == 2):
                continue
            text = _plain(s)
        m = _ITEM_MARK.match(text)
        if m:
            marks.append((ln, normalise_item(m.group(1))))
        elif node is not None and _PART.match(text):
            marks.append((ln, None))
    # a table of contents: four or more markers each within 3 lines of the next
    keep = [True] * len(marks)
    i = 0
    while i < len(marks):
        j = i
        while j + 1 < len(marks) and marks[j + 1][0] - marks[j][0] <= 3:
            j += 1
        if j - i + 1 >= 4:
            for t in range(i, j + 1):
                keep[t] = False
        i = j + 1
    return [m for m, k in zip(marks, keep) if k]


def section_items(tree: Tree, lines: list[str]) -> dict[str, str]:
    """``{node_id: Item}`` for the nodes that fall under an Item marker (10-Ks).

    >>> section_items(parse_markdown("# Item 7. MD&A\\n## Revenue\\n", "D"), ["# Item 7. MD&A", "## Revenue"])  # doctest: +SKIP
    {'0001': '7', '0002': '7'}
    """
    marks = _markers(tree, lines)
    out: dict[str, str] = {}
    if not marks:
        return out
    j, current = 0, None
    for node in sorted(tree.headings(), key=lambda n: n.line_start):
        while j < len(marks) and marks[j][0] <= node.line_start:
            current = marks[j][1]
            j += 1
        if current is not None:
            out[node.node_id] = current
    return out


def sidecar_path(path: str | Path) -> Path:
    """``dir/AMD.md`` -> ``dir/AMD.meta.json``."""
    p = Path(path)
    return p.with_name(p.stem + ".meta.json")


def read_sidecar(path: str | Path) -> dict:
    """The sidecar overrides for the Markdown file ``path`` (``{}`` when there is none).

    Raises:
        ValueError: the sidecar is not a JSON object, or a field has the wrong type.
    """
    side = sidecar_path(path)
    if not side.is_file():
        return {}
    try:
        data = json.loads(side.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InvalidInput(f"{side} is not valid JSON ({e}); fix it or remove it") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{side} must hold a JSON object like {{\"company\": \"...\", \"ticker\": \"...\"}}")
    types = {"company": str, "ticker": str, "form_type": str, "fiscal_year": int, "quarter": int, "period_end": str,
             "aliases": list, "section_items": dict}
    for key, want in types.items():
        if key in data and data[key] is not None and not isinstance(data[key], want):
            raise InvalidInput(f"{side}: {key!r} must be a {want.__name__}, got {type(data[key]).__name__}")
    if data.get("quarter") is not None and data["quarter"] not in (1, 2, 3, 4):
        raise InvalidInput(f"{side}: 'quarter' must be 1, 2, 3, 4 or null, got {data['quarter']!r}")
    if data.get("form_type") is not None and data["form_type"] not in FORMS:
        raise InvalidInput(f"{side}: 'form_type' must be one of {', '.join(FORMS)}, got {data['form_type']!r}")
    return data


def document_metadata(path: str | Path, tree: Tree, lines: list[str], *,
                      name: str | None = None) -> tuple[dict, dict[str, str]]:
    """The metadata of one document and its per-section Items, sidecar applied.

    Args:
        path: the document (its sidecar ``<stem>.meta.json`` is read when present).
        tree: its Tree; ``tree.doc`` becomes the first alias.
        lines: its lines.
        name: the name the file-name fallback reads (default: ``path``'s stem); a neutral
            name ("doc-17") turns the fallback off, as the metadata benchmark does.

    Returns:
        (metadata, section items): ``{"company", "aliases", "ticker", "fiscal_year", "quarter",
        "period_end", "form_type", "period", "sources": {key: "cover" | "file name" | "sidecar"},
        "derived": [keys found in the text], "overridden": [keys from the sidecar]}`` and
        ``{node_id: Item}``. A value that could not be found is ``None``.

    >>> document_metadata("../shared/data/10k/AMD.md", tree, lines)[0]["ticker"]  # doctest: +SKIP
    'AMD'
    """
    cover = read_cover(lines)
    meta = {
        "company": cover.company,
        "aliases": _aliases(cover.company, tree.doc),
        "ticker": cover.ticker,
        "fiscal_year": cover.fiscal_year,
        "quarter": cover.quarter,
        "period_end": cover.period_end,
        "form_type": cover.form_type,
    }
    meta["derived"] = [k for k, v in meta.items() if v not in (None, [])]
    sources = {k: "cover" for k in ("company", "ticker", "fiscal_year", "quarter", "form_type") if meta[k] is not None}
    if cover.fiscal_year is None:  # the period comes whole from one place: the text or the name
        meta["quarter"] = None
        sources.pop("quarter", None)
    for key, value in metadata_from_name(Path(path).stem if name is None else name).items():
        if meta[key] is None and key not in _NEVER_FROM_NAME:
            meta[key] = value
            sources[key] = "file name"
    if sources.get("company") == "file name":
        meta["aliases"] = _aliases(meta["company"], tree.doc)
    items = section_items(tree, lines) if meta["form_type"] in ("10-K", "10-KT", None) else {}
    side = read_sidecar(path)
    for key, value in side.items():
        if key == "section_items":
            for node_id, item in value.items():
                tree[node_id]  # an unknown node id is an error that names the valid range
                items[node_id] = normalise_item(item)
        else:
            meta[key] = value
            if key in ("company", "ticker", "fiscal_year", "quarter", "form_type"):
                sources[key] = "sidecar"
    if side:
        meta["overridden"] = sorted(side)
    meta["period"] = period_label(meta["fiscal_year"], meta["quarter"])
    meta["sources"] = sources
    return meta, items
