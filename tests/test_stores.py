"""Vector stores by name: the registry, a store added with one line, the errors for unknown names."""

import json

import numpy as np
import pytest

from _hybrid_fixtures import DOCS, make_index
from ppkit import HashEmbedder, build_index, load_index
from ppkit.core.errors import InvalidInput
from ppkit.indexing import stores
from ppkit.indexing.stores import FaissStore, StoreBase


class ToyStore(StoreBase):
    """Exact search over a dict of vectors, saved as two .npy files: a whole store in a few lines."""

    name = "toy"
    files = r"toy/[^/]+"
    required_files = ("toy/ids.npy", "toy/vectors.npy")

    def __init__(self, dim, data=None):
        self.dim, self.data = dim, dict(data or {})

    def __len__(self):
        return len(self.data)

    def add(self, ids, vectors):
        self.data.update({int(i): np.asarray(v, np.float32) for i, v in zip(ids, vectors)})

    def remove(self, ids):
        for i in ids:
            self.data.pop(int(i), None)

    def vectors(self, ids):
        return np.asarray([self.data[int(i)] for i in ids], np.float32).reshape(-1, self.dim)

    def search(self, query, k, allowed_ids=None):
        ids = sorted(self.data) if allowed_ids is None else [int(i) for i in allowed_ids if int(i) in self.data]
        scores = self.vectors(ids) @ np.asarray(query, np.float32).ravel()
        order = np.argsort(-scores, kind="stable")[:k]
        return np.asarray(ids, np.int64)[order], scores[order]

    def manifest_entry(self):
        return {"name": self.name, "dir": "toy"}

    def save(self, folder):
        (folder / "toy").mkdir()
        ids = np.asarray(sorted(self.data), np.int64)
        np.save(folder / "toy" / "ids.npy", ids)
        np.save(folder / "toy" / "vectors.npy", self.vectors(ids))

    @classmethod
    def open(cls, entry, folder, dim):
        ids, vecs = np.load(folder / "toy" / "ids.npy"), np.load(folder / "toy" / "vectors.npy")
        return cls(dim, zip(ids.tolist(), vecs))


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(stores.REGISTRY, ToyStore.name, ToyStore)  # the one line that adds a store


def test_the_registry_lists_faiss_and_qdrant():
    assert stores.names()[:2] == ["faiss", "qdrant"] and stores.DEFAULT == "faiss"
    assert stores.store_class("faiss") is FaissStore
    assert stores.create("faiss", 8).dim == 8


def test_a_store_registered_with_one_line_builds_saves_loads_and_retrieves_like_faiss(tmp_path, toy):
    fa = make_index(tmp_path / "faiss")
    make_index(tmp_path / "toy", store="toy")
    manifest = json.loads((tmp_path / "toy" / "manifest.json").read_text())
    assert manifest["store"] == {"name": "toy", "dir": "toy"} and "toy/vectors.npy" in manifest["files"]
    assert not (tmp_path / "toy" / "vectors.faiss").exists()
    ix = load_index(tmp_path / "toy", embedder=HashEmbedder(64))
    assert type(ix.store) is ToyStore and len(ix.store) == len(fa.chunks)
    for q in ["What were Alpha's total current assets?", "What commodity risks does Beta face?",
              "Item 7 revenue for Alpha", "net revenue growth"]:
        for mode in ("dense", "hybrid"):
            assert [s.section_id for s in ix.retrieve(q, 3, retrieval=mode).sections] == \
                   [s.section_id for s in fa.retrieve(q, 3, retrieval=mode).sections], (q, mode)
    # an incremental build keeps the store (its files count as the index's own) and its vectors
    again = build_index(DOCS, tmp_path / "toy", embedder=HashEmbedder(64), progress=False)  # no store= given
    assert again.manifest["store"]["name"] == "toy" and again.manifest["build"]["chunks_reused"] == len(fa.chunks)


def test_an_unknown_store_name_is_a_clear_error(tmp_path):
    with pytest.raises(InvalidInput, match=r"unknown store 'nope': use one of 'faiss', 'qdrant'"):
        make_index(tmp_path / "ix", store="nope")
    with pytest.raises(InvalidInput, match="unknown store"):
        stores.create("nope", 4)
    with pytest.raises(InvalidInput, match="unknown connection option"):
        stores.create("faiss", 4, connection={"uri": "http://x"})


def test_a_manifest_naming_an_unknown_store_is_a_damaged_index(tmp_path):
    make_index(tmp_path / "ix")
    m = json.loads((tmp_path / "ix" / "manifest.json").read_text())
    m["store"] = {"name": "nope"}
    (tmp_path / "ix" / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(InvalidInput, match="unknown store 'nope'.*rebuild"):
        load_index(tmp_path / "ix", embedder=HashEmbedder(64))


def test_connection_options_of_another_store_are_ignored():
    # the CLI passes --qdrant-url whatever the store: FAISS takes no connection
    assert len(stores.create("faiss", 4, connection={"url": "http://127.0.0.1:9"})) == 0
