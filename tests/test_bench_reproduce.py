"""ppkit.bench.runs.reproduce on the real reference files (and, for ppkit's side, the real 10-K index)."""

import pytest

from bench_support import bench_dir, tenk_docs
from ppkit.bench.data.loaders import load_comprehensive
from ppkit.bench.runs.reproduce import per_question_comparison, reference_sections, reference_summary, summary_markdown


@pytest.mark.corpus
def test_reference_summary_table():
    s = reference_summary(bench_dir())
    assert [(r["set"], r["k"], r["score"], r["red"]) for r in s["rows"]] == [
        ("Comprehensive", 5, "40/40", 0), ("Comprehensive", 3, "37/40", 3),
        ("FinanceBench", 5, "26/26", 0), ("FinanceBench", 3, "25/26", 1)]
    assert "| Comprehensive | 3 | 37/40 | 37 | 0 | 3 | AMEX Q7, AMEX Q10, PepsiCo Q9 |" in summary_markdown(s)


@pytest.mark.corpus
def test_reference_sections_and_recall_by_id():
    b = bench_dir()
    docs = tenk_docs()
    qs = load_comprehensive(b / "comprehensive_questions.xlsx")
    refs = reference_sections(docs, b, qs)
    assert refs["AMEX-7"] == {"3": ["AMEX#0066", "AMEX#0099", "AMEX#0079"],
                              "5": ["AMEX#0066", "AMEX#0099", "AMEX#0079", "AMEX#0289", "AMEX#0084"]}
    # a result whose "ppkit" sections are exactly the reference k=5 gold: recall 1 at both k
    from ppkit.bench.data.gold import comprehensive_gold

    gold = comprehensive_gold(qs, b / "comprehensive_k5", docs)
    fake = {"per_question": [{"qid": q["qid"], "gold": list(gold.qrels[q["qid"]]),
                              "results": {"3": {"recall": 1.0}, "5": {"recall": 1.0}}} for q in qs]}
    rows = per_question_comparison(docs, b, fake, questions=qs)
    assert len(rows) == 40 and all(r["reference_k5"] == 1.0 for r in rows)
    by = {r["qid"]: r for r in rows}
    assert by["AMEX-7"]["reference_k3"] == 0.5 and by["Pepsico-9"]["reference_k3"] == 0.0
    assert by["AMD-1"]["reference_k3"] == 1.0


@pytest.mark.corpus
@pytest.mark.model
def test_failure_analysis_needed_and_lacked():
    import ppkit
    from ppkit.bench.runs.reproduce import failure_analysis, failure_markdown

    bench_dir()
    index = ppkit.reference_index("10k", progress=False)
    rows = failure_analysis(index, bench_dir(), k=3)
    assert [r["qid"] for r in rows] == ["AMEX-7", "AMEX-10", "Pepsico-9"]
    assert [[n["section_id"] for n in r["needed"]] for r in rows] == [
        ["AMEX#0066", "AMEX#0084"], ["AMEX#0063", "AMEX#0069"], ["PepsiCo#0095"]]
    assert [r["lacked"] for r in rows] == [["AMEX#0084"], ["AMEX#0069"], ["PepsiCo#0095"]]
    for r in rows:  # ppkit's side is measured, whatever it is: k sections, coverage within what was needed
        assert len(r["ppkit"]) == 3 and r["ppkit_filter"] == [r["company"]]
        assert set(r["ppkit_covers"]) <= {n["section_id"] for n in r["needed"]}
        assert set(r["ppkit_covers"]) <= set(r["ppkit_covers_k5"])
    assert "#### PepsiCo Q9" in failure_markdown(rows)
