"""Markdown -> a skeleton tree of heading Nodes.

The tree is the "proxy" of Proxy-Pointer RAG: every later stage talks about a
section by its node id and reads its text back from the source through the
node's line range (the "pointer").

Rules (chosen so that node ids name the same headings as the reference system's
logs):

* ATX headings only (``#`` .. ``######`` followed by a space or end of line, at
  most three spaces of indentation). Lines inside fenced code blocks (````` or
  ``~~~``) are never headings; an opening fence that is never closed is a stray line,
  not a code block to the end of the file (see :func:`code_fences`). Lines inside an
  HTML comment (``<!--`` .. ``-->``) are never headings either (:func:`html_comments`).
  A heading line whose title is longer than :data:`MAX_TITLE_CHARS` is text, not a
  heading: a PDF page with no line breaks the extractor kept comes out as one heading
  line, and its sentences must stay quotable, whichever extraction backend made it.
  Setext headings are headings too (:func:`setext_headings`): a paragraph underlined with
  ``===`` (level 1) or ``---`` (level 2), by CommonMark's rules, so a ``---`` after a blank
  line, a list item, a block quote, a table row, or inside a code fence or an HTML block
  is not an underline. The heading's line is the paragraph's first line and its title the
  paragraph's lines joined; the underline is the first line of its text. No reference
  document has one, so their node ids are unchanged.
* Node ids are assigned in pre-order, which for headings is simply file order,
  zero-padded to 4 digits: ``0001`` is the first heading, ``0000`` the document
  root (its own text is whatever precedes the first heading).
* The parent of a heading is the nearest heading above it with a smaller level,
  so a ``#`` after ``###`` closes both.
* Display titles lose emphasis markers and inline HTML (``**Free Cash Flow**`` ->
  ``Free Cash Flow``); the raw title is kept.

Line numbers are 1-based and inclusive: a node's own text is
``line_start..text_end`` (its heading line up to the line before the next
heading) and its subtree is ``line_start..subtree_end`` (up to the line before the
next heading of the same or a higher level).

This module does not decide what is noise, does not chunk and does not read
images; it only records which image links a node's own text contains.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ..core.errors import InvalidInput, MissingFile, NotFound
from ..core.ids import BREADCRUMB_SEP, ROOT_ID
from .images import associate_images, image_size, label_image

__all__ = ["Image", "Node", "Tree", "build_tree", "parse_markdown", "clean_title", "code_fences", "html_comments",
           "setext_headings", "skipped_headings", "body_start", "MAX_TITLE_CHARS", "text_heading_line"]

# a heading's title longer than this is a paragraph (or a page) the extractor took for a heading. Real
# titles are long in filings: risk-factor headings reach 274 characters in the reference 10-Ks and 449 in
# an extracted 10-K of the FinanceBench shelf (docs/guarantees.md has the count)
MAX_TITLE_CHARS = 500

# the title runs from the first to the last character that is no blank (read greedily: a lazy title tried the
# trailing blanks at every character, quadratic in a run of blanks inside the line)
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+((?:.*[^ \t])?))?[ \t]*$")
_CLOSING_HASHES = re.compile(r"(?:^|(?<![ \t])[ \t]+)#+[ \t]*$")  # a run of blanks tried once, from its start
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_COMMENT_OPEN = re.compile(r"^ {0,3}<!--")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_SETEXT_ANY = re.compile(r"\n {0,3}(?:=+|-+)[ \t]*(?:\n|$)")
# an image link; its alt text holds no "[" and its target no "(" or "<", so an opener never reads past the next
# one: linear in the line (``![a](`` repeated 12,000 times took 26 s when the parts could run to the line's end)
_IMAGE = re.compile(r"!\[([^\[\]]*)\]\(\s*<?([^()\s<>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HTML_TAG = re.compile(r"</?[a-zA-Z][^<>]*>")
_EMPHASIS = re.compile(r"(\*{1,3}|_{2,3})(\S(?:.*?\S)?)\1|(?<!\w)_(\S(?:.*?\S)?)_(?!\w)")


def clean_title(raw: str) -> str:
    """Display form of a heading: no inline HTML, no emphasis markers.

    >>> clean_title("<u>**Business Risks**</u>")
    'Business Risks'
    """
    title = _HTML_TAG.sub("", raw)
    prev = None
    while prev != title:  # nested emphasis: ***x*** -> x
        prev, title = title, _EMPHASIS.sub(lambda m: m.group(2) if m.group(2) is not None else m.group(3), title)
    title = title.replace("**", "").strip().strip("*").strip()
    return re.sub(r"\s+", " ", title)


@dataclass(frozen=True)
class Image:
    """An image link found in a node's own text.

    ``path`` is exactly as written in the Markdown; ``resolved`` is the absolute
    path of the file when the link stays inside the document's folder and the
    file exists, else ``None`` with the reason in ``problem``.
    """

    path: str
    line: int
    alt: str = ""
    resolved: str | None = None
    problem: str | None = None
    kind: str = "figure"  # figure | table | formula
    label: str = ""
    figure: str = ""  # "figure 5" / "table 1": the caption it belongs to (images sharing it are one figure)
    discussed_in: tuple[str, ...] = ()  # node ids whose text names that figure ("as shown in Figure 5")
    discussion: str = ""  # those sentences, clipped
    width: int = 0  # pixels, from the file's header (0: unknown)
    height: int = 0


@dataclass(frozen=True)
class Node:
    """One heading of a document (or the document root, id ``0000``)."""

    node_id: str
    title: str
    level: int  # 1..6; the root has level 0
    line_start: int  # heading line (1-based); the root starts at 1
    text_end: int  # last line of the node's own text (inclusive)
    subtree_end: int  # last line of the node's subtree (inclusive)
    parent_id: str | None
    children: tuple[str, ...]
    path: tuple[str, ...]  # titles from the document name down to this node
    raw_title: str = ""
    images: tuple[Image, ...] = ()

    @property
    def breadcrumb(self) -> str:
        """``Doc > Section > Subsection``."""
        return BREADCRUMB_SEP.join(self.path)

    @property
    def depth(self) -> int:
        """Number of ancestors below the root (root 0, a top heading 1)."""
        return len(self.path) - 1

    def __repr__(self) -> str:
        return (
            f"Node({self.node_id} L{self.level} lines {self.line_start}-{self.text_end}"
            f"/{self.subtree_end} {self.breadcrumb!r})"
        )


@dataclass(frozen=True)
class Tree:
    """A document's skeleton: nodes in pre-order, keyed by node id."""

    doc: str
    source: str  # path of the Markdown file (as given), "" for in-memory text
    sha256: str
    n_lines: int
    nodes: dict[str, Node] = field(repr=False)

    @property
    def root(self) -> Node:
        return self.nodes[ROOT_ID]

    def __getitem__(self, node_id: str) -> Node:
        try:
            return self.nodes[node_id]
        except KeyError:
            raise NotFound(f"{self.doc} has no node {node_id!r} (ids 0000..{len(self.nodes) - 1:04d})") from None

    def __iter__(self):
        return iter(self.nodes.values())

    def __len__(self) -> int:
        return len(self.nodes)

    def __repr__(self) -> str:
        return f"Tree({self.doc!r}, {len(self.nodes) - 1} headings, {self.n_lines} lines)"

    def headings(self) -> list[Node]:
        """All nodes but the root, in pre-order."""
        return [n for n in self.nodes.values() if n.node_id != ROOT_ID]

    def find(self, title: str) -> list[Node]:
        """Nodes whose display title equals ``title`` (case-insensitive)."""
        t = title.casefold()
        return [n for n in self.nodes.values() if n.title.casefold() == t]

    def node_at_line(self, line: int) -> Node:
        """The node whose own text contains ``line``."""
        best = self.root
        for n in self.nodes.values():
            if n.line_start <= line <= n.text_end:
                best = n
        return best

    def text(self, node_id: str, lines: list[str], *, subtree: bool = False) -> str:
        """Text of a node read from ``lines`` (the document's lines)."""
        n = self[node_id]
        end = n.subtree_end if subtree else n.text_end
        return "\n".join(lines[n.line_start - 1 : end])

    def to_dict(self) -> dict:
        return {
            "doc": self.doc,
            "source": self.source,
            "sha256": self.sha256,
            "n_lines": self.n_lines,
            "nodes": [asdict(n) for n in self.nodes.values()],
        }

    @classmethod
    def from_dict(cls, d: dict) -> Tree:
        nodes = {}
        for nd in d["nodes"]:
            nd = dict(nd)
            nd["children"] = tuple(nd["children"])
            nd["path"] = tuple(nd["path"])
            nd["images"] = tuple(Image(**{**im, "discussed_in": tuple(im.get("discussed_in", ()))})
                                 for im in nd.get("images", ()))
            nodes[nd["node_id"]] = Node(**nd)
        return cls(doc=d["doc"], source=d["source"], sha256=d["sha256"], n_lines=d["n_lines"], nodes=nodes)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Tree:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


def code_fences(lines: list[str]) -> tuple[set[int], list[int]]:
    """The 1-based lines inside fenced code blocks (fence lines included), and the lines of
    opening fences that are never closed.

    CommonMark lets an unclosed fence run to the end of the document, which in an extracted
    filing silently swallows every later heading. Here an opening fence with no closing fence
    is a stray line, not a code block: the lines after it are read as Markdown (headings
    included), and the stray fence is reported (``ppkit tree --check``: ``unclosed_fence``).

    >>> code_fences(["```", "# not a heading", "```", "# A", "```py", "# B"])
    ({1, 2, 3}, [5])
    """
    inside: set[int] = set()
    stray: list[int] = []
    no_close: dict[str, int] = {}  # fence char -> a length no later line closes (skips rescans)
    i = 0
    while i < len(lines):  # each pass moves past a closed block or a stray fence: bounded by len(lines)
        m = _FENCE.match(lines[i])
        # a backtick fence whose info string holds a backtick is not a fence (CommonMark)
        if not m or (m.group(1)[0] == "`" and "`" in lines[i].strip()[len(m.group(1)):]):
            i += 1
            continue
        fence = m.group(1)
        close = None
        if len(fence) >= no_close.get(fence[0], len(fence) + 1):
            stray.append(i + 1)
            i += 1
            continue
        for j in range(i + 1, len(lines)):
            c = _FENCE.match(lines[j])
            if c and c.group(1)[0] == fence[0] and len(c.group(1)) >= len(fence) \
                    and not lines[j].strip()[len(c.group(1)):].strip():
                close = j
                break
        if close is None:
            no_close[fence[0]] = min(len(fence), no_close.get(fence[0], len(fence)))
            stray.append(i + 1)
            i += 1
            continue
        inside.update(range(i + 1, close + 2))
        i = close + 1
    return inside, stray


def html_comments(lines: list[str], fenced: set[int] | None = None) -> tuple[set[int], list[int]]:
    """The 1-based lines inside HTML comments that span lines (``<!--`` opening a line, up to the line
    holding ``-->``), and the lines of comments never closed. Like an unclosed fence, an unclosed
    comment hides nothing. ``fenced``: lines inside code fences (computed when not given).

    >>> html_comments(["<!--", "# hidden", "-->", "# A", "<!-- one line -->", "<!-- open"])
    ({1, 2, 3}, [6])
    """
    fenced = code_fences(lines)[0] if fenced is None else fenced
    next_close = [len(lines)] * (len(lines) + 1)  # index of the first line >= i holding "-->"
    for i in range(len(lines) - 1, -1, -1):
        next_close[i] = i if "-->" in lines[i] else next_close[i + 1]
    inside: set[int] = set()
    stray: list[int] = []
    i = 0
    while i < len(lines):
        m = _COMMENT_OPEN.match(lines[i])
        if not m or i + 1 in fenced or "-->" in lines[i][m.end():]:
            i += 1
            continue
        close = next_close[i + 1]
        if close >= len(lines):
            stray.append(i + 1)
            i += 1
            continue
        inside.update(range(i + 1, close + 2))
        i = close + 1
    return inside, stray


_BLOCK_TAGS = frozenset(
    "address article aside base basefont blockquote body caption center col colgroup dd details dialog dir div dl dt "
    "fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 head header hr html iframe legend li link "
    "main menu menuitem nav noframes ol optgroup option p param search section summary table tbody td tfoot th thead "
    "title tr track ul".split())
_HTML_RAW = re.compile(r"^ {0,3}<(pre|script|style|textarea)(?:[ \t>]|$)", re.I)  # CommonMark HTML block 1
_HTML_OTHER = ((re.compile(r"^ {0,3}<\?"), "?>"), (re.compile(r"^ {0,3}<![a-zA-Z]"), ">"),  # blocks 3-5
               (re.compile(r"^ {0,3}<!\[CDATA\["), "]]>"))
_HTML_BLOCK_TAG = re.compile(r"^ {0,3}</?([a-zA-Z][a-zA-Z0-9-]*)(?:[ \t>]|/>|$)")  # block 6 (a known tag name)
_HTML_LONE_TAG = re.compile(  # block 7: one whole open or closing tag alone on its line
    r"^ {0,3}(?:<[a-zA-Z][a-zA-Z0-9-]*(?:\s+[a-zA-Z_:][\w.:-]*(?:\s*=\s*(?:[^\s\"'=<>`]+|'[^']*'|\"[^\"]*\"))?)*\s*/?>"
    r"|</[a-zA-Z][a-zA-Z0-9-]*\s*>)[ \t]*$")
_THEMATIC = re.compile(r"^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-+*]|(\d{1,9})[.)])(?:[ \t]+(\S)?|$)")
_LINK_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:")


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip(" "))


def _interrupts(line: str) -> bool:
    """A line that ends an open paragraph by starting a block of its own (CommonMark): an ATX heading,
    a rule, a code fence, a block quote or an HTML block of kinds 1-6 (a list item is decided apart)."""
    tag = _HTML_BLOCK_TAG.match(line)
    return bool(_ATX.match(line) or _THEMATIC.match(line) or _FENCE.match(line) or line.lstrip(" ").startswith((">", "<!--"))
                or _HTML_RAW.match(line) or any(rx.match(line) for rx, _ in _HTML_OTHER)
                or (tag and tag.group(1).lower() in _BLOCK_TAGS))


def _title_why(raw: str) -> str:
    """Why a heading's raw title makes it text ("" when it is a heading)."""
    if len(raw) > MAX_TITLE_CHARS and len(clean_title(raw)) > MAX_TITLE_CHARS:
        return f"a title of {len(clean_title(raw)):,} characters (over {MAX_TITLE_CHARS}): read as text"
    return ""


def setext_headings(lines: list[str], fenced: set[int] | None = None,
                    commented: set[int] | None = None) -> list[tuple[int, int, str, int]]:
    """(1-based first line, level, raw title, underline line) of every setext heading: a paragraph
    underlined with ``=`` (level 1) or ``-`` (level 2), by CommonMark's block rules.

    One pass over the lines keeps the paragraph being read and what it lies in. A paragraph ends
    at a blank line and at a line that starts another block (an ATX heading, a thematic break, a
    list item, a block quote, an HTML block, a code fence); its lines are then the heading's
    title. An underline is no underline after a blank line (``---`` is then a rule), under a list
    item, a block quote or their lazy lines (a heading inside a list is not a section), under a
    table row (``| a |``), or inside a code fence (``fenced``), an HTML comment (``commented``) or
    another HTML block (``<table>`` up to the next blank line, ``<pre>`` to ``</pre>``...). Like
    an unclosed fence, an HTML block whose end never comes is one line. Linear in the lines.

    >>> setext_headings(["Title", "=====", "", "text", "", "---", "- item", "---", "Two", "lines", "-"])
    [(1, 1, 'Title', 2), (9, 2, 'Two lines', 11)]
    """
    if not _SETEXT_ANY.search("\n" + "\n".join(lines)):
        return []  # no underline at all (most documents): nothing to read
    fenced = code_fences(lines)[0] if fenced is None else fenced
    commented = html_comments(lines, fenced)[0] if commented is None else commented
    out: list[tuple[int, int, str, int]] = []
    para: int | None = None  # 0-based first line of the open paragraph
    para_ok = False  # the open paragraph can take an underline (not a list's, a quote's or a table's)
    in_list = 0  # inside a list item: the column of its text (lines indented so far stay in it)
    html_end: str | None = None  # the open HTML block's end ("" = a blank line ends it)
    ends: dict[str, list[int]] = {}  # end marker -> index of the first line >= i holding it (built on need)

    def end_line(i: int, marker: str) -> int:
        if marker not in ends:
            nxt = [len(lines)] * (len(lines) + 1)
            for j in range(len(lines) - 1, -1, -1):
                nxt[j] = j if marker in lines[j].lower() else nxt[j + 1]
            ends[marker] = nxt
        return ends[marker][i]

    skip_to = -1  # lines up to this index belong to an HTML block with an end marker
    for i, line in enumerate(lines):
        if i <= skip_to:
            continue
        blank = not line.strip()
        if html_end == "":  # an HTML block of kind 6 or 7 runs to a blank line
            if blank:
                html_end = None
            continue
        if i + 1 in fenced or i + 1 in commented or line.lstrip(" ").startswith("<!--"):
            para, para_ok = None, False
            if in_list and _indent(line) < in_list and not blank:
                in_list = 0  # a fence or comment left of the item's text ends the list
            continue
        if blank:
            para = None
            continue
        if not in_list and line[:1].isalpha():  # the common case: a paragraph's line (it starts with a letter)
            if para is None:
                para, para_ok = i, True
            continue
        indent = _indent(line)
        item = None if _THEMATIC.match(line) else _LIST_ITEM.match(line)  # `* * *` is a rule
        if in_list and not item:
            # a line indented to the item's text is in the item; a paragraph line under the item's open
            # paragraph is lazy (in it too); anything else ends the list
            if indent >= in_list or (para is not None and not _interrupts(line)):
                if indent >= in_list and (_SETEXT.match(line.strip()) or _interrupts(line.strip())):
                    para = None  # the item's own heading, rule or block: its text is not a paragraph now
                elif para is None:
                    para = i
                para_ok = False
                continue
            in_list = 0
        m = _SETEXT.match(line)
        if m and para is not None and para_ok:
            raw = " ".join(ln.strip() for ln in lines[para:i])
            out.append((para + 1, 1 if m.group(1)[0] == "=" else 2, raw, i + 1))
            para = None
            continue
        if para is not None and indent >= 4:  # a paragraph's continuation may be indented
            continue
        if indent >= 4 or _ATX.match(line) or _THEMATIC.match(line) or _FENCE.match(line):
            para = None  # indented code, a heading, a rule, a stray fence
            continue
        if item and (para is None or in_list or ((item.group(1) in (None, "1")) and item.group(2))):
            # the item's text starts after the marker and its spaces (an empty item: 2 columns past the marker)
            in_list = (len(item.group(0)) - 1 if item.group(2) else len(item.group(0).rstrip()) + 1)
            para, para_ok = (i if item.group(2) else None), False
            continue
        if line.lstrip(" ").startswith(">"):
            inner = line.lstrip(" ")[1:]
            if not inner.strip() or _SETEXT.match(inner) or _interrupts(inner.strip()):
                para = None  # the quote's own blank line, heading, rule or block: no paragraph open
            elif para is None or para_ok:
                para = i
            para_ok = False
            continue
        raw_block = _HTML_RAW.match(line)
        other = next((end for rx, end in _HTML_OTHER if rx.match(line)), None)
        if raw_block or other:
            marker = f"</{raw_block.group(1).lower()}>" if raw_block else other
            close = end_line(i, marker) if marker not in line[line.index("<") + 1:].lower() else i
            skip_to = close if close < len(lines) else i  # never closed: one line, like a stray fence
            para = None
            continue
        tag = _HTML_BLOCK_TAG.match(line)
        if (tag and tag.group(1).lower() in _BLOCK_TAGS) or (para is None and _HTML_LONE_TAG.match(line)):
            html_end, para = "", None
            continue
        if para is None:
            if _LINK_DEF.match(line):
                continue
            para, para_ok = i, True
        if line.lstrip(" ").startswith("|"):
            para_ok = False  # a table row is never a heading's title
    return out


def _all_headings(lines: list[str]) -> list[tuple[int, int, str, str, str]]:
    """(1-based line, level, raw title, why it is not a heading or "", "atx" | "setext") of every ATX heading
    line outside code fences and every setext heading, in line order."""
    out = []
    fenced = code_fences(lines)[0]
    commented = html_comments(lines, fenced)[0]
    for i, line in enumerate(lines, start=1):
        if i in fenced:
            continue
        h = _ATX.match(line)
        if h:
            raw = _CLOSING_HASHES.sub("", h.group(2) or "").strip()
            out.append((i, len(h.group(1)), raw, "inside an HTML comment" if i in commented else _title_why(raw), "atx"))
    out += [(i, level, raw, _title_why(raw), "setext") for i, level, raw, _ in setext_headings(lines, fenced, commented)]
    return sorted(out)


def text_heading_line(line: str) -> bool:
    """Whether ``line`` is written as an ATX heading that the tree reads as text: its title is over
    :data:`MAX_TITLE_CHARS` (a paragraph or a page the extractor took for a heading), so it is to be quoted.

    >>> text_heading_line("## " + "word " * 120), text_heading_line("## Results")
    (True, False)
    """
    h = _ATX.match(line)
    return bool(h) and bool(_title_why(_CLOSING_HASHES.sub("", h.group(2) or "").strip()))


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(1-based line, level, raw title) of every heading: ATX outside code fences and HTML comments, and
    setext, with a title of at most :data:`MAX_TITLE_CHARS` characters."""
    return [(i, level, raw) for i, level, raw, why, _ in _all_headings(lines) if not why]


def skipped_headings(lines: list[str]) -> list[tuple[int, str, str]]:
    """(1-based line, kind, why) of each line that looks like a heading but is not read as one, and of
    each setext heading: ``comment_heading`` (inside an HTML comment), ``long_title`` (over
    :data:`MAX_TITLE_CHARS`) and ``setext_heading`` (underlined: read as a heading, reported because a
    ``---`` meant as a rule directly under a paragraph makes that paragraph a heading).

    >>> skipped_headings(["Title", "=====", "", "<!--", "# old", "-->"])
    [(1, 'setext_heading', 'underlined with ===: a level-1 heading; for a rule, leave a blank line above it'), (5, 'comment_heading', 'inside an HTML comment')]
    """
    out = []
    for i, level, _, why, kind in _all_headings(lines):
        if why:
            out.append((i, "comment_heading" if why.startswith("inside") else "long_title", why))
        elif kind == "setext":
            out.append((i, "setext_heading", f"underlined with {'===' if level == 1 else '---'}: a level-{level} "
                                             "heading; for a rule, leave a blank line above it"))
    return out


def _images(lines: list[str], start: int, end: int, doc_dir: Path | None) -> tuple[Image, ...]:

    out = []
    for ln in range(start, end + 1):
        for m in _IMAGE.finditer(lines[ln - 1]):
            alt, target = m.group(1), m.group(2)
            resolved, problem = _resolve_image(target, doc_dir)
            kind, label = label_image(lines, ln, target, alt=alt)
            width, height = image_size(resolved)
            out.append(Image(path=target, line=ln, alt=alt, resolved=resolved, problem=problem, kind=kind, label=label,
                             width=width, height=height))
    return tuple(out)


def _resolve_image(target: str, doc_dir: Path | None) -> tuple[str | None, str | None]:
    """Confine an image link to the document's folder; never follow it outside."""
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
        return None, "a URL, not loaded"
    if target.startswith(("/", "\\")) or re.match(r"^[a-zA-Z]:[\\/]", target):
        return None, "an absolute path, not loaded"
    if doc_dir is None:
        return None, "the document has no folder (built from text)"
    base = doc_dir.resolve()
    p = (base / target).resolve()
    if base != p and base not in p.parents:
        return None, "the link climbs out of the document's folder, not loaded"
    if not p.is_file():
        return None, "the file does not exist"
    return str(p), None


def parse_markdown(text: str, doc: str, *, source: str = "", doc_dir: Path | None = None) -> Tree:
    """Build the Tree of a Markdown string.

    Args:
        text: the Markdown.
        doc: the document's name, the first element of every breadcrumb.
        source: where the text came from (recorded, not read).
        doc_dir: folder that image links are resolved against (``None``: not resolved).

    Returns:
        A Tree whose nodes are in pre-order.

    >>> parse_markdown("# A\\n## B\\n", "D")["0002"].breadcrumb
    'D > A > B'
    """
    lines = _split_lines(text)
    n_lines = len(lines)
    heads = _headings(lines)
    starts = [h[0] for h in heads]

    # parent of each heading: nearest earlier heading with a smaller level
    parent: list[int | None] = []
    stack: list[int] = []  # indices into heads
    for i, (_, level, _) in enumerate(heads):
        while stack and heads[stack[-1]][1] >= level:
            stack.pop()
        parent.append(stack[-1] if stack else None)
        stack.append(i)

    # end of subtree: line before the next heading of the same or higher level
    subtree_end = [n_lines] * len(heads)
    stack = []
    for i, (line, level, _) in enumerate(heads):
        while stack and heads[stack[-1]][1] >= level:
            subtree_end[stack.pop()] = line - 1
        stack.append(i)

    ids = [f"{i + 1:04d}" for i in range(len(heads))]
    children: dict[str, list[str]] = {ROOT_ID: []}  # node id -> child ids
    for i, p in enumerate(parent):
        children.setdefault(ids[i], [])
        children[ROOT_ID if p is None else ids[p]].append(ids[i])

    titles = [clean_title(h[2]) or "(untitled)" for h in heads]
    paths: list[tuple[str, ...]] = []
    for i, p in enumerate(parent):
        paths.append((paths[p] if p is not None else (doc,)) + (titles[i],))

    root_end = (starts[0] - 1) if starts else n_lines
    nodes = {
        ROOT_ID: Node(
            node_id=ROOT_ID, title=doc, level=0, line_start=1, text_end=root_end,
            subtree_end=n_lines, parent_id=None, children=tuple(children[ROOT_ID]),
            path=(doc,), raw_title=doc, images=_images(lines, 1, root_end, doc_dir),
        )
    }
    for i, (line, level, raw) in enumerate(heads):
        text_end = (starts[i + 1] - 1) if i + 1 < len(heads) else n_lines
        nodes[ids[i]] = Node(
            node_id=ids[i], title=titles[i], level=level, line_start=line, text_end=text_end,
            subtree_end=subtree_end[i], parent_id=ROOT_ID if parent[i] is None else ids[parent[i]],
            children=tuple(children[ids[i]]), path=paths[i], raw_title=raw,
            images=_images(lines, line, text_end, doc_dir),
        )
    # captions by number and proximity in either direction, figures grouped, discussing nodes linked
    linked = associate_images(lines, list(nodes.values()))
    nodes = {nid: replace(n, images=linked[nid]) for nid, n in nodes.items()}
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Tree(doc=doc, source=source, sha256=sha, n_lines=n_lines, nodes=nodes)


def build_tree(path: str | Path, doc: str | None = None) -> Tree:
    """Read a Markdown file and build its Tree.

    Args:
        path: the ``.md`` file.
        doc: document name for breadcrumbs (default: the file's stem).

    >>> tree = build_tree("../shared/data/10k/AMD.md")  # doctest: +SKIP
    >>> tree["0066"].title                                # doctest: +SKIP
    'Embedded'
    """
    path = Path(path)
    if not path.is_file():
        raise MissingFile(f"no such Markdown file: {path}")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InvalidInput(
            f"{path} is not UTF-8 text (byte {e.start}): convert it to UTF-8 Markdown first"
        ) from None
    if "\x00" in text:
        raise InvalidInput(f"{path} holds NUL bytes: it looks binary, not Markdown")
    tree = parse_markdown(text, doc or path.stem, source=str(path), doc_dir=path.parent)
    # the hash is of the file's bytes, so that a pointer check can compare bytes
    return Tree(doc=tree.doc, source=tree.source, sha256=hashlib.sha256(raw).hexdigest(),
                n_lines=tree.n_lines, nodes=tree.nodes)


def body_start(lines: list[str], node: Node) -> int:
    """The first line of a node's text below its heading (1-based): the line after an ATX heading, after a
    setext heading's underline (its title may take several lines), or 1 for the document root.

    >>> t = parse_markdown("Title\\n=====\\nText.\\n# Next\\nMore.\\n", "d")
    >>> [body_start("Title\\n=====\\nText.\\n# Next\\nMore.".split("\\n"), n) for n in t.headings()]
    [3, 5]
    """
    if node.node_id == ROOT_ID:
        return node.line_start
    if _ATX.match(lines[node.line_start - 1]):
        return node.line_start + 1
    for ln in range(node.line_start + 1, node.text_end + 1):
        if _SETEXT.match(lines[ln - 1]):
            return ln + 1
    return node.line_start + 1


def read_lines(path: str | Path) -> list[str]:
    """The lines of a Markdown file, numbered as the tree numbers them (index = line - 1)."""
    return _split_lines(Path(path).read_text(encoding="utf-8"))


def _split_lines(text: str) -> list[str]:
    """The lines of a Markdown text; a UTF-8 byte order mark (which Windows editors write) is not
    part of the first line, so ``\ufeff# Title`` is a heading. A line ends at ``\n``, ``\r\n`` or a lone ``\r``
    (old Mac files), as Python's text files read them, so the tree and the lines read back agree."""
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":  # a trailing newline is not a line of its own
        lines.pop()
    return lines
