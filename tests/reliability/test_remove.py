"""Removing a document is as safe as adding one: kill -9 at every step of a removal (the
``PPKIT_TEST_CRASH_AT`` hook, ppkit.indexing.remove.REMOVE_CRASH_STEPS), then the next reader and
the next writer; readers during removals and re-adds see one whole index, old or new.

The removal runs in a forked child (the modules are already imported, so a crash costs milliseconds,
not an interpreter start); the child kills itself with SIGKILL at the step, as a real crash would."""

import os
import signal
import time
import traceback

import pytest

import ppkit
from ppkit.indexing.remove import REMOVE_CRASH_STEPS
from ppkit.pipeline import load_index

from .conftest import indexed_docs, leftovers, slow_vector_loads

OLD, NEW = ["acme", "globex"], ["acme"]  # globex is removed
# what a reader sees after a crash at each step, and what the next writer (adding initech) leaves:
# after "tmp-complete" the complete new copy is recovered (it has the higher generation)
SEEN = {"remove-pruned": OLD, "tmp-partial": OLD, "tmp-complete": OLD, "old-moved": NEW, "new-moved": NEW,
        "old-unmarked": NEW, "old-half-deleted": NEW, "remove-committed": NEW}
AFTER = {"tmp-complete": ["acme", "initech"]}


def _fork(fn, **env) -> int:
    """Run ``fn`` in a forked child (with ``env`` set), which never returns into pytest: exit status 0 when
    ``fn`` returned, 1 when it raised (its traceback on stderr). Returns the child's pid."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.environ.update(env)
            fn()
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    return pid


def _wait(pid: int, timeout: float = 60) -> tuple[int, int]:
    """(signal that ended the child or 0, its exit status), within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return (os.WTERMSIG(status), 0) if os.WIFSIGNALED(status) else (0, os.WEXITSTATUS(status))
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail(f"a child process did not end in {timeout} s")
        time.sleep(0.01)


def _killed_at(step: str, fn) -> int:
    """The signal that ended ``fn`` run with ``PPKIT_TEST_CRASH_AT=step`` (0: none)."""
    return _wait(_fork(fn, PPKIT_TEST_CRASH_AT=step))[0]


def test_every_step_is_listed():
    assert tuple(SEEN) == REMOVE_CRASH_STEPS


@pytest.mark.parametrize("step", REMOVE_CRASH_STEPS)
def test_kill_9_at_each_step_of_a_removal_loses_nothing(step, tmp_path, docs):
    folder = tmp_path / "ix"
    ppkit.build_index([docs["acme"], docs["globex"]], folder, embedder=ppkit.HashEmbedder(), progress=False)
    assert _killed_at(step, lambda: ppkit.remove_documents(folder, ["globex"])) == signal.SIGKILL
    before = sorted(os.listdir(tmp_path))
    seen = load_index(folder)  # the next reader: a whole index, old or new
    assert sorted(seen.docs) == SEEN[step] and len(seen.store) == len(seen.chunks) == len(seen.lexical)
    assert sorted(os.listdir(tmp_path)) == before  # ... and it wrote nothing
    after = ppkit.build_index([docs["initech"]], folder, embedder=ppkit.HashEmbedder(), progress=False)
    assert indexed_docs(folder) == AFTER.get(step, sorted(SEEN[step] + ["initech"])) == sorted(after.docs)
    assert leftovers(folder) == [] and len(after.store) == len(after.chunks) == len(after.lexical)


def test_a_removal_after_a_crashed_removal_recovers_first(tmp_path, docs):
    folder = tmp_path / "ix"
    ppkit.build_index([docs["acme"], docs["globex"], docs["initech"]], folder, embedder=ppkit.HashEmbedder(),
                      progress=False)
    assert _killed_at("old-moved", lambda: ppkit.remove_documents(folder, ["globex"])) == signal.SIGKILL
    assert not folder.exists()  # the crash came between the two renames
    assert ppkit.remove_documents(folder, ["initech"]).docs == ["acme"]
    assert indexed_docs(folder) == ["acme"] and leftovers(folder) == []


def test_readers_during_removals_and_re_adds_see_one_whole_index(tmp_path, docs, monkeypatch):
    """A writer process removes globex and adds it back, three times; a reader loads meanwhile (its vectors
    read 30 ms late, so that a swap during a load is likely): every load is the index with or without
    globex, whole, and a question about globex finds it exactly when the index has it. (The writer is a
    process, not a thread: CPython 3.11's ast module, which numpy's .npy reader uses, is not thread-safe.)"""
    slow_vector_loads(monkeypatch, 0.03)
    folder = tmp_path / "ix"
    ppkit.build_index([docs["acme"], docs["globex"], docs["initech"]], folder, embedder=ppkit.HashEmbedder(),
                      progress=False)

    def writer():
        for _ in range(3):
            ppkit.remove_documents(folder, ["globex"])
            ppkit.build_index([docs["globex"]], folder, embedder=ppkit.HashEmbedder(), progress=False)

    pid = _fork(writer)
    seen, loads, t0, ended = set(), 0, time.monotonic(), None
    try:
        while ended is None and time.monotonic() - t0 < 30:  # bounded in time
            idx = load_index(folder)
            assert len(idx.store) == len(idx.chunks) == len(idx.lexical)
            hit = idx.retrieve("Globex hammocks", k=1, retrieval="bm25").sections
            assert ("globex" in idx.docs) == bool(hit) and all(s.doc == "globex" for s in hit)
            seen.add(tuple(sorted(idx.docs)))
            loads += 1
            done, status = os.waitpid(pid, os.WNOHANG)
            ended = status if done else None
    finally:
        if ended is None:
            ended = _wait(pid)
            ended = 0 if ended == (0, 0) else ended
    assert ended == 0, "the writer failed (its traceback is in the captured stderr)"
    assert seen <= {("acme", "globex", "initech"), ("acme", "initech")} and loads >= 5
    assert indexed_docs(folder) == ["acme", "globex", "initech"] and leftovers(folder) == []
