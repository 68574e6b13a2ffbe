"""ppkit.documents.noise: title rules, fuzzy and semantic matching, false positives, overrides."""

import pytest

from ppkit.documents.noise import RuleNoiseFilter, apply_overrides, kept_nodes
from ppkit.documents.titles import normalize_title
from ppkit.documents.tree import parse_markdown


def _doc(*titles):
    return parse_markdown("".join(f"# {t}\ntext\n" for t in titles), "d")


@pytest.mark.parametrize("title,category,layer", [
    ("TABLE OF CONTENTS", "toc", "rule"),
    ("TOC", "toc", "rule"),
    ("<u>Table of Contents</u>", "toc", "rule"),
    ("Index to the Form 10-K", "toc", "rule"),
    ("GLOSSARY OF SELECTED TERMINOLOGY", "glossary", "rule"),
    ("List of Abbreviations", "glossary", "rule"),
    ("Acknowledgements", "acknowledgments", "rule"),
    ("Note of Thanks", "acknowledgments", "rule"),
    ("Foreword", "foreword", "rule"),
    ("Preface", "foreword", "rule"),
    ("Executive Summary", "executive_summary", "rule"),
    ("7. References", "references", "rule"),
    ("Works Cited", "references", "rule"),
    ("Bibliografy", "references", "fuzzy"),
    ("Acknowledgmets", "acknowledgments", "fuzzy"),
])
def test_variants_are_caught(title, category, layer):
    (d,) = RuleNoiseFilter().decide(_doc(title)).values()
    assert (d.category, d.filter, d.noise) == (category, layer, True)


@pytest.mark.parametrize("title", [
    "Risk Factors Summary", "Cash Flow Summary", "ITEM 16. FORM 10-K SUMMARY", "DOCUMENTS INCORPORATED BY REFERENCE",
    "Executive Overview", "Funding", "Summary of Significant Accounting Policies", "Advanced Micro Devices, S&P 500 Index",
    "Liquidity and Capital Resources", "Introduction", "Conclusion",
])
def test_content_headings_are_kept(title):
    assert RuleNoiseFilter().decide(_doc(title)) == {}


def test_normalise_title():
    assert normalize_title("7.06 Effect of Specific References:", drop_numbering=True) == "effect of specific references"
    assert normalize_title("Item 3. Legal Proceedings", drop_numbering=True) == "legal proceedings"
    assert normalize_title("A.2 Appendix Notes", drop_numbering=True) == "appendix notes"


def test_overrides_flip_decisions():
    tree = _doc("Introduction", "References", "Glossary")
    dec = RuleNoiseFilter().decide(tree)
    assert set(dec) == {"0002", "0003"}
    out = apply_overrides(dec, tree, {"0002": False, "0001": "foreword"})
    assert out["0002"].noise is False and out["0002"].filter == "override"
    assert out["0001"].category == "foreword" and out["0001"].noise
    assert kept_nodes(tree, out) == {"0000", "0002"}
    assert set(dec) == {"0002", "0003"} and dec["0002"].noise  # input untouched
    with pytest.raises(ValueError, match="unknown noise category"):
        apply_overrides(dec, tree, {"0001": "spam"})
    with pytest.raises(KeyError):
        apply_overrides(dec, tree, {"0042": False})


@pytest.mark.model
def test_semantic_layer_with_real_model():
    from ppkit.indexing.embed import LocalEmbedder

    f = RuleNoiseFilter(LocalEmbedder())
    dec = f.decide(_doc("Gratitude", "Goodwill", "Executive Overview", "Legal Proceedings"))
    assert {k: (v.category, v.filter) for k, v in dec.items()} == {"0001": ("acknowledgments", "semantic")}


def test_a_page_header_table_of_contents_over_a_statement_is_kept():
    # a PDF repeats its "Table of Contents" link at the top of every page; the extractor makes it a heading
    from pathlib import Path

    from ppkit.documents.tree import build_tree, read_lines

    path = Path(__file__).parent / "fixtures" / "page_header_toc.md"
    tree, lines = build_tree(path), read_lines(path)
    d = RuleNoiseFilter().decide(tree, lines)
    assert {nid: (x.noise, x.filter) for nid, x in d.items()} == {
        "0002": (True, "rule"),  # the real table of contents: one page number a row
        "0004": (False, "content"),  # a page header over the balance sheet
        "0005": (True, "rule"),  # two rows of figures: too few to be a page of content
    }
    assert d["0004"].reason == ("titled as a table of contents, but its text has 6 rows of figures "
                                "(a page header over a page of content)")
    assert kept_nodes(tree, d) == {"0000", "0001", "0003", "0004"}
    assert RuleNoiseFilter().decide(tree)["0004"].noise  # without the lines, the title decides
    assert RuleNoiseFilter(min_figure_rows=0).decide(tree, lines)["0004"].noise
