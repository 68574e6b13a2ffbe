"""ppkit.indexing.sections: each section's rendered lines and BM25 terms, stored at index time,
equal what a query would compute on the fly, and are used by the re-ranker and the pointer stage."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ppkit
from ppkit.core.markup import render
from ppkit.indexing.index import IndexFormatError, StaleIndexError
from ppkit.indexing.lexical import bm25_scores, lexical_tokens
from ppkit.indexing.sections import section_text
from ppkit.pipeline import build_index, load_index
from ppkit.retrieval.rerank import StructuralReranker

DOC = """# Widget Corp 10-K

## Item 8. Financial Statements

### Consolidated Balance Sheets

Amounts in millions.

<table>
<tr><td>Cash and cash equivalents</td><td>$24,177</td></tr>
<tr><td>Total current assets</td>
<td>31,002</td></tr>
</table>

The quick ratio was 1.2, up from 0.9.

### Consolidated Statements of Cash Flows

<table><tr><th>Item</th><th>2022</th></tr><tr><td>Capital expenditures</td><td>(1,150)</td></tr></table>
Dividends paid were $2,101 million in Note 4.

## Item 7. Management's Discussion

Revenue grew because widget demand doubled; Q4'22 margins held at 31.5%.
"""


@pytest.fixture
def table_index(tmp_path):
    doc = tmp_path / "docs" / "widget.md"
    doc.parent.mkdir()
    doc.write_text(DOC, encoding="utf-8")
    return build_index([doc], tmp_path / "index", embedder=ppkit.HashEmbedder(),
                       config=ppkit.Config(online=False), progress=False)


def test_section_text_textbook_example():
    st = section_text(render(["### Cash", "<table>", "<tr><td>Cash</td><td>$24,177</td></tr>", "</table>"], 5), 5, 8)
    assert st.lines == [(5, "### Cash"), (7, "| Cash | $24,177 |")]
    assert st.terms == ("cash", "cash 24177")
    assert st.tokens() == ["cash", "cash", "24177"] and st.line_tokens() == [["cash"], ["cash", "24177"]]
    assert st.chars == len("### Cash\n| Cash | $24,177 |")


def test_stored_equals_on_the_fly(table_index):
    again = load_index(table_index.folder)
    lines = again.lines("widget")
    units = again.units("widget")
    assert len(units) >= 3
    for node_id, (a, b) in units.items():
        fresh = render(lines[a - 1:b], a)
        text = "\n".join(t for _, t in fresh)
        assert again.rendered_lines("widget", a, b) == fresh
        assert again.section_tokens("widget", a, b, len(text)) == lexical_tokens(text)
        assert again.line_tokens("widget", a, b) == [lexical_tokens(t) for _, t in fresh]
    # the balance sheet's table arrives rendered, numbers as one term
    sheet = next(t for t in again._texts["widget"].values() if t.lines[0][1] == "### Consolidated Balance Sheets")
    assert "| Cash and cash equivalents | $24,177 |" in [t for _, t in sheet.lines]
    assert "24177" in sheet.tokens()


def test_units_of_a_loaded_index_come_from_its_stored_texts(table_index, monkeypatch):
    want = dict(table_index.units("widget"))  # computed from the tree and the source at build time
    again = load_index(table_index.folder)
    monkeypatch.setattr("ppkit.indexing.index.section_units", lambda *a, **k: pytest.fail("sections recomputed"))
    assert again.units("widget") == want and list(again.units("widget")) == list(want)


def test_a_range_that_is_no_section_is_computed(table_index):
    assert table_index.section_tokens("widget", 1, 2) is None
    assert table_index.rendered_lines("widget", 9, 13) == [(10, "| Cash and cash equivalents | $24,177 |"),
                                                           (11, "| Total current assets | 31,002 |")]
    a, b = next(iter(table_index.units("widget").values()))
    assert table_index.section_tokens("widget", a, b, chars=-1) is None  # not the stored text: tokenise it


def test_stored_text_is_served_only_from_an_unchanged_source(table_index):
    again = load_index(table_index.folder)
    a, b = next(iter(again._texts["widget"]))  # a stored section; the source is not read yet
    src = table_index.folder.parent / "docs" / "widget.md"
    src.write_text(DOC.replace("24,177", "99,999"), encoding="utf-8")
    with pytest.raises(StaleIndexError, match="changed since it was indexed"):
        again.rendered_lines("widget", a, b)
    with pytest.raises(StaleIndexError):
        again.line_tokens("widget", a, b)


def test_bm25_from_stored_tokens_equals_from_text():
    texts = ["Cash and cash equivalents $24,177", "Dividends paid in Note 4", "", "cash cash cash flows"]
    toks = [lexical_tokens(t) for t in texts]
    for q in ("cash dividends", "24,177 Note 4", "nothing here"):
        assert bm25_scores(q, texts, tokens=toks).tolist() == bm25_scores(q, texts).tolist()


def test_reranker_features_with_stored_tokens_equal_tokenising(table_index):
    again = load_index(table_index.folder)
    r = again.retrieve("What were the capital expenditures and dividends paid?", k=3)
    cands = r.candidates
    assert len(cands) >= 3
    calls = []

    def stored(doc, a, b, chars):
        calls.append((doc, a, b))
        return again.section_tokens(doc, a, b, chars)

    q = "capital expenditures dividends paid"
    with_store = StructuralReranker(None, section_tokens=stored).features(q, cands)
    without = StructuralReranker(None).features(q, cands)
    assert len(calls) == len(cands)
    assert all(again.section_tokens(c.doc, c.line_start, c.line_end, len(c.text)) is not None for c in cands)
    assert with_store["text_lex"].tolist() == without["text_lex"].tolist()
    assert np.count_nonzero(with_store["text_lex"]) >= 1


def test_damaged_rendered_file_is_refused(table_index):
    folder = table_index.folder
    path = folder / "rendered" / "widget.json"
    raw = json.loads(path.read_text())
    raw["doc"] = "another"
    path.write_text(json.dumps(raw))
    with pytest.raises(IndexFormatError, match="rendered/widget.json.*rebuild"):
        load_index(folder)


def test_rendered_text_is_the_joined_lines(table_index):
    again = load_index(table_index.folder)
    for a, b in list(again.units("widget").values()) + [(9, 13)]:
        assert again.rendered_text("widget", a, b) == "\n".join(t for _, t in again.rendered_lines("widget", a, b))
