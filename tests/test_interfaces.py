"""Frozen interfaces: the public API and the keys of the JSON that users and scripts read.

``ppkit.__all__`` with every signature, the keys of ``ppkit ask --json`` and of
``ppkit bench retrieval --json`` are compared with ``tests/fixtures/interfaces.json``. A change
to any of them must be deliberate: re-write the snapshot with

    PPKIT_UPDATE_SNAPSHOT=1 pytest tests/test_interfaces.py

and say why in the commit.
"""

from __future__ import annotations

import inspect
import json
import os

import pytest

import ppkit
from bench_support import FIX, build_fixture_index
from ppkit.cli import main

SNAPSHOT = FIX / "interfaces.json"


def public_api() -> dict[str, str]:
    """``{name: signature}`` of every name in ``ppkit.__all__`` (classes: their constructor)."""
    out = {}
    for name in sorted(ppkit.__all__):
        obj = getattr(ppkit, name)
        if inspect.isclass(obj):
            try:
                sig = str(inspect.signature(obj))
            except (TypeError, ValueError):  # a Protocol has no useful constructor signature
                sig = "(protocol)" if getattr(obj, "_is_protocol", False) else "(...)"
            methods = sorted(m for m, v in vars(obj).items() if callable(v) and not m.startswith("_"))
            out[name] = f"class {sig}" + (f" methods: {', '.join(methods)}" if methods else "")
        elif callable(obj):
            out[name] = f"def {inspect.signature(obj)}"
        else:
            out[name] = type(obj).__name__
    return out


def keys(obj, depth: int = 2) -> list[str]:
    """Dotted key paths of a JSON value down to ``depth`` levels (lists: their first item)."""
    out = []
    if isinstance(obj, list):
        return keys(obj[0], depth) if obj and isinstance(obj[0], (dict, list)) else []
    if not isinstance(obj, dict) or depth == 0:
        return out
    for k, v in obj.items():
        out.append(k)
        out += [f"{k}.{sub}" for sub in keys(v, depth - 1)]
    return sorted(out)


@pytest.fixture
def env(tmp_path, monkeypatch):
    for var, value in {"PPKIT_CACHE_DIR": tmp_path / "cache", "PPKIT_FIGURES_DIR": tmp_path / "figures",
                       "PPKIT_OFFLINE": "1", "PPKIT_QUIET": "1", "MPLBACKEND": "Agg"}.items():
        monkeypatch.setenv(var, str(value))
    build_fixture_index(tmp_path / "index")
    return tmp_path


def current(tmp_path, capsys) -> dict:
    assert main(["ask", "What drove revenue change for Acme in FY2022?", "--index", str(tmp_path / "index"),
                 "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    out = tmp_path / "bench.json"
    assert main(["bench", "retrieval", "--questions", str(FIX / "bench_financebench.jsonl"), "--index",
                 str(tmp_path / "index"), "--k", "3", "--k", "5", "--json", str(out), "--quiet", "--no-figure"]) == 0
    bench = json.loads(out.read_text())
    return {
        "public_api": public_api(),
        "ask_json": keys(answer, depth=2),
        "ask_json_trace": keys(answer["trace"], depth=1),
        "bench_retrieval_json": sorted(bench),
        "bench_retrieval_results_k": keys(bench["results"]["5"], depth=1),
        "bench_retrieval_per_question": keys(bench["per_question"][0], depth=1),
    }


def test_interfaces_match_the_snapshot(env, capsys):
    now = current(env, capsys)
    if os.environ.get("PPKIT_UPDATE_SNAPSHOT"):
        SNAPSHOT.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    frozen = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    for part in sorted(set(frozen) | set(now)):
        assert now.get(part) == frozen.get(part), (
            f"{part} changed; if that is deliberate, run PPKIT_UPDATE_SNAPSHOT=1 pytest {__file__}")


def test_the_snapshot_holds_the_documented_contract():
    """The fields DESIGN's contract names are in the snapshot (so updating it cannot drop them unseen)."""
    frozen = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert {"benchmark", "n", "results", "per_question"} <= set(frozen["bench_retrieval_json"])
    assert {"hit", "recall", "context_chars_mean"} <= set(frozen["bench_retrieval_results_k"])
    assert {"text", "sections", "images", "trace", "verification"} <= set(frozen["ask_json"])
    assert {"build_index", "build_tree", "reference_index", "load_index", "retrieve", "ask"} <= set(frozen["public_api"])
