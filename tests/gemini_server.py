"""A small local stand-in for the Gemini REST API, for tests only.

It speaks just enough of ``generativelanguage.googleapis.com/v1beta`` for the real
google-genai client (pointed at it with ``HttpOptions(base_url=...)``):

* ``POST /v1beta/models/{model}:generateContent`` - replies come from a per-test
  script (a queue of :class:`Reply`); with an empty queue it answers HTTP 418 with
  "no scripted reply", which the client does not retry, so a missing script fails
  the test loudly.
* ``POST .../{model}:streamGenerateContent?alt=sse`` - the streamed form of the same call: its
  reply comes from the same ``generateContent`` script (a generation is one, streamed or not) and a
  successful one is sent as Server-Sent Events, the reply's text cut into pieces of at most
  ``Reply.piece`` characters (each ``data: {json}`` a reply of its own, the usage on the last), as the
  Gemini API streams; an error status is sent whole, as the API does before a stream starts.
* ``POST /v1beta/models/{model}:batchEmbedContents`` - what google-genai calls for
  ``models.embed_content`` with the Gemini API (one request per call, a list of
  contents inside). Scripted replies are used first; with an empty queue it returns
  deterministic vectors (a hash of each text, ``outputDimensionality`` long, NOT
  unit length) so embedding tests need no script.
* ``POST .../{model}:embedContent`` - the single-content form, same behaviour.

:meth:`GeminiServer.always` sets a reply for when an action's script is used up: the
failure modes of a real endpoint (hang: accept and never answer; slow; garbage).

Every request is recorded (path, model, action, parsed JSON body, API-key header)
in :attr:`GeminiServer.requests`, and how many bytes of each reply's body were written
before the client stopped reading in :attr:`GeminiServer.sent`. Nothing here talks to the network: the server
binds 127.0.0.1 on an ephemeral port.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

__all__ = ["GeminiServer", "Reply", "text_reply", "json_reply", "error_reply", "embed_values"]


@dataclass
class Reply:
    """One scripted HTTP reply: a status and a body (dict -> JSON, str -> sent as is), sent after
    ``delay`` seconds (to exercise the client's timeout); ``hang``: never answered."""

    status: int = 200
    body: dict | str = field(default_factory=dict)
    delay: float = 0.0
    hang: bool = False  # accept the request and never answer (until the server stops, at most 60 s)
    piece: int = 40  # streamed: characters of text per event
    length: bool = True  # send a Content-Length (False: the body runs to the connection's close)


def text_reply(text: str, *, tokens_in: int = 11, tokens_out: int = 7, thoughts: int = 0,
               model: str = "gemini-2.5-flash", finish: str = "STOP") -> Reply:
    """A successful generateContent reply whose only part is ``text``."""
    usage = {"promptTokenCount": tokens_in, "candidatesTokenCount": tokens_out,
             "totalTokenCount": tokens_in + tokens_out + thoughts}
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    return Reply(200, {
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": finish, "index": 0}],
        "usageMetadata": usage,
        "modelVersion": model,
        "responseId": "test-response",
    })


def json_reply(data, **kw) -> Reply:
    """A generateContent reply whose text is ``data`` as JSON (what a schema'd call returns)."""
    return text_reply(json.dumps(data), **kw)


def error_reply(status: int, message: str = "") -> Reply:
    """An API error in Google's error shape (429 RESOURCE_EXHAUSTED, 500 INTERNAL, ...)."""
    names = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
             503: "UNAVAILABLE"}
    return Reply(status, {"error": {"code": status, "message": message or f"scripted {status}",
                                    "status": names.get(status, "UNKNOWN")}})


def embed_values(text: str, dim: int) -> list[float]:
    """The deterministic vector the server returns for ``text`` (seeded by its sha256)."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return [round(float(x), 6) for x in np.random.default_rng(seed).normal(0.0, 1.0, dim) * 3.0]


def _content_text(content: dict) -> str:
    return "".join(p.get("text", "") for p in content.get("parts", []))


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"

    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_POST(self):
        owner = self.server.owner
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            body = {"_unparsed": raw.decode(errors="replace")}
        path = self.path.split("?", 1)[0]
        tail = path.rsplit("/", 1)[-1]  # "gemini-2.5-flash:generateContent"
        model, _, action = tail.partition(":")
        owner.requests.append({"path": path, "model": model, "action": action, "body": body,
                               "api_key": self.headers.get("x-goog-api-key")})
        reply = owner._next(STREAMED.get(action, action), body)
        if reply.hang:  # bounded: released when the server stops
            owner._stopping.wait(60)
            return
        if reply.delay:
            owner._stopping.wait(reply.delay)
        if action in STREAMED and reply.status == 200 and isinstance(reply.body, dict):
            data = "".join(f"data: {json.dumps(event)}\r\n\r\n" for event in _pieces(reply.body, reply.piece)).encode()
            kind = "text/event-stream"
        else:
            data = (reply.body if isinstance(reply.body, str) else json.dumps(reply.body)).encode()
            kind = "application/json; charset=UTF-8"
        self.send_response(reply.status)
        self.send_header("Content-Type", kind)
        if reply.length:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        sent = 0
        try:  # in pieces, so that a client that stops reading is seen: owner.sent says how far it got
            for i in range(0, len(data), 1 << 16):
                self.wfile.write(data[i:i + (1 << 16)])
                sent = min(len(data), i + (1 << 16))
        except (BrokenPipeError, ConnectionResetError):
            pass
        owner.sent.append(sent)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: "GeminiServer"


class GeminiServer:
    """The local Gemini stand-in. Use as a context manager or call start()/stop().

    >>> with GeminiServer() as srv:  # doctest: +SKIP
    ...     srv.script("generateContent", json_reply({"ids": [2, 1]}))
    """

    def __init__(self):
        self.requests: list[dict] = []  # every request received, in order
        self.sent: list[int] = []  # bytes of each reply body written before the client stopped reading
        self._queues: dict[str, deque[Reply]] = {}  # action -> scripted replies
        self._always: dict[str, Reply] = {}  # action -> the reply when its queue is empty (modes)
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, action: str, *replies: Reply) -> None:
        """Queue replies for ``action`` (``generateContent`` or ``batchEmbedContents``)."""
        with self._lock:
            self._queues.setdefault(action, deque()).extend(replies)

    def always(self, action: str, reply: Reply) -> None:
        """Answer every ``action`` request with ``reply`` once its script is used up: the server's
        modes, e.g. ``always("generateContent", Reply(hang=True))`` (an endpoint that accepts and
        never answers), ``Reply(delay=2)`` (slow), ``Reply(200, "<html>")`` (garbage)."""
        with self._lock:
            self._always[action] = reply

    def pending(self, action: str) -> int:
        """Scripted replies not yet used."""
        return len(self._queues.get(action, ()))

    def of(self, action: str) -> list[dict]:
        """The recorded requests for one action (``generateContent``: streamed ones too)."""
        return [r for r in self.requests if STREAMED.get(r["action"], r["action"]) == action]

    def _next(self, action: str, body: dict) -> Reply:
        with self._lock:
            q = self._queues.get(action)
            if q:
                return q.popleft()
            if action in self._always:
                return self._always[action]
        if action == "batchEmbedContents":
            return Reply(200, {"embeddings": [
                {"values": embed_values(_content_text(r.get("content", {})), _dim(r))} for r in body.get("requests", [])]})
        if action == "embedContent":
            return Reply(200, {"embedding": {"values": embed_values(_content_text(body.get("content", {})), _dim(body))}})
        return Reply(418, {"error": {"code": 418, "message": f"no scripted reply for {action}", "status": "UNKNOWN"}})

    def start(self) -> GeminiServer:
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), name="gemini-test-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # release hanging and slow handlers
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join(timeout=5)
            self._httpd = None

    def __enter__(self) -> GeminiServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


STREAMED = {"streamGenerateContent": "generateContent"}  # a streamed action -> the action whose script it uses


def _pieces(reply: dict, size: int) -> list[dict]:
    """A generateContent reply as the events of its stream: the text in pieces of ``size`` characters, each
    a reply with one text part; the finish reason and usage only on the last."""
    cands = reply.get("candidates") or []
    text = _content_text(cands[0].get("content", {})) if cands else ""
    chunks = [text[i:i + size] for i in range(0, len(text), size)] or [""]
    events = []
    for i, chunk in enumerate(chunks):
        last = i == len(chunks) - 1
        cand = {"content": {"role": "model", "parts": [{"text": chunk}]}, "index": 0}
        if last and cands and "finishReason" in cands[0]:
            cand["finishReason"] = cands[0]["finishReason"]
        event = {"candidates": [cand] if cands else [], "modelVersion": reply.get("modelVersion")}
        if last:
            event["usageMetadata"] = reply.get("usageMetadata", {})
            if "promptFeedback" in reply:  # a blocked prompt says why
                event["promptFeedback"] = reply["promptFeedback"]
        events.append(event)
    return events


def _dim(req: dict) -> int:
    return int(req.get("outputDimensionality") or (req.get("config") or {}).get("outputDimensionality") or 8)
