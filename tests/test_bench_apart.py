"""Benchmarks apart: ``import ppkit``, ``ppkit index`` and ``ppkit ask`` load no ``ppkit.bench`` module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "acme.md"

SCRIPT = """
import json, sys
import ppkit
import ppkit.cli
loaded = {"import": sorted(m for m in sys.modules if m == "ppkit.bench" or m.startswith("ppkit.bench."))}
status = ppkit.cli.main(["index", sys.argv[1], "--index", sys.argv[2], "--embedder", "hash", "--quiet"])
loaded["index"] = sorted(m for m in sys.modules if m == "ppkit.bench" or m.startswith("ppkit.bench."))
status += ppkit.cli.main(["ask", "What was the revenue?", "--index", sys.argv[2]])
loaded["ask"] = sorted(m for m in sys.modules if m == "ppkit.bench" or m.startswith("ppkit.bench."))
print(json.dumps({"status": status, "loaded": loaded}))
"""


def test_ask_and_index_load_no_bench_module(tmp_path):
    env = {**os.environ, "PPKIT_OFFLINE": "1", "PPKIT_EMBEDDER": "hash", "PPKIT_QUIET": "1", "HF_HUB_OFFLINE": "1"}
    env.pop("GEMINI_API_KEY", None)
    env.pop("GOOGLE_API_KEY", None)
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(FIXTURE), str(tmp_path / "index")], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["status"] == 0
    assert result["loaded"] == {"import": [], "index": [], "ask": []}


def test_bench_is_still_a_command():
    from ppkit.cli import build_parser

    assert "bench" in build_parser().format_help()
