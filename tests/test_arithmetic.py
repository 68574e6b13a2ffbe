"""The answer's own arithmetic (ppkit.answer.arithmetic): shown formulas and stated changes, recomputed."""

import pytest

from ppkit.answer.arithmetic import agrees, clause_span, evaluate, shown_formula, stated_change
from ppkit.answer.verify import numbers_with_values


def _n(text: str) -> dict:
    (n,) = numbers_with_values(text)
    return n


def test_evaluate_is_an_interval_over_the_precision_written():
    # 5,855 / 10,811 with each operand ± 0.5: [5854.5 / 10811.5, 5855.5 / 10810.5]
    lo, hi = evaluate("$5,855 / $10,811")
    assert (round(lo, 6), round(hi, 6)) == (round(5854.5 / 10811.5, 6), round(5855.5 / 10810.5, 6))
    # precedence, brackets, and bare integers as exact constants ("/ 2")
    assert evaluate("(67,580 + 12,419) / 2") == pytest.approx((39999.0, 40000.0))
    assert evaluate("$10,811 - $5,207 + $251") == pytest.approx((5853.5, 5856.5))
    # different scale words are brought to one scale
    assert evaluate("$1.2 billion - $350 million") == pytest.approx((1.15e9 - 350.5e6, 1.25e9 - 349.5e6))
    assert evaluate("5,855") is None and evaluate("Free Cash Flow / Net Cash") is None


def test_agrees_at_the_precision_written_and_a_percent_as_ratio_or_times_100():
    interval = evaluate("$6,176 / $10,482")  # 0.5892
    assert agrees(_n("58.9%"), interval) and agrees(_n("0.59"), interval)
    assert not agrees(_n("66.6%"), interval) and not agrees(_n("0.67"), interval)


def test_shown_formula_reads_the_expression_before_the_equals_sign():
    line = "    $10,811 - $5,207 + $251 = **$5,855 million**"
    i = line.index("$5,855")
    expr, interval = shown_formula(line, (i, i + len("$5,855 million")))
    assert expr == "$10,811 - $5,207 + $251" and interval == pytest.approx((5853.5, 5856.5))
    line = "*   **Attributable percentage:** ($6,176 / $10,482) ≈ **66.6%**"
    i = line.index("66.6%")
    assert shown_formula(line, (i, i + 5))[0] == "($6,176 / $10,482)"


def test_a_number_that_starts_the_next_expression_is_not_a_result():
    line = "Formula: 5,207 / (10,811 - 6,172) = 5,207 / 4,639"
    i = line.rindex("5,207")
    assert shown_formula(line, (i, i + 5)) is None  # "= 5,207 / 4,639" goes on
    j = line.index("4,639")
    assert shown_formula(line, (j, j + 5)) is None  # before it "5,207 /", no "="


def test_stated_change_uses_the_direction_word_not_the_order():
    line = "Client revenue saw a decrease of 11% (from $6.887 billion to $6.201 billion)."
    nums = numbers_with_values(line)
    formula, intervals = stated_change(line, nums[0], nums)
    # a fall: the base is the larger amount, (6.887 - 6.201) / 6.887 = 9.96%, not / 6.201 = 11.06%
    assert len(intervals) == 1 and intervals[0][0] < 9.96 < intervals[0][1] and intervals[0][1] < 10.5
    assert formula == "|$6.887 billion - $6.201 billion| / the larger × 100"
    rise = "Net interest income grew 28% ($9,895 million vs. $7,750 million)."
    nums = numbers_with_values(rise)
    (lo, hi), = stated_change(rise, nums[0], nums)[1]
    assert lo < 27.68 < hi  # 2,145 / 7,750


def test_stated_change_needs_one_percent_two_paired_amounts_and_a_direction():
    for line in ("Revenue was $23.6 billion, 44% of which came from Data Center, and costs were $12 billion.",  # no pair
                 "Revenue of $23.6 billion vs. $16.4 billion, a 44% share.",  # no rise or fall
                 "Gaming rose 21% to $6.8 billion while Client fell 10% to $6.2 billion.",  # two percents
                 "Revenue rose 44% to $23.6 billion."):  # one amount
        nums = numbers_with_values(line)
        pct = next(n for n in nums if n["percent"])
        assert stated_change(line, pct, nums) is None, line


def test_clause_does_not_end_at_vs_or_approx():
    line = "Revenue grew by 25% ($52.862 billion in 2022 vs. $42.380 billion in 2021). Costs rose."
    assert line[slice(*clause_span(line, (16, 19)))] == \
        "Revenue grew by 25% ($52.862 billion in 2022 vs. $42.380 billion in 2021)"
