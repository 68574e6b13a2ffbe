"""Showing an answer with its images: inline in a notebook, as a static table or figure, in a widget.

Every image is read through :func:`ppkit.documents.images.read_image_bytes`, which refuses a
record that does not point inside its document's folder. The images are shown in the order of
:func:`shown_images`: those the question names ("Figure 3", "Table 2") first, in the order it names
them, then the others in the answer's order (the answer's own list is not changed). Labels and the
answer's text are shown with the math-font glyphs of formulas made readable
(:func:`ppkit.core.style.readable_glyphs`: a converter's private-use code points, which browsers draw
as boxes, become the sums, roots and brackets they stand for, or are dropped). :func:`answer_html`
renders the answer's Markdown (bullets, links, emphasis) the way :func:`show_answer` does, with
markdown-it-py; the cited-answer widget that uses these pieces is :class:`ppkit.ui.cited_answer.CitedAnswer`.
"""

from __future__ import annotations

import html
import math
import re

from ..core.errors import MissingDependency
from ..core.style import block, readable_glyphs
from ..core.text import clip
from ..documents.anchors import find_anchors, find_captions
from ..documents.images import read_image_bytes
from ..indexing.index import SearchIndex
from .dollars import show_markdown

__all__ = ["display_width", "images_markdown", "show_answer", "image_grid", "answer_html", "image_widgets",
           "shown_images"]


def _label(im: dict) -> str:
    """The label an image is shown with (its path when it has none), its formula glyphs readable."""
    return readable_glyphs(im.get("label") or "") or im["path"]


def _anchor_of(im: dict) -> tuple[str, str] | None:
    """The figure, table or equation an image is, from its label's leading caption ("Figure 3. ...",
    "Table 2: ...") or, for a formula, the equation its label names ("Equation (5)")."""
    label = im.get("label") or ""
    caption = find_captions(label)[:1]
    if caption:
        return caption[0][0], caption[0][1]
    named = find_anchors(label)[:1] if im.get("kind") == "formula" else []
    return (named[0].kind, named[0].number) if named else None


def shown_images(answer) -> list[dict]:
    """The answer's images in the order they are shown: the ones the question names first, in the order it
    names them, then the rest in the answer's order.

    >>> [im["label"][:8] for im in shown_images(answer)]  # "What does Figure 3 show?"  # doctest: +SKIP
    ['Figure 3', 'Figure 1', 'Figure 2']
    """
    asked = [(a.kind, a.number) for a in find_anchors(getattr(answer, "question", "") or "")]
    if not asked:
        return list(answer.images)

    def rank(im: dict) -> int:
        anchor = _anchor_of(im)
        return asked.index(anchor) if anchor in asked else len(asked)

    return sorted(answer.images, key=rank)  # stable: the answer's order inside each rank


def display_width(im: dict, width: int) -> int:
    """The width to show an image at: ``width``, but never more than its own pixels (no upscaling)."""
    own = int(im.get("width") or 0)
    return min(width, own) if own > 0 else width


def images_markdown(answer) -> str:
    """A static Markdown table of the answer's images: label, kind, section, why chosen, file."""
    if not answer.images:
        return "_No image chosen for this answer._"
    rows = ["| # | label | kind | from section | why chosen | file |", "|---|---|---|---|---|---|"]
    for i, im in enumerate(shown_images(answer), start=1):
        label = readable_glyphs(im.get("label") or "").replace("|", "\\|")
        why = (im.get("reason") or "").replace("|", "\\|")
        rows.append(f"| {i} | {label} | {im.get('kind', '')} | {im.get('breadcrumb', '')} "
                    f"(`{im['doc']}#{im['node_id']}`) | {why} | `{im['path']}` |")
    return "\n".join(rows)


def show_answer(answer, *, width: int = 520, text: bool = True) -> None:
    """Display an answer in a notebook with its images inline, each with its label and section."""
    from IPython.display import Image as IPImage
    from IPython.display import display

    if text:
        show_markdown(readable_glyphs(_without_image_links(answer._repr_markdown_())))
    if not answer.images:
        show_markdown("_No image chosen for this answer._")
    for im in shown_images(answer):
        why = f"  \nwhy: {im['reason']}" if im.get("reason") else ""
        show_markdown(f"**{_label(im)}**  \nfrom *{im.get('breadcrumb', '')}* "
                      f"(`{im['doc']}#{im['node_id']}`, `{im['path']}`){why}")
        try:
            data, _ = read_image_bytes(im)
        except (ValueError, OSError) as e:
            show_markdown(f"_not shown: {e}_")
            continue
        display(IPImage(data=data, width=display_width(im, width)))


def image_grid(answer, *, cols: int = 2, width: float = 10.0, dpi: int = 100):
    """A matplotlib Figure with the answer's images (in :func:`shown_images` order) and their labels, at a size
    that can be read: ``width`` inches at ``dpi`` (1,000 pixels by default), ``cols`` images a row, each row as
    tall as its tallest image at that width. The caller displays or saves it; None when there is no image.
    """
    if not answer.images:
        return None
    import io

    import matplotlib.image as mpimg
    import matplotlib.pyplot as plt

    images = shown_images(answer)
    pictures = []  # (array or None, the error's text)
    for im in images:
        try:
            data, _ = read_image_bytes(im)
            pictures.append((mpimg.imread(io.BytesIO(data), format=im["path"].rsplit(".", 1)[-1]), ""))
        except (ValueError, OSError) as e:
            pictures.append((None, f"not shown:\n{e}"[:120]))
    cols = min(cols, len(images))
    rows = math.ceil(len(images) / cols)
    cell = width / cols
    aspects = [p.shape[0] / p.shape[1] if p is not None else 0.5 for p, _ in pictures]
    heights = [cell * max(aspects[r * cols:(r + 1) * cols]) + 0.35 for r in range(rows)]  # + the title's line
    fig, axes = plt.subplots(rows, cols, figsize=(width, sum(heights)), dpi=dpi, squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax in axes.flat:
        ax.axis("off")
    for ax, im, (picture, error) in zip(axes.flat, images, pictures):
        if picture is not None:
            ax.imshow(picture)
        else:
            ax.text(0.5, 0.5, error, ha="center", va="center", wrap=True, fontsize=8)
        ax.set_title(clip(f"{im['doc']}: {_label(im)}", 60), fontsize=9)
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
    body = md.render(readable_glyphs(_without_image_links(source)))
    body = body.replace("<a href=", "<a target='_blank' rel='noopener' href=")
    return block(body)


def image_widgets(answer, width: int) -> list:
    """Widgets for the answer's images: each an ``ipywidgets.Image`` under its label and section (a note when
    there is none). ``ipywidgets.Image`` children rather than output captured in an ``Output`` widget, which
    headless runners (nbclient) handle poorly for large outputs."""
    import ipywidgets as w

    kids = []
    for im in shown_images(answer):
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
