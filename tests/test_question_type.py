"""The answer type read from a question (``ppkit.answer.question``), on sentences written for these tests."""
from ppkit.answer.question import read_question


def test_who_after_a_noun_is_a_relative_pronoun_and_asks_nothing():
    asked = read_question("What was Norwell's current ratio in FY2021? Answer as a lender who reads only the "
                          "balance sheet.")
    assert asked.type == "ratio"
    assert asked.measure is not None and asked.measure.name == "current ratio"


def test_who_opening_a_sentence_asks_for_a_name():
    assert read_question("Who is Norwell's chief executive officer?").type == "narrative"
    assert read_question("Norwell changed auditors in 2021. Who audits it now?").type == "narrative"


def test_a_request_verb_asks_only_in_its_bare_form():
    assert read_question("Using the figures outlined in the cash flow statement, what was Norwell's capital "
                         "expenditure in FY2020?").type == "amount"
    assert read_question("Outline Norwell's hedging policy.").type == "narrative"


def test_when_asks_a_date_only_before_an_auxiliary():
    assert read_question("When computing it from the balance sheet, what was Norwell's current ratio in FY2020?"
                         ).type == "ratio"
    assert read_question("When did Norwell complete the acquisition of Ostrava?").type == "date"
