"""ppkit.answer.passages and the offline answer block: rows with their header and units, sentences rejoined across
a page break ("Inc." kept whole), the block's contract (the figure first, no ids or line numbers in its text), the
printed answer (short by default, the full pack with evidence="all"), boilerplate detected."""

from __future__ import annotations

from pathlib import Path

import pytest

from ppkit.answer.passages import render_row, section_passages
from ppkit.answer.select import Selector
from ppkit.answer.synth import ExtractiveSynthesizer
from ppkit.answer.synth_gemini import parse_block
from ppkit.documents.tree import build_tree
from ppkit.retrieval.boilerplate import asks_for, boilerplate_kind
from ppkit.retrieval.types import Section

DOC = Path(__file__).parent / "fixtures" / "answer_block.md"


def _sections(*order: str) -> list[Section]:
    """Sections of the fixture by title, ranked in ``order``, with their source line numbers."""
    tree = build_tree(DOC)
    lines = DOC.read_text().split("\n")
    out = []
    for rank, title in enumerate(order, start=1):
        n = next(n for n in tree.nodes.values() if n.title == title)
        text = "\n".join(lines[n.line_start - 1: n.text_end])
        out.append(Section(tree.doc, n.node_id, n.breadcrumb, n.line_start, n.text_end, text, rank, 1.0,
                           ((n.line_start, n.text_end),), len(text),
                           line_numbers=tuple(range(n.line_start, n.text_end + 1))))
    return out


def test_a_row_is_quoted_with_its_column_header_and_units():
    (s,) = _sections("Consolidated Statements of Operations")
    rows = {p.label: p for p in section_passages(s) if p.kind == "row"}
    assert set(rows) == {"Total revenue", "Cost of revenue", "Earnings per share, Diluted"}  # no value-less row
    total = rows["Total revenue"]
    assert (total.units, total.header, total.header_line) == ("millions", ("2022", "2021"), 26)
    assert render_row(total, (2022,)) == "Total revenue: $1,250 million in 2022 ($1,100 million in 2021)"
    assert render_row(total, (2021,)) == "Total revenue: $1,100 million in 2021 ($1,250 million in 2022)"
    # per-share figures are not in millions ("except per share amounts")
    assert render_row(rows["Earnings per share, Diluted"], (2022,)) == (
        "Earnings per share, Diluted: $2.15 in 2022 ($1.90 in 2021)")


def test_a_sentence_cut_by_a_page_break_is_rejoined_and_inc_ends_no_sentence():
    (s,) = _sections("Results of Operations")
    sents = [p for p in section_passages(s) if p.kind == "sentence"]
    assert [p.text for p in sents] == [
        "Widgetco, Inc. reported higher demand in 2022.",
        "Total revenue rose because of strong demand in the industrial market and higher prices.",
        "The increase was partly offset by lower sales in Europe."]
    assert (sents[1].line, sents[1].line_end) == (14, 20)  # both halves' source lines, page furniture between


# a selector that states its best candidate whatever the confidence (the fitted threshold is tested elsewhere)
STATE = Selector({"focus_cover": 2.0, "wide_cover": 1.0, "concept": 1.0, "computed": 1.0, "rank": 0.5, "cue": 0.5},
                 threshold=0.0)


def test_the_block_states_the_figure_first_without_ids_or_line_numbers():
    secs = _sections("Results of Operations", "Consolidated Statements of Operations")
    text, info = ExtractiveSynthesizer(selector=STATE).synthesize("What was Widgetco's total revenue in 2022?", secs)
    block = info["block"]
    assert block.kind == "figure" and block.text.startswith("$1,250 million: Total revenue, 2022")
    assert [(c.node, c.line_start) for c in block.citations] == [(secs[1].node_id, 26), (secs[1].node_id, 28)]
    assert text.split("\n")[0] == block.text  # first: no banner before it (the mode is Answer.mode)
    drivers = ExtractiveSynthesizer(selector=STATE).synthesize("Why did total revenue increase?", secs)[1]["block"]
    assert drivers.kind == "passage" and drivers.text.startswith("Total revenue rose because of strong demand")
    for b in (block, drivers):
        assert "#" not in b.text and "line" not in b.text and "ID" not in b.text and secs[0].node_id not in b.text


def test_default_print_is_the_support_and_evidence_all_keeps_the_pack():
    secs = _sections("Consolidated Statements of Operations", "Results of Operations", "Exhibit Index")
    q = "What was total revenue in 2022?"
    short, _ = ExtractiveSynthesizer(selector=STATE).synthesize(q, secs)
    full, _ = ExtractiveSynthesizer(evidence="all", selector=STATE).synthesize(q, secs)
    assert "Exhibit Index" not in short and all(f"lines {s.line_start}-{s.line_end}):" in full for s in secs)
    assert "  - line 26: | | 2022 | 2021 |" in short and "  - line 28: | Total revenue | $1,250 | $1,100 |" in short
    assert len(short) < len(full)
    with pytest.raises(ValueError, match="evidence must be one of"):
        ExtractiveSynthesizer(evidence="some")


def test_boilerplate_is_detected():
    ex, res = _sections("Exhibit Index", "Results of Operations")
    assert boilerplate_kind(ex.breadcrumb, ex.text) == "exhibits" and boilerplate_kind(res.breadcrumb, res.text) is None
    assert asks_for("What revenue sharing agreement was incorporated?", "plan")
    assert not asks_for("What was total revenue?", "exhibits")


def test_a_written_answer_gives_its_block():
    secs = _sections("Consolidated Statements of Operations")
    reply = (f"**Answer:** Total revenue was $1,250 million in 2022 (ID: {secs[0].node_id}), line 28.\n\n"
             f"Details follow.\n\nSources:\n- {secs[0].breadcrumb} (ID: {secs[0].node_id})")
    block = parse_block(reply, secs)
    assert block.text == "Total revenue was $1,250 million in 2022." and block.kind == "figure"
    assert [c.node for c in block.citations] == [secs[0].node_id]
    assert parse_block("Answer: No, the sections show no such charge.\n", secs).kind == "yes_no"
    assert parse_block("Answer: The provided sections do not contain the answer.", secs).kind == "not_found"
    assert parse_block("No answer part here.", secs) is None


def test_the_gemini_synthesizer_fills_the_same_block(gemini):
    from gemini_server import text_reply

    from ppkit import Config
    from ppkit.answer.events import collect
    from ppkit.answer.synth_gemini import GeminiSynthesizer
    from ppkit.llm.client import GeminiClient

    secs = _sections("Consolidated Statements of Operations", "Results of Operations")
    sid = secs[0].node_id
    gemini.script("generateContent", text_reply(
        f"Answer: Total revenue was $1,250 million in 2022 (ID: {sid}).\n\nIt was $1,100 million in 2021.\n\n"
        f"Sources:\n- {secs[0].breadcrumb} (ID: {sid})"))
    synth = GeminiSynthesizer(config=Config(online=True), client=GeminiClient(attempts=1, initial_delay=0.01))
    events, (text, info) = collect(synth.stream("What was total revenue in 2022?", secs))
    assert "Answer:" in gemini.of("generateContent")[0]["body"]["systemInstruction"]["parts"][0]["text"]
    block = info["block"]
    assert (block.text, block.kind) == ("Total revenue was $1,250 million in 2022.", "figure")
    assert [(c.node, c.line_start, c.line_end) for c in block.citations] == [(sid, secs[0].line_start, secs[0].line_end)]
    answer_events = [e for e in events if e.type == "answer"]
    assert [e.data() for e in answer_events] == [block.to_dict()] and text.startswith("Answer: Total revenue")
