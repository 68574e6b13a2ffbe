"""Stage 1 with dense, BM25 or hybrid recall (ppkit.hybrid) and its index plumbing."""

import json

import pytest
from _hybrid_fixtures import DOCS, fixture_index, make_index  # noqa: F401

from ppkit import HashEmbedder, load_index
from ppkit.retrieval.hybrid import recall_sections, scope_chunk_ids


def test_dense_mode_is_the_first_sections_of_the_nearest_chunks(fixture_index):
    q = "total current liabilities"
    qv = fixture_index.embedder.embed_query(q)
    ids, scores = fixture_index.store.search(qv, 200)
    best: dict[tuple[str, str], float] = {}  # (doc, node) -> its best chunk's similarity, in rank order
    for i, s in zip(ids, scores):
        c = fixture_index.chunk(int(i))
        best.setdefault((c.doc, c.node_id), float(s))
    b, info = recall_sections(fixture_index, q, qv, mode="dense")
    assert [(c.doc, c.node_id) for c in b] == list(best)[:50]
    assert [c.stage1_score for c in b] == [pytest.approx(best[(c.doc, c.node_id)]) for c in b]
    assert info.retrieval == "dense" and "bm25" not in info.lists


def test_hybrid_scores_are_rrf_of_section_ranks(fixture_index):
    q = "Sprockets segment revenue"
    qv = fixture_index.embedder.embed_query(q)
    cands, info = recall_sections(fixture_index, q, qv, mode="hybrid")
    assert info.rrf_k == 60 and set(info.lists) == {"dense", "bm25"}
    for c in cands:
        ranks = c.recall["ranks"]
        want = sum(1 / (60 + r) for r in ranks.values() if r is not None)
        assert c.recall["rrf_score"] == pytest.approx(want, abs=1e-6)
    assert [c.stage1_rank for c in cands] == list(range(1, len(cands) + 1))
    assert all(cands[i].recall["rrf_score"] >= cands[i + 1].recall["rrf_score"] for i in range(len(cands) - 1))
    # BM25 puts the one section that says "Sprockets segment" first
    bm, _ = recall_sections(fixture_index, q, qv, mode="bm25")
    assert bm[0].section_id == "Alpha#0013"
    # a candidate recalled by BM25 only still carries dense similarities for the re-ranker
    only_bm25 = [c for c in cands if c.recall["ranks"]["dense"] is None]
    for c in only_bm25:
        assert len(c.chunk_scores) == c.chunk_hits >= 1


def test_modes_through_retrieve_and_trace(fixture_index):
    for mode in ("dense", "bm25", "hybrid"):
        r = fixture_index.retrieve("What were Alpha's total current assets?", 3, retrieval=mode)
        assert r.trace.retrieval == mode
        assert r.sections[0].section_id == "Alpha#0012"
        assert all(c.doc == "Alpha" for c in r.candidates)  # the name became a filter
        assert r.candidates[0].to_dict()["recall"]["mode"] == mode
    with pytest.raises(ValueError, match="unknown retrieval mode"):
        fixture_index.retrieve("revenue", 3, retrieval="sparse")


def test_scope_chunk_ids_with_items(fixture_index):
    ids = scope_chunk_ids(fixture_index, {"Alpha": ["8"]})
    nodes = sorted({fixture_index.chunk(int(i)).node_id for i in ids})
    assert nodes == ["0012", "0013"]  # Item 8: the balance sheet and Note 4 (0011 has no chunk: too short)
    assert scope_chunk_ids(fixture_index, None) is None


def test_index_folder_holds_bm25_and_sections(tmp_path):
    ix = make_index(tmp_path / "ix")
    assert (tmp_path / "ix" / "bm25" / "lexical.json").is_file()
    items = json.loads((tmp_path / "ix" / "sections.json").read_text())["items"]
    assert items["Beta"] == {"0002": "1", "0003": "1A", "0004": "7", "0005": "7", "0006": "7"}
    back = load_index(tmp_path / "ix", embedder=HashEmbedder(64))
    assert len(back.lexical) == len(back.chunks) == len(ix.chunks)
    a = ix.lexical.search("commodity prices margins", 5)
    b = back.lexical.search("commodity prices margins", 5)
    assert a[0].tolist() == b[0].tolist()
    assert back.record("Alpha").metadata["ticker"] == "AWC"
    assert back.section_items("Alpha")["0013"] == "8"


def test_incremental_build_rebuilds_bm25_over_all_chunks(tmp_path):
    from ppkit import build_index

    build_index(DOCS[:1], tmp_path / "ix", embedder=HashEmbedder(64), progress=False)
    ix = build_index(DOCS[1:], tmp_path / "ix", embedder=HashEmbedder(64), progress=False)
    assert ix.docs == ["Alpha", "Beta"]
    back = load_index(tmp_path / "ix", embedder=HashEmbedder(64))
    assert len(back.lexical) == len(back.chunks)
    ids, _ = back.lexical.search("commodity", 5)
    assert {back.chunk(int(i)).doc for i in ids} == {"Beta"}
    assert back.section_items("Alpha")["0006"] == "1A"  # carried over from the first build


def test_a_deleted_bm25_folder_is_reported_as_damage(tmp_path):
    import shutil

    from ppkit.indexing.index import IndexFormatError

    make_index(tmp_path / "ix")
    shutil.rmtree(tmp_path / "ix" / "bm25")
    with pytest.raises(IndexFormatError, match=r"bm25/.* is missing .*--fresh"):
        load_index(tmp_path / "ix", embedder=HashEmbedder(64))


def test_strip_names_switch(fixture_index):
    from dataclasses import replace

    r = fixture_index.retrieve("What were Alpha's total current assets?", 3)
    assert r.trace.search_text == "What were Alpha's total current assets?"  # names kept by default
    strip = replace(fixture_index.config, strip_names=True)
    old = fixture_index.config
    fixture_index.config = strip
    try:
        assert fixture_index.retrieve("What were Alpha's total current assets?", 3).trace.search_text == \
            "What were total current assets?"
    finally:
        fixture_index.config = old
    keep = replace(fixture_index.config, strip_names=False)
    old = fixture_index.config
    fixture_index.config = keep
    try:
        r = fixture_index.retrieve("What were Alpha's total current assets?", 3)
        assert r.trace.search_text == "What were Alpha's total current assets?"
        assert r.trace.docs_filter == ["Alpha"]  # still filtered
        d = fixture_index.retrieve("Compare the current ratios of Beta and Alpha", 3)
        assert [x["search_text"] for x in d.trace.decomposition] == ["For Beta: Compare the current ratios",
                                                                         "For Alpha: Compare the current ratios"]
    finally:
        fixture_index.config = old


def test_ask_takes_a_mode_string_for_retrieval(fixture_index):
    a = fixture_index.ask("What were Alpha's total current assets?", 2, retrieval="bm25")
    assert a.trace.retrieval == "bm25" and a.sections[0].section_id == "Alpha#0012"
