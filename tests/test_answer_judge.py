"""The strict offline answer judge (ppkit.bench.measures.answer_judge) and its run (ppkit.bench.runs.answer_judge).

Every sentence here was written for these tests (a made-up tool maker, Norwell, and its peers); none is a
benchmark question or reference answer.
"""

from types import SimpleNamespace

import pytest

from ppkit.answer.block import AnswerBlock
from ppkit.bench.measures.answer_judge import (confidence_bins, figures, hedged, judge_block, not_applicable,
                                               out_of_scope, states_fact, summarize, yes_no)
from ppkit.bench.runs.answer_judge import judge_markdown, run_answer_judge, sealed_view


def verdict(text, kind, reference, question="", **kw):
    return judge_block(text, kind, reference, question, **kw)["verdict"]


@pytest.mark.parametrize("text, kind, reference, question, expected", [
    # correct: the block's first figure (or its stated result) is the reference's answer figure or a change
    ("2.14 (current assets 4,280 / current liabilities 2,000)", "computed", "2.14", "", "correct"),
    ("Current ratio: 4,280 / 2,000 = 2.14", "computed", "2.14", "", "correct"),  # a result after "="
    ("Orders grew 12.5%.", "figure", "Growth = (9,000 − 8,000) / 8,000 = 12.5%", "", "correct"),
    ("Orders rose by 1,000 million.", "figure", "Orders went from $8,000 million to $9,000 million.", "", "correct"),
    ("Capex was $3,410 million.", "figure", "$3.41", "How much was capex (in USD billions)?", "correct"),
    ("The interest cover is 6.26x.", "computed", "~6.3x", "", "correct"),  # within the reference's precision
    ("Not meaningful: a lender reports no cost of goods.", "not_meaningful", "Not meaningful for a lender", "",
     "correct"),
    # wrong: figures of which none agrees; percent against ratio; sign
    ("The margin was 0.118.", "figure", "11.8%", "", "wrong"),
    ("Return on equity was 0.07.", "computed", "-0.07", "", "wrong"),
    ("Interest cover: 6.60x", "computed", "6.26x", "", "wrong"),
    ("Cost of sales / revenue: 61.2%", "computed", "Not meaningful for a lender", "", "wrong"),
    ("Not meaningful: no inventory.", "not_meaningful", "41 days", "", "wrong"),
    # missing: the answer figure not first, only inputs, nothing
    ("Current assets were 4,280 and the ratio 2.14.", "computed", "2.14", "", "missing"),
    ("Orders rose to 9,000 from 8,000.", "passage", "Growth = (9,000 − 8,000) / 8,000 = 12.5%", "", "missing"),
    ("The tools segment did well.", "passage", "~40% of sales", "", "missing"),
    # abstained and unjudged
    ("Not found: no section names a current ratio.", "not_found", "2.14", "", "abstained"),
    ("Sales were 5.1 billion.", "figure", "The company sells saws and drills.", "", "unjudged"),
])
def test_every_verdict(text, kind, reference, question, expected):
    assert verdict(text, kind, reference, question) == expected


def test_a_figure_that_repeats_the_question_is_no_answer():
    q = "What share of sales did the 4 largest customers take in 2023?"
    # "4" repeats the question; the first figure of the answer is 31%
    assert verdict("The 4 largest customers took 31% of sales.", "figure", "31%", q) == "correct"
    # only the question's number: no figure stated, so not wrong
    assert verdict("Norwell names its 4 largest customers.", "passage", "31%", q) == "missing"
    assert judge_block("The 4 largest customers took 31%.", "figure", "31%", q)["stated"] == ["31%"]


def test_hedged_blocks_are_never_correct_or_wrong():
    ref = "2.14 (4,280 / 2,000)"
    assert verdict("Not stated directly; the closest passage: the ratio was 2.14.", "closest", ref) == "partial"
    assert verdict("Not stated directly; the closest passage: margins widened by 7.7.", "closest", ref) == "missing"
    # an answer kind whose text hedges counts as a hedge too
    assert verdict("The sources do not state it; the closest passage shows 9.9.", "passage", ref) == "missing"
    assert verdict("The ratio is not computed here; inputs: 4,280 and 2,000.", "inputs", ref) == "missing"
    assert hedged("x", "closest") and hedged("The sources do not say.", "figure") and not hedged("2.14", "computed")


def test_out_of_scope_only_not_found_is_right():
    ref = "Not found: the filing covers 2023 only."
    assert out_of_scope(ref) and out_of_scope("anything", "out_of_scope") and not out_of_scope("2.14")
    assert verdict("Not found: no filing covers 2019.", "not_found", ref) == "correct"
    assert verdict("Revenue was $5.1 billion.", "figure", ref) == "wrong"
    assert verdict("Yes, Norwell paid a dividend.", "yes_no", ref) == "wrong"
    assert verdict("Not stated directly; the closest passage: ...", "closest", ref) == "missing"
    j = judge_block("Not found.", "not_found", ref)
    assert not j["false_abstention"]


def test_yes_no_only_from_a_yes_no_block():
    ref = "No. The board suspended the dividend in 2023."
    assert verdict("No, the dividend was suspended.", "yes_no", ref) == "correct"
    assert verdict("Yes, it paid $0.30 a share.", "yes_no", ref) == "wrong"
    # the same words without the yes_no kind are no yes or no
    assert verdict("No dividend was declared.", "passage", ref) == "missing"
    ref = "Yes. Net debt fell from $2.0 billion to $1.6 billion."
    assert verdict("Yes, net debt fell to $1.6 billion.", "yes_no", ref) == "correct"
    assert verdict("Yes, net debt fell to $1.1 billion.", "yes_no", ref) == "wrong"
    assert verdict("Net debt was $9.9 billion.", "figure", ref) == "wrong"


def test_key_facts_answer_a_question_without_figures():
    ref = "Margins narrowed because steel costs rose and freight rates climbed."
    facts = ["higher steel costs", "freight rates"]
    text = "Gross margin narrowed on higher steel costs and elevated freight rates."
    assert verdict(text, "passage", ref, qtype="narrative", key_facts=facts) == "correct"
    assert verdict("Gross margin narrowed on higher steel costs.", "passage", ref, qtype="narrative",
                   key_facts=facts) == "correct"  # half the facts
    assert verdict("Margins narrowed in the period.", "passage", ref, qtype="narrative", key_facts=facts) == "missing"
    assert verdict("Not stated directly; the closest passage: higher steel costs and freight rates.", "closest", ref,
                   key_facts=facts) == "partial"
    assert verdict(text, "passage", ref) == "unjudged"  # no key facts, no figure: not judged
    # a "which" reference: the name is the fact, its figure the answer figure
    ref = "Outdoor Power ($812 million, the largest of three segments)"
    assert verdict("Outdoor Power, with $812 million.", "figure", ref, key_facts=["Outdoor Power"]) == "correct"
    assert verdict("Hand Tools, with $604 million.", "figure", ref, key_facts=["Outdoor Power"]) == "wrong"
    assert verdict("Outdoor Power was the largest.", "passage", ref, key_facts=["Outdoor Power"]) == "correct"


def test_states_fact_reads_stems_and_most_words():
    assert states_fact("Prices were raised across regions.", "raised prices")
    assert states_fact("The plant closures in Ohio reduced output.", "plant closure in Ohio")
    assert not states_fact("The plant in Ohio stayed open.", "plant closures in Ohio")


def test_not_figures_years_days_references_and_glued():
    text = ("On June 30, 2023 and 30 June 2022 (Note 4, Item 7A, Section 9(b), page 61, line 8, "
            "Exhibit 4.2, File No. 001-55555, (1-2345)) T2 FY23 10-Q Q2 rose 3.4% to $2.6 billion")
    assert [f["text"] for f in figures(text)] == ["3.4%", "$2.6 billion"]
    assert verdict("See Note 4 and Item 7 of the 10-Q for FY2023 (page 61).", "passage", "2.14") == "missing"


def test_a_period_length_and_list_markers_are_no_figures():
    ref = "Freight costs eased. The year is the 52 weeks ended on February 3, 2024."
    assert [f["text"] for f in figures(ref)] == []
    assert [f["text"] for f in figures("Two sold: (1) Birch Labs and (2) Alder Ltd, for $63 million")] == ["$63 million"]
    assert [(f["value"], f["negative"]) for f in figures("Warranty covers 24 months; a loss of (2) million")] == [
        (24.0, False), (2.0, True)]


def test_signs_in_words_and_explicit_plus():
    got = figures("Orders declined 9%, a loss of $3 billion, a 4% decrease, +$1,210 million")
    assert [(f["value"], f["negative"]) for f in got] == [(9.0, True), (3.0, True), (4.0, True), (1210.0, False)]
    assert verdict("Free cash flow declined 9%.", "figure", "FCF fell about 9% while sales held") == "correct"


def test_a_fall_by_a_figure_is_minus_it():
    ref = "Unit costs saw a modest decline across plants by 1.3% this year."
    assert [(f["value"], f["negative"], f["size"]) for f in figures(ref)] == [(1.3, True, False)]
    assert verdict("Unit costs changed by -1.30 percentage points.", "computed", ref) == "correct"
    assert verdict("Unit costs rose by 1.30 percentage points.", "computed", ref) == "wrong"
    assert [f["negative"] for f in figures("Margins rose by 2%.")] == [False]


def test_points_are_percent_and_names_glued_to_figures_are_none():
    ref = "Norwell's EBIT margin fell by 2.2% because of COVID-19 shutdowns."
    assert [(f["value"], f["unit"], f["negative"]) for f in figures(ref)] == [(2.2, "percent", True)]
    block = "A change of -2.20 percentage points: the margin was 14.3% against 16.5%"
    assert verdict(block, "computed", ref) == "correct"
    assert verdict(block.replace("-2.20", "2.20"), "computed", ref) == "wrong"


def test_percent_and_ratio_are_kept_apart():
    assert verdict("The payout ratio was 38.5%.", "computed", "0.385") == "wrong"
    assert verdict("The payout ratio was 0.385.", "computed", "0.385") == "correct"
    assert verdict("The multiple is 0.61x.", "computed", "0.61x") == "correct"


def test_an_amount_without_a_scale_may_be_a_table_in_millions():
    assert verdict("| Net sales | 5,148 | 4,902 |", "passage", "about $5.1B") == "correct"


@pytest.mark.parametrize("text, reference, expected", [
    ("Restructuring cost $4.6 billion.", "Most of it (about $4B+)", "correct"),
    ("Restructuring cost $3.6 billion.", "Most of it (about $4B+)", "correct"),  # $4B written to the billion
    ("Restructuring cost $3.1 billion.", "Most of it (about $4B+)", "wrong"),
    ("Restructuring cost $52 billion.", "Most of it (about $4B+)", "wrong"),
    ("Tools were 40.6% of sales.", "~40% (tools ~$2.0B of ~$5.0B)", "wrong"),  # ~40% is 39.5-40.5
    ("Tools were 40.4% of sales.", "~40% (tools ~$2.0B of ~$5.0B)", "correct"),
    ("Receivables: (2,310) million in 2023", "A receivables build-up (~$2B+) used cash", "correct"),
    ("The margin was -6.0%.", "margin of 6%", "wrong"),  # not a change: the sign counts
])
def test_at_least_precision_and_size(text, reference, expected):
    assert verdict(text, "figure", reference) == expected


def test_helpers():
    assert yes_no("No, it did not.") == "no" and yes_no("Not found") is None
    assert not_applicable("For an insurer, inventory turnover is not a relevant metric.")
    assert not any(x["at_least"] for x in figures("(1,200 + 3,400) / 9,000"))


def test_summarize_rates_hedges_and_abstentions():
    rows = [{"verdict": v, "false_abstention": v == "abstained", "hedged": v in ("partial",) or c == 250,
             "scope": c == 300, "block_chars": c, "answer_chars": 1000}
            for v, c in (("correct", 50), ("wrong", 100), ("partial", 200), ("missing", 250), ("abstained", 260),
                         ("correct", 300), ("unjudged", 400))]
    s = summarize(rows)
    assert (s["n"], s["judged"], s["correct"], s["partial"]) == (7, 6, 2, 1)
    assert (s["correct_rate"], s["wrong_rate"]) == (2 / 6, 1 / 6)
    assert (s["hedged"], s["hedged_rate"]) == (2, 2 / 5)  # over the judged rows the documents answer
    assert (s["false_abstentions"], s["false_abstention_rate"]) == (1, 1 / 6)
    assert s["block_chars_median"] == 250


def test_confidence_bins():
    rows = [{"verdict": v, "confidence": c} for v, c in
            (("correct", 0.9), ("wrong", 0.85), ("correct", 1.0), ("missing", 0.1), ("unjudged", 0.5))]
    bins = confidence_bins(rows)
    assert [(b["bin"], b["n"], b["correct"]) for b in bins] == [("0.0-0.2", 1, 0), ("0.8-1.0", 3, 2)]
    assert confidence_bins([{"verdict": "correct", "confidence": None}]) == []


def _fake_index(blocks, docs=("ACME",), verifications=None):
    asked = []

    def ask(q, k, docs=None):
        asked.append((q, k, docs))
        return SimpleNamespace(block=blocks[q], sections=[], verification=(verifications or {}).get(q))

    return asked, SimpleNamespace(ask=ask, docs=list(docs),
                                  manifest={"documents": [{"doc": d, "metadata": {}} for d in docs]})


def test_run_judges_each_store_and_k():
    asked, index = _fake_index({"Current ratio?": AnswerBlock("2.14 (4,280 / 2,000)", "computed"),
                                "Dividends?": AnswerBlock("Not found: nothing on dividends.", "not_found")})
    qs = [{"qid": "q1", "text": "Current ratio?", "answer": "2.14", "doc": "ACME", "question_type": "metric"},
          {"qid": "q2", "text": "Dividends?", "answer": "Yes, $0.30 a share.", "doc": "ACME", "company": "Acme"},
          {"qid": "q3", "text": "Other?", "answer": "", "doc": "ACME"}]  # no reference: not asked
    res = run_answer_judge(index, qs, ks=(3, 5), stores=("shared", "filing"), benchmark="t")
    assert len(res["rows"]) == 8 and ("Current ratio?", 3, ["ACME"]) in asked and ("Current ratio?", 5, None) in asked
    s = res["results"]["filing"]["5"]
    assert (s["correct"], s["abstained"], s["false_abstentions"]) == (1, 1, 1)
    assert res["by_type"]["shared"]["3"]["metric"]["correct"] == 1
    table = judge_markdown(res)
    assert "| t, shared, k=3 | 2 | 2 | 1 | 0 | 0 | 0 | 1 | 0 | 0.50 | 0.00 | 0.00 | 1 |" in table
    assert "Acme, filing, k=5" in table and "Current ratio?" not in table


def test_a_sealed_set_is_read_as_aggregates_across_corpora():
    secret_q, secret_ref = "How wide was Norwell's gross margin?", "38.2% (1,960 / 5,130)"
    _, tenk = _fake_index({secret_q: AnswerBlock("Gross margin was 38.2% (1,960 / 5,130).", "computed")},
                          verifications={secret_q: {"ok": True, "block": {"verified": True, "answered": True}}})
    closest = SimpleNamespace(text="Not stated directly; the closest passage: 7.", kind="closest", confidence=0.2)
    _, shelf = _fake_index({"Birch capex?": closest},
                           docs=("BIRCH_2021_10K",))
    qs = [{"qid": "s-1", "text": secret_q, "answer": secret_ref, "doc": "ACME", "corpus": "10k", "sealed": True,
           "question_type": "computed", "company": "Norwell"},
          {"qid": "s-2", "text": "Birch capex?", "answer": "$410 million", "doc": "BIRCH_2021_10K",
           "corpus": "shelf", "sealed": True, "question_type": "lookup", "company": "Birch"},
          {"qid": "s-3", "text": "Alder?", "answer": "$5 million", "doc": "ALDER", "corpus": "other", "sealed": True}]
    res = run_answer_judge(None, qs, ks=(5,), corpora={"10k": tenk, "shelf": shelf})
    assert res["sealed"] and res["not_asked"] == [{"qid": "s-3", "corpus": "other"}]
    view = sealed_view(res)
    flat = str(view) + judge_markdown(view)
    assert secret_q not in flat and secret_ref not in flat and "Gross margin" not in flat and "Birch capex" not in flat
    assert view["by_corpus"]["shared"]["5"]["10k"]["correct"] == 1
    assert view["by_corpus"]["shared"]["5"]["shelf"]["missing"] == 1
    assert view["failures"]["shared"]["5"][0]["qids"] == ["s-2"]
    assert "Failure kinds" in judge_markdown(view) and "other 1" in judge_markdown(view)
    assert [r["shown"] for r in view["rows"]] == ["verified", "none"]
    assert 'Shown "verified" (shared, k=5): 0 of 0 wrong blocks, 1 of 1 correct ones.' in judge_markdown(view)


def test_a_quarterly_report_or_release_is_its_own_filing_when_indexed_under_its_name():
    from ppkit.bench.runs.computed import indexed_doc

    meta = {"ACME_2023Q2_10Q": {"company": "Acme Corp", "fiscal_year": 2023, "form_type": "10-Q"},
            "ACME_2022_10K": {"company": "Acme Corp", "fiscal_year": 2022, "form_type": "10-K"}}
    index = SimpleNamespace(docs=list(meta), manifest={"documents": [{"doc": d, "metadata": m} for d, m in meta.items()]})
    assert indexed_doc(index, "ACME_2023Q2_10Q") == "ACME_2023Q2_10Q"
    assert indexed_doc(index, "ACME_2022_10K") == "ACME_2022_10K"
    assert indexed_doc(index, "ACME_2023Q4_EARNINGS") is None  # not indexed: never another filing of Acme


def test_the_answer_figure_is_the_first_one_no_formula_uses():
    # operands of a formula come before its result; the result is the answer figure
    assert verdict("Interest cover: 812 / 130 = 6.25x", "computed", "6.25x") == "correct"
    # a figure first, then the working with its own results: the first figure is the answer
    assert verdict("Tools made 62.5% of the rise (300 - 50 = 250; 900 - 500 = 400; 250 / 400)", "computed",
                   "~62.5% (250 / 400)") == "correct"
    # a fraction restated as a percent in brackets right after it is the same answer figure
    assert verdict("Fees were 0.742 (74.2%) of revenue (3,710 / 5,000)", "computed", "74.2%") == "correct"
    assert verdict("Fees were 0.742 of revenue, up from 70.1%", "computed", "74.2%") == "wrong"


def test_a_reference_that_leads_with_its_answer_keeps_it_over_its_working():
    ref = "41.2 days (average receivables (1,200 + 1,050) / 2 = 1,125 / sales 9,966 x 365)"
    assert verdict("41.2 days: receivable days = 365 × 1,125 / 9,966", "computed", ref) == "correct"
    assert verdict("Average receivables were 1,125.", "figure", ref) == "missing"  # an input, not the answer
