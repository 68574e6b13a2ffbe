"""The reference system's run logs and scorecards, parsed into plain rows.

A run log (``comprehensive_k5/AMD_2022_comparison.log``) holds, per question, the
k nodes the reference re-ranker chose (``-> Node 0066   | AMD > Embedded``), the
synthesized answer, and the ground truth. The answers cite node ids inline
(``(ID: 0085)``, ``(Source: ID 0062)``, ``ID: 0080, 0081``, ``ID: 0062/0063``) and
under ``Sources:`` (sometimes by name only: ``(Source: Consolidated Balance
Sheets)``). :func:`citations` finds both.

A scorecard (``consolidated_scorecard.md``, ``scorecard_k5.md``) is a Markdown table
with a traffic light per question (🟢/🟡/🔴) and a ``Final Score``/``Summary`` line.

Breadcrumbs in the logs keep the extractor's markup (``pepsico > **Free Cash
Flow**``) and lower-case document names; :func:`clean_breadcrumb` strips the markup.
This module reads files; it does not map anything onto trees (see :mod:`ppkit.bench.data.gold`).
"""

from __future__ import annotations

import re
from pathlib import Path

from ...core.errors import InvalidInput, MissingFile
from ...core.ids import breadcrumb_titles
from ...documents.tree import clean_title

__all__ = ["parse_run_log", "load_run_logs", "parse_scorecard", "citations", "clean_breadcrumb",
           "scorecard_summary", "LIGHTS"]

LIGHTS = {"🟢": "green", "🟡": "yellow", "🔴": "red"}

_QUERY = re.compile(r"^USER QUERY \[([^\]]*)\]:\s*(.*)$")
_NODE = re.compile(r"^\s*->\s*Node\s+(\d{4})\s*\|\s*(.*?)\s*$")
_TOPK = re.compile(r"Top\s+(\d+)\s+Unique Nodes", re.I)
# "ID: 0085", "ID 0062", "ID: 0080, 0081", "ID: 0062/0063", "ID 0050, ID 0179"
_ID_RUN = re.compile(r"\bID\b\s*:?\s*(\d{4}(?:\s*(?:,|/|&|and)\s*(?:ID\b\s*:?\s*)?\d{4})*)")
_SOURCES = re.compile(r"\bSources?\b\**\s*:\**\s*(.*)$", re.I)


def clean_breadcrumb(crumb: str) -> list[str]:
    """Titles of a logged breadcrumb without markup: ``"pepsico > **Free Cash Flow**"`` -> ``["pepsico", "Free Cash Flow"]``."""
    return [clean_title(p) for p in breadcrumb_titles(crumb)]


def citations(response: str) -> dict[str, list]:
    """Node ids and source names an answer cites.

    Returns ``{"ids": [node ids in order of first citation], "names": [source names
    given without an id]}``.

    >>> citations("Based on X (ID: 0085) ... (Source: ID 0062, 0063)")["ids"]
    ['0085', '0062', '0063']
    """
    ids: list[str] = []
    for m in _ID_RUN.finditer(response):
        for nid in re.findall(r"\d{4}", m.group(1)):
            if nid not in ids:
                ids.append(nid)
    names: list[str] = []
    lines = response.split("\n")
    for i, line in enumerate(lines):
        for m in _SOURCES.finditer(line):
            rest = m.group(1).strip()
            items = []
            if rest.strip("*_ )").strip():
                items.append(rest)
            else:  # a "Sources:" heading: the bullets below it
                for nxt in lines[i + 1:]:
                    s = nxt.strip()
                    if not s:
                        if items:
                            break
                        continue
                    if not re.match(r"^[*\-•]\s+|^\d+\.\s+", s) and items:
                        break
                    items.append(s)
                    if not re.match(r"^[*\-•]\s+|^\d+\.\s+", s):
                        break
            for item in items:
                if _ID_RUN.search(item):
                    continue  # cited by id already
                item = item.split(":**")[0]  # "**Name:** explanation"
                for part in re.split(r";", item):
                    name = re.sub(r"^[*\-•\s]+|^\d+\.\s+", "", part)
                    name = clean_title(re.sub(r"[()]", " ", name)).strip(" .,*_")
                    if name and not re.fullmatch(r"ID|\d+", name):
                        names.append(name)
    return {"ids": ids, "names": list(dict.fromkeys(names))}


def _qno(raw: str) -> int | None:
    try:
        return int(float(raw))
    except ValueError:
        return None  # "[nan]": an empty spreadsheet row the reference run tried to ask


def parse_run_log(path: str | Path) -> dict:
    """One reference run log.

    Returns ``{"company": "AMD_2022", "k": 5, "path", "entries": [...]}``; each entry is
    ``{"qno", "question", "nodes": [(node_id, breadcrumb)], "response", "ground_truth",
    "error", "cited": citations(response)}``. Entries whose number is not a number
    (the reference's ``[nan]`` rows) are dropped.
    """
    text = Path(path).read_text(encoding="utf-8")
    m = re.search(r"^Company:\s*(.+)$", text, re.M)
    company = m.group(1).strip() if m else Path(path).stem.split("_comparison")[0]
    entries, cur, section = [], None, None
    ks: list[int] = []
    for line in text.split("\n"):
        q = _QUERY.match(line)
        if q:
            cur = {"qno": _qno(q.group(1)), "question": q.group(2).strip(), "nodes": [], "response": "",
                   "ground_truth": "", "error": None}
            entries.append(cur)
            section = None
            continue
        if cur is None:
            continue
        if line.startswith("--- BOT SYNTHESIZED RESPONSE"):
            section = "response"
            continue
        if line.startswith("--- GROUND TRUTH"):
            section = "truth"
            continue
        if line.startswith("--- BOT INTERNAL LOG"):
            section = "log"
            continue
        if line.startswith("ERROR processing query:"):
            cur["error"] = line.split(":", 1)[1].strip()
            section = None
            continue
        if re.fullmatch(r"={20,}", line.strip()):
            if section == "truth":
                section = None
            continue
        if section == "log":
            t = _TOPK.search(line)
            if t:
                ks.append(int(t.group(1)))
            n = _NODE.match(line)
            if n:
                cur["nodes"].append((n.group(1), n.group(2)))
        elif section == "response":
            cur["response"] += line + "\n"
        elif section == "truth":
            cur["ground_truth"] += line + "\n"
    out = []
    for e in entries:
        if e["qno"] is None:
            continue
        e["response"] = e["response"].strip()
        e["ground_truth"] = e["ground_truth"].strip()
        e["cited"] = citations(e["response"])
        out.append(e)
    k = max(set(ks), key=ks.count) if ks else None
    return {"company": company, "k": k, "path": str(path), "entries": out}


def load_run_logs(folder: str | Path) -> dict[str, dict]:
    """All ``*.log`` files of a run folder, keyed by their company (``"AMD_2022"``)."""
    logs = {}
    for p in sorted(Path(folder).glob("*.log")):
        log = parse_run_log(p)
        logs[log["company"]] = log
    if not logs:
        raise MissingFile(f"no reference run logs (*.log) in {folder}")
    return logs


def _row(line: str) -> list[str]:
    cells = line.strip().strip("|").split("|")
    return [c.strip().replace("\\$", "$") for c in cells]


def parse_scorecard(path: str | Path) -> dict:
    """A reference scorecard: ``{"title", "columns", "rows": [dict], "score": (got, total), "counts", "note"}``.

    Each row is a dict over the table's columns plus ``"light"`` (green/yellow/red).
    ``score`` is read from the ``Final Score: 37 / 40`` or ``Summary: 25 / 26`` line
    and checked against the rows.
    """
    text = Path(path).read_text(encoding="utf-8")
    lines = text.split("\n")
    title = next((ln.lstrip("# ").strip() for ln in lines if ln.startswith("#")), "")
    columns: list[str] = []
    rows: list[dict] = []
    for i, line in enumerate(lines):
        if not line.strip().startswith("|"):
            continue
        cells = _row(line)
        if not columns:
            columns = cells
            continue
        if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
            continue
        row = dict(zip(columns, cells))
        light = next((v for c in cells for e, v in LIGHTS.items() if e in c), None)
        row["light"] = light
        rows.append(row)
    m = re.search(r"(?:Final Score|Summary)\W*\s*(\d+)\s*/\s*(\d+)", text)
    if not m:
        raise InvalidInput(f"{path}: no 'Final Score: N / M' or 'Summary: N / M' line")
    score = (int(m.group(1)), int(m.group(2)))
    counts = {v: sum(1 for r in rows if r["light"] == v) for v in LIGHTS.values()}
    judged = sum(counts.values())  # rows without a light were not judged
    if score[1] != judged or score[0] != counts["green"]:
        raise InvalidInput(f"{path}: the summary says {score[0]}/{score[1]} but the table has {counts['green']} green "
                         f"of {judged} judged rows")
    note = ""
    s = re.search(r"\*\*(?:System Status|Summary):\*\*\s*(.*)", text)
    if s:
        note = s.group(1).strip()
    return {"title": title, "columns": columns, "rows": rows, "score": score, "counts": counts, "note": note,
            "path": str(path)}


def scorecard_summary(scorecards: dict[str, dict]) -> list[dict]:
    """One row per scorecard: ``{"run", "score", "green", "yellow", "red", "failures"}``.

    ``failures`` lists the non-green rows as ``"Company Q7"`` (Comprehensive) or
    ``"Company dg01"`` (FinanceBench).
    """
    out = []
    for name, sc in scorecards.items():
        fails = []
        for r in sc["rows"]:
            if r["light"] != "green":
                qn = r.get("Qno") or r.get("Question ID") or "?"
                fails.append(f"{r.get('Company', '?')} {'Q' if qn.isdigit() else ''}{qn}")
        out.append({"run": name, "score": f"{sc['score'][0]}/{sc['score'][1]}", **sc["counts"], "failures": fails})
    return out
