"""``ppkit bench answers``: every question through ``ask``, judged by an LLM and by a strict numeric check.

Online only: the synthesizer and the judge are Gemini (through :mod:`ppkit.llm.client`).
Offline the command says that it needs a key and stops (:class:`NeedsKey`).

* The **judge** gets the question, the ground truth and the answer, and returns a
  traffic light with a one-line note, on the reference scorecards' rubric
  (:data:`RUBRIC`).
* The **numeric check** is independent of the judge: when the ground truth holds a
  number (its first one, e.g. ``~60.1%`` in ``~60.1% (4,306 / 7,167)``), the answer
  passes when one of its numbers is within a relative ``tolerance`` (default 2%) of
  it, a fraction and a percentage being the same number (``0.542`` = ``54.2%``).
  It is reported beside the verdict so that a lenient judge is visible.
* The run writes a timestamped log in the reference's log format and a scorecard in
  the reference's Markdown format (which :func:`ppkit.bench.data.reference.parse_scorecard` reads back).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from ...core.config import cache_dir, project_root
from ...core.errors import InvalidInput, PpkitError
from ...indexing.index import SearchIndex
from ...llm.client import GeminiClient
from ..measures.judge import judge_numeric

__all__ = ["NeedsKey", "RUBRIC", "numeric_check", "judge_answer", "run_answers_bench", "format_log_entry",
           "scorecard_markdown"]

LIGHT = {"green": "🟢", "yellow": "🟡", "red": "🔴"}

RUBRIC = """You grade a financial question-answering system against a ground truth.
Traffic lights:
- green: the answer matches, encompasses, or explicitly improves upon the ground truth.
- yellow: partial match; correct logic but a minor data extraction variance.
- red: fail, hallucination, or contradicts reality (including "the context does not contain the data").
Small rounding differences are fine. Judge only what the answer says, not how it is formatted.
Return JSON: {"verdict": "green" | "yellow" | "red", "note": "<one short sentence>"}."""

JUDGE_SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": ["green", "yellow", "red"]}, "note": {"type": "string"}},
    "required": ["verdict", "note"],
}


class NeedsKey(PpkitError, RuntimeError):
    """An online benchmark was asked for without a Gemini key."""


_NUM = re.compile(r"(?<![\w.])[-−]?\$?\d[\d,]*(?:\.\d+)?\s*%?")


def _numbers(text: str) -> list[tuple[float, bool]]:
    """(value, is_percent) of every number in ``text``; bare years are skipped."""
    out = []
    for m in _NUM.finditer(text):
        raw = m.group(0).replace("−", "-").replace("$", "").replace(",", "").strip()
        pct = raw.endswith("%")
        raw = raw.rstrip("%").strip()
        try:
            v = float(raw)
        except ValueError:
            continue
        if not pct and re.fullmatch(r"(?:19|20)\d\d", raw):
            continue
        out.append((v, pct))
    return out


def numeric_check(answer: str, truth: str, *, tolerance: float = 0.02) -> dict:
    """Whether ``answer`` states the ground truth's (first) number within a relative ``tolerance``.

    Returns ``{"applicable", "truth", "matched", "ok", "tolerance"}``; not applicable when
    the ground truth holds no number. A fraction matches its percentage (``0.542`` ~ ``54.2%``)
    and the sign is ignored (``-$607M`` ~ "a decrease of $607 million").

    >>> numeric_check("about 54.16%", "0.542")["ok"]
    True
    """
    truth_nums = _numbers(truth)
    if not truth_nums:
        return {"applicable": False, "truth": None, "matched": None, "ok": None, "tolerance": tolerance}
    t, _ = truth_nums[0]
    targets = {abs(t)}
    if abs(t) < 1.5:
        targets.add(abs(t) * 100)  # a fraction written as a percentage
    elif abs(t) <= 100:
        targets.add(abs(t) / 100)
    for v, _ in _numbers(answer):
        for target in targets:
            if target == 0:
                ok = abs(v) < 1e-9
            else:
                ok = abs(abs(v) - target) / target <= tolerance
            if ok:
                return {"applicable": True, "truth": t, "matched": v, "ok": True, "tolerance": tolerance}
    return {"applicable": True, "truth": t, "matched": None, "ok": False, "tolerance": tolerance}


def judge_answer(client, question: str, truth: str, answer: str) -> dict:
    """The LLM judge's verdict: ``{"verdict": "green"|"yellow"|"red", "note"}``.

    ``client`` is anything with ``generate(prompt, system=..., schema=...)`` returning an
    object with ``data`` (parsed JSON) and ``text`` (a :class:`ppkit.llm.client.GeminiClient`).
    """
    prompt = f"<question>\n{question}\n</question>\n<ground_truth>\n{truth}\n</ground_truth>\n<answer>\n{answer}\n</answer>"
    res = client.generate(prompt, system=RUBRIC, schema=JUDGE_SCHEMA)
    data = getattr(res, "data", None) or {}
    verdict = str(data.get("verdict", "")).strip().lower()
    if verdict not in LIGHT:
        raise InvalidInput(f"the judge returned no valid verdict: {getattr(res, 'text', data)!r}")
    return {"verdict": verdict, "note": str(data.get("note", "")).strip()}


def format_log_entry(n: int, question: str, sections, answer_text: str, truth: str, *, truth_source: str,
                     judge: dict | None = None, numeric: dict | None = None) -> str:
    """One question in the reference log format (``USER QUERY [n]``, the chosen nodes, response, ground truth)."""
    bar = "=" * 100
    lines = ["=" * 80, f"USER QUERY [{n}]: {question}", "-" * 80, "--- BOT INTERNAL LOG ---", bar,
             f"Final Context Selection (Top {len(sections)} Unique Nodes):"]
    lines += [f"  -> Node {s.node_id}   | {s.breadcrumb}" for s in sections]
    lines += [bar, "", "--- BOT SYNTHESIZED RESPONSE ---", answer_text.strip(), "",
              f"--- GROUND TRUTH (From {truth_source}) ---", truth.strip(), ""]
    if judge is not None:
        lines += ["--- JUDGE ---", f"{LIGHT.get(judge['verdict'], 'n/a')} {judge['verdict'] or 'not judged'}: "
                                   f"{judge['note']}"]
    if numeric is not None and numeric.get("applicable"):
        lines += [f"numeric check (±{numeric['tolerance']:.0%}): {'pass' if numeric['ok'] else 'FAIL'} "
                  f"(truth {numeric['truth']}, matched {numeric['matched']})"]
    return "\n".join(lines) + "\n"


def _short(text: str, n: int = 60) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[: n - 1] + "…"


def scorecard_markdown(rows: list[dict], *, k: int, title: str = "Proxy-Pointer Consolidated Benchmark Scorecard") -> str:
    """A scorecard in the reference format, plus the numeric check column.

    ``rows``: ``{"company", "qno", "question", "truth", "answer", "verdict", "note", "numeric"}``.
    """
    head = ["# " + title, "", f"### Traffic Light Evaluation Summary (k={k} Run)", "",
            "**Key:**", "🟢 **Green:** Matches, encompasses, or explicitly improves upon the Ground Truth.",
            "🟡 **Yellow:** Partial match; correct logic but minor data extraction variance.",
            "🔴 **Red:** Fail / Hallucination / Contradicts reality.", "",
            "| Company | Qno | Question | Ground Truth | Bot Answer | Score | Numeric check | Judge note |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    body = []
    for r in rows:
        num = r["numeric"]
        nc = "n/a" if not num.get("applicable") else ("pass" if num["ok"] else "FAIL")
        cells = [r["company"], str(r["qno"]), _short(r["question"], 50), _short(r["truth"], 40), _short(r["answer"], 60),
                 LIGHT.get(r["verdict"], "n/a"), nc, _short(r["note"], 80)]
        body.append("| " + " | ".join(c.replace("|", "/").replace("$", "\\$") for c in cells) + " |")
    green = sum(1 for r in rows if r["verdict"] == "green")
    judged = [r for r in rows if r["verdict"] in LIGHT]
    applicable = [r for r in rows if r["numeric"].get("applicable")]
    passed = sum(1 for r in applicable if r["numeric"]["ok"])
    tol = rows[0]["numeric"]["tolerance"] if rows else 0.02
    strict = [r for r in rows if (r.get("strict") or {}).get("applicable")]
    tail = ["", f"**Final Score:** {green} / {len(judged)} 🟢" + (f" ({len(rows) - len(judged)} not judged: no ground truth)"
                                                                 if len(judged) < len(rows) else ""),
            f"**Numeric check:** {passed} / {len(applicable)} within ±{tol:.0%} of the ground truth's number "
            f"(questions whose ground truth holds a number)."]
    if strict:
        tail.append(f"**Strict numeric judge:** {sum(1 for r in strict if r['strict']['ok'])} / {len(strict)} metric "
                    "questions within 1% of the ground truth, unit and sign agreeing (ppkit.bench.measures.judge).")
    return "\n".join(head + body + tail) + "\n"


def run_answers_bench(index: SearchIndex, questions: list[dict], *, fmt: str, k: int = 5, out_dir=None, tolerance: float = 0.02,
                      benchmark: str = "", client=None) -> dict:
    """Answer, judge and check every question; write the log and the scorecard.

    Args:
        index: the index to answer from (its config decides the synthesizer: Gemini online).
        questions: question dicts with ``text`` and ``answer`` (multimodal queries have no
            ground truth: the reference run's response is not used; they are judged "n/a").
        client: the judge's LLM client (default: :class:`ppkit.llm.client.GeminiClient`).

    Returns:
        ``{"rows", "log_path", "scorecard_path", "scorecard_markdown"}``.
    """
    if client is None:
        client = GeminiClient()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    root = project_root()
    out = Path(out_dir) if out_dir else ((root / "outputs" / "bench") if root else cache_dir() / "outputs" / "bench")
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / f"{benchmark or fmt}_k{k}_{stamp}.log"
    card_path = out / f"{benchmark or fmt}_k{k}_{stamp}_scorecard.md"
    rows = []
    with open(log_path, "w", encoding="utf-8") as log:
        log.write(f"=== PPKIT vs GROUND TRUTH BENCHMARK ({benchmark or fmt}, k={k}, {stamp}) ===\n\n")
        for n, q in enumerate(questions, start=1):
            truth = q.get("answer") or ""
            ans = index.ask(q["text"], k)
            if truth:
                verdict = judge_answer(client, q["text"], truth, ans.text)
            else:
                verdict = {"verdict": None, "note": "no ground truth in this question set: not judged"}
            num = numeric_check(ans.text, truth, tolerance=tolerance)
            # the strict judge (1%, unit, sign) on FinanceBench's computed-metric questions
            strict = (judge_numeric(ans.text, truth, q["text"]) if q.get("question_type") == "metrics-generated"
                      else {"applicable": False, "ok": None, "reason": "not a metric question"})
            log.write(format_log_entry(q.get("qno", n), q["text"], ans.sections, ans.text, truth,
                                       truth_source=benchmark or fmt, judge=verdict, numeric=num))
            log.flush()
            rows.append({"qid": q["qid"], "company": q.get("doc", ""), "qno": q.get("qno", n), "question": q["text"],
                         "truth": truth, "answer": ans.text, **verdict, "numeric": num, "strict": strict,
                         "sections": [s.section_id for s in ans.sections]})
    md = scorecard_markdown(rows, k=k)
    card_path.write_text(md, encoding="utf-8")
    return {"rows": rows, "log_path": str(log_path), "scorecard_path": str(card_path), "scorecard_markdown": md}
