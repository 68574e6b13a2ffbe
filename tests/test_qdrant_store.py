"""QdrantStore (local mode): the FaissStore interface, payload filters, sparse and hybrid search."""

import json

import numpy as np
import pytest

pytest.importorskip("qdrant_client")

from _hybrid_fixtures import DOCS, fixture_index, make_index, tenk_index  # noqa: F401
from ppkit import HashEmbedder, load_index
from ppkit.indexing.stores import FaissStore, QdrantStore
from ppkit.indexing.stores.qdrant import sparse_vector

VECS = np.random.default_rng(7).normal(size=(5, 4)).astype(np.float32)  # five points, 4 dims, no ties
VECS = VECS / np.linalg.norm(VECS, axis=1, keepdims=True)
PAYLOADS = [{"doc": "A", "item": "7"}, {"doc": "A", "item": "8"}, {"doc": "B", "item": "7"}, {"doc": "B", "item": None},
            {"doc": "C", "item": "1A"}]


def _stores():
    q = QdrantStore(4)
    q.add(np.arange(5), VECS, PAYLOADS, [sparse_vector(t, 2.0) for t in ["apple pie", "banana", "cherry", "date",
                                                                            "apple apple"]])
    f = FaissStore(4)
    f.add(np.arange(5), VECS)
    return q, f


def test_same_interface_and_results_as_faiss():
    q, f = _stores()
    assert len(q) == len(f) == 5
    query = VECS[1]
    for allowed in (None, np.array([0, 2, 4])):
        qi, qs = q.search(query, 3, allowed_ids=allowed)
        fi, fs = f.search(query, 3, allowed_ids=allowed)
        assert qi.tolist() == fi.tolist()
        assert np.allclose(qs, fs, atol=1e-6)
    assert np.allclose(q.vectors(np.array([3, 1])), f.vectors(np.array([3, 1])), atol=1e-7)
    assert q.search(query, 3, allowed_ids=np.array([], dtype=np.int64))[0].tolist() == []
    q.remove(np.array([1]))
    assert len(q) == 4 and 1 not in q.search(query, 5)[0].tolist()
    with pytest.raises(ValueError, match="dims"):
        q.search(np.zeros(3), 2)


def test_payload_filter_by_doc_and_item():
    q, _ = _stores()
    ids, _ = q.search(VECS[0], 5, where={"A": ["7"], "B": None})
    assert sorted(ids.tolist()) == [0, 2, 3]
    ids, _ = q.search(VECS[0], 5, where={"C": None})
    assert ids.tolist() == [4]
    assert q.search(VECS[0], 5, where={})[0].tolist() == []


def test_sparse_and_native_hybrid_search():
    q, _ = _stores()
    ids, scores = q.search_sparse("apple", 5)
    assert ids.tolist() == [4, 0]  # tf 2 beats tf 1
    assert q.search_sparse("zebra", 5)[0].tolist() == []
    ids, _ = q.search_hybrid(VECS[2], "apple", 5)
    assert ids[0] in (2, 4, 0) and set(ids.tolist()) >= {0, 2, 4}


def test_save_load_plain_files(tmp_path):
    q, _ = _stores()
    q.save(tmp_path)
    files = sorted(p.name for p in (tmp_path / "qdrant").iterdir())
    assert files == ["collection.json", "dense.npy", "ids.npy", "payloads.jsonl", "sparse_indices.npy",
                     "sparse_indptr.npy", "sparse_values.npy"]
    back = QdrantStore.load(tmp_path, 4, q.manifest_entry())
    assert len(back) == 5
    assert back.search(VECS[3], 2)[0].tolist() == q.search(VECS[3], 2)[0].tolist()
    assert back.search_sparse("apple", 5)[0].tolist() == [4, 0]
    assert back.search(VECS[0], 5, where={"A": ["8"]})[0].tolist() == [1]
    with pytest.raises(ValueError, match="4-dim"):
        QdrantStore.load(tmp_path, 8, q.manifest_entry())


def test_qdrant_sparse_ranks_like_bm25(fixture_index):
    q = QdrantStore.from_index(fixture_index)
    for text in ("commodity prices", "total current assets", "sprockets segment revenue"):
        bm = fixture_index.lexical.search(text, 5)[0].tolist()
        qd = q.search_sparse(text, 5)[0].tolist()
        assert qd == bm, text


def test_qdrant_index_folder_returns_the_same_sections_as_faiss(tmp_path):
    fa = make_index(tmp_path / "faiss")
    qd = make_index(tmp_path / "qdrant", store="qdrant")
    manifest = json.loads((tmp_path / "qdrant" / "manifest.json").read_text())
    assert manifest["store"] == {"name": "qdrant", "collection": "ppkit", "dir": "qdrant", "mode": "local"}
    qd = load_index(tmp_path / "qdrant", embedder=HashEmbedder(64))
    assert type(qd.store).__name__ == "QdrantStore" and len(qd.store) == len(fa.chunks)
    questions = ["What were Alpha's total current assets?", "What commodity risks does Beta face?",
                 "Item 7 revenue for Alpha", "Compare free cash flow of Alpha and Beta", "net revenue growth"]
    for q in questions:
        for mode in ("dense", "bm25", "hybrid"):
            a = fa.retrieve(q, 3, retrieval=mode)
            b = qd.retrieve(q, 3, retrieval=mode)
            assert [s.section_id for s in a.sections] == [s.section_id for s in b.sections], (q, mode)


def test_cli_index_with_qdrant_and_ask(tmp_path, capsys):
    from ppkit.cli import main

    folder = tmp_path / "ix"
    assert main(["index", *map(str, DOCS), "--index", str(folder), "--embedder", "hash", "--store", "qdrant",
                 "--quiet"]) == 0
    assert (folder / "qdrant" / "dense.npy").is_file() and not (folder / "vectors.faiss").exists()
    capsys.readouterr()
    assert main(["ask", "What were Alpha's total current assets?", "--index", str(folder), "--k", "2", "--json",
                 "--retrieval", "hybrid"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sections"][0]["doc"] == "Alpha" and out["trace"]["retrieval"] == "hybrid"
    assert out["verification"]["ok"] is True


@pytest.mark.corpus
@pytest.mark.model
def test_qdrant_matches_faiss_on_the_10ks(tenk_index):
    """The same vectors in Qdrant (local mode) give the same sections as FAISS, up to ties."""
    from ppkit.indexing.stores.qdrant import qdrant_index
    from ppkit.retrieval.rerank import StructuralReranker

    qix = qdrant_index(tenk_index)
    assert len(qix.store) == len(tenk_index.chunks)
    rr = StructuralReranker(tenk_index.embedder)  # shared: its breadcrumb vectors are cached
    for q in ["For AMD, what is the current ratio for FY2022?",
              "For Boeing, what is the total backlog at the end of 2022?",
              "For PepsiCo, what were the Russia-Ukraine conflict charges?",
              "Compare the goodwill of AMD and American Express."]:
        for mode in ("dense", "hybrid"):
            a = [s.section_id for s in tenk_index.retrieve(q, 5, retrieval=mode, reranker=rr).sections]
            b = [s.section_id for s in qix.retrieve(q, 5, retrieval=mode, reranker=rr).sections]
            assert a == b, (q, mode, a, b)


def test_incremental_build_keeps_the_qdrant_store(tmp_path):
    from ppkit import build_index

    build_index(DOCS[:1], tmp_path / "ix", embedder=HashEmbedder(64), progress=False, store="qdrant")
    ix = build_index(DOCS[1:], tmp_path / "ix", embedder=HashEmbedder(64), progress=False)  # no store= given
    assert ix.manifest["store"]["name"] == "qdrant" and len(ix.store) == len(ix.chunks)
    back = load_index(tmp_path / "ix", embedder=HashEmbedder(64))
    r = back.retrieve("What commodity risks does Beta face?", 2)
    assert r.sections[0].section_id == "Beta#0003"


class _ServerStandIn:
    """One local-mode client shared by every store, standing in for a Qdrant server: closing a
    connection does not drop the server's collections."""

    def __init__(self):
        from qdrant_client import QdrantClient

        self.client = QdrantClient(location=":memory:")

    def connect(self, url=None, api_key=None, location=None):
        shared = self.client

        class _Connection:
            def __getattr__(self, name):
                return getattr(shared, name)

            def close(self):
                pass

        return _Connection()


def _collections(server):
    return sorted(c.name for c in server.client.get_collections().collections)


def test_server_collections_are_per_folder_and_a_rebuild_swaps_before_it_drops(tmp_path, monkeypatch):
    """Two folders with the same name get two collections; a rebuild fills a new collection while the old
    one still serves the saved index, and drops the old one only after the new index is saved."""
    from qdrant_client import models

    from ppkit import build_index
    from ppkit.indexing.stores import qdrant as qdrant_store

    server = _ServerStandIn()
    monkeypatch.setattr(qdrant_store, "_qdrant", lambda: (server.connect, models))
    url = "http://127.0.0.1:9"  # never contacted: the stand-in answers
    emb = HashEmbedder(64)
    a = build_index(DOCS, tmp_path / "a" / "ix", embedder=emb, progress=False, store="qdrant", connection={"url": url})
    b = build_index(DOCS, tmp_path / "b" / "ix", embedder=emb, progress=False, store="qdrant", connection={"url": url})
    ca, cb = a.manifest["store"]["collection"], b.manifest["store"]["collection"]
    assert ca != cb and ca.startswith("ppkit-ix-") and cb.startswith("ppkit-ix-")
    assert _collections(server) == sorted([ca, cb])
    # a rebuild that is not saved leaves the saved index and its collection alone
    unsaved = build_index(DOCS, tmp_path / "a" / "ix", embedder=emb, progress=False, fresh=True, connection={"url": url},
                          store="qdrant", save=False)
    cu = unsaved.manifest["store"]["collection"]
    assert cu not in (ca, cb) and ca in _collections(server)
    server.client.delete_collection(cu)
    # a saved rebuild (fresh): the new collection is in the saved index, the old one is gone, b's untouched
    again = build_index(DOCS, tmp_path / "a" / "ix", embedder=emb, progress=False, fresh=True, connection={"url": url},
                        store="qdrant")
    cn = again.manifest["store"]["collection"]
    assert cn != ca and cn.rsplit("-", 1)[0] == ca.rsplit("-", 1)[0]
    assert _collections(server) == sorted([cb, cn])
    back = load_index(tmp_path / "a" / "ix", embedder=emb, connection={"url": url})
    assert back.store.collection == cn and len(back.store) == len(back.chunks)
    assert back.retrieve("What commodity risks does Beta face?", 2).sections[0].section_id == "Beta#0003"
    # an incremental rebuild (previous index loaded) swaps the same way
    third = build_index(DOCS[:1], tmp_path / "a" / "ix", embedder=emb, progress=False, connection={"url": url})
    assert _collections(server) == sorted([cb, third.manifest["store"]["collection"]])


def test_drop_superseded_only_drops_a_collection_of_the_same_folder(tmp_path):
    from qdrant_client import QdrantClient

    shared = QdrantClient(location=":memory:")
    other = QdrantStore.create(4, url="http://x", folder=tmp_path / "other", client=shared)
    mine = QdrantStore.create(4, url="http://x", folder=tmp_path / "mine", client=shared,
                              replaces=other.manifest_entry())  # e.g. a crafted manifest naming another index's
    assert mine.drop_superseded() is None and shared.collection_exists(other.collection)
    again = QdrantStore.create(4, url="http://x", folder=tmp_path / "mine", client=shared,
                               replaces=mine.manifest_entry())
    again.after_save()
    assert not shared.collection_exists(mine.collection) and again.drop_superseded() is None


def test_qdrant_url_from_the_environment_only_opens_or_rebuilds_a_server_index(tmp_path, monkeypatch):
    """QDRANT_URL names the server of an index already on one (loading, rebuilding it); a new build
    reaches a server only through connection={"url": ...}."""
    from qdrant_client import models

    from ppkit import build_index
    from ppkit.indexing.stores import qdrant as qdrant_store

    server = _ServerStandIn()
    monkeypatch.setattr(qdrant_store, "_qdrant", lambda: (server.connect, models))
    monkeypatch.setenv("QDRANT_URL", "http://127.0.0.1:9")  # never contacted: the stand-in answers
    emb = HashEmbedder(64)
    local = build_index(DOCS, tmp_path / "local", embedder=emb, progress=False, store="qdrant")
    assert local.manifest["store"]["mode"] == "local"
    first = build_index(DOCS[:1], tmp_path / "ix", embedder=emb, progress=False, store="qdrant",
                        connection={"url": "http://127.0.0.1:9"})
    again = build_index(DOCS[1:], tmp_path / "ix", embedder=emb, progress=False)  # env URL, previous on a server
    assert again.manifest["store"]["mode"] == "server" and len(again.store) == len(again.chunks)
    on_server = [c for c in _collections(server) if c.startswith("ppkit-ix-")]  # ("ppkit": the local build's)
    assert on_server == [again.manifest["store"]["collection"]] != [first.manifest["store"]["collection"]]
    assert load_index(tmp_path / "ix", embedder=emb).store.collection == again.manifest["store"]["collection"]
