"""PDF -> Markdown + page map with the layout backend (pymupdf4llm, extra ``pdf``), on a tiny PDF made here with
pymupdf (three pages, headings in three sizes); the default text-layer backend is tested in test_textlayer.py."""

from __future__ import annotations

import json

import pytest

from ppkit.cli import main
from ppkit.documents.extract import (ExtractionError, LayoutExtractor, LlamaParseExtractor, PageMap, extract_pdf,
                           get_extractor, load_page_map, parse_page_range)
from ppkit.documents.tree import build_tree

BODY = ("Widgets are small devices that people use every day. This paragraph describes them in plain "
        "words so that the layout model sees ordinary body text on the page. ") * 3


def _make_pdf(path):
    import pymupdf

    doc = pymupdf.open()
    specs = [[("Widget Report", 24), (BODY, 11)],
             [("1 Introduction", 18), (BODY, 11), (BODY, 11)],
             [("2 Method", 18), (BODY, 11), ("2.1 Setup", 14), (BODY, 11)]]
    for blocks in specs:
        page = doc.new_page(width=612, height=792)
        y = 72
        for text, size in blocks:
            if size > 11:  # a bold heading line
                page.insert_text((72, y + size), text, fontsize=size, fontname="hebo")
                y += size * 2.2
            else:
                left = page.insert_textbox(pymupdf.Rect(72, y, 540, y + 120), text, fontsize=size, fontname="helv")
                y += 120 - left + 14
    doc.save(path)
    return path


@pytest.fixture(scope="module")
def tiny_pdf(tmp_path_factory):
    pytest.importorskip("pymupdf4llm")
    return _make_pdf(tmp_path_factory.mktemp("pdf") / "tiny.pdf")


@pytest.fixture(scope="module")
def extracted(tiny_pdf, tmp_path_factory):
    return extract_pdf(tiny_pdf, tmp_path_factory.mktemp("out"), backend="layout", progress=False)


def test_offline_extraction_headings_and_levels(extracted):
    tree = build_tree(extracted.markdown_path)
    assert [(n.level, n.title) for n in tree.headings()] == [
        (1, "Widget Report"), (2, "1 Introduction"), (2, "2 Method"), (3, "2.1 Setup")]
    assert extracted.n_headings == 4
    assert extracted.page_map.backend == "pymupdf4llm-1.28.2-layout"


def test_page_map_names_the_page_of_each_heading(extracted):
    pm = extracted.page_map
    tree = build_tree(extracted.markdown_path)
    assert pm.page_count == 3
    assert pm.pages == ((1, 1, 4), (2, 5, 10), (3, 11, 18))
    assert tree.n_lines == 18
    assert {n.title: pm.page_of(n.line_start) for n in tree.headings()} == {
        "Widget Report": 1, "1 Introduction": 2, "2 Method": 3, "2.1 Setup": 3}
    intro = tree.find("1 Introduction")[0]
    assert pm.pages_of(intro.line_start, intro.subtree_end) == [2]
    assert pm.pages_of(1, 18) == [1, 2, 3]
    assert pm.page_of(19) is None


def test_page_map_file_round_trip(extracted):
    saved = json.loads(extracted.page_map_path.read_text())
    assert saved["markdown"] == "tiny.md" and saved["format"] == 1
    assert load_page_map(extracted.markdown_path) == extracted.page_map
    assert PageMap.from_dict(extracted.page_map.to_dict()) == extracted.page_map


def test_page_map_refuses_a_changed_markdown(extracted, tmp_path):
    md = tmp_path / "tiny.md"
    md.write_text(extracted.markdown_path.read_text() + "edited\n")
    (tmp_path / "tiny.pages.json").write_text(extracted.page_map_path.read_text())
    with pytest.raises(ExtractionError, match="changed since it was extracted"):
        load_page_map(md)


def test_page_by_page_equals_one_pymupdf4llm_call(extracted, tiny_pdf):
    # levels are ranked over all pages after parsing them one by one: same Markdown as one call
    import pymupdf4llm

    whole = pymupdf4llm.to_markdown(str(tiny_pdf), header=False, footer=False, use_ocr=False)
    assert extracted.markdown_path.read_text() == whole


def test_page_range_ranks_levels_over_the_range(tiny_pdf, tmp_path):
    ex = extract_pdf(tiny_pdf, tmp_path, pages="2-3", backend="layout", progress=False)
    assert [p for p, _, _ in ex.page_map.pages] == [2, 3]
    tree = build_tree(ex.markdown_path)
    # without the 24 pt title, the 18 pt headings are the top level of this range
    assert [(n.level, n.title) for n in tree.headings()] == [(1, "1 Introduction"), (1, "2 Method"), (2, "2.1 Setup")]
    assert ex.page_map.page_of(tree.find("2.1 Setup")[0].line_start) == 3


def test_page_list_is_checked(tiny_pdf, tmp_path):
    with pytest.raises(ExtractionError, match="past the last page"):
        extract_pdf(tiny_pdf, tmp_path, pages=[2, 4], backend="offline", progress=False)


def test_parse_page_range():
    assert parse_page_range("2-4,7", 10) == [2, 3, 4, 7]
    assert parse_page_range(" 3 ", 10) == [3]
    assert parse_page_range(None, 10) is None
    with pytest.raises(ExtractionError, match="past the last page"):
        parse_page_range("5-12", 10)
    with pytest.raises(ExtractionError, match="expected e.g. 1-20"):
        parse_page_range("first", 10)
    with pytest.raises(ExtractionError, match="count from 1"):
        parse_page_range("0-3", 10)


def test_missing_pdf(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such PDF"):
        extract_pdf(tmp_path / "nope.pdf", tmp_path, backend="offline")


def test_not_a_pdf(tmp_path):
    p = tmp_path / "notes.pdf"
    p.write_text("just some text\n")
    with pytest.raises(ExtractionError, match="not a PDF"):
        extract_pdf(p, tmp_path, backend="offline")


def test_corrupt_pdf(tmp_path):
    p = tmp_path / "broken.pdf"
    p.write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\ngarbage without xref or pages\n")
    with pytest.raises(ExtractionError, match="broken.pdf"):
        extract_pdf(p, tmp_path / "out", backend="offline")
    assert not (tmp_path / "out" / "broken.md").exists()


def test_llamaparse_without_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("LLAMA_CLOUD_API_KEY", raising=False)
    with pytest.raises(ExtractionError, match="LLAMA_CLOUD_API_KEY"):
        LlamaParseExtractor()


def test_llamaparse_refuses_when_offline(monkeypatch):
    monkeypatch.setenv("LLAMA_CLOUD_API_KEY", "llx-test")
    monkeypatch.setenv("PPKIT_OFFLINE", "1")
    with pytest.raises(ExtractionError, match="PPKIT_OFFLINE"):
        LlamaParseExtractor()


def test_llamaparse_constructs_with_a_key(monkeypatch):
    # construction only: parsing needs the real service, which this machine cannot reach
    pytest.importorskip("llama_cloud")
    monkeypatch.setenv("LLAMA_CLOUD_API_KEY", "llx-test")
    monkeypatch.delenv("PPKIT_OFFLINE", raising=False)
    ex = LlamaParseExtractor(tier="cost_effective")
    assert ex.name == "llamaparse-cost_effective"
    assert ex.client.api_key == "llx-test"
    assert isinstance(get_extractor("auto"), LlamaParseExtractor)


def test_auto_backend_is_offline_without_a_key(monkeypatch):
    from ppkit.documents.textlayer import TextLayerExtractor

    monkeypatch.delenv("LLAMA_CLOUD_API_KEY", raising=False)
    assert isinstance(get_extractor("auto"), TextLayerExtractor)
    assert isinstance(get_extractor("offline"), TextLayerExtractor)
    pytest.importorskip("pymupdf4llm")
    assert isinstance(get_extractor("layout"), LayoutExtractor)
    with pytest.raises(ValueError, match="unknown extraction backend"):
        get_extractor("docling")


def test_cli_extract(tiny_pdf, tmp_path, capsys):
    assert main(["extract", str(tiny_pdf), "--out", str(tmp_path), "--pages", "1", "--backend", "layout",
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "tiny.pdf: 1 of 3 pages, 1 headings" in out
    assert (tmp_path / "tiny.md").read_text().startswith("# **Widget Report**")
    assert json.loads((tmp_path / "tiny.pages.json").read_text())["pages"] == [
        {"page": 1, "line_start": 1, "line_end": 4}]


def test_cli_extract_errors(tmp_path, capsys):
    assert main(["extract", str(tmp_path / "missing.pdf"), "--out", str(tmp_path), "--backend", "offline"]) == 2
    assert "no such PDF" in capsys.readouterr().err
