"""``ppkit serve --workers N``: N server processes, each with its own listening socket on the same port.

uvicorn's own ``workers=N`` binds one socket and lets every process accept from it; each process's event loop
accepts every connection waiting when it wakes, so a burst of clients that keep their connections open (HTTP
keep-alive: every real client, and ``ppkit bench serve``) mostly lands on one process: 16 clients measured
92% of the server's CPU in one of two processes, the other nearly idle (docs/results/serve.md). Here each
process binds the port itself with ``SO_REUSEPORT``, and the kernel spreads new connections over the processes'
sockets (by a hash of the client's address and port), so no process takes another's waiting connections. On a
system without ``SO_REUSEPORT`` uvicorn's own workers are used.

The parent only supervises: a worker that exits after it started serving is started again; one that could not
start (the port taken, the index not loadable) stops them all with status 1; SIGINT or SIGTERM stops them all
(uvicorn's graceful shutdown in each). Only the processes' owner can bind the port alongside them
(Linux lets sockets of one user only share a port this way).
"""

from __future__ import annotations

import multiprocessing
import signal
import socket
import sys
import time

__all__ = ["reuse_port_supported", "run_workers"]

APP = "ppkit.serve.app:app_from_env"


def reuse_port_supported() -> bool:
    """Whether this system can bind one port from several sockets (``SO_REUSEPORT``)."""
    if not hasattr(socket, "SO_REUSEPORT"):
        return False
    try:
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        return True
    except OSError:
        return False


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _worker(host: str, port: int, app: str, options: dict) -> None:
    """One server process: its own socket on ``host:port``, serving the app ``app`` makes."""
    import uvicorn

    try:
        sock = _listen(host, port)
    except OSError as e:
        print(f"ppkit serve: cannot listen on {host}:{port}: {e.strerror or e}", file=sys.stderr, flush=True)
        sys.exit(3)
    config = uvicorn.Config(app, factory=True, host=host, port=port, **options)
    try:
        config.load()  # the app: the index loaded and warmed
    except SystemExit:  # uvicorn said why
        sys.exit(3)
    except Exception as e:  # noqa: BLE001 - said in one line; starting it again would fail again
        print(f"ppkit serve: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        sys.exit(3)
    uvicorn.Server(config).run(sockets=[sock])


def run_workers(n: int, host: str, port: int, *, app: str = APP, **options) -> int:
    """Serve the ASGI app that ``app`` (``"module:factory"``, default :func:`ppkit.serve.app.app_from_env`) makes
    from ``n`` processes on ``host:port`` (``options``: uvicorn's ``Config`` settings); returns the exit status.
    The caller exports the app's settings to the environment first (the workers are new interpreters)."""
    if not reuse_port_supported():
        import uvicorn

        uvicorn.run(app, factory=True, workers=n, host=host, port=port, **options)
        return 0
    ctx = multiprocessing.get_context("spawn")
    stopping = False

    def start():
        p = ctx.Process(target=_worker, args=(host, port, app, options), name="ppkit-serve-worker", daemon=False)
        p.start()
        return p

    def stop(signum, frame):
        nonlocal stopping
        stopping = True

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    procs = [start() for _ in range(n)]
    status = 0
    try:
        while not stopping:
            time.sleep(0.2)
            for i, p in enumerate(procs):
                if p.is_alive():
                    continue
                if p.exitcode == 3:  # it could not bind the port or load the app: the others cannot either
                    print("ppkit serve: a worker could not start (see above); stopping", file=sys.stderr, flush=True)
                    stopping, status = True, 1
                    break
                if not stopping:
                    print(f"ppkit serve: worker {p.pid} exited ({p.exitcode}); starting another",
                          file=sys.stderr, flush=True)
                    procs[i] = start()
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()  # SIGTERM: uvicorn's graceful shutdown
        deadline = time.monotonic() + float(options.get("timeout_graceful_shutdown") or 5) + 5
        for p in procs:
            p.join(max(0.1, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join()
        for s, handler in previous.items():
            signal.signal(s, handler)
    return status
