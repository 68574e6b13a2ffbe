"""ppkit.ui.dollars and ppkit.core.style's blocks against JupyterLab's math rules (tests/jupyter_math.py).

The rules the emulation follows were checked in JupyterLab 4.6 in headless Chromium: a Markdown cell
holding "\\$4.6 billion and \\$246 million" is typeset as math (one ``mjx-container``), the same
Markdown inside ``<div class="mathjax_ignore">`` is not; an HTML output is typeset unless it is
under class ``mathjax_ignore`` (``tex2jax_ignore`` alone does not help there) or its dollars are
written ``\\$``; two dollars in two table cells are never paired. ``tests/browser`` checks the
notebooks themselves in the browser.
"""

from __future__ import annotations

from jupyter_math import from_currency, html_math, markdown_math, text_math

from ppkit.core.style import block, no_math
from ppkit.ui.dollars import escape_dollars, markdown

AMOUNTS = "Sales rose to $7.25 million from $512 thousand; the fee is $40."


def test_text_runs_pair_dollars_escapes_and_braces():
    assert text_math(AMOUNTS) == ["$7.25 million from $"]
    assert text_math("costs \\$3 and \\$4, then $a+b$ and \\(c\\)") == ["$a+b$", "\\(c\\)"]
    assert text_math("$\\text{a \\$ inside}$ and $$x$$") == ["$\\text{a \\$ inside}$", "$$x$$"]
    assert text_math("one $5 alone") == []


def test_html_is_read_in_runs_broken_by_elements_and_skips_ignored_and_code():
    assert html_math(f"<p>{AMOUNTS}</p>") == ["$7.25 million from $"]
    assert html_math("<p>a <b>$5</b> and <i>$6</i></p>") == []  # every element breaks the run
    assert html_math("<p>$5 and<br>then $6</p>") == ["$5 and\nthen $"]  # except <br>
    assert html_math(f"<pre>{AMOUNTS}</pre><code>{AMOUNTS}</code>") == []
    assert html_math(f"<div class='x mathjax_ignore'><p>{AMOUNTS}</p></div>") == []
    assert html_math(f"<div class='tex2jax_ignore'>{AMOUNTS}</div>") != []  # MathJax 2's class: not JupyterLab's
    assert html_math(f"<p>{escape_dollars(AMOUNTS)}</p>") == []  # processEscapes


def test_markdown_escapes_alone_do_not_keep_dollars_out_of_math():
    assert markdown_math(escape_dollars(AMOUNTS)) == ["$7.25 million from $"]
    assert markdown_math(AMOUNTS) == ["$7.25 million from $"]
    assert markdown_math("| a | b |\n|---|---|\n| \\$1 | \\$2 |") == []  # one dollar per cell
    assert markdown_math("| a | b |\n|---|---|\n| $1 | $2 |") == ["$1 | $"]  # removeMath pairs across cells
    assert markdown_math("`$1` and `$2`, then\n\n```\n$3 $4\n```") == []


def test_ppkit_markdown_and_blocks_are_never_typeset():
    shown = markdown(f"**Revenue.** {AMOUNTS}\n\n| item | amount |\n|---|---|\n| fee | $40 and $41 |")
    assert markdown_math(shown.data) == []
    assert "\\$7.25" in shown.data and "**Revenue.**" in shown.data  # still Markdown inside
    assert html_math(block(f"<p>{AMOUNTS}</p>")) == [] and html_math(no_math(AMOUNTS)) == []
    assert escape_dollars("already \\$5 and $6") == "already \\$5 and \\$6"


def test_a_span_from_currency_starts_with_a_figure():
    assert [from_currency(s) for s in ("$7.25 million from $", "$ (3) and $", "$x_1$", "$k=3$", "$$2$$")] == \
        [True, True, False, False, False]
