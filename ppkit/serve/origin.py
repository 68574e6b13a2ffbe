"""Same-origin only: the ``Host`` and ``Origin`` rules of ``ppkit serve`` (an ASGI middleware).

A server on ``127.0.0.1`` is reachable from every web page its user opens: a page elsewhere could post an upload
to it (a browser sends a cross-site form or ``fetch`` without asking), or, by DNS rebinding (its own host name
made to resolve to 127.0.0.1), read from it as if it were the same site. Two rules close both:

* **Host**: every request whose ``Host`` header names a host this server does not answer for is refused with
  421, before anything else runs. The names it answers for (:class:`ppkit.core.config.ServeSettings`
  ``allowed_hosts``): ``127.0.0.1``, ``localhost`` and ``::1``, the address it listens on, the names given with
  ``ppkit serve --allowed-host NAME`` (``PPKIT_SERVE_ALLOWED_HOSTS``); listening on every address (``0.0.0.0``
  or ``::``), also this machine's own name and any address written as an IP (a rebinding page always comes by
  a name of its own). The port is not part of the check.
* **Origin**: a request that changes or computes something (``POST``, ``PUT``, ``PATCH``, ``DELETE``) and
  carries an ``Origin`` header is refused with 403 unless that origin is this server itself (the page at
  ``/``: same host and port as the ``Host`` header). API clients (curl, OpenAI's SDK, scripts) send no
  ``Origin`` and are served.

An app made in code with ``ServeSettings()`` (its ``allowed_hosts`` None) checks the Origin only; ``ppkit serve``
always checks both. This module does not authenticate (the bearer token is the app's guard) and sends no CORS
headers: a page from elsewhere cannot read a response either.
"""

from __future__ import annotations

import ipaddress
import json
from urllib.parse import urlsplit

__all__ = ["SameOrigin", "host_name"]

_WRITES = ("POST", "PUT", "PATCH", "DELETE")


def host_name(host: str) -> str:
    """The host of a ``Host`` header or an origin's netloc, without the port, lower case: ``"[::1]:8000"`` ->
    ``"::1"``, ``"Example.COM:80"`` -> ``"example.com"``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host[1:]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


async def _refuse(send, status: int, kind: str, message: str) -> None:
    body = json.dumps({"error": {"type": kind, "message": message}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class SameOrigin:
    """The ASGI middleware (see the module docstring). ``allowed_hosts``: the host names served, None for no Host
    check; ``any_ip``: any host written as an IP address is served too (a server listening on every address)."""

    def __init__(self, app, allowed_hosts: tuple[str, ...] | None = None, any_ip: bool = False):
        self.app, self.any_ip = app, any_ip
        self.allowed = None if allowed_hosts is None else {host_name(h) for h in allowed_hosts}

    def _host_ok(self, host: str) -> bool:
        name = host_name(host)
        return self.allowed is None or name in self.allowed or (self.any_ip and _is_ip(name))

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host", "")
        if not self._host_ok(host):
            return await _refuse(send, 421, "MisdirectedRequest", "this server does not answer for the host name "
                                 f"{host_name(host)[:100]!r} (a guard against DNS rebinding): use the address it "
                                 "listens on, or have its operator allow the name (ppkit serve --allowed-host NAME)")
        origin = headers.get("origin")
        if origin is not None and scope.get("method", "GET") in _WRITES:
            parts = urlsplit(origin)
            if parts.scheme not in ("http", "https") or parts.netloc.lower() != host.strip().lower() \
                    or not self._host_ok(parts.netloc):
                return await _refuse(send, 403, "CrossOriginRefused", "a request from another site is refused: this "
                                     "route answers this server's own page, and clients that send no Origin header")
        return await self.app(scope, receive, send)
