"""A failing Gemini endpoint (issue 12, case 14): hang, unreachable, slow, garbage. Every ask has a
deadline; a failed online stage falls back to its offline twin and says so; embeddings cannot fall
back and fail clearly; a benchmark records each fallback and flags the run.

All through the real google-genai client against the local server (tests/gemini_server.py) with
short deadlines, so every wait is bounded."""

from __future__ import annotations

import json
import socket
import time

from gemini_server import Reply, json_reply, text_reply

from bench_support import FIX, build_fixture_index
from ppkit import Config, build_index
from ppkit.cli import main

STAGES = ["analyzer", "re-ranking", "synthesis"]


def _ask_json(capsys, folder, *flags) -> tuple[int, dict, float]:
    t0 = time.monotonic()
    rc = main(["ask", "What was the revenue?", "--index", str(folder), "--json", *flags])
    seconds = time.monotonic() - t0
    out = capsys.readouterr().out
    return rc, (json.loads(out) if rc == 0 else {}), seconds


def test_hanging_endpoint_is_bounded_by_the_deadline_and_falls_back(gemini, hash_index, capsys):
    gemini.always("generateContent", Reply(hang=True))  # accepts, never answers
    rc, ans, seconds = _ask_json(capsys, hash_index.folder, "--deadline", "3", "--llm-timeout", "30")
    assert rc == 0 and seconds < 10
    assert ans["mode"] == "offline" and ans["trace"]["synthesizer"] == "extractive"
    assert [f["stage"] for f in ans["trace"]["fallbacks"]] == STAGES
    assert len(gemini.of("generateContent")) == 1  # the later stages did not wait on the dead endpoint again
    rc = main(["ask", "What was the revenue?", "--index", str(hash_index.folder), "--deadline", "2"])
    out = capsys.readouterr().out
    assert rc == 0 and "WARNING:" in out and "online synthesis failed; used the offline extractive synthesizer" in out
    assert "not found in the retrieved sections" not in out  # the note about Gemini is not a claim
    assert out.startswith("[Gemini could not answer")


def test_unreachable_endpoint_gives_up_quickly(gemini, hash_index, capsys, monkeypatch):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there: connections are refused
    monkeypatch.setenv("PPKIT_GEMINI_BASE_URL", f"http://127.0.0.1:{port}")
    rc, ans, seconds = _ask_json(capsys, hash_index.folder, "--deadline", "3")
    assert rc == 0 and seconds < 8
    assert [f["stage"] for f in ans["trace"]["fallbacks"]] == STAGES


def test_garbage_replies_fall_back_without_retrying(gemini, hash_index, capsys):
    gemini.always("generateContent", Reply(200, "<html>502 Bad Gateway</html>"))
    rc, ans, seconds = _ask_json(capsys, hash_index.folder, "--deadline", "20")
    assert rc == 0 and seconds < 10
    assert [f["stage"] for f in ans["trace"]["fallbacks"]] == STAGES
    assert len(gemini.of("generateContent")) == 3  # one per stage: an unreadable reply is not retried


def test_slow_endpoint_within_the_deadline_is_used(gemini, hash_index, capsys):
    slow = [json_reply({"companies": [], "years": [], "items": [], "search_text": "revenue"}),
            json_reply({"ids": [1]}), text_reply("Revenue was 12.\nSources:\n- x (ID: 0001)")]
    for r in slow:
        r.delay = 0.5
    gemini.script("generateContent", *slow)
    rc, ans, seconds = _ask_json(capsys, hash_index.folder, "--deadline", "20", "--k", "1")
    assert rc == 0 and ans["mode"] == "gemini" and ans["trace"]["fallbacks"] == []
    assert seconds >= 1.5  # the three slow replies were waited for


def test_embeddings_cannot_fall_back(gemini, tmp_path, fixture_docs, capsys):
    cfg = Config.from_env(embedder="gemini", noise_online=False)
    build_index(fixture_docs, tmp_path / "gix", config=cfg, progress=False)  # vectors from the local server
    gemini.always("batchEmbedContents", Reply(hang=True))
    gemini.always("embedContent", Reply(hang=True))
    gemini.always("generateContent", Reply(hang=True))
    t0 = time.monotonic()
    rc = main(["ask", "What was the revenue?", "--index", str(tmp_path / "gix"), "--deadline", "2"])
    err = capsys.readouterr().err
    assert rc == 2 and time.monotonic() - t0 < 10
    assert err.startswith("ppkit ask: error: Gemini embedContent") and err.count("\n") == 1


def test_benchmark_records_each_fallback_and_flags_the_run(gemini, tmp_path, monkeypatch, capsys):
    build_fixture_index(tmp_path / "index")
    gemini.always("generateContent", Reply(500, {"error": {"code": 500, "message": "down", "status": "INTERNAL"}}))
    monkeypatch.setenv("PPKIT_LLM_ATTEMPTS", "1")
    monkeypatch.setenv("PPKIT_ASK_DEADLINE", "5")
    out = tmp_path / "res.json"
    rc = main(["bench", "retrieval", "--questions", str(FIX / "bench_financebench.jsonl"), "--index",
               str(tmp_path / "index"), "--json", str(out), "--quiet", "--no-baselines", "--no-figure"])
    assert rc == 0
    res = json.loads(out.read_text(encoding="utf-8"))
    assert res["n"] == 2 and res["fallbacks"] == 2 and res["fallback_questions"] == ["fb-acme-prose", "fb-acme-table"]
    stages = {f["stage"] for q in res["per_question"] for m in q["modes"].values() for f in m["fallbacks"]}
    assert stages == {"analyzer", "re-ranking"}
    assert "WARNING: 2 question(s) ran an offline fallback" in capsys.readouterr().out
