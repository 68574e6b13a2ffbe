"""Document metadata and 10-K Items (ppkit.metadata)."""

import json

import pytest

from _hybrid_fixtures import DOCS, real_paths
from ppkit import build_tree, parse_markdown
from ppkit.documents.metadata import (
    company_acronyms,
    company_matches,
    document_metadata,
    metadata_from_name,
    normalise_company,
    normalise_item,
    read_sidecar,
    section_items,
)
from ppkit.documents.tree import read_lines


def _meta(path):
    return document_metadata(path, build_tree(path), read_lines(path))


def test_alpha_cover_page():
    meta, items = _meta(DOCS[0])
    assert {k: meta[k] for k in ("company", "ticker", "fiscal_year", "form_type")} == {
        "company": "Alpha Widgets Corporation", "ticker": "AWC", "fiscal_year": 2022, "form_type": "10-K"}
    assert meta["aliases"] == ["Alpha", "Alpha Widgets Corporation", "Alpha Widgets"]
    assert "overridden" not in meta
    # Items as headings; PART II ends Item 1A; the cover page belongs to no Item
    assert items == {"0005": "1", "0006": "1A", "0008": "7", "0009": "7", "0010": "7", "0011": "8", "0012": "8",
                     "0013": "8"}


def test_beta_bold_items_and_sidecar():
    meta, items = _meta(DOCS[1])
    assert meta["company"] == "Beta Foods, Inc." and meta["ticker"] == "BFI"
    assert meta["aliases"] == ["Beta", "Beta Foods", "BetaCo"]  # replaced by Beta.meta.json
    assert meta["overridden"] == ["aliases"]
    assert items == {"0002": "1", "0003": "1A", "0004": "7", "0005": "7", "0006": "7"}


def test_sidecar_overrides_and_errors(tmp_path):
    src = DOCS[0].read_text()
    md = tmp_path / "Gamma.md"
    md.write_text(src)
    (tmp_path / "Gamma.meta.json").write_text(json.dumps({"ticker": "GMA", "fiscal_year": 2023,
                                                         "section_items": {"0010": "7a"}}))
    meta, items = _meta(md)
    assert meta["ticker"] == "GMA" and meta["fiscal_year"] == 2023 and meta["company"] == "Alpha Widgets Corporation"
    assert items["0010"] == "7A" and items["0009"] == "7"
    (tmp_path / "Gamma.meta.json").write_text(json.dumps({"section_items": {"0099": "7"}}))
    with pytest.raises(KeyError, match="no node '0099'"):
        _meta(md)
    (tmp_path / "Gamma.meta.json").write_text(json.dumps({"fiscal_year": "2022"}))
    with pytest.raises(ValueError, match="fiscal_year.*must be a int"):
        read_sidecar(md)
    (tmp_path / "Gamma.meta.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        read_sidecar(md)


def test_table_of_contents_markers_are_ignored():
    lines = ["# Cover", "**Item 1. Business**", "**Item 1A. Risk Factors**", "**Item 7. MD&A**", "**Item 8. Data**",
             "", "**Forward-looking statements**", "# Intro", "text", "**Item 1. Business.**", "# Products", "text"]
    tree = parse_markdown("\n".join(lines), "D")
    # the four packed markers are a table of contents: "Intro" (line 8) belongs to no Item
    assert section_items(tree, lines) == {"0003": "1"}


def test_normalise_item():
    assert normalise_item("Item 7a.") == "7A" and normalise_item("01") == "1" and normalise_item("1A") == "1A"
    with pytest.raises(ValueError, match="not a 10-K Item"):
        normalise_item("Risk")


@pytest.mark.corpus
def test_reference_10ks():
    got = {}
    for p in real_paths():
        meta, items = _meta(p)
        got[p.stem] = (meta["company"], meta["ticker"], meta["fiscal_year"], meta["form_type"], items)
    assert {k: v[:4] for k, v in got.items()} == {
        "AMD": ("Advanced Micro Devices, Inc.", "AMD", 2022, "10-K"),
        "AMEX": ("American Express Company", "AXP", 2022, "10-K"),
        "Boeing": ("The Boeing Company", "BA", 2022, "10-K"),
        "PepsiCo": ("PepsiCo, Inc.", "PEP", 2022, "10-K"),
    }
    amd = got["AMD"][4]
    assert (amd["0066"], amd["0085"], amd["0089"], amd["0034"], amd["0035"]) == ("7", "8", "8", "1A", "1A")
    # PepsiCo sets Items 1, 1A and 5 as bold lines, not headings
    pep = got["PepsiCo"][4]
    assert (pep["0010"], pep["0020"], pep["0031"]) == ("1", "1", "5")
    assert got["Boeing"][4]["0025"] == "1A" and got["AMEX"][4]["0164"] == "8"


COVERS = DOCS[0].parent.parent / "covers"


def test_cover_metadata_and_sources():
    meta, items = _meta(COVERS / "contoso_10q.md")
    assert {k: meta[k] for k in ("company", "ticker", "fiscal_year", "quarter", "form_type", "period")} == {
        "company": "Contoso Packaging PLC", "ticker": "CPKG", "fiscal_year": 2023, "quarter": 2, "form_type": "10-Q",
        "period": "FY2023Q2"}
    assert meta["sources"] == {"company": "cover", "ticker": "cover", "fiscal_year": "cover", "quarter": "cover",
                               "form_type": "cover"}
    assert items == {}  # Items are read in 10-Ks only


def test_file_name_is_the_fallback(tmp_path):
    # a text without a cover: the name gives company and form, and says so; never the period (issue 45: a page
    # count in a scan's name was taken for a year)
    md = tmp_path / "ACME_2023Q3_10Q.md"
    md.write_text("# Notes\n\nSome text.\n")
    meta, _ = _meta(md)
    assert (meta["company"], meta["period"], meta["form_type"]) == ("ACME", None, "10-Q")
    assert meta["sources"] == {"company": "file name", "form_type": "file name"}
    # the cover wins over a name that disagrees; a neutral name gives nothing
    src = (COVERS / "northwind_10k.md").read_text()
    md2 = tmp_path / "OTHER_2019_10Q.md"
    md2.write_text(src)
    meta, _ = _meta(md2)
    assert (meta["company"], meta["period"], meta["form_type"]) == ("Northwind Stores, Inc.", "FY2023", "10-K")
    meta, _ = document_metadata(md, build_tree(md), read_lines(md), name="doc-001")
    assert (meta["company"], meta["period"], meta["form_type"], meta["sources"]) == (None, None, None, {})


def test_sidecar_sets_period_and_form(tmp_path):
    md = tmp_path / "release.md"
    md.write_text((COVERS / "lee_release_q2.md").read_text())
    (tmp_path / "release.meta.json").write_text(json.dumps({"quarter": 3, "aliases": ["L and L"]}))
    meta, _ = _meta(md)
    assert (meta["period"], meta["sources"]["quarter"], meta["aliases"]) == ("FY2023Q3", "sidecar", ["L and L"])
    (tmp_path / "release.meta.json").write_text(json.dumps({"quarter": 5}))
    with pytest.raises(ValueError, match="'quarter' must be 1, 2, 3, 4 or null"):
        read_sidecar(md)
    (tmp_path / "release.meta.json").write_text(json.dumps({"form_type": "10K"}))
    with pytest.raises(ValueError, match="'form_type' must be one of 10-K"):
        read_sidecar(md)


def test_company_names():
    assert normalise_company("THE COCA-COLA COMPANY") == normalise_company("Coca Cola") == "coca cola"
    assert normalise_company("Amazon.com, Inc.") == "amazon"
    assert normalise_company("JPMorgan Chase & Co.") == "jpmorgan chase"
    meta = {"company": "Advanced Micro Devices, Inc.", "aliases": [], "ticker": None}
    assert company_matches("AMD", meta) and company_matches("Advanced Micro Devices", meta)
    assert not company_matches("amd", meta)  # an initialism keeps its case
    assert company_matches("JPMorgan", {"company": "JPMorgan Chase & Co."})  # the first words of the name
    assert not company_matches("Chase", {"company": "JPMorgan Chase & Co."})
    assert company_matches("axp", {"company": "American Express Company", "ticker": "AXP"})
    assert company_acronyms("Johnson & Johnson") == ["J&J", "JnJ"]
    # two words: no initialism, but the first two letters of each ("AmEx")
    assert company_acronyms("Best Buy Co., Inc.") == ["BEBU", "BeBu"]
    assert company_acronyms("American Express Company") == ["AMEX", "AmEx"]
    assert company_acronyms("3M Company") == []


def test_metadata_from_name():
    assert metadata_from_name("BESTBUY_2024Q2_10Q") == {"company": "BESTBUY", "fiscal_year": 2024, "quarter": 2,
                                                        "form_type": "10-Q"}
    assert metadata_from_name("PEPSICO_2023_8K_dated-2023-05-30") == {"company": "PEPSICO", "fiscal_year": 2023,
                                                                      "form_type": "8-K"}
    assert metadata_from_name("doc-001") == {}


def test_a_sidecar_edited_after_indexing_reaches_the_index_on_the_next_run(tmp_path):
    from ppkit import build_index
    from ppkit.core.config import Config
    from ppkit.indexing.embed import HashEmbedder

    md = tmp_path / "Gamma.md"
    md.write_text(DOCS[0].read_text())
    config = Config()
    first = build_index([md], tmp_path / "ix", embedder=HashEmbedder(), config=config)
    assert first.record("Gamma").metadata["ticker"] == "AWC"
    (tmp_path / "Gamma.meta.json").write_text(json.dumps({"ticker": "GMA"}))
    again = build_index([md], tmp_path / "ix", embedder=HashEmbedder(), config=config)
    assert again.record("Gamma").metadata["ticker"] == "GMA"  # the document is unchanged, its metadata is not
    assert len(again.chunks) == len(first.chunks)
