"""The static stage-1 channel: ``--retrieval dense+static`` / ``hybrid+static`` (ppkit.indexing.static_channel,
ppkit.retrieval.hybrid), on the two hand-written 10-Ks of tests/fixtures/hybrid.

The channel's embedder is the real StaticEmbedder over the tiny BERT of test_static.py where the vectors
themselves are checked, and a HashEmbedder of another width (a plumbing stand-in whose ranking differs from
the index's own HashEmbedder) where the fusion is checked.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import numpy as np
import pytest
from _hybrid_fixtures import make_index
from test_static import tiny_bert  # noqa: F401  (the fixture)

from ppkit import HashEmbedder, load_index
from ppkit.core.config import RETRIEVAL_MODES, Config
from ppkit.indexing.lexical import dedup_sections, rrf
from ppkit.indexing.static import StaticEmbedder
from ppkit.indexing.static_channel import _cache_path, chunks_key, static_chunk_vectors
from ppkit.retrieval.hybrid import recall_sections, scope_chunk_ids


def _folder_state(folder):
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def saved_index(tmp_path, monkeypatch):
    monkeypatch.setenv("PPKIT_CACHE_DIR", str(tmp_path / "cache"))
    return make_index(tmp_path / "index")


def test_vectors_are_the_static_embedding_of_the_chunk_texts_cached_outside_the_index(saved_index, tiny_bert,
                                                                                       tmp_path):
    folder = saved_index.folder
    before = _folder_state(folder)
    e = StaticEmbedder(dims=4, model_dir=tiny_bert)
    ch = static_chunk_vectors(saved_index, embedder=e)
    texts = [c.text for c in saved_index.chunks]
    assert ch.ids.tolist() == [c.chunk_id for c in saved_index.chunks]
    assert ch.vectors.tobytes() == e.embed_documents(texts).astype(np.float32).tobytes()
    cached = sorted((tmp_path / "cache" / "static").glob("chunks-*.npy"))
    assert len(cached) == 1 and np.load(cached[0]).tobytes() == ch.vectors.tobytes()
    assert _folder_state(folder) == before  # nothing written into the index folder
    assert static_chunk_vectors(saved_index) is ch  # kept per loaded index

    # another load of the same folder reads the cache: nothing is embedded
    again = load_index(folder, embedder=HashEmbedder(64))
    e.embed_documents = lambda *a, **k: pytest.fail("embedded again instead of reading the cache")
    assert static_chunk_vectors(again, embedder=e).vectors.tobytes() == ch.vectors.tobytes()
    assert chunks_key(again) == chunks_key(saved_index) == f"file:{saved_index.manifest['files']['chunks.jsonl']}"


def test_the_cache_key_follows_the_chunks_and_the_table(tmp_path, monkeypatch, tiny_bert):
    monkeypatch.setenv("PPKIT_CACHE_DIR", str(tmp_path / "cache"))
    unsaved = make_index()  # never saved: keyed by its chunk ids and texts
    assert chunks_key(unsaved).startswith("texts:")
    assert chunks_key(make_index()) == chunks_key(unsaved)
    shorter = make_index()  # one chunk's text changed
    shorter.chunks[0] = replace(shorter.chunks[0], text=shorter.chunks[0].text + " changed")
    assert chunks_key(shorter) != chunks_key(unsaved)
    static_chunk_vectors(unsaved, embedder=StaticEmbedder(dims=4, model_dir=tiny_bert))
    static_chunk_vectors(unsaved, embedder=StaticEmbedder(dims=3, model_dir=tiny_bert))
    assert len(list((tmp_path / "cache" / "static").glob("chunks-*.npy"))) == 2  # the table's dims are in the key


def test_search_is_the_nearest_chunks_in_scope(saved_index):
    e = HashEmbedder(32)
    ch = static_chunk_vectors(saved_index, embedder=e)
    q = "Sprockets segment revenue"
    sims = np.stack([e.embed_documents([c.text])[0] for c in saved_index.chunks]) @ e.embed_query(q)
    want = sorted(range(len(sims)), key=lambda i: (-sims[i], saved_index.chunks[i].chunk_id))[:5]
    ids, scores = ch.search(q, 5)
    assert ids.tolist() == [saved_index.chunks[i].chunk_id for i in want]
    np.testing.assert_allclose(scores, sims[want], atol=1e-6)
    allowed = scope_chunk_ids(saved_index, {"Beta": None})
    ids, _ = ch.search(q, 200, allowed_ids=allowed)
    assert sorted(ids.tolist()) == sorted(allowed.tolist())  # all of Beta's chunks, none of Alpha's
    assert ch.search(q, 0)[0].tolist() == []


def _expected(index, q, lists):
    qv = index.embedder.embed_query(q)
    chunk_rankings = {}
    if "dense" in lists:
        chunk_rankings["dense"] = index.store.search(qv, 200)[0]
    if "bm25" in lists:
        chunk_rankings["bm25"] = index.lexical.search(q, 200)[0]
    chunk_rankings["static"] = static_chunk_vectors(index).search(q, 200)[0]
    key = {c.chunk_id: (c.doc, c.node_id) for c in index.chunks}
    return {name: dedup_sections(key[int(i)] for i in ids) for name, ids in chunk_rankings.items()}


@pytest.mark.parametrize("mode,lists", [("dense+static", ["dense", "static"]),
                                        ("hybrid+static", ["dense", "bm25", "static"])])
def test_static_modes_fuse_the_static_ranking_with_the_modes_own_by_rrf(saved_index, mode, lists):
    static_chunk_vectors(saved_index, embedder=HashEmbedder(32))
    q = "Sprockets segment revenue"
    rankings = _expected(saved_index, q, lists)
    assert rankings["static"] != rankings["dense"]  # the channel brings its own order
    own = [key for key, _ in rrf({"dense": rankings["dense"], "bm25": rankings["bm25"]})] if "bm25" in lists \
        else rankings["dense"]
    want = rrf({"own": own, "static": rankings["static"]})
    assert want != rrf(rankings)[:len(want)] or "bm25" not in lists  # hybrid+static is not one RRF of three lists
    cands, info = recall_sections(saved_index, q, saved_index.embedder.embed_query(q), mode=mode)
    assert info.retrieval == mode and list(info.lists) == lists and info.rrf_k == 60
    assert [(c.doc, c.node_id) for c in cands] == [key for key, _ in want][:50]
    for c, (_, score) in zip(cands, want):
        assert c.recall["rrf_score"] == pytest.approx(score, abs=1e-6)
        assert c.recall["ranks"] == {name: (rankings[name].index((c.doc, c.node_id)) + 1
                                            if (c.doc, c.node_id) in rankings[name] else None) for name in lists}
        assert len(c.chunk_scores) >= 1  # dense similarities, even for a section only the static channel recalled
    assert "static_search" in info.seconds


def test_each_list_enters_the_fusion_with_its_first_candidates_sections(saved_index):
    static_chunk_vectors(saved_index, embedder=HashEmbedder(32))
    q = "rare earth magnets supply"
    rankings = _expected(saved_index, q, ["dense", "static"])
    cands, _ = recall_sections(saved_index, q, saved_index.embedder.embed_query(q), mode="dense+static", candidates=3)
    want = rrf({"dense": rankings["dense"][:3], "static": rankings["static"][:3]})
    assert [(c.doc, c.node_id) for c in cands] == [key for key, _ in want][:3]
    assert all(min(r for r in c.recall["ranks"].values() if r) <= 3 for c in cands)
    # Beta#0002 (2nd dense, 8th static) and Alpha#0003 (7th dense, 2nd static) tie on their one rank within the
    # first 3 (1/62 each; the dense list's is first seen); fused whole, Alpha#0003's 7th dense rank takes the slot
    assert [(c.doc, c.node_id) for c in cands] == [("Alpha", "0006"), ("Alpha", "0005"), ("Beta", "0002")]
    assert [key for key, _ in rrf(rankings)][:3] == [("Alpha", "0006"), ("Alpha", "0005"), ("Alpha", "0003")]


def test_static_modes_through_retrieve_config_and_filter(saved_index):
    static_chunk_vectors(saved_index, embedder=HashEmbedder(32))
    assert {"dense+static", "hybrid+static"} <= set(RETRIEVAL_MODES)
    assert Config(retrieval="hybrid+static").retrieval == "hybrid+static"
    for mode in ("dense+static", "hybrid+static"):
        r = saved_index.retrieve("What were Alpha's total current assets?", 3, retrieval=mode)
        assert r.trace.retrieval == mode and "static" in r.trace.lists and r.trace.rrf_k == 60
        assert r.sections[0].section_id == "Alpha#0012"
        assert all(c.doc == "Alpha" for c in r.candidates)  # the question's filter scopes the static channel too
    with pytest.raises(ValueError, match="unknown retrieval mode"):
        saved_index.retrieve("revenue", 3, retrieval="bm25+static")


def test_an_unwritable_cache_keeps_the_vectors_in_memory_and_says_so(tmp_path, monkeypatch, tiny_bert):
    index = make_index(tmp_path / "index")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("PPKIT_CACHE_DIR", str(blocker / "cache"))
    e = StaticEmbedder(dims=4, model_dir=tiny_bert)
    with pytest.warns(UserWarning) as caught:
        ch = static_chunk_vectors(index, embedder=e)
    # the table (built on first use) and the chunk vectors: neither could be cached, both are in memory
    assert [str(w.message).split(" in ")[0] for w in caught] == [f"could not cache {e.table_key()}",
                                                                  f"could not cache {_cache_name(index, e)}"]
    assert all("kept in memory" in str(w.message) and "PPKIT_CACHE_DIR" in str(w.message) for w in caught)
    assert ch.vectors.tobytes() == e.embed_documents([c.text for c in index.chunks]).astype(np.float32).tobytes()
    assert blocker.read_text() == "a file where the cache folder should be"


def _cache_name(index, embedder) -> str:
    return _cache_path(index, embedder).name
