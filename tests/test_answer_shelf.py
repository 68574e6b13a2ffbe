"""Answers on PDF-extracted filings (issue 28, the FinanceBench shelf): never a figure that does not answer.

A cost row in brackets is subtracted by its size, and a margin outside ±100% is never stated; a statement of part of
a year is never read as a fiscal year's; a "$" split off to a cell's end is read; a question asking WHICH one is
answered by the row it names (highest or lowest), never by a total; a formula the question defines and ppkit does
not compute gets a "Not computed" block, never an unrelated passage; a document id's words and field
abbreviations never make a question unanswered."""

from __future__ import annotations

from ppkit.answer.scope import missing_from
from ppkit.answer.metrics import cell_value, compute_metric, interim
from ppkit.answer.synth import ExtractiveSynthesizer
from test_passages import STATE
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
    _, info = ExtractiveSynthesizer(selector=STATE).synthesize(question, sections, Analysis.of(question))
    return info["block"]


def test_a_dollar_sign_split_to_the_cells_end_is_read():
    assert (cell_value("14,694 $"), cell_value("$ 14,694 $"), cell_value("$")) == (14694.0, 14694.0, None)


def test_a_cost_in_brackets_is_subtracted_by_its_size():
    res = compute_metric("What gross margin did ACME earn in fiscal 2023?", [INCOME])
    assert res.ok and res.value == 18.54  # (14,694 - 11,969) / 14,694, not (14,694 + 11,969) / 14,694
    b = _ask("What gross margin did ACME earn in fiscal 2023?", [INCOME])
    assert b.kind == "computed" and b.text.startswith("18.54%") and "181" not in b.text


def test_a_margin_beyond_its_revenue_is_never_stated():
    wrong = _section("0041", "Consolidated Statements of Income", [
        "| | 2023 | 2022 |", "| Net sales | 100 | 90 |", "| Cost of sales | 250 | 80 |"])
    res = compute_metric("What gross margin did ACME earn in fiscal 2023?", [wrong])
    assert not res.ok and "within ±100%" in res.missing[-1]


def test_a_statement_of_six_months_is_never_a_fiscal_years():
    assert interim(INTERIM) and not interim(INCOME)
    b = _ask("What gross margin did ACME earn in fiscal 2023?", [INTERIM])
    assert b.kind != "computed" and "22.9" not in b.text
    res = compute_metric("What was ACME's gross margin over the first half of fiscal 2023?", [INTERIM])
    assert res.ok and res.value == 22.94  # asked for part of a year, it is the statement asked


def test_which_one_is_the_row_of_the_set_never_the_total():
    b = _ask("In 2021, which ACME segment brought in the least net revenue?", [SEGMENTS])
    assert b.kind == "figure" and b.text.startswith("Corporate") and "30,726" not in b.text
    assert judge_block(b.text, b.kind, "Corporate (-$473 million)", key_facts=["Corporate"])["verdict"] == "correct"
    b = _ask("Which ACME segment had the largest net revenue in 2021?", [SEGMENTS])
    assert b.text.startswith("Investment Bank") and "14,605" in b.text


def test_a_measure_whose_inputs_are_missing_says_which_never_an_unrelated_passage():
    q = "What were ACME's payable days (DPO) in fiscal 2023?"
    b = _ask(q, [PLAN, INCOME])
    assert b.kind == "closest" and "accounts payable" in b.text and "Participant" not in b.text
    assert judge_block(b.text, b.kind, "61.2 days")["verdict"] == "missing"  # a hedge: never wrong


def test_a_document_ids_words_and_abbreviations_are_never_missing_names():
    s = _section("0050", "Consolidated Balance Sheets", ["| | 2016 | 2015 |", "| Total current assets | 9 | 8 |"],
                 doc="WIDGETCO_2016_10K")
    q = "How large were Widgetco's AR and PP&E at the end of 2016?"
    assert missing_from(q, [s], Analysis.of(q))["names"] == []


def test_a_change_of_a_measure_answers_a_yes_no_question_on_its_direction():
    b = _ask("Did ACME's net income rise in fiscal 2023?", [INCOME])
    assert b.kind == "yes_no" and b.text.startswith("Yes") and "243" in b.text  # 1,048 - 805
    b = _ask("Did ACME's net income shrink in fiscal 2023?", [INCOME])
    assert b.kind == "yes_no" and b.text.startswith("No")


def test_an_adjusted_measure_asked_is_never_the_textbook_formulas_value():
    b = _ask("What was ACME's adjusted operating margin in fiscal 2023?", [INCOME])
    assert b.kind != "computed" and "10.2" not in b.text  # 1,500 / 14,694 is the unadjusted margin


def test_a_change_between_two_years_of_a_row():
    b = _ask("By what percent did Investment Bank net revenue grow in 2021?", [SEGMENTS])
    assert b.kind == "computed" and b.text.startswith("21.7%")  # (14,605 - 12,000) / 12,000
