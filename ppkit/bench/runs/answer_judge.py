"""``ppkit bench answers --offline``: every question asked offline, its answer block judged strictly.

:func:`run_answer_judge` asks each question with a reference answer at each k and scores
``answer.block`` with :func:`ppkit.bench.measures.answer_judge.judge_block` (no language model). Two
stores:

* ``shared``: the whole index, the question's filing found by the query analyzer (as ``ppkit ask``);
* ``filing``: the index filtered to the question's own filing (a store per filing, as the ``gold``
  mode of ``ppkit bench retrieval``); questions whose filing is not in the index are listed apart.

Each row keeps the verdict, its reason, the block's kind, text and length and the whole printed
answer's length (``len(str(answer))``). :func:`judge_markdown` writes the tables per set, per question
type (FinanceBench's ``question_type``; the Comprehensive ``category``) and per company. Nothing in the
answer path is fitted (rules only), so there is no out-of-sample figure to set beside these.
"""

from __future__ import annotations

from collections import defaultdict

from ...indexing.index import SearchIndex
from ..measures.answer_judge import VERDICTS, judge_block, summarize
from .computed import indexed_doc

__all__ = ["STORES", "run_answer_judge", "judge_markdown"]

STORES = ("shared", "filing")


def _row(q: dict, k: int, store: str, answer) -> dict:
    block = answer.block
    text, kind = (block.text, block.kind) if block is not None else ("", "not_found")
    j = judge_block(text, kind, q.get("answer") or "", q["text"])
    return {"qid": q["qid"], "k": k, "store": store, "company": q.get("company") or q.get("doc", ""),
            "type": q.get("question_type") or q.get("category") or "", "question": q["text"],
            "reference": q.get("answer") or "", "block": text, "kind": kind, **j,
            "block_chars": len(text), "answer_chars": len(str(answer)),
            "sections": [s.section_id for s in answer.sections]}


def run_answer_judge(index: SearchIndex, questions: list[dict], *, ks=(3, 5), stores=("shared",),
                     benchmark: str = "", progress=None) -> dict:
    """Ask and judge every question with a reference answer, at each k and in each store.

    Args:
        index: the index to ask (offline: its config's synthesizer).
        questions: question dicts (``qid``, ``text``, ``answer``, ``doc``, and ``question_type`` or ``category``).
        ks: the cut-offs.
        stores: ``"shared"`` and/or ``"filing"`` (see the module docstring).
        progress: called with each finished row (e.g. to print a dot), or None.

    Returns:
        ``{"benchmark", "ks", "stores", "n", "rows", "not_indexed", "results": {store: {k: summary}},
        "by_type": {store: {k: {type: summary}}}, "by_company": {...}}``; summaries from
        :func:`ppkit.bench.measures.answer_judge.summarize`.
    """
    bad = [s for s in stores if s not in STORES]
    if bad:
        raise ValueError(f"unknown store(s) {bad}: use {', '.join(STORES)}")
    todo = [q for q in questions if (q.get("answer") or "").strip()]
    rows, not_indexed = [], []
    for q in todo:
        doc = indexed_doc(index, q["doc"]) if "filing" in stores else None
        if "filing" in stores and doc is None:
            not_indexed.append({"qid": q["qid"], "doc": q["doc"]})
        for store in stores:
            if store == "filing" and doc is None:
                continue
            for k in ks:
                answer = index.ask(q["text"], k, docs=[doc] if store == "filing" else None)
                rows.append(_row(q, k, store, answer))
                if progress is not None:
                    progress(rows[-1])
    groups: dict = {"results": {}, "by_type": {}, "by_company": {}}
    for store in stores:
        for name in groups:
            groups[name][store] = {}
        for k in ks:
            rk = [r for r in rows if r["store"] == store and r["k"] == k]
            groups["results"][store][str(k)] = summarize(rk)
            for name, key in (("by_type", "type"), ("by_company", "company")):
                split = defaultdict(list)
                for r in rk:
                    split[r[key] or "-"].append(r)
                groups[name][store][str(k)] = {g: summarize(v) for g, v in sorted(split.items())}
    return {"benchmark": benchmark, "ks": list(ks), "stores": list(stores), "n": len(todo), "rows": rows,
            "not_indexed": not_indexed, **groups}


def _rate(x) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def _line(label: str, s: dict) -> str:
    counts = " | ".join(str(s[v]) for v in VERDICTS)
    med = "n/a" if s["block_chars_median"] is None else f"{s['block_chars_median']:.0f}"
    mean = "n/a" if s["answer_chars_mean"] is None else f"{s['answer_chars_mean']:,.0f}"
    return (f"| {label} | {s['n']} | {s['judged']} | {counts} | {_rate(s['correct_rate'])} | {_rate(s['wrong_rate'])} "
            f"| {s['false_abstentions']} | {med} | {mean} |")


HEADER = ("| {what} | n | judged | " + " | ".join(VERDICTS) + " | correct rate | wrong rate | false abstentions "
          "| block chars (median) | answer chars (mean) |")


def judge_markdown(result: dict, *, groups: bool = True) -> str:
    """The verdict tables: per store and k, then (``groups``) per question type and per company."""
    cols = 4 + len(VERDICTS) + 5
    sep = "| " + " | ".join(["---"] * cols) + " |"
    name = result.get("benchmark") or "questions"
    out = [HEADER.format(what="set, store, k"), sep]
    for store, by_k in result["results"].items():
        for k, s in by_k.items():
            out.append(_line(f"{name}, {store}, k={k}", s))
    if groups:
        for title, key in (("question type", "by_type"), ("company", "by_company")):
            out += ["", HEADER.format(what=f"{title}, store, k"), sep]
            for store, by_k in result[key].items():
                for k, parts in by_k.items():
                    out += [_line(f"{g}, {store}, k={k}", s) for g, s in parts.items()]
    if result.get("not_indexed"):
        out.append(f"\n{len(result['not_indexed'])} question(s) whose filing is not in the index: not asked in "
                   "the per-filing store.")
    return "\n".join(out)
