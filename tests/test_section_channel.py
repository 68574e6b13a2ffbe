"""The stage-1 section channel: titles and extractive summaries, and its fixed share of the candidates."""

from __future__ import annotations

from bench_support import build_fixture_index
from ppkit.retrieval.section_channel import section_ranking, section_summary


def test_summary_is_the_first_sentences_without_tables():
    lines = ["## Liquidity", "", "Cash was $5 billion. We expect more.", "| a | 1 |", "Third one here."]
    assert section_summary(lines, 40) == "Cash was $5 billion. We expect more."
    assert section_summary(lines, 25) == "Cash was $5 billion."
    assert section_summary(["## Only a heading"]) == ""


def test_ranking_by_titles_and_scope(tmp_path):
    index = build_fixture_index(tmp_path / "ix")
    # "legal" is in one section's title and its first sentence; "proceedings" only in the title
    assert section_ranking(index, "legal proceedings", None, 3)[0] == ("Acme", index_node(index, "Acme", "Legal Proceedings"))
    # a document scope keeps the other document's sections out
    got = section_ranking(index, "liquidity capital resources", {"Acme": None}, 5)
    assert all(doc == "Acme" for doc, _ in got)
    assert section_ranking(index, "liquidity capital resources", {"Globex": None}, 1) == [
        ("Globex", index_node(index, "Globex", "Liquidity and Capital Resources"))]


def test_slots_keep_the_candidate_count(tmp_path):
    index = build_fixture_index(tmp_path / "ix")
    plain = index.retrieve("legal proceedings", k=2, docs=["Acme"], candidates=3, section_slots=0)
    slotted = index.retrieve("legal proceedings", k=2, docs=["Acme"], candidates=3, section_slots=2)
    assert len(plain.candidates) <= 3 + len(plain.trace.statements_added)
    assert len(slotted.candidates) - len(slotted.trace.statements_added) <= 3
    ids = [c.node_id for c in slotted.candidates]
    assert index_node(index, "Acme", "Legal Proceedings") in ids


def index_node(index, doc: str, title: str) -> str:
    return next(n.node_id for n in index.trees[doc].nodes.values() if n.title == title)
