"""Verified citations (ppkit.verify): numbers, quotes, arithmetic and cited sources."""

import pytest

from _hybrid_fixtures import fixture_index, tenk_index  # noqa: F401
from ppkit.retrieval.types import Section
from ppkit.answer.verify import format_report, numbers_with_values, verify_answer

OPS = Section(
    doc="AMD", node_id="0085", breadcrumb="AMD > Consolidated Statements of Operations", line_start=100,
    line_end=105, rank=1, score=1.0, sent_ranges=((100, 105),), chars_total=0,
    text="\n".join([
        "## Consolidated Statements of Operations",
        "| (In millions) | 2022 | 2021 |",
        "| Net revenue | $ 23,601 | $ 16,434 |",
        "| Operating income | 1,264 | 3,648 |",
        "| Net income (loss) | (607) | 3,162 |",
        "Revenue grew strongly in the data center business.",
    ]))
OTHER = Section(doc="AMD", node_id="0062", breadcrumb="AMD > Results of Operations", line_start=200, line_end=201,
                rank=2, score=0.9, sent_ranges=((200, 201),), chars_total=0,
                text="## Results of Operations\nEmbedded revenue was $4,552 million.")

CORRECT = """Operating margin for FY2022 was 5.36% ($1,264 million / $23,601 million), down from 22.20% in FY2021
($3,648 million / $16,434 million), a decrease of 16.84 percentage points (ID: 0085).

Sources:
- AMD > Consolidated Statements of Operations (ID: 0085)"""


def _by_text(report):
    return {c["text"]: c for c in report["claims"]}


def test_number_normalisation():
    got = [(n["text"], n["value"], n["scale"], n["percent"], n["negative"])
           for n in numbers_with_values("Revenue was $23.6 billion, (607) and 5.36%; -$1,415 million; 2.4x")]
    assert got == [("$23.6 billion", 23.6, 1e9, False, False), ("(607)", 607.0, None, False, True),
                   ("5.36%", 5.36, None, True, False), ("-$1,415 million", 1415.0, 1e6, False, True),
                   ("2.4x", 2.4, None, False, False)]
    assert numbers_with_values("FY2022 Form 10-K, Q4") == []


def test_correct_answer_passes_with_lines_and_arithmetic():
    rep = verify_answer(CORRECT, [OPS, OTHER])
    assert rep["ok"] is True
    c = _by_text(rep)
    assert c["$1,264 million"]["status"] == "verified"
    assert c["$1,264 million"]["where"] == [{"section_id": "AMD#0085", "line": 103}]
    assert c["$23,601 million"]["where"] == [{"section_id": "AMD#0085", "line": 102}]
    assert (c["5.36%"]["status"], c["5.36%"]["formula"]) == ("computed", "$1,264 million / $23,601 million × 100")
    assert (c["22.20%"]["status"], c["22.20%"]["formula"]) == ("computed", "$3,648 million / $16,434 million × 100")
    assert (c["16.84 percentage points"]["status"], c["16.84 percentage points"]["formula"]) == \
        ("computed", "22.20% - 5.36%")
    assert rep["counts"] == {"claims": 7, "verified": 4, "computed": 3, "given": 0, "uncited": 0, "wrong_period": 0, "not_found": 0,
                             "inconsistent": 0, "citations": 1, "unretrieved": 0, "mislabeled": 0}
    assert rep["citations"] == [{"cited": "ID 0085", "section_ids": ["AMD#0085"], "retrieved": True}]
    assert rep["checked_against"] == ["AMD#0085"]
    assert rep["marked_text"] == CORRECT


def test_planted_wrong_number_is_flagged():
    wrong = CORRECT.replace("$1,264 million /", "$1,246 million /")
    rep = verify_answer(wrong, [OPS, OTHER])
    assert rep["ok"] is False
    c = _by_text(rep)
    assert c["$1,246 million"]["status"] == "not_found" and c["$1,246 million"]["where"] == []
    assert "5.36% [unverified] ($1,246 million [unverified] / $23,601 million)" in rep["marked_text"]
    # the wrong operand, 5.36% which no longer follows from it, and 16.84 points which followed from 5.36%
    assert [x["text"] for x in rep["claims"] if x["status"] == "not_found"] == \
        ["5.36%", "$1,246 million", "16.84 percentage points"]
    assert c["22.20%"]["status"] == "computed"
    assert "'$1,246 million' not_found" in format_report(rep)


def test_scales_signs_quotes_and_uncited():
    text = ('Revenue was about $23.6 billion and the net loss was $607 million. Management said '
            '"revenue grew strongly in the data center business". Embedded revenue was $4,552 million. '
            'It also said "margins doubled overnight". (ID: 0085)')
    c = _by_text(verify_answer(text, [OPS, OTHER]))
    assert c["$23.6 billion"]["status"] == "verified"  # 23,601 (millions) at one decimal of billions
    assert c["$607 million"]["where"] == [{"section_id": "AMD#0085", "line": 104}]  # "(607)": sign not compared
    assert c["revenue grew strongly in the data center business"]["where"] == [{"section_id": "AMD#0085", "line": 105}]
    assert c["$4,552 million"]["status"] == "uncited"  # only in 0062, which the answer does not cite
    assert c["margins doubled overnight"]["status"] == "not_found"


def test_citation_outside_the_retrieved_sections():
    rep = verify_answer("Net revenue was $23,601 million (ID: 0099). Also AMD#0062.", [OPS, OTHER])
    assert rep["unretrieved"] == ["ID 0099"] and rep["ok"] is False
    assert [c["cited"] for c in rep["citations"]] == ["AMD#0062", "ID 0099"]
    # no valid citation of 0085, so the number is only in an uncited section
    assert _by_text(rep)["$23,601 million"]["status"] == "uncited"


def test_breadcrumb_sources_and_no_citations():
    rep = verify_answer("Net revenue was $23,601 million.\n\nSources:\n* Consolidated Statements of Operations",
                        [OPS, OTHER])
    assert rep["citations"][0]["section_ids"] == ["AMD#0085"] and rep["ok"]
    rep = verify_answer("Net revenue was $23,601 million; there were 2 segments.", [OPS, OTHER])
    assert rep["checked_against"] == ["AMD#0085", "AMD#0062"]  # no citation: every retrieved section
    assert [c["text"] for c in rep["claims"]] == ["$23,601 million"]  # "2" is skipped as trivial


def test_ask_attaches_verification(fixture_index):
    a = fixture_index.ask("What was Alpha's net revenue in 2022?", 3)
    v = a.verification
    assert v is not None and v["ok"] is True and v["counts"]["not_found"] == 0
    assert v["counts"]["verified"] >= 1  # the extractive answer quotes "$1,250 million" from the source
    assert a.to_dict()["verification"] == v
    assert fixture_index.ask("What was Alpha's net revenue in 2022?", 3, verify=False).verification is None


@pytest.mark.corpus
@pytest.mark.model
def test_reference_answer_on_the_real_index(tenk_index):
    """The reference system's answer to Comprehensive AMD Q2, checked against the real statement of operations."""
    from ppkit.retrieval.types import Candidate
    from ppkit.retrieval.pointers import load_sections

    chosen = []
    for node in ("0085", "0062"):
        a, b = tenk_index.units("AMD")[node]
        chosen.append(Candidate("AMD", node, tenk_index.trees["AMD"][node].breadcrumb, 1.0, 1, 1, (1.0,), a, b, ""))
    sections = load_sections(tenk_index, chosen, budget=100_000)
    text = ("Based on the Consolidated Statements of Operations (ID: 0085): Operating Income: $1,264 million; "
            "Net Revenue: $23,601 million; Operating Margin: ($1,264 / $23,601) ≈ 5.36%. FY2021: $3,648 million "
            "and $16,434 million: 22.20%. A decrease of 16.84 percentage points.")
    rep = verify_answer(text, sections)
    assert rep["ok"] is True and rep["counts"]["not_found"] == 0 and rep["checked_against"] == ["AMD#0085"]
    c = _by_text(rep)
    assert c["$1,264 million"]["where"][0]["section_id"] == "AMD#0085"
    assert c["5.36%"]["status"] == "computed" and c["16.84 percentage points"]["formula"] == "22.20% - 5.36%"
    bad = verify_answer(text.replace("$16,434 million", "$16,443 million"), sections)
    assert _by_text(bad)["$16,443 million"]["status"] == "not_found" and not bad["ok"]


def test_page_citations_are_neither_claims_nor_sources():
    """``p.31-32`` beside a section and the ``Pages:`` line under the Sources are ppkit's citation markup."""
    s = Section("widget", "0002", "widget > Revenue", 3, 8, "## Revenue\nRevenue was 25 million dollars.", 1, 1.0,
                ((3, 4),), pages=(31,), page_lines=((31, 3, 8),))
    text = ("From widget > Revenue (widget p.31-32, lines 3-8):\n  - line 4 (p.31): Revenue was 25 million dollars.\n\n"
            "Sources:\n- widget > Revenue (ID: 0002)\nPages: widget p.31")
    r = verify_answer(text, [s])
    assert r["ok"] and r["unretrieved"] == [] and (r["counts"]["claims"], r["counts"]["verified"]) == (1, 1)


# --- the answer's arithmetic, units, breadcrumbs and citation names ---------------------------------------------

CASH = Section(doc="Pep", node_id="0080", breadcrumb="Pep > Consolidated Statement of Cash Flows", line_start=300,
               line_end=304, rank=1, score=1.0, sent_ranges=((300, 304),), chars_total=0,
               text="\n".join([
                   "## Consolidated Statement of Cash Flows",
                   "| (in millions) | 2022 | 2021 |",
                   "| Net Cash Provided by Operating Activities | 10,811 | 11,616 |",
                   "| Capital spending | (5,207) | (4,625) |",
                   "| Sales of property, plant and equipment | 251 | 166 |",
               ]))
RISK = Section(doc="Pep", node_id="0068", breadcrumb="Pep > Free Cash Flow > 100 percent or more", line_start=400,
               line_end=401, rank=2, score=0.9, sent_ranges=((400, 401),), chars_total=0,
               text="## Free Cash Flow\nAbout 8% of our customers and 59.1% of volume; 1,595 units.")


def test_a_shown_formula_makes_its_result_computed_or_inconsistent():
    text = ("Free cash flow: $10,811 - $5,207 + $251 = **$5,855 million** (ID: 0080).\n"
            "Conversion: $5,855 / $10,811 ≈ **54.16%** (ID: 0080).")
    rep = verify_answer(text, [CASH, RISK])
    c = _by_text(rep)
    assert rep["ok"] is True
    assert (c["$5,855 million"]["status"], c["$5,855 million"]["formula"]) == ("computed", "$10,811 - $5,207 + $251")
    # "$5,855" written again as an operand: the same result, with the formula it was computed by
    assert (c["$5,855"]["status"], c["$5,855"]["formula"]) == ("computed", "$10,811 - $5,207 + $251")
    assert c["54.16%"]["status"] == "computed"
    bad = verify_answer(text.replace("54.16%", "59.1%"), [CASH, RISK])  # 59.1% is in the sources, elsewhere
    b = _by_text(bad)
    assert (b["59.1%"]["status"], b["59.1%"]["formula"]) == ("inconsistent", "$5,855 / $10,811") and not bad["ok"]
    assert bad["counts"]["inconsistent"] == 1 and "59.1% [inconsistent]" in bad["marked_text"]


def test_a_stated_change_the_amounts_do_not_give_is_inconsistent():
    ok = "Operating cash flow decreased by 7% (from $11,616 million in 2021 to $10,811 million in 2022) (ID: 0080)."
    assert verify_answer(ok, [CASH, RISK])["ok"] is True  # 805 / 11,616 = 6.9%
    bad = verify_answer(ok.replace("7%", "8%"), [CASH, RISK, OPS])  # "8%" is in a source, but not this change
    c = _by_text(bad)["8%"]
    assert (c["status"], c["formula"]) == ("inconsistent", "|$11,616 million - $10,811 million| / the larger × 100")
    assert bad["ok"] is False


def test_derivations_respect_units_and_averages_need_the_word():
    # $5,884 is 5,801 + 83.07 numerically, but dollars plus a percent is no computation
    text = "Free cash flow was 5,801 and 83.07% of it was converted; capital spending was $5,884 (ID: 0080)."
    assert _by_text(verify_answer(text, [CASH, RISK]))["$5,884"]["status"] == "not_found"
    # a percent is a share × 100, not a bare ratio: 5,207 / 10,811 = 0.48, not "0.48%"
    text = "Capital spending was $5,207 million of $10,811 million, or 0.48% (ID: 0080)."
    assert _by_text(verify_answer(text, [CASH, RISK]))["0.48%"]["status"] == "not_found"
    assert _by_text(verify_answer(text.replace("0.48%", "48.16%"), [CASH, RISK]))["48.16%"]["status"] == "computed"
    # (10,811 + 11,616) / 2 = 11,213.5: only an answer that speaks of an average gets it derived
    plain = "Operating cash flow was $10,811 million and $11,616 million, so $11,213.5 million (ID: 0080)."
    assert _by_text(verify_answer(plain, [CASH, RISK]))["$11,213.5 million"]["status"] == "not_found"
    avg = plain.replace("so $11,213.5", "an average of $11,213.5")
    assert _by_text(verify_answer(avg, [CASH, RISK]))["$11,213.5 million"]["status"] == "computed"


def test_a_number_in_the_breadcrumb_is_in_what_was_sent():
    rep = verify_answer("The variance was 100% or more (ID: 0068).", [CASH, RISK])
    assert _by_text(rep)["100%"]["where"] == [{"section_id": "Pep#0068", "line": 400}] and rep["ok"] is True


def test_a_citation_named_after_another_section_is_mislabeled():
    good = "According to the **Consolidated Statement of Cash Flows (ID: 0080)**, capital spending was $5,207 million."
    rep = verify_answer(good, [CASH, RISK])
    assert rep["ok"] is True and "names" not in rep["citations"][0]
    bad = verify_answer(good.replace("0080", "0068"), [CASH, RISK])
    assert bad["citations"][0]["label"] == "Consolidated Statement of Cash Flows"
    assert bad["citations"][0]["names"] == ["Pep#0080"] and bad["counts"]["mislabeled"] == 1 and bad["ok"] is False
    # a quoted name, and a name in brackets after the id
    quoted = 'Based on the "Consolidated Statement of Cash Flows" (ID: 0068): capital spending was 5,207.'
    assert verify_answer(quoted, [CASH, RISK])["citations"][0]["names"] == ["Pep#0080"]
    after = "Capital spending was 5,207.\n\nSource: **Reference ID: 0068 (Consolidated Statement of Cash Flows)**"
    assert verify_answer(after, [CASH, RISK])["citations"][0]["names"] == ["Pep#0080"]
    # a quotation before the id is not a name, nor is a sentence, nor a name that fits no retrieved section
    for text in ('It says "capital spending in the consolidated statement of cash flows was 5,207" (ID: 0068).',
                 "We read the consolidated statement of cash flows and capital spending was 5,207 (ID: 0068).",
                 "**Liquidity and Capital Resources (ID: 0068)**: 8% of customers."):
        assert not any(c.get("names") for c in verify_answer(text, [CASH, RISK])["citations"]), text


def test_a_shown_formula_keeps_its_times_100_and_skips_a_bracketed_negative():
    rep = verify_answer("Margin = (1,264 / 23,601) × 100 = 5.36 (ID: 0085).", [OPS, OTHER])
    c = _by_text(rep)["5.36"]
    assert (c["status"], c["formula"]) == ("computed", "(1,264 / 23,601) × 100") and rep["ok"] is True
    # "(607)" may be a loss: 1,264 - (-607) = 1,871 is not held against 1,264 - 607 = 657 (the sign is unknown)
    c = _by_text(verify_answer("Sum: 1,264 - (607) = 1,871 (ID: 0085).", [OPS, OTHER]))["1,871"]
    assert (c["status"], c["formula"]) == ("computed", "1,264 + (607)")


T6 = Section(doc="AX", node_id="0073", breadcrumb="AX > TABLE 6: NETWORK VOLUMES", line_start=500, line_end=502,
             rank=1, score=1.0, sent_ranges=((500, 502),), chars_total=0,
             text="## TABLE 6: NETWORK VOLUMES\n| | 2022 | Change |\n| Total billed business | 1,553 | 23 % |")
T9 = Section(doc="AX", node_id="0082", breadcrumb="AX > U.S. CONSUMER SERVICES > TABLE 9: USCS INCOME STATEMENT",
             line_start=600, line_end=602, rank=2, score=0.9, sent_ranges=((600, 602),), chars_total=0,
             text="## TABLE 9: USCS INCOME STATEMENT\n| | 2022 | Change |\n| Interest income | 9,071 | 34 % |")


def test_a_figure_the_question_states_is_given():
    answer = "Billed business grew 23% (ID: 0073) while revenue grew ~24.7%: revenue outpaced volume."
    question = "If billed business grew ~23% and total revenue grew ~24.7%, what does this imply?"
    rep = verify_answer(answer, [T6, T9], question=question)
    assert _by_text(rep)["24.7%"]["status"] == "given" and rep["counts"]["given"] == 1 and rep["ok"] is True
    assert "1 given in the question" in format_report(rep)
    # without the question, or with another figure in it, the 24.7% is an unsupported claim
    assert _by_text(verify_answer(answer, [T6, T9]))["24.7%"]["status"] == "not_found"
    other = verify_answer(answer, [T6, T9], question="If revenue grew ~24.8%, what does this imply?")
    assert _by_text(other)["24.7%"]["status"] == "not_found" and other["ok"] is False
    # a percent is not given by the same value as an amount
    assert _by_text(verify_answer(answer, [T6, T9], question="Revenue of 24.7 billion?"))["24.7%"]["status"] == \
        "not_found"


def test_a_table_named_by_number_is_cited_and_checked_against_its_id():
    answer = "Billed business grew 23% (ID: 0073).\nIn Table 9 (USCS), interest income grew 34%."
    rep = verify_answer(answer, [T6, T9])
    assert [(c["cited"], c["section_ids"]) for c in rep["citations"]] == [("ID 0073", ["AX#0073"]),
                                                                         ("Table 9", ["AX#0082"])]
    assert _by_text(rep)["34%"]["status"] == "verified" and rep["ok"] is True
    # without the name the 34% is found only in an uncited section
    assert _by_text(verify_answer(answer.replace("Table 9 (USCS)", "the segment table"), [T6, T9]))["34%"][
        "status"] == "uncited"
    # "Tables 6 and 9" names both; a number no retrieved section is titled with cites nothing
    both = verify_answer("Across Tables 6 and 9 and Table 12, growth was 23% and 34%.", [T6, T9])
    assert [c["cited"] for c in both["citations"]] == ["Table 6", "Table 9"] and both["ok"] is True
    # a table name written with an id labels that id: naming Table 9 but citing 0073 is a mislabeled citation
    bad = verify_answer("According to Table 9 (ID: 0073), interest income grew 34%.", [T6, T9])
    assert bad["citations"][0]["names"] == ["AX#0082"] and bad["counts"]["mislabeled"] == 1 and bad["ok"] is False
    good = verify_answer("According to Table 9 (ID: 0082), interest income grew 34%.", [T6, T9])
    assert good["ok"] is True and not any(c.get("names") for c in good["citations"])
    # named tables alone do not narrow the check: an answer citing no id is checked against every section
    alone = verify_answer("In Table 9, interest income grew 34% while billed business grew 23%.", [T6, T9])
    assert alone["ok"] is True and alone["checked_against"] == ["AX#0073", "AX#0082"]
