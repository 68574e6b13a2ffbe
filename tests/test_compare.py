"""Comparison questions: decomposition per company, merge, and cross-contamination (ppkit.compare)."""

import pytest
from _hybrid_fixtures import fixture_index, real_paths, tenk_index  # noqa: F401

from ppkit import build_tree
from ppkit.bench.measures.contamination import (
    contamination,
    load_comparison_questions,
    measure_contamination,
)
from ppkit.retrieval.retrieve import merge_round_robin


def test_merge_round_robin():
    assert merge_round_robin([["a1", "a2", "a3"], ["b1", "b2"]], 4) == ["a1", "b1", "a2", "b2"]
    assert merge_round_robin([["a1", "a2", "a3"], ["b1"]], 3) == ["a1", "b1", "a2"]
    assert merge_round_robin([["a1"], ["b1"], ["c1"]], 2) == ["a1", "b1", "c1"]  # every list gets one
    assert merge_round_robin([[], ["b1", "b2"]], 5) == ["b1", "b2"]


def test_decomposed_retrieval_represents_each_company(fixture_index):
    r = fixture_index.retrieve("Compare the current ratios of Beta and Alpha", 3)
    assert [s.doc for s in r.sections] == ["Beta", "Alpha", "Beta"]  # order of mention, round-robin
    assert [s.rank for s in r.sections] == [1, 2, 3]
    dec = r.trace.decomposition
    assert [d["doc"] for d in dec] == ["Beta", "Alpha"]
    # each sub-query names only its own company (names stay in the search text by default)
    assert {d["search_text"] for d in dec} == {"For Alpha: Compare the current ratios", "For Beta: Compare the current ratios"}
    assert [d["scope"] for d in dec] == [{"Beta": None}, {"Alpha": None}]
    c = contamination(r.sections, ["Beta", "Alpha"])
    assert c == {"sections": 3, "wrong_company": 0, "wrong_sections": [], "per_company": {"Beta": 2, "Alpha": 1},
                 "all_represented": True}
    one = fixture_index.retrieve("Compare the current ratios of Beta and Alpha", 3, decompose=False)
    assert one.trace.decomposition is None and one.trace.docs_filter == ["Beta", "Alpha"]


def test_measure_contamination_on_the_fixture(fixture_index):
    qs = [{"id": "f1", "question": "Compare the current assets of Alpha and Beta", "companies": ["Alpha", "Beta"],
           "gold": ["Alpha#0012", "Beta#0006"]}]
    m = measure_contamination(fixture_index, qs, k=2)
    dec = m["settings"]["decomposed"]
    assert dec == {"wrong_company_share": 0.0, "all_represented": 1.0, "gold_company_hit": 1.0, "gold_hit": 1.0}
    assert m["per_question"][0]["settings"]["decomposed"]["sections_returned"] == ["Alpha#0012", "Beta#0006"]
    assert set(m["settings"]) == {"no filter", "filter, one pool", "decomposed"}


@pytest.mark.corpus
def test_comparison_gold_sections_exist():
    trees = {p.stem: build_tree(p) for p in real_paths()}
    qs = load_comparison_questions()
    assert len(qs) == 10 and len({q["id"] for q in qs}) == 10
    for q in qs:
        assert len(q["gold"]) == len(q["gold_titles"]), q["id"]
        for g, title in zip(q["gold"], q["gold_titles"]):
            doc, node = g.split("#")
            assert trees[doc][node].breadcrumb == title, (q["id"], g)
        assert {g.split("#")[0] for g in q["gold"]} == set(q["companies"]), q["id"]


@pytest.mark.corpus
@pytest.mark.model
def test_decomposition_removes_contamination_on_the_10ks(tenk_index):
    from ppkit.retrieval.rerank import StructuralReranker

    qs = load_comparison_questions()[::2]  # five of the ten (cmp-01, 03, 05, 07, 09): the test checks guarantees
    m = measure_contamination(tenk_index, qs, k=5, reranker=StructuralReranker(tenk_index.embedder))
    s = m["settings"]
    # what decomposition guarantees: no foreign company, every named company represented, in every question
    assert s["decomposed"]["wrong_company_share"] == 0.0 and s["decomposed"]["all_represented"] == 1.0
    assert s["filter, one pool"]["wrong_company_share"] == 0.0
    for row in m["per_question"]:
        dec = row["settings"]["decomposed"]
        assert dec["sections"] == 5 and all(v >= 1 for v in dec["per_company"].values()), row["id"]
        # round-robin in the order of mention: the first section belongs to the first company named
        first = next(c for c in row["question"].replace("American Express", "AMEX").split() if c.strip(",.?") in
                     dec["per_company"]).strip(",.?")
        assert dec["sections_returned"][0].startswith(first + "#"), row["id"]


def test_a_comparison_trace_has_every_field_the_explorer_shows(fixture_index):
    """A comparison question once broke the query explorer (KeyError 'sections_recalled'): its trace
    is a Trace like any other, with counts summed over the sub-retrievals."""
    pytest.importorskip("ipywidgets")
    from ppkit.ui.widgets import QueryExplorer

    r = fixture_index.retrieve("Compare the current ratios of Beta and Alpha", 3)
    subs = [fixture_index.retrieve(d["search_text"], 3, docs=[d["doc"]]) for d in r.trace.decomposition]
    assert r.trace.sections_recalled == sum(s.trace.sections_recalled for s in subs)
    assert r.trace.chunks_recalled == sum(s.trace.chunks_recalled for s in subs)
    ex = QueryExplorer(fixture_index, "Compare the current ratios of Beta and Alpha", k=3)
    funnel = ex.funnel_counts()
    assert funnel["sections"] == r.trace.sections_recalled and funnel["k"] == 3
    assert "Beta" in ex.status_html() and "Alpha" in ex.status_html()
