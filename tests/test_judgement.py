"""Yes/no judgements (ppkit.answer.judgement): Yes or No from computed figures by a direction, a sign or a
textbook threshold, or from a sentence stating an event; never a Yes/No from absence or from a level alone."""

import pytest

from ppkit.answer.judgement import existence_block, is_yes_no, judge_metric
from ppkit.answer.metrics import MetricResult
from ppkit.answer.synth import ExtractiveSynthesizer
from ppkit.retrieval.analyze import Analysis
from ppkit.retrieval.metric_table import detect_metric
from ppkit.retrieval.types import Section
from test_metrics import _section

BAL = _section("0010", "Consolidated Balance Sheets", [
    "| | 2023 | 2022 |",
    "| Cash and cash equivalents | 300 | 500 |",
    "| Accounts receivable, net | 200 | 260 |",
    "| Total current assets | 900 | 1,100 |",
    "| Current portion of long-term debt | 50 | 20 |",
    "| Total current liabilities | 1,000 | 800 |",
    "| Long-term debt | 700 | 760 |",
], 100, doc="Initech")
OPS = _section("0011", "Consolidated Statements of Operations", [
    "| | 2023 | 2022 |",
    "| Net sales | 1,300 | 1,000 |",
    "| Operating income | 130 | 150 |",
], 200, doc="Initech")


def _block(question):
    _, info = ExtractiveSynthesizer().synthesize(question, [BAL, OPS], Analysis.of(question))
    return info["block"]


@pytest.mark.parametrize("question, text", [
    # debt: (700 + 50) in 2023 against (760 + 20) in 2022: down 30
    ("Has Initech increased its debt on balance sheet between FY2022 and FY2023?", "No (down from FY2022): "),
    ("Did Initech reduce its total debt in FY2023 compared with FY2022?", "Yes (down from FY2022): "),
    # quick ratio (300 + 0 + 200) / 1,000 = 0.500: under 1.0
    ("Does Initech have a healthy liquidity profile based on its quick ratio for FY2023? If not relevant, explain why.",
     "No (below one, the textbook floor): "),
    ("Does Initech have positive working capital based on FY2023 data?", "No (negative): "),  # 900 - 1,000
    # revenue growth 30.0%: at or above 20%; operating margin 10.0% in 2023 from 15.0%: not improving
    ("Is Initech a high growth company based on FY2023?", "Yes (at or above twenty percent a year, the OECD line for a high-growth firm): "),
    ("Does Initech have an improving operating margin profile as of FY2023?", "No (down from FY2022): "),
])
def test_a_measure_is_judged_yes_or_no_with_its_figures_and_citations(question, text):
    block = _block(question)
    assert block.kind == "yes_no" and block.text.startswith(text), block.text
    assert {c.node for c in block.citations} <= {"0010", "0011"} and block.citations


def test_the_figures_stated_are_the_computed_ones():
    block = _block("Has Initech increased its debt on balance sheet between FY2022 and FY2023?")
    assert "$750 million in FY2023 and $780 million in FY2022, a change of -$30 million" in block.text


@pytest.mark.parametrize("question", [
    "Did Initech's operating margin increase or decrease in FY2023?",  # asks which one: no Yes/No
    "What was Initech's quick ratio in FY2023?",  # not a yes/no question
    # negated: the debt fell (780 -> 750), so "Yes (down)" would say it did not decrease; not judged
    "Did Initech's total debt not decrease between FY2022 and FY2023?",
    "Is Initech's liquidity not healthy based on its quick ratio for FY2023?",
    "Is Initech's liquidity weak or strong based on its quick ratio for FY2023?",  # asks which one
])
def test_no_yes_or_no_where_none_is_asked(question):
    assert _block(question).kind != "yes_no"


def test_between_the_thresholds_and_a_direction_without_a_second_period_nothing_is_judged():
    q = "Does Acme have a healthy liquidity profile based on its current ratio?"
    assert judge_metric(q, MetricResult(detect_metric(q), 2022, "ACME", value=1.5)) is None  # between 1.0 and 2.0
    assert judge_metric(q, MetricResult(detect_metric(q), 2022, "ACME", value=2.4))[0] == "Yes"
    q = "Did Acme's revenue grow faster than its operating income between FY2021 and FY2022?"
    assert judge_metric(q, MetricResult(detect_metric(q), 2022, "ACME", value=5.0)) is None  # another quantity
    q = "Did Acme's quick ratio improve?"
    assert judge_metric(q, MetricResult(detect_metric(q), 2022, "ACME", value=2.4)) is None  # a level, not a change


def test_yes_no_form():
    assert is_yes_no("For AMD, has the company paid dividends? Please explain.")
    assert not is_yes_no("Which segment grew the most?")


def _text(text):
    return [Section(doc="Initech", node_id="0020", breadcrumb="Initech > Legal", line_start=1, line_end=1,
                    text=text, rank=1, score=1.0)]


@pytest.mark.parametrize("question, text, said", [
    ("Has Initech reported any ongoing legal battles in FY2023?", "We are involved in a number of lawsuits.", True),
    ("Has Initech reported any ongoing legal battles?", "Lawsuits could have a material effect on us.", False),
    ("Has Initech paid dividends in FY2023?", "In 2023 we paid dividends of $0.10 per share.", True),
    ("Has Initech paid dividends in FY2023?", "In 2021 we paid dividends of $0.10 per share.", False),  # another year
    ("Has Initech paid dividends in FY2023?", "We have not paid dividends in 2023 of any amount per share.", False),
    # a negated question: the sentence stating the event answers it No, never "Yes: ..."
    ("Has Initech not paid dividends in FY2023?", "In 2023 we paid dividends of $0.10 per share.", False),
    # share repurchases and acquisitions: a dated sentence of a year asked
    ("Did Initech buy back shares in FY2023?", "In 2023 we repurchased 4 million shares of common stock.", True),
    ("Did Initech buy back shares in FY2023?", "In 2021 we repurchased 4 million shares of common stock.", False),
    ("Did Initech buy back shares in FY2023?", "We may repurchase shares in 2023 under the program.", False),
    ("Has Initech made any acquisitions in FY2023?", "In March 2023 we completed the acquisition of Hooli.", True),
    ("Has Initech made any acquisitions in FY2023?", "Acquisitions in 2023 could strain our integration teams.", False),
])
def test_an_event_is_yes_only_when_a_sentence_states_it(question, text, said):
    from ppkit.answer.passages import section_passages
    got = existence_block(question, [p for s in _text(text) for p in section_passages(s)], (2023,) if "2023" in
                          question else ())
    assert (got is not None) == said
    if said:
        assert got[0].text == f"Yes: {text}" and got[0].citations[0].node == "0020"


def test_an_event_of_another_filing_is_not_this_companys():
    from ppkit.answer.passages import section_passages
    other = Section(doc="Globex", node_id="0030", breadcrumb="Globex > Equity", line_start=1, line_end=1,
                    text="In 2023 we paid dividends of $0.10 per share.", rank=2, score=0.5)
    mine = _text("We expect growth.")
    got = existence_block("Has Initech paid dividends in FY2023?", section_passages(other), (2023,), mine + [other])
    assert got is None
