"""Cases 3, 13 and the "nothing lost" promise: kill -9 a real ``ppkit index`` at every rename and
delete step of a save (the ``PPKIT_TEST_CRASH_AT`` test hook of ppkit.indexing.folder), a crash
twice in a row, a disk that fills up, Ctrl-C; then the next reader and the next writer."""

import json
import os
import shutil

import pytest

import ppkit
from ppkit.indexing.folder import CRASH_STEPS
from ppkit.indexing.index import IndexWriteError
from ppkit.pipeline import load_index

from .conftest import index_cli, indexed_docs, leftovers

# what a reader sees after a crash at each step while adding globex to an index of acme,
# and what the next writer (adding initech) leaves: a complete temporary copy is committed
SEEN = {"tmp-partial": ["acme"], "tmp-complete": ["acme"], "old-moved": ["acme", "globex"],
        "new-moved": ["acme", "globex"], "old-unmarked": ["acme", "globex"], "old-half-deleted": ["acme", "globex"]}
AFTER = {"tmp-partial": ["acme", "initech"], "tmp-complete": ["acme", "globex", "initech"]}


def test_every_step_is_listed():
    assert tuple(SEEN) == CRASH_STEPS


@pytest.mark.parametrize("step", CRASH_STEPS)
def test_kill_9_at_each_step_loses_nothing(step, tmp_path, docs):
    folder = tmp_path / "ix"
    assert index_cli(folder, docs["acme"]).returncode == 0
    crashed = index_cli(folder, docs["globex"], env={"PPKIT_TEST_CRASH_AT": step})
    assert crashed.returncode == -9, crashed.stderr
    before = sorted(os.listdir(tmp_path))
    seen = load_index(folder)  # the next reader: a whole index, old or new
    assert sorted(seen.docs) == SEEN[step] and len(seen.store) == len(seen.chunks)
    assert sorted(os.listdir(tmp_path)) == before  # ... and it wrote nothing
    after = index_cli(folder, docs["initech"])  # the next writer recovers and cleans up
    assert after.returncode == 0, after.stderr
    assert indexed_docs(folder) == AFTER.get(step, sorted(SEEN[step] + ["initech"]))
    assert leftovers(folder) == []
    assert load_index(folder).lines("initech")[0] == "# INITECH"


def test_two_crashes_in_a_row_recover_the_complete_copy_not_the_newest(tmp_path, docs):
    """Case 3: a half-deleted copy (newer) and a complete one (older), no folder: by completeness."""
    folder = tmp_path / "ix"
    assert index_cli(folder, docs["acme"], docs["globex"]).returncode == 0
    good = tmp_path / ".ix.old-111"
    shutil.copytree(folder, tmp_path / ".ix.old-222")
    os.replace(folder, good)
    half = tmp_path / ".ix.old-222"
    for p in sorted(half.rglob("*.json"))[:3]:  # deleting stopped halfway (the manifest still there)
        p.unlink()
    os.utime(good, (1_000_000, 1_000_000))  # the good copy is the older one
    assert sorted(load_index(folder).docs) == ["acme", "globex"]
    assert index_cli(folder, docs["initech"]).returncode == 0
    assert indexed_docs(folder) == ["acme", "globex", "initech"]
    assert leftovers(folder) == []


def test_disk_full_while_saving_keeps_the_previous_index(tmp_path, docs, monkeypatch):
    from ppkit.indexing.stores import FaissStore

    folder = tmp_path / "ix"
    ppkit.build_index([docs["acme"]], folder, embedder=ppkit.HashEmbedder(), progress=False)

    def full(self, where):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(FaissStore, "save", full)
    with pytest.raises(IndexWriteError, match=r"No space left on device.*previous index there is unchanged"):
        ppkit.build_index([docs["globex"]], folder, embedder=ppkit.HashEmbedder(), progress=False)
    monkeypatch.undo()
    assert load_index(folder).docs == ["acme"] and leftovers(folder) == []


def test_ctrl_c_while_saving_keeps_the_previous_index(tmp_path, docs, monkeypatch):
    from ppkit.indexing.lexical import LexicalIndex

    folder = tmp_path / "ix"
    ppkit.build_index([docs["acme"]], folder, embedder=ppkit.HashEmbedder(), progress=False)

    def interrupted(self, where):
        raise KeyboardInterrupt

    monkeypatch.setattr(LexicalIndex, "save", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ppkit.build_index([docs["globex"]], folder, embedder=ppkit.HashEmbedder(), progress=False)
    monkeypatch.undo()
    assert load_index(folder).docs == ["acme"] and leftovers(folder) == []


def test_flipped_bytes_in_the_vectors_are_detected(tmp_path, docs):
    """Case 13: 2,000 flipped bytes inside vectors.faiss no longer load silently."""
    folder = tmp_path / "ix"
    assert index_cli(folder, docs["acme"], docs["globex"]).returncode == 0
    data = bytearray((folder / "vectors.faiss").read_bytes())
    for i in range(200, 2200):
        data[i] ^= 0xFF
    (folder / "vectors.faiss").write_bytes(bytes(data))
    from .conftest import run_cli

    r = run_cli("ask", "What is Acme's revenue?", "--index", folder)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        f"ppkit ask: error: {folder}/vectors.faiss does not match its checksum in the manifest (changed or "
        f"damaged): the index at {folder} is damaged; rebuild it with `ppkit index DOCS... --index {folder} --fresh`"]


def test_manifest_records_a_checksum_for_every_file(tmp_path, docs):
    folder = tmp_path / "ix"
    ppkit.build_index([docs["acme"]], folder, embedder=ppkit.HashEmbedder(), progress=False)
    m = json.loads((folder / "manifest.json").read_text())
    on_disk = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert sorted(m["files"]) == [n for n in on_disk if n != "manifest.json"]
    assert m["generation"] == 1 and len(m["stamp"]) == 64
