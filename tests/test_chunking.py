"""ppkit.documents.chunking: section-bounded chunks, boundaries, table rows, short sections."""

from pathlib import Path

from ppkit.documents.chunking import chunk_tree, fixed_size_chunks, section_units, split_text
from ppkit.documents.tree import build_tree, parse_markdown, read_lines

FIX = Path(__file__).parent / "fixtures"


def test_split_prefers_paragraph_breaks():
    # the blank line falls in the second half of the first 80 characters: cut there
    lines = ["a" * 40, "", "b" * 30, "c" * 30]
    assert split_text(lines, 10, size=80, overlap=0) == [(10, 11, "a" * 40), (12, 13, "b" * 30 + "\n" + "c" * 30)]
    # a blank line in the first half is not worth a short piece: fill up to the size
    lines = ["a" * 20, "", "b" * 30, "c" * 30]
    assert [p[:2] for p in split_text(lines, 1, size=70, overlap=0)] == [(1, 3), (4, 4)]


def test_split_overlap_repeats_whole_lines():
    lines = ["x" * 40, "y" * 40, "z" * 40]
    pieces = split_text(lines, 1, size=90, overlap=45)
    assert [(a, b) for a, b, _ in pieces] == [(1, 2), (2, 3)]
    assert pieces[1][2].startswith("y" * 40)


def test_long_prose_line_cut_at_words_but_table_row_kept_whole():
    prose = " ".join(["word"] * 60)  # 299 characters
    row = "| " + " | ".join(["1,234"] * 60) + " |"
    pieces = split_text([prose, row], 1, size=100, overlap=0)
    assert all(len(t) <= 100 for a, b, t in pieces if a == 1 and b == 1)
    assert any(t == row for _, _, t in pieces)  # the row survives intact, even over size


def test_chunks_carry_breadcrumb_and_never_cross_headings():
    tree = build_tree(FIX / "acme.md")
    lines = read_lines(FIX / "acme.md")
    chunks = chunk_tree(tree, lines, size=2000, overlap=200)
    for c in chunks:
        n = tree[c.node_id]
        assert n.line_start <= c.line_start <= c.line_end <= n.text_end
        assert c.text.startswith(f"[{n.breadcrumb}]\n")
    liq = [c for c in chunks if tree[c.node_id].title == "Liquidity and Capital Resources"]
    assert len(liq) == 1 and "$430 million" in liq[0].text
    assert liq[0].text.splitlines()[0] == "[acme > ITEM 7. MANAGEMENT'S DISCUSSION AND ANALYSIS > Liquidity and Capital Resources]"


def test_short_parent_gets_no_chunk_and_short_leaf_folds_into_parent():
    md = "# Statements\n\n## Balance Sheet\n\n" + "Assets line. " * 20 + "\n\n### (in millions)\n\nx\n\n## Cash Flows\n\n" + "Cash line. " * 20 + "\n"
    tree = parse_markdown(md, "d")
    lines = md.split("\n")[:-1]
    units = section_units(tree, lines)
    # "Statements" has no text of its own; "(in millions)" is folded into "Balance Sheet"
    assert units == {"0002": (3, 10), "0004": (11, 13)}


def test_kept_filter_drops_sections():
    tree = build_tree(FIX / "acme.md")
    lines = read_lines(FIX / "acme.md")
    toc = tree.find("TABLE OF CONTENTS")[0].node_id
    kept = set(tree.nodes) - {toc}
    assert toc in {c.node_id for c in chunk_tree(tree, lines)}
    assert toc not in {c.node_id for c in chunk_tree(tree, lines, kept)}


def test_fixed_size_chunks():
    assert fixed_size_chunks("abcdefghij", size=4, overlap=1) == [(0, 4, "abcd"), (3, 7, "defg"), (6, 10, "ghij")]
