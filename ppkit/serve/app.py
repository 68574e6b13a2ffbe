"""The FastAPI app of ``ppkit serve``: the routes over :class:`ppkit.serve.engine.Engine`.

Routes (OpenAPI at ``/docs``, ``/openapi.json``):

* ``POST /v1/ask`` - the answer, the same JSON as ``ppkit ask --json``;
* ``POST /v1/ask/stream`` - the conductor's events as Server-Sent Events (``event: <type>`` and a JSON
  ``data:`` line each, in the conductor's order; ``error`` instead of the rest on failure);
* ``POST /v1/chat/completions`` - OpenAI-compatible (``messages``, ``stream``); the sources, citations and
  answer block in one extra field ``ppkit``, sent once (in the last chunk when streaming); ``GET /v1/models``
  lists the one model, the served index (:mod:`ppkit.serve.openai_compat`: its id, ``usage``);
* ``GET /v1/sections/{doc}/{node}`` - a section's lines with their numbers and pages;
* ``POST /v1/compare`` - two indexed documents compared, the JSON of ``ppkit compare --json``
  (:mod:`ppkit.serve.compare_route`);
* ``GET /v1/documents`` - the indexed documents; ``GET /healthz`` - liveness, never authenticated;
* uploads, jobs and removal (:mod:`ppkit.serve.documents`); the web page at ``/`` (:mod:`ppkit.serve.web`).

With a token (``PPKIT_API_TOKEN``) every route but ``/healthz`` needs ``Authorization: Bearer <token>``. A foreign
``Host`` gets 421 and a write from another site's page 403 (:mod:`ppkit.serve.origin`); a body that does not
arrive in time 408. Bodies over ``PPKIT_SERVE_MAX_BODY`` bytes get a 413 before they are parsed; a bad body a 400
(not JSON) or 422 (wrong fields or types) with a one-line message; no response carries a path, a key or a traceback.
Streams are pulled one event at a time from a worker thread; a client that goes away closes its stream.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator

import anyio
from fastapi import FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..answer.answered import verdict
from ..answer.events import Delta, Done, ErrorEvent, Event, VerificationEvent
from ..core.config import Config, ServeSettings, index_dir_override, serve_settings
from ..core.errors import InvalidInput, PpkitError
from ..pipeline import load_index
from .compare_route import add_compare_route
from .admission import ANSWER_SLOTS, Admission
from .apidocs import add_api_docs
from .engine import DeadlineExceeded, Engine, error_body, sources_of, status_of
from .documents import add_document_routes
from .models import AskRequest, ChatRequest
from .openai_compat import count_tokens, model_id, models_list, usage
from .origin import SameOrigin
from .web import add_web_page, is_public

__all__ = ["create_app", "app_from_env", "sse"]

_END = object()


def sse(event: str | None, data) -> bytes:
    """One Server-Sent Event: an ``event:`` line (when named) and one JSON ``data:`` line."""
    body = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return ((f"event: {event}\n" if event else "") + f"data: {body}\n\n").encode()


class _ClosingStream(StreamingResponse):
    """A streaming response that closes its body iterator however the response ends (a client gone
    included), so the conductor's stream stops where it was."""

    async def __call__(self, scope, receive, send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):
                await self.body_iterator.aclose()


async def _close(events: Iterator[Event]) -> None:
    """Close ``events`` in a worker thread (it takes the index's lock), whatever cancels the caller."""
    with anyio.CancelScope(shield=True):
        await anyio.to_thread.run_sync(events.close)


class _Failed:
    """An error the producer's thread raised, handed to the loop to be raised there."""

    def __init__(self, error: BaseException):
        self.error = error


class _Producer:
    """The rest of a stream's events, stepped by one thread of its own from start to end without waiting for
    the response (each event handed to the event loop as it comes: no thread hop between two steps); ``release``
    (the admission's slot) is called in the loop when the steps end. Made and iterated in the event loop."""

    def __init__(self, events: Iterator[Event], release):
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue = asyncio.Queue()
        self._stop, self._ended = threading.Event(), False
        self._events, self._release = events, release
        threading.Thread(target=self._run, name="ppkit-answer", daemon=True).start()

    def _hand(self, item) -> None:
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: the server stopped
            pass

    def _run(self) -> None:
        try:
            for event in self._events:
                self._hand(event)
                if self._stop.is_set():
                    break
        except BaseException as e:  # noqa: BLE001 - raised again in the loop
            self._hand(_Failed(e))
        finally:
            try:
                self._events.close()
            finally:
                self._hand(_END)
                try:
                    self._loop.call_soon_threadsafe(self._release)
                except RuntimeError:
                    pass

    async def __aiter__(self) -> AsyncIterator[Event]:
        while True:
            item = await self._queue.get()
            if item is _END:
                self._ended = True
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item

    async def stop(self) -> None:
        """Stop the thread after its current step and wait for it (its client gone, say)."""
        self._stop.set()
        with anyio.CancelScope(shield=True):
            while not self._ended:
                self._ended = await self._queue.get() is _END


async def _started(engine: Engine, admission: Admission, events: Iterator[Event], start: float
                   ) -> tuple[JSONResponse | None, AsyncIterator[Event] | None]:
    """The stream's first event taken in a worker thread before the response starts and before the queue
    (:mod:`ppkit.serve.admission`), the rest once admitted (:class:`_Producer`): a stream that fails at once (an
    empty question, say) is an error response with its status, not a 200 with an ``error`` event; one still
    queued at its deadline ends with an ``error`` event. Closing the iterator returned stops the work."""
    try:
        first = await anyio.to_thread.run_sync(next, events, _END)
    except BaseException:
        await _close(events)
        raise
    if isinstance(first, ErrorEvent):
        await _close(events)
        data = engine.error_data(first.error)
        return _error(status_of(first.error), data["error"], data["message"]), None

    async def rest():
        try:
            if first is _END:
                return
            yield first
            try:
                release = await admission.acquire(engine.until(start))
            except DeadlineExceeded as e:  # still queued at the deadline
                yield ErrorEvent(e)
                return
            producer = _Producer(events, release)
            try:
                async for event in producer:
                    yield event
            finally:
                await producer.stop()
        finally:
            await _close(events)

    return None, rest()


def _error(status: int, kind: str, message: str) -> JSONResponse:
    return JSONResponse(error_body(kind, message), status_code=status)


def _validation_message(exc: RequestValidationError) -> tuple[int, str]:
    """400 for a body that is not JSON, else 422; one line naming each bad field."""
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return 400, "the body is not valid JSON: send a JSON object with Content-Type: application/json"
    parts = []
    for e in errors[:10]:
        where = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "body"
        msg = "unknown field (not allowed)" if e.get("type") == "extra_forbidden" else e.get("msg", "invalid")
        parts.append(f"{where}: {msg}")
    return 422, "; ".join(parts) + ("" if len(errors) <= 10 else f"; and {len(errors) - 10} more")


class _Guard:
    """ASGI middleware: the bearer token (every route but ``/healthz``) and the body size limit, checked
    before the app reads or parses anything."""

    def __init__(self, app, settings: ServeSettings):
        self.app, self.settings = app, settings

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        token = self.settings.token
        path = scope.get("path", "")
        if token and path != "/healthz" and not is_public(path):  # the page's own files hold no data
            scheme, _, given = headers.get("authorization", "").strip().partition(" ")
            if scheme.casefold() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
                return await _error(401, "Unauthorized", "this server needs a token: send the header "
                                    "'Authorization: Bearer <token>' (the PPKIT_API_TOKEN it was started with)"
                                    )(scope, receive, _with_header(send, b"www-authenticate", b"Bearer"))
        limit = self.settings.max_body
        too_big = _error(413, "RequestTooLarge", f"the request body is over this server's limit of {limit} bytes "
                                                 "(PPKIT_SERVE_MAX_BODY): send a shorter question or history")
        if path in ("/v1/documents", "/v1/documents/cover") and scope.get("method") == "POST":  # a file: its own limit
            limit = self.settings.max_upload
            too_big = _error(413, "RequestTooLarge", f"the upload is over this server's limit of {limit} bytes "
                                                     "(PPKIT_SERVE_MAX_UPLOAD): send a smaller file")
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            return await too_big(scope, receive, send)
        if scope.get("method") not in ("POST", "PUT", "PATCH"):
            return await self.app(scope, receive, send)
        parts, size, more = [], 0, True  # read it here, counting (a chunked body has no length), then hand it on
        start = asyncio.get_running_loop().time()
        while more:
            # the body has body_seconds, plus one per 64 KiB received: one sent a byte at a time is cut off
            left = start + self.settings.body_seconds + size / 65536 - asyncio.get_running_loop().time()
            try:
                message = await asyncio.wait_for(receive(), max(left, 0.001))
            except asyncio.TimeoutError:
                return await _error(408, "RequestTimeout", f"the request body did not arrive in time ({size} bytes in "
                                    f"{self.settings.body_seconds:g} s and more): send it again")(scope, receive, send)
            if message["type"] != "http.request":
                return
            parts.append(message.get("body", b""))
            size += len(parts[-1])
            more = message.get("more_body", False)
            if size > limit:
                return await too_big(scope, receive, send)
        body, sent = b"".join(parts), False  # joined once: an upload comes in many pieces

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)


def _with_header(send, name: bytes, value: bytes):
    async def wrapped(message):
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), (name, value)]}
        await send(message)
    return wrapped


def _history(turns) -> list[dict] | None:
    return [{"question": t.question, "answer": t.answer} for t in turns] if turns else None


def _chat_turns(req: ChatRequest) -> tuple[str, list[dict] | None]:
    """The question (the last message, the user's) and the earlier user/assistant pairs as the history."""
    last = req.messages[-1]
    if last.role != "user" or not last.text().strip():
        raise InvalidInput("the last message must be the user's question (role 'user', non-empty content)")
    history: list[dict] = []
    for m in req.messages[:-1]:
        if m.role == "user":
            history.append({"question": m.text(), "answer": ""})
        elif m.role == "assistant" and history:
            history[-1]["answer"] = m.text()
    return last.text(), history or None


def create_app(engine: Engine, settings: ServeSettings | None = None, *, slots: int = ANSWER_SLOTS) -> FastAPI:
    """The ASGI app over ``engine`` (``settings``: default :func:`ppkit.core.config.serve_settings`; ``slots``:
    requests answering at a time, the others queued in arrival order, :mod:`ppkit.serve.admission`).

    >>> app = create_app(Engine(ppkit.load_index("/tmp/amd-index")))  # doctest: +SKIP
    """
    settings = settings or serve_settings()
    if settings.token:
        engine.hide(settings.token)
    app = FastAPI(title="ppkit", version="1", summary="Proxy-Pointer RAG: cited answers over an index of documents",
                  description="Streamed, cited answers from the conductor; see docs/serve.md.",
                  docs_url=None, redoc_url=None)  # /docs is ppkit.serve.apidocs: offline, no CDN
    app.add_middleware(_Guard, settings=settings)
    app.add_middleware(SameOrigin, allowed_hosts=settings.allowed_hosts, any_ip=settings.any_ip)  # outermost
    admission = Admission(slots, late=engine.deadline_error)
    started = int(time.time())  # the served model's "created"
    count_tokens("ppkit")  # the usage's tokenizer read now, not by the first chat request

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        status, message = _validation_message(exc)
        return _error(status, "InvalidRequest", message)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        return _error(exc.status_code, "HTTPError", str(exc.detail))

    @app.exception_handler(PpkitError)
    async def _ppkit(request: Request, exc: PpkitError):
        data = engine.error_data(exc)
        return _error(status_of(exc), data["error"], data["message"])

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception):
        data = engine.error_data(exc)
        return _error(500, data["error"], data["message"])

    @app.get("/healthz")
    async def healthz():
        """Liveness: the server is up and its index loaded."""
        return {"status": "ok", "documents": len(engine.index.docs)}

    @app.get("/v1/documents")
    async def documents():
        """The indexed documents: name, company, ticker, period, form, PDF pages, lines, chunks."""
        return {"documents": engine.documents()}

    @app.get("/v1/sections/{doc}/{node}")
    async def section(doc: str = Path(max_length=200), node: str = Path(pattern=r"^\d{4}$"),
                      subtree: bool = Query(False, description="the node and everything under it")):
        """A section's source lines with their numbers and PDF pages (for a citation's click-through)."""
        return await anyio.to_thread.run_sync(lambda: engine.section(doc, node, subtree=subtree))

    @app.post("/v1/ask")
    async def ask(req: AskRequest):
        """The answer: the same JSON as ``ppkit ask --json``."""
        start, opts = time.monotonic(), engine.options(k=req.k, docs=req.docs, history=_history(req.history))
        async with admission.slot(engine.until(start)):  # a 504 when still queued at the deadline
            events, answer = await anyio.to_thread.run_sync(lambda: engine.ask(req.question, opts, start=start))
        if answer is None:
            error = events[-1].error if events and isinstance(events[-1], ErrorEvent) else RuntimeError("no answer")
            data = engine.error_data(error)
            return _error(status_of(error), data["error"], data["message"])
        return JSONResponse(engine.answer_data(answer))

    @app.post("/v1/ask/stream", response_class=StreamingResponse,
              responses={200: {"content": {"text/event-stream": {}}, "description": "Server-Sent Events"}})
    async def ask_stream(req: AskRequest):
        """The conductor's events as Server-Sent Events: analysis, sections, answer, delta..., citation...,
        verification, done; or error instead of the rest."""
        start, opts = time.monotonic(), engine.options(k=req.k, docs=req.docs, history=_history(req.history))
        failed, events = await _started(engine, admission, engine.events(req.question, opts, start=start), start)
        if failed is not None:
            return failed

        async def body():
            try:
                async for event in events:
                    yield sse(event.type, engine.event_data(event))
            finally:
                await events.aclose()

        return _ClosingStream(body(), media_type="text/event-stream", headers=_NO_BUFFER)

    @app.get("/v1/models")
    async def models():
        """OpenAI-compatible model list: one model, the served index (its id is the index's name)."""
        return models_list(engine.index, created=started)

    @app.get("/v1/models/{model}")
    async def model(model: str = Path(max_length=200)):
        """One model of the list: the served index, by its id (404 for any other)."""
        listed = models_list(engine.index, created=started)["data"]
        if model != listed[0]["id"]:
            return _error(404, "NotFound", f"no model {model!r} here: this server serves {listed[0]['id']!r} "
                                           "(GET /v1/models)")
        return listed[0]

    @app.post("/v1/chat/completions")
    async def chat(req: ChatRequest):
        """OpenAI-compatible chat completions: the last user message answered, the earlier ones its history; the
        sources, citations and answer block in the extra field ``ppkit`` (once: in the last chunk when
        streaming). Any ``model`` is accepted; the reply names the served index."""
        question, history = _chat_turns(req)
        start, opts = time.monotonic(), engine.options(k=req.k, docs=req.docs, history=history)
        ident, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        head = {"id": ident, "created": created, "model": model_id(engine.index)}
        if not req.stream:
            async with admission.slot(engine.until(start)):
                events, answer = await anyio.to_thread.run_sync(lambda: engine.ask(question, opts, start=start))
            if answer is None:
                error = events[-1].error
                data = engine.error_data(error)
                return _error(status_of(error), data["error"], data["message"])
            return {**head, "object": "chat.completion",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": answer.text},
                                 "finish_reason": "stop"}],
                    "usage": usage(question, answer.text), "ppkit": _extra(events, answer)}

        failed, events = await _started(engine, admission, engine.events(question, opts, start=start), start)
        if failed is not None:
            return failed

        async def body():
            seen: list[Event] = []
            chunk = {**head, "object": "chat.completion.chunk"}
            yield sse(None, {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]})
            try:
                async for event in events:
                    seen.append(event)
                    if isinstance(event, Delta):
                        yield sse(None, {**chunk, "choices": [{"index": 0, "delta": {"content": event.text},
                                                               "finish_reason": None}]})
                    elif isinstance(event, ErrorEvent):
                        data = engine.error_data(event.error)
                        yield sse(None, error_body(data["error"], data["message"]))
                    elif isinstance(event, Done):
                        yield sse(None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                                         "usage": usage(question, event.answer.text),
                                         "ppkit": _extra(seen, event.answer)})
            finally:
                await events.aclose()
            yield sse(None, "[DONE]")

        return _ClosingStream(body(), media_type="text/event-stream", headers=_NO_BUFFER)

    add_document_routes(app, engine, max_upload=settings.max_upload)
    add_compare_route(app, engine)
    add_web_page(app)
    add_api_docs(app)
    return app


_NO_BUFFER = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def _extra(events: list[Event], answer) -> dict:
    """The ``ppkit`` field of a chat completion: sources (the sections retrieved), citations, the answer block
    (with its ``mode``: offline or gemini), the verdict on it (``verdict``: ``"verified"`` only when its quotes
    check and it answers the question, else why not; its kind and confidence beside it:
    :func:`ppkit.answer.answered.verdict`) and the verification report."""
    sources, citations = sources_of(events)
    report = next((e.data()["report"] for e in events if isinstance(e, VerificationEvent)), None)
    return {"sources": sources, "citations": citations, "answer": answer.to_dict()["answer"],
            "verdict": verdict(report, answer.block), "verification": report}


def app_from_env() -> FastAPI:
    """The app of one ``ppkit serve --workers N`` process: the index folder and options it was started with
    (``PPKIT_INDEX``, ``PPKIT_ASK_DEADLINE``, ``PPKIT_SERVE_TRUST_INDEX``), loaded and warmed here."""
    settings = serve_settings()
    engine = Engine(load_index(index_dir_override(), config=Config.from_env(), trust=settings.trust_index))
    engine.warm()
    return create_app(engine, settings)
