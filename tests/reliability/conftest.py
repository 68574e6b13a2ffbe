"""Fixtures of the reliability corpus (issue 12): small documents, a CLI runner, and a private
trust key per test (``PPKIT_CONFIG_DIR``), so no test depends on another's index stamp."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures"


@pytest.fixture(autouse=True)
def private_key(monkeypatch, tmp_path):
    monkeypatch.setenv("PPKIT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("QDRANT_URL", raising=False)


@pytest.fixture
def docs(tmp_path):
    """Four small documents: acme, globex (fixtures) and two more written here."""
    d = tmp_path / "docs"
    d.mkdir()
    out = {}
    for name in ("acme", "globex"):
        out[name] = d / f"{name}.md"
        out[name].write_text((FIX / f"{name}.md").read_text(encoding="utf-8"), encoding="utf-8")
    for name, topic in (("initech", "staplers"), ("umbrella", "vaccines")):
        out[name] = d / f"{name}.md"
        out[name].write_text(f"# {name.upper()}\n\n## Products\n\n{name} sells {topic} to everyone.\n\n"
                             f"## Results\n\nRevenue from {topic} was $12 million in 2022.\n", encoding="utf-8")
    return out


def cli_env(**extra) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PPKIT_OFFLINE": "1", "PPKIT_QUIET": "1"}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_cli(*args, env=None, timeout=60, **popen) -> subprocess.CompletedProcess:
    """``python -m ppkit.cli ARGS`` in a subprocess (the environment of this test, plus ``env``)."""
    return subprocess.run([sys.executable, "-m", "ppkit.cli", *map(str, args)], capture_output=True, text=True,
                          env=cli_env(**(env or {})), timeout=timeout, cwd=ROOT, **popen)


def index_cli(folder, *paths, env=None, extra=()) -> subprocess.CompletedProcess:
    return run_cli("index", *paths, "--index", folder, "--embedder", "hash", "--quiet", *extra, env=env)


def leftovers(folder: Path) -> list[str]:
    """The crash leftovers beside an index folder (lock files are not leftovers)."""
    return sorted(p.name for p in folder.parent.glob(f".{folder.name}.*") if not p.name.endswith(".lock"))


def indexed_docs(folder: Path) -> list[str]:
    return sorted(d["doc"] for d in json.loads((folder / "manifest.json").read_text())["documents"])


def slow_vector_loads(monkeypatch, seconds: float) -> None:
    """Make every FAISS vector load of this process wait ``seconds`` first (a slow disk), so that a save
    landing in the middle of a reader's load is likely, not a rare accident."""
    from ppkit.indexing.stores import FaissStore

    load = FaissStore.load.__func__

    def slow(cls, *a, **kw):
        time.sleep(seconds)
        return load(cls, *a, **kw)

    monkeypatch.setattr(FaissStore, "load", classmethod(slow))


def pdf_bytes(objects: list[bytes]) -> bytes:
    """A hand-written PDF of ``objects`` (object 1 the catalog) with a correct cross-reference table."""
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for i, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (i, obj)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def one_line(result: subprocess.CompletedProcess, *parts: str) -> str:
    """The command's error: exit status 2 and one line on stderr, no traceback, holding every one of ``parts``."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    err = result.stderr.strip()
    assert "\n" not in err and "Traceback" not in err, err
    for part in parts:
        assert part in err, err
    return err


def blank_pdf(path: Path, pages: int) -> Path:
    """A PDF of ``pages`` blank pages (a scan without its text layer), written with pypdfium2."""
    import pypdfium2

    doc = pypdfium2.PdfDocument.new()
    for _ in range(pages):
        doc.new_page(612, 792)
    doc.save(path)
    doc.close()
    return path
