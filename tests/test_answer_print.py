"""The printed answer (``str(answer)``, ``ppkit ask``'s output): the block first, its own sentence not printed
again below it, and a one-line verification that names only what it found."""

from __future__ import annotations

from test_passages import STATE, _sections

from ppkit.answer.synth import Answer, ExtractiveSynthesizer
from ppkit.answer.verify import verify_answer


def test_the_block_sentence_is_printed_once_and_its_line_cited():
    secs = _sections("Results of Operations", "Consolidated Statements of Operations")
    text, info = ExtractiveSynthesizer(selector=STATE).synthesize("Why did total revenue increase?", secs)
    block = info["block"]
    assert block.kind == "passage" and text.count(block.text) == 1  # the block, not its quote again
    (cite,) = block.citations
    assert f"  - line {cite.line_start}: quoted in the answer above" in text.split("\n")
    assert f"- {secs[0].doc} > … > Results of Operations (ID: {secs[0].node_id})" in text  # no path between
    full, _ = ExtractiveSynthesizer(evidence="all", selector=STATE).synthesize("Why did total revenue increase?", secs)
    assert "quoted in the answer above" not in full and f"- {secs[0].breadcrumb} (ID: {secs[0].node_id})" in full


def test_the_printed_answer_lists_sections_by_title_and_verification_in_one_short_line():
    secs = _sections("Results of Operations", "Consolidated Statements of Operations")
    q = "What was Widgetco's total revenue in 2022?"
    text, info = ExtractiveSynthesizer(selector=STATE).synthesize(q, secs)
    answer = Answer(q, text, secs, "extractive", verification=verify_answer(text, secs, question=q),
                    block=info["block"])
    lines = str(answer).split("\n")
    # the document is named once for a run of its sections
    assert f"  1. Results of Operations  [{secs[0].doc}#{secs[0].node_id}, lines " \
           f"{secs[0].line_start}-{secs[0].line_end}]" in lines
    assert f"  2. Consolidated Statements of Operations  [#{secs[1].node_id}, lines " \
           f"{secs[1].line_start}-{secs[1].line_end}]" in lines
    # and once in an evidence header whose breadcrumb starts with it
    assert any(ln.startswith(f"From {secs[1].doc} > ") and ln.endswith(f"(lines {secs[1].line_start}-{secs[1].line_end}):")
               for ln in lines)
    summary = next(ln for ln in lines if ln.startswith("verification:"))
    assert summary.startswith("verification: OK - ") and " 0 " not in summary  # no zero counts
    assert summary.endswith("; 1 citation")
