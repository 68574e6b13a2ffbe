"""Computed financial metrics (ppkit.answer.metrics): line items from primary statements, formulas, citations."""

from test_passages import STATE

from ppkit.answer.metrics import compute_metric, format_metric, metric_block, question_year
from ppkit.finance.read import read_measure as detect_metric
from ppkit.answer.synth import ExtractiveSynthesizer
from ppkit.answer.verify import verify_answer
from ppkit.retrieval.types import Section


def _section(node_id, title, rows, first_line, doc="Acme", caption="(In millions)"):
    """A retrieved statement section of hand-written table rows (shared with ``test_metrics_broader``)."""
    text = "\n".join([f"## {title}", caption] + rows)
    n = len(text.split("\n"))
    return Section(doc=doc, node_id=node_id, breadcrumb=f"{doc} > Item 8 > {title}", line_start=first_line,
                   line_end=first_line + n - 1, text=text, rank=1, score=1.0,
                   sent_ranges=((first_line, first_line + n - 1),), line_numbers=tuple(range(first_line, first_line + n)))


BALANCE = _section("0010", "Consolidated Balance Sheets", [
    "| December 31, 2022 | December 25, 2021 |",
    "| Cash and cash equivalents | $4,835 | $2,535 |",
    "| Short-term investments | 1,020 | 1,073 |",
    "| Accounts receivable, net | 4,126 | 2,706 |",
    "| Inventories | 3,771 | 1,955 |",
    "| **Total current assets** | 15,019 | 8,583 |",
    "| **Total current liabilities** | 6,369 | 4,240 |",
    "| Total assets | 67,580 | 12,419 |",
    "| Total stockholders' equity | 54,750 | 7,497 |",
], 100)
INCOME = _section("0011", "Consolidated Statements of Operations", [
    "| | 2022 | 2021 |",
    "| Net revenue | $23,601 | $16,434 |",
    "| Cost of sales | 11,550 | 8,505 |",
    "| Operating income | 1,264 | 3,648 |",
    "| Net income | $1,320 | $3,162 |",
], 200)
CASH = _section("0012", "Consolidated Statements of Cash Flows", [
    "| (In millions) | 2022 | 2021 |",
    "| Depreciation and amortization | 4,174 | 407 |",
    "| Purchases of property and equipment | (450) | (301) |",
], 300)
PROSE = Section(doc="Acme", node_id="0005", breadcrumb="Acme > Item 7 > Liquidity", line_start=50, line_end=51,
                text="## Liquidity\nCash and cash equivalents were $4,835 million.", rank=2, score=0.5,
                sent_ranges=((50, 51),), line_numbers=(50, 51))


def test_detect_metric_and_year():
    assert detect_metric("What is AMD's quick ratio for FY2022?").name == "quick ratio"
    assert detect_metric("What is the FY2019 working capital ratio?").name == "current ratio"
    assert detect_metric("Who is the CEO?") is None
    assert question_year("change from FY2015 to FY2016") == 2016
    assert question_year("FY22 margin") == 2022


def test_quick_ratio_textbook():
    res = compute_metric("What is Acme's quick ratio for FY2022?", [PROSE, BALANCE, INCOME])
    # (4,835 + 1,020 + 4,126) / 6,369 = 9,981 / 6,369 = 1.567...
    assert res.ok and res.value == 1.57
    assert res.steps == ("4,835 + 1,020 = 5,855", "5,855 + 4,126 = 9,981", "9,981 / 6,369 = 1.57")
    assert [(li.concept, li.value, li.line) for li in res.inputs] == [
        ("cash", 4835.0, 103), ("short_term_investments", 1020.0, 104), ("receivables", 4126.0, 105),
        ("current_liabilities", 6369.0, 108)]


def test_average_outflow_and_percent():
    roa = compute_metric("What is the FY2022 return on assets?", [BALANCE, INCOME])
    assert roa.steps == ("(67,580 + 12,419) / 2 = 39,999.5", "1,320 / 39,999.5 × 100 = 3.30%")  # in percent
    capex = compute_metric("What is FY2022 capex as a % of revenue?", [INCOME, CASH])
    assert capex.value == 1.91 and capex.steps == ("450 / 23,601 × 100 = 1.91%",)  # the outflow read as its size
    growth = compute_metric("What was revenue growth in FY2022?", [INCOME])
    assert growth.steps == ("23,601 - 16,434 = 7,167", "7,167 / 16,434 × 100 = 43.61%")


def test_missing_inputs_abstain_and_say_which():
    res = compute_metric("What is the FY2022 EBITDA margin?", [BALANCE, INCOME])
    assert not res.ok and res.value is None
    assert res.missing == ("depreciation and amortization (cash flow statement) (cash flow statement, 2022)",)
    text = format_metric(res)
    assert text.startswith("Not computed: the EBITDA margin for FY2022 needs")
    none = compute_metric("What is the quick ratio for FY2020?", [BALANCE])  # no 2020 column
    assert not none.ok and len(none.missing) == 4


def test_negative_equity_is_undefined():
    deficit = _section("0020", "Consolidated Statements of Financial Position", [
        "| | 2022 | 2021 |", "| Total liabilities | 152,948 | 153,399 |",
        "| Total shareholders’ deficit | (15,883) | (14,999) |"], 400, doc="Boeing")
    res = compute_metric("What is Boeing's total liabilities to equity for FY2022?", [deficit])
    assert not res.ok and not res.meaningful and "undefined" in res.reason
    block = metric_block(res, [deficit])
    assert block.kind == "not_meaningful" and block.text.startswith("Not meaningful: shareholders' equity is a deficit")
    assert format_metric(res).startswith("Not meaningful:")


def test_extractive_answer_is_computed_cited_and_verified():
    synth = ExtractiveSynthesizer(selector=STATE)
    text, info = synth.synthesize("What is Acme's quick ratio for FY2022?", [BALANCE, INCOME])
    lines = text.split("\n")
    assert lines[0] == info["block"].text == "1.57: quick ratio, Acme FY2022 = (4,835 + 1,020 + 4,126) / 6,369 ($ millions)"
    # the input's row and line; its section is named once, under Sources
    assert "- accounts receivable, net, 2022: 4,126, row \"Accounts receivable, net\", line 105 (ID: 0010)" in lines
    assert "- Acme > … > Consolidated Balance Sheets (ID: 0010)" in lines
    assert info["metric"]["value"] == 1.57 and info["metric"]["missing"] == []
    report = verify_answer(text, [BALANCE, INCOME])
    assert report["ok"] and report["counts"]["not_found"] == 0
    status = {c["text"]: c["status"] for c in report["claims"]}
    assert status["1.57"] == status["9,981"] == status["5,855"] == "computed"  # re-derived by the verifier
    assert status["4,126"] == "verified"


def test_a_wrong_computed_figure_is_caught():
    synth = ExtractiveSynthesizer(selector=STATE)
    text, _ = synth.synthesize("What is Acme's quick ratio for FY2022?", [BALANCE, INCOME])
    report = verify_answer(text.replace("1.57", "1.78"), [BALANCE, INCOME])
    # the answer shows the formula, so the wrong result is inconsistent with it (not merely not found)
    assert not report["ok"] and [c["text"] for c in report["claims"] if c["status"] == "inconsistent"] == ["1.78"]


def test_verifier_rederives_an_average():
    text = "Steps: (67,580 + 12,419) / 2 = 39,999.5; 1,320 / 39,999.5 = 0.03 (ID: 0010, 0011)"
    report = verify_answer(text, [BALANCE, INCOME])
    by = {c["text"]: c for c in report["claims"]}
    assert by["39,999.5"]["status"] == "computed" and by["39,999.5"]["formula"].endswith(") / 2")
