"""ppkit.answer.quantity and the one classifier (ppkit.answer.asked): the share, ratio or change asked computed
from table rows (a segment's share, a share of the growth, two growths), a block of another quantity or an
unsupported yes/no worded as kind ``inputs`` (judged missing, never wrong)."""

from __future__ import annotations

from ppkit.answer.asked import asked_type
from ppkit.answer.passages import section_passages
from ppkit.answer.quantity import compute_quantity, parse_quantity
from ppkit.answer.synth import ExtractiveSynthesizer
from ppkit.answer.verify import asked_for
from ppkit.bench.measures.answer_judge import judge_block
from ppkit.retrieval.metric_table import detect_metric
from ppkit.retrieval.types import Section

# a segment note as the HTML converter writes it: one-cell captions (period, units) above the dated header
SEGMENTS = """The following table summarizes net revenue by segment.

| Year Ended |
| December 31, 2022 | December 25, 2021 |
| (In millions) |
| Net revenue: |
| Widgets | $300 | $200 |
| Gadgets | 900 | 700 |
| Total net revenue | $1,200 | $900 |
| Total operating expenses | 1,000 | 800 |"""


def _section(text: str = SEGMENTS) -> Section:
    n = text.count("\n") + 1
    return Section("ACME", "0007", "ACME > Note 4 - Segments", 1, n, text, 1, 1.0,
                   line_numbers=tuple(range(1, n + 1)))


def _block(question: str):
    return compute_quantity(question, asked_type(question), [_section()])[0]


def test_one_cell_captions_stay_in_the_header_and_the_dated_row_names_the_columns():
    rows = {p.row_label: p for p in section_passages(_section()) if p.kind == "row"}
    assert rows["Widgets"].label == "Net revenue, Widgets"
    assert rows["Widgets"].header == ("December 31, 2022", "December 25, 2021")
    assert (rows["Widgets"].units, rows["Widgets"].header_line) == ("millions", 4)


def test_a_segment_share_of_the_total_is_computed_from_its_rows():
    b = _block("What percentage of total revenue in FY2022 came from the Widgets segment?")
    assert b.kind == "computed"
    assert b.text == "Widgets (net revenue) was 25.0% of Total net revenue in 2022 (300 / 1,200, $ millions)"
    assert [c.line_start for c in b.citations] == [4, 7, 9]  # the dated header line, then each row


def test_a_share_of_the_growth_and_a_bracketed_sum_of_parts():
    b = _block("What percentage of total revenue growth from FY2021 to FY2022 is attributable to the Widgets segment?")
    assert b.text == ("Widgets (net revenue) was 33.3% of the change in Total net revenue from 2021 to 2022 "
                      "(300 - 200 = 100; 1,200 - 900 = 300; 100 / 300, $ millions)")
    both = _block("What proportion of total revenue in FY2022 is attributable to the two segments (Widgets + Gadgets)?")
    assert "100.0%" in both.text and "(300 + 900) / 1,200" in both.text


def test_a_ratio_and_two_growths_compared():
    r = _block("What is the ratio of Widgets revenue to total net revenue in 2022?")
    assert "was 0.25 (25.0%)" in r.text
    c = _block("Did total operating expenses grow faster than total revenue?")
    assert c.text.startswith("Total operating expenses increased 25.0% from 2021 to 2022 (800 to 1,000); "
                             "Total net revenue increased 33.3% from 2021 to 2022 (900 to 1,200)")


def test_a_part_larger_than_its_whole_or_an_unnamed_row_computes_nothing():
    q = "What percentage of Widgets revenue came from Total net revenue in 2022?"
    assert compute_quantity(q, asked_type(q), [_section()]) is None
    q = "What percentage of total revenue came from the Sprockets segment in 2022?"
    assert compute_quantity(q, asked_type(q), [_section()]) is None


def test_an_amount_where_a_percentage_is_asked_is_never_the_answer_line():
    q = "What percentage of its revenue did ACME spend on research in 2022?"
    text = "ACME spent $45 million on research in 2022, its largest research program ever recorded."
    block = ExtractiveSynthesizer().synthesize(q, [_section(text)])[1]["block"]
    assert block.kind == "inputs" and block.text.startswith("The percentage asked is not computed here")
    v = judge_block(block.text, block.kind, "12.5%", q)
    assert v["verdict"] == "missing"  # the same text as a passage is judged wrong
    assert judge_block(block.text, "passage", "12.5%", q)["verdict"] == "wrong"


def test_a_yes_no_question_without_a_clear_answer_says_the_sources_do_not_say():
    q = "Did ACME disclose any cryptocurrency holdings?"
    block = ExtractiveSynthesizer().synthesize(q, [_section("ACME holds cash in banks and disclosed no other assets "
                                                            "beyond its plants in Ohio this year.")])[1]["block"]
    assert block.kind == "inputs" and block.text.startswith("The sources do not say")


def test_one_classifier_serves_the_passages_and_the_verifier():
    q = "For AMEX,, Did provisions for credit losses increase faster than total revenue?"
    assert asked_type(q).yes_no and asked_for(q)["asks"] == "yes_no"
    assert asked_for("What percentage of revenue came from Europe in FY2022?") == {"asks": "percent", "years": ["2022"]}
    assert asked_type("What is the ratio of share repurchases to dividends?").unit == "ratio"
    p = parse_quantity("For X, what proportion of total revenue in FY2022 is attributable to the Commercial segment?",
                       asked_type("what proportion of total revenue is attributable to the Commercial segment?"))
    assert (p.op, p.parts, p.whole) == ("share", ("Commercial segment",), "total revenue")  # no "the"
    assert detect_metric("What is the ratio of total debt to total equity in FY2022?").name == "debt-to-equity ratio"


# charges by cost line, as the HTML converter writes a column-wise table: a one-cell title, then one name per
# value column (the label column's left out), no year in the header; the period is in the sentence above
CHARGES = """A summary of pre-tax charges taken in 2022 as a result of the plant closure is as follows:

| Plant closure charges |
| Cost of sales | Selling expenses | Impairment of intangible assets | Total |
| Impairment of intangible assets | $ — | $ — | $ 300 | $ 300 |
| Severance | 40 | 10 | — | 50 |
| Total | $ 40 | $ 10 | $ 300 | $ 350 |"""


def test_a_column_wise_table_gives_its_total_column_and_its_bare_total_row_its_title():
    rows = {p.row_label: p for p in section_passages(_section(CHARGES)) if p.kind == "row"}
    assert rows["Severance"].header == ("Cost of sales", "Selling expenses", "Impairment of intangible assets", "Total")
    assert rows["Total"].label == "Plant closure charges, Total"  # named by its table's title
    q = "What percentage of plant closure charges were due to intangible asset impairments?"
    block, used = compute_quantity(q, asked_type(q), [_section(CHARGES)])
    assert block.kind == "computed" and block.text.startswith("Impairment of intangible assets was 85.7% of total "
                                                              "Plant closure charges (300 / 350, column Total)")
    assert [p.row_label for p in used] == ["Impairment of intangible assets", "Total"]
    # the period asked must be the one the caption names: none read for another year
    assert compute_quantity(q.replace("?", " in 2021?"), asked_type(q + " 2021"), [_section(CHARGES)]) is None
    assert compute_quantity(q.replace("?", " in 2022?"), asked_type(q + " 2022"), [_section(CHARGES)]) is not None


def test_the_total_of_a_table_a_sentence_introduces_is_the_amount():
    intro = CHARGES.split("\n")[0]
    text = "Some context first.\n\n" + CHARGES.replace("| Plant closure charges |\n", "")  # no title: the sentence ranks
    q = "What was the total pre-tax impact of the plant closure charges in 2022?"
    answer = ExtractiveSynthesizer().synthesize(q, [_section(text)])[1]["block"]
    assert answer.kind == "figure" and answer.text.startswith("Total: total $350 (")
    assert intro.rstrip(":") in answer.text and 2022 in asked_type(q).years
    assert judge_block(answer.text, answer.kind, "$350 million")["verdict"] == "correct"


def test_how_much_of_a_growth_attributable_to_a_part_is_a_share_of_the_growth():
    q = "Estimate how much of total net revenue growth is attributable to Widgets revenue increase"
    assert asked_type(q).unit == "amount"  # worded as an amount, asked as a share
    block = _block(q)
    assert block.kind == "computed" and block.text.startswith("Widgets (net revenue) was 33.3% of the change in "
                                                              "Total net revenue from 2021 to 2022")


def test_the_impact_of_an_amount_on_a_margin_is_the_amount_in_points_of_revenue():
    from test_metrics import _section as statement_section
    ops = statement_section("0011", "Consolidated Statements of Operations", [
        "| | 2022 | 2021 |", "| Total revenues | 1,000 | 800 |", "| Operating income | 50 | 90 |"], 10, doc="ACME")
    prose = Section("ACME", "0020", "ACME > MD&A > Segment results", 40, 41,
                    "Restructuring charges in 2021 were $5 million.\nRestructuring charges in 2022 were $30 million, "
                    "mostly severance.", 2, 0.9, line_numbers=(40, 41))
    q = "Quantify the impact of restructuring charges on the operating margin in FY2022."
    block = ExtractiveSynthesizer().synthesize(q, [ops, prose])[1]["block"]
    assert block.kind == "computed" and block.text == (
        "Restructuring charges in 2022 were $30 million, 3.00% of revenue (30 / 1,000, $ millions), against an "
        "operating margin of 5.00% (50.00 / 1,000)")
    assert {c.node for c in block.citations} == {"0011", "0020"}
    assert judge_block(block.text, block.kind, "~$30M (3% of revenue)")["verdict"] == "correct"


# an MD&A cash-flow summary: the statement's names, not the question's ("working capital", "operating cash flow")
CASH_SUMMARY = """| | 2022 | 2021 |
| Cash flows - operating activities: |
| Net loss | (500) | (400) |
| Changes in assets and liabilities | 600 | (300) |
| Net cash provided/(used) by operating activities | 400 | 200 |"""


def test_a_share_consumed_by_working_capital_reads_the_cash_flow_sign():
    q = "What percentage of operating cash flow in FY2022 was consumed by changes in working capital?"
    block, used = compute_quantity(q, asked_type(q), [_section(CASH_SUMMARY)])
    assert [p.row_label for p in used] == ["Changes in assets and liabilities",
                                           "Net cash provided/(used) by operating activities"]
    assert block.text.startswith("Changes in assets and liabilities consumed 0% of Net cash provided/(used) by "
                                 "operating activities in 2022: it was a source of cash, 150.0% of it (600 / 400")
    q21 = q.replace("FY2022", "FY2021")
    block21 = compute_quantity(q21, asked_type(q21), [_section(CASH_SUMMARY)])[0]
    assert block21.text.startswith("Changes in assets and liabilities consumed 150.0% of Net cash")  # 300 / 200


def test_used_for_over_an_amount_that_is_no_cash_flow_is_a_plain_share():
    q = "What percentage of total net revenue in 2022 was used for Widgets?"
    assert _block(q).text.startswith("Widgets (net revenue) was 25.0% of Total net revenue in 2022")
