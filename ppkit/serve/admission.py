"""Answer work admitted in arrival order: a few requests of a server process at a time, the others queued.

A server process runs its requests' steps in threads that share one interpreter lock, so with every request
let in at once the process shares its core between them: a request with eight others in flight takes about
nine times its own CPU time, and a long answer is the last to finish (the latency tail). Admitted in the order
they arrived, ``slots`` at a time, a request waits for the ones ahead of it and then runs nearly alone: the
mean wait is the same (the same work on the same core), the tail shorter.

What is admitted is the answer work after a request's first step: the ``analysis`` event of a stream is
taken before the queue (:meth:`ppkit.serve.engine.Engine.events` takes it ahead of waiting steps), so a
stream's first event does not wait for the requests ahead. A queued request whose client goes away leaves
the queue (its task is cancelled: no step of it runs); one still queued at its deadline gets
:class:`ppkit.serve.engine.DeadlineExceeded`, the error a request past its deadline gets anyway.

The queue is an ``anyio.Semaphore`` (its waiters are served first come, first served), one per event loop
(``anyio.lowlevel.RunVar``: a server process has one loop; a test client may run each request in its own),
made on first use. This module does not import FastAPI.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
from anyio.lowlevel import RunVar

__all__ = ["Admission", "ANSWER_SLOTS"]

ANSWER_SLOTS = 1  # requests of one process answering at a time (docs/results/serve.md measures 1 against all)


class Admission:
    """A first-come, first-served queue for the answer work of one server process.

    Args:
        slots: requests admitted at a time.
        late: the error raised for a request still queued at its deadline.

    >>> admission = Admission(1, late=lambda: TimeoutError("too late"))
    >>> async def answer():  # doctest: +SKIP
    ...     async with admission.slot(until=time.monotonic() + 120):
    ...         ...
    """

    def __init__(self, slots: int = ANSWER_SLOTS, *, late: Callable[[], BaseException] = TimeoutError):
        if slots < 1:
            raise ValueError(f"slots={slots}: admit at least one request at a time")
        self.slots, self.late = slots, late
        self._sem: RunVar[anyio.Semaphore] = RunVar(f"ppkit_admission_{id(self)}")

    def __repr__(self) -> str:
        return f"Admission(slots={self.slots})"

    def waiting(self) -> int:
        """How many requests wait in the queue (of the running event loop; call it from there)."""
        sem = self._sem.get(None)
        return sem.statistics().tasks_waiting if sem is not None else 0

    async def acquire(self, until: float | None = None) -> Callable[[], None]:
        """Wait for a slot, after every request that asked before, and return the function that gives it back
        (call it once, in the event loop); raise ``late()`` when ``until`` (a ``time.monotonic()`` instant;
        None: no deadline) passes in the queue."""
        sem = self._sem.get(None)
        if sem is None:
            sem = anyio.Semaphore(self.slots)
            self._sem.set(sem)
        wait = math.inf if until is None else max(0.0, until - time.monotonic())
        with anyio.move_on_after(wait) as scope:
            await sem.acquire()
        if scope.cancelled_caught:
            raise self.late()
        return sem.release

    @asynccontextmanager
    async def slot(self, until: float | None = None) -> AsyncIterator[None]:
        """A slot held for the ``async with`` block (see :meth:`acquire`)."""
        release = await self.acquire(until)
        try:
            yield
        finally:
            release()
