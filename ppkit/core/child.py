"""A function run in a process of its own that dies with the process that started it.

:class:`Child` runs ``target(*args)`` in a fresh interpreter (``spawn``: the caller may hold threads, torch's
or a server's, that a fork would copy half-made) and hands back its return value or its exception. The child
can send the parent messages as it works (:func:`tell`, e.g. the page it is reading), and the parent can
read its resident memory (:meth:`Child.rss`) and kill it: that is how a caller bounds work it cannot
interrupt from inside (a PDF library parsing one page, say).

**It dies with its parent.** On Linux the first thing the child does is ask the kernel to kill it when its
parent dies (``PR_SET_PDEATHSIG``), then check that the parent is still the one that started it: a parent
killed while the child was starting (``kill -9`` of ``ppkit index`` two seconds in) leaves no process
running on, and none holding the caller's terminal. Elsewhere a child outlives a killed parent until its work
ends.

This module does not pool processes and does not retry; a child that dies without an answer is reported
by :meth:`Child.poll` as ``("died", exit code)``.
"""

from __future__ import annotations

import os
import pickle
import signal
import traceback
from multiprocessing import get_context
from pathlib import Path

from .errors import PpkitError
from .progress import thread_lock_bars

__all__ = ["Child", "ChildError", "die_with_parent", "tell", "in_child"]

_CHANNEL = None  # in a child: the end of the pipe its messages go to
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class ChildError(RuntimeError):
    """A child raised an exception that is not one of ppkit's (a bug): its traceback, as text."""


def die_with_parent(parent: int) -> None:
    """Be killed when the process ``parent`` dies (Linux), and exit now if it already has."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def in_child() -> bool:
    """Whether this process is a :class:`Child` (messages sent with :func:`tell` reach a parent)."""
    return _CHANNEL is not None


def tell(*message) -> None:
    """Send ``message`` (a tuple of picklable values) to the parent; nothing outside a :class:`Child`."""
    if _CHANNEL is not None:
        _CHANNEL.send(message)


def _portable(error: BaseException) -> BaseException:
    """``error`` as it can cross to the parent: itself when it pickles and is ppkit's own (a user's error: one
    line), else a :class:`ChildError` with its traceback."""
    if isinstance(error, PpkitError):
        try:
            pickle.loads(pickle.dumps(error))
            return error
        except Exception:  # noqa: BLE001 - an exception that does not pickle goes as text
            pass
    return ChildError("".join(traceback.format_exception(error)).rstrip())


def _main(parent: int, channel, target, args) -> None:
    global _CHANNEL
    die_with_parent(parent)
    thread_lock_bars()  # nothing left for the resource tracker if the parent kills this process
    _CHANNEL = channel
    try:
        channel.send(("started",))  # interpreter up, modules imported: the work itself begins
        channel.send(("done", target(*args)))
    except BaseException as e:  # noqa: BLE001 - every failure goes back to the parent
        channel.send(("error", _portable(e)))
    finally:
        channel.close()


class Child:
    """``target(*args)`` running in a process of its own (see the module docstring).

    >>> child = Child(sum, [1, 2, 3])                      # doctest: +SKIP
    >>> [m for m in child.poll(5)]                         # doctest: +SKIP
    [('done', 6)]
    """

    def __init__(self, target, *args, name: str = "ppkit-child"):
        ctx = get_context("spawn")
        self._messages, sender = ctx.Pipe(duplex=False)
        self.process = ctx.Process(target=_main, args=(os.getpid(), sender, target, args), name=name)
        self.process.start()
        sender.close()  # the child holds the only writing end: its death ends the pipe
        self.ended = False

    def __repr__(self) -> str:
        return f"Child({self.process.name}, pid {self.process.pid}, {'ended' if self.ended else 'running'})"

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def poll(self, timeout: float = 0.0):
        """The messages the child sent within ``timeout`` seconds (waiting for the first only): ``("started",)``
        when its work begins, its own (:func:`tell`), then ``("done", value)`` or ``("error", exception)`` once,
        or ``("died", exit code)`` when it ended without either."""
        if self.ended:
            return
        wait = timeout
        while self._messages.poll(wait):
            wait = 0
            try:
                message = self._messages.recv()
            except (EOFError, OSError):
                break
            if message[0] in ("done", "error"):
                self.ended = True
                self.process.join(10)  # its exit (finalizers included) before the caller may kill it
            yield message
            if self.ended:
                return
        if not self.process.is_alive():
            self.process.join(1)
            self.ended = True
            yield ("died", self.process.exitcode)

    def rss(self) -> int | None:
        """The child's resident memory in bytes (Linux; None elsewhere or once it ended)."""
        try:
            return int(Path(f"/proc/{self.process.pid}/statm").read_text().split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            return None

    def kill(self) -> None:
        """Kill the child (if it still runs) and wait for it."""
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.ended = True
        self._messages.close()
