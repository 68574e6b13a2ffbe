"""Inline styles for the HTML ppkit shows in notebooks, written to win inside JupyterLab.

JupyterLab styles outputs with class rules, and those beat what ppkit's HTML would
otherwise inherit: ``.jp-OutputArea-output pre`` sets ``word-break: break-all`` (text
wraps in the middle of words, "incr|ease"), and the content of an ``ipywidgets.HTML``
inherits the widgets' 28 px line height (every table row twice as tall). A declaration
in an element's own ``style`` attribute beats any class rule without ``!important``,
so each block ppkit renders carries its line height and each ``<pre>`` its word
breaking inline. Stylesheets are not used: an ``ipywidgets.HTML`` value is inserted as
``innerHTML``, where a ``<style>`` element would leak into the whole page.

This module only styles; it renders nothing itself.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["BLOCK", "PRE", "block", "strip_private_use"]

# line height and font size of every ppkit block (widget HTML inherits 28 px otherwise)
BLOCK = "line-height:1.4;font-size:13px;white-space:normal;word-break:normal;overflow-wrap:break-word"

# a section's text: wrapped at spaces, a word broken only when it alone is wider than the box
PRE = ("white-space:pre-wrap;word-break:normal;overflow-wrap:break-word;font-size:12px;line-height:1.35;"
       "max-height:32em;overflow:auto;background:#f7f7f7;border:1px solid #ddd;padding:6px;margin:4px 0")


def block(html: str) -> str:
    """``html`` inside a ``<div>`` whose inline style sets ppkit's line height and word breaking."""
    return f"<div class='ppkit-block' style='{BLOCK}'>{html}</div>"


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
