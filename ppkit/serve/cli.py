"""The ``ppkit serve`` command: the HTTP API on uvicorn.

    ppkit serve [--index DIR] [--host 127.0.0.1] [--port 8000] [--workers N] [--deadline SECONDS] [--trust-index]
                [--allowed-host NAME ...]

On a loopback address without ``PPKIT_API_TOKEN`` the API needs no authentication; any other address needs
a token of at least :data:`MIN_TOKEN` characters, or the command refuses to start (one line, status 2), as it
does for a port out of range or in use, before the index is loaded. Requests must name a host the server
answers for (``127.0.0.1``, ``localhost``, the address it listens on, each ``--allowed-host``) and writes from
another site's page are refused (:mod:`ppkit.serve.origin`). With ``--workers 1`` the index is loaded
once in this process; with more, each worker process loads its own (:func:`ppkit.serve.app.app_from_env`) and
listens on the port with its own socket (:mod:`ppkit.serve.workers`).
FastAPI and uvicorn are imported only when the command runs (the ``serve`` extra).
"""

from __future__ import annotations

import errno
import ipaddress
import socket
import sys
from dataclasses import replace
from pathlib import Path

from ..core.config import LOOPBACK_HOSTS, Config, export_env, serve_settings
from ..core.errors import ConfigError, MissingDependency
from ..indexing.index import default_index_dir
from ..pipeline import load_index
from .engine import Engine
from .workers import run_workers

__all__ = ["add_serve_parser", "is_loopback", "check_address", "check_port", "allowed_hosts", "MIN_TOKEN"]

MIN_TOKEN = 16  # characters of a token that guards a server other machines can reach


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host.casefold() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def check_address(host: str, token: str | None) -> None:
    """Refuse to serve on a non-loopback address without a token, or with a token a guess could find (blank, or
    shorter than :data:`MIN_TOKEN` characters)."""
    if is_loopback(host):
        return
    if not token or not token.strip():
        raise ConfigError(f"refusing to listen on {host} without a token: set PPKIT_API_TOKEN (clients then send "
                          "'Authorization: Bearer <token>'), or serve on 127.0.0.1")
    if len(token.strip()) < MIN_TOKEN:
        raise ConfigError(f"refusing to listen on {host} with a token of {len(token.strip())} characters: give "
                          f"PPKIT_API_TOKEN at least {MIN_TOKEN} (e.g. python -c \"import secrets; "
                          "print(secrets.token_urlsafe(24))\"), or serve on 127.0.0.1")


def check_port(host: str, port: int) -> None:
    """Refuse, before the index is loaded, a port out of range or one another process listens on."""
    if not 1 <= port <= 65535:
        raise ConfigError(f"--port {port}: give a port from 1 to 65535 (default 8000)")
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as e:
        raise ConfigError(f"--host {host}: not an address of this machine ({e})") from None
    family, _, _, _, address = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: a closing socket is no user
        try:
            s.bind(address)
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise ConfigError(f"port {port} on {host} is in use by another process: stop it, or give another "
                                  "--port") from None
            raise ConfigError(f"cannot listen on {host} port {port} ({e.strerror or e}): give another --host or "
                              "--port") from None


def allowed_hosts(host: str, extra: list[str]) -> tuple[tuple[str, ...], bool]:
    """The host names a server listening on ``host`` answers for (:mod:`ppkit.serve.origin`), and whether any
    address written as an IP is allowed (listening on every address: ``0.0.0.0`` or ``::``, where this machine's
    own names count too)."""
    names = [*LOOPBACK_HOSTS, host.strip("[]"), *extra]
    wildcard = host.strip("[]") in ("0.0.0.0", "::", "")
    if wildcard:
        names += [socket.gethostname(), socket.getfqdn()]
    return tuple(dict.fromkeys(n.strip().lower() for n in names if n and n.strip())), wildcard


def _cmd_serve(args, cfg: Config) -> int:
    settings = serve_settings()
    check_address(args.host, settings.token)
    if args.workers < 1:
        raise ConfigError(f"--workers {args.workers}: give 1 or more processes")
    check_port(args.host, args.port)
    hosts, any_ip = allowed_hosts(args.host, [*(settings.allowed_hosts or ()), *(args.allowed_host or [])])
    settings = replace(settings, allowed_hosts=hosts, any_ip=any_ip)
    try:
        import uvicorn
    except ImportError as e:
        raise MissingDependency(f"ppkit serve needs the 'serve' extra ({e.name} is missing): "
                                "pip install 'ppkit[serve]'") from None
    folder = Path(args.index) if args.index else default_index_dir()
    if args.deadline is not None:
        cfg = replace(cfg, ask_deadline=args.deadline)
    common = {"host": args.host, "port": args.port, "log_level": "warning", "timeout_graceful_shutdown": 5}
    if args.workers == 1:
        from .app import create_app  # FastAPI loads here, not with the `ppkit` command

        engine = Engine(load_index(folder, config=cfg, trust=args.trust_index))
        engine.warm()
        print(f"ppkit serve: {len(engine.index.docs)} documents on http://{args.host}:{args.port} "
              f"(docs at /docs)", file=sys.stderr, flush=True)
        uvicorn.run(create_app(engine, settings), **common)
        return 0
    # each worker process loads the index itself: hand it the folder and the options
    export_env(PPKIT_INDEX=str(folder.resolve()), PPKIT_ASK_DEADLINE=str(cfg.ask_deadline),
               PPKIT_SERVE_TRUST_INDEX="1" if args.trust_index else "0", PPKIT_SERVE_ALLOWED_HOSTS=",".join(hosts),
               PPKIT_SERVE_ANY_IP="1" if any_ip else "0")
    print(f"ppkit serve: {args.workers} processes on http://{args.host}:{args.port} (docs at /docs)",
          file=sys.stderr, flush=True)
    return run_workers(args.workers, **common)  # one socket per process: connections spread over them


def add_serve_parser(sub) -> None:
    """Add ``serve`` to the ``ppkit`` command's subparsers."""
    s = sub.add_parser("serve", help="answer questions over HTTP (streamed, cited; OpenAI-compatible chat route)")
    s.add_argument("--index", help="index folder (default: $PPKIT_INDEX or the cache)")
    s.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; any other needs PPKIT_API_TOKEN)")
    s.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    s.add_argument("--workers", type=int, default=1,
                   help="server processes, each with its own copy of the index (default 1; about one core each)")
    s.add_argument("--deadline", type=float, metavar="SECONDS",
                   help="time one request may take (default 120, $PPKIT_ASK_DEADLINE; 0: none)")
    s.add_argument("--trust-index", action="store_true",
                   help="read the documents named by an index folder that ppkit on this account did not write")
    s.add_argument("--allowed-host", action="append", metavar="NAME",
                   help="a host name clients may use besides 127.0.0.1, localhost and the --host address "
                        "(repeatable; requests naming any other host get 421: a guard against DNS rebinding)")
    s.set_defaults(func=_cmd_serve)
