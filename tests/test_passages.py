"""ppkit.answer.passages and the offline answer block: candidates across sections (rows with their header and
units, sentences rejoined across a page break, "Inc." kept whole), the block's contract (no ids or line numbers
in its text), the printed answer (short by default, the full pack with evidence="all"), boilerplate demoted."""

from __future__ import annotations

from pathlib import Path

import pytest

from ppkit.answer.passages import asked_type, rank_passages, render_row, section_passages
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


def test_the_block_states_the_figure_without_ids_or_line_numbers():
    secs = _sections("Results of Operations", "Consolidated Statements of Operations")
    text, info = ExtractiveSynthesizer().synthesize("What was Widgetco's total revenue in 2022?", secs)
    block = info["block"]
    assert block.kind == "figure" and block.text == "Total revenue: $1,250 million in 2022 ($1,100 million in 2021)"
    assert [(c.node, c.line_start) for c in block.citations] == [(secs[1].node_id, 26), (secs[1].node_id, 28)]
    assert text.split("\n")[0] == block.text  # first: no banner before it (the mode is Answer.mode)
    drivers = ExtractiveSynthesizer().synthesize("Why did total revenue increase?", secs)[1]["block"]
    assert drivers.kind == "passage" and drivers.text.startswith("Total revenue rose because of strong demand")
    for b in (block, drivers):
        assert "#" not in b.text and "line" not in b.text and "ID" not in b.text and s_id(secs) not in b.text


def s_id(secs) -> str:
    return secs[0].node_id


def test_default_print_is_the_support_and_evidence_all_keeps_the_pack():
    secs = _sections("Consolidated Statements of Operations", "Results of Operations", "Exhibit Index")
    q = "What was total revenue in 2022?"
    short, _ = ExtractiveSynthesizer().synthesize(q, secs)
    full, _ = ExtractiveSynthesizer(evidence="all").synthesize(q, secs)
    assert "Exhibit Index" not in short and all(f"lines {s.line_start}-{s.line_end}):" in full for s in secs)
    assert "  - line 26: | | 2022 | 2021 |" in short and "  - line 28: | Total revenue | $1,250 | $1,100 |" in short
    assert len(short) < len(full)
    with pytest.raises(ValueError, match="evidence must be one of"):
        ExtractiveSynthesizer(evidence="some")


def test_boilerplate_is_detected_and_demoted_unless_asked_for():
    ex, res = _sections("Exhibit Index", "Results of Operations")
    assert boilerplate_kind(ex.breadcrumb, ex.text) == "exhibits" and boilerplate_kind(res.breadcrumb, res.text) is None
    q = "What revenue sharing agreement was incorporated?"
    best = rank_passages(q, [ex, res], asked_type(q))[0][1]
    assert best.section is ex  # a question about an agreement keeps the exhibit index
    assert asks_for(q, "plan") and not asks_for("What was total revenue?", "exhibits")
    q = "What drove total revenue in 2022?"
    ranked = rank_passages(q, [ex, res], asked_type(q, (2022,)))
    assert ranked[0][1].section is res  # the exhibit index (ranked first, mentions revenue) comes below content


def test_the_asked_type_is_read_from_the_wording():
    assert asked_type("What percentage of revenue came from Europe?").kind == "share"
    assert asked_type("How many employees did it have?").kind == "count"
    assert asked_type("What drove the decline in margin?").kind == "drivers"
    assert asked_type("Has the company reported legal proceedings in 2022?").yes_no
    assert not asked_type("What is the revenue, and is it growing?").yes_no


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


def _prose(*texts: str) -> list[Section]:
    """One-paragraph sections of a made-up filing, ranked in order."""
    return [Section("Acme_2023_8K", f"{i:04d}", f"Acme > Item {i}", 1, 1, t, i, 1.0) for i, t in enumerate(texts, 1)]


def test_a_difference_asked_is_computed_from_the_two_values_a_sentence_states():
    secs = _prose("We now expect full-year sales to increase 8 percent (previously 6 percent) and core EPS to "
                  "increase 11 percent (previously 8 percent), the company said.")
    block = ExtractiveSynthesizer().synthesize("By how many percentage points did Acme raise its core EPS guidance?",
                                               secs)[1]["block"]
    assert block.kind == "computed"  # the EPS pair, not the sales pair the sentence states first
    assert block.text.startswith("Up 3.00 percentage points, to 11 percent from 8 percent (11 - 8): ")
    assert [(c.doc, c.node) for c in block.citations] == [("Acme_2023_8K", "0001")]


def test_a_level_or_a_count_is_never_given_as_the_difference_or_the_amount_asked():
    level = _prose("Acme may increase the commitments under the credit agreement to up to $4,950,000,000.")
    block = ExtractiveSynthesizer().synthesize("By how much did Acme increase its credit agreement?", level)[1]["block"]
    assert (block.kind, block.text.split(";")[0]) == ("inputs", "The change asked is not stated in the passages found")
    stated = _prose("Acme increased the commitments under the credit agreement by $400 million.")
    block = ExtractiveSynthesizer().synthesize("By how much did Acme increase its credit agreement?", stated)[1]["block"]
    assert (block.kind, block.text) == ("passage", stated[0].text)
    counts = _prose("Acme had 118,400 employees and 187,000 retirees eligible for its benefit plans.")
    block = ExtractiveSynthesizer().synthesize("How much does Acme expect to pay its retirees?", counts)[1]["block"]
    assert block.text.startswith("The amount asked is not stated in the passages found; the closest passage: Acme had")
    totals = _prose("Client assets of $2.8 trillion were up 32%, and each shareholder of Acme gained.")
    block = ExtractiveSynthesizer().synthesize("How much could each shareholder of Acme get?", totals)[1]["block"]
    assert block.text.startswith("The figure per share asked is not stated")


def test_a_yes_or_no_passage_states_a_year_the_question_names():
    q = "Has Acme paid dividends to common shareholders in FY2022?"
    year = "Acme opened two plants in 2022."  # the year is covered, so no abstention
    other_year = _prose("Dividends declared and paid to common shareholders ($0.15 per share), 2020.", year)
    block = ExtractiveSynthesizer().synthesize(q, other_year)[1]["block"]
    assert block.kind != "yes_no"  # a sentence of 2020 answers another question
    same_year = _prose("Dividends declared and paid to common shareholders ($0.01 per share), 2022.", year)
    block = ExtractiveSynthesizer().synthesize(q, same_year)[1]["block"]
    assert (block.kind, block.text[:4]) == ("yes_no", "Yes.")


def _block(question: str, *texts: str):
    return ExtractiveSynthesizer().synthesize(question, _prose(*texts))[1]["block"]


NOT_ABOUT = "No passage found is about the quantity asked; the closest passage: "


def test_a_passage_answers_only_when_it_is_about_the_quantity_asked():
    margin = ("Gross profit increased to 39.6% of net sales, primarily due to leverage of fixed costs, partially "
              "offset by higher inventory shrink and lower merchandise margin.")
    stores = "Merchandise inventories increased to $1.6 billion, primarily due to the opening of 47 new stores."
    q = "What drove the increase in Acme's merchandise inventories balance?"
    block = _block(q, margin)  # both words, but not "merchandise inventories": another quantity
    assert (block.kind, block.text) == ("inputs", NOT_ABOUT + margin)
    block = _block(q, margin, stores)
    assert (block.kind, block.text) == ("passage", stores)
    # a comparison: each side's own word ("U.S." for "US", "international")
    one_side = "Consumer worldwide sales increased 3.9% driven by products sold in the international markets."
    both = "U.S. sales increased 3.0% while international sales decreased 0.6%."
    q = "How did Acme's US sales growth compare to international sales growth?"
    assert _block(q, one_side).text == NOT_ABOUT + one_side
    assert _block(q, one_side, both).text == both


def test_an_amount_paid_needs_its_object_and_a_money_word_and_a_total_the_plural():
    debt = "We used the cash proceeds to pay down commercial paper and redeem $342 million of notes due in 2023."
    assets = "As a result of the spin-off of Widgetco, we distributed net assets of $1.6 billion."
    costs = "We expect to incur costs of approximately $700 million in connection with separating Widgetco."
    q = "How much does Acme expect to pay to spin off Widgetco in the future?"
    block = _block(q, debt, assets)  # "pay" without Widgetco; Widgetco without a cost
    assert (block.kind, block.text) == ("inputs", NOT_ABOUT + assets)
    assert _block(q, debt, assets, costs).text == costs
    one = "On May 26, Acme entered into a new $4.2 billion revolving credit agreement with its lenders."
    total = "Acme may borrow up to $8.4 billion in total under its two revolving credit agreements."
    q = "What is the total amount Acme may borrow under its revolving credit agreements?"
    assert _block(q, one).text == NOT_ABOUT + one  # one of the two agreements: not their total
    assert _block(q, one, total).text == total
