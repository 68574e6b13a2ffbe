"""Showing an answer with its images: inline in a notebook, as a static table or figure, in a widget.

Every image is read through :func:`ppkit.documents.images.read_image_bytes`, which refuses a
record that does not point inside its document's folder. Labels are shown without Unicode
private-use characters (:func:`ppkit.core.style.strip_private_use`: the math-font glyphs of
formula captions, which browsers draw as boxes). :func:`answer_html` renders the answer's Markdown
(bullets, links, emphasis) the way :func:`show_answer` does, with markdown-it-py; the cited-answer widget
that uses these pieces is :class:`ppkit.ui.cited_answer.CitedAnswer`.
"""

from __future__ import annotations

import html
import math
import re

from ..core.errors import MissingDependency
from ..core.style import block, strip_private_use
from ..core.text import clip
from ..documents.images import read_image_bytes
from ..indexing.index import SearchIndex

__all__ = ["display_width", "images_markdown", "show_answer", "image_grid", "answer_html", "escape_dollars",
           "image_widgets"]


def _label(im: dict) -> str:
    """The label an image is shown with (its path when it has none), without private-use glyphs."""
    return strip_private_use(im.get("label") or "") or im["path"]


def display_width(im: dict, width: int) -> int:
    """The width to show an image at: ``width``, but never more than its own pixels (no upscaling)."""
    own = int(im.get("width") or 0)
    return min(width, own) if own > 0 else width


def images_markdown(answer) -> str:
    """A static Markdown table of the answer's images: label, kind, section, why chosen, file."""
    if not answer.images:
        return "_No image chosen for this answer._"
    rows = ["| # | label | kind | from section | why chosen | file |", "|---|---|---|---|---|---|"]
    for i, im in enumerate(answer.images, start=1):
        label = strip_private_use(im.get("label") or "").replace("|", "\\|")
        why = (im.get("reason") or "").replace("|", "\\|")
        rows.append(f"| {i} | {label} | {im.get('kind', '')} | {im.get('breadcrumb', '')} "
                    f"(`{im['doc']}#{im['node_id']}`) | {why} | `{im['path']}` |")
    return "\n".join(rows)


def show_answer(answer, *, width: int = 520, text: bool = True) -> None:
    """Display an answer in a notebook with its images inline, each with its label and section."""
    from IPython.display import Image as IPImage
    from IPython.display import Markdown, display

    if text:
        display(Markdown(escape_dollars(_without_image_links(answer._repr_markdown_()))))
    if not answer.images:
        display(Markdown("_No image chosen for this answer._"))
    for im in answer.images:
        why = f"  \nwhy: {im['reason']}" if im.get("reason") else ""
        display(Markdown(f"**{_label(im)}**  \nfrom *{im.get('breadcrumb', '')}* "
                         f"(`{im['doc']}#{im['node_id']}`, `{im['path']}`){why}"))
        try:
            data, _ = read_image_bytes(im)
        except (ValueError, OSError) as e:
            display(Markdown(f"_not shown: {e}_"))
            continue
        display(IPImage(data=data, width=display_width(im, width)))


def image_grid(answer, *, cols: int = 3, size: float = 3.2):
    """A matplotlib Figure with the answer's images and their labels (the caller saves it); None if no image."""
    if not answer.images:
        return None
    import io

    import matplotlib.image as mpimg
    import matplotlib.pyplot as plt

    n = len(answer.images)
    cols = min(cols, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(size * cols, size * rows), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, im in zip(axes.flat, answer.images):
        try:
            data, _ = read_image_bytes(im)
            ax.imshow(mpimg.imread(io.BytesIO(data), format=im["path"].rsplit(".", 1)[-1]))
        except (ValueError, OSError) as e:
            ax.text(0.5, 0.5, f"not shown:\n{e}"[:120], ha="center", va="center", wrap=True, fontsize=7)
        ax.set_title(clip(f"{im['doc']}: {_label(im)}", 60), fontsize=8)
    fig.tight_layout()
    plt.close(fig)  # the caller displays or saves it; an open figure would be drawn a second time
    return fig


_IMAGE_LINK = re.compile(r"!\[[^\[\]]*\]\([^()]*\)")
_EMPTY_QUOTE = re.compile(r"^\s*[-*]\s+line \d+(?:-\d+)?:\s*$")


def _without_image_links(markdown: str) -> str:
    """``markdown`` without image links (the images are shown apart, from their records) and without the
    quoted-line bullets that held nothing else ("- line 227:")."""
    out = []
    for line in markdown.split("\n"):
        bare = _IMAGE_LINK.sub("", line)
        if bare != line and _EMPTY_QUOTE.match(bare.rstrip().rstrip("\\")) or bare != line and not bare.strip():
            continue
        out.append(bare)
    return "\n".join(out)


def escape_dollars(markdown: str) -> str:
    """``markdown`` with every unescaped ``$`` escaped, so a notebook does not typeset "$9,068 million; truth
    $9068.00" as LaTeX.

    >>> escape_dollars("$9,068 million; truth $9068.00")
    '\\$9,068 million; truth \\$9068.00'
    """
    return re.sub(r"(?<!\\)\$", r"\\$", markdown)


def answer_html(answer, *, sections: bool = True) -> str:
    """The answer's text and sections (its ``_repr_markdown_``) rendered to HTML, as a notebook renders
    Markdown: bullets become lists, links become links (opening in a new tab), raw HTML is escaped; image
    links are left out (the images are shown from their records). ``sections=False``: the text only."""
    try:
        from markdown_it import MarkdownIt
    except ImportError:
        raise MissingDependency("the answer widget needs markdown-it-py: pip install 'ppkit[notebooks]'") from None
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    source = answer._repr_markdown_() if sections else answer.text.replace("\n", "  \n")
    body = md.render(_without_image_links(source)).replace("<a href=", "<a target='_blank' rel='noopener' href=")
    return block(body)


def image_widgets(answer, width: int) -> list:
    """Widgets for the answer's images: each an ``ipywidgets.Image`` under its label and section (a note when
    there is none). ``ipywidgets.Image`` children rather than output captured in an ``Output`` widget, which
    headless runners (nbclient) handle poorly for large outputs."""
    import ipywidgets as w

    kids = []
    for im in answer.images:
        kids.append(w.HTML(block(f"<b>{html.escape(_label(im))}</b><br>from <i>{html.escape(im.get('breadcrumb', ''))}</i> "
                                 f"(<code>{html.escape(im['doc'])}#{html.escape(im['node_id'])}</code>)")))
        try:
            data, mime = read_image_bytes(im)
            kids.append(w.Image(value=data, format=mime.split("/")[1], width=display_width(im, width)))
        except (ValueError, OSError) as e:
            kids.append(w.HTML(block(f"<i>not shown: {html.escape(str(e))}</i>")))
    if not answer.images:
        kids.append(w.HTML(block("<i>No image chosen for this answer.</i>")))
    return kids
