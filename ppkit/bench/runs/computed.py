"""The computed-answer benchmark: FinanceBench's metric questions answered offline and judged strictly.

For every ``metrics-generated`` question (FinanceBench's computed financial metrics) whose filing
is in the index, :func:`run_metric_bench` asks the question at each k (the offline extractive
answer computes the metric from the primary statements, :mod:`ppkit.answer.metrics`), and scores
the stated result with :func:`ppkit.bench.measures.judge.judge_numeric` (1%, unit and sign checked).

A question's filing is in the index when its ``doc_name`` names an indexed document's company *and*
fiscal year (``PEPSICO_2022_10K`` -> ``PepsiCo`` with fiscal_year 2022; ``PEPSICO_2021_10K`` is not
that filing). Questions about other filings are listed as ``not_indexed``: point ``--index`` at an
index of the FinanceBench filings to score them.

Each row carries its cause: ``correct``, ``not_indexed``, ``abstained`` (a name or year the question
asks about is in none of the sections), ``no_metric`` (the question names no metric
the formula table knows), ``unsupported`` (a multi-year average, CAGR or day count), ``missing_inputs``
(a line item not in the retrieved statements), ``unit``, ``sign``, ``value`` (a computed number that is
wrong). Nothing is fitted: the formula table is general, so there is no in-sample/out-of-sample split.
"""

from __future__ import annotations

import re

from ...indexing.index import SearchIndex
from ..measures.judge import judge_numeric
from ..data.loaders import norm_name, resolve_doc_name

__all__ = ["run_metric_bench", "metric_markdown", "indexed_doc"]


def indexed_doc(index: SearchIndex, doc_name: str) -> str | None:
    """The indexed document that is FinanceBench's ``doc_name`` filing (company and fiscal year), or None."""
    meta = {d["doc"]: d.get("metadata") or {} for d in index.manifest.get("documents", [])}
    doc = resolve_doc_name(doc_name, index.docs, metadata=meta)
    if doc is None:
        return None
    if norm_name(doc) == norm_name(doc_name):
        return doc  # the filing itself, under its own name (a 10-Q, an 8-K or a release of the shelf too)
    years = re.findall(r"(?<!\d)((?:19|20)\d\d)(?!\d)", doc_name)
    fy = meta.get(doc, {}).get("fiscal_year")
    if years and fy and int(years[0]) != int(fy):
        return None
    if re.search(r"\d{4}Q\d|8K|EARNINGS", doc_name, re.I) and not re.search(r"10-?K", doc_name, re.I):
        return None  # a quarterly report or release is another document than the annual report
    return doc


def run_metric_bench(index: SearchIndex, questions: list[dict], *, ks=(3, 5), only_metrics: bool = True) -> dict:
    """Ask and judge each metric question; returns ``{"n", "ks", "results": {k: {...}}, "rows", "not_indexed"}``.

    ``results[k]``: ``{"correct", "n", "accuracy", "causes": {cause: count}}`` over the indexed questions.
    """
    seen, todo, not_indexed = set(), [], []
    for q in questions:
        if q["qid"] in seen or (only_metrics and q.get("question_type") != "metrics-generated"):
            continue
        seen.add(q["qid"])
        doc = indexed_doc(index, q["doc"])
        if doc is None:
            not_indexed.append({"qid": q["qid"], "doc": q["doc"]})
        else:
            todo.append((q, doc))
    rows = []
    for q, doc in todo:
        for k in ks:
            ans = index.ask(q["text"], k)
            syn = ans.trace.synthesis if ans.trace is not None else {}
            metric = syn.get("metric")
            j = judge_numeric(ans.text, q["answer"], q["text"])
            if j["ok"]:
                cause = "correct"
            elif j["reason"] == "abstained" and metric is None:
                cause = "abstained"  # a name or year of the question in none of the sections
            elif metric is None:
                cause = "no_metric"
            elif metric["value"] is None:
                cause = "unsupported" if "a supported form of the metric" in metric["missing"] else "missing_inputs"
            else:
                cause = j["reason"] or "value"
            rows.append({"qid": q["qid"], "doc": q["doc"], "indexed_doc": doc, "k": k, "question": q["text"],
                         "truth": q["answer"], "cause": cause, "judge": j, "metric": metric,
                         "verified": (ans.verification or {}).get("ok"),
                         "statements_added": syn.get("statements_added", []),
                         "sections": [s.section_id for s in ans.sections]})
    results = {}
    for k in ks:
        rk = [r for r in rows if r["k"] == k]
        causes: dict[str, int] = {}
        for r in rk:
            causes[r["cause"]] = causes.get(r["cause"], 0) + 1
        correct = causes.get("correct", 0)
        results[str(k)] = {"n": len(rk), "correct": correct, "accuracy": correct / len(rk) if rk else None,
                           "verified": sum(1 for r in rk if r["verified"]), "causes": causes}
    return {"n": len(todo), "ks": list(ks), "results": results, "rows": rows, "not_indexed": not_indexed}


def metric_markdown(result: dict) -> str:
    """The accuracy table, the rows, and the questions whose filing is not indexed."""
    out = ["| k | questions | correct | accuracy | answer verified | causes |", "| --- | --- | --- | --- | --- | --- |"]
    for k, r in result["results"].items():
        acc = "n/a" if r["accuracy"] is None else f"{r['accuracy']:.2f}"
        causes = ", ".join(f"{c} {n}" for c, n in sorted(r["causes"].items()))
        out.append(f"| {k} | {r['n']} | {r['correct']} | {acc} | {r['verified']} | {causes} |")
    out.append("")
    for r in result["rows"]:
        got = (r["judge"].get("got") or {}).get("text", "-")
        name = (r["metric"] or {}).get("name", "-")
        out.append(f"- {r['qid']} ({r['doc']}, k={r['k']}): {r['cause']}; metric {name}; stated {got}; "
                   f"truth {r['truth']}" + (f"; missing {r['metric']['missing']}" if r["cause"] == "missing_inputs"
                                            else ""))
    if result["not_indexed"]:
        docs = sorted({r["doc"] for r in result["not_indexed"]})
        out.append(f"\n{len(result['not_indexed'])} metric question(s) about filings not in this index "
                   f"({len(docs)} filings, e.g. {', '.join(docs[:4])}): give --index an index of those filings.")
    return "\n".join(out)
