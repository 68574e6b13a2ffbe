"""Document metadata: who filed it, for which year, and which 10-K Item each section is in.

Derived from the document itself, offline and rule-based:

* **company** - the line above "(Exact name of registrant as specified in its charter)"
  on an SEC cover page, tidied (``THE BOEING COMPANY`` -> ``The Boeing Company``);
* **aliases** - the company name without legal suffixes and a leading "The"
  (``Advanced Micro Devices``, ``Boeing``), plus the document's own name;
* **ticker** - the first trading symbol listed under "Securities registered pursuant
  to Section 12(b)" (an HTML table cell, a Markdown table cell or ``Title: SYM, Exchange``);
* **fiscal_year** - the year of "For the fiscal year ended <date>" (the year the
  fiscal year *ends* in);
* **form_type** - ``10-K``, ``10-Q``, ``20-F``, ``8-K``... from "FORM 10-K" on the cover;
* **section items** - for 10-Ks, the Item each section belongs to (``"1A"``, ``"7"``,
  ``"8"``): the last Item marker at or above the section's heading line, where a marker
  is a heading ``Item 7. ...`` or a line that is bold as a whole (``**Item 1A. Risk
  Factors.**``, how some filings set Items that the parser did not make headings). A
  ``PART II`` heading ends the previous Item. Markers packed within a few lines of each
  other (a table of contents) are ignored. Heading levels are not used: they are noisy in
  parsed filings, document order is not.

A sidecar JSON file next to the Markdown, ``<stem>.meta.json``, overrides any of these
keys (its values replace the derived ones; ``section_items`` maps node ids to Items and
replaces only the nodes it names). This module reads documents; it does not decide what
a question asks for (that is :mod:`ppkit.retrieval.analyze`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..core.errors import InvalidInput
from .tree import Tree, clean_title

__all__ = ["document_metadata", "section_items", "sidecar_path", "read_sidecar", "ITEM_TITLES", "normalise_item"]

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

_LEGAL_SUFFIX = re.compile(r"[,\s]+(inc\.?|incorporated|corp\.?|corporation|company|co\.?|ltd\.?|limited|plc|"
                           r"n\.v\.|s\.a\.|ag|llc|l\.p\.|holdings?)$", re.I)
_REGISTRANT = re.compile(r"exact name of (the )?registrant", re.I)
_FISCAL = re.compile(r"fiscal year ended\s+[A-Za-z]+\.?\s+\d{1,2},?\s+((?:19|20)\d{2})", re.I)
_FORM = re.compile(r"\bform\s+(10-K|10-Q|20-F|40-F|8-K|S-1|10-KT)\b", re.I)
_ITEM_MARK = re.compile(r"^items?\s+(\d{1,2}[A-C]?)\b(?:\s*[.:(\-–—]|\s*,|\s|$)", re.I)
_PART = re.compile(r"^part\s+(i{1,3}|iv)\b\.?$", re.I)
_TICKER_CELL = re.compile(r"<td>\s*([A-Z]{1,5}(?:[.\-][A-Z]{1,2})?)\s*</td>|\|\s*([A-Z]{1,5}(?:[.\-][A-Z]{1,2})?)\s*\||"
                          r":\s*([A-Z]{1,5}(?:[.\-][A-Z]{1,2})?)\s*,")
_NOT_TICKER = {"LLC", "NYSE", "INC", "NA", "N", "A", "I", "CEO", "USA", "US", "THE", "NONE"}


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


def _tidy_name(name: str) -> str:
    # an all-capitals cover-page name reads better in title case; mixed case is kept ("PepsiCo, Inc.")
    if name.isupper():
        name = " ".join(w if len(w) <= 1 else w[0] + w[1:].lower() for w in name.split())
        name = re.sub(r"\bInc\b", "Inc", name)
    return name


def _company(lines: list[str]) -> str | None:
    for i, line in enumerate(lines[:400]):
        if _REGISTRANT.search(line):
            for j in range(i - 1, max(-1, i - 6), -1):
                cand = _plain(lines[j])
                if cand and not cand.startswith(("!", "(", "<")) and len(cand) <= 120:
                    return _tidy_name(cand)
    return None


def _aliases(company: str | None, doc: str) -> list[str]:
    out = [doc]
    if company:
        out.append(company)
        short = company
        while True:  # strip stacked suffixes: "Foo Holdings, Inc."
            new = _LEGAL_SUFFIX.sub("", short).strip(" ,")
            if new == short:
                break
            short = new
        short = re.sub(r"^the\s+", "", short, flags=re.I).strip()
        if short:
            out.append(short)
    return [a for a in dict.fromkeys(out) if a]


def _ticker(lines: list[str]) -> str | None:
    for i, line in enumerate(lines[:400]):
        if re.search(r"section 12\(b\)", line, re.I):
            for later in lines[i + 1 : i + 40]:
                if re.search(r"section 12\(g\)", later, re.I):
                    break
                for m in _TICKER_CELL.finditer(later):
                    sym = next(g for g in m.groups() if g)
                    if sym not in _NOT_TICKER:
                        return sym
    return None


def _first(rx: re.Pattern, lines: list[str], limit: int = 200) -> re.Match | None:
    for line in lines[:limit]:
        m = rx.search(line)
        if m:
            return m
    return None


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
    types = {"company": str, "ticker": str, "form_type": str, "fiscal_year": int, "aliases": list,
             "section_items": dict}
    for key, want in types.items():
        if key in data and data[key] is not None and not isinstance(data[key], want):
            raise InvalidInput(f"{side}: {key!r} must be a {want.__name__}, got {type(data[key]).__name__}")
    return data


def document_metadata(path: str | Path, tree: Tree, lines: list[str]) -> tuple[dict, dict[str, str]]:
    """The metadata of one document and its per-section Items, sidecar applied.

    Args:
        path: the Markdown file (its sidecar ``<stem>.meta.json`` is read when present).
        tree: its Tree; ``tree.doc`` becomes the first alias.
        lines: its lines.

    Returns:
        (metadata, section items): ``{"company", "aliases", "ticker", "fiscal_year",
        "form_type", "derived": [keys found in the text], "overridden": [keys from the
        sidecar]}`` and ``{node_id: Item}``. A value that could not be found is ``None``.

    >>> document_metadata("../shared/data/10k/AMD.md", tree, lines)[0]["ticker"]  # doctest: +SKIP
    'AMD'
    """
    company = _company(lines)
    fy = _first(_FISCAL, lines)
    form = _first(_FORM, lines, limit=60)
    meta = {
        "company": company,
        "aliases": _aliases(company, tree.doc),
        "ticker": _ticker(lines),
        "fiscal_year": int(fy.group(1)) if fy else None,
        "form_type": form.group(1).upper() if form else None,
    }
    meta["derived"] = [k for k, v in meta.items() if v not in (None, [])]
    items = section_items(tree, lines) if meta["form_type"] in ("10-K", "10-KT", None) else {}
    side = read_sidecar(path)
    for key, value in side.items():
        if key == "section_items":
            for node_id, item in value.items():
                tree[node_id]  # an unknown node id is an error that names the valid range
                items[node_id] = normalise_item(item)
        else:
            meta[key] = value
    if side:
        meta["overridden"] = sorted(side)
    return meta, items
