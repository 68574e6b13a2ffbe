"""The strict numeric judge (ppkit.bench.measures.judge): 1% tolerance, units and sign."""

from ppkit.bench.measures.judge import expected_value, judge_numeric, stated_result


def test_expected_value_units():
    assert expected_value("$9068.00", "Answer in USD millions.")["value"] == 9068e6
    assert expected_value("$4.60", "What is the capex (in USD billions)?")["value"] == 4.6e9
    assert expected_value("4.2%")["unit"] == "percent"
    assert expected_value("-0.02") == {"value": -0.02, "unit": "ratio", "scale": 1e6, "text": "-0.02"}
    assert expected_value("Performance is not measured through operating margin") is None


def test_stated_result_prefers_the_computed_line():
    text = "[offline note]\n\nComputed quick ratio of AMD for FY2022: 9,981 / 6,369 = 1.57\nSteps: 4,835 + 1,020 = 5,855."
    assert stated_result(text)["text"] == "1.57"
    assert stated_result("In 2022 the ratio was 1.6x.")["value"] == 1.6  # the year is skipped


def test_judge_strict():
    assert judge_numeric("Computed: 14,275 - 5,207 = $9,068 million", "$9068.00", "Answer in USD millions.")["ok"]
    assert judge_numeric("Capital spending was $4.6 billion.", "$4.60", "in USD billions")["ok"]
    assert judge_numeric("Capital spending was $4,625 million.", "$4.60", "in USD billions")["ok"]  # 0.5% off
    assert judge_numeric("x = 1.59", "1.57")["reason"] == "value"  # 1.3% off: outside 1%
    assert judge_numeric("x = 0.042", "4.2%")["reason"] == "unit"
    assert judge_numeric("ROA = 0.02", "-0.02")["reason"] == "sign"
    assert judge_numeric("ROA = -0.02", "-0.02")["ok"]
    assert judge_numeric("Not computed: the retrieved sections do not contain receivables.", "1.57")["reason"] == \
        "abstained"
    assert judge_numeric("no figure here", "1.57")["reason"] == "no_number"
    assert not judge_numeric("anything", "Yes, they did")["applicable"]


def test_a_bare_figure_is_the_amount_asked_in_the_questions_unit():
    asked = "What was the spending, in millions?"
    steps = "The spending was 7,310 less 1,205.\nSteps: 7,310 - 1,205 = 6,105."
    assert stated_result(steps)["text"] == "6,105"  # the arithmetic's result, written without a unit
    assert judge_numeric(steps, "$6105.00", asked)["ok"]
    assert judge_numeric("Steps: 4.2 + 1.9 = 6.1.", "$6.10", "What was it, in billions?")["ok"]
    assert judge_numeric("Steps: 7,310 - 1,305 = 6,005.", "$6105.00", asked)["reason"] == "value"
    # a unit that is written still has to agree
    assert judge_numeric("The multiple was 6.1x.", "$6.10", asked)["reason"] == "unit"
    assert judge_numeric("The margin was 6.1%.", "$6.10", asked)["reason"] == "unit"
    assert judge_numeric("x = 6.1", "6.1%")["reason"] == "unit"  # a bare figure is no percentage
