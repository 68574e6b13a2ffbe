"""ppkit.indexing.index: folder contents, round trip, incremental builds, stale sources, bad folders."""

import json

import numpy as np
import pytest

import ppkit
from ppkit.core.errors import InvalidInput
from ppkit.core.ids import breadcrumb_path
from ppkit.indexing.embed import EmbedderMismatch, LocalEmbedder, get_embedder, native_bf16
from ppkit.indexing.index import IndexFormatError, StaleIndexError
from ppkit.retrieval.rerank import StructuralReranker
from ppkit.pipeline import build_index, load_index

CFG = ppkit.Config(online=False)


def test_folder_holds_plain_files_only(hash_index):
    names = sorted(p.relative_to(hash_index.folder).as_posix() for p in hash_index.folder.rglob("*") if p.is_file())
    assert names == ["bm25/chunk_ids.npy", "bm25/data.csc.index.npy", "bm25/indices.csc.index.npy",
                     "bm25/indptr.csc.index.npy", "bm25/lexical.json", "bm25/params.index.json",
                     "bm25/vocab.index.json", "chunks.jsonl", "manifest.json", "noise.json", "paths.json",
                     "paths.npy", "rendered/acme.json", "rendered/globex.json", "sections.json", "trees/acme.json", "trees/globex.json", "vectors.faiss"]
    for p in hash_index.folder.rglob("*"):
        if p.is_file():
            assert not p.read_bytes().startswith(b"\x80"), f"{p} looks like a pickle"
    m = json.loads((hash_index.folder / "manifest.json").read_text())
    assert m["format_version"] == 4 and m["embedder"]["dim"] == 256
    assert [d["doc"] for d in m["documents"]] == ["acme", "globex"]
    assert all(len(d["sha256"]) == 64 for d in m["documents"])


def test_noise_decisions_stored(hash_index):
    noise = json.loads((hash_index.folder / "noise.json").read_text())
    assert {(d["title"], d["category"], d["filter"]) for d in noise["acme"]} == {
        ("TABLE OF CONTENTS", "toc", "rule"), ("Acknowledgments", "acknowledgments", "rule")}
    assert {c.node_id for c in hash_index.chunks if c.doc == "acme"}.isdisjoint({"0002", "0012"})


def test_round_trip(hash_index):
    again = load_index(hash_index.folder, embedder=ppkit.HashEmbedder())
    assert again.chunks == hash_index.chunks
    assert again.trees == hash_index.trees
    assert again.noise == hash_index.noise
    ids = np.arange(len(again.chunks))
    assert np.allclose(again.store.vectors(ids), hash_index.store.vectors(ids))


def test_load_uses_embedder_named_in_manifest(hash_index):
    assert isinstance(load_index(hash_index.folder).embedder, ppkit.HashEmbedder)


def test_incremental_skips_unchanged_documents(hash_index, fixture_docs, tmp_path):
    acme, globex = fixture_docs
    globex.write_text(globex.read_text() + "\n## Outlook\n\nGlobex expects hammock sales to double.\n")
    again = build_index([acme, globex], hash_index.folder, embedder=ppkit.HashEmbedder(), config=CFG, progress=False)
    n_acme = sum(1 for c in hash_index.chunks if c.doc == "acme")
    assert again.manifest["build"]["chunks_reused"] == n_acme
    assert again.manifest["build"]["chunks_embedded"] == sum(1 for c in again.chunks if c.doc == "globex")
    assert any("hammock sales to double" in c.text for c in again.chunks)
    # adding a document keeps the others
    third = tmp_path / "docs" / "initech.md"
    third.write_text("# Initech\n\nTPS reports are filed weekly.\n")
    more = build_index([third], hash_index.folder, embedder=ppkit.HashEmbedder(), config=CFG, progress=False)
    assert more.docs == ["acme", "globex", "initech"]
    assert more.manifest["build"]["chunks_embedded"] == 1


def test_changed_source_is_detected(hash_index, fixture_docs):
    fixture_docs[0].write_text(fixture_docs[0].read_text().replace("$430 million", "$999 million"))
    idx = load_index(hash_index.folder)
    with pytest.raises(StaleIndexError, match="changed since it was indexed.*Re-index"):
        idx.retrieve("free cash flow of Acme", k=2)


def test_missing_source_is_detected(hash_index, fixture_docs):
    fixture_docs[1].unlink()
    with pytest.raises(StaleIndexError, match="is gone"):
        load_index(hash_index.folder).lines("globex")


def test_other_embedder_is_refused(hash_index):
    with pytest.raises(EmbedderMismatch, match="cannot be queried"):
        load_index(hash_index.folder, embedder=ppkit.HashEmbedder(dim=128))


def test_corrupt_folders_give_clear_errors(hash_index):
    folder = hash_index.folder
    (folder / "vectors.faiss").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="vectors.faiss does not match its checksum"):
        load_index(folder)
    (folder / "manifest.json").write_text("{not json")
    with pytest.raises(IndexFormatError, match="corrupt"):
        load_index(folder)
    with pytest.raises(FileNotFoundError, match="ppkit index"):
        load_index(folder / "nothing-here")


def test_interrupted_build_leaves_previous_index(hash_index, fixture_docs):
    class Boom(ppkit.HashEmbedder):
        def embed_documents(self, texts, *, progress=False):
            raise RuntimeError("power cut")

    fixture_docs[1].write_text(fixture_docs[1].read_text() + "\nMore text.\n")
    with pytest.raises(RuntimeError, match="power cut"):
        build_index(fixture_docs, hash_index.folder, embedder=Boom(), config=CFG, progress=False)
    assert load_index(hash_index.folder).chunks == hash_index.chunks


def test_duplicate_names_refused(fixture_docs, tmp_path):
    with pytest.raises(ValueError, match="share the name"):
        build_index([fixture_docs[0], fixture_docs[0]], tmp_path / "i", embedder=ppkit.HashEmbedder(), progress=False)


def test_refuses_to_overwrite_a_foreign_folder(fixture_docs, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "thesis.tex").write_text("precious")
    with pytest.raises(IndexFormatError, match="not a ppkit index"):
        build_index(fixture_docs, folder, embedder=ppkit.HashEmbedder(), config=CFG, progress=False)
    assert (folder / "thesis.tex").read_text() == "precious"


def test_a_foreign_folder_is_refused_before_any_pdf_is_extracted(tmp_path):
    """Was: a 20-minute shelf extraction ran, then the folder was refused. A PDF that cannot be read shows
    which came first: the folder's refusal, not the PDF's error."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "build.log").write_text("mine")
    bad = tmp_path / "report.pdf"
    bad.write_bytes(b"%PDF-1.7 not really a PDF")
    with pytest.raises(IndexFormatError, match="not a ppkit index"):
        build_index([bad], folder, embedder=ppkit.HashEmbedder(), config=CFG, progress=False)
    assert (folder / "build.log").read_text() == "mine"


def test_failure_while_saving_leaves_previous_index(hash_index, fixture_docs, monkeypatch):
    from ppkit.indexing.stores import FaissStore

    def broken_save(self, folder):
        raise OSError("disk full")

    fixture_docs[1].write_text(fixture_docs[1].read_text() + "\nMore text.\n")
    monkeypatch.setattr(FaissStore, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        build_index(fixture_docs, hash_index.folder, embedder=ppkit.HashEmbedder(), config=CFG, progress=False)
    monkeypatch.undo()
    assert load_index(hash_index.folder).chunks == hash_index.chunks


def test_crash_between_the_renames_is_recovered(hash_index):
    import os

    folder = hash_index.folder
    os.replace(folder, folder.parent / f".{folder.name}.old-4242")  # as if save() died right after its first rename
    assert load_index(folder).chunks == hash_index.chunks  # a reader reads the complete copy where it lies
    assert list(folder.parent.glob(f".{folder.name}.old-*"))  # and writes nothing
    from ppkit.indexing.folder import recover

    recover(folder)  # the next writer puts it back
    assert load_index(folder).chunks == hash_index.chunks
    assert not list(folder.parent.glob(f".{folder.name}.old-*"))


def test_stale_message_names_the_index_folder(hash_index, fixture_docs):
    fixture_docs[0].write_text(fixture_docs[0].read_text() + "\nchanged\n")
    with pytest.raises(StaleIndexError, match=f"--index {hash_index.folder}"):
        load_index(hash_index.folder).lines("acme")


def test_stored_path_vectors_are_what_the_query_path_computes(hash_index):
    again = load_index(hash_index.folder)
    paths = sorted({breadcrumb_path(again.trees[c.doc][c.node_id].breadcrumb) for c in again.chunks})
    assert sorted(again.path_vectors) == paths
    assert "ITEM 7. MANAGEMENT'S DISCUSSION AND ANALYSIS > Liquidity and Capital Resources" in again.path_vectors
    fresh = ppkit.HashEmbedder().embed_documents(paths)
    assert np.array_equal(np.stack([again.path_vectors[p] for p in paths]), fresh)
    # the index's re-ranker starts from them: retrieving embeds no breadcrumb
    reranker = again.structural_reranker
    calls = []
    embed = again.embedder.embed_documents
    again.embedder.embed_documents = lambda texts, **kw: calls.append(list(texts)) or embed(texts, **kw)
    again.retrieve("free cash flow of Acme", k=2)
    assert [t for call in calls for t in call if t in paths] == [] and set(reranker._path_vecs) == set(paths)


def test_path_vectors_are_not_used_with_another_embedder(hash_index):
    hash_index.embedder = ppkit.HashEmbedder(dim=128)
    assert hash_index.path_vectors == {}


def test_reranker_embeds_only_paths_it_was_not_given():
    class Counting(ppkit.HashEmbedder):
        seen: list = []

        def embed_documents(self, texts, *, progress=False):
            self.seen.extend(texts)
            return super().embed_documents(texts)

    emb = Counting()
    r = StructuralReranker(emb, path_vectors={"A > B": emb.embed_query("A > B")})
    emb.seen.clear()
    assert r._paths(["A > B", "A > C", "A > C"]).shape == (3, 256)
    assert emb.seen == ["A > C"]


def test_index_without_path_vectors_is_refused_with_a_rebuild_hint(hash_index):
    folder = hash_index.folder
    m = json.loads((folder / "manifest.json").read_text())
    del m["files"]["paths.npy"]
    (folder / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(IndexFormatError, match="paths.npy is not listed.*--fresh"):
        load_index(folder)


def test_old_format_is_refused_with_a_rebuild_hint(hash_index):
    folder = hash_index.folder
    m = json.loads((folder / "manifest.json").read_text())
    m["format_version"] = 2  # before paths.json / paths.npy
    (folder / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(IndexFormatError, match="index format 2, this ppkit reads 4; rebuild it.*--fresh"):
        load_index(folder)


def test_format_3_is_read_and_upgraded_in_place_without_embedding_again(hash_index, fixture_docs):
    import shutil

    import ppkit
    from ppkit.indexing.folder import stamp

    folder = hash_index.folder
    q = "What drove revenue change in FY2022?"
    want = [(s.section_id, s.text) for s in hash_index.retrieve(q, k=3).sections]
    # the folder as format 3 wrote it: no rendered/, format 3, stamped by ppkit on this account
    shutil.rmtree(folder / "rendered")
    m = json.loads((folder / "manifest.json").read_text())
    m["files"] = {k: v for k, v in m["files"].items() if not k.startswith("rendered/")}
    m["format_version"] = 3
    m.pop("stamp")
    m["stamp"] = stamp(m)
    (folder / "manifest.json").write_text(json.dumps(m))
    old = load_index(folder)
    assert old.manifest["format_version"] == 3
    assert [(s.section_id, s.text) for s in old.retrieve(q, k=3).sections] == want  # rendered per query

    class Counting(ppkit.HashEmbedder):
        calls = 0

        def embed_documents(self, texts, **kw):
            Counting.calls += len(texts)
            return super().embed_documents(texts, **kw)

    again = ppkit.build_index(fixture_docs, folder, embedder=Counting(), config=ppkit.Config(online=False),
                              progress=False)
    assert Counting.calls == 0  # nothing embedded again
    assert again.manifest["format_version"] == 4 and (folder / "rendered").is_dir()
    assert [(s.section_id, s.text) for s in load_index(folder).retrieve(q, k=3).sections] == want


def test_local_embedder_precision_is_in_its_name(tmp_path):
    assert LocalEmbedder(precision="fp32").name == "local:all-MiniLM-L6-v2"
    assert LocalEmbedder(precision="bf16").name == "local:all-MiniLM-L6-v2+bf16"
    assert get_embedder("local-bf16").precision == "bf16" and get_embedder("local-fp32").precision == "fp32"
    assert get_embedder("local").precision == ("bf16" if native_bf16() else "fp32")
    with pytest.raises(InvalidInput, match="precision='int4'"):
        LocalEmbedder(precision="int4")
    cpu = tmp_path / "cpuinfo"
    cpu.write_text("processor\t: 0\nflags\t\t: fpu sse avx2 avx512f amx_bf16 amx_tile\n")
    assert native_bf16(str(cpu))
    cpu.write_text("processor\t: 0\nflags\t\t: fpu sse avx2 avx512f avx512_vnni\n")
    assert not native_bf16(str(cpu))
    assert not native_bf16(str(tmp_path / "missing"))


def test_index_built_at_one_precision_refuses_the_other(hash_index, fixture_docs, tmp_path):
    # the manifest as a bf16 build writes it: loading it with an fp32 embedder is an error that says so
    folder = hash_index.folder
    m = json.loads((folder / "manifest.json").read_text())
    m["embedder"] = {"name": "local:all-MiniLM-L6-v2+bf16", "dim": 384, "kind": "local",
                     "kwargs": {"max_seq_length": 256, "precision": "bf16"}}
    idx = ppkit.pipeline.Index(folder, m, hash_index.trees, hash_index.noise, hash_index.chunks, hash_index.store,
                               LocalEmbedder(precision="bf16"))
    idx.check_embedder(get_embedder("local-bf16"))
    with pytest.raises(EmbedderMismatch, match=r"built with 'local:all-MiniLM-L6-v2\+bf16'.*"
                                               r"cannot be queried with 'local:all-MiniLM-L6-v2'"):
        idx.check_embedder(get_embedder("local-fp32"))


@pytest.mark.model
def test_bf16_vectors_are_close_to_fp32():
    texts = ["AMD > Item 8 > Consolidated Balance Sheets\nTotal current assets 9,076",
             "What is AMD's quick ratio for FY2022?", "Boeing > Risk Factors > Supply chain disruptions"]
    a = LocalEmbedder(precision="fp32").embed_documents(texts)
    b = LocalEmbedder(precision="bf16").embed_documents(texts)
    cos = (a * b).sum(1)
    assert cos.min() > 0.999 and not np.array_equal(a, b)  # close, and really another arithmetic


def test_rendered_lines_are_kept_and_bounded(hash_index, monkeypatch):
    """A section's rendered text is what core.markup.render gives; it is rendered once, and the cache
    keeps at most RENDERED_CACHE ranges (the oldest go first)."""
    from ppkit.core.markup import render

    ix = load_index(hash_index.folder)
    doc = next(iter(ix.trees))
    a, b = next(iter(ix.units(doc).values()))
    first = ix.rendered_lines(doc, a, b)
    assert first == render(ix.lines(doc)[a - 1 : b], a)
    assert ix.rendered_lines(doc, a, b) is first
    monkeypatch.setattr(type(ix), "RENDERED_CACHE", 2)
    ix.rendered_lines(doc, 1, 2)
    ix.rendered_lines(doc, 1, 3)
    assert list(ix._rendered) == [(doc, 1, 2), (doc, 1, 3)]
