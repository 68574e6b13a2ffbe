"""The strict offline answer judge (ppkit.bench.measures.answer_judge) and its run (ppkit.bench.runs.answer_judge)."""

from types import SimpleNamespace

import pytest

from ppkit.answer.block import AnswerBlock
from ppkit.bench.measures.answer_judge import figures, judge_block, not_applicable, summarize, yes_no
from ppkit.bench.runs.answer_judge import judge_markdown, run_answer_judge


def verdict(text, kind, reference, question=""):
    return judge_block(text, kind, reference, question)["verdict"]


@pytest.mark.parametrize("text, kind, reference, question, expected", [
    # correct: the reference's first figure, a formula's result, a change between two of its figures
    ("Computed quick ratio of AMD for FY2022: 9,981 / 6,369 = 1.57", "computed", "1.57", "", "correct"),
    ("Total revenues grew 24.7%.", "figure", "Growth = (52,862 − 42,380) / 42,380 ≈ 24.7%.", "", "correct"),
    ("Revenue rose by 10,482 million.", "figure", "Revenue went from $42,380 million to $52,862 million.", "", "correct"),
    ("Revenue rose 24.73%.", "figure", "Revenue went from $42,380 million to $52,862 million.", "", "correct"),
    ("Capital spending was $4,625 million.", "figure", "$4.60", "What was capex (in USD billions)?", "correct"),
    ("The current ratio is 2.36.", "computed", "~2.4x", "", "correct"),  # rounds to the reference's precision
    ("No, Boeing paid no dividend in 2022.", "yes_no", "No. Dividends were suspended.", "", "correct"),
    ("Debt to equity is not meaningful: equity is negative.", "not_meaningful",
     "Not meaningful due to negative equity", "", "correct"),
    # wrong: a figure agreeing with nothing, percent vs ratio, sign, the opposite yes or no
    ("The margin was 0.042.", "figure", "4.2%", "", "wrong"),
    ("The return on assets was 0.02.", "computed", "-0.02", "", "wrong"),
    ("x = 1.59", "computed", "1.57", "", "wrong"),  # 1.3% off and not 1.57 rounded
    ("Yes, it paid $1.2 billion.", "yes_no", "No. Dividends were suspended.", "", "wrong"),
    ("Debt to equity: 57,000 / 15,883 = 3.59", "computed", "Not meaningful due to negative equity", "", "wrong"),
    # missing: nothing stated, or only the reference's inputs
    ("Revenue rose to 52,862 from 42,380.", "passage", "Growth = (52,862 − 42,380) / 42,380 ≈ 24.7%.", "", "missing"),
    ("The segment grew strongly.", "passage", "~25% of revenue", "", "missing"),
    ("Boeing faces several lawsuits.", "passage", "Yes. Multiple lawsuits have been filed.", "", "missing"),
    # abstained and unjudged
    ("Not found: the sections never mention Intel.", "not_found", "1.57", "", "abstained"),
    ("Revenue was 23.6 billion.", "figure", "The company operates in North America and Europe.", "", "unjudged"),
    # which questions are judged depends on the reference alone: a block saying "not computed" changes nothing
    ("The figure asked is not computed here; the sources show: Revenue 23.6 billion.", "inputs",
     "The company operates in North America and Europe.", "", "unjudged"),
])
def test_every_verdict(text, kind, reference, question, expected):
    assert verdict(text, kind, reference, question) == expected


def test_not_figures_years_days_references_and_glued():
    text = ("On December 31, 2022 and 31 December 2021 (Note 7, Item 1A, Section 13(a), page 45, line 12, "
            "Exhibit 10.1, File No. 001-12345, (1-7657)) CET1 FY22 10-K Q3 rose 5.2% to $1.2 billion")
    assert [f["text"] for f in figures(text)] == ["5.2%", "$1.2 billion"]
    # so a block stating only such numbers states no figure: missing, not wrong
    assert verdict("See Note 12 and Item 7 of the 10-K for FY2022 (page 45).", "passage", "1.57") == "missing"


def test_a_period_length_and_list_markers_are_no_figures():
    ref = "Lower marketing expenses. FY2023 here is the 12 months ended on January 28, 2023 (the three months ended too)."
    assert [f["text"] for f in figures(ref)] == []
    assert [f["text"] for f in figures("Two closed: (1) Current Health and (2) Two Peaks, for $47 million")] == ["$47 million"]
    # a figure before "months" that no "ended" follows, and a lone bracketed figure, are figures
    assert [(f["value"], f["negative"]) for f in figures("Backlog covers 12 months; a loss of (1) million")] == [
        (12.0, False), (1.0, True)]
    assert judge_block("SG&A fell $16 million.", "passage", ref)["verdict"] == "unjudged"


def test_signs_in_words_and_explicit_plus():
    got = figures("FCF declined 18%, a loss of $2 billion, a 10% decrease, +$6,543 million")
    assert [(f["value"], f["negative"]) for f in got] == [(18.0, True), (2.0, True), (10.0, True), (6543.0, False)]
    assert verdict("Free cash flow declined 18%.", "figure", "FCF declined ~18% vs OCF decline of ~7%") == "correct"


def test_a_fall_by_a_figure_is_minus_it():
    # words between the fall and its "by": the reference's change is -0.8, so +0.8 disagrees and -0.8 agrees
    ref = "There was a slight decline in gross margins by 0.8% in FY2022."
    assert [(f["value"], f["negative"], f["size"]) for f in figures(ref)] == [(0.8, True, False)]
    assert [f["negative"] for f in figures("Sales fell sharply in Europe by $2 billion.")] == [True]
    assert verdict("The gross margin changed by -0.80 percentage points.", "computed", ref) == "correct"
    assert verdict("The gross margin rose by 0.80 percentage points.", "computed", ref) == "wrong"
    # "increased by" keeps its sign; a fall with a figure between is not a fall by the later figure
    assert [f["negative"] for f in figures("Revenue increased by 5%.")] == [False]
    assert [f["negative"] for f in figures("Costs fell 3% in 2021 and rose in 2022 by 2%.")] == [True, False]


def test_points_are_percent_and_names_glued_to_figures_are_none():
    ref = "Operating margin for 3M in FY2022 has decreased by 1.7% due to COVID-19 costs."
    assert [(f["value"], f["unit"], f["negative"]) for f in figures(ref)] == [(1.7, "percent", True)]
    assert [f["value"] for f in figures("It paid $3M.")] == [3.0]  # with a currency sign, an amount
    block = "3M's operating margin was 19.10% in FY2022 and 20.84% in FY2021, a change of -1.74 percentage points"
    assert verdict(block, "computed", ref) == "correct"
    assert verdict(block.replace("-1.74", "1.74"), "computed", ref) == "wrong"


def test_percent_and_ratio_are_kept_apart():
    assert verdict("The payout ratio was 54.2%.", "computed", "0.542") == "wrong"
    assert verdict("The payout ratio was 0.542.", "computed", "0.542") == "correct"
    assert verdict("The multiple is 0.24x.", "computed", "0.24x") == "correct"


def test_an_amount_without_a_scale_may_be_a_table_in_millions():
    assert verdict("| Net revenue | 23,601 | 16,434 |", "passage", "~$23.6B total") == "correct"


def test_false_abstention_and_helpers():
    j = judge_block("Not found: no section mentions it.", "not_found", "Yes, it did.")
    assert j["verdict"] == "abstained" and j["false_abstention"]
    assert not judge_block("Not found.", "not_found", "The figure is not disclosed.")["false_abstention"]
    assert yes_no("No, it did not.") == "no" and yes_no("Not found") is None
    assert not_applicable("Since JPM is a bank, gross margin is not a relevant metric.")
    assert not_applicable("Performance is not measured through operating margin")


def test_summarize_rates_and_lengths():
    rows = [{"verdict": v, "false_abstention": v == "abstained", "block_chars": c, "answer_chars": 1000}
            for v, c in (("correct", 50), ("wrong", 100), ("abstained", 200), ("unjudged", 300))]
    s = summarize(rows)
    assert (s["n"], s["judged"], s["correct"], s["correct_rate"], s["wrong_rate"]) == (4, 3, 1, 1 / 3, 1 / 3)
    assert (s["false_abstentions"], s["block_chars_median"], s["answer_chars_mean"]) == (1, 150, 1000)


def test_run_judges_each_store_and_k():
    blocks = {"Quick ratio?": AnswerBlock("Quick ratio: 9,981 / 6,369 = 1.57", "computed"),
              "Dividends?": AnswerBlock("Not found: nothing on dividends.", "not_found")}
    asked = []

    def ask(q, k, docs=None):
        asked.append((q, k, docs))
        return SimpleNamespace(block=blocks[q], sections=[])

    index = SimpleNamespace(ask=ask, docs=["ACME"], manifest={"documents": [{"doc": "ACME", "metadata": {}}]})
    qs = [{"qid": "q1", "text": "Quick ratio?", "answer": "1.57", "doc": "ACME", "question_type": "metrics-generated"},
          {"qid": "q2", "text": "Dividends?", "answer": "Yes, $0.40 a share.", "doc": "ACME", "company": "Acme"},
          {"qid": "q3", "text": "Other?", "answer": "", "doc": "ACME"}]  # no reference: not asked
    res = run_answer_judge(index, qs, ks=(3, 5), stores=("shared", "filing"), benchmark="t")
    assert len(res["rows"]) == 8 and ("Quick ratio?", 3, ["ACME"]) in asked and ("Quick ratio?", 5, None) in asked
    s = res["results"]["filing"]["5"]
    assert (s["correct"], s["abstained"], s["false_abstentions"]) == (1, 1, 1)
    assert res["by_type"]["shared"]["3"]["metrics-generated"]["correct"] == 1
    table = judge_markdown(res)
    assert "| t, shared, k=3 | 2 | 2 | 1 | 0 | 0 | 1 | 0 | 0.50 | 0.00 | 1 |" in table and "Acme, filing, k=5" in table


@pytest.mark.parametrize("text, reference, expected", [
    # "X+": at least X at its written precision, and of X's order (under ten times X)
    ("Amortization and acquisition costs were $4.2 billion.", "Majority (~$3B+ impact)", "correct"),
    ("Amortization was $2.7 billion.", "Majority (~$3B+ impact)", "correct"),  # $3B written to the billion
    ("Amortization was $2.1 billion.", "Majority (~$3B+ impact)", "wrong"),
    ("Amortization was $42 billion.", "Majority (~$3B+ impact)", "wrong"),
    # "~" is the written precision: ~25% is 24.5-25.5, so 25.6% is not stated
    ("Data Center was 25.6% of revenue (6,043 / 23,601, $ millions).", "~25% (Data Center ~$6.0B out of ~$23.6B total)", "missing"),
    ("Data Center was 25.4% of revenue.", "~25% (Data Center ~$6.0B out of ~$23.6B total)", "correct"),
    # a figure given as the size of a change agrees in size, whichever sign the block writes
    ("Inventories: (1,401) million in 2022", "Yes, inventory increase (~$1B+) hurt cash flow", "correct"),
    ("Inventories: (401) million in 2022", "Yes, inventory increase (~$1B+) hurt cash flow", "wrong"),
    ("The margin was -5.0%.", "margin of 5%", "wrong"),  # not a change: the sign counts
])
def test_at_least_precision_and_size(text, reference, expected):
    assert verdict(text, "figure", reference) == expected


def test_a_plus_between_two_numbers_is_an_addition():
    f = figures("(24,177 + 24,118) / 67,580")
    assert not any(x["at_least"] for x in f)


def test_a_quarterly_report_or_release_is_its_own_filing_when_indexed_under_its_name():
    from ppkit.bench.runs.computed import indexed_doc

    meta = {"ACME_2023Q2_10Q": {"company": "Acme Corp", "fiscal_year": 2023, "form_type": "10-Q"},
            "ACME_2022_10K": {"company": "Acme Corp", "fiscal_year": 2022, "form_type": "10-K"}}
    index = SimpleNamespace(docs=list(meta), manifest={"documents": [{"doc": d, "metadata": m} for d, m in meta.items()]})
    assert indexed_doc(index, "ACME_2023Q2_10Q") == "ACME_2023Q2_10Q"
    assert indexed_doc(index, "ACME_2022_10K") == "ACME_2022_10K"
    assert indexed_doc(index, "ACME_2023Q4_EARNINGS") is None  # not indexed: never another filing of Acme
