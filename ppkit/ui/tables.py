"""A wide table in a notebook: the columns its text discusses first, every other column behind a toggle.

A notebook shows a DataFrame with at most ``display.max_columns`` (pandas: 20) columns and hides
the middle ones behind "...": the multimodal benchmark's 21 columns lose ``image_hit`` and
``image_precision``, the two its text is about. :func:`columns_first` shows the columns named,
then the whole table under an HTML ``<details>`` toggle ("all 21 columns"), scrolling sideways in
its own box. The toggle is plain HTML, so a rendered or headless notebook shows it too; the
whole is kept out of math typesetting (:func:`ppkit.core.style.no_math`).

This module only displays a table it is given.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from ..core.errors import InvalidInput
from ..core.style import no_math

__all__ = ["ColumnsFirst", "columns_first"]


@dataclass(frozen=True, eq=False)
class ColumnsFirst:
    """A table shown as its named ``columns``, with the whole ``frame`` behind a toggle."""

    frame: object  # a pandas DataFrame
    columns: tuple[str, ...]

    def __repr__(self) -> str:
        return f"ColumnsFirst({list(self.columns)}, {len(self.frame.columns)} columns in all)"

    @property
    def shown(self):
        """The DataFrame of the named columns (what is shown first)."""
        return self.frame[list(self.columns)]

    def _repr_html_(self) -> str:
        n = len(self.frame.columns)
        rest = [c for c in self.frame.columns if c not in self.columns]
        return no_math(
            self.shown.to_html()
            + (f"<details style='margin-top:4px'><summary>all {n} columns "
               f"(also {html.escape(', '.join(map(str, rest)))})</summary><div style='overflow-x:auto;max-width:100%'>{self.frame.to_html()}</div></details>"
               if rest else ""))


def columns_first(frame, columns) -> ColumnsFirst:
    """``frame`` shown as ``columns`` (in that order), every column behind an "all N columns" toggle.

    >>> columns_first(scores, ["hit", "image_hit", "image_precision"])  # doctest: +SKIP
    """
    columns = tuple(columns)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InvalidInput(f"not a column of this table: {', '.join(map(str, missing))}; "
                           f"its columns are {', '.join(map(str, frame.columns))}")
    return ColumnsFirst(frame, columns)
