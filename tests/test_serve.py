"""``ppkit serve`` (ppkit.serve): every route on a small hash-embedder index through FastAPI's TestClient, the
SSE order and parsing, the OpenAI-compatible chat route streamed and not, the token rules, the refusal of a
non-loopback address without a token, 4xx for bad bodies, no paths in errors, the per-request deadline, and
a stream dropped by its client (a real uvicorn on an ephemeral loopback port) stopping its work."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx
import pytest

pytest.importorskip("fastapi")
import uvicorn  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

import ppkit  # noqa: E402
from ppkit.answer.events import AnalysisEvent, Delta  # noqa: E402
from ppkit.answer.synth import ExtractiveSynthesizer  # noqa: E402
from ppkit.cli import main  # noqa: E402
from ppkit.core.config import ServeSettings  # noqa: E402
from ppkit.core.errors import InvalidInput  # noqa: E402
from ppkit.serve.admission import Admission  # noqa: E402
from ppkit.serve.app import _started, create_app  # noqa: E402
from ppkit.serve.cli import is_loopback  # noqa: E402
from ppkit.serve.engine import Engine  # noqa: E402
from ppkit.serve.openai_compat import count_tokens  # noqa: E402

FIX = Path(__file__).parent / "fixtures"
Q = "What is Acme's quick ratio for FY2022?"
Q2 = "What were Globex's revenues in 2022?"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """One hash-embedder index over the two fixture documents, shared by the read-only tests here."""
    root = tmp_path_factory.mktemp("serve")
    docs = []
    for name in ("acme.md", "globex.md"):
        (root / name).write_text((FIX / name).read_text(encoding="utf-8"), encoding="utf-8")
        docs.append(root / name)
    return ppkit.build_index(docs, root / "index", embedder=ppkit.HashEmbedder(), config=ppkit.Config(online=False),
                             progress=False)


@pytest.fixture(scope="module")
def client(index):
    return TestClient(create_app(Engine(index), ServeSettings()))


def parse_sse(text: str) -> list[tuple[str | None, object]]:
    """``[(event name or None, parsed data)]``: every message must be ``event:``/``data:`` lines and a blank line."""
    out = []
    for block in text.split("\n\n"):
        if not block:
            continue
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        assert set(fields) <= {"event", "data"}, block
        data = fields["data"]
        out.append((fields.get("event"), data if data == "[DONE]" else json.loads(data)))
    return out


def collapsed(types: list[str]) -> list[str]:
    """Runs of deltas and of citations collapsed to one."""
    out: list[str] = []
    for t in types:
        if not out or out[-1] != t or t not in ("delta", "citation"):
            out.append(t)
    return out


def test_ask_is_the_json_of_ppkit_ask(client, index):
    r = client.post("/v1/ask", json={"question": Q, "k": 3})
    assert r.status_code == 200
    body, local = r.json(), index.ask(Q, k=3)
    assert set(body) == set(json.loads(local.to_json()))
    assert body["text"] == local.text and body["answer"] == {**local.block.to_dict(), "mode": "offline"}
    assert body["mode"] == "offline" and not body["text"].startswith("[")  # the mode is a field, not a banner
    assert [s["node_id"] for s in body["sections"]] == [s.node_id for s in local.sections]


def test_stream_is_the_conductors_events_in_order(client, index):
    r = client.post("/v1/ask/stream", json={"question": Q, "k": 3})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(r.text)
    assert collapsed([e for e, _ in events]) == ["analysis", "sections", "answer", "delta", "citation",
                                                 "verification", "done"]
    local = index.ask(Q, k=3)
    assert "".join(d["text"] for e, d in events if e == "delta") == local.text
    assert events[0][1]["metric"] == "quick ratio" and events[0][1]["filters"]["docs"] == ["acme"]
    assert [s["node_id"] for s in events[1][1]["sections"]] == [s.node_id for s in local.sections[:3]]
    assert events[2][1] == local.block.to_dict()
    assert "synthesize" in events[-1][1]["seconds"] and events[-1][1]["mode"] == "offline"


class FailingSynthesizer(ExtractiveSynthesizer):
    def stream(self, question, sections, analysis=None):
        raise InvalidInput(f"cannot answer from {sections[0].doc}")
        yield


def test_stream_error_instead_of_the_rest(client, index):
    r = client.post("/v1/ask/stream", json={"question": "   "})  # fails at once: an error status, no stream
    assert r.status_code == 400 and r.json() == {"error": {"type": "InvalidInput", "message": "the question is empty"}}
    failing = TestClient(create_app(Engine(index, synthesizer=FailingSynthesizer()), ServeSettings()))
    events = parse_sse(failing.post("/v1/ask/stream", json={"question": Q2}).text)
    assert [e for e, _ in events] == ["analysis", "sections", "error"]
    assert events[-1][1] == {"error": "InvalidInput", "message": "cannot answer from globex"}


def test_history_reaches_the_follow_up_rewrite(client):
    body = client.post("/v1/ask", json={"question": "And in 2021?", "k": 2,
                                        "history": [{"question": Q2, "answer": "700 million"}]}).json()
    assert body["trace"]["rewrite"]["original"] == "And in 2021?"
    assert "globex" in body["trace"]["docs_filter"]


def test_chat_completions(client, index):
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": Q2}]
    r = client.post("/v1/chat/completions", json={"model": "any", "messages": messages, "temperature": 0})
    assert r.status_code == 200
    body, local = r.json(), index.ask(Q2)
    assert body["object"] == "chat.completion" and body["model"] == "index"  # the served index, whatever was asked
    assert body["choices"] == [{"index": 0, "message": {"role": "assistant", "content": local.text},
                                "finish_reason": "stop"}]
    assert local.text.startswith(local.block.text)  # no banner before the answer
    extra = body["ppkit"]
    assert [s["node_id"] for s in extra["sources"]] == [s.node_id for s in local.sections]
    cited = [e.node_id for e in index.stream(Q2) if e.type == "citation"]  # the sections the answer cites
    assert cited and [c["node_id"] for c in extra["citations"]] == cited
    assert extra["answer"] == {**local.block.to_dict(), "mode": "offline"}
    assert extra["verification"] == local.verification
    # the verdict on the block: "verified" only when its quotes check and it answers; its kind and confidence
    assert extra["verdict"] == local.verification["verdict"] and extra["verdict"]["kind"] == local.block.kind
    assert extra["verdict"]["status"] in ("verified", "unanswered", "unchecked", "problems")
    assert (extra["verdict"]["label"] == "verified") == (local.verification["block"]["verified"]
                                                        and local.verification["answered"] is True)
    # usage: the question's and the answer's word pieces (ppkit.serve.openai_compat)
    assert body["usage"] == {"prompt_tokens": count_tokens(Q2), "completion_tokens": count_tokens(local.text),
                             "total_tokens": count_tokens(Q2) + count_tokens(local.text)}
    assert 0 < body["usage"]["prompt_tokens"] < body["usage"]["completion_tokens"]


def test_chat_completions_streamed_sends_the_sources_once_at_the_end(client, index):
    r = client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": Q2}], "stream": True})
    events = parse_sse(r.text)
    assert all(name is None for name, _ in events) and events[-1][1] == "[DONE]"
    chunks = [d for _, d in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"} and len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant"}
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == index.ask(Q2).text
    assert [i for i, c in enumerate(chunks) if "ppkit" in c] == [len(chunks) - 1]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop" and chunks[-1]["ppkit"]["sources"]
    assert chunks[-1]["ppkit"]["answer"]["mode"] == "offline" and {c["model"] for c in chunks} == {"index"}
    assert chunks[-1]["usage"]["completion_tokens"] == count_tokens(index.ask(Q2).text) > 0


def test_models_lists_the_served_index(client):
    body = client.get("/v1/models").json()
    assert body["object"] == "list" and len(body["data"]) == 1
    assert {k: body["data"][0][k] for k in ("id", "object", "owned_by")} == {"id": "index", "object": "model",
                                                                             "owned_by": "ppkit"}
    assert client.get("/v1/models/index").json() == body["data"][0]
    r = client.get("/v1/models/gpt-4o")
    assert r.status_code == 404 and "this server serves 'index'" in r.json()["error"]["message"]


def test_documents_health_and_openapi(client):
    assert client.get("/healthz").json() == {"status": "ok", "documents": 2}
    docs = client.get("/v1/documents").json()["documents"]
    assert [(d["name"], d["lines"], d["chunks"]) for d in docs] == [("acme", 44, 6), ("globex", 19, 4)]
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/v1/ask", "/v1/ask/stream", "/v1/chat/completions", "/v1/models", "/v1/sections/{doc}/{node}",
            "/v1/documents", "/healthz"} <= set(paths)


def test_sections_route(client):
    body = client.get("/v1/sections/ACME/0002").json()
    source = (FIX / "acme.md").read_text(encoding="utf-8").splitlines()
    assert (body["doc"], body["node_id"], body["breadcrumb"]) == ("acme", "0002", "acme > TABLE OF CONTENTS")
    assert [x["line"] for x in body["lines"]] == list(range(body["line_start"], body["line_end"] + 1))
    assert [x["text"] for x in body["lines"]] == source[body["line_start"] - 1: body["line_end"]]
    whole = client.get("/v1/sections/acme/0000?subtree=true").json()
    assert len(whole["lines"]) == len(source) and not whole["truncated"]
    assert client.get("/v1/sections/acme/0999").status_code == 404
    assert client.get("/v1/sections/nope/0001").status_code == 404
    assert client.get("/v1/sections/acme/1").status_code == 422


@pytest.mark.parametrize("body, status, message", [
    ("{not json", 400, "not valid JSON"),
    (json.dumps({"question": Q, "kk": 3}), 422, "kk: unknown field"),
    (json.dumps({"question": Q, "k": "3"}), 422, "k: Input should be a valid integer"),
    (json.dumps({"question": ["a"]}), 422, "question: Input should be a valid string"),
    (json.dumps({"question": Q, "k": 0}), 422, "k: Input should be greater than or equal to 1"),
    (json.dumps({"question": Q, "history": [{"q": "a"}]}), 422, "history.0.question: Field required"),
    (json.dumps({"question": "   "}), 400, "the question is empty"),
    (json.dumps({"question": Q, "docs": ["nope"]}), 400, "no document 'nope' in this index"),
    (json.dumps({"question": "x" * 70_000}), 413, "over this server's limit of 65536 bytes"),
])
def test_bad_bodies_get_a_4xx_with_a_clear_message(client, body, status, message):
    for route in ("/v1/ask", "/v1/ask/stream"):
        r = client.post(route, content=body, headers={"content-type": "application/json"})
        assert r.status_code == status, (route, r.text)
        assert message in r.json()["error"]["message"] and "Traceback" not in r.text


def test_a_chunked_body_over_the_limit_is_refused(client):
    def chunks():
        for _ in range(100):
            yield b" " * 1000

    r = client.post("/v1/ask", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_chat_needs_the_users_question_last(client):
    r = client.post("/v1/chat/completions", json={"messages": [{"role": "assistant", "content": "hi"}]})
    assert r.status_code == 400 and "last message must be the user's question" in r.json()["error"]["message"]
    r = client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": Q}], "n": 2})
    assert r.status_code == 422


def test_token_rules(index):
    c = TestClient(create_app(Engine(index), ServeSettings(token="s3cret")))
    assert c.get("/healthz").status_code == 200
    for path in ("/v1/documents", "/docs", "/openapi.json", "/v1/sections/acme/0001"):
        r = c.get(path)
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer", path
        assert "Authorization: Bearer" in r.json()["error"]["message"] and "s3cret" not in r.text
    assert c.get("/v1/documents", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert c.post("/v1/ask", json={"question": Q}).status_code == 401
    ok = {"Authorization": "Bearer s3cret"}
    assert c.get("/v1/documents", headers=ok).status_code == 200
    assert c.post("/v1/ask", json={"question": Q, "k": 2}, headers=ok).status_code == 200


def test_no_token_refuses_a_non_loopback_address(index, monkeypatch, capsys):
    monkeypatch.delenv("PPKIT_API_TOKEN", raising=False)
    assert main(["serve", "--host", "0.0.0.0", "--index", str(index.folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "refusing to listen on 0.0.0.0 without a token: set PPKIT_API_TOKEN" in err
    assert [is_loopback(h) for h in ("127.0.0.1", "localhost", "::1", "[::1]", "127.1.2.3", "0.0.0.0", "10.0.0.2",
                                     "example.com")] == [True] * 5 + [False] * 3


def test_errors_carry_no_paths(fixture_docs, tmp_path):
    ppkit.build_index(fixture_docs, tmp_path / "index", embedder=ppkit.HashEmbedder(),
                      config=ppkit.Config(online=False), progress=False)
    index = ppkit.load_index(tmp_path / "index", embedder=ppkit.HashEmbedder(), config=ppkit.Config(online=False))
    c = TestClient(create_app(Engine(index), ServeSettings()))
    with fixture_docs[0].open("a", encoding="utf-8") as f:
        f.write("\nchanged after indexing\n")
    responses = [c.post("/v1/ask", json={"question": Q, "docs": ["acme"]}),
                 c.post("/v1/ask/stream", json={"question": Q, "docs": ["acme"]}),
                 c.get("/v1/sections/acme/0001")]
    for r in responses:
        # what is wrong, not the operator's command (issue 45: no CLI flags in HTTP replies; the log has it)
        assert "changed since it was indexed" in r.text and "needs its operator" in r.text and "--" not in r.text
        assert str(tmp_path) not in r.text and "/docs/acme.md" not in r.text and "Traceback" not in r.text
    assert [r.status_code for r in responses] == [503, 200, 503]
    assert [(e, d.get("error")) for e, d in parse_sse(responses[1].text)] == [("analysis", None),
                                                                             ("error", "StaleIndexError")]


class SlowSynthesizer(ExtractiveSynthesizer):
    """Streams ``pieces`` deltas ``delay`` seconds apart and records how many were pulled and whether the
    stream was closed before its end."""

    def __init__(self, pieces: int = 200, delay: float = 0.02):
        super().__init__()
        self.pieces, self.delay = pieces, delay
        self.pulled, self.closed = 0, threading.Event()

    def stream(self, question, sections, analysis=None):
        text, info = self.synthesize(question, sections, analysis)
        try:
            for _ in range(self.pieces):
                time.sleep(self.delay)
                self.pulled += 1
                yield Delta(".")
        except GeneratorExit:
            self.closed.set()
            raise
        return "." * self.pieces, info


def test_the_deadline_ends_a_request(index):
    engine = Engine(index, synthesizer=SlowSynthesizer(pieces=100, delay=0.01), deadline=0.3)
    c = TestClient(create_app(engine, ServeSettings()))
    r = c.post("/v1/ask", json={"question": Q2})
    assert r.status_code == 504 and "longer than this server's deadline of 0.3 s" in r.json()["error"]["message"]
    events = parse_sse(c.post("/v1/ask/stream", json={"question": Q2}).text)
    assert events[-1] == ("error", {"error": "DeadlineExceeded", "message": r.json()["error"]["message"]})
    assert engine.synthesizer.closed.is_set() and engine.synthesizer.pulled < 100


@contextmanager
def live_server(app):
    """``app`` on uvicorn in a thread, on an ephemeral loopback port; yields its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def test_a_dropped_stream_stops_its_work(index):
    slow = SlowSynthesizer(pieces=200, delay=0.02)  # 4 s if pulled to the end
    with live_server(create_app(Engine(index, synthesizer=slow), ServeSettings())) as url:
        with httpx.Client(base_url=url, timeout=10) as http:
            with http.stream("POST", "/v1/ask/stream", json={"question": Q2}) as r:
                for line in r.iter_lines():
                    if line == "event: delta":
                        break  # the client goes away mid-answer
            assert slow.closed.wait(3), "the stream kept running after its client left"
            pulled = slow.pulled
            time.sleep(0.2)
            assert slow.pulled == pulled < 100
            assert http.get("/healthz").status_code == 200  # the server goes on


def test_concurrent_requests_get_the_sequential_answers(client, index):
    questions = [Q, Q2, "What does Globex build?", "What was Acme's net income?"] * 3
    expected = {q: index.ask(q, k=3).text for q in set(questions)}
    got: dict[int, str] = {}

    def one(i: int, q: str) -> None:
        route = "/v1/ask/stream" if i % 2 else "/v1/ask"
        r = client.post(route, json={"question": q, "k": 3})
        got[i] = (r.json()["text"] if route == "/v1/ask"
                  else "".join(d["text"] for e, d in parse_sse(r.text) if e == "delta"))

    threads = [threading.Thread(target=one, args=(i, q)) for i, q in enumerate(questions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert [got.get(i) for i in range(len(questions))] == [expected[q] for q in questions]


def test_ppkit_ask_does_not_load_fastapi():
    code = ("import sys, ppkit, ppkit.cli; ppkit.cli.build_parser(bench=False); "
            "print(sorted(m for m in ('fastapi', 'uvicorn', 'starlette') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"



def test_workers_each_listen_and_share_the_connections(tmp_path):
    # `ppkit serve --workers N` runs ppkit.serve.workers.run_workers: each process binds the port itself, so a
    # burst of keep-alive connections spreads over them instead of landing on the process that woke first
    # (uvicorn's shared socket: one of two processes took 92% of the work). Here over a tiny app that answers
    # its process id: 16 connections all on one of two sockets has a chance of 2^-15. SIGTERM stops them all.
    from ppkit.core.config import child_env
    from ppkit.serve.workers import reuse_port_supported

    if not reuse_port_supported():
        pytest.skip("no SO_REUSEPORT here: uvicorn's own workers serve")
    (tmp_path / "pid_app.py").write_text(
        "import os\n\n\ndef make():\n    async def app(scope, receive, send):\n"
        "        if scope['type'] != 'http':\n            return\n"
        "        await send({'type': 'http.response.start', 'status': 200, 'headers': []})\n"
        "        await send({'type': 'http.response.body', 'body': str(os.getpid()).encode()})\n"
        "    return app\n", encoding="utf-8")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = ("import sys; from ppkit.serve.workers import run_workers; "
            f"sys.exit(run_workers(2, '127.0.0.1', {port}, app='pid_app:make', log_level='warning'))")
    env = child_env(PYTHONPATH=f"{tmp_path}:{Path(ppkit.__file__).parent.parent}")
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    clients = [httpx.Client(base_url=url, timeout=30) for _ in range(16)]
    try:
        seen: set[str] = set()
        end = time.monotonic() + 120  # a bound for a stuck start, not a timing assertion
        while len(seen) < 2:  # both workers up (a fresh connection each time: the kernel picks a socket)
            assert proc.poll() is None, proc.stderr.read().decode(errors="replace")[-2000:]
            assert time.monotonic() < end, f"only {len(seen)} worker(s) answered"
            try:
                seen.add(httpx.get(url, timeout=5).text)
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        pids: list[str] = [""] * 16
        threads = [threading.Thread(target=lambda i=i: pids.__setitem__(i, clients[i].get("/").text))
                   for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        again = [c.get("/").text for c in clients]  # kept alive: the same process answers again
        assert set(pids) == seen and again == pids, (pids, seen)
    finally:
        for c in clients:
            c.close()
        proc.terminate()
        proc.wait(60)
    assert proc.returncode == 0
    for pid in seen:  # the workers stopped with the supervisor
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


# -- admission: answer work first come, first served (ppkit.serve.admission) --------------------------------

def test_slots_go_in_arrival_order_and_a_late_or_cancelled_waiter_leaves_no_slot_taken():
    order: list[str] = []

    async def main():
        admission = Admission(1, late=lambda: TimeoutError("late"))
        release = await admission.acquire()

        async def take(name, until=None):
            try:
                async with admission.slot(until):
                    order.append(name)
            except TimeoutError:
                order.append(f"{name} late")

        async with anyio.create_task_group() as tg:
            for name in ("a", "b", "c"):
                tg.start_soon(take, name)
                await anyio.wait_all_tasks_blocked()
            tg.start_soon(take, "d", anyio.current_time() - 1)  # already past its deadline (monotonic clock)
            await anyio.wait_all_tasks_blocked()
            with anyio.CancelScope() as scope:  # a waiter whose client went away
                scope.cancel()
                await admission.acquire()
            assert admission.waiting() == 3
            release()
        async with admission.slot():  # every slot given back
            order.append("e")

    anyio.run(main)
    assert order == ["d late", "a", "b", "c", "e"]


def test_a_stream_queued_past_its_deadline_ends_with_the_deadline_error(index):
    engine, pulled = Engine(index, deadline=0.3), []

    def events():  # the first event, then what must not run: the request never leaves the queue
        yield AnalysisEvent({})
        pulled.append("the rest")
        yield Delta("never")

    async def main():
        admission = Admission(1, late=engine.deadline_error)
        release = await admission.acquire()  # another request answering
        failed, rest = await _started(engine, admission, events(), time.monotonic() - 1)  # arrived 1 s ago
        got = [event async for event in rest]
        release()
        return failed, got

    failed, got = anyio.run(main)
    assert failed is None and [e.type for e in got] == ["analysis", "error"] and pulled == []
    assert engine.error_data(got[1].error) == {
        "error": "DeadlineExceeded", "message": "the answer took longer than this server's deadline of 0.3 s; ask a "
        "narrower question, or start the server with a longer --deadline"}


class Slow(ExtractiveSynthesizer):
    """The first answer in ``pieces`` deltas ``delay`` seconds apart (each its own step), the others at once;
    counts the answers started."""

    def __init__(self, pieces: int, delay: float):
        super().__init__()
        self.pieces, self.delay, self.started = pieces, delay, 0

    def stream(self, question, sections, analysis=None):
        self.started += 1
        text, info = self.synthesize(question, sections, analysis)
        for _ in range(self.pieces if self.started == 1 else 1):
            threading.Event().wait(self.delay if self.started == 1 else 0)
            yield Delta(".")
        return text, info


def test_a_client_gone_while_queued_never_runs_and_the_next_keeps_its_turn(index):
    slow = Slow(pieces=3, delay=0.25)
    with live_server(create_app(Engine(index, synthesizer=slow, deadline=0), ServeSettings())) as url:
        first: list = []

        def ask_first():
            with httpx.Client(base_url=url, timeout=30) as http:
                first.append(parse_sse(http.post("/v1/ask/stream", json={"question": Q2}).text))

        t = threading.Thread(target=ask_first)
        t.start()
        for _ in range(3000):  # a bound for a stuck server, not a timing assertion
            if slow.started:
                break
            threading.Event().wait(0.01)
        with httpx.Client(base_url=url, timeout=30) as http:
            with http.stream("POST", "/v1/ask/stream", json={"question": Q2}) as r:
                for line in r.iter_lines():
                    if line == "event: analysis":
                        break  # queued behind the first answer (0.75 s): its client goes away
            after = http.post("/v1/ask", json={"question": Q2})  # queued after the one that left
        t.join(30)
    assert after.status_code == 200 and [e for e, _ in first[0]][-1] == "done"
    assert slow.started == 2  # the first and the last: the one that left never started its answer
