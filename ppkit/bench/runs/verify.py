"""The verifier benchmark: does :func:`ppkit.answer.verify.verify_answer` catch planted errors, and leave clean answers alone?

Cases come from the reference system's answers in the Comprehensive run logs
(``benchmarks/comprehensive_k5/*.log`` and ``comprehensive_k3``), each checked against the
sections the reference retrieved for it (read whole from the index, ``load_sections``):

* **clean**: an answer its scorecard judged green, as written. Flagged = a false alarm.
* **planted** copies of each clean answer, one error each (a kind is skipped where the
  answer offers nothing to plant it on):

  - ``changed_figure``: the first number found in a cited section, scaled by 1.13 at the
    precision written (``$3,548 million`` -> ``$4,009 million``);
  - ``wrong_ratio``: the first number the answer computed (a ratio, share or growth rate),
    scaled by 1.13 (``1.57`` -> ``1.77``, the reference's own k=3 slip was 1.78 for 1.57);
  - ``swapped_year``: for the first found figure (not itself a year) whose nearest year in its
    sentence is the year heading the table column the figure was found in, that year swapped
    for the one before (or after, when the sections hold no earlier one);
  - ``wrong_citation``: every citation of the section holding the first found figure
    replaced by the id of a retrieved section that does not hold it (nor anywhere else: a
    section holding the figure only outside the cited ones is no wrong citation).

  Caught = ``verify_answer(...)["ok"]`` is False.
* **natural**: answers the scorecard judged not green (reported apart: they may or may not
  contain a checkable error).

Nothing here is fitted: the plants are fixed rules, applied to every answer alike.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...answer.verify import column_years, find_number, numbers_with_values, verify_answer
from ...core.data import benchmark_path
from ...retrieval.pointers import load_sections
from ...retrieval.types import Candidate
from ..data.loaders import resolve_doc_name
from ..data.reference import load_run_logs, parse_scorecard
from ..measures.verify_block import scaled

__all__ = ["plant_errors", "verification_cases", "run_verify_bench", "verify_markdown", "KINDS"]

KINDS = ("changed_figure", "wrong_ratio", "swapped_year", "wrong_citation")
_DIGITS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
_YEAR = re.compile(r"(?<!\d)(20[12]\d)(?!\d)")


def _scaled(text: str) -> str:
    """``text`` with its number scaled by :data:`ppkit.bench.measures.verify_block.FACTOR` at the same decimals and separators."""
    m = _DIGITS.search(text)
    raw = m.group(0)
    dec = len(raw.split(".")[1]) if "." in raw else 0
    new = scaled(raw)
    if new == raw:  # too small to change at that precision
        new = f"{float(raw.replace(',', '')) + 10 ** -dec:.{dec}f}"
    return text[:m.start()] + new + text[m.end():]


def _replace_claim(answer: str, claim: dict, new: str) -> str:
    lines = answer.split("\n")
    i = claim["answer_line"] - 1
    a, b = claim["span"]
    lines[i] = lines[i][:a] + new + lines[i][b:]
    return "\n".join(lines)


def plant_errors(answer: str, report: dict, sections) -> dict[str, str]:
    """``{kind: answer with that one error}`` for the kinds that apply to ``answer`` (``report``: its clean verification)."""
    out: dict[str, str] = {}
    nums = [c for c in report["claims"] if c["kind"] == "number"]
    found = [c for c in nums if c["status"] == "verified"]
    computed = [c for c in nums if c["status"] == "computed"]
    if found:
        out["changed_figure"] = _replace_claim(answer, found[0], _scaled(found[0]["text"]))
    if computed:
        out["wrong_ratio"] = _replace_claim(answer, computed[0], _scaled(computed[0]["text"]))
    lines = answer.split("\n")
    for c in found:  # the year nearest a figure in its sentence, when it is the figure's table column's
        if _YEAR.fullmatch(c["text"].strip()):
            continue  # a year is not a figure
        line = lines[c["answer_line"] - 1]
        lo = max(line.rfind(". ", 0, c["span"][0]), line.rfind("; ", 0, c["span"][0]), 0)
        ends = [i for i in (line.find(". ", c["span"][1]), line.find("; ", c["span"][1])) if i >= 0]
        hi = min(ends) if ends else len(line)
        years = [m for m in _YEAR.finditer(line) if lo <= m.start() < hi]
        if not years:
            continue
        m = min(years, key=lambda m: min(abs(m.start() - c["span"][1]), abs(m.end() - c["span"][0])))
        n = numbers_with_values(c["text"])
        if not n or m.group(1) not in column_years(n[0], c["where"], sections):
            continue
        y = int(m.group(1))
        other = str(y - 1) if any(str(y - 1) in s.text for s in sections) else str(y + 1)
        lines[c["answer_line"] - 1] = line[:m.start()] + other + line[m.end():]
        out["swapped_year"] = "\n".join(lines)
        break
    if found:
        n = numbers_with_values(found[0]["text"])
        # every retrieved section holding the figure (cited or not): citing one of those would not be an error
        holders = {w["section_id"] for w in (find_number(n[0], sections) if n else found[0]["where"])}
        cite = next((ci for ci in report["citations"] if set(ci["section_ids"]) & holders), None)
        spare = [s for s in sections if s.section_id not in holders and not any(
            s.section_id in ci["section_ids"] for ci in report["citations"])]
        if cite and spare and cite["cited"].startswith("ID "):
            old, new = cite["cited"][3:], spare[0].node_id
            out["wrong_citation"] = re.sub(rf"(?<!\d){old}(?!\d)", new, answer)
    return out


def _sections(index, doc: str, nodes: list[str]):
    chosen = []
    for nid in nodes:
        if nid not in index.units(doc):
            continue
        a, b = index.units(doc)[nid]
        chosen.append(Candidate(doc, nid, index.trees[doc][nid].breadcrumb, 1.0, 1, 1, (1.0,), a, b, ""))
    return load_sections(index, chosen, budget=10 ** 9)


def verification_cases(index, runs: dict[str, Path]) -> list[dict]:
    """Every reference answer of the run folders (``{"k5": folder}``) with its sections and scorecard light."""
    cases = []
    for run, folder in runs.items():
        logs = load_run_logs(folder)
        lights = {}
        card = Path(folder) / "consolidated_scorecard.md"
        if card.exists():
            for r in parse_scorecard(card)["rows"]:
                lights[(r.get("Company", "").strip().lower(), str(r.get("Qno", "")).strip())] = r["light"]
        for company, log in logs.items():
            doc = resolve_doc_name(company, list(index.trees))
            if doc is None:
                continue
            for e in log["entries"]:
                if e["error"] or not e["response"]:
                    continue
                light = lights.get((company.split("_")[0].lower(), str(e["qno"])))
                cases.append({"run": run, "doc": doc, "qno": e["qno"], "question": e["question"], "answer": e["response"], "light": light,
                              "sections": _sections(index, doc, [n for n, _ in e["nodes"]])})
    return cases


def run_verify_bench(index, runs: dict[str, Path] | None = None, cases: list[dict] | None = None) -> dict:
    """Catch rate per planted kind and false-alarm rate on the clean answers (see the module docstring);
    ``cases`` (the :func:`verification_cases` shape) replaces the reference answers when given."""
    if cases is None:
        runs = runs or {"k5": benchmark_path("comprehensive_k5"), "k3": benchmark_path("comprehensive_k3")}
        cases = verification_cases(index, runs)
    rows = []
    for case in cases:
        rep = verify_answer(case["answer"], case["sections"], question=case.get("question", ""))
        name = f"{case['run']} {case['doc']} Q{case['qno']}"
        if case["light"] != "green":
            rows.append({"case": name, "company": case["doc"], "kind": "natural", "light": case["light"], "flagged": not rep["ok"],
                         "problems": _problems(rep)})
            continue
        rows.append({"case": name, "company": case["doc"], "kind": "clean", "flagged": not rep["ok"],
                     "problems": _problems(rep)})
        for kind, text in plant_errors(case["answer"], rep, case["sections"]).items():
            bad = verify_answer(text, case["sections"], question=case.get("question", ""))
            rows.append({"case": name, "company": case["doc"], "kind": kind, "flagged": not bad["ok"],
                         "problems": _problems(bad)})
    planted = [r for r in rows if r["kind"] in KINDS]
    clean = [r for r in rows if r["kind"] == "clean"]

    def rate(rs):
        return round(sum(r["flagged"] for r in rs) / len(rs), 4) if rs else None

    return {"clean": len(clean), "false_alarm_rate": rate(clean), "planted": len(planted), "catch_rate": rate(planted),
            "by_kind": {k: {"n": sum(r["kind"] == k for r in rows), "caught": rate([r for r in rows if r["kind"] == k])}
                        for k in KINDS},
            # per company: nothing in the verifier is fitted, so each company's figures are out-of-sample ones
            "by_company": {c: {"clean": sum(r["kind"] == "clean" for r in rs), "false_alarm_rate": rate(
                [r for r in rs if r["kind"] == "clean"]), "planted": sum(r["kind"] in KINDS for r in rs),
                "catch_rate": rate([r for r in rs if r["kind"] in KINDS])}
                for c in sorted({r["company"] for r in rows}) for rs in [[r for r in rows if r["company"] == c]]},
            "natural": {"n": sum(r["kind"] == "natural" for r in rows),
                        "flagged": rate([r for r in rows if r["kind"] == "natural"])},
            "targets": {"catch_rate": 0.90, "false_alarm_rate": 0.05}, "rows": rows}


def _problems(rep: dict) -> list[str]:
    out = [f"{c['text']!r} {c['status']}" for c in rep["claims"]
           if c["status"] in ("not_found", "wrong_period", "inconsistent", "uncited")]
    out += [f"{c['cited']} named {c['label']!r}, which is {', '.join(c['names'])}" for c in rep["citations"]
            if c.get("names")]
    return out + [f"cited, not retrieved: {u}" for u in rep["unretrieved"]]


def _pct(x: float | None) -> str:
    return "–" if x is None else format(x, ".0%")


def verify_markdown(result: dict) -> str:
    """The verifier benchmark as a few lines of Markdown."""
    out = [f"**verifier**: {result['planted']} planted errors, caught {result['catch_rate']:.1%} (target 90%); "
           f"{result['clean']} clean answers, false alarms {result['false_alarm_rate']:.1%} (target 5%)", "",
           "| kind | n | caught |", "| --- | --- | --- |"]
    for k, v in result["by_kind"].items():
        out.append(f"| {k} | {v['n']} | {_pct(v['caught'])} |")
    nat = result["natural"]
    if nat["n"]:
        out.append(f"| natural (not green) | {nat['n']} | {nat['flagged']:.0%} flagged |")
    out += ["", "| company | planted | caught | clean | false alarms |", "| --- | --- | --- | --- | --- |"]
    out += [f"| {c} | {v['planted']} | {_pct(v['catch_rate'])} | {v['clean']} | {_pct(v['false_alarm_rate'])} |"
            for c, v in result.get("by_company", {}).items()]
    fa = [r for r in result["rows"] if r["kind"] == "clean" and r["flagged"]]
    if fa:
        out += ["", "False alarms: " + "; ".join(f"{r['case']} ({', '.join(r['problems'][:3])})" for r in fa)]
    miss = [r for r in result["rows"] if r["kind"] in KINDS and not r["flagged"]]
    if miss:
        out += ["", "Missed: " + "; ".join(f"{r['case']} {r['kind']}" for r in miss)]
    return "\n".join(out)
