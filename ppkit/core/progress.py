"""Progress bars for long work (tqdm's auto flavour: a widget in notebooks, text in a terminal).

Quiet with ``PPKIT_QUIET=1`` (the test suite sets it).
"""

from __future__ import annotations

import os

__all__ = ["progress_bar", "quiet"]


def quiet() -> bool:
    """True when ``PPKIT_QUIET`` asks for no progress output."""
    return os.environ.get("PPKIT_QUIET", "").strip() not in ("", "0")


def progress_bar(iterable=None, *, desc: str = "", total: int | None = None, disable: bool = False):
    """Wrap ``iterable`` in a tqdm bar unless disabled or quiet."""
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, total=total, disable=disable or quiet(), leave=False)
