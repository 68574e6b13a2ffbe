"""ppkit.ui.cited_answer, ppkit.ui.cues and ppkit.ui.folder driven from Python on two hand-written reports."""

from __future__ import annotations

from pathlib import Path

import pytest

import ppkit
from ppkit.core.errors import InvalidInput, NotFound
from ppkit.ui.cited_answer import CitedAnswer
from ppkit.ui.cues import LOW_SCORE, retrieval_cues, section_matches
from ppkit.ui.folder import find_documents

pytest.importorskip("ipywidgets")

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def tiny_index():
    """Two hand-written reports indexed with the hash embedder (instant, deterministic)."""
    return ppkit.build_index([FIXTURES / "widgets_acme.md", FIXTURES / "widgets_globex.md"], names=["ACME", "Globex"],
                             embedder=ppkit.HashEmbedder(), save=False, progress=False)


def test_the_answer_block_comes_first_then_verification_evidence_and_sections(tiny_index):
    view = CitedAnswer(tiny_index, "What was Acme's free cash flow?", k=3)
    a = view.answer
    assert a is not None and a.block is not None and view.error is None
    html = view.summary_html()
    order = [html.index(s) for s in ("ppkit-answer-block", "Verification", "Evidence", "Sections retrieved")]
    assert order == sorted(order)
    assert a.block.text.replace("$", "") in html.replace("$", "") or a.block.text[:40] in html
    assert f"{a.sections[0].doc}#{a.sections[0].node_id}" in view.evidence_box.value
    assert "k = 3" in view.status.value
    # who wrote it is a small label beside the block, not a banner in the text
    assert a.mode == "offline" and "<span class='ppkit-mode'" in view.block_box.value
    assert ">offline</span>" in view.block_box.value and "offline extractive" not in view.evidence_box.value


def test_a_follow_up_is_read_with_the_conversation_and_new_conversation_forgets_it(tiny_index):
    view = CitedAnswer(tiny_index, "What was Acme's free cash flow?", k=3)
    view.ask("And Globex?")
    assert len(view.answers) == 2 and "Conversation (1 turn)" in view.history_box.value
    assert "free cash flow" in view.answers[-1].question.lower()  # rewritten with the first turn's topic
    view.k.value = 2  # the same turn again with another k: replaced, not appended
    assert len(view.answers) == 2 and len(view.answer.sections) <= 2
    view.new_button.click()
    assert view.answers == [] and view.answer is None and view.block_box.value == ""


def test_cues_name_an_unknown_company_and_a_filter_against_the_question(tiny_index):
    view = CitedAnswer(tiny_index, "What was Tesla's revenue in 2022?", k=3)
    assert any("'Tesla' is not a document or company of this index (ACME, Globex)" in c for c in view.cues)
    assert "note:" in view.cue_box.value
    view = CitedAnswer(tiny_index, "What was Acme's free cash flow?", k=3, doc="Globex")
    assert any("names ACME, but the document filter is set to Globex" in c for c in view.cues)
    assert CitedAnswer(tiny_index, "What was Acme's free cash flow?", k=3).cues == []


def test_no_good_match_only_for_the_embedder_it_was_measured_with(tiny_index):
    r = tiny_index.retrieve("zzz qqq", 3)
    assert not any(c.startswith("No good match") for c in retrieval_cues(tiny_index, "zzz qqq", r, low_score=2.0))
    assert 0.354 < LOW_SCORE < 0.444  # between the best nonsense string and the weakest benchmark question


def test_a_section_matches_when_it_holds_the_figure_or_table_the_question_names():
    from types import SimpleNamespace

    from mm_helpers import fixture_tree, section

    t = fixture_tree()
    method, results = section(t, "0002"), section(t, "0003")  # Figure 1's caption; TABLE I's caption and "Fig. 1"

    def found(*sections):
        return SimpleNamespace(sections=list(sections))

    assert section_matches("What does Figure 1 show?", found(method))
    assert not section_matches("What does Figure 1 show?", found(results))  # only mentions it
    assert section_matches("Which numbers are in Table 1?", found(results))
    assert not section_matches("Which numbers are in Table 2?", found(method, results))
    assert not section_matches("how are strokes drawn", found(method, results))  # names nothing


def test_find_documents_and_a_folder_without_documents(tmp_path):
    (tmp_path / "a.md").write_text("# A\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.PDF").write_bytes(b"%PDF-1.4\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "c.md").write_text("# C\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    assert [p.relative_to(tmp_path).as_posix() for p in find_documents(tmp_path)] == ["a.md", "sub/b.PDF"]
    with pytest.raises(NotFound, match="is not a folder"):
        find_documents(tmp_path / "missing")
    empty = tmp_path / "empty"
    empty.mkdir()
    from ppkit.ui.folder import index_folder

    with pytest.raises(InvalidInput, match="no PDF or Markdown file under"):
        index_folder(empty)


def test_verified_is_shown_only_when_the_block_answers_the_question(tiny_index, prior_selector):
    # a faithful quote of operating cash flow, where free cash flow is asked: the quotes check, it does not answer
    box = CitedAnswer(tiny_index, "What was Acme's free cash flow?", k=3).verification_box.value
    assert "[verified]" not in box and "data-status='unanswered'" in box
    assert "[quotes check, but the block may not answer the question: " in box
    assert "name cash from operations, not free cash flow" in box and "(figure, confidence 0.50)" in box
    box = CitedAnswer(tiny_index, "What was Acme's rocket revenue in 2022?", k=3).verification_box.value
    assert "data-status='verified'" in box and ">[verified]</span>" in box
