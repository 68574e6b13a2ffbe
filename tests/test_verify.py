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
    assert rep["counts"] == {"claims": 7, "verified": 4, "computed": 3, "uncited": 0, "wrong_period": 0, "not_found": 0,
                             "citations": 1, "unretrieved": 0}
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
