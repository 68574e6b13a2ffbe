"""Progress bars for long work (tqdm's auto flavour: a widget in notebooks, text in a terminal).

Quiet with ``PPKIT_QUIET=1`` (the test suite sets it) or inside :func:`quiet_mode` (a command's
``--quiet``), which also silences the bars of the libraries ppkit calls (the model's
"Loading weights").
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .config import quiet_forced

__all__ = ["progress_bar", "quiet", "quiet_mode", "thread_lock_bars"]

_QUIET = [False]  # set by quiet_mode (a command's --quiet)


def quiet() -> bool:
    """True when ``PPKIT_QUIET`` or :func:`quiet_mode` asks for no progress output."""
    return _QUIET[0] or quiet_forced()


@contextmanager
def quiet_mode(on: bool = True) -> Iterator[None]:
    """No progress output inside (``on=False``: no change)."""
    before = _QUIET[0]
    _QUIET[0] = before or on
    try:
        yield
    finally:
        _QUIET[0] = before


def progress_bar(iterable=None, *, desc: str = "", total: int | None = None, disable: bool = False,
                 unit: str = "it"):
    """Wrap ``iterable`` in a tqdm bar unless disabled or quiet; the rate shows as ``<unit>/s``."""
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, total=total, disable=disable or quiet(), leave=False, unit=unit)


def thread_lock_bars() -> None:
    """Let the bars of this process share a thread lock instead of tqdm's default, which adds a multiprocessing
    semaphore: a child process killed mid-way (:class:`ppkit.core.child.Child` past a cap) would leave that
    semaphore to the resource tracker, which cleans it up with a warning on the terminal."""
    import threading

    from tqdm import tqdm

    tqdm.set_lock(threading.RLock())
