"""The answer block's verification (ppkit.answer.verify.verify_block), source lines in ``where``, and the
numbers that are never values (file, exhibit and note numbers, dates)."""

from ppkit.answer.answered import check_block
from ppkit.answer.block import AnswerBlock, BlockCitation
from ppkit.answer.verify import asked_for, mask_references, numbers_with_values, verify_answer, verify_block
from ppkit.retrieval.types import Section

# a balance sheet rendered from an HTML table: the header row comes from source line 2174 (a <th>), each data
# row from its own <tr> line, so rendered positions and source lines differ
BALANCE = Section(
    doc="AMD", node_id="0089", breadcrumb="AMD > Consolidated Balance Sheets", line_start=2170, line_end=2300,
    rank=1, score=1.0, sent_ranges=((2170, 2300),), chars_total=0,
    text="\n".join(["## Consolidated Balance Sheets",
                    "| (In millions) | December 31, 2022 | December 25, 2021 |",
                    "| Cash and cash equivalents | $ 4,835 | $ 2,535 |",
                    "| Short-term investments | 1,020 | 1,073 |",
                    "| Accounts receivable, net | 4,126 | 2,706 |",
                    "| Total current liabilities | 6,369 | 4,240 |"]),
    line_numbers=(2170, 2174, 2190, 2195, 2200, 2298))


def _cite(*lines):
    return tuple(BlockCitation("AMD", "0089", ln, ln) for ln in lines)


def test_where_names_source_lines_not_rendered_positions():
    rep = verify_answer("Cash and cash equivalents were $4,835 million (ID: 0089).", [BALANCE])
    assert rep["claims"][0]["where"] == [{"section_id": "AMD#0089", "line": 2190}]


def test_file_exhibit_note_numbers_and_dates_are_not_values():
    text = "Commission file number (1-7657); File No. 001-12345; Exhibit 10.1; Note 12; dated March 4, 2022"
    assert [n["text"] for n in numbers_with_values(mask_references(text))] == ["2022"]  # a year, skipped as one
    rep = verify_answer(f"Per the filing ({text}), cash was $4,835 million (ID: 0089).", [BALANCE])
    assert [c["text"] for c in rep["claims"]] == ["$4,835 million"] and rep["ok"]


def test_a_computed_block_is_verified_against_its_cited_rows():
    q = "What is AMD's quick ratio for FY2022?"
    block = AnswerBlock("Computed quick ratio of AMD for FY2022: 9,981 / 6,369 = 1.57", "computed",
                        _cite(2190, 2195, 2200, 2298))
    v = check_block(block, [BALANCE], question=q)  # the quote check, and whether it answers
    assert (v["verified"], v["answered"], v["asks"], v["years"]) == (True, True, "ratio", ["2022"])
    status = {c["text"]: (c["status"], c.get("formula")) for c in v["claims"]}
    assert status["9,981"] == ("computed", "$ 4,835 + 1,020 + 4,126")  # a sum of the cited rows
    assert status["6,369"][0] == "verified" and status["1.57"] == ("computed", "9,981 / 6,369")
    # a figure the cited lines do not hold is caught, though it is elsewhere in the section
    wrong = AnswerBlock("Computed quick ratio of AMD for FY2022: 9,981 / 6,369 = 1.77", "computed", _cite(2190))
    v = verify_block(wrong, [BALANCE], question=q)
    assert not v["verified"] and any("1.77" in r for r in v["reasons"])


def test_a_passage_must_be_in_its_cited_lines():
    row = "| Cash and cash equivalents | $ 4,835 | $ 2,535 |"
    assert verify_block(AnswerBlock(row, "passage", _cite(2190)), [BALANCE], question="How much cash?")["verified"]
    v = verify_block(AnswerBlock(row, "passage", _cite(2195)), [BALANCE], question="How much cash?")
    assert not v["verified"] and "the passage is not in the cited lines" in v["reasons"]
    assert not verify_block(AnswerBlock(row, "passage"), [BALANCE])["verified"]  # cites nothing


def test_asked_for_reads_the_answer_type_and_years():
    assert asked_for("How much cash did AMD hold in 2022?") == {"asks": "amount", "years": ["2022"]}
    assert asked_for("What is AMD's operating margin percentage?")["asks"] == "percent"
    assert asked_for("Did AMD hold more cash in 2022?")["asks"] == "yes_no"
    # whether a block answers is ppkit.answer.answered's (tests/test_answered.py)
    assert "answered" not in verify_block(AnswerBlock("| Cash and cash equivalents | $ 4,835 | $ 2,535 |", "passage",
                                                      _cite(2190)), [BALANCE], question="How much cash?")


# a cash-flow statement: the rows a free-cash-flow block cites (capex written as an outflow in brackets)
CASH = Section(
    doc="AMD", node_id="0093", breadcrumb="AMD > Consolidated Statements of Cash Flows", line_start=2700,
    line_end=2760, rank=1, score=1.0, sent_ranges=((2700, 2760),), chars_total=0,
    text="\n".join(["## Consolidated Statements of Cash Flows",
                    "| Year Ended | December 31, 2022 | December 25, 2021 |",
                    "| Changes in operating assets and liabilities: | | |",
                    "| Inventories | (1,401) | (556) |",
                    "| Net cash provided by operating activities | 3,565 | 3,521 |",
                    "| Purchases of property and equipment | (450) | (301) |"]),
    line_numbers=(2700, 2701, 2702, 2703, 2739, 2751))


def test_a_computed_block_with_its_formula_and_a_change_is_verified():
    cites = tuple(BlockCitation("AMD", "0093", ln, ln) for ln in (2739, 2751))
    text = ("AMD's free cash flow was $3,115 million in FY2022 and $3,220 million in FY2021, a change of "
            "-$105 million (-3.26%) (FY2022: 3,565 - 450, $ millions)")
    v = verify_block(AnswerBlock(text, "computed", cites), [CASH], question="What is AMD's free cash flow for FY2022?")
    assert v["verified"], v["reasons"]
    formula = {c["text"]: c.get("formula") for c in v["claims"]}
    assert formula["$3,115 million"] == "3,565 - 450"  # the formula the block shows, without its result
    assert formula["$3,220 million"] == "3,521 + (301)"  # two cited figures, the outflow negative
    assert formula["-$105 million"] == "$3,115 million - $3,220 million"  # the block's own figures
    assert formula["-3.26%"] == "($3,115 million - $3,220 million) / $3,220 million × 100"
    # a changed figure is still caught
    v = verify_block(AnswerBlock(text.replace("$3,220", "$3,290"), "computed", cites), [CASH])
    assert not v["verified"] and any("$3,290 million" in r for r in v["reasons"])
    # the formula written right after its result, in brackets of its own
    quick = "AMD's quick ratio for FY2022 was 1.57 ((4,835 + 1,020 + 4,126) / 6,369, $ millions)"
    v = verify_block(AnswerBlock(quick, "computed", _cite(2190, 2195, 2200, 2298)), [BALANCE])
    assert v["verified"] and {c["text"]: c.get("formula") for c in v["claims"]}["1.57"] == \
        "(4,835 + 1,020 + 4,126) / 6,369"
    v = verify_block(AnswerBlock(quick.replace("1.57", "1.77"), "computed", _cite(2190, 2195, 2200, 2298)), [BALANCE])
    assert not v["verified"]


def test_a_figure_block_is_a_row_written_out_and_its_label_is_checked():
    cite = (BlockCitation("AMD", "0093", 2703, 2703),)
    ok = AnswerBlock("Changes in operating assets and liabilities, Inventories: (1,401) in 2022 ((556) in 2021)",
                     "figure", cite)
    assert verify_block(ok, [CASH])["verified"]  # the group heading is not on the cited line; the row's label is
    wrong = AnswerBlock("Receivables: (1,401) in 2022 ((556) in 2021)", "figure", cite)
    assert "the passage is not in the cited lines" in verify_block(wrong, [CASH])["reasons"]


def test_the_block_bench_plants_each_figure_and_sets_answered_beside_the_judge():
    from ppkit.answer.synth import Answer
    from ppkit.bench.measures.verify_block import block_case, plant_figures, summarize_blocks

    cites = tuple(BlockCitation("AMD", "0093", ln, ln) for ln in (2739, 2751))
    text = "AMD's free cash flow was $3,115 million in FY2022 (3,565 - 450, $ millions)"
    assert [fig for _, fig in plant_figures(text)] == ["$3,115 million", "3,565", "450"]  # not the year
    q = "What is AMD's free cash flow for FY2022?"
    answer = Answer(q, text, [CASH], "extractive", block=AnswerBlock(text, "computed", cites))
    case = block_case(q, "$3.1 billion", answer)  # no verification stored: check_block runs
    assert (case["verified"], case["answered"], case["verdict"]) == (True, True, "correct")
    assert [p["caught"] for p in case["plants"]] == [True, True, True]
    s = summarize_blocks([case])
    assert (s["false_alarm_rate"], s["catch_rate"], s["answered_false_alarm_rate"]) == (0.0, 1.0, 0.0)
