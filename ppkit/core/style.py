"""Inline styles for the HTML ppkit shows in notebooks, written to win inside JupyterLab.

JupyterLab styles outputs with class rules, and those beat what ppkit's HTML would
otherwise inherit: ``.jp-OutputArea-output pre`` sets ``word-break: break-all`` (text
wraps in the middle of words, "incr|ease"), and the content of an ``ipywidgets.HTML``
inherits the widgets' 28 px line height (every table row twice as tall). A declaration
in an element's own ``style`` attribute beats any class rule without ``!important``,
so each block ppkit renders carries its line height and each ``<pre>`` its word
breaking inline. Stylesheets are not used: an ``ipywidgets.HTML`` value is inserted as
``innerHTML``, where a ``<style>`` element would leak into the whole page.

Every block is also kept out of math typesetting (:data:`NO_MATH`): JupyterLab hands each HTML
output to MathJax, which reads ``$`` as a math delimiter, so "$4.6 billion ... $246 million" in a
10-K's text would be set in italic math. ``mathjax_ignore`` is the class JupyterLab 4's MathJax
skips (with its subtree); ``tex2jax_ignore`` the one MathJax 2 skips (the classic notebook, nbconvert).

This module only styles; it renders nothing itself.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from pathlib import Path

__all__ = ["BLOCK", "NO_MATH", "PRE", "block", "no_math", "readable_glyphs", "strip_private_use"]

# line height and font size of every ppkit block (widget HTML inherits 28 px otherwise)
BLOCK = "line-height:1.4;font-size:13px;white-space:normal;word-break:normal;overflow-wrap:break-word"

# a section's text: wrapped at spaces, a word broken only when it alone is wider than the box
PRE = ("white-space:pre-wrap;word-break:normal;overflow-wrap:break-word;font-size:12px;line-height:1.35;"
       "max-height:32em;overflow:auto;background:#f7f7f7;border:1px solid #ddd;padding:6px;margin:4px 0")


# the classes MathJax skips: JupyterLab 4 (MathJax 3 and 4), then MathJax 2
NO_MATH = "mathjax_ignore tex2jax_ignore"


def block(html: str) -> str:
    """``html`` inside a ``<div>`` whose inline style sets ppkit's line height and word breaking, never
    typeset as math."""
    return f"<div class='ppkit-block {NO_MATH}' style='{BLOCK}'>{html}</div>"


def no_math(html: str) -> str:
    """``html`` inside a ``<div>`` that MathJax skips: its dollar signs stay dollar signs.

    >>> no_math("$4.6 billion and $246 million")
    "<div class='mathjax_ignore tex2jax_ignore'>$4.6 billion and $246 million</div>"
    """
    return f"<div class='{NO_MATH}'>{html}</div>"


_SPACES = re.compile(r"[ \t]{2,}")


def strip_private_use(text: str) -> str:
    """``text`` without Unicode private-use characters (category ``Co``); where some were removed,
    the runs of spaces they leave are collapsed.

    PDF converters emit the glyphs of math fonts (bracket pieces, Symbol-font letters) as
    private-use code points; no font a browser has draws them, so they appear as boxes.

    >>> strip_private_use("LDDPM(\\ue000x\\ue001)  =  1")
    'LDDPM(x) = 1'
    """
    out = "".join(ch for ch in text if unicodedata.category(ch) != "Co")
    return _SPACES.sub(" ", out).strip() if out != text else text


@cache
def _glyph_table() -> dict[str, str]:
    """``{private-use character: the character it draws}`` from ``math_glyphs.tsv`` (its sources are in its header)."""
    table = {}
    for line in (Path(__file__).with_name("math_glyphs.tsv")).read_text(encoding="utf-8").splitlines()[1:]:
        if line and not line.startswith("#"):
            code, char = line.split("\t")[:2]
            if code.startswith("U+"):
                table[chr(int(code[2:], 16))] = char
    return table


def readable_glyphs(text: str) -> str:
    """``text`` with the private-use math glyphs a PDF converter left in a formula made readable: the large
    operators, radicals and delimiters of TeX's math-extension font and Adobe Symbol's bracket pieces become
    the Unicode characters they draw (``math_glyphs.tsv``); any other private-use character is dropped,
    as :func:`strip_private_use` does, since no font draws it.

    >>> readable_glyphs("W = W0 + \ue058 t=0 G(t), Mt/\ue070 Vt, E\ue00f")
    'W = W0 + ∑ t=0 G(t), Mt/√ Vt, E'
    """
    table = _glyph_table()
    out = "".join(table.get(ch, ch) for ch in text if ch in table or unicodedata.category(ch) != "Co")
    return _SPACES.sub(" ", out).strip() if out != text else text
