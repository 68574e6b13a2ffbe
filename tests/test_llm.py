"""ppkit.llm.client through the real google-genai client against the local Gemini stand-in.

Nothing is patched: GeminiClient builds a real ``google.genai.Client`` whose base URL is
the server started by the ``gemini`` fixture (tests/conftest.py), which records every
request it receives.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from gemini_server import Reply, embed_values, error_reply, json_reply, text_reply

from ppkit.indexing.embed import GeminiEmbedder
from ppkit.llm.client import GeminiClient, LLMError, parse_json

SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}


@pytest.fixture
def client(gemini):
    # tiny backoff so retry tests stay fast; attempts=3 so exhaustion needs three failures
    return GeminiClient(attempts=3, initial_delay=0.01, max_delay=0.02)


def test_generate_sends_schema_system_and_settings(gemini, client):
    gemini.script("generateContent", json_reply({"answer": 42}, tokens_in=31, tokens_out=4))
    res = client.generate("What is six times seven?", system="Answer in JSON.", schema=SCHEMA)
    assert res.data == {"answer": 42}
    assert res.text == '{"answer": 42}'
    assert (res.model, res.tokens_in, res.tokens_out, res.cached) == ("gemini-2.5-flash", 31, 4, False)
    [req] = gemini.requests
    assert req["path"].endswith("/models/gemini-2.5-flash:generateContent")
    assert req["api_key"] == "test-key-not-real"
    body = req["body"]
    assert body["contents"] == [{"parts": [{"text": "What is six times seven?"}], "role": "user"}]
    assert body["systemInstruction"]["parts"] == [{"text": "Answer in JSON."}]
    gen = body["generationConfig"]
    assert gen["responseMimeType"] == "application/json"
    assert gen["responseSchema"] == {"type": "OBJECT", "properties": {"answer": {"type": "INTEGER"}},
                                     "required": ["answer"]}
    assert gen["temperature"] == 0.0
    assert SCHEMA["type"] == "object"  # the caller's schema was not rewritten in place


def test_generate_without_schema_is_plain_text(gemini, client):
    gemini.script("generateContent", text_reply("Hello."))
    res = client.generate("Say hello", model="gemini-2.5-pro", temperature=0.3)
    assert (res.text, res.data, res.model) == ("Hello.", None, "gemini-2.5-pro")
    [req] = gemini.requests
    assert req["model"] == "gemini-2.5-pro"
    assert "responseMimeType" not in req["body"]["generationConfig"]
    assert "systemInstruction" not in req["body"]
    assert req["body"]["generationConfig"]["temperature"] == 0.3


def test_thinking_tokens_count_as_output(gemini, client):
    gemini.script("generateContent", text_reply("ok", tokens_in=10, tokens_out=2, thoughts=30))
    assert client.generate("think").tokens_out == 32


def test_non_json_reply_to_a_schema_call_raises_with_the_reply_and_is_not_cached(gemini, client):
    gemini.script("generateContent", text_reply("Sure! The answer is 42."), text_reply("Sure! The answer is 42."))
    for _ in range(2):
        with pytest.raises(LLMError, match="not JSON") as err:
            client.generate("q", schema=SCHEMA)
        assert err.value.reply == "Sure! The answer is 42."
        assert err.value.status is None
    assert len(gemini.requests) == 2  # the bad reply was not cached


def test_json_inside_a_code_fence_is_accepted(gemini, client):
    gemini.script("generateContent", text_reply('```json\n{"answer": 7}\n```'))
    assert client.generate("q", schema=SCHEMA).data == {"answer": 7}
    assert parse_json('```\n[1, 2]\n```') == [1, 2]


def test_429_then_success_is_retried_into_one_result(gemini, client):
    gemini.script("generateContent", error_reply(429, "quota"), json_reply({"answer": 1}))
    res = client.generate("q", schema=SCHEMA)
    assert res.data == {"answer": 1}
    assert [r["action"] for r in gemini.requests] == ["generateContent", "generateContent"]
    assert len(client.calls) == 1 and client.calls[0]["cached"] is False


def test_500s_until_attempts_are_exhausted_raise_a_clear_error(gemini, client):
    gemini.script("generateContent", *[error_reply(500, "backend exploded")] * 4)
    with pytest.raises(LLMError) as err:
        client.generate("q")
    msg = str(err.value)
    assert "after 3 attempts" in msg and "HTTP 500" in msg and "backend exploded" in msg
    assert "Nothing was lost" in msg and "PPKIT_OFFLINE" in msg
    assert err.value.status == 500 and err.value.reply is None
    assert len(gemini.requests) == 3 and gemini.pending("generateContent") == 1
    assert client.calls == []  # no result, nothing logged as a call


def test_a_bad_key_is_not_retried_and_says_what_to_check(gemini, client):
    gemini.script("generateContent", error_reply(400, "API key not valid. Please pass a valid API key."))
    with pytest.raises(LLMError, match="GEMINI_API_KEY") as err:
        client.generate("q")
    assert "attempts" not in str(err.value)
    assert len(gemini.requests) == 1


def test_a_slow_reply_times_out_and_is_retried(gemini):
    slow = text_reply("late")
    slow.delay = 1.0
    gemini.script("generateContent", slow, text_reply("in time"))
    c = GeminiClient(timeout=0.3, attempts=2, initial_delay=0.01, max_delay=0.02)
    assert c.generate("q").text == "in time"
    assert len(gemini.requests) == 2


def test_an_unreachable_server_is_a_clear_error(gemini):
    from gemini_server import GeminiServer

    with GeminiServer() as gone:
        url = gone.url
    c = GeminiClient(base_url=url, attempts=2, initial_delay=0.01, max_delay=0.02)
    with pytest.raises(LLMError, match=f"got no reply from {url} after 2 attempts .*ConnectError"):
        c.generate("q")


def test_a_body_that_is_not_json_is_a_clear_error(gemini, client):
    gemini.script("generateContent", Reply(200, "{this is not json"))
    with pytest.raises(LLMError, match="could not be read"):
        client.generate("q")


def test_a_reply_without_text_says_why(gemini, client):
    gemini.script("generateContent", Reply(200, {"candidates": [{"finishReason": "SAFETY"}],
                                                 "usageMetadata": {"promptTokenCount": 5}}))
    with pytest.raises(LLMError, match="no text.*SAFETY"):
        client.generate("q")


def test_second_identical_call_is_served_from_the_disk_cache(gemini, client, tmp_path):
    gemini.script("generateContent", json_reply({"answer": 5}, tokens_in=20, tokens_out=3),
                  json_reply({"answer": 6}, tokens_in=21, tokens_out=3))
    first = client.generate("q", system="s", schema=SCHEMA)
    again = client.generate("q", system="s", schema=SCHEMA)
    assert (first.cached, again.cached) == (False, True)
    assert again.data == {"answer": 5} and again.tokens_in == 20
    assert len(gemini.requests) == 1
    # a new client (a new process, say) reads the same plain-JSON cache
    fresh = GeminiClient(attempts=1)
    assert fresh.generate("q", system="s", schema=SCHEMA).cached is True
    assert len(gemini.requests) == 1
    [path] = (tmp_path / "cache" / "llm" / "generate").rglob("*.json")
    assert json.loads(path.read_text())["text"] == '{"answer": 5}'
    # any change of system, schema, settings or model is a new request
    client.generate("q", system="other", schema=SCHEMA)
    assert len(gemini.requests) == 2
    assert [(c["kind"], c["tokens_in"], c["tokens_out"], c["cached"]) for c in client.calls] == [
        ("generate", 20, 3, False), ("generate", 20, 3, True), ("generate", 21, 3, False)]


def test_use_cache_false_always_calls(gemini):
    gemini.script("generateContent", text_reply("a"), text_reply("b"))
    c = GeminiClient(use_cache=False, attempts=1)
    assert [c.generate("q").text for _ in range(2)] == ["a", "b"]


def test_no_key_is_a_clear_error(gemini, monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY")
    with pytest.raises(LLMError, match="no Gemini API key.*GEMINI_API_KEY.*offline"):
        GeminiClient()
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    monkeypatch.setenv("PPKIT_OFFLINE", "1")
    with pytest.raises(LLMError, match="PPKIT_OFFLINE is set"):
        GeminiClient()
    assert gemini.requests == []


def test_embed_returns_the_raw_vectors_in_order(gemini, client):
    v = client.embed(["alpha", "beta", "gamma"], dim=8)
    assert v.dtype == np.float32 and v.shape == (3, 8)
    np.testing.assert_allclose(v[1], embed_values("beta", 8), rtol=1e-6)
    [req] = gemini.requests
    assert req["action"] == "batchEmbedContents" and req["model"] == "gemini-embedding-001"
    r0 = req["body"]["requests"][0]
    assert r0["content"]["parts"] == [{"text": "alpha"}]
    assert (r0["taskType"], r0["outputDimensionality"]) == ("RETRIEVAL_DOCUMENT", 8)
    assert client.embed([], dim=8).shape == (0, 8)


def test_embeddings_are_cached_per_text(gemini, client):
    client.embed(["alpha", "beta"], dim=8)
    v = client.embed(["beta", "delta", "alpha"], dim=8)
    np.testing.assert_allclose(v[2], embed_values("alpha", 8), rtol=1e-6)
    assert len(gemini.requests) == 2
    assert [r["content"]["parts"][0]["text"] for r in gemini.requests[1]["body"]["requests"]] == ["delta"]
    client.embed(["alpha"], dim=8, task_type="RETRIEVAL_QUERY")  # another task is another vector
    assert len(gemini.requests) == 3


def test_embed_wrong_count_is_an_error(gemini, client):
    gemini.script("batchEmbedContents", Reply(200, {"embeddings": [{"values": [0.1] * 8}]}))
    with pytest.raises(LLMError, match="1 vectors .* for 2 texts"):
        client.embed(["a", "b"], dim=8)


def test_embed_503_then_success(gemini, client):
    gemini.script("batchEmbedContents", error_reply(503))
    assert client.embed(["a"], dim=4).shape == (1, 4)
    assert len(gemini.requests) == 2


def test_gemini_embedder_batches_normalises_and_uses_query_task(gemini, client):
    emb = GeminiEmbedder(client, dim=16)
    texts = [f"chunk number {i}" for i in range(250)]
    v = emb.embed_documents(texts)
    assert v.shape == (250, 16)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    raw = np.asarray(embed_values(texts[137], 16))
    np.testing.assert_allclose(v[137], raw / np.linalg.norm(raw), rtol=1e-5)
    assert [len(r["body"]["requests"]) for r in gemini.requests] == [100, 100, 50]
    q = emb.embed_query("a question")
    assert q.shape == (16,) and gemini.requests[-1]["body"]["requests"][0]["taskType"] == "RETRIEVAL_QUERY"
    assert emb.name == "gemini:gemini-embedding-001@16"


def test_gemini_embedder_default_is_1536_dims(gemini):
    v = GeminiEmbedder().embed_documents(["one text"])
    assert v.shape == (1, 1536)
    assert gemini.requests[0]["body"]["requests"][0]["outputDimensionality"] == 1536
