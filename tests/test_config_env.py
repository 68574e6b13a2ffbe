"""Settings in one place: ``ppkit/core/config.py`` is the only module of ppkit that reads the environment.

Every other module asks config.py (a small function per setting, or a :class:`ppkit.core.config.Config`
field). The check parses each module (no import) and names every ``os.environ``, ``os.getenv``,
``environ.get`` and ``from os import environ/getenv`` outside config.py by file and line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ppkit"


def env_reads(path: Path, package: Path = PACKAGE) -> list[str]:
    """``"file:line: what"`` for every read of the environment in the module at ``path`` of ``package``."""
    rel = path.relative_to(package.parent)
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        what = None
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            names = [a.name for a in node.names if a.name in ("environ", "getenv", "environb", "getenvb")]
            what = f"from os import {', '.join(names)}" if names else None
        elif isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb", "getenvb"):
            what = ast.unparse(node)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "environ":
            what = ast.unparse(node)  # environ.get after `from os import environ` (or an alias of it)
        if what:
            out.append(f"{rel}:{node.lineno}: {what}")
    return out


def all_env_reads(package: Path = PACKAGE) -> list[str]:
    """The reads of every module of ``package`` but its ``core/config.py``."""
    reader = package / "core" / "config.py"
    return [r for f in sorted(package.rglob("*.py")) if f != reader for r in env_reads(f, package)]


def test_only_config_reads_the_environment():
    reads = all_env_reads()
    assert not reads, "read the environment in ppkit/core/config.py only:\n" + "\n".join(reads)


@pytest.mark.parametrize("source", [
    "import os\nx = os.environ.get('A')\n",
    "import os\nx = os.environ['A']\n",
    "import os\nx = os.getenv('A')\n",
    "from os import environ\nx = environ.get('A')\n",
    "from os import getenv\nx = getenv('A')\n",
    "def f():\n    import os\n    return dict(os.environ)\n",
])
def test_each_way_of_reading_is_caught(tmp_path, source):
    pkg = tmp_path / "ppkit"
    (pkg / "core").mkdir(parents=True)
    (pkg / "core" / "config.py").write_text("import os\nx = os.environ.get('A')\n")
    (pkg / "mod.py").write_text(source)
    reads = all_env_reads(pkg)
    assert reads and all(r.startswith("ppkit/mod.py:") for r in reads), reads


def test_a_clean_module_passes(tmp_path):
    (tmp_path / "ppkit").mkdir()
    mod = tmp_path / "ppkit" / "mod.py"
    mod.write_text("import os\nx = os.path.join('a', 'b')\nenvironment = {}\ny = environment.get('A')\n")
    assert all_env_reads(tmp_path / "ppkit") == []
