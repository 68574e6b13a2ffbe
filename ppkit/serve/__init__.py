"""``ppkit serve``: an HTTP API over the conductor's event stream (FastAPI + uvicorn, the ``serve`` extra).

* :mod:`ppkit.serve.engine` - one loaded index shared by a server's requests: the conductor's stream
  stepped under a lock (the index's lazy caches are not thread-safe), a per-request deadline, responses
  without folder paths, keys or tracebacks. No FastAPI here.
* :mod:`ppkit.serve.models` - the request bodies (pydantic, unknown fields refused).
* :mod:`ppkit.serve.app` - the FastAPI app: the routes, Server-Sent Events, the OpenAI-compatible chat
  route, bearer-token and body-size checks.
* :mod:`ppkit.serve.cli` - the ``ppkit serve`` command (refuses a non-loopback address without a token).

Nothing here is imported by ``import ppkit`` or ``ppkit ask``: FastAPI is loaded only by the app.
The server does not answer from a cache: every request runs the conductor.
"""

__all__: list[str] = []
