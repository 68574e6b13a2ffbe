"""What JupyterLab would typeset as math in a notebook: its rules, ported, for the tests that look for currency.

JupyterLab 4 shows an HTML output by handing its DOM to MathJax; it shows Markdown (a Markdown cell, a
``text/markdown`` output) by first taking the math out of the source (``removeMath`` in
``@jupyterlab/rendermime``'s ``latex.ts``: ``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]`` and environments outside
code spans), rendering the rest with marked, putting the math back and then handing the DOM to MathJax.
MathJax, as JupyterLab configures it (inline ``$…$`` and ``\\(…\\)``, display ``$$…$$`` and ``\\[…\\]``,
``processEscapes``, ``processEnvironments``; checked in JupyterLab 4.6's bundle), reads the text in runs that
every element breaks except ``<br>``, ``<wbr>`` and comments (``HTMLDomStrings``), skips ``script``,
``noscript``, ``style``, ``textarea``, ``pre``, ``code`` and ``annotation``, and skips whatever sits under an
element of class ``mathjax_ignore``; in a run, an opening delimiter is closed by the first closing one outside
braces (``FindTeX``).

So ``\\$`` in Markdown does **not** keep a dollar out of math in JupyterLab: marked turns it into ``$`` before
MathJax reads the page (seen in Chromium: ``\\$4.6 billion and \\$246`` in a Markdown cell is typeset). In
HTML, ``\\$`` does (``processEscapes``), and so does class ``mathjax_ignore``.

Markdown is rendered here with markdown-it (CommonMark), not marked: the two agree on what matters here
(escapes, code spans, raw HTML blocks). This module is test support; ppkit never imports it.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

__all__ = ["html_math", "markdown_math", "text_math", "from_currency"]

_SKIP = {"script", "noscript", "style", "textarea", "pre", "code", "annotation", "annotation-xml"}
_INCLUDED = {"br": "\n", "wbr": ""}  # tags that do not break a run of text
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_IGNORE, _PROCESS = re.compile(r"(?:^| )mathjax_ignore(?: |$)"), re.compile(r"(?:^| )mathjax_process(?: |$)")

# FindTeX: the opening delimiters (longest first), environments, and the two escapes
_START = re.compile(r"\$\$|\$|\\\(|\\\[|\\begin\s*\{([^}]*)\}|(\\[\\$])")
_CLOSE = {"$$": "$$", "$": "$", "\\(": "\\)", "\\[": "\\]"}


def _find_end(text: str, pos: int, close: str) -> int | None:
    """Where the math opened before ``pos`` ends (the index after its closing delimiter), or None."""
    pattern = re.compile(re.escape(close) + r"|\\[a-zA-Z]+|\\.|[{}]")
    braces = 0
    for m in pattern.finditer(text, pos):
        if m.group(0) == close and braces == 0:
            return m.end()
        if m.group(0) == "{":
            braces += 1
        elif m.group(0) == "}" and braces:
            braces -= 1
    return None


def text_math(text: str) -> list[str]:
    """The math MathJax finds in one run of text, each with its delimiters.

    >>> text_math("net of $4.6 billion and $246 million; \\\\$5 is escaped; $x^2$")
    ['$4.6 billion and $', '$x^2$']
    """
    out, pos = [], 0
    while True:
        m = _START.search(text, pos)
        if m is None:
            return out
        if m.group(2):  # \$ or \\: an escaped character, never a delimiter
            pos = m.end()
            continue
        close = f"\\end{{{m.group(1)}}}" if m.group(1) is not None else _CLOSE[m.group(0)]
        end = _find_end(text, m.end(), close)
        if end is None:
            pos = m.end()
            continue
        out.append(text[m.start():end])
        pos = end


class _Runs(HTMLParser):
    """The runs of text MathJax reads in an HTML fragment (HTMLDomStrings), ignored and skipped parts left out."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.runs: list[str] = []
        self.run = ""
        self.stack: list[tuple[str, bool]] = []  # (tag, text under it is not read)

    def _hidden(self) -> bool:
        return bool(self.stack) and self.stack[-1][1]

    def _push(self) -> None:
        if self.run.strip():
            self.runs.append(self.run)
        self.run = ""

    def handle_starttag(self, tag, attrs):
        if tag in _INCLUDED:
            if not self._hidden():
                self.run += _INCLUDED[tag]
            return
        self._push()
        if tag in _VOID:
            return
        cls = dict(attrs).get("class") or ""
        process = bool(_PROCESS.search(cls))
        hidden = (self._hidden() or tag in _SKIP or bool(_IGNORE.search(cls))) and not process
        self.stack.append((tag, hidden))

    def handle_startendtag(self, tag, attrs):  # <br/>, <div/>: opened and closed at once
        self.handle_starttag(tag, attrs)
        if tag not in _INCLUDED and tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag in _INCLUDED or tag in _VOID:
            return
        self._push()
        for i in range(len(self.stack) - 1, -1, -1):  # close up to the matching tag (forgiving, like a browser)
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        if not self._hidden():
            self.run += data


def html_math(html: str) -> list[str]:
    """The math MathJax typesets in an HTML fragment, as JupyterLab configures it.

    >>> html_math("<div>net of $4.6 billion and $246 million</div>")
    ['$4.6 billion and $']
    >>> html_math("<div class='mathjax_ignore'>net of $4.6 billion and $246</div><b>$1</b> and <b>$2</b>")
    []
    """
    parser = _Runs()
    parser.feed(html)
    parser.close()
    parser._push()
    return [m for run in parser.runs for m in text_math(run)]


# -- Markdown: JupyterLab's removeMath, then the HTML ---------------------------------------------
_SPLIT = re.compile(r"(\$\$?|\\(?:begin|end)\{[a-z]*\*?\}|\\[{}$]|[{}]|(?:\n\s*)+|@@\d+@@|\\\\[()\[\]])", re.I)
_FENCE = re.compile(r"^(?P<fence>`{3,}|(?:~T){3,})[^`\n]*\n[\s\S]*?^(?P=fence)`*$", re.M)
_CODE_SPAN = re.compile(r"(^|[^\\])(`+)([^\n]*?[^`\n])\2(?!`)", re.M)


def _remove_math(text: str) -> tuple[str, list[str]]:
    """``removeMath``: the Markdown with each math span replaced by ``@@n@@``, and the spans (HTML-escaped)."""
    if "`" in text or "~~~" in text:
        text = text.replace("~", "~T")
        text = _FENCE.sub(lambda m: m.group(0).replace("$", "~D"), text)
        text = _CODE_SPAN.sub(lambda m: m.group(0).replace("$", "~D"), text)

        def detilde(t: str) -> str:
            return re.sub(r"~([TD])", lambda m: "~" if m.group(1) == "T" else "$", t)
    else:
        def detilde(t: str) -> str:
            return t
    math: list[str] = []
    blocks = _SPLIT.split(text.replace("\r\n", "\n").replace("\r", "\n"))

    def process(i: int, j: int) -> None:
        span = "".join(blocks[i:j + 1]).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        for k in range(i + 1, j + 1):
            blocks[k] = ""
        blocks[i] = f"@@{len(math)}@@"
        math.append(detilde(span))

    start = end = last = None
    braces = 0
    i = 1
    while i < len(blocks):
        block = blocks[i]
        if block.startswith("@"):
            blocks[i] = f"@@{len(math)}@@"
            math.append(block)
        elif start is not None:
            if block == end:
                if braces:
                    last = i
                else:
                    process(start, i)
                    start = end = last = None
            elif re.search(r"\n.*\n", block):
                if last is not None:
                    i = last
                    process(start, i)
                start = end = last = None
                braces = 0
            elif block == "{":
                braces += 1
            elif block == "}" and braces:
                braces -= 1
        elif block in ("$", "$$"):
            start, end, braces = i, block, 0
        elif block in ("\\\\(", "\\\\["):
            start, end, braces = i, "\\\\)" if block.endswith("(") else "\\\\]", 0
        elif block[1:6] == "begin":
            start, end, braces = i, "\\end" + block[6:], 0
        i += 2
    if start is not None and last is not None:
        process(start, last)
    return detilde("".join(blocks)), math


def markdown_math(markdown: str) -> list[str]:
    """The math JupyterLab typesets in a Markdown cell or a ``text/markdown`` output.

    >>> markdown_math("net of \\\\$4.6 billion and \\\\$246 million")  # marked drops the escapes first
    ['$4.6 billion and $']
    >>> markdown_math('<div class="mathjax_ignore">\\n\\nnet of \\\\$4.6 billion and \\\\$246\\n\\n</div>')
    []
    >>> markdown_math("`$5` and `$6`")
    []
    """
    from markdown_it import MarkdownIt

    text, math = _remove_math(markdown)
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    html = re.sub(r"@@(\d+)@@", lambda m: math[int(m.group(1))], html)
    return html_math(html)


_AMOUNT = re.compile(r"\s*[-(]?\d")


def from_currency(span: str) -> bool:
    """Whether a math span came from dollar amounts: ``$``-delimited with a figure right after its opening
    ``$`` ("$4.6 billion and $", "$ (246) and $"); LaTeX written on purpose starts with a letter or a command.

    >>> from_currency("$4.6 billion and $"), from_currency("$x^2$"), from_currency("$k = 3$"), from_currency("$$5$$")
    (True, False, False, False)
    """
    return span.startswith("$") and not span.startswith("$$") and bool(_AMOUNT.match(span[1:]))
