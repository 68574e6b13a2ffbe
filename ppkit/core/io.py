"""Files written whole or not at all, and content hashes.

:func:`atomic_write` writes through a temporary file in the same folder and renames it over
the target, so a reader (or a crash) never sees half a file. :func:`sha256_file` is the
content hash the index records for each source document and the caches key on.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write", "sha256_file"]


def atomic_write(path: Path | str, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8 with ``\\n`` line ends, or bytes) to ``path`` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def sha256_file(path: Path | str) -> str:
    """The sha256 hex digest of a file's bytes (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
