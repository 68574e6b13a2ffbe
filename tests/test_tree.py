"""ppkit.documents.tree: heading rules, ids, line ranges, breadcrumbs, images, reference ids."""

from pathlib import Path

import pytest

from ppkit.documents.tree import Tree, build_tree, clean_title, parse_markdown

FIX = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def edge():
    return build_tree(FIX / "edge_cases.md")


def test_edge_case_headings(edge):
    got = [(n.node_id, n.level, n.title, n.line_start, n.text_end, n.subtree_end) for n in edge]
    assert got == [
        ("0000", 0, "edge_cases", 1, 2, 35),
        ("0001", 1, "Part One", 3, 6, 22),
        ("0002", 2, "Bold Section", 7, 16, 22),
        ("0003", 3, "Deep", 17, 22, 22),
        ("0004", 1, "Part Two", 23, 28, 35),
        ("0005", 2, "(untitled)", 29, 32, 35),
        ("0006", 3, "Indented three spaces", 33, 35, 35),
    ]


def test_parents_children_and_breadcrumbs(edge):
    assert edge["0003"].parent_id == "0002"
    assert edge["0001"].children == ("0002",)
    assert edge.root.children == ("0001", "0004")
    assert edge["0003"].breadcrumb == "edge_cases > Part One > Bold Section > Deep"
    assert edge["0002"].raw_title == "**Bold Section**"


def test_image_recorded_with_problem(edge):
    (img,) = edge["0002"].images
    assert (img.path, img.line, img.alt) == ("figures/chart.png", 9, "Figure 1: a chart")
    assert img.resolved is None and img.problem == "the file does not exist"
    assert all(not n.images for n in edge if n.node_id != "0002")


def test_no_headings_is_one_section():
    tree = build_tree(FIX / "no_headings.md")
    assert len(tree) == 1
    assert (tree.root.line_start, tree.root.text_end, tree.n_lines) == (1, 2, 2)


@pytest.mark.parametrize("raw,clean", [
    ("**Free Cash Flow**", "Free Cash Flow"),
    ("***Financing Activities***", "Financing Activities"),
    ("<u>**Business Risks**</u>", "Business Risks"),
    ("*Other Impairment Charges*", "Other Impairment Charges"),
    ("6.2 **Special Rules**.", "6.2 Special Rules."),
    ("NOTE 4 – Segment Reporting", "NOTE 4 – Segment Reporting"),
    ("**_We depend on airlines._**", "We depend on airlines."),
    ("snake_case_name stays", "snake_case_name stays"),
])
def test_clean_title(raw, clean):
    assert clean_title(raw) == clean


def test_closing_hashes_and_crlf():
    tree = parse_markdown("# A #\r\ntext\r\n## B ##\r\n", "d")
    assert [n.title for n in tree.headings()] == ["A", "B"]
    assert tree["0002"].line_start == 3


def test_round_trip(tmp_path, edge):
    edge.save(tmp_path / "t.json")
    assert Tree.load(tmp_path / "t.json") == edge


def test_not_utf8(tmp_path):
    p = tmp_path / "bad.md"
    p.write_bytes(b"# Title\n\xff\xfe bad bytes\n")
    with pytest.raises(ValueError, match="not UTF-8"):
        build_tree(p)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such Markdown file"):
        build_tree(tmp_path / "nope.md")


def test_unknown_node_id(edge):
    with pytest.raises(KeyError, match="has no node '0099'"):
        edge["0099"]


@pytest.mark.corpus
@pytest.mark.parametrize("doc,node_id,title,line", [
    ("AMD", "0066", "Embedded", 1542),
    ("AMD", "0085", "Consolidated Statements of Operations", 1924),
    ("AMD", "0114", "NOTE 4 – Segment Reporting", 3303),
    ("Boeing", "0107", "Consolidated Statements of Cash Flows", None),
    ("PepsiCo", "0080", "Consolidated Statement of Cash Flows", None),
])
def test_reference_node_ids(doc, node_id, title, line):
    from ppkit.core.data import data_dir

    tree = build_tree(data_dir() / "10k" / f"{doc}.md")
    assert tree[node_id].title == title
    if line is not None:
        assert tree[node_id].line_start == line


@pytest.mark.corpus
def test_reference_log_breadcrumbs_name_the_same_headings():
    """Every `-> Node NNNN | breadcrumb` in the reference k=5 logs names our node's title (markup stripped)."""
    import re

    from ppkit.core.data import data_dir

    d = data_dir()
    files = {"AMD": "AMD", "AMEX": "AMEX", "Boeing": "Boeing", "Pepsico": "PepsiCo"}
    checked = 0
    for log in sorted((d / "benchmarks" / "comprehensive_k5").glob("*.log")):
        doc = files[log.name.split("_")[0]]
        tree = build_tree(d / "10k" / f"{doc}.md")
        for node_id, crumb in re.findall(r"-> Node (\d{4})\s+\| (.+)", log.read_text(encoding="utf-8")):
            assert clean_title(crumb.split(" > ")[-1].strip()) == tree[node_id].title, (doc, node_id)
            checked += 1
    assert checked == 200  # 40 questions x 5 nodes
