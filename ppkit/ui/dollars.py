"""Markdown shown in a notebook with its dollar amounts as dollars, never typeset as math.

JupyterLab renders Markdown by taking ``$…$`` spans out as math, rendering the rest with marked,
and then handing the page to MathJax, which reads every ``$`` as a math delimiter again. Escaping
alone (``\\$``) is not enough there: marked turns ``\\$`` back into ``$`` before MathJax reads the
page, so "\\$4.6 billion ... \\$246 million" is still set in italic math (seen in JupyterLab 4.6). So
:func:`markdown` does both: it escapes every ``$`` (no span is taken out as math, and other
renderers such as GitHub or VS Code show a plain ``$``) and wraps the Markdown in a ``<div>`` of the
classes MathJax skips (:data:`ppkit.core.style.NO_MATH`), blank lines around it so the Markdown
inside is still rendered. HTML that ppkit shows carries the same classes (:func:`ppkit.core.style.block`).

This module only prepares and displays text; it does not render Markdown itself.
"""

from __future__ import annotations

import re

from ..core.style import NO_MATH

__all__ = ["escape_dollars", "markdown", "show_markdown"]


def escape_dollars(markdown: str) -> str:
    """``markdown`` with every unescaped ``$`` escaped (``\\$``), the CommonMark way to write a dollar sign.

    >>> escape_dollars("$9,068 million; truth $9068.00")
    '\\\\$9,068 million; truth \\\\$9068.00'
    """
    return re.sub(r"(?<!\\)\$", r"\\$", markdown)


def markdown(text: str):
    """``text`` (Markdown) as an ``IPython.display.Markdown`` whose dollar signs show as dollars in
    JupyterLab, the classic notebook and plain renderers alike (see the module docstring).

    >>> markdown("Net revenue of $4.6 billion and $246 million").data  # doctest: +NORMALIZE_WHITESPACE
    '<div class="mathjax_ignore tex2jax_ignore">\\n\\nNet revenue of \\\\$4.6 billion and \\\\$246 million\\n\\n</div>'
    """
    from IPython.display import Markdown

    return Markdown(f'<div class="{NO_MATH}">\n\n{escape_dollars(text)}\n\n</div>')


def show_markdown(text: str) -> None:
    """Display :func:`markdown` of ``text``."""
    from IPython.display import display

    display(markdown(text))
