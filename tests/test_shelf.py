"""The shelf of PDFs (notebook 09's parts): rendered pages, the shelf table, the funnel, the page beside its
section, the small-filings subset, the misses by cause, the page-hit plot and the cached index."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace as S

import pytest

import ppkit
from ppkit.bench.views.plots import page_points, plot_page_hits
from ppkit.bench.data.shelf import miss_causes, small_filings
from ppkit.core.errors import InvalidInput
from ppkit.documents.extract import render_page
from ppkit.indexing.embed import HashEmbedder
from ppkit.ui.shelf import funnel_rows, highlighted_page, page_beside_html, shelf_rows
from test_pdfcache import make_pdf

FIX = Path(__file__).parent / "fixtures"
CFG = ppkit.Config(online=False)


@pytest.fixture(autouse=True)
def private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("PPKIT_CACHE_DIR", str(tmp_path / "cache"))


def test_render_page_gives_a_png_of_the_page_asked(tmp_path):
    pytest.importorskip("pymupdf")
    pdf = make_pdf(tmp_path / "a.pdf", "alpha", pages=2)
    png = render_page(pdf, 2, zoom=0.5)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(png[16:20], "big") == 306  # 612 pt wide at zoom 0.5
    with pytest.raises(InvalidInput, match="has 2 pages; there is no page 3"):
        render_page(pdf, 3)


def test_shelf_funnel_and_page_beside_on_an_index_of_pdfs(tmp_path):
    pytest.importorskip("pymupdf4llm")
    pdfs = [make_pdf(tmp_path / "alpha.pdf", "alpha", pages=2), make_pdf(tmp_path / "beta.pdf", "beta", pages=3)]
    index = ppkit.build_index(pdfs + [FIX / "acme.md"], tmp_path / "ix", embedder=HashEmbedder(), config=CFG,
                              progress=False, workers=1)
    rows = {r["doc"]: r for r in shelf_rows(index)}
    assert (rows["beta"]["pages"], rows["beta"]["from"]) == (3, "PDF")
    assert (rows["acme"]["pages"], rows["acme"]["from"]) == (None, "Markdown")
    r = index.retrieve("beta page 3", k=2, docs=["beta"])
    stages = {x["stage"]: x["result"] for x in funnel_rows(r)}
    assert stages["filings searched"] == "beta (caller)"
    assert "beta p." in stages["sections sent (k=2)"]
    s = next(s for s in r.sections if s.pages)
    page = s.pages[-1]
    html = page_beside_html(index, s, page, zoom=0.3)
    assert html.count("data:image/png;base64,") == 1 and f"beta p.{page}" in html
    assert "marked in yellow" in html  # the section's own lines are on its page
    md = index.retrieve("Acme revenue", k=1, docs=["acme"]).sections[0]
    with pytest.raises(InvalidInput, match="did not come from a PDF"):
        page_beside_html(index, md)


def test_highlighted_page_marks_the_sections_lines_and_only_them(tmp_path):
    pytest.importorskip("pymupdf")  # only to write the PDF
    import io

    from PIL import Image

    pdf = make_pdf(tmp_path / "a.pdf", "alpha", pages=2)
    plain, none = highlighted_page(pdf, 1, "nothing of this sentence is on that page at all", zoom=0.5)
    import pypdfium2

    doc = pypdfium2.PdfDocument(str(pdf))
    page_text = doc[0].get_textpage().get_text_range()  # the page's own words, as a section would quote them
    doc.close()
    marked, found = highlighted_page(pdf, 1, page_text, zoom=0.5)
    assert none == 0 and found >= 1
    import numpy as np

    a, b = (np.asarray(Image.open(io.BytesIO(x)).convert("RGB")).astype(int) for x in (plain, marked))
    assert a.shape == b.shape == (396, 306, 3)

    def yellow(px):  # pixels of the mark: red and green high, blue low
        return int(((px[..., 0] > 200) & (px[..., 1] > 190) & (px[..., 2] < 170)).sum())

    assert yellow(b) > 0 and yellow(a) == 0
    with pytest.raises(InvalidInput, match="has 2 pages; there is no page 3"):
        highlighted_page(pdf, 3, "x")


def test_small_filings_keeps_short_pdfs_that_a_question_is_about(tmp_path):
    pytest.importorskip("pymupdf")
    pdfs = [make_pdf(tmp_path / "A_2022_8K.pdf", "a", pages=2), make_pdf(tmp_path / "B_2022_10K.pdf", "b", pages=5),
            make_pdf(tmp_path / "C_2022_8K.pdf", "c", pages=1)]
    questions = [{"doc": "A_2022_8K", "evidence": []}, {"doc": "B_2022_10K", "evidence": []},
                 {"doc": "X", "evidence": [{"doc": "C_2022_8K"}]}]
    assert [p.name for p in small_filings(pdfs, questions, max_pages=4)] == ["A_2022_8K.pdf", "C_2022_8K.pdf"]
    assert [p.name for p in small_filings(pdfs, questions[:1], max_pages=4)] == ["A_2022_8K.pdf"]


def _row(qid, *, filt, page_hit, hit, cand_hit, docs=("D",)):
    return {"qid": qid, "docs": list(docs), "modes": {"auto": {
        "filter": filt, "candidates": {"hit": cand_hit}, "5": {"hit": hit, **({} if page_hit is None else {"page_hit": page_hit})}}}}


def test_misses_grouped_by_the_first_stage_that_lost_them():
    result = {"per_question": [
        _row("ok", filt=["D"], page_hit=1.0, hit=1.0, cand_hit=1.0),
        _row("meta", filt=["E"], page_hit=0.0, hit=0.0, cand_hit=0.0),
        _row("extr", filt=["D"], page_hit=0.0, hit=0.0, cand_hit=1.0),
        _row("recall", filt=None, page_hit=0.0, hit=0.0, cand_hit=0.0),
        _row("rank", filt=["D"], page_hit=0.0, hit=0.0, cand_hit=1.0),
        _row("trim", filt=["D"], page_hit=0.0, hit=1.0, cand_hit=1.0),
        _row("nopage", filt=["D"], page_hit=None, hit=0.0, cand_hit=1.0),  # no evidence page: section hit decides
    ]}
    gold = S(details={"extr": {"evidence": [{"mapped": True, "kind": "page"}]},
                      "rank": {"evidence": [{"mapped": True, "kind": "table"}, {"mapped": False, "kind": "page"}]}})
    assert miss_causes(result, gold) == {"metadata": ["meta"], "extraction": ["extr"], "recall": ["recall"],
                                         "ranking": ["rank", "nopage"], "trimming": ["trim"]}


def test_page_hit_plot_rows_name_the_store():
    kv = {"hit": 0.5, "context_chars_mean": 900.0}
    result = {"benchmark": "fb", "n": 2,
              "modes": {"auto": {"5": {**kv, "page_hit": 0.5}}, "gold": {"5": {**kv, "page_hit": 1.0}}},
              "baselines": {"auto": {"blind-dense": {"equal_context": {**kv, "page_hit": 0.0}}}}}
    rows = page_points(result)
    assert [(r["system"], r["store"], r["page_hit"]) for r in rows] == [
        ("ppkit", "shared, own filter", 0.5), ("ppkit", "per document", 1.0),
        ("blind-dense", "shared, own filter (equal context)", 0.0)]
    plotted, fig = plot_page_hits(result)
    assert plotted == rows and len(fig.axes[0].patches) == 6


def test_cached_index_is_built_once_and_reused(tmp_path):
    paths = [FIX / "acme.md", FIX / "globex.md"]
    first = ppkit.cached_index(paths, "shelf-test", embedder=HashEmbedder(), config=CFG, progress=False)
    assert first.folder.name.startswith("shelf-test-") and first.folder.parent.name == "indexes"
    stamp = (first.folder / "manifest.json").stat().st_mtime_ns
    again = ppkit.cached_index(paths, "shelf-test", embedder=HashEmbedder(), config=CFG, progress=False)
    assert again.folder == first.folder and (again.folder / "manifest.json").stat().st_mtime_ns == stamp
    other = ppkit.cached_index(paths[:1], "shelf-test", embedder=HashEmbedder(), config=CFG, progress=False)
    assert other.folder != first.folder
