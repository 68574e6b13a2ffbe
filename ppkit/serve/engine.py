"""One loaded index shared by a server's requests, and what a response may say.

The conductor (:func:`ppkit.pipeline.stream`) is the only pipeline: :class:`Engine` steps its event stream
for each request, one step at a time under one lock per index. The index keeps lazy caches (verified source
lines, rendered ranges, BM25, the query vectors, the structural re-ranker) that are not safe to fill from two
threads at once; the lock makes every step see them whole, while requests still interleave between steps
(a slow reader of a stream does not hold the others up). The lock is fair (:class:`FairLock`): steps get it
in the order they asked for it, except that a request's first step (the analysis, the stream's first event)
goes before the waiting later steps of other requests, so a new stream's first event waits for one step at
most, not for every request ahead of it. Each step already runs in the stream's own context (its deadline
and fallbacks), whatever thread pulls it. A process uses about one core this way; ``ppkit serve --workers N``
runs N processes, each with its own index.

A request has a deadline (``Config.ask_deadline``, ``PPKIT_ASK_DEADLINE``, the one that bounds the Gemini
calls of an answer): past it the stream is closed and ends with an ``error`` event. A consumer that stops
pulling (a client gone) closes the stream: its remaining steps never run. Nothing is cached between
requests beyond the index's own caches.

Responses never carry a folder path, a key or a traceback: :meth:`Engine.scrub` replaces the index folder,
the documents' paths and the secrets in error messages, answers lose their images' absolute paths, and an
unexpected failure is reported as ``InternalError`` with no detail (the server's log has it). This module
does not import FastAPI.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..answer.events import Citation, Done, ErrorEvent, Event, SectionsEvent
from ..answer.synth import Answer
from ..core.config import cache_dir, gemini_key
from ..core.errors import InvalidInput, MissingDependency, MissingFile, NotFound, PpkitError
from ..indexing.index import IndexFormatError, IndexWriteError, StaleIndexError, UntrustedIndex
from ..llm.client import LLMError
from ..pipeline import AskOptions, Index, stream

__all__ = ["Engine", "FairLock", "DeadlineExceeded", "status_of", "error_body", "sources_of", "MAX_SECTION_LINES"]

log = logging.getLogger("ppkit.serve")

MAX_SECTION_LINES = 5000  # lines of one section sent by the sections route (a document root's subtree is all of it)

# errors that say the server's index or setup is wrong, not the request: 503
_SERVER_SIDE = (StaleIndexError, UntrustedIndex, IndexFormatError, IndexWriteError, MissingFile, MissingDependency,
                LLMError)
# /a/b or /a/b/c.md, not 10/31, http://... or this server's own routes (/v1/documents)
_ABS_PATH = re.compile(r"(?<![\w.:/])/(?!v1/)(?:[\w.~+-]+/)+[\w.~+-]*")
_SENTENCE_END = re.compile(r"; |\. (?=[A-Z(])|\n")  # where a message's diagnosis ends and its advice begins


class DeadlineExceeded(PpkitError):
    """A request ran past the server's per-request deadline."""


def status_of(error: BaseException) -> int:
    """The HTTP status of an error a request ended with: 400 a bad question or option, 404 a name that is not
    there, 503 the server's index or setup, 504 the deadline, 500 anything else (a bug)."""
    if isinstance(error, DeadlineExceeded):
        return 504
    if isinstance(error, _SERVER_SIDE):
        return 503
    if isinstance(error, NotFound):
        return 404
    if isinstance(error, InvalidInput):
        return 400
    return 500


def error_body(kind: str, message: str) -> dict:
    """The JSON body of every error response: ``{"error": {"type", "message"}}`` (OpenAI's shape)."""
    return {"error": {"type": kind, "message": message}}


class FairLock:
    """A lock granted in the order it was asked for; an urgent holder (a request's first step) goes before the
    waiting others. Python's ``threading.Lock`` is not fair: the thread that releases it often takes it again
    before a waiting one wakes, so under load some requests wait for many steps of others.

    >>> lock = FairLock()
    >>> with lock.hold(urgent=True):
    ...     pass
    """

    def __init__(self):
        self._cond = threading.Condition(threading.Lock())
        self._held = False
        self._waiting: tuple[deque, deque] = (deque(), deque())  # urgent, then the others; first come first

    def waiting(self) -> int:
        """How many threads wait for the lock."""
        with self._cond:
            return len(self._waiting[0]) + len(self._waiting[1])

    @contextmanager
    def hold(self, *, urgent: bool = False):
        """Hold the lock for the ``with`` block, after the urgent holders that asked before (and, when not
        ``urgent``, after every urgent holder waiting and the others that asked before)."""
        me, queue = object(), self._waiting[0 if urgent else 1]
        with self._cond:
            queue.append(me)
            try:
                while self._held or (self._waiting[0] or self._waiting[1])[0] is not me:
                    self._cond.wait()
            except BaseException:
                queue.remove(me)
                self._cond.notify_all()
                raise
            queue.popleft()
            self._held = True
        try:
            yield
        finally:
            with self._cond:
                self._held = False
                self._cond.notify_all()


class Engine:
    """An index shared by the requests of one server process; see the module docstring.

    Args:
        index: the loaded index (:func:`ppkit.pipeline.load_index`).
        synthesizer: the synthesizer to answer with (default: the one the index's config calls for).
        deadline: seconds one request may take (default ``index.config.ask_deadline``; 0: none).
        secrets: strings never to send back (the API token; the Gemini key is added here).

    >>> engine = Engine(ppkit.load_index("/tmp/amd-index"))  # doctest: +SKIP
    >>> [e.type for e in engine.events("What is AMD's quick ratio?", AskOptions.of(k=3))]  # doctest: +SKIP
    """

    def __init__(self, index: Index, *, synthesizer=None, deadline: float | None = None, secrets=()):
        self.index = Index.of(index)
        self.synthesizer = synthesizer
        self.deadline = index.config.ask_deadline if deadline is None else deadline
        self._lock = FairLock()
        self._hidden: list[tuple[str, str]] = []
        self._hide_paths(index, {s: "<secret>" for s in (*secrets, gemini_key()) if s})

    def _hide_paths(self, index: Index, hidden: dict[str, str]) -> None:
        """Add ``index``'s folder and its documents' paths to what a response never shows."""
        hidden = {**dict(self._hidden), **hidden}
        for rec in index.manifest["documents"]:
            for p in (rec.get("source"), rec.get("pdf")):
                if p:
                    hidden[str(p)] = rec["doc"]
                    hidden.setdefault(str(Path(p).parent), "<documents>")
        for p in (index.folder, cache_dir()):
            if p is not None:
                hidden.setdefault(str(p), "<index>")
        self._hidden = sorted(hidden.items(), key=lambda kv: -len(kv[0]))  # longest first: a file before its folder

    def adopt(self, index: Index) -> None:
        """Answer from ``index`` from now on (a new version of the same folder, after an upload or a removal):
        it is warmed first, then swapped in between two steps; a stream already running keeps the index it
        started with, so no answer mixes the two."""
        index = Index.of(index)
        for _ in stream(index, "What was the total revenue?", AskOptions.of(k=1, docs=index.docs[:1] or None),
                        synthesizer=self.synthesizer):
            pass
        with self._lock.hold():
            self._hide_paths(index, {})
            self.index = index

    def __repr__(self) -> str:
        return f"Engine({len(self.index.docs)} documents, deadline={self.deadline})"

    # -- what a response may say -------------------------------------------------------------------------------
    def hide(self, secret: str) -> None:
        """Never send ``secret`` back (it is replaced in every scrubbed message)."""
        self._hidden = sorted([*self._hidden, (secret, "<secret>")], key=lambda kv: -len(kv[0]))

    def scrub(self, text: str) -> str:
        """``text`` without the index folder, the documents' paths, the secrets or any other absolute path."""
        for raw, shown in self._hidden:
            text = text.replace(raw, shown)
        return _ABS_PATH.sub("<path>", text)

    def error_data(self, error: BaseException, names: dict[str, str] | None = None) -> dict:
        """An ``error`` event's payload, safe to send: the error's type and its scrubbed message (``names``: more
        paths to show as a name, e.g. an upload's stored file); a bug is ``InternalError`` and its detail goes to
        the log only. An error of the server's own index or setup (503) says what is wrong, not the commands that
        fix it (the operator's, in the server's log: a client cannot run them)."""
        if not isinstance(error, PpkitError):
            log.error("request failed", exc_info=error)
            return {"error": "InternalError", "message": "the server failed on this request; its log has the details"}
        message = str(error)
        for raw, shown in sorted((names or {}).items(), key=lambda kv: -len(kv[0])):
            message = message.replace(raw, shown)
        message = self.scrub(message)
        if isinstance(error, _SERVER_SIDE):
            log.warning("%s: %s", type(error).__name__, error)  # the operator's: paths and commands included
            message = _SENTENCE_END.split(message, maxsplit=1)[0] + ": this server's index needs its operator (the " \
                "server's log says what to do)"
        return {"error": type(error).__name__, "message": message}

    def event_data(self, event: Event) -> dict:
        """``event.data()``, safe to send (see :meth:`error_data`)."""
        return self.error_data(event.error) if isinstance(event, ErrorEvent) else event.data()

    @staticmethod
    def answer_data(answer: Answer) -> dict:
        """``answer.to_dict()`` (the JSON of ``ppkit ask --json``) without the images' absolute file paths."""
        d = answer.to_dict()
        d["images"] = [{k: v for k, v in im.items() if k != "resolved"} for im in d["images"]]
        return d

    # -- asking ------------------------------------------------------------------------------------------------
    def resolve(self, name: str) -> str:
        """The indexed document ``name`` names (case-insensitive), or a NotFound that echoes neither a path nor the
        index's other names: a name with ``/`` or ``\\`` is refused as it is (scrubbed, a document's path would
        read as its name and confirm it), and ``GET /v1/documents`` lists the names."""
        if "/" in name or "\\" in name:
            raise NotFound("a document is named, not given by its path: GET /v1/documents lists the names")
        try:
            return self.index.resolve_doc(name)
        except NotFound:
            raise NotFound(f"no document {name[:100]!r} in this index: GET /v1/documents lists them") from None

    def options(self, *, k: int | None = None, docs: list[str] | None = None, history: list | None = None) -> AskOptions:
        """The conductor's options for a request; a document name not in the index is an InvalidInput."""
        if docs is not None:
            try:
                docs = [self.resolve(d) for d in docs]
            except NotFound as e:
                raise InvalidInput(str(e)) from None
        return AskOptions.of(k=k, docs=docs, history=history or None)

    def until(self, start: float) -> float | None:
        """The ``time.monotonic()`` instant a request that arrived at ``start`` must be done by (None: no deadline)."""
        return start + self.deadline if self.deadline else None

    def deadline_error(self) -> DeadlineExceeded:
        """The error of a request past its deadline (running or still queued)."""
        return DeadlineExceeded(f"the answer took longer than this server's deadline of {self.deadline:g} s; ask a "
                                "narrower question, or start the server with a longer --deadline")

    def events(self, question: str, options: AskOptions, *, start: float | None = None) -> Iterator[Event]:
        """The conductor's events for ``question``, each step taken under the index's lock; past the deadline
        (counted from ``start``, a ``time.monotonic()`` instant, default the first step), an ``error`` event
        (:class:`DeadlineExceeded`) ends it. The first step is urgent (:class:`FairLock`). Closing this
        generator closes the stream."""
        start = time.monotonic() if start is None else start
        steps = stream(self.index, question, options, synthesizer=self.synthesizer)
        first = True
        try:
            while True:
                if self.deadline and time.monotonic() - start > self.deadline:
                    yield ErrorEvent(self.deadline_error())
                    return
                with self._lock.hold(urgent=first):
                    try:
                        event = next(steps)
                    except StopIteration:
                        return
                first = False
                yield event
        finally:
            with self._lock.hold():
                steps.close()

    def ask(self, question: str, options: AskOptions, *, start: float | None = None
            ) -> tuple[list[Event], Answer | None]:
        """All of :meth:`events` and the Answer (None when the last event is an ``error``)."""
        events = list(self.events(question, options, start=start))
        last = events[-1] if events else None
        return events, (last.answer if isinstance(last, Done) else None)

    # -- documents and sections --------------------------------------------------------------------------------
    def documents(self) -> list[dict]:
        """Each indexed document: name, company, ticker, period, form, PDF pages, lines and sections."""
        out = []
        for rec in self.index.manifest["documents"]:
            meta = rec.get("metadata") or {}
            out.append({"name": rec["doc"], "company": meta.get("company"), "ticker": meta.get("ticker"),
                        "period": meta.get("period"), "form": meta.get("form_type"), "pages": rec.get("page_count"),
                        "lines": rec.get("n_lines"), "chunks": rec.get("n_chunks")})
        return out

    def section(self, doc: str, node_id: str, *, subtree: bool = False) -> dict:
        """A section's source lines with their numbers and PDF pages (for a click-through from a citation):
        the indexed section's lines (its own text when it was not indexed alone), or with ``subtree`` the node
        and everything under it; at most :data:`MAX_SECTION_LINES` lines (``truncated`` says so)."""
        doc = self.resolve(doc)
        node = self.index.trees[doc][node_id]
        with self._lock.hold(urgent=True):  # the index's verified-lines cache (one short step)
            a, b = ((node.line_start, node.subtree_end) if subtree
                    else self.index.units(doc).get(node_id, (node.line_start, node.text_end)))
            lines = self.index.lines(doc)[a - 1: b]
            pages = self.index.pages_of(doc, [(a, b)])
        shown = lines[:MAX_SECTION_LINES]
        return {"doc": doc, "node_id": node_id, "title": node.title, "breadcrumb": node.breadcrumb,
                "line_start": a, "line_end": b, "pages": [{"page": p, "line_start": s, "line_end": e}
                                                          for p, s, e in pages],
                "lines": [{"line": a + i, "text": t} for i, t in enumerate(shown)],
                "truncated": len(shown) < len(lines)}

    def warm(self) -> None:
        """Load what the first question would (the embedder, BM25, the re-ranker's vectors, every document's
        statement map) before serving: one question over all the documents."""
        for _ in self.events("What was the total revenue?", self.options(k=1)):
            pass


def sources_of(events: list[Event]) -> tuple[list[dict], list[dict]]:
    """The sections retrieved (``sections`` event) and the citations (``citation`` events) among ``events``."""
    sections = next((e.data()["sections"] for e in events if isinstance(e, SectionsEvent)), [])
    return sections, [e.data() for e in events if isinstance(e, Citation)]
