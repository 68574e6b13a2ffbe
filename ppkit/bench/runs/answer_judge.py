"""``ppkit bench answers --offline``: every question asked offline, its answer block judged strictly.

:func:`run_answer_judge` asks each question with a reference answer at each k and scores
``answer.block`` with :func:`ppkit.bench.measures.answer_judge.judge_block` (no language model). Two
stores:

* ``shared``: the whole index, the question's filing found by the query analyzer (as ``ppkit ask``);
* ``filing``: the index filtered to the question's own filing (a store per filing, as the ``gold``
  mode of ``ppkit bench retrieval``); questions whose filing is not in the index are listed apart.

A question set may span corpora (a sealed set's ``corpus``: ``10k`` for the four reference 10-Ks, ``shelf`` for
the FinanceBench filings): each question is asked of the index given for its corpus, and questions whose corpus
has no index are listed apart (``not_asked``).

Each row keeps the verdict, its reason, the block's kind, text, length and confidence, and the whole printed
answer's length (``len(str(answer))``). :func:`judge_markdown` writes the tables per set, per question type
(FinanceBench's ``question_type``; the Comprehensive ``category``), per company and per corpus.

**Sealed sets** (questions marked ``"sealed": true``) are read only as aggregates: :func:`sealed_view` keeps the
tables, the failure kinds (the judge's reasons, counted, with question ids) and the confidence bins, and drops every
question, reference and block text; ``ppkit bench answers --offline`` prints and writes only that view for them.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from ...answer.answered import verdict
from ...indexing.index import SearchIndex
from ..measures.answer_judge import VERDICTS, confidence_bins, judge_block, out_of_scope, summarize
from .computed import indexed_doc

__all__ = ["STORES", "run_answer_judge", "judge_markdown", "sealed_view", "is_sealed"]

STORES = ("shared", "filing")
_GROUPS = (("question type", "by_type", "type"), ("company", "by_company", "company"),
           ("corpus", "by_corpus", "corpus"))


def is_sealed(questions: list[dict]) -> bool:
    """Whether any question of the set is marked sealed (then the whole set is read as aggregates only)."""
    return any(q.get("sealed") for q in questions)


def _row(q: dict, k: int, store: str, answer) -> dict:
    block = answer.block
    text, kind = (block.text, block.kind) if block is not None else ("", "not_found")
    qtype = q.get("question_type") or q.get("category") or ""
    reference = q.get("answer") or ""
    j = judge_block(text, kind, reference, q["text"], qtype=qtype, key_facts=q.get("key_facts") or ())
    return {"qid": q["qid"], "k": k, "store": store, "company": q.get("company") or q.get("doc", ""),
            "type": qtype, "corpus": q.get("corpus") or "", "question": q["text"],
            "reference": reference, "block": text, "kind": kind, **j,
            "scope": out_of_scope(reference, qtype), "confidence": getattr(block, "confidence", None),
            "block_chars": len(text), "answer_chars": len(str(answer)),
            "shown": verdict(getattr(answer, "verification", None), block)["status"],  # what the views show: verified, unanswered...
            "sections": [s.section_id for s in answer.sections]}


def run_answer_judge(index: SearchIndex | None, questions: list[dict], *, ks=(3, 5), stores=("shared",),
                     benchmark: str = "", progress=None, corpora: dict | None = None) -> dict:
    """Ask and judge every question with a reference answer, at each k and in each store.

    Args:
        index: the index to ask (offline: its config's synthesizer) for questions without a corpus, or whose
            corpus ``corpora`` does not name.
        questions: question dicts (``qid``, ``text``, ``answer``, ``doc``, and ``question_type`` or ``category``;
            ``key_facts`` and ``corpus`` where the set gives them).
        ks: the cut-offs.
        stores: ``"shared"`` and/or ``"filing"`` (see the module docstring).
        progress: called with each finished row (e.g. to print a dot), or None.
        corpora: ``{corpus name: index}`` for sets spanning corpora; a question whose corpus is named here is asked
            of that index, one with another corpus is not asked (listed in ``not_asked``).

    Returns:
        ``{"benchmark", "ks", "stores", "n", "rows", "not_indexed", "not_asked", "sealed", "results": {store: {k:
        summary}}, "by_type": {store: {k: {type: summary}}}, "by_company": {...}, "by_corpus": {...},
        "confidence": {store: {k: bins}}}``; summaries from :func:`ppkit.bench.measures.answer_judge.summarize`.
    """
    bad = [s for s in stores if s not in STORES]
    if bad:
        raise ValueError(f"unknown store(s) {bad}: use {', '.join(STORES)}")
    corpora = corpora or {}
    todo = [q for q in questions if (q.get("answer") or "").strip()]
    rows, not_indexed, not_asked = [], [], []
    for q in todo:
        corpus = q.get("corpus") or ""
        ix = corpora[corpus] if corpus in corpora else (index if not corpus or not corpora else None)
        if ix is None:
            not_asked.append({"qid": q["qid"], "corpus": q.get("corpus") or ""})
            continue
        doc = indexed_doc(ix, q["doc"]) if "filing" in stores else None
        if "filing" in stores and doc is None:
            not_indexed.append({"qid": q["qid"], "doc": q["doc"]})
        for store in stores:
            if store == "filing" and doc is None:
                continue
            for k in ks:
                answer = ix.ask(q["text"], k, docs=[doc] if store == "filing" else None)
                rows.append(_row(q, k, store, answer))
                if progress is not None:
                    progress(rows[-1])
    groups: dict = {"results": {}, "confidence": {}, **{name: {} for _, name, _ in _GROUPS}}
    for store in stores:
        for name in groups:
            groups[name][store] = {}
        for k in ks:
            rk = [r for r in rows if r["store"] == store and r["k"] == k]
            groups["results"][store][str(k)] = summarize(rk)
            groups["confidence"][store][str(k)] = confidence_bins(rk)
            for _, name, key in _GROUPS:
                split = defaultdict(list)
                for r in rk:
                    split[r[key] or "-"].append(r)
                groups[name][store][str(k)] = {g: summarize(v) for g, v in sorted(split.items())}
    return {"benchmark": benchmark, "ks": list(ks), "stores": list(stores), "n": len(todo), "rows": rows,
            "not_indexed": not_indexed, "not_asked": not_asked, "sealed": is_sealed(questions), **groups}


def sealed_view(result: dict) -> dict:
    """``result`` without a question, reference or block text: the tables, the failure kinds and the confidence
    bins; rows keep only ``qid``, ``k``, ``store``, ``type``, ``corpus``, ``company``, ``verdict``, ``reason``,
    ``kind``, ``hedged``, ``confidence``, ``block_chars`` and ``shown`` (what the views show of the verification:
    ``verified``, ``unanswered``, ...)."""
    keep = ("qid", "k", "store", "type", "corpus", "company", "verdict", "reason", "kind", "hedged", "confidence",
            "block_chars", "shown")
    return {**{k: v for k, v in result.items() if k != "rows"},
            "rows": [{k: r.get(k) for k in keep} for r in result["rows"]], "failures": failure_kinds(result)}


def failure_kinds(result: dict) -> dict:
    """``{store: {k: [{"verdict", "reason", "n", "qids"}]}}``: every verdict but correct, by the judge's reason,
    most frequent first (question ids only)."""
    out: dict = {}
    for store in result["stores"]:
        out[store] = {}
        for k in result["ks"]:
            groups: dict = defaultdict(list)
            for r in result["rows"]:
                if r["store"] == store and r["k"] == k and r["verdict"] not in ("correct", "unjudged"):
                    groups[(r["verdict"], r["reason"])].append(r["qid"])
            out[store][str(k)] = [{"verdict": v, "reason": why, "n": len(q), "qids": q}
                                  for (v, why), q in sorted(groups.items(), key=lambda x: (-len(x[1]), x[0]))]
    return out


def _rate(x) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def _line(label: str, s: dict) -> str:
    counts = " | ".join(str(s[v]) for v in VERDICTS)
    med = "n/a" if s["block_chars_median"] is None else f"{s['block_chars_median']:.0f}"
    mean = "n/a" if s["answer_chars_mean"] is None else f"{s['answer_chars_mean']:,.0f}"
    return (f"| {label} | {s['n']} | {s['judged']} | {counts} | {_rate(s['correct_rate'])} | {_rate(s['wrong_rate'])} "
            f"| {_rate(s['hedged_rate'])} | {s['false_abstentions']} | {med} | {mean} |")


HEADER = ("| {what} | n | judged | " + " | ".join(VERDICTS) + " | correct rate | wrong rate | hedged rate "
          "| false abstentions | block chars (median) | answer chars (mean) |")


def judge_markdown(result: dict, *, groups: bool = True) -> str:
    """The verdict tables: per store and k, then (``groups``) per question type, company and corpus; for a sealed
    set also the failure kinds (reasons with counts and question ids) and the confidence bins, and nothing that
    quotes a question or an answer."""
    cols = 5 + len(VERDICTS) + 5
    sep = "| " + " | ".join(["---"] * cols) + " |"
    name = result.get("benchmark") or "questions"
    out = [HEADER.format(what="set, store, k"), sep]
    for store, by_k in result["results"].items():
        for k, s in by_k.items():
            out.append(_line(f"{name}, {store}, k={k}", s))
    if groups:
        for title, key, _ in _GROUPS:
            parts = result.get(key) or {}
            if sum(len(p) for by_k in parts.values() for p in by_k.values()) <= len(parts) * len(result["ks"]):
                continue  # one group only: the first table says it
            out += ["", HEADER.format(what=f"{title}, store, k"), sep]
            for store, by_k in parts.items():
                for k, split in by_k.items():
                    out += [_line(f"{g}, {store}, k={k}", s) for g, s in split.items()]
    for store, by_k in (result.get("confidence") or {}).items():
        for k, bins in by_k.items():
            if bins:
                out += ["", f"Confidence against the share correct ({store}, k={k}):", "",
                        "| confidence | n | correct | share correct |", "| --- | --- | --- | --- |"]
                out += [f"| {b['bin']} | {b['n']} | {b['correct']} | {b['share']:.2f} |" for b in bins]
    for store in result["stores"]:
        for k in result["ks"]:
            rows = [r for r in result["rows"] if r["store"] == store and r["k"] == k and r.get("shown")]
            if rows:
                wrong, right = ([r["shown"] for r in rows if r["verdict"] == v] for v in ("wrong", "correct"))
                out.append(f"\nShown \"verified\" ({store}, k={k}): {wrong.count('verified')} of {len(wrong)} "
                           f"wrong blocks, {right.count('verified')} of {len(right)} correct ones.")
    if result.get("sealed"):
        for store, by_k in (result.get("failures") or failure_kinds(result)).items():
            for k, kinds in by_k.items():
                out += ["", f"Failure kinds ({store}, k={k}; question ids only):", ""]
                out += [f"- {f['verdict']}, {f['n']}: {f['reason']} ({', '.join(f['qids'])})" for f in kinds]
    if result.get("not_indexed"):
        out.append(f"\n{len(result['not_indexed'])} question(s) whose filing is not in the index: not asked in "
                   "the per-filing store.")
    if result.get("not_asked"):
        by = Counter(x["corpus"] or "-" for x in result["not_asked"])
        out.append("\nNot asked (no index given for their corpus): " + ", ".join(f"{c} {n}" for c, n in by.items()))
    return "\n".join(out)
