"""Malformed benchmark input and a quiet command (issue 12, cases 18 and 19)."""

from __future__ import annotations

import json

import pytest

from bench_support import build_fixture_index
from ppkit.bench.data.loaders import QuestionSetError, load_financebench, load_multimodal_queries
from ppkit.cli import main
from ppkit.core import progress


def _fb_row(**kw) -> str:
    row = {"financebench_id": "fb-1", "doc_name": "Acme", "question": "What was Acme's revenue?", "answer": "5"}
    return json.dumps({**row, **kw})


def test_financebench_evidence_as_a_string(tmp_path):  # case 18
    p = tmp_path / "fb.jsonl"
    p.write_text(_fb_row(evidence="Revenue was 5.") + "\n", encoding="utf-8")
    assert load_financebench(p)[0]["evidence"] == [{"text": "Revenue was 5.", "doc": "Acme", "page": None,
                                                    "full_page": ""}]
    p.write_text(_fb_row(evidence=42) + "\n", encoding="utf-8")
    with pytest.raises(QuestionSetError, match=r"fb\.jsonl:1: 'evidence' must be a list"):
        load_financebench(p)


@pytest.mark.parametrize("query", [{"query": "What is shown?"}, {"id": "one", "query": "What is shown?"}])
def test_multimodal_query_without_an_integer_id(tmp_path, query):  # case 18
    p = tmp_path / "mm.json"
    p.write_text(json.dumps({"test_queries": [query]}), encoding="utf-8")
    with pytest.raises(QuestionSetError, match=r'query 1 needs an integer "id"'):
        load_multimodal_queries(p)


def test_no_question_with_gold_writes_json_and_prints_no_traceback(tmp_path, monkeypatch, capsys):  # case 18
    monkeypatch.setenv("PPKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PPKIT_FIGURES_DIR", str(tmp_path / "figures"))
    monkeypatch.setenv("PPKIT_OFFLINE", "1")
    build_fixture_index(tmp_path / "index")
    q = tmp_path / "nogold.jsonl"  # evidence found in no indexed section
    q.write_text(_fb_row(evidence=[{"evidence_text": "zebra quartz nebula xylophone " * 5}]) + "\n", encoding="utf-8")
    out = tmp_path / "res.json"
    rc = main(["bench", "retrieval", "--questions", str(q), "--index", str(tmp_path / "index"), "--json", str(out),
               "--quiet", "--no-baselines"])
    assert rc == 0
    res = json.loads(out.read_text(encoding="utf-8"))
    assert res["n"] == 0 and list(res["skipped"]) == ["fb-1"] and res["fallbacks"] == 0
    assert "no question of" in capsys.readouterr().out


def test_quiet_flag_quiets_every_bar(tmp_path, monkeypatch):  # case 19
    monkeypatch.delenv("PPKIT_QUIET", raising=False)
    seen = []

    def fake_build(*a, **kw):  # what the model's loader asks (LocalEmbedder.model) while the command runs
        seen.append(progress.quiet())
        raise SystemExit(0)

    monkeypatch.setattr("ppkit.cli.build_index", fake_build)
    with pytest.raises(SystemExit):
        main(["index", str(tmp_path / "x.md"), "--quiet"])
    with pytest.raises(SystemExit):
        main(["index", str(tmp_path / "x.md")])
    assert seen == [True, False]
    assert progress.quiet() is False


@pytest.mark.model
def test_quiet_index_prints_no_weight_loading_bar(tmp_path):  # case 19, with the real model
    import os
    import subprocess
    import sys

    doc = tmp_path / "d.md"
    doc.write_text("# A\nSome text.\n", encoding="utf-8")
    env = {**os.environ, "PPKIT_CACHE_DIR": str(tmp_path / "cache"), "PPKIT_OFFLINE": "1"}
    env.pop("PPKIT_QUIET", None)
    p = subprocess.run([sys.executable, "-m", "ppkit.cli", "index", str(doc), "--index", str(tmp_path / "ix"),
                        "--embedder", "local", "--quiet"], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "Loading" not in p.stderr and "it/s" not in p.stderr, p.stderr
