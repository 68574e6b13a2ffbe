"""ppkit.ui.explore: tree statistics, suspicious heading levels, chunking comparison, index folder listing."""

from __future__ import annotations

from pathlib import Path

import pytest

import ppkit
from ppkit.ui import explore
from ppkit.documents.noise import NoiseDecision
from ppkit.documents.tree import parse_markdown, read_lines

FIXTURES = Path(__file__).parent / "fixtures"
ACME = FIXTURES / "widgets_acme.md"
GLOBEX = FIXTURES / "widgets_globex.md"


@pytest.mark.parametrize("title, numbered", [
    ("ITEM 7. MANAGEMENT'S DISCUSSION", True), ("PART II", True), ("Note 5 – Business Combinations", True),
    ("NOTE 12 – Common Stock", True), ("3.2 Method", True), ("IV. Results", True), ("(a) Vesting.", True),
    ("A.7 Transition Rules", True), ("Gaming", False), ("Results of Operations", False),
    ("Item Processing Costs", False), ("Notes to Consolidated Financial Statements", False),
])
def test_is_numbered(title, numbered):
    assert explore.is_numbered(title) is numbered


def test_suspicious_levels_textbook_example():
    # "# Gaming" after "## Client" under MD&A: a segment heading the parser put at level 1
    md = "# MD&A\n## Data Center\nx\n## Client\ny\n# Gaming\nz\n"
    issues = explore.suspicious_levels(parse_markdown(md, "D"))
    assert [(i.node_id, i.title, i.level, i.prev_id, i.prev_level, i.left_section, i.suggested_level)
            for i in issues] == [("0004", "Gaming", 1, "0003", 2, "MD&A", 2)]
    assert issues[0].reason == ("level-1 leaf right after level-2 sibling 'Client': it closes 'MD&A' "
                                "although it has no number and no subsections")


@pytest.mark.parametrize("md", [
    "# MD&A\n## Data Center\nx\n## Client\ny\n# ITEM 8. Statements\nz\n",  # numbered: a real new division
    "# MD&A\n## Data Center\nx\n## Client\ny\n# Gaming\n## Gaming Market\nz\n",  # has subsections
    "# MD&A\n## Overview\nx\n# Risk Factors\nz\n",  # the previous heading was the first of its siblings
    "# A\n## B\nx\n## C\ny\n",  # no climb at all
])
def test_suspicious_levels_leaves_plausible_structure_alone(md):
    assert explore.suspicious_levels(parse_markdown(md, "D")) == []


def test_suspicious_levels_on_fixture():
    issues = explore.suspicious_levels(ppkit.build_tree(ACME))
    assert [(i.doc, i.node_id, i.title, i.prev_title, i.left_section, i.suggested_level) for i in issues] == [
        ("widgets_acme", "0008", "Magnets", "Anvils", "Results of Operations", 3)]


def test_tree_stats_exact_values():
    frame = explore.tree_stats([ppkit.build_tree(ACME), ppkit.build_tree(GLOBEX)])
    assert list(frame.index) == ["widgets_acme", "widgets_globex"]
    assert list(frame.columns) == ["lines", "headings", "L1", "L2", "L3", "max_depth", "leaves", "figures",
                                   "figures_missing", "section_chars_median", "section_chars_p90",
                                   "section_chars_max", "suspicious_levels"]
    acme = frame.loc["widgets_acme"].to_dict()
    assert {k: acme[k] for k in ("lines", "headings", "L1", "L2", "L3", "max_depth", "leaves", "figures",
                                 "figures_missing", "suspicious_levels")} == {
        "lines": 34, "headings": 10, "L1": 5, "L2": 3, "L3": 2, "max_depth": 3, "leaves": 6, "figures": 1,
        "figures_missing": 1, "suspicious_levels": 1}
    # the largest own text is Magnets' (lines 25-29): a 101- and a 42-character line, 3 blank lines, 4 newlines
    assert acme["section_chars_max"] == 101 + 42 + 4
    globex = frame.loc["widgets_globex"].to_dict()
    assert (globex["headings"], globex["L1"], globex["L2"], globex["L3"], globex["figures"]) == (4, 1, 3, 0, 0)


def test_tree_stats_needs_lines_for_a_tree_built_from_text():
    tree = parse_markdown("# A\ntext\n", "D")
    with pytest.raises(ValueError, match="pass its lines"):
        explore.tree_stats([tree])
    assert explore.tree_stats([tree], lines={"D": ["# A", "text"]}).loc["D", "section_chars_max"] == 4


def test_compare_chunking_textbook_example():
    lines = ["# A", "a" * 50, "# B", "b" * 50]  # text offsets: "# A" 0, a's 4, "# B" 55, b's 59; 109 chars
    tree = parse_markdown("\n".join(lines) + "\n", "D")
    cmp = explore.compare_chunking(tree, lines, size=60, overlap=0)
    assert [(b.start, b.end, b.line_start, b.line_end, b.parts) for b in cmp.blind] == [
        (0, 60, 1, 4, (("0001", 55), ("0002", 5))),
        (60, 109, 4, 4, (("0002", 49),)),
    ]
    assert [b.crosses for b in cmp.blind] == [True, False]
    assert cmp.crossing() == [cmp.blind[0]]
    assert cmp.crossing(min_each=10) == []  # only 5 characters of B: not a real blend
    assert [(c.node_id, len(c.body)) for c in cmp.structured] == [("0001", 50), ("0002", 50)]
    summary = cmp.summary()
    assert summary.loc["structure-guided"].to_dict() == {"chunks": 2, "chars_median": 50, "chars_p90": 50,
                                                          "chars_max": 50, "chunks_mixing_sections": 0}
    assert summary.loc["blind fixed-size"].to_dict() == {"chunks": 2, "chars_median": 54, "chars_p90": 58,
                                                          "chars_max": 60, "chunks_mixing_sections": 1}


def test_plot_chunk_lengths_returns_data_and_figure():
    tree = ppkit.build_tree(ACME)
    cmp = explore.compare_chunking(tree, read_lines(ACME), size=200, overlap=20)
    data, fig = explore.plot_chunk_lengths(cmp)
    assert list(data.columns) == ["method", "chars"]
    assert data["method"].value_counts().to_dict() == {"structure-guided": len(cmp.structured),
                                                        "blind fixed-size": len(cmp.blind)}
    assert len(fig.axes) == 1 and fig.axes[0].get_xlabel().startswith("characters per chunk")


def test_noise_table_and_categories():
    tree = ppkit.build_tree(ACME)
    decisions = {"widgets_acme": {"0002": NoiseDecision("0002", "Table of Contents", True, "toc", "rule",
                                                        "title matches the table of contents rule")}}
    frame = explore.noise_table(decisions, trees={"widgets_acme": tree})
    assert frame.to_dict("records") == [{
        "doc": "widgets_acme", "node_id": "0002", "title": "Table of Contents", "noise": True, "category": "toc",
        "filter": "rule", "reason": "title matches the table of contents rule", "score": None,
        "breadcrumb": "widgets_acme > ACME Corp Annual Report > Table of Contents"}]
    assert list(explore.noise_table({}).columns) == ["doc", "node_id", "title", "noise", "category", "filter",
                                                     "reason", "score"]
    cats = explore.noise_categories()
    assert list(cats["category"]) == ["toc", "glossary", "acknowledgments", "foreword", "executive_summary",
                                      "references"]


def test_index_files_lists_the_folder(tmp_path):
    folder = tmp_path / "idx"
    ppkit.build_index([ACME, GLOBEX], folder, names=["ACME", "Globex"], embedder=ppkit.HashEmbedder(),
                      progress=False)
    frame = explore.index_files(folder)
    plain = [f for f in frame["file"] if not f.startswith("bm25/")]  # BM25's own files: tests/test_lexical.py
    assert plain == ["chunks.jsonl", "manifest.json", "noise.json", "paths.json", "paths.npy", "rendered/ACME.json",
                     "rendered/Globex.json", "sections.json", "trees/ACME.json",
                     "trees/Globex.json", "vectors.faiss"]
    records = dict(zip(frame["file"], frame["records"]))
    assert (records["chunks.jsonl"], records["manifest.json"], records["trees/ACME.json"],
            records["trees/Globex.json"]) == (7, 2, 11, 5)
    assert (frame["bytes"] > 0).all()
    with pytest.raises(FileNotFoundError, match="not an index folder"):
        explore.index_files(tmp_path)
