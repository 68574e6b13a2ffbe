"""Progress bars for long work (tqdm's auto flavour: a widget in notebooks, text in a terminal).

Quiet with ``PPKIT_QUIET=1`` (the test suite sets it) or inside :func:`quiet_mode` (a command's
``--quiet``), which also silences the bars of the libraries ppkit calls (the model's
"Loading weights").
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .config import quiet_forced

__all__ = ["progress_bar", "quiet", "quiet_mode"]

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
