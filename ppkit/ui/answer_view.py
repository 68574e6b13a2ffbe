"""Showing an answer with its images: inline in a notebook, as a static table or figure, in a widget.

Every image is read through :func:`ppkit.documents.images.read_image_bytes`, which refuses a
record that does not point inside its document's folder. Re-exported by
:mod:`ppkit.documents.images`.
"""

from __future__ import annotations

import math

from ..core.text import clip
from ..documents.images import read_image_bytes
from ..indexing.index import SearchIndex

__all__ = ["images_markdown", "show_answer", "image_grid", "answer_widget"]

def images_markdown(answer) -> str:
    """A static Markdown table of the answer's images: label, kind, section, file."""
    if not answer.images:
        return "_No image chosen for this answer._"
    rows = ["| # | label | kind | from section | file |", "|---|---|---|---|---|"]
    for i, im in enumerate(answer.images, start=1):
        label = (im.get("label") or "").replace("|", "\\|")
        rows.append(f"| {i} | {label} | {im.get('kind', '')} | {im.get('breadcrumb', '')} "
                    f"(`{im['doc']}#{im['node_id']}`) | `{im['path']}` |")
    return "\n".join(rows)


def show_answer(answer, *, width: int = 520, text: bool = True) -> None:
    """Display an answer in a notebook with its images inline, each with its label and section."""
    from IPython.display import Image as IPImage
    from IPython.display import Markdown, display

    if text:
        display(Markdown(answer._repr_markdown_()))
    if not answer.images:
        display(Markdown("_No image chosen for this answer._"))
    for im in answer.images:
        display(Markdown(f"**{im.get('label') or im['path']}**  \nfrom *{im.get('breadcrumb', '')}* "
                         f"(`{im['doc']}#{im['node_id']}`, `{im['path']}`)"))
        try:
            data, _ = read_image_bytes(im)
        except (ValueError, OSError) as e:
            display(Markdown(f"_not shown: {e}_"))
            continue
        display(IPImage(data=data, width=width))


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
        ax.set_title(clip(f"{im['doc']}: {im.get('label') or im['path']}", 60), fontsize=8)
    fig.tight_layout()
    return fig


def _answer_view(answer, width: int):
    """Widgets for an answer: its text, then each image (an ``ipywidgets.Image``) with label and section."""
    import html

    import ipywidgets as w

    kids = [w.HTML(f"<pre style='white-space: pre-wrap'>{html.escape(str(answer))}</pre>")]
    for im in answer.images:
        kids.append(w.HTML(f"<b>{html.escape(im.get('label') or im['path'])}</b><br>from "
                           f"<i>{html.escape(im.get('breadcrumb', ''))}</i> (<code>{im['doc']}#{im['node_id']}</code>)"))
        try:
            data, mime = read_image_bytes(im)
            kids.append(w.Image(value=data, format=mime.split("/")[1], width=width))
        except (ValueError, OSError) as e:
            kids.append(w.HTML(f"<i>not shown: {html.escape(str(e))}</i>"))
    if not answer.images:
        kids.append(w.HTML("<i>No image chosen for this answer.</i>"))
    return kids


def answer_widget(index: SearchIndex, *, k: int = 5, question: str = "", width: int = 480):
    """A small ipywidgets box: type a question, get the answer with its images inline.

    Images are ``ipywidgets.Image`` children rather than output captured in an
    ``Output`` widget, which headless runners (nbclient) handle poorly for large outputs.
    """
    import ipywidgets as w

    box = w.Text(value=question, placeholder="Ask about the papers…", layout=w.Layout(width="80%"))
    kk = w.IntSlider(value=k, min=1, max=10, description="k")
    go = w.Button(description="Ask")
    result = w.VBox([])

    def run(_=None):
        if box.value.strip():
            result.children = _answer_view(index.ask(box.value, kk.value), width)

    go.on_click(run)
    if question:
        run()
    return w.VBox([w.HBox([box, go]), kk, result])
