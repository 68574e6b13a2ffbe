"""Bad Markdown and long documents (issue 12, cases 9, 11, 16, 17): a byte order mark, an unclosed
code fence, node ids past 9,999, and the per-section character budget."""

from __future__ import annotations

import pytest

from ppkit import Config, HashEmbedder, build_index
from ppkit.answer.synth_gemini import parse_sources
from ppkit.answer.verify import verify_answer
from ppkit.cli import main
from ppkit.documents.tree import build_tree, read_lines
from ppkit.documents.treecheck import check_tree
from ppkit.retrieval.types import Section


def test_bom_before_the_first_heading_keeps_it(tmp_path):  # case 9
    p = tmp_path / "bom.md"
    p.write_bytes(b"\xef\xbb\xbf# Revenue\nSales were 5.\n## Costs\nCosts were 3.\n")
    tree = build_tree(p)
    assert [(n.node_id, n.title, n.line_start) for n in tree.headings()] == [("0001", "Revenue", 1), ("0002", "Costs", 3)]
    assert tree.root.text_end == 0  # nothing before the first heading
    assert read_lines(p)[0] == "# Revenue"  # the pointer's text has no BOM either


def test_unclosed_fence_keeps_later_headings_and_is_reported(tmp_path, capsys):  # case 11
    p = tmp_path / "fence.md"
    p.write_text("# Intro\ntext\n```python\nx = 1\n# Results\nR.\n## Table\nT.\n", encoding="utf-8")
    tree = build_tree(p)
    assert [n.title for n in tree.headings()] == ["Intro", "Results", "Table"]
    found = [(f.kind, f.line, f.severity) for f in check_tree(tree, p) if f.kind == "unclosed_fence"]
    assert found == [("unclosed_fence", 3, "error")]
    assert main(["tree", str(p), "--check"]) == 0
    assert "unclosed_fence" in capsys.readouterr().out
    # a closed fence still hides what is inside it
    q = tmp_path / "closed.md"
    q.write_text("# Intro\n```\n# not a heading\n```\n# Results\n", encoding="utf-8")
    assert [n.title for n in build_tree(q).headings()] == ["Intro", "Results"]
    assert [f for f in check_tree(build_tree(q), q) if f.kind == "unclosed_fence"] == []


def _section(node_id: str) -> Section:
    return Section("big", node_id, f"big > Heading {node_id}", 20001, 20003, "Revenue was $1,264 million.", 1, 1.0,
                   ((20001, 20003),), 27, False)


def test_five_digit_node_ids_are_cited(tmp_path):  # case 16
    sec = _section("10001")
    text = "Revenue was $1,264 million.\nSources:\n- big > Heading 10001 (ID: 10001)"
    assert parse_sources(text, [sec]) == [{"node_id": "10001", "breadcrumb": "big > Heading 10001", "doc": "big",
                                           "in_context": True}]
    v = verify_answer(text, [sec])
    assert v["unretrieved"] == [] and v["citations"][0]["section_ids"] == ["big#10001"] and v["ok"]


@pytest.mark.parametrize("budget", [1500, 3000, 6000])
def test_section_budget_is_never_overrun(tmp_path, budget):  # case 17
    # long paragraphs: a 2,000-character chunk is part of a line, but the whole line is what is rendered
    words = " ".join(f"w{i}" for i in range(700))  # ~3,800 characters
    body = "\n\n".join(f"Paragraph {j}: {words}" for j in range(6))
    p = tmp_path / "long.md"
    p.write_text(f"# Long\n{body}\n# Short\nsmall\n", encoding="utf-8")
    index = build_index([p], tmp_path / "ix", embedder=HashEmbedder(), config=Config(online=False), progress=False)
    r = index.retrieve("Paragraph w5 w17", k=2, budget=budget)
    long = next(s for s in r.sections if s.node_id == "0001")
    assert long.trimmed and long.chars_total > budget
    assert len(long.text) <= budget
    assert long.text.startswith("# Long")
