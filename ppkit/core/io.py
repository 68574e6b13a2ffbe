"""Files written whole or not at all, and content hashes.

:func:`atomic_write` writes through a temporary file in the same folder and renames it over
the target, so a reader (or a crash) never sees half a file. :func:`sha256_file` is the
content hash the index records for each source document and the caches key on.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path

__all__ = ["atomic_write", "sha256_file"]


def atomic_write(path: Path | str, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8 with ``\\n`` line ends, or bytes) to ``path`` atomically.

    A new file gets the usual permissions (0666 less the umask); a replaced one keeps its own.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o7777
    except OSError:
        mode = None
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as for open()
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def sha256_file(path: Path | str) -> str:
    """The sha256 hex digest of a file's bytes (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
