"""ppkit.ui.widgets driven from Python, without a browser: set a control, check what is shown."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import ppkit
from ppkit.documents.noise import NoiseDecision
from ppkit.documents.tree import parse_markdown
from ppkit.core.style import BLOCK, NO_MATH, PRE
from ppkit.ui.widgets import QueryExplorer, TreeView

pytest.importorskip("ipywidgets")

FIXTURES = Path(__file__).parent / "fixtures"
ACME = FIXTURES / "widgets_acme.md"
GLOBEX = FIXTURES / "widgets_globex.md"


@pytest.fixture(scope="module")
def tiny_index():
    """Two hand-written reports indexed with the hash embedder (instant, deterministic)."""
    return ppkit.build_index([ACME, GLOBEX], names=["ACME", "Globex"], embedder=ppkit.HashEmbedder(),
                             save=False, progress=False)


# -- TreeView -------------------------------------------------------------------------------

def test_tree_view_starts_with_top_headings_and_the_root_selected():
    view = TreeView(ppkit.build_tree(ACME))
    assert view.visible() == ["0000", "0001", "0003", "0004", "0008", "0009"]
    assert [v for _, v in view.nodes.options] == view.visible()
    assert view.nodes.value == "0000"
    labels = dict((v, k) for k, v in view.nodes.options)
    assert labels["0004"] == "\u00a0\u00a0▸ ITEM 7. MANAGEMENT'S DISCUSSION AND ANALYSIS  [0004 · L1 · 12-13]"
    assert labels["0008"] == "\u00a0\u00a0· Magnets  [0008 · L1 · 24-29 · 1 fig]"
    assert labels["0000"] == "▾ widgets_acme  [0000 · L0 · none]"


def test_tree_view_select_expands_ancestors_and_shows_the_text():
    view = TreeView(ppkit.build_tree(ACME))
    view.select("0006")
    assert view.visible() == ["0000", "0001", "0003", "0004", "0005", "0006", "0007", "0008", "0009"]
    assert view.nodes.value == "0006"
    assert "own text lines 16-19" in view.text.value
    assert "Rocket revenue was $120 million in 2022" in view.text.value
    # picking another visible row in the list shows that node instead
    view.nodes.value = "0007"
    assert view.selected == "0007"
    assert "Anvil revenue was $80 million" in view.text.value
    assert "Rocket revenue" not in view.text.value


def test_tree_view_toggle_and_collapse_all_keep_a_visible_selection():
    view = TreeView(ppkit.build_tree(ACME))
    view.select("0007")
    view.toggle_node("0005")  # collapse the selection's parent: the selection moves up to it
    assert view.visible() == ["0000", "0001", "0003", "0004", "0005", "0008", "0009"]
    assert (view.selected, view.nodes.value) == ("0005", "0005")
    view.toggle.click()  # the button acts on the selected node: expand it again
    assert "0007" in view.visible()
    view.collapse_all.click()
    assert view.visible() == ["0000", "0001", "0003", "0004", "0008", "0009"]
    assert view.selected == "0004"
    view.expand_all.click()
    assert view.visible() == [f"{i:04d}" for i in range(11)]


def test_tree_view_figures_noise_and_summary():
    tree = ppkit.build_tree(ACME)
    toc = NoiseDecision("0002", "Table of Contents", True, "toc", "rule", "title matches the table of contents rule")
    view = TreeView(tree, noise={"0002": toc})
    view.select("0002")
    assert dict((v, k) for k, v in view.nodes.options)["0002"].endswith("[0002 · L2 · 3-7 · noise: toc]")
    assert "noise: toc (rule: title matches the table of contents rule)" in view.text.value
    view.select("0008")
    assert "<code>figures/magnets.png</code> line 28 - the file does not exist" in view.text.value
    html = view.summary_html()
    assert html.startswith(f"<div class='ppkit-block {NO_MATH}' style='{BLOCK}'><div><b>widgets_acme</b>: 10 headings, "
                           "34 lines, 1 figures")
    assert html.count("<details open") == 2  # the root, and 0001 opened to show the selected 0002
    assert "<details open style='margin-left:0.6em'><summary><span style=''>ACME Corp Annual Report" in html
    assert "<span style='background:#fff3c4;'>Magnets</span>" in html
    assert "Magnet revenue was $40 million in 2022" in html


def test_tree_view_errors_are_clear():
    view = TreeView(ppkit.build_tree(ACME))
    with pytest.raises(KeyError, match="no node '0099'"):
        view.select("0099")
    with pytest.raises(ValueError, match="pass its lines"):
        TreeView(parse_markdown("# A\n", "D"))
    assert "ppkit-node-text" in TreeView(parse_markdown("# A\nx\n", "D"), ["# A", "x"]).summary_html()


# -- QueryExplorer --------------------------------------------------------------------------

def test_explorer_without_a_question_shows_a_prompt(tiny_index):
    ex = QueryExplorer(tiny_index)
    assert ex.result is None and ex.shown_sections == [] and ex.candidate_rows() == []
    assert "Type a question" in ex.status.value
    assert ex.section.options == ()


def test_explorer_query_and_k_change_the_shown_sections(tiny_index):
    ex = QueryExplorer(tiny_index, k=5)
    ex.query.value = "rocket revenue"
    first = ex.shown_sections
    assert len(first) == 5 and first[0] == "ACME#0006"
    # the explorer shows exactly what retrieve() returns for that k
    assert first == [s.section_id for s in tiny_index.retrieve("rocket revenue", k=5).sections]
    ex.k.value = 2
    assert ex.shown_sections == first[:2]
    assert ex.shown_sections == [s.section_id for s in tiny_index.retrieve("rocket revenue", k=2).sections]
    assert ex.candidates.value.count("font-weight:bold") == 2  # the chosen k are highlighted
    assert [r["chosen"] for r in ex.candidate_rows()] == [True, True] + [False] * 5
    ex.query.value = "working capital consumed operating cash flow"
    assert ex.shown_sections[0] == "Globex#0003"
    assert ex.section.value == "Globex#0003"  # a new ranking selects its top section
    assert "lines 7-10 of Globex" in ex.section_text.value
    assert "Changes in working capital consumed $7 million" in ex.section_text.value


def test_explorer_funnel_and_candidates(tiny_index):
    ex = QueryExplorer(tiny_index, "rocket revenue", k=3)
    assert ex.funnel_counts() == {"chunks": 7, "sections": 7, "candidates": 7, "statements_added": 0, "k": 3,
                                  "context_chars": sum(len(s.text) for s in ex.chosen)}
    rows = ex.candidate_rows()
    assert [r["rank"] for r in rows] == list(range(1, 8))
    assert rows[0] == {"rank": 1, "section_id": "ACME#0006",
                       "breadcrumb": "ACME > ITEM 7. MANAGEMENT'S DISCUSSION AND ANALYSIS > Results of Operations > Rockets",
                       "lines": "16-19", "stage1_rank": 1, "stage1_score": rows[0]["stage1_score"],
                       "stage2_score": ex.result.candidates[0].stage2_score, "chunk_hits": 1, "chosen": True}
    assert rows[0]["stage1_score"] == round(ex.result.candidates[0].stage1_score, 4)
    assert "chunks recalled (stage 1)" in ex.funnel.value and "<b>7</b>" in ex.funnel.value
    # picking a candidate that was not chosen shows its full text and says so
    ex.section.value = "ACME#0010"
    assert "lines 32-34 of ACME" in ex.section_text.value and "not chosen" in ex.section_text.value
    summary = ex.summary_html()
    assert "ACME#0010" in summary and "Cash and cash equivalents were $55 million" in summary
    assert summary.count("font-weight:bold") == 3


def test_explorer_document_filter(tiny_index):
    ex = QueryExplorer(tiny_index, "revenue in 2022", k=3, doc="globex")  # names resolve case-insensitively
    assert ex.doc.value == "Globex"
    assert ex.shown_sections and all(s.startswith("Globex#") for s in ex.shown_sections)
    assert ex.result.trace.docs_filter == ["Globex"]
    ex.doc.value = ex.ALL
    assert {s.split("#")[0] for s in ex.shown_sections} == {"ACME", "Globex"}
    assert ex.result.trace.docs_filter is None and ex.result.trace.filter_source == "none"
    ex.doc.value = ex.AUTO
    ex.query.value = "Globex hammock revenue"  # the question names the document: it becomes the filter
    assert ex.result.trace.docs_filter == ["Globex"] and ex.result.trace.filter_source == "question"
    assert "document filter: Globex (named in the question)" in ex.status.value
    with pytest.raises(KeyError, match="no document 'Initech'"):
        QueryExplorer(tiny_index, doc="Initech")


def test_explorer_shows_a_retrieval_error_instead_of_failing_silently(tmp_path):
    src = tmp_path / "ACME.md"
    shutil.copy(ACME, src)
    index = ppkit.build_index([src], embedder=ppkit.HashEmbedder(), save=False, progress=False)
    src.write_text(src.read_text(encoding="utf-8").replace("$120 million", "$999 million"), encoding="utf-8")
    ex = QueryExplorer(index, "rocket revenue")
    assert ex.result is None and ex.shown_sections == []
    assert ex.error.startswith("StaleIndexError: ACME:") and "changed since it was indexed" in ex.error
    assert "Retrieval failed." in ex.status.value


@pytest.mark.corpus
@pytest.mark.model
def test_explorer_on_the_reference_10k_index():
    index = ppkit.reference_index("10k")
    question = ("For PepsiCo, calculate the reinvestment rate defined as Capex divided by "
                "(Operating Cash Flow minus Dividends).")
    ex = QueryExplorer(index, question, k=5)
    f = ex.funnel_counts()
    assert (f["chunks"], f["candidates"], f["k"]) == (200, 50, 5)
    assert ex.result.trace.docs_filter == ["PepsiCo"]
    assert all(s.startswith("PepsiCo#") for s in ex.shown_sections)
    ex.k.value = 3
    assert ex.shown_sections == [s.section_id for s in index.retrieve(question, k=3).sections]
    ex.query.value = "For Boeing, what percentage of operating cash flow in FY2022 was consumed by changes in working capital?"
    assert ex.result.trace.docs_filter == ["Boeing"] and len(ex.shown_sections) == 3
    assert all(s.startswith("Boeing#") for s in ex.shown_sections)


# -- in JupyterLab: keys, scrolling and styles ------------------------------------------------

def test_tree_view_node_list_keys_expand_collapse_and_climb():
    view = TreeView(ppkit.build_tree(ACME))
    view.nodes.value = "0004"  # what clicking a row (or an arrow key) in the browser sets
    assert view.selected == "0004" and "0005" not in view.visible()
    # the list's ArrowRight / ArrowLeft arrive as custom messages from the browser
    view.nodes._handle_custom_msg({"event": "expand"}, [])
    assert view.visible() == ["0000", "0001", "0003", "0004", "0005", "0008", "0009"]
    view.nodes.value = "0005"
    view.key("expand")
    assert "0006" in view.visible() and view.nodes.value == "0005"
    view.nodes.value = "0006"
    view.key("collapse")  # a leaf: the selection climbs to its parent
    assert (view.selected, view.nodes.value) == ("0005", "0005")
    view.key("collapse")  # an open node: it closes
    assert "0006" not in view.visible() and view.selected == "0005"
    view.key("collapse")  # closed: climb again
    assert view.selected == "0004" and "Rockets" not in view.text.value


def test_tree_view_node_list_takes_its_keys_from_jupyterlab():
    from ppkit.ui import node_list

    view = TreeView(ppkit.build_tree(ACME))
    esm = str(view.nodes._esm)
    # Lumino matches no shortcut on an element with this attribute; handled keys stop at the list
    assert 'setAttribute("data-lm-suppress-shortcuts", "true")' in esm and "e.stopPropagation()" in esm
    assert all(k in esm for k in ("ArrowDown:", "ArrowUp:", "PageDown:", "PageUp:", "Home:", "End:"))
    # whole labels on one line, the box scrolls sideways
    assert "white-space:pre" in esm and "overflow:auto" in esm and "display:inline-block;min-width:100%" in esm
    assert view.nodes.rows == 20 and node_list.node_list([["a", "x"]], "x", rows=3).rows == 3


def test_widget_html_carries_its_own_line_height_and_word_breaking(tiny_index):
    # JupyterLab's `pre {word-break: break-all}` and the widgets' 28px line height lose to inline styles
    assert "word-break:normal" in PRE and "white-space:pre-wrap" in PRE
    assert "line-height:1.4" in BLOCK and "word-break:normal" in BLOCK
    view = TreeView(ppkit.build_tree(ACME))
    assert view.text.value.startswith(f"<div class='ppkit-block {NO_MATH}' style='{BLOCK}'>")
    assert "class='ppkit-node-text' style='word-break:normal;" in view.text.value
    ex = QueryExplorer(tiny_index, "rocket revenue", k=3)
    for w in (ex.status, ex.funnel, ex.candidates, ex.section_text):
        assert w.value.startswith(f"<div class='ppkit-block {NO_MATH}' style='{BLOCK}'>")
    assert f"<pre style='{PRE}'>" in ex.section_text.value
    assert ex.summary_html().startswith(f"<div class='ppkit-block {NO_MATH}'")


def test_strip_private_use():
    from ppkit.core.style import strip_private_use

    assert strip_private_use("Eq. (3): L(\ue000x\ue001) =  \uf8eb 2 \uf8f6") == "Eq. (3): L(x) = 2"
    assert strip_private_use("plain  text ") == "plain  text "  # nothing removed: left as it was


def test_tree_view_search_box_selects_the_matching_headings_in_turn():
    view = TreeView(ppkit.build_tree(ACME))
    view.search.value = "results of"  # what typing and Enter set
    assert view.tree[view.selected].title == "Results of Operations" and "1 of 1" in view.search_status.value
    view.search.value = "item"
    first = view.selected
    assert view.tree[first].title.startswith("ITEM 1") and len(view.matches) >= 2
    view.next_match.click()
    assert view.selected == next(m for m in view.matches if m > first)
    view.search.value = "no such heading"
    assert view.selected == next(m for m in view.matches or [view.selected]) and "no heading" in view.search_status.value


def test_tree_view_renders_the_text_and_its_html_tables_safely():
    lines = ["# T", "Some **bold** text.", "", "<table><tr><td colspan=\"2\" onclick=\"x()\">1.5</td></tr></table>",
             "<script>alert(1)</script>", "", "[a](javascript:alert(1)) and [b](https://example.org)"]
    view = TreeView(parse_markdown("\n".join(lines) + "\n", "D"), lines)
    view.select("0001")
    out = view.text.value
    assert "<strong>bold</strong>" in out and "<td colspan=\"2\" style=" in out and ">1.5</td>" in out
    assert "onclick" not in out and "<script>" not in out and "&lt;script&gt;" in out
    assert "href=\"javascript" not in out and "href=\"https://example.org\"" in out


def test_bold_inside_a_table_cell_is_bold():
    from ppkit.ui.render import markdown_html

    out = markdown_html("<table><tr><td>**ASSETS** & <i>x</i> 1 < 2</td></tr></table>\n")
    assert "<b>ASSETS</b> &amp; <i" in out and "1 &lt; 2" in out and "**" not in out
