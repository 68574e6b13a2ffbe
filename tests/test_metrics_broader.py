"""Broader computed figures and the metric answer block (ppkit.answer.metrics.metric_block), and abstention that
does not fire on a document's own names, abbreviations or generic words (ppkit.answer.abstain)."""

from test_passages import STATE
from ppkit.answer.scope import missing_from
from ppkit.answer.metrics import compute_metric, metric_block
from ppkit.answer.synth import ExtractiveSynthesizer
from ppkit.retrieval.analyze import Analysis, QueryFilters
from ppkit.finance.read import read_measure as detect_metric
from ppkit.retrieval.types import Section
from test_metrics import _section as statement_section


def _section(node_id, title, rows, first_line, doc="Initech", caption="(In millions)"):
    return statement_section(node_id, title, rows, first_line, doc=doc, caption=caption)


OPS = _section("0011", "Consolidated Statements of Operations", [
    "| | 2022 | 2021 |",
    "| Total revenues | 1,000 | 800 |",
    "| Cost of products | 400 | 330 |",
    "| Cost of services | 200 | 150 |",
    "| Income before income taxes | 250 | 180 |",
    "| Provision for income taxes | 50 | 45 |",
    "| Net income | 200 | 135 |",
    "| Earnings per share: |",
    "| Basic | $ 2.05 | $ 1.40 |",
    "| Diluted | $ 2.00 | $ 1.35 |",
    "| Shares used in per share calculation: |",
    "| Diluted | 100 | 100 |",
], 10)
BAL = _section("0010", "Consolidated Balance Sheets", [
    "| | December 31, 2022 | December 31, 2021 |",
    "| Total current assets | 700 | 600 |",
    "| Total assets | 2,100 | 1,900 |",
    "| Total current liabilities | 350 | 300 |",
], 40)
CASH = _section("0012", "Consolidated Statements of Cash Flows", [
    "| | 2022 | 2021 |",
    "| Net cash provided by operating activities | 500 | 420 |",
    "| Purchases of property and equipment, accrued but not paid | 30 | 20 |",
    "| Purchases of property and equipment | (120) | (100) |",
    "| Cash dividends paid | (80) | (60) |",
], 60)


def _value(question, sections):
    return compute_metric(question, sections).value


def test_component_rows_sum_and_effective_tax_rate():
    res = compute_metric("What is Initech's gross margin for FY2022?", [OPS])
    # no cost of sales row: cost of products + cost of services, then (1,000 - 600) / 1,000
    assert res.steps[0] == "400 + 200 = 600" and res.value == 40.0
    assert [li.line for li in res.inputs] == [13, 14, 15]
    block = metric_block(res, [OPS])
    assert block.text == "Initech's gross margin for FY2022 was 40.00% ((1,000 - (400 + 200)) / 1,000, $ millions)"
    assert block.kind == "computed" and [c.line_start for c in block.citations] == [13, 14, 15]
    assert _value("What was the effective tax rate in FY2022?", [OPS]) == 20.0  # 50 / 250


def test_year_over_year_change_and_average_of_year_ends():
    res = compute_metric("By how much did net income change from FY2021 to FY2022?", [OPS])
    assert res.value == 65.0 and res.steps == ("200 - 135 = 65.00",)  # the change asked, 200 - 135
    turnover = compute_metric("What is the FY2022 asset turnover?", [OPS, BAL])
    assert turnover.steps == ("(2,100 + 1,900) / 2 = 2,000", "1,000 / 2,000 = 0.500")  # three significant digits
    assert turnover.expr == "1,000 / ((2,100 + 1,900) / 2)"


def test_share_of_a_named_amount_and_a_defined_metric():
    q = "What percentage of operating cash flow was used for capital expenditures in FY2022?"
    res = compute_metric(q, [CASH])
    # the row "accrued but not paid" (written positive, not an outflow) is never read as capex
    assert res.value == 24.0 and res.steps == ("120 / 500 × 100 = 24.00%",)
    left = compute_metric("What percentage of operating cash flow remained after capital expenditures in FY2022?", [CASH])
    assert left.value == 76.0
    rate = compute_metric("What is the reinvestment rate defined as capex divided by (operating cash flow minus "
                          "dividends) for FY2022?", [CASH])
    assert rate.metric.name == "reinvestment rate" and rate.value == 28.57  # 120 / (500 - 80)
    # a part no named row gives is not replaced by the growth of the whole


def test_a_yes_no_questions_own_verb_is_no_change_of_the_base_after_a_lead_in():
    # "did X as a percent of sales increase?" asks X / sales in two periods, never X / (the change in sales)
    for q in ("Did net earnings as a percent of sales increase in Q2 of FY2023 compared to Q2 of FY2022?",
              "For Initech, did net earnings as a percent of sales increase in Q2 of FY2023 compared to Q2 of FY2022?",
              "In Q2 of FY2023, did net earnings as a percent of sales increase compared to Q2 of FY2022?"):
        assert detect_metric(q).name == "net income as a share of revenue", q


def test_per_share_and_units():
    eps = compute_metric("What was Initech's diluted EPS in FY2022?", [OPS])
    assert eps.value == 2.0 and eps.inputs[0].line == 21  # not the diluted share count below it
    assert metric_block(eps, [OPS]).text == "Initech's diluted EPS for FY2022 was $2.00 per share"
    thousands = _section("0013", "Consolidated Statements of Cash Flows", [
        "| | 2022 | 2021 |", "| Net cash provided by operating activities | 5,000 | 4,200 |",
        "| Purchases of property and equipment | (1,200) | (1,000) |"], 80, caption="(In thousands)")
    fcf = compute_metric("What is the FY2022 free cash flow?", [thousands])
    assert metric_block(fcf, [thousands]).text == "Initech's free cash flow for FY2022 was $3,800 thousand (5,000 - 1,200, $ thousands)"
    mixed = compute_metric("What is the FY2022 capex as a % of revenue?", [thousands, OPS])
    assert mixed.steps == ("1,200 / 1,000,000 × 100 = 0.120%",)  # the thousands brought to the first scale


BANK_OPS = _section("0021", "Consolidated Statements of Income", [
    "| | 2022 | 2021 |", "| Discount revenue | 30,722 | 24,546 |", "| Interest income | 11,967 | 8,971 |",
    "| Total revenues net of interest expense | 52,862 | 42,380 |", "| Pretax income | 9,368 | 10,515 |",
    "| Net income | 7,514 | 8,060 |"], 100, doc="Bank")
BANK_BAL = _section("0020", "Consolidated Balance Sheets", [
    "| | 2022 | 2021 |", "| Cash and cash equivalents | 33,914 | 22,028 |", "| Card Member loans | 104,255 | 85,257 |",
    "| Total assets | 228,354 | 188,548 |", "| Customer deposits | 110,239 | 84,382 |",
    "| Total liabilities | 203,643 | 165,371 |"], 120, doc="Bank")


def test_a_metric_that_does_not_fit_a_bank_says_why():
    gm = compute_metric("What is the gross margin for FY2022?", [BANK_OPS, BANK_BAL])
    block = metric_block(gm, [BANK_OPS, BANK_BAL])
    assert block.kind == "not_meaningful" and "no cost of sales" in block.text and "financial company" in block.text
    quick = metric_block(compute_metric("What is the quick ratio for FY2022?", [BANK_OPS, BANK_BAL]), [BANK_BAL])
    assert quick.kind == "not_meaningful" and "current and non-current" in quick.text
    # a statement that lacks a row it should have is not a bank: the inputs are missing, not meaningless
    found = metric_block(compute_metric("What is the FY2022 EBITDA?", [OPS, BAL]), [OPS])
    assert found.kind == "not_found" and found.text.startswith("Not found: Initech's EBITDA for FY2022 needs")


PAPER = Section(doc="VectorPainter", node_id="0012", breadcrumb="VectorPainter > Experiments", line_start=1,
                line_end=2, text="## Experiments\nFig. 5 shows the stroke style extraction on three references.",
                rank=1, score=1.0, sent_ranges=((1, 2),))
FILING = Section(doc="AMEX", node_id="0003", breadcrumb="AMEX > Item 7 > Results", line_start=1, line_end=2,
                 text="## Results\nAmerican Express Company net interest margin rose; depreciation and amortization fell.",
                 rank=1, score=1.0, sent_ranges=((1, 2),))


def test_generic_words_abbreviations_and_own_names_are_not_missing():
    assert missing_from("What does Figure 5 of VectorPainter show?", [PAPER]) == {"names": [], "years": []}
    assert missing_from("In Table 2 and Note 7 of VectorPainter, what is shown?", [PAPER])["names"] == []
    q = "For Amex, how did NIM and D&A and EPS and FX move? Compute the change."
    assert missing_from(q, [FILING])["names"] == []  # Amex: the document's own name; NIM: its initials; the rest known
    assert missing_from("How did Initech's NIM move?", [FILING])["names"] == ["Initech"]
    # the name the question selected the document with counts as the document's
    filters = QueryFilters(docs=["AMEX"], matched={"AMEX": "Amexco"}, companies=["AMEX"],
                           company_docs={"Amexco": ["AMEX"]})
    analysis = Analysis.of("What did Amexco report?", filters)
    assert missing_from(analysis.question, [FILING], analysis)["names"] == []
    # a subject that selected no indexed company is missing even where a section mentions it (a competitor)
    none = Analysis.of("What is American's margin?", QueryFilters(docs=None))
    assert missing_from(none.question, [FILING], none)["names"] == ["American"]


def test_a_computable_figure_is_not_blocked_by_an_abstention():
    q = "For Initech, Reckon the FY2022 current ratio."  # "Reckon" is in no section
    filters = QueryFilters(docs=["Initech"], matched={"Initech": "Initech"}, companies=["Initech"],
                           company_docs={"Initech": ["Initech"]})
    _, info = ExtractiveSynthesizer(selector=STATE).synthesize(q, [BAL], Analysis.of(q, filters))
    assert info["block"].kind == "computed" and info["block"].text.startswith("2.00: current ratio, Initech FY2022")
    _, info = ExtractiveSynthesizer(selector=STATE).synthesize(q, [BAL], Analysis.of(q))  # no company named
    assert info["block"].kind == "not_found" and "'Reckon'" in info["block"].text


def _fcf_table(label, row_2022, row_2021, node_id="0030", first_line=200):
    """An MD&A table reconciling cash from operations to the company's own free cash flow (a change column)."""
    return _section(node_id, "Free Cash Flow", [
        "| | 2022 | 2021 | Change |",
        "| Net cash provided by operating activities, GAAP measure | $500 | $420 | 19% |",
        "| Capital spending | (120) | (100) | |",
        "| Sales of property, plant and equipment | 20 | 10 | |",
        f"| {label} | ${row_2022} | ${row_2021} | (5)% |",
    ], first_line, caption="")


def test_free_cash_flow_is_the_companys_own_row_when_retrieved():
    own = _fcf_table("Free cash flow, non-GAAP measure", 400, 330)
    res = compute_metric("What was Initech's free cash flow in FY2022?", [CASH, own])
    assert res.value == 400 and res.inputs[0].label == "Free cash flow, non-GAAP measure"
    assert res.inputs[0].scale == "millions"  # no caption: the statements' unit, the two being of one order
    block = metric_block(res, [CASH, own])
    assert block.text.startswith("Initech's free cash flow for FY2022 was $400 million")
    assert 'own figure, row "Free cash flow, non-GAAP measure"' in block.text
    assert [c.line_start for c in block.citations] == [206]  # the row, under its caption line
    # as an operand of a share, and compared over two years (the change column is not a year's)
    share = compute_metric("What percentage of operating cash flow in FY2022 was converted into free cash flow?",
                           [CASH, own])
    assert share.value == 80.0  # 400 / 500
    trend = compute_metric("What was the year-over-year growth of free cash flow in FY2022?", [CASH, own])
    assert trend.value == 21.21  # (400 - 330) / 330, the company's own row both years
    # the general formula without it: 500 - 120
    assert _value("What was Initech's free cash flow in FY2022?", [CASH]) == 380


def test_free_cash_flow_row_of_another_quantity_is_not_the_companys():
    longer = _fcf_table("Free cash flow conversion", 95, 90)  # a longer name: another measure
    assert _value("What was Initech's free cash flow in FY2022?", [CASH, longer]) == 380
    far = _fcf_table("Free cash flow", 4, 3)  # a segment's, two orders below the company's: not its measure
    assert _value("What was Initech's free cash flow in FY2022?", [CASH, far]) == 380


def test_a_table_outside_the_statements_never_sets_the_year():
    maturities = _section("0031", "Debt maturities", ["| | 2026 | 2027 |", "| Principal due | 300 | 400 |"], 300)
    res = compute_metric("What is Initech's current ratio?", [BAL, maturities])
    assert res.year == 2022 and res.value == 2.0  # 700 / 350, not a column of 2027


def test_a_question_fixing_the_definition_gets_the_general_formula():
    own = _fcf_table("Free cash flow, non-GAAP measure", 400, 330)
    q = "According to the statement of cash flows, what is Initech's FY2022 free cash flow? Defined as: (CFO - capex)."
    assert _value(q, [CASH, own]) == 380  # 500 - 120, not the company's 400
    assert _value("What was Initech's unadjusted free cash flow in FY2022?", [CASH, own]) == 380


def test_total_debt_counts_short_term_borrowings_and_the_current_portion_both():
    rows = ["| | 2023 | 2022 |", "| Short-term borrowings | 100 | 90 |", "| Current portion of long-term debt | 50 | 20 |",
            "| Total current liabilities | 1,000 | 800 |", "| Long-term debt | 700 | 760 |"]
    q = "What was Initech's total debt in FY2023?"
    both = compute_metric(q, [_section("0010", "Consolidated Balance Sheets", rows, 100)])
    assert both.value == 850.0  # 700 + 50 + 100
    # one row of both ("Short-term borrowings and current portion of long-term debt") is counted once
    one = [r.replace("Short-term borrowings |", "Short-term borrowings and current portion of long-term debt |")
           for r in rows if "Current portion" not in r]
    assert compute_metric(q, [_section("0010", "Consolidated Balance Sheets", one, 100)]).value == 800.0
