"""ppkit.retrieval.statements: primary financial statements as PDF extraction leaves them."""

from pathlib import Path

import pytest

import ppkit
from ppkit.documents.tree import build_tree, read_lines
from ppkit.retrieval.recall import section_statements
from ppkit.retrieval.rerank import StructuralReranker
from ppkit.retrieval.statements import (_NOTE, asks_for_adjusted, asks_for_part, asks_for_reasons, figure_lines, section_statement_kinds, statement_kind,
                                      statements_asked)
from ppkit.retrieval.types import Candidate

DOC = Path(__file__).parent / "fixtures" / "statements_pdf.md"


@pytest.mark.parametrize("title, kind", [
    ("Consolidated Balance Sheets", "balance"),
    ("3M Company and Subsidiaries Consolidated Statement of Cash Flows Years ended December 31", "cash_flows"),
    ("ACME, INC. AND SUBSIDIARIES CONSOLIDATED BALANCE SHEETS", "balance"),
    ("Acme plc and Subsidiaries Consolidated Statements of Income ($ in millions, except per share data", "operations"),
    ("Condensed Consolidated Statements of Earnings (Unaudited)", "operations"),
    ("Consolidated Statements of Operations (continued)", "operations"),
    ("**CONSOLIDATED STATEMENTS OF CASH FLOWS**", "cash_flows"),
    ("Selected Income Statement Data", None),
    ("Key Balance Sheet Data", None),
    ("Analysis of the Consolidated Statements of Cash Flows", None),
    ("Notes to Consolidated Financial Statements", None),
    ("44<br>Consolidated Statements of Cash Flows", None),
    ("Consolidated Statements of Income Acme Incorporated and Subsidiary Companies", "operations"),  # filer after
])
def test_statement_kind_reads_pdf_titles(title, kind):
    assert statement_kind(title) == kind


def _kinds(tree, lines):
    out = {}
    for node in tree.headings():
        body = lines[node.line_start - 1:node.text_end]
        out[node.title] = set(section_statement_kinds(tree, lines, node.node_id, body))
    return out


def test_section_statement_kinds_over_an_extracted_filing():
    tree, lines = build_tree(DOC), read_lines(DOC)
    kinds = _kinds(tree, lines)
    assert kinds == {
        "INITECH CORP.": set(),
        "Financial Condition": set(),
        "Balance Sheet:": set(),  # a discussion, no table of figures
        "Index to Consolidated Financial Statements": set(),  # one page number a row
        "Report of Independent Registered Public Accounting Firm": set(),
        "Critical Audit Matter": {"operations"},  # the title is the first cell of its table
        "CONSOLIDATED BALANCE SHEETS": set(),  # an empty heading: its table is under the caption
        "(In millions, except per share data)": {"balance"},  # the empty title just before it
        "Initech Corp. and Subsidiaries Consolidated Statements of Cash Flows Years ended December 31": {"cash_flows"},
        "Selected Balance Sheet Data": set(),
    }


def test_statement_recall_and_rerank_find_the_captioned_statement(tmp_path):
    index = ppkit.build_index([DOC], tmp_path / "index", embedder=ppkit.HashEmbedder(),
                              config=ppkit.Config(online=False), progress=False)
    caption = tree_node(index, "(In millions, except per share data)")
    assert section_statements(index, "statements_pdf", caption) == {"balance"}
    r = index.retrieve("What is the current ratio?", k=3, docs=["statements_pdf"])
    assert r.sections[0].node_id == caption
    assert r.candidates[0].features["statement"] == 1.0


def tree_node(index, title):
    (node,) = index.trees["statements_pdf"].find(title)
    return node.node_id


@pytest.mark.parametrize("question, kinds", [
    ("Were Norwell's gross margins steady?", {"operations"}),  # plural
    ("What were Norwell's COGS in 2016?", {"operations"}),  # standard abbreviations
    ("Did Norwell's net PP&E grow?", {"balance"}),
    ("How fast does Norwell turn its inventory (inventory turnover)?", {"balance", "operations"}),  # both inputs
    ("How did Norwell's free cashflow develop?", {"cash_flows"}),  # one word
    ("What does the balance sheet say about leases?", {"balance"}),  # a statement named
    ("Who is the chief executive?", set()),
])
def test_statements_asked_reads_common_wording(question, kinds):
    assert statements_asked(question) == kinds


NOTE_DOC = Path(__file__).parent / "fixtures" / "statements_note.md"


def test_a_table_after_the_notes_titled_like_a_statement_is_not_the_statement():
    tree, lines = build_tree(NOTE_DOC), read_lines(NOTE_DOC)
    assert _kinds(tree, lines) == {
        "GLOBEX CORP.": set(),
        "Liquidity": set(),
        "Free Cash Flow": set(),
        "Note to Investors Concerning Forward-Looking Statements": set(),  # no note of the statements
        "Consolidated Statement of Cash Flows": {"cash_flows"},
        "Note 7 — Supplemental Financial Information": set(),
        "Balance Sheet": set(),  # under the note: its table, not the balance sheet
        "Statement of Cash Flows": set(),
        "Note 8 — Impact of Adoption of New Standards": set(),
        "Consolidated Balance Sheets": set(),  # beside a note, as a PDF's flat headings leave it: a restatement table
    }


@pytest.mark.parametrize("title, is_note", [
    ("Note 14 — Supplemental Financial Information", True), ("NOTE B. Leases", True), ("Note 7", True),
    ("Note 1 Summary of Significant Accounting Policies", True),
    ("Notes to Consolidated Financial Statements", True),
    ("NOTES TO UNAUDITED CONDENSED CONSOLIDATED FINANCIAL STATEMENTS", True),
    ("Notes to Condensed Consolidated Interim Financial Statements", True),
    ("Notes 4.50% due 2027", False), ("Note 2025 Outlook", False), ("Note a", False), ("Notes payable", False),
    ("Note regarding forward-looking statements", False), ("NOTE TO INVESTORS CONCERNING FORWARD-LOOKING STATEMENTS", False),
])
def test_which_headings_are_notes_of_the_financial_statements(title, is_note):
    assert bool(_NOTE.match(title)) is is_note


TEXT_LAYER_DOC = Path(__file__).parent / "fixtures" / "statements_textlayer.md"


def test_statements_as_the_text_layer_leaves_them():
    """Rows as run-on prose, both years in one cell, a statement split over its captions ("Assets"), its
    title an empty heading before a period heading, and a cross-reference heading ("Note 9. ...") long
    before note 1 that does not open the notes."""
    tree, lines = build_tree(TEXT_LAYER_DOC), read_lines(TEXT_LAYER_DOC)
    assert _kinds(tree, lines) == {
        "UMBRELLA CORP.": set(),
        "Note 9. Commitments and Contingencies": set(),
        "Legal Proceedings": set(),
        "Results of Operations": set(),  # prose with a few numbers: no figures
        "Umbrella Corp. and Subsidiaries": set(),
        "Consolidated Statements of Operations": set(),  # an empty title
        "Years ended December 31": {"operations"},  # its rows as run-on prose, under the period heading
        # the units and the years only: its own title and one row of numbers (the years' header)
        "Consolidated Statements of Financial Position Umbrella Corp. and Subsidiary Companies": {"balance"},
        "Assets": {"balance"},  # the statement runs over its captions
        "Liabilities and equity": {"balance"},
        "Consolidated Statements of Comprehensive Income": set(),  # another statement ends the run
        "Note 1. Summary of Significant Accounting Policies": set(),
        "Consolidated Balance Sheets": set(),  # after note 1: a note's table
    }


def test_figure_lines_counts_run_on_rows_and_merged_cells():
    assert figure_lines(["| Cash | $9,889 $ 8,348 |", "| Contents | 41 |"]) == 1
    assert figure_lines(["Net sales $ 1,200 $ 1,100 $ 1,000 Cost of sales 700 650 600"]) == 2
    assert figure_lines(["Net sales rose 5% to $1,200 million in 2022 from $1,100 million in 2021, driven by volume."]) == 0


@pytest.mark.parametrize("question, part", [
    ("How did US sales growth compare to international sales growth?", True),
    ("Which geographic region had the biggest drop in revenues?", True),
    ("What share of revenue came from the Data Center segment?", True),
    ("How did sales in Europe change?", True),
    ("What were total net sales?", False),
    ("What was Marriott International's U.S. GAAP net income?", False),  # a name and U.S. GAAP are no parts
    ("Please help us compute the operating margin.", False),  # "us" is no country
])
def test_asks_for_part_reads_segments_and_regions(question, part):
    assert asks_for_part(question) is part


def test_a_question_about_a_part_gets_no_statement_match():
    def cand(node_id, title, text):
        return Candidate("acme", node_id, f"acme > {title}", 0.5, 1, 1, (0.5,), 1, 9, text[:150], text)

    cands = [cand("0040", "Consolidated Statements of Income", "| Net sales | 1,200 | 1,100 |"),
             cand("0020", "Regional Sales Results", "| U.S. | 700 | 600 |\n| International | 500 | 500 |")]
    kinds = {"0040": frozenset({"operations"}), "0020": frozenset()}
    reranker = StructuralReranker(statement_kinds=lambda doc, node_id: kinds[node_id])
    assert list(reranker.features("What were net sales?", cands)["statement"]) == [1.0, 0.0]
    assert list(reranker.features("What were US sales and international sales?", cands)["statement"]) == [0.0, 0.0]
    # the causes of a change and an adjusted measure are in the discussion or the reconciliation, not the statements
    assert list(reranker.features("What drove the change in net sales?", cands)["statement"]) == [0.0, 0.0]
    assert list(reranker.features("What were adjusted net sales?", cands)["statement"]) == [0.0, 0.0]


@pytest.mark.parametrize("question, reasons, adjusted", [
    ("What drove operating margin change as of FY2022?", True, False),
    ("Why did the company raise its full year guidance?", True, False),
    ("What are the drivers of the decline in gross margin?", True, False),
    ("What was the operating margin? If it is not a useful metric, then state that and explain why.", False, False),
    ("Did operating income increase? What was the reason?", False, False),  # "the reason" alone: no cause asked for
    ("What was the Adjusted Non GAAP EBITDA for FY 2023?", False, True),
    ("What was the change in sales if we exclude the impact of FX movement?", False, True),
    ("What was organic sales growth?", False, True),
    ("How much did revenue grow excluding currency effects?", False, True),
    ("What was total debt excluding operating lease liabilities?", False, False),  # a line taken out, no effect
    ("What was net income attributable to shareholders?", False, False),
])
def test_questions_the_statements_do_not_answer(question, reasons, adjusted):
    assert (asks_for_reasons(question), asks_for_adjusted(question)) == (reasons, adjusted)


def test_a_title_line_over_prose_is_a_subtitle_not_the_statement(tmp_path):
    """A statement's title line in the body is followed by its units or table; "Balance Sheet:" over a paragraph
    (the MD&A's liquidity discussion, with a table of its own) is a subtitle."""
    rows = [f"| {label} | 1,{n}00 | 1,{n}50 |" for n, label in enumerate(["Cash", "Receivables", "Inventories",
                                                                          "Total assets", "Total debt"], start=1)]
    doc = tmp_path / "acme.md"
    doc.write_text("\n".join([
        "# ACME CORP", "", "## Critical Audit Matter", "", "We audited the inventory reserves.", "",
        "CONSOLIDATED BALANCE SHEETS", "", "(in millions)", "", *rows, "",
        "## Financial Condition and Liquidity", "", "Balance Sheet:", "",
        "Our strong balance sheet and liquidity give the company flexibility to fund its many opportunities going "
        "forward, and the company will keep investing in research, its plants and its people.", "", *rows, ""]))
    tree, lines = build_tree(doc), read_lines(doc)
    kinds = _kinds(tree, lines)
    assert kinds["Critical Audit Matter"] == {"balance"} and kinds["Financial Condition and Liquidity"] == set()
