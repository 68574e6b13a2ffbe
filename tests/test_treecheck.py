"""The tree check on a hand-written 10-K-like fixture whose every problem is known."""

from __future__ import annotations

from pathlib import Path

import pytest

from ppkit.cli import main
from ppkit.documents.tree import build_tree, parse_markdown
from ppkit.documents.treecheck import Finding, check_tree, format_report, heading_agreement

FIXTURE = Path(__file__).parent / "fixtures" / "treecheck_10k.md"


def test_findings_on_the_fixture():
    found = [(f.line, f.node_id, f.kind, f.severity) for f in check_tree(build_tree(FIXTURE))]
    assert found == [
        (1, "0000", "text_before_heading", "warning"),
        (10, "0002", "toc_block", "warning"),
        (17, "0003", "empty_section", "info"),  # PART I at ### swallowed nothing: Item 1 is at #
        (19, "0004", "numbering_level", "warning"),  # Item 1 (level 1) not inside PART I (level 3)
        (23, "0005", "level_jump", "warning"),  # ### right after #
        (31, "0006", "heading_like_line", "info"),  # **Customers**
        (35, "0007", "numbering_level", "warning"),  # Item 1A at 2, Item 1 at 1
        (39, "0008", "empty_section", "info"),
        (39, "0008", "numbering_level", "warning"),  # PART II at 2, PART I at 3
        (41, "0009", "numbering_level", "warning"),  # Item 7 not deeper than PART II
        (45, "0009", "heading_like_line", "info"),  # ITEM 7A. in plain text
        (53, "0011", "level_jump", "warning"),  # ##### after ##
        (57, "0012", "numbering_level", "warning"),  # Item 8 at 1, Item 7 at 2
        (59, "0013", "empty_section", "info"),
        (64, "0015", "duplicate_title", "warning"),  # second "ACME Corp and Subsidiaries" under Item 8
        (64, "0015", "empty_section", "info"),
        (65, "0016", "numbering_level", "warning"),  # Balance Sheets at 1, Statements of Operations at 2
        (70, "0018", "numbering_level", "warning"),  # Note 1 at 3, the statement before it at 1
        (88, "0023", "duplicate_title", "warning"),  # second Backlog with the same breadcrumb
        (92, "0024", "empty_heading", "error"),
        (94, "0025", "level_jump", "warning"),  # #### Signatures after #
        (94, "0025", "numbering_level", "warning"),  # the TOC lists Signatures beside the items
    ]


def test_messages_name_what_is_wrong():
    by_line = {(f.line, f.kind): f.message for f in check_tree(build_tree(FIXTURE))}
    assert by_line[(1, "text_before_heading")] == "23 characters before the first heading belong to no section"
    assert by_line[(10, "toc_block")] == "table of contents (5 entries, lines 10-15) inside 'Table of Contents'"
    assert by_line[(35, "numbering_level")] == "Item 1A is at level 2 but Item 1 (0004) is at level 1"
    assert by_line[(41, "numbering_level")] == "Item 7 (level 2) should sit inside PART II (0008, level 2)"
    assert by_line[(45, "heading_like_line")] == ("an ITEM line in plain text looks like a missed heading: "
                                                  "'ITEM 7A. QUANTITATIVE AND QUALITATIVE DISCLOSURES ABOUT MARKET RISK'")
    assert by_line[(88, "duplicate_title")] == (
        "breadcrumb 'treecheck_10k > Consolidated Balance Sheets > ACME Corp and Subsidiaries > Backlog' "
        "also names 0022 (2 headings share it)")


def test_giant_sections_by_threshold():
    giant = [(f.node_id, f.message) for f in check_tree(build_tree(FIXTURE), giant_chars=140) if f.kind == "giant_section"]
    assert giant == [("0002", "'Table of Contents' holds 225 characters of its own text (> 140)"),
                     ("0010", "'Results of Operations' holds 145 characters of its own text (> 140)")]
    assert not [f for f in check_tree(build_tree(FIXTURE)) if f.kind == "giant_section"]


def test_clean_tree_has_no_findings():
    text = "# 1 Intro\n\nText.\n\n## 1.1 Scope\n\nMore.\n\n# 2 Method\n\nHow.\n"
    assert check_tree(parse_markdown(text, "d"), lines=text.splitlines()) == []
    assert format_report([]) == "tree check: no findings"


def test_heading_like_lines_skip_tables_code_and_references():
    text = ("# A\n\n| **Bold cell** |\n|---|\n| Item 7. | MD&A |\n\n```\n**not a heading**\nITEM 7. code\n```\n\n"
            "See Item 7 for details.\nThe **word** is bold.\n")
    kinds = [f.kind for f in check_tree(parse_markdown(text, "d"), lines=text.splitlines())]
    assert kinds == []


def test_format_report():
    findings = [Finding("level_jump", "0002", 5, "level 3 right after level 1 ('A')", "warning"),
                Finding("empty_heading", "0003", 9, "heading without a title", "error")]
    assert format_report(findings) == (
        "tree check: 2 findings: 1 empty_heading (error), 1 level_jump (warning)\n"
        "  line      5  0002  warning  level_jump: level 3 right after level 1 ('A')\n"
        "  line      9  0003  error    empty_heading: heading without a title")


def test_check_needs_lines():
    with pytest.raises(ValueError, match="needs the document's lines"):
        check_tree(parse_markdown("# A\n", "d"))


def test_cli_tree_check(capsys):
    assert main(["tree", str(FIXTURE), "--check"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("tree check: 22 findings: 1 empty_heading (error), 2 duplicate_title (warning), ")
    assert "  line     92  0024  error    empty_heading: heading without a title" in out
    assert ("  line     94  0025  warning  numbering_level: 'Signatures' (TOC, after Item 8) is at level 4 "
            "but Item 8 (0012) is at level 1") in out


def test_heading_agreement_textbook_example():
    ref = parse_markdown("# Item 1. Business\n## Segments\n## Gaming\n# Item 7. MD&A\n## Revenues\n## Revenues\n", "ref")
    ext = parse_markdown("### **Item 1. Business**\n### Segments\n### Item 7. MD&A\n### Revenues\n### Extra\n", "ext")
    a = heading_agreement(ext, ref)
    # matched in order: Item 1, Segments, Item 7, one Revenues -> 4 of 6 reference titles, 4 of 5 extracted
    assert (a.n_reference, a.n_extracted, a.matched) == (6, 5, 4)
    assert a.titles_found == pytest.approx(4 / 6) and a.precision == pytest.approx(4 / 5)
    # levels: only Segments (2 vs 3)... none equal: reference 1,2,1,2 vs extracted 3,3,3,3
    assert a.levels_equal == 0
    # steps between matched pairs: ref (down, up, down) vs ext (same, same, same)
    assert (a.steps_agree, a.n_steps) == (0, 3)
    same = heading_agreement(ref, ref)
    assert (same.titles_found, same.level_agreement, same.step_agreement) == (1.0, 1.0, 1.0)
