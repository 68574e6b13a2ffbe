"""ppkit.bench.runs.answers: the numeric check, the judge's plumbing, the log and scorecard formats.

The judge's model calls go through ppkit.llm (tested there against a local server); here a
stand-in client that returns a fixed verdict checks only how verdicts are parsed and written.
"""

from types import SimpleNamespace

import pytest

from ppkit.bench.runs.answers import format_log_entry, judge_answer, numeric_check, run_answers_bench, scorecard_markdown
from ppkit.bench.data.reference import parse_run_log, parse_scorecard


@pytest.mark.parametrize("answer, truth, ok", [
    ("Approximately **60.08%** of growth", "~60.1% (4,306 / 7,167)", True),
    ("In FY2022, 54.16% was converted", "0.542", True),  # a fraction and its percentage
    ("a decrease of $607 million", "-$607 million", True),  # the sign is not required
    ("about 57.1%", "57.40%", True),  # within 2%
    ("about 51.0%", "57.40%", False),
    ("The ratio is 1.78x", "1.57x", False),
    ("In 2022, 2.36x", "~2.4x (indicating strong liquidity)", True),
])
def test_numeric_check(answer, truth, ok):
    got = numeric_check(answer, truth)
    assert got["applicable"] is True and got["ok"] is ok


def test_numeric_check_not_applicable_and_years_ignored():
    assert numeric_check("No.", "No evidence of crypto-related revenue")["applicable"] is False
    got = numeric_check("Revenue rose in 2022", "Revenue grew in FY2022 by 24.7%")
    assert (got["truth"], got["ok"]) == (24.7, False)


class _StandIn:
    """Returns a fixed reply shaped like ppkit.llm's LLMResult (data = parsed JSON)."""

    def __init__(self, data):
        self.data, self.prompts = data, []

    def generate(self, prompt, *, system=None, schema=None):
        self.prompts.append((prompt, system, schema))
        return SimpleNamespace(text=str(self.data), data=self.data)


def test_judge_answer_parses_and_rejects():
    c = _StandIn({"verdict": "Green", "note": "matches 60.1%"})
    assert judge_answer(c, "q?", "~60.1%", "60.08%") == {"verdict": "green", "note": "matches 60.1%"}
    prompt, system, schema = c.prompts[0]
    assert "<ground_truth>\n~60.1%\n</ground_truth>" in prompt and "yellow" in system
    assert schema["properties"]["verdict"]["enum"] == ["green", "yellow", "red"]
    with pytest.raises(ValueError, match="no valid verdict"):
        judge_answer(_StandIn({"verdict": "blue"}), "q", "t", "a")


def test_log_entry_reads_back_as_a_reference_log(tmp_path):
    sec = SimpleNamespace(node_id="0066", breadcrumb="AMD > Embedded")
    entry = format_log_entry(7, "For AMD, what?", [sec], "It is 60.08% (ID: 0066).", "~60.1%", truth_source="x.xlsx",
                             judge={"verdict": "green", "note": "ok"}, numeric=numeric_check("60.08%", "~60.1%"))
    p = tmp_path / "AMD_2022_comparison.log"
    p.write_text("Company: AMD_2022\n\n" + entry, encoding="utf-8")
    log = parse_run_log(p)
    (e,) = log["entries"]
    assert (e["qno"], e["nodes"], e["cited"]["ids"], log["k"]) == (7, [("0066", "AMD > Embedded")], ["0066"], 1)
    assert e["ground_truth"].startswith("~60.1%")


def test_scorecard_round_trip(tmp_path):
    rows = [{"company": "AMD", "qno": 1, "question": "q1", "truth": "~60.1%", "answer": "60.08%", "verdict": "green",
             "note": "ok", "numeric": numeric_check("60.08%", "~60.1%")},
            {"company": "AMD", "qno": 2, "question": "q2", "truth": "1.57x", "answer": "1.78x", "verdict": "red",
             "note": "wrong", "numeric": numeric_check("1.78x", "1.57x")},
            {"company": "AMD", "qno": 3, "question": "q3", "truth": "", "answer": "text", "verdict": None,
             "note": "no ground truth", "numeric": numeric_check("text", "")}]
    md = scorecard_markdown(rows, k=5)
    assert "**Numeric check:** 1 / 2 within ±2%" in md
    p = tmp_path / "card.md"
    p.write_text(md, encoding="utf-8")
    sc = parse_scorecard(p)
    assert sc["score"] == (1, 2) and sc["counts"] == {"green": 1, "yellow": 0, "red": 1}


def test_run_answers_bench_writes_log_and_scorecard(tmp_path):
    sec = SimpleNamespace(node_id="0005", breadcrumb="Acme > Statements", section_id="Acme#0005")
    index = SimpleNamespace(ask=lambda q, k: SimpleNamespace(text="Gross profit was 10,603.", sections=[sec]))
    qs = [{"qid": "Acme-1", "qno": 1, "doc": "Acme", "text": "Gross profit?", "answer": "$10,603 million"}]
    out = run_answers_bench(index, qs, fmt="comprehensive", k=5, out_dir=tmp_path, benchmark="t",
                            client=_StandIn({"verdict": "green", "note": "same number"}))
    assert out["rows"][0]["numeric"]["ok"] is True and out["rows"][0]["verdict"] == "green"
    assert parse_scorecard(out["scorecard_path"])["score"] == (1, 1)
    assert parse_run_log(out["log_path"])["entries"][0]["nodes"] == [("0005", "Acme > Statements")]


def test_run_answers_bench_scores_metric_questions_strictly(tmp_path):
    sec = SimpleNamespace(node_id="0005", breadcrumb="Acme > Statements", section_id="Acme#0005")
    answers = {"Quick ratio?": "The quick ratio is 1.59.", "Capex?": "Capital spending = $4.6 billion."}
    index = SimpleNamespace(ask=lambda q, k: SimpleNamespace(text=answers[q], sections=[sec]))
    qs = [{"qid": "1", "doc": "Acme", "text": "Quick ratio?", "answer": "1.57", "question_type": "metrics-generated"},
          {"qid": "2", "doc": "Acme", "text": "Capex?", "answer": "$4600.00", "question_type": "metrics-generated"}]
    out = run_answers_bench(index, qs, fmt="financebench", k=5, out_dir=tmp_path, benchmark="t",
                            client=_StandIn({"verdict": "green", "note": "close"}))
    # the lenient check (2%, no units) passes 1.59 for 1.57 and misses $4.6 billion = $4,600 million;
    # the strict judge (1%, units read) does the opposite
    assert [r["numeric"]["ok"] for r in out["rows"]] == [True, False]
    assert [r["strict"]["ok"] for r in out["rows"]] == [False, True]
    assert "**Strict numeric judge:** 1 / 2 metric questions" in out["scorecard_markdown"]
