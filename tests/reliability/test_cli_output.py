"""What the command line prints (issue 12, cases 12 and 15): a reader that closes the pipe early,
and an answer whose citations failed verification."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gemini_server import json_reply, text_reply

from ppkit.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _env(tmp_path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PPKIT_OFFLINE": "1", "PPKIT_QUIET": "1",
           "PPKIT_CACHE_DIR": str(tmp_path / "cache")}
    return env


def _first_line_then_close(cmd: list[str], env: dict) -> tuple[str, str, int]:
    """Read one line of the command's output, then close the pipe (what `| head -1` does)."""
    p = subprocess.Popen([sys.executable, "-m", "ppkit.cli", *cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env, cwd=ROOT)
    first = p.stdout.readline().decode()
    p.stdout.close()
    try:
        err = p.stderr.read().decode()
        rc = p.wait(timeout=60)
    finally:
        p.kill()
    return first, err, rc


def test_output_closed_early_ends_quietly(tmp_path):  # case 12
    doc = tmp_path / "big.md"  # a tree JSON far larger than a pipe's buffer
    doc.write_text("".join(f"# Heading {i}\nText {i}.\n" for i in range(3000)), encoding="utf-8")
    first, err, rc = _first_line_then_close(["tree", str(doc), "--json"], _env(tmp_path))
    assert first == "{\n"
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert rc == 141
    env = _env(tmp_path)
    assert subprocess.run([sys.executable, "-m", "ppkit.cli", "index", str(doc), "--index", str(tmp_path / "ix"),
                           "--embedder", "hash", "--quiet"], env=env, cwd=ROOT, capture_output=True).returncode == 0
    # every section quoted (--evidence all): about 100 KB of JSON, more than a pipe holds (the default is ~50 KB)
    first, err, rc = _first_line_then_close(["ask", "Heading 7 text", "--index", str(tmp_path / "ix"), "--json",
                                             "--k", "50", "--evidence", "all"], env)
    assert first == "{\n"
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert rc == 141


def test_answer_citing_an_unretrieved_section_is_flagged(gemini, hash_index, capsys):  # case 15
    gemini.script("generateContent",
                  json_reply({"companies": [], "years": [], "items": [], "search_text": "revenue"}),  # analysis
                  json_reply({"ids": [1]}),  # re-ranking
                  text_reply("Revenue was 12.\n\nSources:\n- acme > Revenue (ID: 0089)"))  # synthesis
    rc = main(["ask", "What was the revenue?", "--index", str(hash_index.folder), "--k", "2"])
    out = capsys.readouterr().out
    assert rc == 0 and gemini.pending("generateContent") == 0
    assert "WARNING:" in out
    assert "the answer cites sections that were not retrieved: ID 0089" in out
