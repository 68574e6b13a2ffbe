"""Metrics from statements as a PDF leaves them (ppkit.retrieval.metric_statements, ppkit.answer.metrics): a statement
under a period heading or split over headings, added whole; day counts, CAGRs and averages over years."""

import shutil

import pytest

import ppkit
from ppkit.answer.metrics import compute_metric, metric_block
from ppkit.retrieval.metric_statements import statement_kinds, statement_sections, with_statements
from ppkit.finance.read import read_measure as detect_metric
from ppkit.retrieval.pointers import load_sections
from ppkit.retrieval.recall import make_candidate
from test_metrics import _section

FIX = "tests/fixtures/statements_split.md"


@pytest.fixture
def split_index(tmp_path):
    """One PDF-shaped filing (tests/fixtures/statements_split.md) indexed with the hash embedder."""
    (tmp_path / "docs").mkdir()
    shutil.copy(FIX, tmp_path / "docs" / "initrode.md")
    return ppkit.build_index([tmp_path / "docs" / "initrode.md"], tmp_path / "index", embedder=ppkit.HashEmbedder(),
                             config=ppkit.Config(online=False), progress=False)


def _read(index, *node_ids):
    doc = index.docs[0]
    return load_sections(index, [make_candidate(index, doc, n, [0.0], 0) for n in node_ids], budget=6000)


def test_a_split_statement_is_added_whole_and_read_in_its_titles_columns(split_index):
    q = "What is Initrode's FY2022 inventory turnover ratio?"
    retrieved = with_statements(split_index, _read(split_index, "0003"))  # only the selected financial data
    assert statement_kinds(retrieved[0]) == ("balance", "operations")
    added = statement_sections(split_index, q, retrieved, detect_metric(q), budget=6000)
    # the income statement under "Years ended December 31"; the balance sheet's title (units, dates) and the
    # two headings its rows run on under; never the summary again
    assert [(s.node_id, s.statements) for s in added] == [("0009", ("balance",)), ("0011", ("balance",)),
                                                         ("0012", ("balance",)), ("0008", ("operations",))]
    res = compute_metric(q, retrieved + added)
    # the statements' rows, not the summary's (inventories 410 / 390 there): 3,000 / ((400 + 380) / 2)
    assert res.steps == ("(400 + 380) / 2 = 390", "3,000 / 390 = 7.69") and res.scale == "millions"
    assert {li.node_id for li in res.inputs} == {"0008", "0011"}
    assert statement_sections(split_index, q, retrieved + added, detect_metric(q), budget=6000) == []


def test_a_part_retrieved_gets_the_rest_of_its_statement(split_index):
    q = "What is Initrode's FY2022 current ratio?"
    retrieved = with_statements(split_index, _read(split_index, "0012"))
    added = statement_sections(split_index, q, retrieved, detect_metric(q), budget=6000)
    assert [s.node_id for s in added] == ["0009", "0011"]
    assert compute_metric(q, retrieved + added).value == 1.33  # 1,600 / 1,200


BAL = _section("0010", "Consolidated Balance Sheets", [
    "| | 2022 | 2021 |",
    "| Accounts receivable, net | 500 | 460 |",
    "| Inventories | 400 | 380 |",
    "| Property, plant and equipment | 2,000 | 1,900 |",
    "| Property, plant and equipment — net | 900 | 850 |",
    "| Accounts payable | 300 | 280 |",
], 100)
OPS = _section("0011", "Consolidated Statements of Income", [
    "(In millions) 2022 2021 2020 Net sales $ 5,000 $ 4,000 $ 3,200 Cost of sales 3,000 2,500 2,000 "
    "Income before income taxes 1,000 800 600 (Provision) benefit for income taxes (210) (160) 30",
], 200)


def test_day_counts_over_the_days_asked():
    # 365 x (500 + 460) / 2 / 5,000; 365 x 390 / 3,000; 365 x 290 / 3,000
    assert compute_metric("What is FY2022 DSO?", [BAL, OPS]).value == 35.04
    assert compute_metric("What is FY2022 days inventory outstanding?", [BAL, OPS]).value == 47.45
    dpo = compute_metric("What is FY2022 DPO?", [BAL, OPS])
    assert dpo.value == 35.28 and dpo.steps[-1] == "105,850 / 3,000 = 35.28"
    # 360 days when the question says so
    assert compute_metric("What is FY2022 DSO, using 360 days?", [BAL, OPS]).value == 34.56
    ccc = compute_metric("What is the FY2022 cash conversion cycle?", [BAL, OPS])
    assert ccc.value == 47.21  # 47.45 + 35.04 - 35.28
    assert metric_block(ccc, [BAL, OPS]).text.startswith("Acme's cash conversion cycle for FY2022 was 47.21 days")


def test_cagr_and_average_over_years_from_a_line_that_runs_header_into_rows():
    cagr = compute_metric("What is the 2 year revenue CAGR from FY2020 to FY2022?", [OPS])
    assert cagr.value == 25.0 and cagr.steps == ("(5,000 / 3,200) ^ (1 / 2) - 1 = 25.00%",)  # sqrt(1.5625) = 1.25
    avg = compute_metric("What is the FY2020 - FY2022 3 year average gross margin?", [OPS])
    # 37.5%, 37.5%, 40% -> 115 / 3
    assert avg.value == 38.33 and avg.steps[-3:] == ("37.50% + 37.50% = 75.00%", "75.00% + 40.00% = 115%",
                                                     "115% / 3 = 38.33%")
    block = metric_block(avg, [OPS])
    assert block.text.startswith("Acme's 3-year average gross margin for FY2020-FY2022 was 38.33%")
    assert len({c.line_start for c in block.citations}) == 1  # one source line holds all of its inputs
    # a year outside the statement's columns: which inputs are missing, no figure
    short = compute_metric("What is the FY2019 - FY2021 3 year average gross margin?", [OPS])
    assert not short.ok and "revenue (income statement, 2019)" in short.missing


def test_net_row_before_gross_and_a_bracketed_tax_expense():
    assert compute_metric("What is FY2022 net PP&E?", [BAL]).value == 900
    # "(Provision) benefit": (210) is an expense of 210 -> 21%; 30 in 2020 is a benefit -> -5%
    assert compute_metric("What is the FY2022 effective tax rate?", [OPS]).value == 21.0
    assert compute_metric("What is the FY2020 effective tax rate?", [OPS]).value == -5.0


def test_an_optional_item_with_no_row_is_zero_only_in_a_whole_balance_sheet():
    bal = _section("0010", "Consolidated Balance Sheets", [
        "| | 2022 | 2021 |",
        "| Cash and cash equivalents | 300 | 250 |",
        "| Accounts receivable, net | 500 | 460 |",
        "| Total current liabilities | 1,000 | 900 |",
    ], 100)
    res = compute_metric("What is the FY2022 quick ratio?", [bal])
    assert res.value == 0.8 and res.zeros == ("short-term investments",)  # (300 + 0 + 500) / 1,000
    assert "short-term investments: no row in the balance sheet, so 0" in metric_block(res, [bal]).text
    from dataclasses import replace
    cut = replace(bal, trimmed=True)  # a balance sheet cut to the budget may hold the row: missing, no figure
    assert not compute_metric("What is the FY2022 quick ratio?", [cut]).ok


def test_a_net_row_the_pattern_only_begins_beats_the_gross_row():
    bal = _section("0010", "Consolidated Balance Sheets", [
        "| | 2022 | 2021 |",
        "| Cash and cash equivalents | 300 | 250 |",
        "| Accounts receivable | 520 | 480 |",
        "| Less allowance for credit losses | (20) | (20) |",
        "| Accounts receivable, net | 500 | 460 |",
        "| Total current liabilities | 1,000 | 900 |",
    ], 100)
    assert [li.value for li in compute_metric("What is the FY2022 quick ratio?", [bal]).inputs] == [300, 500, 1000]


def test_a_line_items_name_and_the_companys_initials_are_never_missing_names():
    from ppkit.answer.scope import missing_from
    from ppkit.retrieval.types import Section
    s = Section(doc="JOHNSON_JOHNSON_2022_10K", node_id="0001", breadcrumb="JOHNSON_JOHNSON_2022_10K > Sales",
                line_start=1, line_end=1, text="Sales to customers grew in 2022.", rank=1, score=1.0)
    got = missing_from("How many times has JnJ sold its inventory in FY2022 (FY2022 COGS / Revenue)?", [s])
    assert got == {"names": [], "years": []}
    # a name neither the document's nor a line item's stays missing
    assert missing_from("What was Intel's Revenue in FY2022?", [s])["names"] == ["Intel"]


def test_a_label_broken_over_two_rows_and_a_title_whose_years_precede_its_caption():
    title = _section("0020", "CONSOLIDATED BALANCE SHEETS", ["December 31, 2017 2016 (In millions except par value)"],
                     300, caption="")
    from dataclasses import replace
    assets = replace(_section("0021", "ASSETS", ["| TOTAL ASSETS | $87,896 $ | 87,270 |"], title.line_end + 1,
                              caption=""), statements=("balance",))  # as with_statements marks it from the tree
    ops = _section("0022", "CONSOLIDATED STATEMENTS OF INCOME", [
        "| Year Ended December 31, | 2017 | 2016 |",
        "| NET INCOME ATTRIBUTABLE TO SHAREOWNERS OF | | |",
        "| THE ACME COMPANY | $1,248 | $6,527 |",
    ], 200)
    res = compute_metric("What is the FY2017 return on assets?", [title, assets, ops])
    assert res.value == 1.42 and [li.label for li in res.inputs][0].endswith("SHAREOWNERS OF THE ACME COMPANY")
