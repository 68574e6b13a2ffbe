"""The one module that talks to Gemini, through the maintained ``google-genai`` SDK.

:class:`GeminiClient` wraps ``google.genai.Client`` with what the pipeline needs:

* **retries** with exponential backoff on 408/429/5xx, timeouts and connection errors,
  a per-request timeout (``Config.llm_timeout``, ``Config.llm_attempts``), and an overall
  **deadline** shared by the calls of one run (:func:`online_run`; every ``ask`` is one);
* a record of the online stages that **fell back** to their offline twins in a run
  (:func:`fall_back`), which the pipeline copies into the answer's trace;
* **JSON output** with a schema (``response_mime_type="application/json"`` +
  ``response_schema``); a reply that is not valid JSON raises :class:`LLMError`
  carrying the raw reply, so callers can parse it themselves or fall back;
* an **on-disk cache** of plain files under ``cache_dir()/llm``: generations as
  JSON keyed by sha256 of model + endpoint + prompt + system + schema + settings, embeddings
  as one ``.npy`` per text keyed by model + endpoint + dimension + task + text (loaded with
  ``allow_pickle=False``). Re-running a notebook or a benchmark costs nothing.
  Writes are atomic (temp file + rename). Failed or unparseable replies are never
  cached;
* a **call log** (:attr:`GeminiClient.calls`) with tokens and timings for traces.

It does not build prompts or parse task-specific replies: the noise filter,
re-ranker and synthesizer that use it live beside their offline twins (see :mod:`ppkit.llm.parts`).
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import random
import re
import time
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..core.config import Config, gemini_base_url, gemini_key, offline_forced
from ..core.config import cache_dir as _default_cache_dir
from ..core.errors import InvalidInput, MissingDependency, PpkitError
from ..core.io import atomic_write

__all__ = ["LLMError", "LLMResult", "GeminiClient", "parse_json", "MAX_REPLY_CHARS", "MAX_REPLY_BYTES", "MAX_JSON_DEPTH", "OnlineRun", "online_run", "current_run",
           "fall_back", "online_or_offline"]

_CACHE_VERSION = 1  # bump when the cached record's meaning changes
_EMBED_BATCH = 100  # batchEmbedContents takes at most 100 contents per request
_RETRY_CODES = [408, 429, 500, 502, 503, 504]


class LLMError(PpkitError, RuntimeError):
    """A Gemini call that could not give a usable answer.

    Attributes:
        reply: the model's raw text when the call succeeded but the reply was unusable
            (e.g. not valid JSON); ``None`` when the call itself failed.
        status: the HTTP status of a failed call, when there was one.
    """

    def __init__(self, message: str, *, reply: str | None = None, status: int | None = None):
        super().__init__(message)
        self.reply = reply
        self.status = status


@dataclass
class OnlineRun:
    """One ask (or one benchmark question) as far as Gemini is concerned: a deadline shared by
    all its calls, the online stages that fell back to their offline twins, and whether the
    endpoint already gave no reply (then the later calls of the run fail at once instead of
    waiting again).

    Made by :func:`online_run`; every :class:`GeminiClient` call inside it reads it.
    """

    end: float | None  # time.monotonic() after which no call starts (None: no deadline)
    fallbacks: list[dict] = field(default_factory=list)  # {"stage", "used", "reason"}
    unreachable: str | None = None  # why the endpoint is given up for the rest of the run

    def remaining(self) -> float | None:
        """Seconds left (None: no deadline)."""
        return None if self.end is None else self.end - time.monotonic()


_RUN: ContextVar[OnlineRun | None] = ContextVar("ppkit_online_run", default=None)


@contextmanager
def online_run(deadline: float | None) -> Iterator[OnlineRun]:
    """Run the enclosed Gemini calls under one overall deadline (seconds; None or 0: none).

    Inside an outer run the outer one holds (its deadline and its record of fallbacks).

    >>> with online_run(60) as run:  # doctest: +SKIP
    ...     answer = index.ask("...")
    ...     run.fallbacks
    """
    outer = _RUN.get()
    if outer is not None:
        yield outer
        return
    run = OnlineRun(time.monotonic() + deadline if deadline else None)
    token = _RUN.set(run)
    try:
        yield run
    finally:
        _RUN.reset(token)


def current_run() -> OnlineRun | None:
    """The :class:`OnlineRun` the caller is inside, or None."""
    return _RUN.get()


def fall_back(stage: str, error: Exception | str, used: str) -> str:
    """Record that an online ``stage`` failed and its offline twin ``used`` ran instead; the note to show.

    The record goes to the current :class:`OnlineRun` (the pipeline copies it into the answer's
    trace; a benchmark marks the question and the run).
    """
    reason = " ".join(str(error).split())[:300]
    run = _RUN.get()
    if run is not None:
        run.fallbacks.append({"stage": stage, "used": used, "reason": reason})
    return f"online {stage} failed ({reason}); used the offline {used}"


def online_or_offline(online, offline, what: str):
    """``(online(), None)``, or ``(offline(), note)`` when the online call fails with an LLMError
    or google-genai is missing: an online step falls back to its offline rules and says so
    (and the fallback is recorded, see :func:`fall_back`)."""
    try:
        return online(), None
    except (LLMError, ImportError) as e:
        return offline(), fall_back(what, e, "rules")


@dataclass(frozen=True)
class LLMResult:
    """One generation.

    ``tokens_out`` counts the answer's tokens plus the model's thinking tokens (both are
    billed as output). For a cached result the token counts are those of the original
    call, and ``cached`` is True (it cost nothing this time).
    """

    text: str
    data: object  # the parsed JSON when a schema was given, else None
    model: str
    tokens_in: int
    tokens_out: int
    cached: bool
    seconds: float

    def __repr__(self) -> str:
        src = "cache" if self.cached else f"{self.seconds:.2f}s"
        return f"LLMResult({self.model}, {self.tokens_in} in / {self.tokens_out} out, {src}: {self.text[:60]!r})"


_FENCE = re.compile(r"^\s*```(?:json)?\s*+(.*?)\n?```\s*$", re.S)  # \s*+: the blanks are never given back


# the longest reply taken (characters): an answer is a few thousand; a runaway or hostile endpoint is not read on
MAX_REPLY_CHARS = 200_000
# the most bytes read of one generation's HTTP reply, streamed or not (reading stops there: it is not downloaded
# whole and cut after): a reply of MAX_REPLY_CHARS characters takes at most 12 bytes a character in JSON (an escaped
# astral character), plus the candidate's metadata (in a stream, repeated in every event)
MAX_REPLY_BYTES = 20 * MAX_REPLY_CHARS
# the deepest JSON nesting taken: the replies' schemas nest three levels; 100,000 brackets would overflow the parser
MAX_JSON_DEPTH = 32
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _json_depth(text: str) -> int:
    """The deepest bracket nesting of ``text`` outside its strings (one pass, no recursion)."""
    depth = deepest = 0
    for ch in _JSON_STRING.sub("", text):
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def parse_json(text: str):
    """Parse a JSON reply, tolerating a Markdown code fence around it.

    Raises:
        ValueError: the text is not JSON, or nests deeper than :data:`MAX_JSON_DEPTH` (a malformed
            reply like any other, so the caller falls back the same way).
    """
    m = _FENCE.match(text)
    body = m.group(1) if m else text
    if _json_depth(body) > MAX_JSON_DEPTH:
        raise ValueError(f"the JSON nests deeper than {MAX_JSON_DEPTH} levels")
    return json.loads(body)


def _key(material: dict) -> str:
    return hashlib.sha256(json.dumps(material, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


_NOTHING_LOST = ("Nothing was lost: finished calls are cached, so re-running repeats only this one. "
                 "To work without Gemini, run offline (PPKIT_OFFLINE=1).")


class GeminiClient:
    """Gemini through google-genai, with retries, timeouts, JSON output and an on-disk cache.

    Args:
        api_key: default :func:`ppkit.core.config.gemini_key` (``GEMINI_API_KEY`` / ``GOOGLE_API_KEY``,
            unless ``PPKIT_OFFLINE`` is set); no key is an :class:`LLMError`.
        base_url: the API endpoint; default ``config.gemini_base_url`` or ``$PPKIT_GEMINI_BASE_URL``
            (the tests point it at a local server), else Google's.
        model: default generation model (``config.gemini_model``, ``gemini-2.5-flash``).
        config: a :class:`ppkit.Config` (default ``Config()``: model names and ``gemini_base_url``).
        cache_dir: where cached replies go (default ``ppkit.core.config.cache_dir() / "llm"``).
        use_cache: read and write the cache (``False``: always call the API).
        timeout: seconds per HTTP request (default ``config.llm_timeout``).
        attempts: HTTP attempts per call, the first included (408/429/5xx, timeouts and
            connection errors are retried; default ``config.llm_attempts``).
        initial_delay / max_delay: exponential backoff between attempts, in seconds.

    Inside an :func:`online_run` (every ``ask`` is one) no request waits past the run's deadline:
    each attempt's timeout is cut to the time left, no retry starts after it, and once the endpoint
    gave no reply (a timeout or a connection failure after the retries) the run's later calls fail
    at once, so the pipeline's offline fallbacks take over without waiting again.

    The model and the endpoint are part of every cache key (Google's endpoint adds nothing, so its
    cached replies stay valid): a reply from a test server or another endpoint is never replayed
    for a different one. A reply over :data:`MAX_REPLY_CHARS` characters, or JSON nested deeper than
    :data:`MAX_JSON_DEPTH`, is an unusable reply like any other.

    >>> GeminiClient().generate("Say hi").text  # doctest: +SKIP
    """

    def __init__(self, api_key: str | None = None, *, base_url: str | None = None, model: str | None = None,
                 config: Config | None = None, cache_dir: Path | str | None = None, use_cache: bool = True,
                 timeout: float | None = None, attempts: int | None = None, initial_delay: float = 1.0,
                 max_delay: float = 30.0):
        self.config = config or Config()
        timeout = self.config.llm_timeout if timeout is None else timeout
        attempts = self.config.llm_attempts if attempts is None else attempts
        if attempts < 1:
            raise InvalidInput(f"attempts must be at least 1 (the first try), not {attempts}")
        if timeout <= 0:
            raise InvalidInput(f"timeout must be positive seconds, not {timeout}")
        key = api_key or gemini_key()
        if not key:
            why = ("PPKIT_OFFLINE is set, which turns Gemini off" if offline_forced()
                   else "no Gemini API key is set")
            raise LLMError(f"cannot call Gemini: {why}. Set GEMINI_API_KEY (and unset PPKIT_OFFLINE) to use it, "
                           "or run offline (the default parts need no key).")
        try:
            from google import genai
            from google.genai import types
        except ImportError:
            raise MissingDependency("talking to Gemini needs google-genai: pip install 'ppkit[gemini]'") from None
        self._types = types
        self.base_url = base_url or self.config.gemini_base_url or gemini_base_url()
        self.model = model or self.config.gemini_model
        self.cache_dir = Path(cache_dir) if cache_dir is not None else _default_cache_dir() / "llm"
        self.use_cache = use_cache
        self.attempts = attempts
        self.timeout = timeout
        self.initial_delay = initial_delay
        self.max_delay = max_delay
        # the retries are ours (_call), so that they stop at the run's deadline: the SDK tries once
        retry = types.HttpRetryOptions(attempts=1)
        # a generation's reply is read up to MAX_REPLY_BYTES and no further (_cap_reply)
        http = types.HttpOptions(timeout=int(timeout * 1000), retry_options=retry,
                                 client_args={"event_hooks": {"response": [_cap_reply]}},
                                 **({"base_url": self.base_url} if self.base_url else {}))
        self._client = genai.Client(api_key=key, http_options=http)
        # one dict per call: kind, model, tokens_in, tokens_out, cached, seconds (+ texts for embeddings)
        self.calls: list[dict] = []

    def __repr__(self) -> str:
        where = f", base_url={self.base_url!r}" if self.base_url else ""
        return f"GeminiClient(model={self.model!r}{where}, {len(self.calls)} calls)"

    # -- errors ---------------------------------------------------------------------------

    def _failure(self, what: str, e: Exception, attempts: int | None = None) -> LLMError:
        """A user-facing LLMError for an exception raised by the SDK (after ``attempts`` tries)."""
        from google.genai import errors

        attempts = self.attempts if attempts is None else attempts
        if isinstance(e, errors.APIError):
            retried = e.code in _RETRY_CODES and attempts > 1
            tries = f" after {attempts} attempts" if retried else ""
            hint = ""
            if e.code in (401, 403) or (e.code == 400 and "key" in str(e.message or "").lower()):
                hint = " Check that GEMINI_API_KEY holds a valid key."
            status = f"HTTP {e.code} {e.status}" if e.status else f"HTTP {e.code}"
            return LLMError(f"Gemini {what} failed{tries}: {status}: {e.message or 'no message'}.{hint} "
                            f"{_NOTHING_LOST}", status=e.code)
        if isinstance(e, ValueError):  # the body was not JSON, or not the expected shape
            return LLMError(f"Gemini {what} failed: the server's reply could not be read ({e}). {_NOTHING_LOST}")
        where = self.base_url or "the Gemini API"
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        return LLMError(f"Gemini {what} failed: got no reply from {where}{tries} ({type(e).__name__}: {e}). "
                        f"{_NOTHING_LOST}")

    def _call(self, what: str, send):
        """``send(http_options)`` with retries, each attempt's timeout cut to the run's deadline.

        Retried: HTTP 408/429/5xx, timeouts and connection failures, with exponential backoff
        (``initial_delay`` doubling up to ``max_delay``, plus jitter). No attempt or wait starts
        past the deadline of the current :class:`OnlineRun`; a call that got no reply marks the
        run's endpoint unreachable, so its later calls fail at once.
        """
        from google.genai import errors

        run = _RUN.get()
        if run is not None and run.unreachable:
            raise LLMError(f"Gemini {what} was not tried: {run.unreachable}")
        for attempt in range(1, self.attempts + 1):
            left = run.remaining() if run is not None else None
            if left is not None and left <= 0.05:
                return self._give_up(run, what, "the deadline for this run passed before the call")
            timeout = self.timeout if left is None else min(self.timeout, left)
            http = self._types.HttpOptions(timeout=max(1, int(timeout * 1000)))
            try:
                return send(http)
            except Exception as e:  # noqa: BLE001 - every SDK failure becomes one clear LLMError
                transport = _is_transport_error(e)
                # RecursionError: the SDK parsing a JSON reply nested past Python's stack (an unusable reply)
                if not (isinstance(e, (errors.APIError, ValueError, RecursionError)) or transport):
                    raise
                retryable = transport or (isinstance(e, errors.APIError) and e.code in _RETRY_CODES)
                if not retryable or attempt == self.attempts:
                    err = self._failure(what, e, attempt)
                    if transport and run is not None:
                        run.unreachable = f"no reply from {self.base_url or 'the Gemini API'} earlier in this run ({err})"
                    raise err from e
                delay = min(self.max_delay, self.initial_delay * 2 ** (attempt - 1)) + random.uniform(0, self.initial_delay)
                left = run.remaining() if run is not None else None
                if left is not None and delay >= left:
                    err = self._failure(what, e, attempt)
                    return self._give_up(run, what, f"the deadline for this run leaves no time to retry ({err})",
                                         unreachable=transport)
                time.sleep(delay)
        raise AssertionError("unreachable")  # the loop returns or raises

    def _give_up(self, run: OnlineRun, what: str, why: str, *, unreachable: bool = True):
        err = LLMError(f"Gemini {what} stopped: {why}. {_NOTHING_LOST}")
        if unreachable:
            run.unreachable = f"{why}"
        raise err

    def _log(self, kind: str, model: str, tokens_in: int | None, tokens_out: int | None, cached: bool,
             seconds: float, **extra) -> None:
        # embeddings: the Gemini API reports no token counts, so tokens are None and ``texts`` says how many
        self.calls.append({"kind": kind, "model": model, "tokens_in": tokens_in, "tokens_out": tokens_out,
                           "cached": cached, "seconds": round(seconds, 4), **extra})

    # -- generation -----------------------------------------------------------------------

    def generate(self, prompt: str, *, system: str | None = None, schema: dict | None = None,
                 temperature: float = 0.0, model: str | None = None,
                 images: list[tuple[bytes, str]] | None = None) -> LLMResult:
        """One generation, from the cache when this exact request was made before.

        Args:
            prompt: the user turn.
            system: the system instruction.
            schema: a response schema (OpenAPI subset as a dict, e.g.
                ``{"type": "object", "properties": {...}}``); the reply is then JSON and
                parsed into ``LLMResult.data``.
            temperature: sampling temperature (0 for repeatable runs).
            model: default ``self.model``.
            images: ``[(bytes, mime)]`` the model sees, sent as inline image parts before the
                prompt (their sha256 are part of the cache key).

        Returns:
            An :class:`LLMResult`.

        Raises:
            LLMError: the call failed after its retries, returned no text, or (with a
                schema) returned text that is not JSON (``err.reply`` holds it).
        """
        model = model or self.model
        material, path = self._generation_key(prompt, system, schema, temperature, model, images)
        t0 = time.perf_counter()
        cached = self._cached_generation(path, model, schema, t0)
        if cached is not None:
            return cached
        cfg, contents = self._generation_request(prompt, system, schema, temperature, images)
        resp = self._call(f"generateContent ({model})", lambda http: self._client.models.generate_content(
            model=model, contents=contents, config=cfg.model_copy(update={"http_options": http})))
        return self._finish_generation(resp, _reply_text(resp), material, path, prompt, schema, model, t0)

    def generate_stream(self, prompt: str, *, system: str | None = None, temperature: float = 0.0,
                        model: str | None = None) -> Generator[str, None, LLMResult]:
        """One generation streamed: yields the reply's text pieces as they arrive and returns the
        :class:`LLMResult` of the whole reply (a generator's return value: ``res = yield from ...``).

        The same request as :meth:`generate` (and the same cache entry: a cached reply is yielded whole).
        Opening the stream is retried like any call; a stream that breaks after its first piece is an
        :class:`LLMError` (the pieces already yielded cannot be taken back).

        >>> res = yield from GeminiClient().generate_stream("Say hi")  # doctest: +SKIP
        """
        model = model or self.model
        material, path = self._generation_key(prompt, system, None, temperature, model, None)
        t0 = time.perf_counter()
        cached = self._cached_generation(path, model, None, t0)
        if cached is not None:
            yield cached.text
            return cached
        cfg, contents = self._generation_request(prompt, system, None, temperature, None)
        what = f"streamGenerateContent ({model})"

        def open_stream(http):  # the request goes out on the first next(): retried with the opening
            chunks = iter(self._client.models.generate_content_stream(
                model=model, contents=contents, config=cfg.model_copy(update={"http_options": http})))
            return next(chunks, None), chunks

        first, chunks = self._call(what, open_stream)
        run = _RUN.get()
        pieces: list[str] = []
        received = 0  # characters so far
        last = chunk = first
        while chunk is not None:
            last = chunk
            piece = _reply_text(chunk)
            if piece:
                pieces.append(piece)
                received += len(piece)
                if received > MAX_REPLY_CHARS:
                    _check_size("".join(pieces), model)
                yield piece
            left = run.remaining() if run is not None else None
            if left is not None and left <= 0:
                raise LLMError(f"Gemini {what} stopped: the deadline for this run passed during the stream. "
                               f"{_NOTHING_LOST}")
            chunk = self._next_chunk(what, chunks)
        if last is None:
            raise LLMError(f"Gemini {what} returned no reply. {_NOTHING_LOST}")
        return self._finish_generation(last, "".join(pieces) or None, material, path, prompt, None, model, t0)

    def _next_chunk(self, what: str, chunks):
        """The stream's next chunk (None at its end); an SDK or transport failure is one clear LLMError."""
        from google.genai import errors

        try:
            return next(chunks, None)
        except Exception as e:  # noqa: BLE001 - only the SDK's and the transport's failures are converted
            if isinstance(e, (errors.APIError, ValueError)) or _is_transport_error(e):
                raise self._failure(what, e, 1) from e
            raise

    def _generation_key(self, prompt: str, system: str | None, schema: dict | None, temperature: float, model: str,
                        images: list[tuple[bytes, str]] | None) -> tuple[dict, Path]:
        """The cache material of a generation request and the file its reply is cached in."""
        material = {"v": _CACHE_VERSION, "kind": "generate", "model": model, "prompt": prompt, "system": system,
                    "schema": schema, "temperature": temperature, **self._endpoint()}
        if images:
            material["images"] = [[hashlib.sha256(data).hexdigest(), mime] for data, mime in images]
        return material, self.cache_dir / "generate" / (k := _key(material))[:2] / f"{k}.json"

    def _endpoint(self) -> dict:
        """The cache material naming the endpoint: none for Google's (so its cached replies stay valid),
        the base URL for any other, so a reply from one server is never replayed for another."""
        return {"endpoint": self.base_url} if self.base_url else {}

    def _cached_generation(self, path: Path, model: str, schema: dict | None, t0: float) -> LLMResult | None:
        """The cached reply of this request (logged as a cached call), or None (also for a damaged or
        unusable record: the request is then sent again)."""
        if not (self.use_cache and path.is_file()):
            return None
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))
            data = parse_json(rec["text"]) if schema is not None else None
            _check_size(rec["text"], model)
        except (OSError, ValueError, KeyError, TypeError, LLMError):
            return None
        secs = time.perf_counter() - t0
        self._log("generate", model, rec["tokens_in"], rec["tokens_out"], True, secs)
        return LLMResult(rec["text"], data, model, rec["tokens_in"], rec["tokens_out"], True, secs)

    def _generation_request(self, prompt: str, system: str | None, schema: dict | None, temperature: float,
                            images: list[tuple[bytes, str]] | None):
        """The SDK's config and contents for a generation."""
        types = self._types
        cfg = types.GenerateContentConfig(
            system_instruction=system, temperature=temperature,
            # the SDK rewrites a schema dict in place: give it a copy
            **({"response_mime_type": "application/json", "response_schema": copy.deepcopy(schema)}
               if schema is not None else {}))
        contents = prompt if not images else [types.Content(role="user", parts=[
            *(types.Part.from_bytes(data=data, mime_type=mime) for data, mime in images),
            types.Part.from_text(text=prompt)])]
        return cfg, contents

    def _finish_generation(self, resp, text: str | None, material: dict, path: Path, prompt: str,
                           schema: dict | None, model: str, t0: float) -> LLMResult:
        """Log the call, check the reply (text; JSON with a schema), cache it, and make the result.
        ``resp`` is the reply (a stream's last chunk, which carries the usage), ``text`` its whole text."""
        secs = time.perf_counter() - t0
        usage = resp.usage_metadata
        tokens_in = int(getattr(usage, "prompt_token_count", None) or 0)
        tokens_out = int(getattr(usage, "candidates_token_count", None) or 0) + \
            int(getattr(usage, "thoughts_token_count", None) or 0)
        self._log("generate", model, tokens_in, tokens_out, False, secs)
        if text is None:
            reason = resp.candidates[0].finish_reason if resp.candidates else getattr(
                resp.prompt_feedback, "block_reason", None)
            raise LLMError(f"Gemini generateContent ({model}) returned no text (finish reason: {reason}). "
                           f"{_NOTHING_LOST}")
        _check_size(text, model)
        data = None
        if schema is not None:
            try:
                data = parse_json(text)
            except ValueError as e:
                raise LLMError(f"Gemini ({model}) was asked for JSON but replied with text that is not JSON "
                               f"({e}): {text[:200]!r}", reply=text) from None
        if self.use_cache:
            rec = {**{k2: v for k2, v in material.items() if k2 != "prompt"}, "prompt_sha256":
                   hashlib.sha256(prompt.encode()).hexdigest(), "text": text, "tokens_in": tokens_in,
                   "tokens_out": tokens_out, "model_version": getattr(resp, "model_version", None),
                   "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            atomic_write(path, json.dumps(rec, ensure_ascii=False, indent=1).encode("utf-8"))
        return LLMResult(text, data, model, tokens_in, tokens_out, False, secs)

    # -- embeddings -----------------------------------------------------------------------

    def embed(self, texts: list[str], *, model: str = "gemini-embedding-001", dim: int = 1536,
              task_type: str = "RETRIEVAL_DOCUMENT") -> np.ndarray:
        """Embed texts (as returned by the API: not normalised; :class:`ppkit.indexing.embed.GeminiEmbedder` does that).

        Texts already in the cache are not sent; the rest go in requests of at most 100.

        Returns:
            float32 array of shape ``(len(texts), dim)``.

        Raises:
            LLMError: a request failed after its retries, or the reply had the wrong shape.
        """
        texts = list(texts)
        out = np.zeros((len(texts), dim), dtype=np.float32)
        paths = []
        for t in texts:
            k = _key({"v": _CACHE_VERSION, "kind": "embed", "model": model, "dim": dim, "task": task_type, "text": t,
                      **self._endpoint()})
            paths.append(self.cache_dir / "embed" / k[:2] / f"{k}.npy")
        todo: list[int] = []  # positions not in the cache
        t0 = time.perf_counter()
        for i, p in enumerate(paths):
            if self.use_cache and p.is_file():
                out[i] = np.load(p, allow_pickle=False)
            else:
                todo.append(i)
        if len(todo) < len(texts):
            self._log("embed", model, None, None, True, time.perf_counter() - t0, texts=len(texts) - len(todo))
        types = self._types
        for s in range(0, len(todo), _EMBED_BATCH):
            batch = todo[s : s + _EMBED_BATCH]
            t1 = time.perf_counter()
            contents = [texts[i] for i in batch]
            resp = self._call(f"embedContent ({model}, {len(batch)} texts)", lambda http: self._client.models.embed_content(
                model=model, contents=contents,
                config=types.EmbedContentConfig(task_type=task_type, output_dimensionality=dim, http_options=http)))
            vecs = [e.values for e in (resp.embeddings or [])]
            if len(vecs) != len(batch) or any(v is None or len(v) != dim for v in vecs):
                got = [len(v) if v is not None else None for v in vecs]
                raise LLMError(f"Gemini embedContent ({model}) returned {len(vecs)} vectors of sizes "
                               f"{sorted(set(got))} for {len(batch)} texts at dimension {dim}. {_NOTHING_LOST}")
            arr = np.asarray(vecs, dtype=np.float32)
            for j, i in enumerate(batch):
                out[i] = arr[j]
                if self.use_cache:
                    buf = io.BytesIO()
                    np.save(buf, arr[j], allow_pickle=False)
                    atomic_write(paths[i], buf.getvalue())
            self._log("embed", model, None, None, False, time.perf_counter() - t1, texts=len(batch))
        return out


def _check_size(text: str, model: str) -> None:
    """An LLMError for a reply over :data:`MAX_REPLY_CHARS` (the pipeline then falls back as for any failure)."""
    if len(text) > MAX_REPLY_CHARS:
        raise LLMError(f"Gemini ({model}) replied with {len(text):,} characters, more than the {MAX_REPLY_CHARS:,} "
                       f"read; the reply was not used. {_NOTHING_LOST}")


class _ReplyTooLarge(ValueError):
    """A generation's HTTP reply over :data:`MAX_REPLY_BYTES`: reading stopped there (an unusable reply)."""


def _cap_reply(response) -> None:
    """The HTTP client's response hook: it runs before the body is read, so a generation's reply that says
    it is over the cap is refused unread, and any other is read through a stream that stops at the cap.
    The cap counts the bytes on the wire: a compressed reply is decoded after, and its text is then held
    to :data:`MAX_REPLY_CHARS` like any other."""
    if not response.request.url.path.endswith((":generateContent", ":streamGenerateContent")):
        return  # embeddings are not capped here
    cap = MAX_REPLY_BYTES
    length = response.headers.get("content-length", "")
    if length.isdigit() and int(length) > cap:
        response.close()
        raise _ReplyTooLarge(f"the reply is {int(length):,} bytes, more than the {cap:,} read; it was not downloaded")
    # the client's own stream class (httpx, or its fork httpx2) is what its reader accepts
    base = next(c for c in type(response.stream).__mro__ if c.__name__ == "SyncByteStream")
    inner = response.stream

    def chunks():
        got = 0
        for chunk in inner:
            got += len(chunk)
            if got > cap:
                raise _ReplyTooLarge(f"the reply ran past {cap:,} bytes; reading stopped there")
            yield chunk

    response.stream = type("_CappedStream", (base,), {"__iter__": lambda self: chunks(), "close": lambda self: inner.close()})()


def _is_transport_error(e: Exception) -> bool:
    """Timeouts and connection failures of the HTTP client google-genai uses (httpx, or its
    fork httpx2, whose classes are not httpx's)."""
    import importlib

    for name in ("httpx", "httpx2"):
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        if isinstance(e, mod.HTTPError):
            return True
    return False


def _reply_text(resp) -> str | None:
    """The text parts of the first candidate (thought parts excluded), or None."""
    if not resp.candidates:
        return None
    content = resp.candidates[0].content
    parts = (content.parts or []) if content is not None else []
    texts = [p.text for p in parts if p.text is not None and not p.thought]
    return "".join(texts) if texts else None
