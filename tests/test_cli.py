"""The ppkit command: tree, index, ask, and errors without tracebacks."""

import json
from pathlib import Path

from ppkit.cli import main

FIX = Path(__file__).parent / "fixtures"


def test_tree_text_and_json(capsys):
    assert main(["tree", str(FIX / "edge_cases.md")]) == 0
    out = capsys.readouterr().out
    assert "0003      Deep  (L3, lines 17-22/22)" in out
    assert main(["tree", str(FIX / "edge_cases.md"), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [n["node_id"] for n in d["nodes"]] == ["0000", "0001", "0002", "0003", "0004", "0005", "0006"]


def test_index_then_ask_json(tmp_path, fixture_docs, capsys, monkeypatch):
    monkeypatch.setenv("PPKIT_OFFLINE", "1")
    idx = tmp_path / "idx"
    assert main(["index", *map(str, fixture_docs), "--index", str(idx), "--embedder", "hash", "--quiet"]) == 0
    assert "indexed 2 documents" in capsys.readouterr().out
    assert main(["ask", "What was Acme's free cash flow?", "--index", str(idx), "--k", "2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert len(d["sections"]) == 2
    assert all({"doc", "node_id", "breadcrumb", "line_start", "line_end", "text"} <= set(s) for s in d["sections"])
    assert d["mode"] == d["answer"]["mode"] == "offline" and d["trace"]["synthesizer"] == "extractive"


def test_user_errors_exit_2_without_traceback(tmp_path, capsys):
    assert main(["ask", "anything", "--index", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ppkit ask: error: no index at") and "Traceback" not in err
    assert main(["tree", str(tmp_path / "missing.md")]) == 2
    assert "no such Markdown file" in capsys.readouterr().err
