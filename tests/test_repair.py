"""Heading-level repair on hand-written fixtures with known correct levels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ppkit.documents.repair import (
    Numbering,
    heading_number,
    repair_file,
    repair_markdown,
)
from ppkit.documents.titles import normalize_title
from ppkit.documents.tree import build_tree, parse_markdown
from ppkit.documents.treecheck import check_tree

FIXTURES = Path(__file__).parent / "fixtures"


def _levels(text: str) -> list[tuple[int, str]]:
    return [(n.level, n.title) for n in parse_markdown(text, "d").headings()]


@pytest.mark.parametrize("title, expected", [
    ("PART II", Numbering("part", "10k", 1, "PART II")),
    ("Part IV — Other Information", Numbering("part", "10k", 1, "PART IV")),
    ("ITEM 1A. RISK FACTORS", Numbering("item", "10k", 2, "Item 1A")),
    ("Item\u00a07. Management's Discussion", Numbering("item", "10k", 2, "Item 7")),
    ("**Item 9B.** Other Information", Numbering("item", "10k", 2, "Item 9B")),
    ("NOTE 4 – INVENTORIES", Numbering("note", "10k", 3, "Note 4")),
    ("Note 12. Leases", Numbering("note", "10k", 3, "Note 12")),
    ("Consolidated Statements of Cash Flows", Numbering("statement", "10k", 3, "Consolidated Statements of Cash Flows")),
    ("1 Introduction", Numbering("num", "num", 1, "1")),
    ("3.2. Low-Rank Property", Numbering("num", "num", 2, "3.2")),
    ("2.1.1 Data", Numbering("num", "num", 3, "2.1.1")),
    ("B.1. Reversibility", Numbering("num", "num", 2, "B.1")),
    ("II. GAME PLAYING", Numbering("roman", "ieee", 1, "II")),
    ("A. Shannon's Taxonomy", Numbering("letter", "ieee", 2, "A")),
])
def test_heading_number(title, expected):
    assert heading_number(title) == expected


@pytest.mark.parametrize("title", [
    "Business Environment and Trends", "2022 Compared with 2021", "A Study of Widgets", "3M Company",
    "Items Affecting Comparability", "Notes to the Consolidated Financial Statements", "",
])
def test_not_numbered(title):
    assert heading_number(title) is None


def test_appendix_letters_join_the_decimal_family():
    assert heading_number("A. Proofs", appendix_letters=True) == Numbering("num", "num", 1, "A")


def test_normalize_title():
    assert normalize_title("**Item  7.** Management’s  Discussion") == "item 7 management s discussion"


def test_repair_10k_fixture_levels():
    rep = repair_markdown((FIXTURES / "treecheck_10k.md").read_text())
    assert _levels(rep.text) == [
        (1, "FORM 10-K"), (2, "Table of Contents"),
        (1, "PART I"), (2, "Item 1. Business"), (3, "Segments"), (4, "Gaming"), (2, "Item 1A. Risk Factors"),
        (1, "PART II"), (2, "Item 7. Management's Discussion and Analysis"), (3, "Results of Operations"),
        (4, "Revenues"),
        (2, "Item 8. Financial Statements"),
        (3, "ACME Corp and Subsidiaries"), (3, "Consolidated Statements of Operations"),
        (3, "ACME Corp and Subsidiaries"), (3, "Consolidated Balance Sheets"),
        (3, "ACME Corp and Subsidiaries"), (3, "Note 1 - Summary of Accounting Policies"), (4, "Use of Estimates"),
        (3, "Note 2 - Revenue"), (4, "Use of Estimates"), (4, "Backlog"), (4, "Backlog"), (4, "(untitled)"),
        (2, "Signatures"),  # the TOC lists it after Item 8: a sibling of the items
    ]
    assert rep.n_headings == 25 and len(rep.changes) == 15
    sig = [c for c in rep.changes if c.title == "Signatures"][0]
    assert (sig.node_id, sig.line, sig.old_level, sig.new_level) == ("0025", 94, 4, 2)
    assert sig.reason == "'Signatures' (TOC, after Item 8): sibling of Item 8"


def test_repair_keeps_ids_and_lines():
    raw_text = (FIXTURES / "treecheck_10k.md").read_text()
    raw = parse_markdown(raw_text, "d")
    fixed = repair_markdown(raw_text).tree("d")
    assert [(n.node_id, n.line_start, n.title) for n in raw] == [(n.node_id, n.line_start, n.title) for n in fixed]
    assert raw.n_lines == fixed.n_lines
    # only the # runs of heading lines change
    changed = [i for i, (a, b) in enumerate(zip(raw_text.split("\n"), repair_markdown(raw_text).text.split("\n"))) if a != b]
    assert all(raw_text.split("\n")[i].startswith("#") for i in changed)
    # and the repaired tree has no numbering contradictions left
    assert [f for f in check_tree(fixed, lines=repair_markdown(raw_text).text.split("\n"))
            if f.kind in ("numbering_level", "level_jump")] == []


def test_repair_paper_fixture_levels():
    rep = repair_markdown((FIXTURES / "repair_paper.md").read_text())
    assert _levels(rep.text) == [
        (1, "A Study of Widgets"), (1, "Abstract"), (1, "1 Introduction"), (1, "2 Method"), (2, "2.1 Setup"),
        (3, "2.1.1 Data"), (4, "Notation"), (2, "2.2 Training"), (1, "3 Results"),
        (1, "References"),  # back matter: a sibling of the outermost numbered heading
        (1, "A. Proofs"), (2, "A.1 Lemma"), (1, "B. More Results"),  # appendices after References
    ]


def test_repair_ieee_sections():
    text = "### I. INTRODUCTION\n### II. METHOD\n### A. Design\n### B. Build\n### III. RESULTS\n### REFERENCES\n"
    assert _levels(repair_markdown(text).text) == [
        (1, "I. INTRODUCTION"), (1, "II. METHOD"), (2, "A. Design"), (2, "B. Build"), (1, "III. RESULTS"),
        (1, "REFERENCES")]


def test_repair_uses_the_pdf_outline():
    text = "### Introduction\n### Background\n### Related Work\n### Details\n"
    outline = [(1, "Introduction", 1), (2, "Background", 1), (1, "3 Related Work", 2)]
    assert _levels(repair_markdown(text, outline=outline).text) == [
        (1, "Introduction"), (2, "Background"), (1, "Related Work"), (2, "Details")]
    assert _levels(repair_markdown(text).text) == [(1, t) for t in ("Introduction", "Background", "Related Work", "Details")]
    # outline levels are absolute: a top-level bookmark closes the numbered sections open above it
    text = "### I. INTRODUCTION\n### A. Scope\n### Summary Table\n"
    assert _levels(repair_markdown(text, outline=[(1, "Summary Table", 3)]).text) == [
        (1, "I. INTRODUCTION"), (2, "A. Scope"), (1, "Summary Table")]
    assert _levels(repair_markdown(text).text)[2] == (3, "Summary Table")


def test_repeated_header_becomes_sibling_of_what_follows():
    text = ("# Item 8. Statements\n# ACME Inc.\n## Balance Data\nx\n# ACME Inc.\n## Income Data\ny\n"
            "# ACME Inc.\n## Cash Data\nz\n")
    rep = repair_markdown(text)
    assert _levels(rep.text) == [(1, "Item 8. Statements"), (2, "ACME Inc."), (2, "Balance Data"), (2, "ACME Inc."),
                                 (2, "Income Data"), (2, "ACME Inc."), (2, "Cash Data")]
    assert (rep.changes[0].title, rep.changes[0].old_level, rep.changes[0].new_level) == ("ACME Inc.", 1, 2)
    assert rep.changes[0].reason == "repeated header (3x, no text): level of the next heading"
    # without the rule, the header (raw level 1 above raw level 2) would swallow the statement
    assert _levels(text)[1:3] == [(1, "ACME Inc."), (2, "Balance Data")]


def test_repair_file_writes_a_new_file_and_a_record(tmp_path):
    src = tmp_path / "doc.md"
    src.write_text((FIXTURES / "repair_paper.md").read_text())
    before = src.read_bytes()
    rep = repair_file(src)
    assert src.read_bytes() == before  # the original is never touched
    out = tmp_path / "doc.repaired.md"
    assert out.read_text() == rep.text
    rec = json.loads((tmp_path / "doc.repaired.repair.json").read_text())
    assert rec["n_changed"] == len(rep.changes) == 12 and rec["outline_used"] is False  # all but 2.1.1 (level 3)
    assert rec["changes"][2] == {"node_id": "0003", "line": 9, "title": "1 Introduction", "old_level": 3,
                                 "new_level": 1, "reason": "1: outermost numbering"}
    assert build_tree(out)["0006"].breadcrumb == "doc.repaired > 2 Method > 2.1 Setup > 2.1.1 Data"
    with pytest.raises(ValueError, match="writes a new file"):
        repair_file(src, src)


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["AMD", "AMEX", "Boeing", "PepsiCo"])
def test_repair_on_reference_10k_keeps_ids_and_fixes_numbering(name):
    from ppkit.core.data import data_dir

    text = (data_dir() / "10k" / f"{name}.md").read_text(encoding="utf-8")
    raw = parse_markdown(text, name)
    rep = repair_markdown(text)
    fixed = rep.tree(name)
    assert [(n.node_id, n.line_start) for n in raw] == [(n.node_id, n.line_start) for n in fixed]
    left = [f for f in check_tree(fixed, lines=rep.text.split("\n")) if f.kind in ("numbering_level", "level_jump")]
    assert left == []


# -- letter-spaced words (join_split_words) -------------------------------------------------------

SPLIT = """### **Item 1. Busines** **<u>s.</u>**
### **OVERVI EW**
### **RESULTS OF OPERATI ONS** and PART II I
We are a company; see Regulation S-K and the in come line.
Our business and business overview, overview of operations and operations; PART III, Part III, Regulations, regulations.
income, income. area area
They are here, we are there, you are everywhere; come and come again, come in, in and in.
"""


def test_join_split_words_textbook():
    from ppkit.documents.repair import join_split_words

    out = join_split_words(SPLIT)
    lines = out.text.split("\n")
    assert lines[:3] == ["### **Item 1. Business.</u>**", "### **OVERVIEW**", "### **RESULTS OF OPERATIONS** and PART III"]
    assert lines[3] == SPLIT.split("\n")[3]  # "are a", "Regulation S-K", "in come": ordinary words stay apart
    assert out.text.count("\n") == SPLIT.count("\n")  # no line added or dropped
    assert out.joins == ((1, "Business"), (2, "OVERVIEW"), (3, "OPERATIONS"), (3, "III"))
