"""Settings in one place: ``ppkit/core/config.py`` is the only module of ppkit that reads the environment.

Every other module asks config.py (a small function per setting, or a :class:`ppkit.core.config.Config`
field). The check parses each module (no import) and names every ``os.environ``, ``os.getenv``,
``environ.get`` and ``from os import environ/getenv`` outside config.py by file and line.

Also: the setting functions and :meth:`Config.from_env` (on the dataclass defaults, ``explicit``), and an
index refusing a Config that sets one of its index-time settings explicitly to another value.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest

from ppkit.core import config as C
from ppkit.core.config import ENV_FIELDS, Config
from ppkit.core.errors import ConfigError
from ppkit.indexing.index import SettingsMismatch, built_with, check_settings
from ppkit.pipeline import load_index

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


# -- the settings functions and Config.from_env ---------------------------------------------------------


@pytest.fixture
def clean_env(monkeypatch):
    """No ppkit variable, Gemini or LlamaParse key set."""
    for var in [v for v, _ in ENV_FIELDS.values()] + ["PPKIT_OFFLINE", "GEMINI_API_KEY", "GOOGLE_API_KEY",
                                                      "LLAMA_CLOUD_API_KEY", "PPKIT_QUIET", "PPKIT_INDEX",
                                                      "PPKIT_DATA_DIR", "PPKIT_CONFIG_DIR", "PPKIT_TEST_CRASH_AT"]:
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def test_setting_functions_read_their_variable(clean_env, tmp_path):
    assert (C.gemini_base_url(), C.llama_cloud_key(), C.index_dir_override(), C.data_dir_override(),
            C.crash_step(), C.quiet_forced()) == (None, None, None, None, None, False)
    clean_env.setenv("PPKIT_GEMINI_BASE_URL", "http://127.0.0.1:9")
    clean_env.setenv("LLAMA_CLOUD_API_KEY", "llx-test")
    clean_env.setenv("PPKIT_INDEX", str(tmp_path / "ix"))
    clean_env.setenv("PPKIT_DATA_DIR", str(tmp_path))
    clean_env.setenv("PPKIT_TEST_CRASH_AT", "tmp-partial")
    clean_env.setenv("PPKIT_QUIET", "1")
    clean_env.setenv("PPKIT_CONFIG_DIR", str(tmp_path / "conf"))
    assert (C.gemini_base_url(), C.llama_cloud_key(), C.index_dir_override(), C.data_dir_override(),
            C.crash_step(), C.quiet_forced(), C.config_dir()) == (
        "http://127.0.0.1:9", "llx-test", tmp_path / "ix", str(tmp_path), "tmp-partial", True, tmp_path / "conf")
    clean_env.setenv("PPKIT_QUIET", "0")
    clean_env.delenv("PPKIT_CONFIG_DIR")
    clean_env.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert not C.quiet_forced() and C.config_dir() == tmp_path / "xdg" / "ppkit"


def test_from_env_builds_on_the_defaults(clean_env):
    assert Config.from_env() == Config() and Config.from_env().explicit == frozenset()
    clean_env.setenv("PPKIT_K", "3")
    clean_env.setenv("PPKIT_RETRIEVAL", "")  # blank: the default
    clean_env.setenv("PPKIT_LLM_TIMEOUT", "2.5")
    cfg = Config.from_env(chunk_size=2000)
    assert (cfg.k, cfg.retrieval, cfg.llm_timeout) == (3, Config().retrieval, 2.5)
    assert cfg.explicit == {"k", "llm_timeout", "chunk_size"}  # chunk_size: given, even at the default
    clean_env.setenv("PPKIT_LLM_ATTEMPTS", "many")
    with pytest.raises(ConfigError, match="PPKIT_LLM_ATTEMPTS='many' is not an integer"):
        Config.from_env()


def test_from_env_reads_every_variable_of_env_fields(clean_env):
    samples = {str: "hash", int: "7", float: "9.5"}
    for name, (var, kind) in ENV_FIELDS.items():
        value = "hybrid" if name == "retrieval" else "fitted" if name == "reranker" else samples[kind]
        clean_env.setenv(var, value)
        assert getattr(Config.from_env(), name) == kind(value), var
        clean_env.delenv(var)


def test_explicit_is_bookkeeping_not_a_setting():
    a, b = Config(), Config().set(k=5)
    assert a == b and hash(a) == hash(b) and repr(a) == repr(b) and a.to_dict() == b.to_dict()
    assert "explicit" not in a.to_dict() and list(a.to_dict())[:3] == ["online", "embedder", "chunk_size"]
    assert a.explicit == frozenset() and b.explicit == {"k"}
    assert Config(chunk_size=500).explicit == {"chunk_size"}  # a value other than the default is explicit
    assert replace(b, retrieval="bm25").explicit == {"k", "retrieval"}  # carried over by replace
    with pytest.raises(ConfigError, match="bookkeeping"):
        Config().set(explicit=frozenset())


# -- an index refuses a Config that contradicts its index-time settings ----------------------------------


@pytest.mark.parametrize("make, setting, asked", [
    (lambda env: (env.setenv("PPKIT_EMBEDDER", "local"), Config.from_env())[1], "embedder", "'local'"),
    (lambda env: Config.from_env(chunk_size=500), "chunk_size", "500"),
    (lambda env: Config(chunk_overlap=100), "chunk_overlap", "100"),
    (lambda env: Config().set(embedder="hash", chunk_size=1000), "chunk_size", "1000"),
])
def test_an_explicit_other_index_time_setting_is_refused(hash_index, clean_env, make, setting, asked):
    built = {"embedder": "'hash'", "chunk_size": "2000", "chunk_overlap": "200"}[setting]
    with pytest.raises(SettingsMismatch) as e:
        load_index(hash_index.folder, config=make(clean_env))
    msg = str(e.value)
    assert f"built with {setting}={built}" in msg and f"ask for {setting}={asked}" in msg
    assert "--fresh" in msg and str(hash_index.folder) in msg
    if setting == "embedder":
        assert "unset PPKIT_EMBEDDER" in msg
    assert isinstance(e.value, ConfigError)


@pytest.mark.parametrize("make", [
    lambda env: Config(),  # embedder "local" by default: the index's hash embedder is used
    lambda env: Config.from_env(),
    lambda env: (env.setenv("PPKIT_EMBEDDER", "hash"), Config.from_env(chunk_size=2000, chunk_overlap=200))[1],
    lambda env: Config().set(embedder="hash", chunk_size=2000),
    lambda env: Config(k=3, retrieval="bm25"),  # query-time settings never contradict an index
])
def test_defaults_and_the_same_values_open_the_index(hash_index, clean_env, make):
    index = load_index(hash_index.folder, config=make(clean_env))
    assert index.manifest["embedder"]["kind"] == "hash" and len(index.chunks) == len(hash_index.chunks)


def test_an_embedder_passed_in_is_checked_against_the_manifest_instead(hash_index, clean_env):
    import ppkit

    index = load_index(hash_index.folder, embedder=ppkit.HashEmbedder(), config=Config().set(embedder="local"))
    assert isinstance(index.embedder, ppkit.HashEmbedder)


@pytest.mark.parametrize("name, asked, ok", [
    ("local:all-MiniLM-L6-v2+bf16", "local", True), ("local:all-MiniLM-L6-v2+bf16", "local-bf16", True),
    ("local:all-MiniLM-L6-v2+bf16", "local-fp32", False), ("local:all-MiniLM-L6-v2", "local-fp32", True),
    ("local:all-MiniLM-L6-v2", "gemini", False),
])
def test_local_matches_either_precision(tmp_path, name, asked, ok):
    manifest = {"embedder": {"name": name, "dim": 384}, "settings": {"chunk_size": 2000, "chunk_overlap": 200}}
    assert built_with(manifest)["embedder"] == ("local-bf16" if "+bf16" in name else "local-fp32")
    cfg = Config().set(embedder=asked)
    if ok:
        check_settings(manifest, cfg, tmp_path)
    else:
        with pytest.raises(SettingsMismatch, match=f"embedder={asked!r}"):
            check_settings(manifest, cfg, tmp_path)
