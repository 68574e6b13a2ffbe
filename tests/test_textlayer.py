"""ppkit.documents.textlayer, the default offline extractor, on a three-page PDF written byte by byte here
(standard Helvetica fonts): headings by size and weight, a table with its header row, the running header and
page numbers dropped, the page map, and no pymupdf import."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ppkit.documents.extract import extract_pdf, get_extractor
from ppkit.documents.textlayer import TextLayerExtractor
from ppkit.documents.tree import build_tree

BODY = ["Widgets are small devices that people use every day, and this line is", "ordinary body text set in ten "
        "point Helvetica that runs to the right margin of", "the page so that the lines join into one paragraph."]


def _page(no: int, blocks: list[tuple[str, float, bool, float]]) -> list[tuple[str, float, bool, float, float]]:
    """Text runs (text, size, bold, x, y) of a page: the running header, the blocks, the page number."""
    runs = [("ACME Corp Annual Report 2022", 9, False, 72, 760)]
    y = 700
    for text, size, bold, x in blocks:
        runs.append((text, size, bold, x, y))
        y -= size * 1.25 if size <= 10 else size * 2
    return runs + [(str(no), 9, False, 300, 40)]


def _table() -> list[tuple[str, float, bool, float]]:
    return [("Dollars in millions", 10, False, 72), ("2022", 10, True, 300), ("2021", 10, True, 400),
            ("Revenue", 10, False, 72), ("$ 120", 10, False, 300), ("$ 95", 10, False, 400),
            ("Cost of sales", 10, False, 72), ("(40)", 10, False, 300), ("(35)", 10, False, 400)]


PAGES = [
    _page(1, [("Widget Report", 20, True, 72)] + [(t, 10, False, 72) for t in BODY]),
    _page(2, [("1 Introduction", 14, True, 72)] + [(t, 10, False, 72) for t in BODY]),
    _page(3, [("2 Method", 14, True, 72)] + [(t, 10, False, 72) for t in BODY] + [("2.1 Setup", 12, True, 72)]),
]


def _content(runs) -> bytes:
    out, rows = [], {}
    for text, size, bold, x, y in runs:
        rows.setdefault(y, []).append((text, size, bold, x))
    for y, cells in rows.items():
        for text, size, bold, x in cells:
            esc = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            out.append(f"BT /{'F2' if bold else 'F1'} {size} Tf {x} {y} Td ({esc}) Tj ET")
    return "\n".join(out).encode("latin-1")


def write_pdf(path, pages) -> None:
    """A valid PDF (objects, xref table, trailer) with Helvetica and Helvetica-Bold."""
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", None,
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold >>"]
    kids = []
    for runs in pages:
        stream = _content(runs)
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        objs.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                    b"/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> >>" % (len(objs)))
        kids.append(len(objs))
    objs[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    data, offsets = bytearray(b"%PDF-1.4\n"), []
    for i, body in enumerate(objs, start=1):
        offsets.append(len(data))
        data += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(data)
    data += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    data += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    data += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    path.write_bytes(bytes(data))


@pytest.fixture(scope="module")
def extracted(tmp_path_factory):
    d = tmp_path_factory.mktemp("tl")
    pages = [PAGES[0], PAGES[1][:-1] + [(t, s, b, x, 600 - 14 * (i // 3)) for i, (t, s, b, x) in enumerate(_table())]
             + PAGES[1][-1:], PAGES[2]]
    write_pdf(d / "widget.pdf", pages)
    return extract_pdf(d / "widget.pdf", d / "out", backend="offline", progress=False)


def test_headings_by_font_size_and_weight(extracted):
    tree = build_tree(extracted.markdown_path)
    assert [(n.level, n.title) for n in tree.headings()] == [
        (1, "Widget Report"), (2, "1 Introduction"), (2, "2 Method"), (3, "2.1 Setup")]
    assert extracted.page_map.backend.startswith("textlayer-")


def test_body_lines_join_and_running_header_and_page_numbers_are_dropped(extracted):
    text = extracted.markdown_path.read_text()
    assert " ".join(BODY) in text.split("\n")
    assert "ACME Corp" not in text
    assert not any(line.strip() in ("1", "2", "3") for line in text.split("\n"))


def test_table_with_its_header_row(extracted):
    text = extracted.markdown_path.read_text()
    assert ("| Dollars in millions | 2022 | 2021 |\n|---|---|---|\n| Revenue | $120 | $95 |\n"
            "| Cost of sales | (40) | (35) |") in text


def test_page_map(extracted):
    lines = extracted.markdown_path.read_text().split("\n")
    pm = extracted.page_map
    assert pm.page_count == 3 and [p for p, _, _ in pm.pages] == [1, 2, 3]
    tree = build_tree(extracted.markdown_path)
    assert {n.title: pm.page_of(n.line_start) for n in tree.headings()} == {
        "Widget Report": 1, "1 Introduction": 2, "2 Method": 3, "2.1 Setup": 3}
    assert pm.pages[-1][2] == len(lines) - 1  # the text ends with a newline: every line has a page


def test_a_page_range(extracted, tmp_path):
    ex = extract_pdf(extracted.pdf, tmp_path, pages="2", backend="offline", progress=False)
    assert [p for p, _, _ in ex.page_map.pages] == [2]
    assert build_tree(ex.markdown_path).headings()[0].title == "1 Introduction"


def test_default_backend_and_no_pymupdf_import(extracted, tmp_path, monkeypatch):
    monkeypatch.delenv("LLAMA_CLOUD_API_KEY", raising=False)
    assert isinstance(get_extractor("auto"), TextLayerExtractor)
    code = ("import sys; from ppkit.documents.extract import extract_pdf; "
            f"extract_pdf({str(extracted.pdf)!r}, {str(tmp_path)!r}, backend='offline', progress=False); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('fitz', 'pymupdf', 'pymupdf4llm')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert (tmp_path / "widget.md").read_text() == extracted.markdown_path.read_text()


# heading rules of text-layer version 3, on one page of ten-point body text with bold lines among it
RULES_PAGE = [
    ("ACME Corp Annual Report 2022", 9, False, 72, 760),
    ("Washington, D.C. 20549", 10, True, 250, 730),  # a cover-page address line, centred and bold
    ("Capital Rules", 10, True, 72, 700),  # a bold title of its own
    (BODY[0], 10, False, 72, 685), (BODY[1], 10, False, 72, 672.5), (BODY[2], 10, False, 72, 660),
    ("Our business is subject to the effects of weather and other catastrophic events.", 10, True, 72, 630),
    (BODY[0], 10, False, 72, 615), (BODY[1], 10, False, 72, 602.5), (BODY[2], 10, False, 72, 590),
    ("4.06 Vesting.", 10, True, 72, 560),  # numbered: its digits do not count against it
    (BODY[0], 10, False, 72, 545), (BODY[1], 10, False, 72, 532.5), (BODY[2], 10, False, 72, 520),
    ("Weighted", 10, True, 400, 490),  # a column label over a table, far from where prose starts
    (BODY[0], 10, False, 72, 475), (BODY[1], 10, False, 72, 462.5), (BODY[2], 10, False, 72, 450),
    ("December 31, 2022 (in millions except per share amounts)", 10, True, 72, 420),  # a units caption
    (BODY[0], 10, False, 72, 405), (BODY[1], 10, False, 72, 392.5), (BODY[2], 10, False, 72, 380),
    ("# Denotes a management contract or compensatory plan or arrangement.", 10, False, 72, 350),
    ("1", 9, False, 300, 40),
]


def test_heading_rules_sentences_numbers_captions_and_column_labels(tmp_path):
    write_pdf(tmp_path / "rules.pdf", [RULES_PAGE, PAGES[1], PAGES[2]])
    ex = extract_pdf(tmp_path / "rules.pdf", tmp_path / "out", backend="offline", progress=False)
    titles = [n.title for n in build_tree(ex.markdown_path).headings()]
    assert titles[:2] == ["Capital Rules", "4.06 Vesting."]
    text = ex.markdown_path.read_text().split("\n")
    for line in ("Washington, D.C. 20549", "Weighted", "December 31, 2022 (in millions except per share amounts)",
                 "Our business is subject to the effects of weather and other catastrophic events."):
        assert line in text  # kept as text, not a heading
    assert "\\# Denotes a management contract or compensatory plan or arrangement." in text  # a footnote marker
    assert len(titles) == 5  # and the three headings of the other pages
