"""A document's Markdown, with the HTML tables PDF parsers write into it, rendered safely for a widget.

The reference 10-Ks (LlamaParse output) hold their tables as ``<table><tr><td>`` HTML inside the Markdown.
Shown escaped they are unreadable; passed through as they are, a hostile document could run script in the
notebook. So only an allow-list of text and table tags survives (:data:`ALLOWED`, with ``colspan`` /
``rowspan`` numbers as their only attributes); every other tag, comment or declaration is escaped and shows
as text. The result is then rendered as CommonMark (markdown-it-py, which also refuses ``javascript:`` links).
The math-font glyphs a PDF converter left in formulas are made readable first
(:func:`ppkit.core.style.readable_glyphs`), since browsers draw them as boxes.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

from ..core.errors import MissingDependency
from ..core.style import readable_glyphs

__all__ = ["ALLOWED", "sanitize_html", "markdown_html"]

ALLOWED = frozenset({"table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "b", "strong", "i", "em", "u",
                     "sup", "sub", "br", "p", "ul", "ol", "li", "code"})
_NUMBER = re.compile(r"\d{1,3}")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_CELL = "border:1px solid #ccc;padding:1px 4px;text-align:left;vertical-align:top"


class _Sanitizer(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=False)
        self.out: list[str] = []
        self.cells = 0  # open <td>/<th>: Markdown is not parsed inside an HTML block, so **bold** is done here

    def handle_starttag(self, tag, attrs):
        if tag not in ALLOWED:
            self.out.append(html.escape(self.get_starttag_text() or f"<{tag}>"))
            return
        kept = "".join(f' {k}="{v}"' for k, v in attrs if k in ("colspan", "rowspan") and v and _NUMBER.fullmatch(v))
        style = f" style='{_CELL}'" if tag in ("td", "th") else (" style='border-collapse:collapse;margin:4px 0'"
                                                                 if tag == "table" else "")
        self.out.append(f"<{tag}{kept}{style}>")
        self.cells += tag in ("td", "th")

    def handle_startendtag(self, tag, attrs):
        self.out.append("<br>" if tag == "br" else html.escape(self.get_starttag_text() or f"<{tag}/>"))

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cells:
            self.cells -= 1
        self.out.append(f"</{tag}>" if tag in ALLOWED and tag != "br" else html.escape(f"</{tag}>"))

    def handle_data(self, data):
        if self.cells:  # text inside a table cell is passed through as HTML: escape it, and show **bold** as bold
            self.out.append(_BOLD.sub(r"<b>\1</b>", html.escape(data, quote=False)))
        else:
            self.out.append(data)  # markdown-it escapes what needs escaping in text

    def handle_entityref(self, name):
        self.out.append(f"&{name};")

    def handle_charref(self, name):
        self.out.append(f"&#{name};")

    def handle_comment(self, data):
        self.out.append(html.escape(f"<!--{data}-->"))

    def handle_decl(self, decl):
        self.out.append(html.escape(f"<!{decl}>"))

    def handle_pi(self, data):
        self.out.append(html.escape(f"<?{data}>"))

    def unknown_decl(self, data):
        self.out.append(html.escape(f"<![{data}]>"))


def sanitize_html(text: str) -> str:
    """``text`` with every tag outside :data:`ALLOWED` escaped (and allowed tags stripped of attributes).

    >>> sanitize_html('<td colspan="2" onclick="x()">1</td><script>alert(1)</script>')[:40]
    '<td colspan="2" style=\\'border:1px solid'
    """
    parser = _Sanitizer()
    parser.feed(text)
    parser.close()
    return "".join(parser.out)


def markdown_html(text: str) -> str:
    """A document's Markdown (with its HTML tables) as safe HTML: its formula glyphs readable, :func:`sanitize_html`,
    then CommonMark."""
    try:
        from markdown_it import MarkdownIt
    except ImportError:
        raise MissingDependency("rendering needs markdown-it-py: pip install 'ppkit[notebooks]'") from None
    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    out = md.render(sanitize_html(readable_glyphs(text)))
    return out.replace("<a href=", "<a target='_blank' rel='noopener' href=")
