"""ppkit.documents.pdfcache and page citations: PDFs indexed beside Markdown, the extraction cache
(reuse, adoption of ``ppkit extract`` output, resume after kill -9), the cache keyed by backend, and
the pages of the lines sent. PDFs are made here with pymupdf (a few pages each)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ppkit
from ppkit.documents import pdfcache
from ppkit.documents.extract import PageMap, extract_pdf, get_extractor
from ppkit.documents.pdfcache import prepare_pdfs
from ppkit.pipeline import build_index, load_index
from ppkit.retrieval.types import pages_label

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures"
CFG = ppkit.Config(online=False)
TEXT = ("Gadgets are sold in many shops. This paragraph is ordinary body text about {w} so that the "
        "layout model sees plain prose on the page. ") * 3


def make_pdf(path: Path, word: str, *, pages: int = 2, heading: bool = True) -> Path:
    """A small PDF: each page a bold heading (unless ``heading=False``) and body text naming ``word``."""
    import pymupdf

    doc = pymupdf.open()
    for i in range(pages):
        page = doc.new_page(width=612, height=792)
        if heading:
            page.insert_text((72, 96), f"{i + 1} {word.title()} Part {i + 1}", fontsize=18, fontname="hebo")
        page.insert_textbox(pymupdf.Rect(72, 130, 540, 400), TEXT.format(w=f"{word} page {i + 1}"), fontsize=11,
                            fontname="helv")
    doc.save(path)
    return path


@pytest.fixture(autouse=True)
def private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("PPKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PPKIT_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture
def pdfs(tmp_path):
    pytest.importorskip("pymupdf")  # only to write the PDFs; the default extractor does not use it
    d = tmp_path / "pdfs"
    d.mkdir()
    return {"alpha": make_pdf(d / "alpha.pdf", "alpha"), "beta": make_pdf(d / "beta.pdf", "beta", pages=3),
            "plain": make_pdf(d / "plain.pdf", "plain", pages=1, heading=False)}


def test_pdfs_and_markdown_in_one_index_then_from_the_cache(pdfs, tmp_path):
    docs = [pdfs["alpha"], FIX / "acme.md", pdfs["plain"]]
    index = build_index(docs, tmp_path / "ix", embedder=ppkit.HashEmbedder(), config=CFG, progress=False, workers=2)
    assert index.docs == ["alpha", "acme", "plain"]
    b = index.manifest["build"]["pdfs"]
    assert (b["n"], b["extracted"], b["cached"], b["pages_extracted"], b["workers"]) == (2, 2, 0, 3, 2)
    alpha = index.record("alpha")
    assert alpha.page_count == 2 and [p for p, _, _ in alpha.pages] == [1, 2]
    assert alpha.pdf == str(pdfs["alpha"].resolve())
    assert alpha.pdf_sha256 == hashlib.sha256(pdfs["alpha"].read_bytes()).hexdigest()
    assert index.record("acme").pages == [] and index.page_ranges("acme") == ()
    # the heading-less PDF is one root section, chunked like plain text, its pages known
    assert len(index.trees["plain"]) == 1 and index.record("plain").n_chunks >= 1
    assert [p for p, _, _ in index.page_ranges("plain")] == [1]
    # the heading of page 2 is on page 2
    node = next(n for n in index.trees["alpha"].headings() if n.title == "2 Alpha Part 2")
    assert index.pages_of("alpha", [(node.line_start, node.line_start)])[0][0] == 2
    again = build_index([pdfs["alpha"], pdfs["plain"]], tmp_path / "ix2", embedder=ppkit.HashEmbedder(),
                        config=CFG, progress=False)
    b2 = again.manifest["build"]["pdfs"]
    assert (b2["extracted"], b2["cached"], b2["pages_extracted"]) == (0, 2, 0)
    assert again.record("alpha").source == alpha.source  # the same cached Markdown


def test_extract_output_is_adopted_when_it_is_of_the_same_pdf(pdfs, tmp_path):
    out = tmp_path / "extracted"
    extract_pdf(pdfs["alpha"], out, backend="offline", progress=False)
    # beta's name on alpha's extraction: its page map names another PDF, so it is not taken
    (out / "beta.md").write_bytes((out / "alpha.md").read_bytes())
    (out / "beta.pages.json").write_bytes((out / "alpha.pages.json").read_bytes())
    run = prepare_pdfs([pdfs["alpha"], pdfs["beta"]], extracted=out, workers=1, progress=False)
    assert [d.how for d in run.docs] == ["adopted", "extracted"]
    assert run.pages_extracted == 3 and run.pages_per_second > 0
    assert run.docs[0].markdown.read_text() == (out / "alpha.md").read_text()  # nothing to join here
    assert run.docs[1].page_map.page_count == 3 and run.docs[1].markdown.name == "beta.md"


def test_the_cache_keys_each_backend_apart(pdfs, monkeypatch):
    doc = prepare_pdfs([pdfs["alpha"]], workers=1, progress=False).docs[0]
    assert doc.markdown.parent.name == f"{get_extractor('offline').name}-x{pdfcache.EXTRACT_VERSION}"
    assert doc.page_map.backend.startswith("textlayer-")
    monkeypatch.setattr(pdfcache, "_offline_backend", lambda: "another-backend-1")  # a new extractor version
    again = prepare_pdfs([pdfs["alpha"]], workers=1, progress=False).docs[0]
    assert again.how == "extracted" and again.markdown.parent.name == "another-backend-1-x1"


def test_split_words_are_joined_in_the_cached_markdown_lines_kept(pdfs, tmp_path):
    out = tmp_path / "extracted"
    ex = extract_pdf(pdfs["alpha"], out, backend="offline", progress=False)
    raw = ex.markdown_path.read_text().split("\n")
    raw[0] = "# OVERVI EW of Busines** **<u>s.</u>**"  # as the 3M 10-K comes out of the extractor
    raw[-1] = "the overview and the business, overview and business"
    text = "\n".join(raw)
    ex.markdown_path.write_text(text)
    pm = PageMap.load(ex.page_map_path)
    PageMap(**{**pm.__dict__, "markdown_sha256": hashlib.sha256(text.encode()).hexdigest()}).save(ex.page_map_path)
    doc = prepare_pdfs([pdfs["alpha"]], extracted=out, progress=False).docs[0]
    fixed = doc.markdown.read_text().split("\n")
    assert fixed[0] == "# OVERVIEW of Business.</u>**" and doc.joins == 2 and doc.page_map.joins == 2
    assert len(fixed) == len(raw) and fixed[1:] == raw[1:]
    assert doc.page_map.pages == pm.pages and doc.page_map.derived == pdfcache.DERIVED


def test_kill_9_after_the_first_pdf_keeps_it(pdfs, tmp_path):
    """Resumable: a run killed right after its first extraction keeps it; the next run extracts the rest."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PPKIT_OFFLINE": "1", "PPKIT_QUIET": "1"}
    cmd = [sys.executable, "-m", "ppkit.cli", "index", str(pdfs["alpha"]), str(pdfs["beta"]), str(pdfs["plain"]),
           "--index", str(tmp_path / "ix"), "--embedder", "hash", "--workers", "1"]
    crashed = subprocess.run(cmd, env={**env, "PPKIT_TEST_CRASH_AT": "extracted-1"}, capture_output=True, text=True,
                             timeout=300, cwd=ROOT)
    assert crashed.returncode == -9, crashed.stderr
    done = sorted(p.parent.parent.name for p in (tmp_path / "cache" / "pdf").glob("*/*/raw.pages.json"))
    sha = {hashlib.sha256(p.read_bytes()).hexdigest(): name for name, p in pdfs.items()}
    assert [sha[s] for s in done] == ["beta"]  # one worker, largest first
    assert not (tmp_path / "ix").exists()
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert again.returncode == 0, again.stderr
    assert "3 PDFs: 2 extracted, 0 adopted, 1 from the cache; 3 pages in" in again.stdout
    assert sorted(load_index(tmp_path / "ix").docs) == ["alpha", "beta", "plain"]


# -- page citations -------------------------------------------------------------------------------

DOC = """# Widget Corp

## Revenue

Revenue was 10 million dollars in 2021 from widgets sold in shops.
Filler line about the weather and nothing else at all, to be trimmed away.
Another filler line about lunch menus and parking spaces only.
Gross margin was 40 percent in 2022 on the gadget line.
"""


@pytest.fixture
def paged_index(tmp_path):
    """A Markdown file with a hand-written page map: lines 1-5 on page 3, lines 6-8 on page 4."""
    md = tmp_path / "widget.md"
    md.write_text(DOC)
    PageMap(pdf="widget.pdf", pdf_sha256="0" * 64, markdown="widget.md",
            markdown_sha256=hashlib.sha256(DOC.encode()).hexdigest(), backend="hand", page_count=4,
            pages=((3, 1, 5), (4, 6, 8))).save(tmp_path / "widget.pages.json")
    return build_index([md], tmp_path / "ix", embedder=ppkit.HashEmbedder(), config=CFG, progress=False)


def test_section_pages_are_those_of_the_lines_sent(paged_index):
    whole = paged_index.retrieve("revenue widgets", k=1, docs=["widget"])
    assert whole.sections[0].pages == (3, 4) and whole.sections[0].cite() == "widget p.3-4"
    from dataclasses import replace

    paged_index.config = replace(CFG, section_budget=90)  # room for the heading and one line (line 5)
    cut = paged_index.retrieve("revenue widgets sold 2021", k=1, docs=["widget"]).sections[0]
    assert cut.trimmed and cut.sent_ranges == ((3, 5),) and "Revenue was 10 million" in cut.text
    assert cut.pages == (3,) and cut.page_of(5) == 3


def test_answers_cite_doc_and_page(paged_index, prior_selector):
    answer = paged_index.ask("What was the revenue from widgets in 2021?", k=1, docs=["widget"])
    assert "From widget > " in answer.text and "(p.3-4, lines 3-8)" in answer.text  # the breadcrumb names the doc
    # the block states the line; the evidence cites it by line and page without repeating it
    assert answer.block.text.startswith("$10 million: “Revenue was 10 million dollars")
    assert "  - line 5 (p.3): quoted in the answer above" in answer.text
    assert answer.text.rstrip().endswith("Pages: widget p.3-4")
    d = json.loads(answer.to_json())
    assert d["sections"][0]["pages"] == [3, 4]
    assert "lines 3-8, p.3-4]" in str(answer)


def test_an_edited_markdown_keeps_no_pages(tmp_path):
    md = tmp_path / "widget.md"
    md.write_text(DOC)
    PageMap(pdf="widget.pdf", pdf_sha256="0" * 64, markdown="widget.md", markdown_sha256="f" * 64, backend="hand",
            page_count=4, pages=((3, 1, 5), (4, 6, 8))).save(tmp_path / "widget.pages.json")
    index = build_index([md], tmp_path / "ix", embedder=ppkit.HashEmbedder(), config=CFG, progress=False)
    assert index.record("widget").pages == [] and index.retrieve("revenue", k=1).sections[0].pages == ()


def test_pages_label():
    assert [pages_label(p) for p in ([], [7], [3, 4], [1, 2, 3, 9, 11, 12])] == ["", "p.7", "p.3-4", "p.1-3, 9, 11-12"]
