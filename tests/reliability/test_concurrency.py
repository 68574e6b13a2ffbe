"""Cases 2, 4, 5: two writers at once, readers during a rebuild, readers that never write."""

import os
import subprocess
import sys
import time

import ppkit
from ppkit.pipeline import load_index

from .conftest import ROOT, cli_env, index_cli, indexed_docs, leftovers, run_cli, slow_vector_loads


def _index_proc(folder, doc):
    return subprocess.Popen([sys.executable, "-m", "ppkit.cli", "index", str(doc), "--index", str(folder),
                             "--embedder", "hash", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=cli_env(), cwd=ROOT)


def test_two_writers_at_once_keep_both_documents(tmp_path, docs):
    """Case 2: the second writer waits for the first; neither update is lost."""
    folder = tmp_path / "ix"
    ppkit.build_index([docs["acme"]], folder, embedder=ppkit.HashEmbedder(), progress=False)
    procs = [_index_proc(folder, docs["globex"]), _index_proc(folder, docs["initech"])]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert indexed_docs(folder) == ["acme", "globex", "initech"]
    assert leftovers(folder) == []


def test_readers_during_rebuilds_see_one_whole_index(tmp_path, docs, monkeypatch):
    """Case 5: a reader loop while a writer alternates two different indexes: every load is one of them.

    The reader's disk is made slow (50 ms before the vectors are read) so that a save landing in
    the middle of a load is likely, not a rare accident."""
    slow_vector_loads(monkeypatch, 0.05)
    folder = tmp_path / "ix"
    small, big = [docs["initech"]], [docs["acme"], docs["globex"], docs["umbrella"]]
    ppkit.build_index(small, folder, embedder=ppkit.HashEmbedder(), progress=False)
    script = ("import ppkit, sys\n"
              f"small, big = {[str(p) for p in small]!r}, {[str(p) for p in big]!r}\n"
              "for i in range(10):\n"
              f"    ppkit.build_index(big if i % 2 == 0 else small, {str(folder)!r}, embedder=ppkit.HashEmbedder(),"
              " progress=False, fresh=True)\n")
    writer = subprocess.Popen([sys.executable, "-c", script], env=cli_env(), cwd=ROOT, stderr=subprocess.PIPE, text=True)
    seen, loads, t0 = set(), 0, time.monotonic()
    try:
        for _ in range(400):  # bounded in count and time
            idx = load_index(folder, embedder=ppkit.HashEmbedder())
            assert len(idx.store) == len(idx.chunks) == len(idx.lexical)
            seen.add(tuple(sorted(idx.docs)))
            loads += 1
            if writer.poll() is not None or time.monotonic() - t0 > 40:
                break
    finally:
        writer.wait(timeout=60)
    assert writer.returncode == 0, writer.stderr.read()
    assert seen <= {("initech",), ("acme", "globex", "umbrella")} and loads >= 10


def test_a_reader_never_recovers_or_deletes(tmp_path, docs):
    """Case 4: after a crash between the renames, `ask` reads the complete copy and moves nothing."""
    folder = tmp_path / "ix"
    assert index_cli(folder, docs["acme"]).returncode == 0
    os.replace(folder, tmp_path / ".ix.old-4242")
    before = sorted(os.listdir(tmp_path))
    r = run_cli("ask", "How much cash did Acme have?", "--index", folder, "--k", "1")
    assert r.returncode == 0, r.stderr
    assert "[acme#" in r.stdout
    assert sorted(os.listdir(tmp_path)) == before


def test_concurrent_readers_agree(tmp_path, docs):
    """Locked in: four `ask` processes at once print the same answer as one alone."""
    folder = tmp_path / "ix"
    ppkit.build_index([docs["acme"], docs["globex"]], folder, embedder=ppkit.HashEmbedder(), progress=False)
    args = [sys.executable, "-m", "ppkit.cli", "ask", "What was Acme's net revenue?", "--index", str(folder), "--json"]
    procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(), cwd=ROOT)
             for _ in range(4)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    import json

    texts = {json.loads(o)["text"] for o, _ in outs}
    assert len(texts) == 1 and "5,000" in texts.pop()
