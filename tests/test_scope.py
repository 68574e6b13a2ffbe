"""Scope (ppkit.answer.scope) and its benchmark (ppkit bench abstain) on the fixture index."""

from ppkit.answer.scope import abstained, missing_from, not_found_line
from ppkit.retrieval.analyze import question_years
from ppkit.answer.synth_gemini import NO_ANSWER
from ppkit.bench.runs.abstain import abstain_markdown, default_abstain_questions, run_abstain_bench, score_abstention
from ppkit.retrieval.types import Section

SEC = Section(doc="Acme", node_id="0003", breadcrumb="Acme > Item 7 > Results of Operations", line_start=1,
              line_end=2, text="## Results\nNet revenue was $5,000 million in 2022 compared to $4,000 million in 2021.",
              rank=1, score=1.0, sent_ranges=((1, 2),))


def test_missing_names_and_years():
    assert question_years("FY2015 vs fiscal 2016 and FY22") == [2015, 2016, 2022]
    assert missing_from("What was Acme's net revenue in 2022?", [SEC]) == {"names": [], "years": []}
    got = missing_from("What was Tesla's net revenue in FY2015?", [SEC])
    assert got == {"names": ["Tesla"], "years": [2015]}
    line = not_found_line(got)
    assert line == "Not found: the retrieved sections never mention 'Tesla' and do not cover FY2015."
    assert abstained("[offline note]\n\n" + line) and not abstained("Net revenue was $5,000 million.")
    # the Gemini synthesizer's prompt makes it say NO_ANSWER: the same detector reads online answers
    assert abstained(NO_ANSWER + " The sections cover 2022 only.")


def test_score_abstention():
    rows = [{"answerable": False, "abstained": True}, {"answerable": False, "abstained": False},
            {"answerable": True, "abstained": True}, {"answerable": True, "abstained": False}]
    s = score_abstention(rows)
    assert (s["precision"], s["recall"], s["abstained"], s["unanswerable"]) == (0.5, 0.5, 2, 2)


def test_default_set_is_mixed():
    qs = default_abstain_questions()
    assert len(qs) == 30 and sum(not q["answerable"] for q in qs) == 15


def test_abstain_bench_runs_on_the_fixture_index(hash_index):
    qs = [{"id": "1", "question": "What was Acme's net revenue in 2022?", "answerable": True, "kind": "fact"},
          {"id": "2", "question": "What was Initech's net revenue in 2022?", "answerable": False, "kind": "company"},
          {"id": "3", "question": "What was Acme's net revenue in FY2009?", "answerable": False, "kind": "year"}]
    res = run_abstain_bench(hash_index, qs, k=3)
    assert [r["abstained"] for r in res["rows"]] == [False, True, True]
    assert res["scores"]["precision"] == 1.0 and res["scores"]["recall"] == 1.0
    assert "precision 1.00, recall 1.00" in abstain_markdown(res)
