"""Reproduce the reference tables: the scorecards' summary and the k=3 versus k=5 failure analysis.

The reference system answered the 40 Comprehensive questions 40/40 correctly with
k=5 sections and 37/40 with k=3; FinanceBench 26/26 and 25/26. For each k=3
failure (the non-green rows of the k=3 scorecard) :func:`failure_analysis` says:

* which sections the question **needed**: its gold, the sections the (correct) k=5
  answer cited;
* which of them the reference **k=3 run lacked** (its log lists the 3 nodes it used);
* whether **ppkit's own k=3 retrieval** (offline, the pipeline's document filter)
  sends them: a needed section counts when its heading line is in the text sent.

The reference's retrieval is compared by node id (its logs name the nodes it sent);
ppkit's by heading lines, as everywhere in :mod:`ppkit.bench`.
"""

from __future__ import annotations

from pathlib import Path

from ...core.errors import InvalidInput
from ...core.ids import split_section_id
from ...indexing.index import SearchIndex
from ..data.gold import comprehensive_gold, gold_lines
from ..data.loaders import load_comprehensive, resolve_doc_name
from ..measures.metrics import covered
from ..data.reference import load_run_logs, parse_scorecard, scorecard_summary
from .results import RetrievalBench, as_json

__all__ = ["reference_summary", "summary_markdown", "reference_runs", "failure_analysis", "failure_markdown",
           "per_question_comparison", "reference_sections"]

SCORECARDS = {
    ("Comprehensive", 5): "comprehensive_k5/consolidated_scorecard.md",
    ("Comprehensive", 3): "comprehensive_k3/consolidated_scorecard.md",
    ("FinanceBench", 5): "financebench_scorecards/scorecard_k5.md",
    ("FinanceBench", 3): "financebench_scorecards/scorecard_k3.md",
}


def reference_summary(bench_dir) -> dict:
    """The reference scorecards parsed, and one summary row per run.

    Args:
        bench_dir: the ``benchmarks/`` folder of the reference data.

    Returns:
        ``{"scorecards": {"Comprehensive k=5": parsed, ...}, "rows": [{"set", "k", "score", "green",
        "yellow", "red", "failures"}]}``.
    """
    bench_dir = Path(bench_dir)
    cards = {f"{s} k={k}": parse_scorecard(bench_dir / rel) for (s, k), rel in SCORECARDS.items()}
    rows = []
    for (s, k), row in zip(SCORECARDS, scorecard_summary(cards)):
        rows.append({"set": s, "k": k, **{key: v for key, v in row.items() if key != "run"}})
    return {"scorecards": cards, "rows": rows}


def summary_markdown(summary: dict) -> str:
    """The reference summary as a Markdown table."""
    out = ["| question set | k | score | 🟢 | 🟡 | 🔴 | not green |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in summary["rows"]:
        out.append(f"| {r['set']} | {r['k']} | {r['score']} | {r['green']} | {r['yellow']} | {r['red']} | "
                   f"{', '.join(r['failures']) or '–'} |")
    return "\n".join(out)


def reference_runs(bench_dir, docs) -> dict[int, dict[tuple[str, int], dict]]:
    """The reference's retrieved nodes per question: ``{k: {(doc, qno): {"sections": [...], "entry": ...}}}``."""
    out: dict[int, dict] = {}
    for k in (3, 5):
        folder = Path(bench_dir) / f"comprehensive_k{k}"
        runs = {}
        for company, log in load_run_logs(folder).items():
            doc = resolve_doc_name(company, list(docs.trees))
            for e in log["entries"]:
                runs[(doc, e["qno"])] = {"sections": [f"{doc}#{nid}" for nid, _ in e["nodes"]], "entry": e}
        out[k] = runs
    return out


def _crumb(docs, sid: str) -> str:
    doc, nid = split_section_id(sid)
    return docs.trees[doc][nid].breadcrumb


def failure_analysis(index: SearchIndex, bench_dir, *, k: int = 3, questions: list[dict] | None = None, gold=None,
                     reranker=None) -> list[dict]:
    """For each non-green question of the reference k=3 Comprehensive run: needed, lacked, ppkit's coverage.

    Args:
        index: the 10-K index ppkit retrieves from (offline default pipeline, its own filter).
        bench_dir: the ``benchmarks/`` folder.
        k: ppkit's cut-off (3 to compare with the reference k=3 run); k=5 is reported too.

    Returns:
        One dict per failure: ``qid``, ``company``, ``qno``, ``question``, ``truth``,
        ``reference_k3_answer``, ``needed``, ``reference_k3``, ``lacked``, ``ppkit`` (sections at
        ``k``), ``ppkit_covers`` (needed sections ppkit sends at ``k``), ``ppkit_covers_lacked``,
        ``ppkit_k5`` and ``ppkit_covers_k5``.
    """
    bench_dir = Path(bench_dir)
    questions = questions or load_comprehensive(bench_dir / "comprehensive_questions.xlsx")
    gold = gold or comprehensive_gold(questions, bench_dir / "comprehensive_k5", index)
    card = parse_scorecard(bench_dir / SCORECARDS[("Comprehensive", 3)])
    runs = reference_runs(bench_dir, index)
    by_key = {(resolve_doc_name(q["doc"], index.docs), q["qno"]): q for q in questions}
    out = []
    for row in card["rows"]:
        if row["light"] == "green":
            continue
        doc = resolve_doc_name(row.get("Company", ""), index.docs)
        qno = int(row.get("Qno", "0"))
        q = by_key.get((doc, qno))
        if q is None:
            raise InvalidInput(f"the k=3 scorecard's {row.get('Company')} Q{qno} is not in the question file")
        needed = list(gold.qrels.get(q["qid"], {}))
        ref3 = runs[3].get((doc, qno), {"sections": [], "entry": {"response": ""}})
        lacked = [s for s in needed if s not in ref3["sections"]]
        kk = max(k, 5)
        r = index.retrieve(q["text"], k=kk, reranker=reranker)
        g = gold_lines({s: 1 for s in needed}, index.trees)
        cov_k = covered(r.sections[:k], g)
        cov_5 = covered(r.sections[:5], g)
        out.append({
            "qid": q["qid"], "company": doc, "qno": qno, "question": q["text"], "truth": q.get("answer", ""),
            "reference_k3_answer": ref3["entry"].get("response", ""),
            "needed": [{"section_id": s, "breadcrumb": _crumb(index, s)} for s in needed],
            "reference_k3": [{"section_id": s, "breadcrumb": _crumb(index, s)} for s in ref3["sections"]],
            "lacked": lacked,
            "ppkit": [{"section_id": s.section_id, "breadcrumb": s.breadcrumb, "chars": len(s.text)}
                      for s in r.sections[:k]],
            "ppkit_covers": cov_k, "ppkit_covers_lacked": [s for s in lacked if s in cov_k],
            "ppkit_k5": [s.section_id for s in r.sections[:5]], "ppkit_covers_k5": cov_5,
            "ppkit_filter": r.trace.docs_filter, "k": k,
        })
    return out


def failure_markdown(rows: list[dict]) -> str:
    """The failure analysis as Markdown: one small table per failure."""
    out = []
    for f in rows:
        k = f["k"]
        out.append(f"#### {f['company']} Q{f['qno']}: {f['question']}")
        out.append(f"Ground truth: {f['truth']}")
        out.append("")
        out.append(f"| needed section (cited by the correct k=5 answer) | in reference k=3 | in ppkit k={k} | "
                   f"in ppkit k=5 |")
        out.append("| --- | --- | --- | --- |")
        ref = {x["section_id"] for x in f["reference_k3"]}
        for n in f["needed"]:
            sid = n["section_id"]
            out.append(f"| {n['breadcrumb']} (`{sid}`) | {'yes' if sid in ref else '**no**'} | "
                       f"{'yes' if sid in f['ppkit_covers'] else 'no'} | {'yes' if sid in f['ppkit_covers_k5'] else 'no'} |")
        out.append("")
        out.append(f"Reference k=3 sent: {'; '.join(x['breadcrumb'] for x in f['reference_k3'])}")
        out.append(f"ppkit k={k} sent: {'; '.join(x['breadcrumb'] for x in f['ppkit'])}")
        verdict = ("covers every needed section" if len(f["ppkit_covers"]) == len(f["needed"]) else
                   f"covers {len(f['ppkit_covers'])} of {len(f['needed'])} needed sections"
                   f" ({len(f['ppkit_covers_lacked'])} of the {len(f['lacked'])} the reference k=3 lacked)")
        out.append(f"**ppkit k={k} {verdict}.**")
        out.append("")
    return "\n".join(out)


def per_question_comparison(index: SearchIndex, bench_dir, result: RetrievalBench | dict, *, questions: list[dict] | None = None) -> list[dict]:
    """Per Comprehensive question: the gold recall of the reference's k=3 and k=5 node lists (by id)
    beside ppkit's (by heading lines, from a :func:`ppkit.bench.runs.harness.run_retrieval_bench` result).

    Returns rows ``{"qid", "reference_k3", "reference_k5", "ppkit_k3", "ppkit_k5"}`` (recall values).
    """
    bench_dir = Path(bench_dir)
    questions = questions or load_comprehensive(bench_dir / "comprehensive_questions.xlsx")
    runs = reference_runs(bench_dir, index)
    pq = {r["qid"]: r for r in as_json(result)["per_question"]}
    out = []
    for q in questions:
        r = pq.get(q["qid"])
        if r is None:
            continue
        gold = set(r["gold"])
        key = (resolve_doc_name(q["doc"], index.docs), q["qno"])
        row = {"qid": q["qid"]}
        for k in (3, 5):
            ref = set(runs[k].get(key, {"sections": []})["sections"])
            row[f"reference_k{k}"] = len(gold & ref) / len(gold) if gold else None
            row[f"ppkit_k{k}"] = r["results"].get(str(k), {}).get("recall")
        out.append(row)
    return out


def reference_sections(index: SearchIndex, bench_dir, questions: list[dict]) -> dict[str, dict[str, list[str]]]:
    """The reference run's sections per question id: ``{qid: {"3": [section ids], "5": [...]}}``
    (the shape :func:`ppkit.bench.views.questions.question_browser` takes)."""
    runs = reference_runs(bench_dir, index)
    out = {}
    for q in questions:
        key = (resolve_doc_name(q["doc"], index.docs), q["qno"])
        out[q["qid"]] = {str(k): runs[k].get(key, {"sections": []})["sections"] for k in (3, 5)}
    return out
