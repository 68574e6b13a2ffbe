"""Planted off-question blocks (ppkit.bench.runs.off_question) on two made-up 10-Ks: a real quote of another
measure, another period and another company, each a faithful quote the "answered" check must flag."""

from _hybrid_fixtures import fixture_index  # noqa: F401
from ppkit.bench.measures.verify_block import block_case, blocks_markdown, summarize_blocks
from ppkit.bench.runs.off_question import off_question_blocks


def test_three_kinds_of_off_question_blocks_are_planted_and_caught(fixture_index):
    q = {"text": "What were Alpha's total current assets in 2022?", "answer": "$900 million"}
    answer = fixture_index.ask(q["text"], 3)
    plants = {p["kind"]: p for p in off_question_blocks(q, answer, fixture_index, 3)}
    assert set(plants) == {"other_measure", "other_period", "other_company"}
    assert plants["other_measure"]["block"].startswith("$450 million: Total current liabilities, 2022")
    assert plants["other_period"]["block"].startswith("$800 million: Total current assets, 2021")
    assert plants["other_company"]["block"].startswith("$1,200 million: Total Current Assets, 2022")
    # every plant is a real quote (its figure and label in its cited lines), and none is shown "verified"
    assert all(p["verified"] and p["caught"] and not p["shown_verified"] for p in plants.values())
    assert plants["other_company"]["reason"] == "it cites Beta; the question asks about Alpha"

    case = block_case(q["text"], q["answer"], answer, off_question=list(plants.values()))
    assert (case["verdict"], case["answered"], case["shown_verified"]) == ("correct", True, True)
    s = summarize_blocks([case])
    assert (s["off_question"], s["off_question_caught"], s["answered_false_alarms"]) == (3, 3, 0)
    assert s["off_question_by_kind"]["other_period"] == {"n": 1, "caught": 1}
    assert "| answered: planted off-question blocks caught | 3 | 3 | 1.0 |" in blocks_markdown(s)


def test_a_quote_stating_the_reference_figure_is_no_plant_and_words_get_none(fixture_index):
    q = {"text": "What was Alpha's net revenue in 2022?", "answer": "$1,250 million"}
    answer = fixture_index.ask(q["text"], 3)
    kinds = [p["kind"] for p in off_question_blocks(q, answer, fixture_index, 3)]
    assert kinds == ["other_company"]  # no other row of its sections is of the type and words asked
    q = {"text": "Why did Alpha's sprocket revenue fall?", "answer": "weaker orders"}
    assert off_question_blocks(q, fixture_index.ask(q["text"], 3), fixture_index, 3) == []  # no figure asked
