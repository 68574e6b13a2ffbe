"""The index folder on disk: locks, checksums, the commit protocol, recovery, and trust.

What :mod:`ppkit.indexing.index` promises about an index folder ``NAME`` rests on this module:

* **One writer at a time.** :func:`index_lock` (``.NAME.lock`` beside the folder) is held for the
  whole load-modify-save of ``ppkit index``; a second writer waits for it (and says so).
* **Readers see one whole index.** A save writes ``.NAME.tmp-PID`` completely, then swaps it in
  with two renames under ``.NAME.swap.lock`` (exclusive for the renames only); a reader holds
  that lock shared while it reads the files, so it sees the old index or the new one.
* **Completeness, not time.** The manifest lists the sha256 of every other file and is written
  last; a copy is *complete* when its manifest is there and every checksum matches.
  :func:`recover` (run by writers only, under the lock) puts back the complete copy with the
  highest ``generation`` and removes the crash leftovers; readers never write: after a crash
  they read the best complete copy where it lies (:func:`readable_copy`).
* **Nothing else is deleted.** A folder is replaced or removed only when every file in it is
  one ppkit writes into an index (:func:`foreign_files`).
* **Trust.** A manifest written by ppkit carries an HMAC (``stamp``) under a key kept in the
  user's config folder (``$PPKIT_CONFIG_DIR``, else ``~/.config/ppkit``); an index folder
  received from elsewhere is data, and its document ``source`` paths are not read unless the
  user trusts it (:func:`is_stamped`). Where the config folder cannot be written, the key is kept
  in the cache folder instead.

Test hook: ``PPKIT_TEST_CRASH_AT=<step>`` makes the process SIGKILL itself at that step of a save
(:data:`CRASH_STEPS`); only the fault-injection tests in ``tests/reliability`` set it.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import itertools
import json
import os
import re
import secrets
import shutil
import signal
import sys
import threading
from pathlib import Path

from ..core.config import cache_dir, config_dir, crash_step
from ..core.errors import ConfigError, InvalidInput
from ..core.io import sha256_file
from .stores import own_files

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no locking
    fcntl = None  # type: ignore[assignment]

__all__ = ["real_folder", "index_lock", "swap_lock", "file_checksums", "complete_manifest", "foreign_files", "recover",
           "readable_copy", "commit", "remove_index_copy", "stamp", "is_stamped", "crash_point", "CRASH_STEPS",
           "MANIFEST"]

MANIFEST = "manifest.json"
# the steps of a save at which PPKIT_TEST_CRASH_AT can kill the process (in order)
CRASH_STEPS = ("tmp-partial", "tmp-complete", "old-moved", "new-moved", "old-unmarked", "old-half-deleted")
# files ppkit writes into an index folder (anything else means the folder is not only ppkit's)
# (and the files of the registered vector stores, see _own_file)
_OWN_FILES = re.compile(r"^(manifest\.json|chunks\.jsonl|noise\.json|sections\.json|paths\.json|paths\.npy"
                        r"|trees/[^/]+\.json|rendered/[^/]+\.json|bm25/[^/]+)$")


def real_folder(folder: Path | str) -> Path:
    """The folder an ``--index`` path names, with a symbolic link resolved to its target.

    Every save renames the folder and deletes the previous copy: done to a link, that would
    replace the link and delete files *through* it, so writers and readers work on the target.
    A dangling link is refused (it names nothing to read, and writing would replace the link).
    """
    folder = Path(folder)
    if not folder.is_symlink():
        return folder
    target = folder.resolve()
    if not target.exists():
        raise InvalidInput(f"{folder} is a symbolic link to {target}, which does not exist: create that folder "
                               "or pass --index the folder itself")
    return target


def crash_point(step: str) -> None:
    """Test hook: SIGKILL this process at ``step`` when ``PPKIT_TEST_CRASH_AT`` names it."""
    if crash_step() == step:
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)


# -- locks --------------------------------------------------------------------------------------
_held: dict[str, tuple[int, int]] = {}  # lock path -> (owning thread id, depth): re-entrant per thread
_held_guard = threading.Lock()


def _flock(fh, kind: str, *, blocking: bool = True) -> bool:
    """Take an flock (``kind``: ``"sh"`` or ``"ex"``); False when ``blocking=False`` and it is taken."""
    if fcntl is None:  # pragma: no cover
        return True
    kind = fcntl.LOCK_SH if kind == "sh" else fcntl.LOCK_EX
    try:
        fcntl.flock(fh, kind | (0 if blocking else fcntl.LOCK_NB))
        return True
    except BlockingIOError:
        return False


@contextlib.contextmanager
def index_lock(folder: Path, *, wait_message: bool = True):
    """The writers' lock of ``folder`` (``.NAME.lock`` beside it), held for a whole update.

    Re-entrant within a thread; another process or thread waits (printing once that it waits).
    """
    folder = Path(folder)
    lock_path = str(folder.parent.resolve() / f".{folder.name}.lock")
    me = threading.get_ident()
    with _held_guard:
        owner = _held.get(lock_path)
        if owner is not None and owner[0] == me:
            _held[lock_path] = (me, owner[1] + 1)
            mine = True
        else:
            mine = False
    if mine:
        try:
            yield
        finally:
            with _held_guard:
                _held[lock_path] = (me, _held[lock_path][1] - 1)
                if _held[lock_path][1] == 0:
                    del _held[lock_path]
        return
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        fh = open(lock_path, "a")
    except OSError as e:
        raise InvalidInput(f"cannot write beside {folder} (the lock file {lock_path}: {e.strerror or e}); nothing "
                           "was changed: pass --index a folder in a place you can write") from None
    with fh:
        if not _flock(fh, "ex", blocking=False):
            if wait_message:
                print(f"waiting for another ppkit run that is writing {folder} ...", file=sys.stderr, flush=True)
            _flock(fh, "ex")
        with _held_guard:
            _held[lock_path] = (me, 1)
        try:
            yield
        finally:
            with _held_guard:
                _held.pop(lock_path, None)


@contextlib.contextmanager
def swap_lock(folder: Path, *, shared: bool):
    """``.NAME.swap.lock``: exclusive while a save renames, shared while a reader reads the files.

    A reader that cannot create the lock file (a read-only place, where no writer can work
    either) reads without it.
    """
    folder = Path(folder)
    path = folder.parent / f".{folder.name}.swap.lock"
    try:
        fh = open(path, "a")
    except OSError:
        if not shared:
            raise
        yield
        return
    with fh:
        _flock(fh, "sh" if shared else "ex")
        yield


# -- checksums and completeness -----------------------------------------------------------------
def file_checksums(folder: Path) -> dict[str, str]:
    """``{relative path: sha256}`` of every file in ``folder`` except the manifest."""
    folder = Path(folder)
    return {p.relative_to(folder).as_posix(): sha256_file(p) for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != MANIFEST}


def bad_files(folder: Path, files: dict) -> list[str]:
    """The files of ``files`` (``{relative path: sha256}``) that are missing or differ, as messages."""
    out = []
    for rel, want in files.items():
        p = Path(folder) / rel
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            out.append(f"{rel}: not a path inside the index")
        elif not p.is_file():
            out.append(f"{p} is missing")
        elif sha256_file(p) != want:
            out.append(f"{p} does not match its checksum in the manifest (changed or damaged)")
    return out


def _read_manifest(folder: Path):
    try:
        return json.loads((Path(folder) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def complete_manifest(folder: Path) -> dict | None:
    """The manifest of ``folder`` when the copy is complete (manifest there, every checksum matches)."""
    m = _read_manifest(folder)
    if not isinstance(m, dict) or not isinstance(m.get("files"), dict):
        return None
    return m if not bad_files(folder, m["files"]) else None


def _own_file(rel: str) -> bool:
    """True for a path ppkit writes into an index folder (its own files, or a registered store's)."""
    return bool(_OWN_FILES.match(rel) or own_files().fullmatch(rel))


def foreign_files(folder: Path, *, leftover: bool = False) -> list[str]:
    """The files in ``folder`` that ppkit did not write into an index (empty: safe to replace).

    A folder is ppkit's only when its manifest says so in full: a JSON object with a
    ``format_version`` whose ``files`` list every other file there. So a manifest that is JSON
    but not a ppkit manifest (``{"name": "app"}``) is foreign, a ``paths.json`` with no manifest
    beside it is foreign, and so is a file the manifest does not list. A manifest that is not
    JSON at all (a damaged index) falls back to file names ppkit writes. ``leftover``: a crash
    leftover (``.NAME.tmp-PID``, ``.NAME.old-PID``), ppkit's by its name, where a manifest may be
    missing or already deleted; its files are still judged by name.
    """
    folder = Path(folder)
    if folder.is_symlink():
        return [f"{folder} (a symbolic link)"]
    if not folder.is_dir():
        return [str(folder)] if folder.exists() else []
    has_manifest = (folder / MANIFEST).exists()
    if not has_manifest and not leftover:  # nothing there is known to be ppkit's: list a few, never walk it all
        try:
            return sorted(p.name + ("/" if p.is_dir() and not p.is_symlink() else "")
                          for p in itertools.islice(folder.iterdir(), 20))
        except OSError as e:
            return [f"{folder} ({e.strerror or e})"]
    files = [p for p in sorted(folder.rglob("*")) if p.is_file() or p.is_symlink()]
    rels = [p.relative_to(folder).as_posix() for p in files]
    out = [r for p, r in zip(files, rels) if p.is_symlink() or not _own_file(r)]
    m = _read_manifest(folder)
    if has_manifest and m is not None and not (isinstance(m, dict) and "format_version" in m):
        out.insert(0, MANIFEST + " (not a ppkit manifest)")
    elif leftover:
        pass
    elif isinstance(m, dict):
        listed = m.get("files") if isinstance(m.get("files"), dict) else {}
        out += [r for r in rels if r != MANIFEST and r not in out and r not in listed]
    return out


def remove_index_copy(folder: Path, *, crash_steps: bool = False) -> None:
    """Delete a copy of an index: its manifest first (so a half-deleted copy is never complete)."""
    folder = Path(folder)
    if folder.is_symlink() or foreign_files(folder, leftover=True):
        return  # never delete what ppkit did not write, nor anything through a link
    (folder / MANIFEST).unlink(missing_ok=True)
    if crash_steps:
        crash_point("old-unmarked")
        files = sorted(p for p in folder.rglob("*") if p.is_file())
        for p in files[: len(files) // 2]:
            p.unlink()
        crash_point("old-half-deleted")
    shutil.rmtree(folder, ignore_errors=True)


def _leftovers(folder: Path) -> list[Path]:
    return sorted(folder.parent.glob(f".{folder.name}.tmp-*")) + sorted(folder.parent.glob(f".{folder.name}.old-*"))


def _best(candidates: list[Path]) -> tuple[Path, dict] | None:
    """The complete copy with the highest generation (ties: the first)."""
    best = None
    for c in candidates:
        m = complete_manifest(c) if c.is_dir() else None
        if m is not None and (best is None or int(m.get("generation", 0)) > int(best[1].get("generation", 0))):
            best = (c, m)
    return best


def readable_copy(folder: Path) -> Path:
    """Where a reader finds the index of ``folder``: the folder, or after a crash the best complete
    leftover copy (read where it lies: readers never move anything)."""
    folder = Path(folder)
    if (folder / MANIFEST).is_file() or not folder.parent.is_dir():
        return folder
    best = _best(_leftovers(folder))
    return best[0] if best is not None else folder


def recover(folder: Path) -> None:
    """Writers only, under :func:`index_lock`: after a crash, put the best complete copy in place
    and delete the leftovers (``.NAME.tmp-PID``, ``.NAME.old-PID``) that are only ppkit's files."""
    folder = Path(folder)
    leftovers = _leftovers(folder)
    if not leftovers:
        return
    current = complete_manifest(folder) if folder.is_dir() else None
    best = _best(leftovers)
    if best is not None and (current is None or int(best[1].get("generation", 0)) >
                             int(current.get("generation", 0))):
        if folder.exists() and foreign_files(folder):
            return  # the folder holds files ppkit did not write: touch nothing
        with swap_lock(folder, shared=False):
            if folder.exists():
                aside = folder.parent / f".{folder.name}.old-{os.getpid()}-damaged"
                os.replace(folder, aside)
                leftovers.append(aside)
            os.replace(best[0], folder)
        leftovers.remove(best[0])
    for p in leftovers:
        if p.is_dir():
            remove_index_copy(p)


def commit(tmp: Path, folder: Path) -> None:
    """Swap the complete copy ``tmp`` in as ``folder`` (two renames under the swap lock), then
    delete the previous copy. ``folder`` is a real folder, never a link (see :func:`real_folder`)."""
    if Path(folder).is_symlink():
        raise InvalidInput(f"{folder} is a symbolic link: pass --index its target {Path(folder).resolve()}")
    old = folder.parent / f".{folder.name}.old-{os.getpid()}"
    with swap_lock(folder, shared=False):
        if folder.exists():
            os.replace(folder, old)
            crash_point("old-moved")
        os.replace(tmp, folder)
    crash_point("new-moved")
    if old.exists():
        remove_index_copy(old, crash_steps=True)


def fsync_tree(folder: Path) -> None:
    """Flush every file of ``folder`` to disk, so a complete-looking copy is complete after a power cut."""
    for p in Path(folder).rglob("*"):
        if p.is_file():
            with open(p, "rb") as f:
                os.fsync(f.fileno())


# -- trust ----------------------------------------------------------------------------------------
def _key_paths() -> list[Path]:
    """Where the stamp key lives: the config folder, else (when that cannot be written) the cache."""
    return [config_dir() / "index-key", cache_dir() / "index-key"]


def _keys() -> list[bytes]:
    out = []
    for path in _key_paths():
        try:
            out.append(bytes.fromhex(path.read_text().strip()))
        except (OSError, ValueError):
            pass
    return out


def _new_key() -> bytes:
    """A new stamp key, written where :func:`_key_paths` says; a ConfigError naming the key folders (not the
    index folder) when neither can be written."""
    failed: list[str] = []  # "folder (why)" per place tried
    for path in _key_paths():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            keys = _keys()
            if keys:  # another process created it just now
                return keys[0]
            continue
        except OSError as e:
            failed.append(f"{path.parent} ({e.strerror or type(e).__name__})")
            continue
        key = secrets.token_hex(32)
        with os.fdopen(fd, "w") as f:
            f.write(key)
        return bytes.fromhex(key)
    raise ConfigError(f"the key that signs index folders cannot be written in {' or '.join(failed)}: make "
                      "$PPKIT_CONFIG_DIR (default ~/.config/ppkit) a folder you can write; the index was not changed")


def _mac(key: bytes, manifest: dict) -> str:
    body = json.dumps({k: v for k, v in manifest.items() if k != "stamp"}, sort_keys=True, ensure_ascii=False)
    return hmac.new(key, body.encode("utf-8"), hashlib.sha256).hexdigest()


def stamp(manifest: dict) -> str:
    """The HMAC a manifest written by ppkit on this account carries (creates the key on first use)."""
    keys = _keys()
    return _mac(keys[0] if keys else _new_key(), manifest)


def is_stamped(manifest: dict) -> bool:
    """True when ppkit on this account wrote this manifest (and nobody edited it since)."""
    mark = manifest.get("stamp")
    return isinstance(mark, str) and any(hmac.compare_digest(mark, _mac(k, manifest)) for k in _keys())
