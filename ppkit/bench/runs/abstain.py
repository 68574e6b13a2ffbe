"""The abstention benchmark: does the answer say so when the retrieved text cannot answer?

The question set is ppkit's own (``ppkit/bench/data/abstain_questions.jsonl``, written for the four
reference 10-Ks of fiscal 2022; not FinanceBench text): answerable questions mixed with
unanswerable ones of three kinds: a company not in the index, a year the filings do not cover,
and a metric the filing does not report (or that is undefined). One JSON object a line:
``{"id", "question", "answerable": bool, "kind"}``.

:func:`run_abstain_bench` asks each question (the index's synthesizer: extractive offline) and
reads the answer with :func:`ppkit.answer.scope.abstained`. **Precision**: the share of
abstentions that were on unanswerable questions; **recall**: the share of unanswerable questions
abstained on. It does not check that the answers to answerable questions are right (see
``ppkit bench metrics`` for computed answers).
"""

from __future__ import annotations

from pathlib import Path

from ...answer.scope import abstained
from ...core.errors import InvalidInput, MissingFile
from ...indexing.index import SearchIndex
from ..data.loaders import jsonl_records

__all__ = ["load_abstain_questions", "default_abstain_questions", "run_abstain_bench", "abstain_markdown",
           "ABSTAIN_QUESTIONS"]

ABSTAIN_QUESTIONS = Path(__file__).parent.parent / "data" / "abstain_questions.jsonl"


def load_abstain_questions(path) -> list[dict]:
    """The questions of an abstention set (see the module docstring)."""
    p = Path(path)
    if not p.is_file():
        raise MissingFile(f"no abstention question file {p}")
    out = []
    for n, d in jsonl_records(p):
        if not isinstance(d.get("answerable"), bool):
            raise InvalidInput(f"{p}:{n}: needs a boolean \"answerable\"")
        out.append({"id": str(d.get("id") or n), "question": d["question"], "answerable": d["answerable"],
                    "kind": d.get("kind", "")})
    return out


def default_abstain_questions() -> list[dict]:
    """ppkit's own abstention set for the reference 10-Ks."""
    return load_abstain_questions(ABSTAIN_QUESTIONS)


def score_abstention(rows: list[dict]) -> dict:
    """Precision and recall of abstention over rows with ``answerable`` and ``abstained``."""
    said = [r for r in rows if r["abstained"]]
    unans = [r for r in rows if not r["answerable"]]
    hit = sum(1 for r in said if not r["answerable"])
    return {"n": len(rows), "unanswerable": len(unans), "abstained": len(said), "correct_abstentions": hit,
            "precision": hit / len(said) if said else None, "recall": hit / len(unans) if unans else None}


def run_abstain_bench(index: SearchIndex, questions: list[dict], *, k: int = 5) -> dict:
    """Ask every question; returns ``{"k", "scores", "by_kind", "rows"}``."""
    rows = []
    for q in questions:
        ans = index.ask(q["question"], k)
        first = next((ln for ln in ans.text.split("\n") if ln.strip() and not ln.startswith("[")), "")
        rows.append({**q, "abstained": abstained(ans.text), "first_line": first[:300],
                     "sections": [s.section_id for s in ans.sections]})
    kinds: dict[str, dict] = {}
    for r in rows:
        d = kinds.setdefault(r["kind"], {"n": 0, "abstained": 0, "answerable": r["answerable"]})
        d["n"] += 1
        d["abstained"] += int(r["abstained"])
    return {"k": k, "scores": score_abstention(rows), "by_kind": kinds, "rows": rows}


def abstain_markdown(result: dict) -> str:
    """The scores, the counts by kind, and every wrong call."""
    s = result["scores"]
    fmt = lambda v: "n/a" if v is None else f"{v:.2f}"  # noqa: E731
    out = [f"k={result['k']}: {s['n']} questions ({s['unanswerable']} unanswerable); abstained on {s['abstained']}, "
           f"{s['correct_abstentions']} of them unanswerable: precision {fmt(s['precision'])}, recall {fmt(s['recall'])}",
           "", "| kind | answerable | questions | abstained |", "| --- | --- | --- | --- |"]
    for kind, d in result["by_kind"].items():
        out.append(f"| {kind} | {'yes' if d['answerable'] else 'no'} | {d['n']} | {d['abstained']} |")
    wrong = [r for r in result["rows"] if r["abstained"] == r["answerable"]]
    if wrong:
        out.append("")
        out += [f"- {r['id']} {'abstained on an answerable question' if r['answerable'] else 'answered'}: "
                f"{r['question']} -> {r['first_line'][:160]}" for r in wrong]
    return "\n".join(out)
