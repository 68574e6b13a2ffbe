"""Trimming a long section to the budget by what the question asks (ppkit.retrieval.pointers), on a hand-written
section: eight paragraphs of legal boilerplate, the litigation range in one paragraph, a captioned marketing table."""

from pathlib import Path
from types import SimpleNamespace

import pytest

import ppkit
from ppkit.retrieval.pointers import load_sections

FIX = Path(__file__).parent / "fixtures"
BUDGET = 700


@pytest.fixture(scope="module")
def trim_index(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("trim")
    doc = tmp / "docs" / "acme.md"
    doc.parent.mkdir()
    doc.write_text((FIX / "trim_section.md").read_text(encoding="utf-8"), encoding="utf-8")
    return ppkit.build_index([doc], tmp / "index", embedder=ppkit.HashEmbedder(), config=ppkit.Config(online=False),
                             progress=False)


def _load(index, question, *, query=True, budget=BUDGET):
    doc = index.docs[0]
    nid = next(n.node_id for n in index.trees[doc].headings() if n.title == "Legal Proceedings and Marketing")
    cand = SimpleNamespace(doc=doc, node_id=nid, breadcrumb="", stage1_score=1.0, stage2_score=1.0)
    (s,) = load_sections(index, [cand], budget=budget, query_vec=index.embedder.embed_query(question),
                         query=question if query else None)
    return s


def test_the_sentence_with_the_figure_is_kept(trim_index):
    s = _load(trim_index, "What is the range of reasonably possible loss in the antitrust litigation?")
    assert s.trimmed and len(s.text) <= BUDGET < s.chars_total
    assert s.text.startswith("## Legal Proceedings and Marketing\n")
    assert "$120 million to $340 million" in s.text
    assert "[…]" in s.text


def test_a_kept_row_brings_its_header_rule_and_caption(trim_index):
    s = _load(trim_index, "How much was spent on advertising and marketing in the Snacks segment?")
    lines = s.text.split("\n")
    row = lines.index("| Snacks | 412 | 388 |")
    cap = lines.index("Advertising and marketing expense by segment (in millions)")
    head = lines.index("| Segment | 2022 | 2021 |")
    assert cap < head < row and lines[head + 1] == "| --- | --- | --- |"
    assert len(s.text) <= BUDGET
    # the sent ranges name the source lines of what was sent: the row's line and the header's
    src = (FIX / "trim_section.md").read_text(encoding="utf-8").split("\n")
    assert s.contains_line(src.index("| Snacks | 412 | 388 |") + 1) and s.contains_line(src.index("| Segment | 2022 | 2021 |") + 1)
    assert "| Skates | 96 | 71 |" not in s.text and not s.contains_line(src.index("| Skates | 96 | 71 |") + 1)


@pytest.mark.parametrize("budget", [120, 300, 701, 1000])
def test_the_budget_is_exact(trim_index, budget):
    s = _load(trim_index, "What is the range of reasonably possible loss in the antitrust litigation?", budget=budget)
    assert len(s.text) <= budget and s.trimmed
    assert len(s.text) > budget - 200  # filled, not left mostly empty


def test_the_vector_only_trim_loses_the_figure(trim_index):
    """The previous rule (whole chunks nearest the question vector) on the same section and budget:
    what this module's question-aware trim fixes (the hash embedder stands in for the model)."""
    s = _load(trim_index, "What is the range of reasonably possible loss in the antitrust litigation?", query=False)
    assert s.trimmed and len(s.text) <= BUDGET
    assert "$120 million to $340 million" not in s.text


def test_layout_size_equals_the_laid_out_text():
    from ppkit.retrieval.pointers import _layout, _layout_sizer

    # blank gaps are sent as they are, other gaps as one cut mark, text after the last kept line as one
    full = [(1, "# Head"), (2, ""), (3, "para one"), (4, "  "), (5, ""), (6, "| a | 1 |"), (7, "tail words"),
            (8, ""), (9, "last"), (10, "")]
    size = _layout_sizer(full)
    for keep in ([0], [0, 2], [0, 5], [0, 2, 5], [0, 3], [0, 1, 8], [0, 9], [0, 6, 8], list(range(10)), [2, 4]):
        assert size(keep) == len("\n".join(t for _, t in _layout(full, keep))), keep
    assert size([]) == 0
    assert size([0, 5]) == len("# Head\n[…]\n| a | 1 |\n[…]")
