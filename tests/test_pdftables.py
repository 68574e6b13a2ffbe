"""Tables in PDFs keep their rows (issue 47): the text-layer extractor (ppkit.documents.textlayer) on PDFs made
here, from HTML laid out by WeasyPrint (BSD) and drawn cell by cell with ReportLab (BSD), and the drawn rules it
reads (ppkit.documents.pdfrules).

Every figure must stay in its row, beside its label, under the column headers (periods) it was set under; the
table sits under the heading before it, with its units caption; no header cell becomes a heading. The report's
own wording is written here (a made-up company), not taken from any benchmark."""

from __future__ import annotations

import re

import pytest

from ppkit.documents.extract import extract_pdf
from ppkit.documents.pdfrules import Rules, ruled_grids
from ppkit.documents.tree import build_tree

# label -> figures, left to right, as the report sets them
BALANCE = {
    "Cash and cash equivalents": ["$41,250", "$38,100"],
    "Accounts receivable, net": ["27,830", "25,460"],
    "Inventories": ["19,415", "21,007"],
    "Total current assets": ["88,495", "84,567"],
    "Property, plant and equipment, net of accumulated depreciation": ["52,300", "49,880"],
    "Total assets": ["140,795", "134,447"],
    "Accounts payable": ["18,220", "17,915"],
    "Accrued liabilities": ["12,640", "11,302"],
    "Total current liabilities": ["30,860", "29,217"],
    "Long-term debt": ["35,000", "40,000"],
    "Total liabilities": ["65,860", "69,217"],
    "Total stockholders' equity": ["74,935", "65,230"],
}
BALANCE_HEAD = ["Line item", "December 31, 2024", "December 31, 2023"]
SEGMENTS = {
    "Marine Lighting": ["96,410", "90,225", "14,880", "13,105"],
    "Navigation Systems": ["61,730", "58,940", "9,215", "8,470"],
    "Service and Parts": ["22,065", "20,310", "5,640", "5,012"],
    "Total": ["180,205", "169,475", "29,735", "26,587"],
}
SEGMENT_HEAD = ["Segment", "Net sales 2024", "Net sales 2023", "Operating income 2024", "Operating income 2023"]

_CSS = {  # how the cells are ruled and aligned
    "ruled": "td, th { border: 0.6pt solid #444; }",
    "ruled-top": "td, th { border: 0.6pt solid #444; vertical-align: top; }",
    "aligned": "td, th { border: none; }",
    "header-rule": "th { border-bottom: 0.8pt solid #000; } td { border: none; }",
}


def _html(css: str) -> str:
    def rows(table: dict, head: list[str], label_width: str) -> str:
        out = [f'<tr><th style="width:{label_width}">{head[0]}</th>'
               + "".join(f'<th class="n">{h}</th>' for h in head[1:]) + "</tr>"]
        for label, figs in table.items():
            out.append(f"<tr><td>{label}</td>" + "".join(f'<td class="n">{f.replace("$", "$ ")}</td>' for f in figs)
                       + "</tr>")
        return "\n".join(out)

    segment_head = ["Segment", "Net sales<br>2024", "Net sales<br>2023", "Operating income<br>2024",
                    "Operating income<br>2023"]
    segments = {k.replace("Navigation Systems", "Navigation<br>Systems").replace("Service and Parts",
                                                                                   "Service and<br>Parts"): v
                for k, v in SEGMENTS.items()}
    return f"""<html><head><style>
body {{ font-family: 'DejaVu Sans', sans-serif; font-size: 10pt; }}
h1 {{ font-size: 18pt; }} h2 {{ font-size: 13pt; }}
table {{ border-collapse: collapse; width: 100%; margin: 8pt 0; }}
td, th {{ padding: 3pt 5pt; }} .n {{ text-align: right; }} .caption {{ font-style: italic; }}
{css}
</style></head><body>
<h1>Harbor Lights Holdings, Inc.</h1>
<p>Annual report for the fiscal year ended December 31, 2024. This report presents the financial position and the
results of the segments of Harbor Lights Holdings, a maker of marine lighting and navigation equipment.</p>
<h2>Consolidated Balance Sheet</h2>
<p class="caption">(in thousands of dollars)</p>
<table>{rows(BALANCE, BALANCE_HEAD, "34%")}</table>
<p>Working capital rose during the year as receivables grew with sales.</p>
<h2 style="page-break-before: always">Segment Results</h2>
<p class="caption">(in thousands of dollars)</p>
<table>{rows(segments, segment_head, "22%")}</table>
<h2>Outlook</h2>
<p>The company expects steady demand in the coming year.</p>
</body></html>"""


def _tables(markdown: str) -> list[list[list[str]]]:
    """The Markdown tables of a document: rows of cells, the separator row left out."""
    tables, current = [], None
    for line in markdown.split("\n"):
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if current is None:
                current = []
                tables.append(current)
            if not all(re.fullmatch(r"-+", c) for c in cells):
                current.append(cells)
        else:
            current = None
    return tables


def _check_rows(table: list[list[str]], head: list[str], expected: dict) -> None:
    """The header row is ``head``, and every expected row is one row: its label, then its figures in order."""
    assert table[0] == head
    body = {row[0]: [c for c in row[1:] if c] for row in table[1:]}
    for label, figures in expected.items():
        assert body.get(label) == figures, (label, body.get(label), table)
    assert len(table) == len(expected) + 1  # no row left over: no label without figures, no figures without label


@pytest.fixture(scope="module")
def weasy_pdfs(tmp_path_factory):
    weasyprint = pytest.importorskip("weasyprint")
    d = tmp_path_factory.mktemp("weasy")
    out = {}
    for style, css in _CSS.items():
        pdf = d / f"harbor-{style}.pdf"
        weasyprint.HTML(string=_html(css)).write_pdf(pdf)
        out[style] = extract_pdf(pdf, d / "md", backend="offline", progress=False)
    return out


@pytest.mark.parametrize("style", list(_CSS))
def test_html_report_tables_keep_every_figure_in_its_row(weasy_pdfs, style):
    md = weasy_pdfs[style].markdown_path.read_text(encoding="utf-8")
    balance, segments = _tables(md)
    _check_rows(balance, BALANCE_HEAD, BALANCE)  # its long label wraps; the figures beside it centred or at the top
    _check_rows(segments, SEGMENT_HEAD, SEGMENTS)


@pytest.mark.parametrize("style", list(_CSS))
def test_tables_sit_under_their_headings_with_their_units_and_no_header_cell_is_a_heading(weasy_pdfs, style):
    path = weasy_pdfs[style].markdown_path
    tree = build_tree(path)
    titles = [n.title for n in tree.headings()]
    assert titles == ["Harbor Lights Holdings, Inc.", "Consolidated Balance Sheet", "Segment Results", "Outlook"]
    lines = path.read_text(encoding="utf-8").split("\n")
    for node in tree.headings()[1:3]:
        own = lines[node.line_start: node.text_end]
        assert own[1] == "(in thousands of dollars)" and own[3].startswith("| ")  # caption, then the table


def test_drawn_ruled_table_rows_span_lines(tmp_path):
    """A table drawn line by line (ReportLab): every cell ruled, labels wrapped over two lines at the top of their
    cells while the figures stand on the first line, and a header cell over two lines. Only the rules say which
    line belongs to which row."""
    canvas_mod = pytest.importorskip("reportlab.pdfgen.canvas")
    pdf = tmp_path / "drawn.pdf"
    c = canvas_mod.Canvas(str(pdf), pagesize=(612, 792))
    c.setFont("Helvetica-Bold", 14)
    c.drawString(72, 720, "Statement of Operations")
    c.setFont("Helvetica", 10)
    c.drawString(72, 700, "(in millions)")
    xs = [72, 252, 372, 492]
    rows = [(["Item", "Year ended", "Year ended"], ["", "2024", "2023"]),
            (["Revenue from lamps", "1,210", "1,105"], ["and lenses", "", ""]),
            (["Cost of revenue", "(640)", "(602)"], None),
            (["Selling, general and", "(215)", "(198)"], ["administrative expenses", "", ""]),
            (["Operating income", "355", "305"], None)]
    top = 680
    ys = [top]
    for first, second in rows:
        height = 30 if second else 18
        for i, text in enumerate(first):
            if i == 0:
                c.drawString(xs[0] + 4, ys[-1] - 12, text)
            else:
                c.drawRightString(xs[i + 1] - 4, ys[-1] - 12, text)
        for i, text in enumerate(second or []):
            if text and i == 0:
                c.drawString(xs[0] + 4, ys[-1] - 24, text)
            elif text:
                c.drawRightString(xs[i + 1] - 4, ys[-1] - 24, text)
        ys.append(ys[-1] - height)
    c.setLineWidth(0.5)
    for y in ys:
        c.line(xs[0], y, xs[-1], y)
    for x in xs:
        c.line(x, ys[0], x, ys[-1])
    c.setFont("Helvetica", 10)
    c.drawString(72, ys[-1] - 30, "Operating income grew as lamp sales rose.")
    c.save()
    md = extract_pdf(pdf, tmp_path / "md", backend="offline", progress=False).markdown_path.read_text()
    (table,) = _tables(md)
    assert table == [["Item", "Year ended 2024", "Year ended 2023"],
                     ["Revenue from lamps and lenses", "1,210", "1,105"],
                     ["Cost of revenue", "(640)", "(602)"],
                     ["Selling, general and administrative expenses", "(215)", "(198)"],
                     ["Operating income", "355", "305"]]
    assert "## Statement of Operations" in md or "# Statement of Operations" in md


def test_text_scaled_by_its_matrix_is_split_into_cells(tmp_path):
    """Text set at a huge font size and scaled down by the page's matrix (PDFium then reports a size of 400 for
    text 10 points high): the gap between a label and its figures is judged by the text's real size."""
    canvas_mod = pytest.importorskip("reportlab.pdfgen.canvas")
    pdf = tmp_path / "scaled.pdf"
    c = canvas_mod.Canvas(str(pdf), pagesize=(612, 792))
    c.scale(0.025, 0.025)
    c.setFont("Helvetica", 400)
    rows = [("Balance sheet", "2024", "2023"), ("Cash", "1,200", "1,100"), ("Inventories", "310", "290"),
            ("Total current assets", "1,510", "1,390")]
    for k, (label, a, b) in enumerate(rows):
        y = (700 - 16 * k) / 0.025
        c.drawString(72 / 0.025, y, label)
        for x, fig in ((400, a), (500, b)):
            if fig:
                c.drawRightString(x / 0.025, y, fig)
    c.save()
    md = extract_pdf(pdf, tmp_path / "md", backend="offline", progress=False).markdown_path.read_text()
    (table,) = _tables(md)
    assert table == [["Balance sheet", "2024", "2023"], ["Cash", "1,200", "1,100"], ["Inventories", "310", "290"],
                         ["Total current assets", "1,510", "1,390"]]


def test_ruled_grids_textbook():
    """Three full-width rules make a grid with two bands; a short underline under one column joins none; vertical
    rules over the grid's height give its columns."""
    rules = Rules(horizontal=((700.0, 72.0, 540.0), (682.0, 72.5, 540.0), (664.0, 72.0, 539.5),
                              (650.0, 400.0, 440.0)),
                  vertical=((72.0, 664.0, 700.0), (300.0, 664.0, 700.0), (540.0, 664.0, 700.0)))
    (grid,) = ruled_grids(rules, 612)
    assert grid.ys == (700.0, 682.0, 664.0) and grid.bands() == [(700.0, 682.0), (682.0, 664.0)]
    assert grid.columns() == [(72.0, 300.0), (300.0, 540.0)]
    assert ruled_grids(Rules(horizontal=rules.horizontal[:2]), 612) == []  # two rules: no grid


def test_uploaded_report_answers_its_current_ratio(weasy_pdfs, tmp_path):
    """The report as a user would index it (its PDF, the hash embedder standing in for the model): the current
    ratio is computed from the balance sheet's two rows, both cited."""
    import ppkit

    pdf = weasy_pdfs["ruled"].page_map.pdf
    index = ppkit.build_index([pdf], tmp_path / "ix", embedder=ppkit.HashEmbedder(),
                              config=ppkit.Config(online=False), progress=False)
    answer = index.ask("What was the current ratio of Harbor Lights Holdings at the end of 2024?")
    block = answer.block
    assert block.kind == "computed" and "2.87" in block.text and "88,495 / 30,860" in block.text
    assert len(block.citations) == 2 and {c.doc for c in block.citations} == {"harbor-ruled"}
