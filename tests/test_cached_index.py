"""ppkit.cached_index takes the index `ppkit index` built from the same documents instead of building it again.

README step 1 indexes the four 10-Ks with ``ppkit index``; step 3 opens ``ppkit.reference_index("10k")``,
the cache's index of the same files. A build that is what the cache would build (the same documents,
in order, under their file names, all indexed by that build, default noise filter and store) notes its
folder under the cache key; the cache copies it in, unless it changed since.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import ppkit
from ppkit.indexing import build as _build
from ppkit.indexing.embed import HashEmbedder

FIX = Path(__file__).parent / "fixtures"
PAIR = [FIX / "acme.md", FIX / "globex.md"]
CFG = ppkit.Config(online=False)
QUESTION = "What did Acme say about its free cash flow?"


@pytest.fixture(autouse=True)
def private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("PPKIT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def builds(monkeypatch):
    """The number of indexes built from here on (the calls of the indexing layer's build)."""
    calls = []
    real = _build.build_index

    def counted(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(_build, "build_index", counted)
    return calls


def _cached(paths=PAIR):
    return ppkit.cached_index(paths, "pair", embedder=HashEmbedder(), config=CFG, progress=False)


def _sections(index):
    return [s.section_id for s in index.retrieve(QUESTION, k=3).sections]


def test_the_cache_copies_the_index_built_from_the_same_documents(tmp_path, builds):
    mine = ppkit.build_index(PAIR, tmp_path / "mine", embedder=HashEmbedder(), config=CFG, progress=False)
    builds.clear()
    cached = _cached()
    assert builds == []  # copied, not built
    assert cached.folder.parent.name == "indexes" and cached.folder.name.startswith("pair-")
    assert cached.manifest["build"] == mine.manifest["build"] and cached.docs == ["acme", "globex"]
    assert _sections(cached) == _sections(ppkit.load_index(tmp_path / "mine", embedder=HashEmbedder(), config=CFG))
    again = _cached()
    assert builds == [] and again.folder == cached.folder  # from the cache's own folder now
    assert (tmp_path / "mine" / "manifest.json").is_file()  # the built index is left where it was


def test_through_the_command_line_as_in_the_readme(tmp_path, builds, monkeypatch, capsys):
    from ppkit.cli import main

    monkeypatch.setenv("PPKIT_OFFLINE", "1")
    assert main(["index", *map(str, PAIR), "--index", str(tmp_path / "cli"), "--embedder", "hash", "--quiet"]) == 0
    builds.clear()
    cached = ppkit.cached_index(PAIR, "pair", embedder=ppkit.get_embedder("hash"), config=CFG, progress=False)
    assert builds == [] and cached.docs == ["acme", "globex"]


def test_an_index_that_is_not_what_the_cache_would_build_is_not_taken(tmp_path, builds):
    # a different order or subset is another key
    ppkit.build_index(PAIR[::-1], tmp_path / "reversed", embedder=HashEmbedder(), config=CFG, progress=False)
    # documents under other names
    ppkit.build_index(PAIR, tmp_path / "named", embedder=HashEmbedder(), config=CFG, progress=False,
                      names=["Acme", "Globex"])
    # built in two runs: the first document's chunks were kept from an earlier build
    ppkit.build_index(PAIR[:1], tmp_path / "two-runs", embedder=HashEmbedder(), config=CFG, progress=False)
    ppkit.build_index(PAIR, tmp_path / "two-runs", embedder=HashEmbedder(), config=CFG, progress=False)
    builds.clear()
    assert _cached().manifest["build"]["chunks_reused"] == 0 and len(builds) == 1  # built here


def test_an_index_changed_since_its_build_is_not_taken(tmp_path, builds):
    ppkit.build_index(PAIR, tmp_path / "mine", embedder=HashEmbedder(), config=CFG, progress=False)
    other = FIX / "initech.md"
    ppkit.build_index([*PAIR, other], tmp_path / "mine", embedder=HashEmbedder(), config=CFG, progress=False)
    builds.clear()
    cached = _cached()
    assert len(builds) == 1 and cached.docs == ["acme", "globex"]  # built: the noted folder holds three now
