"""Follow-up questions rewritten into standalone ones (ppkit.conversation)."""

import pytest

from _hybrid_fixtures import fixture_index  # noqa: F401
from ppkit.retrieval.conversation import history_questions, rewrite_offline, rewrite_online, rewrite_question


def test_carry_companies_and_years_forward(fixture_index):
    rw = rewrite_offline(fixture_index, "What about their operating income?",
                         ["What was Alpha's net revenue in FY2022?"])
    assert rw.question == "For Alpha, FY2022: What about their operating income?"
    assert rw.rewriter == "offline-carry-forward"
    assert rw.carried == {"companies": ["Alpha"], "years": [2022], "items": []}


def test_new_company_takes_the_previous_topic(fixture_index):
    hist = [{"question": "For Alpha, what is the current ratio?", "answer": "..."}]
    rw = rewrite_offline(fixture_index, "And Beta?", hist)
    assert rw.question == "For Beta: what is the current ratio?"
    assert rw.rewriter == "offline-new-company" and rw.carried["topic"] == "what is the current ratio?"
    rw = rewrite_offline(fixture_index, "What about Beta's commodity risks?", hist)
    assert rw.rewriter == "none" and rw.question == "What about Beta's commodity risks?"


def test_latest_turn_with_a_company_wins_and_no_history(fixture_index):
    hist = [{"role": "user", "content": "Tell me about Beta's brands."}, {"role": "assistant", "content": "..."},
            "What are the main risks?"]
    assert history_questions(hist) == ["Tell me about Beta's brands.", "What are the main risks?"]
    assert rewrite_offline(fixture_index, "How about cash flow?", hist).question == "For Beta: How about cash flow?"
    assert rewrite_question(fixture_index, "How about cash flow?", []).rewriter == "none"
    with pytest.raises(TypeError, match="history turn"):
        history_questions([42])


def test_the_rewrite_filters_retrieval(fixture_index):
    a = fixture_index.ask("What about their cash flow?", 3, history=["What are BetaCo's brands?"])
    assert a.trace.rewrite["question"] == "For Beta: What about their cash flow?"
    assert a.trace.docs_filter == ["Beta"]
    assert all(s.doc == "Beta" for s in a.sections)
    assert a.sections[0].section_id == "Beta#0005"


def test_online_rewrite_with_a_stub_client(fixture_index):
    class Stub:
        def generate(self, prompt, *, system=None, schema=None):
            self.prompt = prompt
            return type("R", (), {"data": {"standalone_question": "What is Beta's free cash flow?"}})()

    stub = Stub()
    rw = rewrite_online(fixture_index, "And its free cash flow?", ["Tell me about Beta."], client=stub)
    assert (rw.question, rw.rewriter) == ("What is Beta's free cash flow?", "gemini")
    assert "User: Tell me about Beta." in stub.prompt and "<question>\nAnd its free cash flow?\n</question>" in stub.prompt


def test_three_turns_chain(fixture_index):
    a1 = fixture_index.ask("What was Alpha's net revenue in FY2022?", 2)
    a2 = fixture_index.ask("What about their cash?", 2, history=[a1])
    a3 = fixture_index.ask("And Beta?", 2, history=[a1, a2])
    assert a2.question == "For Alpha, FY2022: What about their cash?"
    # the topic of the rewritten second turn, without its "FY2022:" prefix, asked about Beta
    assert a3.question == "For Beta, FY2022: what about their cash?"
    assert a3.trace.docs_filter == ["Beta"]


def test_a_follow_up_keeps_the_measure_of_the_turn_before(fixture_index):
    asked = ["What was Alpha's net revenue?"]
    assert rewrite_offline(fixture_index, "And Beta?", asked).question == "For Beta: what was net revenue?"
    # a period named with the new company replaces the earlier one, in the prefix and in the topic
    rw = rewrite_offline(fixture_index, "And Beta in 2021?", ["What was Alpha's net revenue in 2022?"])
    assert (rw.question, rw.rewriter) == ("For Beta, FY2021: what was net revenue?", "offline-new-company")
    # a period alone: the same company and measure in that period
    rw = rewrite_offline(fixture_index, "And in 2021?", asked)
    assert (rw.question, rw.rewriter) == ("For Alpha, FY2021: what was net revenue?", "offline-new-period")
    # a history of raw questions: the topic is the latest turn that has one, the company the latest named
    rw = rewrite_offline(fixture_index, "And for FY2021?", asked + ["And Beta?"])
    assert rw.question == "For Beta, FY2021: what was net revenue?"
    # a follow-up with its own topic stands alone, or takes only the company
    assert rewrite_offline(fixture_index, "What about their margins?", asked).question == \
        "For Alpha: What about their margins?"


def test_a_follow_up_is_answered_with_the_new_companys_figure_and_verified(fixture_index, prior_selector):
    a1 = fixture_index.ask("What was Alpha's net revenue in 2022?", 3)
    a2 = fixture_index.ask("And Beta?", 3, history=[a1])
    assert a2.question == "For Beta, FY2022: what was net revenue in 2022?"
    assert a2.block.text.startswith("$3,000 million") and {c.doc for c in a2.block.citations} == {"Beta"}
    assert a2.verification["answered"] is True and a2.verification["verdict"]["status"] == "verified"
