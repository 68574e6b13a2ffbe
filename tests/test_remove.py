"""ppkit.indexing.remove: a document removed from an index leaves nothing behind, on FAISS and Qdrant;
unknown names, bare strings, the last document, adding it back, the CLI."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import ppkit
from ppkit.cli import main
from ppkit.core.errors import InvalidInput, MissingFile, NotFound
from ppkit.core.ids import breadcrumb_path
from ppkit.indexing.index import StaleIndexError, UntrustedIndex
from ppkit.pipeline import build_index, load_index

FIX = Path(__file__).parent / "fixtures"
needs_qdrant = pytest.mark.skipif(importlib.util.find_spec("qdrant_client") is None, reason="no qdrant-client")
STORES = ["faiss", pytest.param("qdrant", marks=needs_qdrant)]
MODES = ("dense", "bm25", "hybrid")


@pytest.fixture(autouse=True)
def private_key(monkeypatch, tmp_path):
    monkeypatch.setenv("PPKIT_CONFIG_DIR", str(tmp_path / "config"))  # this test's own index stamp key


@pytest.fixture
def three(tmp_path):
    """Copies of acme, globex and initech (tests/fixtures)."""
    d = tmp_path / "docs"
    d.mkdir()
    out = []
    for name in ("acme", "globex", "initech"):
        (d / f"{name}.md").write_text((FIX / f"{name}.md").read_text(encoding="utf-8"), encoding="utf-8")
        out.append(d / f"{name}.md")
    return out


def _build(paths, folder, **options):
    return build_index(paths, folder, embedder=ppkit.HashEmbedder(), progress=False, **options)


def _files(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize("store", STORES)
def test_remove_one_of_three_leaves_nothing_of_it(three, tmp_path, store):
    folder = tmp_path / "ix"
    before = _build(three, folder, store=store)
    assert {r["doc"]: r["n_chunks"] for r in before.manifest["documents"]} == {"acme": 6, "globex": 4, "initech": 2}
    question = "Globex doomsday devices and hammocks"
    for mode in MODES:
        assert before.retrieve(question, k=5, retrieval=mode).sections[0].doc == "globex", mode
    after = ppkit.remove_documents(folder, ["globex"])
    for index in (after, load_index(folder)):  # in memory and as saved
        assert index.docs == ["acme", "initech"] and index.manifest["store"]["name"] == store
        assert [c.chunk_id for c in index.chunks] == list(range(8)) and {c.doc for c in index.chunks} == {"acme", "initech"}
        assert len(index.store) == len(index.lexical) == 8
        # the kept chunks and their vectors are the old ones, renumbered (initech's were 10-11, now 6-7)
        old = [c for c in before.chunks if c.doc != "globex"]
        assert [c.text for c in index.chunks] == [c.text for c in old]
        assert np.allclose(index.store.vectors(np.arange(8)), before.store.vectors(np.array([c.chunk_id for c in old])))
        assert index.manifest["build"] == {**index.manifest["build"], "removed": ["globex"], "chunks_removed": 4,
                                           "chunks_embedded": 0, "chunks_reused": 8}
    files = _files(folder)
    assert "trees/globex.json" not in files and "rendered/globex.json" not in files
    assert "trees/initech.json" in files and "rendered/initech.json" in files
    assert set(json.loads((folder / "noise.json").read_text())) == {"acme", "initech"}
    assert set(json.loads((folder / "sections.json").read_text())["items"]) == {"acme", "initech"}
    kept_paths = {breadcrumb_path(c.breadcrumb) for c in after.chunks}
    assert set(json.loads((folder / "paths.json").read_text())) == kept_paths
    # retrieval in every mode: no section of globex, though the question is about it
    for mode in MODES:
        assert all(s.doc != "globex" for s in load_index(folder).retrieve(question, k=5, retrieval=mode).sections), mode
    assert load_index(folder).retrieve("staplers", k=1, retrieval="bm25").sections[0].doc == "initech"


def test_bm25_no_longer_matches_its_terms(three, tmp_path):
    folder = tmp_path / "ix"
    before = _build(three, folder)
    hammock = before.lexical.search("hammock", 10)[0]
    assert {before.chunk(i).doc for i in hammock} == {"globex"}
    after = ppkit.remove_documents(folder, ["globex"])
    assert after.lexical.search("hammock", 10)[0].tolist() == []
    assert load_index(folder).lexical.search("hammock doomsday", 10)[0].tolist() == []


@needs_qdrant
def test_qdrant_sparse_vectors_and_payloads_go_too(three, tmp_path):
    folder = tmp_path / "ix"
    _build(three, folder, store="qdrant")
    after = ppkit.remove_documents(folder, ["globex"])
    assert after.store.search_sparse("hammock", 10)[0].tolist() == []
    assert after.store.search(after.embedder.embed_query("hammock"), 20, where={"globex": None})[0].tolist() == []
    payloads = (folder / "qdrant" / "payloads.jsonl").read_text().splitlines()
    assert len(payloads) == 8 and all(json.loads(p)["doc"] != "globex" for p in payloads)


@needs_qdrant
def test_on_a_qdrant_server_the_new_collection_replaces_the_old(three, tmp_path, monkeypatch):
    from qdrant_client import models

    from ppkit.indexing.stores import qdrant as qdrant_store
    from test_qdrant_store import _ServerStandIn, _collections

    server = _ServerStandIn()
    monkeypatch.setattr(qdrant_store, "_qdrant", lambda: (server.connect, models))
    url = {"url": "http://127.0.0.1:9"}  # never contacted: the stand-in answers
    folder = tmp_path / "ix"
    old = _build(three, folder, store="qdrant", connection=url).manifest["store"]["collection"]
    after = load_index(folder, connection=url).remove(["globex"])
    new = after.manifest["store"]["collection"]
    assert new != old and _collections(server) == [new]
    assert len(load_index(folder, connection=url).store) == 8


def test_unknown_name_is_one_line_that_lists_the_names_and_changes_nothing(three, tmp_path):
    folder = tmp_path / "ix"
    _build(three, folder)
    manifest = (folder / "manifest.json").read_bytes()
    with pytest.raises(NotFound) as e:
        ppkit.remove_documents(folder, ["globex", "hooli"])
    assert str(e.value) == (f"no document 'hooli' in the index at {folder} (it has: acme, globex, initech); "
                            "nothing was removed")
    assert (folder / "manifest.json").read_bytes() == manifest


def test_names_must_be_a_list(three, tmp_path):
    folder = tmp_path / "ix"
    _build(three, folder)
    with pytest.raises(InvalidInput, match=r"a list of document names, not a string: .*\['globex'\]"):
        ppkit.remove_documents(folder, "globex")
    with pytest.raises(InvalidInput, match="no documents to remove"):
        ppkit.remove_documents(folder, [])
    with pytest.raises(MissingFile, match="no index at"):
        ppkit.remove_documents(tmp_path / "none", ["globex"])
    assert not list(tmp_path.glob(".none*"))  # no lock file left beside a folder that is not there
    assert load_index(folder).docs == ["acme", "globex", "initech"]


def test_names_match_case_insensitively_and_repeats_count_once(three, tmp_path):
    folder = tmp_path / "ix"
    _build(three, folder)
    assert ppkit.remove_documents(folder, ["GLOBEX", "globex"]).docs == ["acme", "initech"]


def test_remove_then_add_back_embeds_only_that_document(three, tmp_path):
    folder = tmp_path / "ix"
    _build(three, folder)
    ppkit.remove_documents(folder, ["globex"])
    back = _build([three[1]], folder)
    assert back.docs == ["acme", "initech", "globex"]
    assert (back.manifest["build"]["chunks_embedded"], back.manifest["build"]["chunks_reused"]) == (4, 8)
    assert {s.doc for s in back.retrieve("Globex hammocks", k=1, retrieval="bm25").sections} == {"globex"}


def test_removing_the_last_document_leaves_a_valid_empty_index(three, tmp_path):
    folder = tmp_path / "ix"
    _build(three[:1], folder)
    empty = ppkit.remove_documents(folder, ["acme"])
    assert empty.docs == [] and empty.chunks == [] and _files(folder) == [
        "bm25/chunk_ids.npy", "bm25/lexical.json", "chunks.jsonl", "manifest.json", "noise.json", "paths.json",
        "paths.npy", "sections.json", "vectors.faiss"]
    assert list(load_index(folder).retrieve("cash", k=3).sections) == []
    with pytest.raises(NotFound, match=r"\(it has: no documents\)"):
        ppkit.remove_documents(folder, ["acme"])
    assert _build(three[:1], folder).docs == ["acme"]


def test_an_index_written_elsewhere_is_not_updated(three, tmp_path, monkeypatch):
    folder = tmp_path / "ix"
    _build(three, folder)
    monkeypatch.setenv("PPKIT_CONFIG_DIR", str(tmp_path / "another-account"))
    with pytest.raises(UntrustedIndex, match="not updated in place"):
        ppkit.remove_documents(folder, ["globex"])


def test_cli_remove(three, tmp_path, capsys):
    folder = tmp_path / "ix"
    _build(three, folder)
    assert main(["remove", "initech", "globex", "--index", str(folder)]) == 0
    assert capsys.readouterr().out == (f"removed initech, globex (6 chunks) from {folder}; "
                                       "1 documents, 6 chunks left\n")
    assert main(["remove", "globex", "--index", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err == (f"ppkit remove: error: no document 'globex' in the index at {folder} (it has: acme); "
                   "nothing was removed\n")
    with pytest.raises(SystemExit):
        main(["remove", "--index", str(folder)])  # no name: argparse's usage error (status 2)
    assert "the following arguments are required: NAME" in capsys.readouterr().err


def test_the_other_documents_sources_are_not_read(three, tmp_path):
    """A removal carries the kept documents over as indexed: a kept source that is gone does not stop it
    (and is still reported when a pointer needs it)."""
    folder = tmp_path / "ix"
    _build(three, folder)
    three[0].unlink()  # acme's source
    after = ppkit.remove_documents(folder, ["globex"])
    assert after.docs == ["acme", "initech"] and _files(folder).count("rendered/acme.json") == 1
    with pytest.raises(StaleIndexError, match="acme: the indexed source .* is gone"):
        load_index(folder).lines("acme")
