"""Answers on PDF-extracted filings (issue 28, the FinanceBench shelf): never a figure that does not answer.

A cost row in brackets is subtracted by its size, and a margin outside ±100% is never stated; a statement of part of
a year is never read as a fiscal year's; a "$" split off to a cell's end is read; a question asking WHICH one is
answered by the row it names (highest or lowest), never by a total; a formula the question defines and ppkit does
not compute gets a "Not computed" block, never an unrelated passage; a document id's words and field
abbreviations never make a question unanswered."""

from __future__ import annotations

from ppkit.answer.abstain import missing_from
from ppkit.answer.metrics import cell_value, compute_metric, interim
from ppkit.answer.synth import ExtractiveSynthesizer
from ppkit.bench.measures.answer_judge import judge_block
from ppkit.retrieval.analyze import Analysis
from ppkit.retrieval.types import Section


def _section(node_id, title, rows, doc="ACME_2023_10K", caption="(In millions)", rank=1):
    text = "\n".join([f"## {title}", caption] + rows)
    n = len(text.split("\n"))
    return Section(doc=doc, node_id=node_id, breadcrumb=f"{doc} > Item 8 > {title}", line_start=10,
                   line_end=9 + n, text=text, rank=rank, score=1.0, sent_ranges=((10, 9 + n),),
                   line_numbers=tuple(range(10, 10 + n)))


# an income statement as the PDF text layer writes it: "$" split from the number, costs in brackets
INCOME = _section("0040", "Consolidated Statements of Income", [
    "| | 2023 | 2022 |",
    "| Net sales | $ 14,694 $ | 14,544 $ |",
    "| Cost of sales | (11,969) | (11,724) |",
    "| Operating income | 1,500 | 1,400 |",
    "| Net income | $ 1,048 $ | 805 $ |",
])
INTERIM = _section("0020", "Condensed Consolidated Statements of Earnings", [
    "| | Six Months Ended | |",
    "| | July 29, 2023 | July 30, 2022 |",
    "| | 2023 | 2022 |",
    "| Revenue | $ 19,050 | $ 20,400 |",
    "| Cost of sales | 14,680 | 15,700 |",
], doc="ACME_2024Q2_10Q")
SEGMENTS = _section("0077", "Note 18 - Segment Results", [
    "| | 2021 | 2020 |",
    "| Consumer Banking | 12,517 | 12,600 |",
    "| Investment Bank | 14,605 | 12,000 |",
    "| Asset Management | 4,077 | 3,500 |",
    "| Corporate | (473) | 100 |",
    "| Total net revenue | 30,726 | 28,200 |",
], caption="Net revenue by segment (in millions)")
PLAN = Section(doc="ACME_2023_10K", node_id="0300", breadcrumb="ACME_2023_10K > Exhibit 10.4 > Deferred Plan",
               line_start=500, line_end=501, text="## Deferred Plan\nEach Participant may have up to two (2) "
               "Retirement Accounts at any time, payable as the accounts payable schedule sets out.", rank=2,
               score=0.5, sent_ranges=((500, 501),), line_numbers=(500, 501))


def _ask(question, sections):
    _, info = ExtractiveSynthesizer().synthesize(question, sections, Analysis.of(question))
    return info["block"]


def test_a_dollar_sign_split_to_the_cells_end_is_read():
    assert (cell_value("14,694 $"), cell_value("$ 14,694 $"), cell_value("$")) == (14694.0, 14694.0, None)


def test_a_cost_in_brackets_is_subtracted_by_its_size():
    res = compute_metric("What is ACME's gross margin for FY2023?", [INCOME])
    assert res.ok and res.value == 18.54  # (14,694 - 11,969) / 14,694, not (14,694 + 11,969) / 14,694
    b = _ask("What is ACME's gross margin for FY2023?", [INCOME])
    assert b.kind == "computed" and "18.54%" in b.text and "181" not in b.text


def test_a_margin_beyond_its_revenue_is_never_stated():
    wrong = _section("0041", "Consolidated Statements of Income", [
        "| | 2023 | 2022 |", "| Net sales | 100 | 90 |", "| Cost of sales | 250 | 80 |"])
    res = compute_metric("What is ACME's gross margin for FY2023?", [wrong])
    assert not res.ok and "within ±100%" in res.missing[-1]


def test_a_statement_of_six_months_is_never_a_fiscal_years():
    assert interim(INTERIM) and not interim(INCOME)
    b = _ask("What is ACME's gross margin for FY2023?", [INTERIM])
    assert b.kind == "not_found" and "22.9" not in b.text
    res = compute_metric("What is ACME's gross margin for the first half of FY2023?", [INTERIM])
    assert res.ok and res.value == 22.94  # asked for part of a year, it is the statement asked


def test_which_segment_is_the_row_named_never_the_total():
    b = _ask("Which of ACME's business segments had the lowest net revenue in 2021?", [SEGMENTS])
    assert b.kind == "figure" and b.text.startswith("Corporate") and "30,726" not in b.text
    assert judge_block(b.text, b.kind, "Corporate. Its net revenue was -$473 million.")["verdict"] == "correct"
    b = _ask("Which segment had the highest net revenue in 2021?", [SEGMENTS])
    assert b.text.startswith("Investment Bank") and "14,605" in b.text
    # a drag is the lowest change: in amount, as a base of 100 turning to -473 makes no percent change
    b = _ask("Which segment dragged down the net revenue in 2021?", [SEGMENTS])
    assert b.kind == "figure" and b.text.startswith("Corporate: down 573 million (-473 million in 2021 vs 100 million")
    b = _ask("Which segment is the one ACME will sell?", [SEGMENTS])  # no superlative, no sentence: not determined
    assert b.kind == "inputs" and b.text.startswith("Which one is not determined")


def test_a_formula_not_computed_is_said_never_an_unrelated_passage():
    q = ("What is ACME's FY2023 days payable outstanding (DPO)? DPO is defined as: 365 * (average accounts payable "
         "between FY2022 and FY2023) / (FY2023 COGS + change in inventory between FY2022 and FY2023).")
    b = _ask(q, [PLAN, INCOME])
    # a day count is computed now: without the balance sheet the block names the inputs missing, never a passage
    assert b.kind == "not_found" and "accounts payable (balance sheet, 2023)" in b.text and "Participant" not in b.text
    assert judge_block(b.text, b.kind, "93.86")["verdict"] == "abstained"  # not wrong
    total = _ask("What is ACME's FY2022 - FY2023 2 year total of dividends per share?", [PLAN, INCOME])
    assert total.kind == "not_found" and total.text.startswith("Not computed: the 2 year total")
    assert "Participant" not in total.text


def test_a_document_ids_words_and_abbreviations_are_never_missing_names():
    s = _section("0050", "Consolidated Balance Sheets", ["| | 2016 | 2015 |", "| Total current assets | 9 | 8 |"],
                 doc="BLOCK_2016_10K")
    q = "What is Block's FY2016 net AR and net PPNE?"
    assert missing_from(q, [s], Analysis.of(q))["names"] == []


def test_a_margins_course_is_compared_with_the_year_before():
    b = _ask("Does ACME have an improving gross margin profile as of FY2023?", [INCOME])
    # "improving" a margin is its rise: No, with both years' figures
    assert b.kind == "yes_no" and b.text.startswith("No (down from FY2022): ")
    assert "18.54%" in b.text and "19.39%" in b.text  # 2,820 / 14,544 in 2022
    assert "a change of -0.850 percentage points" in b.text
    assert judge_block(b.text, b.kind, "No, there has been a minor decline of 0.8% in gross margins.")["verdict"] \
        == "correct"


def test_a_banks_quarterly_statement_still_says_the_margin_does_not_apply():
    bank = _section("0090", "Consolidated Statements of Income", [
        "| | Three Months Ended March 31, | |", "| | 2021 | 2020 |", "| Total net interest income | 13,000 | 14,000 |",
        "| Total net revenue | 33,000 | 29,000 |", "| Provision for credit losses | (4,000) | 8,000 |",
        "| Net income | $ 14,300 | $ 2,865 |"], doc="BANK_2021Q1_10Q")
    b = _ask("Are the bank's gross margins historically consistent?", [bank])
    assert b.kind == "not_meaningful" and "financial company" in b.text


def test_a_statement_the_text_layer_ran_into_lines_is_read_row_by_row():
    text = ("### CONSOLIDATED STATEMENTS OF OPERATIONS\n(in millions, except per share data)\nYear Ended December 31,\n"
            "2018 2019\nNet product sales $ 141,915 $ 160,408 Net service sales 90,972 120,114 Total net sales 232,887 "
            "280,522 Operating expenses: Cost of sales 139,156 165,536 Fulfillment 34,027 40,232\n"
            "Operating income 12,421 14,541 Net income attributable to noncontrolling interests 45 29 Net income attributable "
            "to Shop common shareholders $ 10,073 $ 11,588 Basic earnings per share: $ 20.68 $ 23.46")
    n = text.count("\n") + 1
    s = Section(doc="SHOP_2019_10K", node_id="0111", breadcrumb="SHOP_2019_10K > CONSOLIDATED STATEMENTS OF OPERATIONS",
                line_start=1, line_end=n, text=text, rank=1, score=1.0, sent_ranges=((1, n),),
                line_numbers=tuple(range(1, n + 1)))
    res = compute_metric("What is the FY2019 net income?", [s])
    assert res.ok and res.value == 11588 and res.inputs[0].line == 6
    res = compute_metric("What is the FY2019 gross margin?", [s])
    assert res.ok and res.value == 40.99  # (280,522 - 165,536) / 280,522: "Operating expenses:" is not the label


def test_an_adjusted_measure_asked_is_never_the_textbook_formulas_value():
    cash = _section("0042", "Consolidated Statements of Cash Flows", [
        "| | 2023 | 2022 |", "| Depreciation and amortization | 586 | 600 |"])
    b = _ask("What was ACME's adjusted (non-GAAP) EBITDA for FY 2023?", [INCOME, cash])
    assert b.kind == "inputs" and b.text.startswith("The adjusted (non-GAAP) EBITDA asked is the company's own")
    assert _ask("What was ACME's EBITDA for FY 2023?", [INCOME, cash]).kind == "computed"


def test_two_named_things_compared_are_not_a_pick_among_many():
    b = _ask("Compare growth in Investment Bank vs Asset Management from 2020 to 2021. Which grew faster?", [SEGMENTS])
    assert b.kind == "computed" and "Investment Bank increased 21.7%" in b.text and "Asset Management increased 16.5%" \
        in b.text
