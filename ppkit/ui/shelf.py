"""A shelf of filings in one index, for notebooks: what is on it, one question through the funnel, and
the PDF page a section cites shown beside the section's text, the section's lines marked on the page.

Everything here reads a loaded index (:class:`ppkit.Index`); nothing is computed that the CLI does
not also compute. Displays are static HTML (they render in JupyterLab and in a headless nbmake run).

>>> shelf_frame(index).groupby("company").size()  # doctest: +SKIP
>>> r = index.retrieve("What is 3M's FY2018 capital expenditure?", k=5)  # doctest: +SKIP
>>> show_funnel(r)  # doctest: +SKIP
>>> show_page_beside(index, r.sections[0])  # doctest: +SKIP
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

from ..core.errors import InvalidInput
from ..retrieval.types import Retrieval, Section, pages_label
from .explore import as_frame

__all__ = ["shelf_rows", "shelf_frame", "plot_shelf", "funnel_rows", "show_funnel", "page_beside_html",
           "show_page_beside", "highlighted_page"]


def shelf_rows(index) -> list[dict]:
    """One row per indexed document: company, period, form (the index's metadata), PDF pages, chunks."""
    rows = []
    for d in index.docs:
        rec = index.record(d)
        m = rec.metadata or {}
        rows.append({"doc": d, "company": m.get("company") or "?", "ticker": m.get("ticker"),
                     "period": m.get("period") or (f"FY{m['fiscal_year']}" if m.get("fiscal_year") else "?"),
                     "form": m.get("form_type") or "?", "pages": rec.page_count, "chunks": rec.n_chunks,
                     "from": "PDF" if rec.pdf else "Markdown"})
    return rows


def shelf_frame(index):
    """:func:`shelf_rows` as a DataFrame (a list of dicts without pandas)."""
    return as_frame(shelf_rows(index))


def plot_shelf(index, *, ax=None):
    """Filings per fiscal year, stacked by form: what the shelf covers at a glance."""
    import matplotlib.pyplot as plt

    rows = shelf_rows(index)
    years = sorted({r["period"][2:6] for r in rows if r["period"].startswith("FY")})
    forms = sorted({r["form"] for r in rows})
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 3.2))
    bottom = [0] * len(years)
    for form in forms:
        counts = [sum(1 for r in rows if r["form"] == form and r["period"][2:6] == y) for y in years]
        ax.bar(years, counts, bottom=bottom, label=form)
        bottom = [b + c for b, c in zip(bottom, counts)]
    ax.set_xlabel("fiscal year (from each filing's cover page)")
    ax.set_ylabel("filings")
    ax.set_title(f"{len(rows)} documents, {len({r['company'] for r in rows})} companies")
    ax.legend(fontsize=8, frameon=False)
    return ax


def funnel_rows(r: Retrieval) -> list[dict]:
    """The stages of one retrieval as rows: filter, stage-1 chunks, candidate sections, sections sent."""
    t = r.trace
    f = t.filters or {}
    searched = "all documents" if t.docs_filter is None else ", ".join(t.docs_filter)
    return [
        {"stage": "question analysis", "result": f"companies {f.get('companies') or '-'}, years {f.get('years') or '-'}, "
                                                 f"quarters {f.get('quarters') or '-'}, forms {f.get('forms') or '-'}"},
        {"stage": "filings searched", "result": f"{searched} ({t.filter_source})"},
        {"stage": "stage 1: chunks recalled", "result": str(t.chunks_recalled)},
        {"stage": "candidate sections", "result": str(t.candidates)},
        {"stage": f"sections sent (k={t.k})", "result": "; ".join(f"{s.breadcrumb} [{s.cite()}]" for s in r.sections)},
        {"stage": "characters sent", "result": f"{t.context_chars:,}"},
    ]


def show_funnel(r: Retrieval):
    """Display :func:`funnel_rows` and the sections sent (rank, breadcrumb, lines, pages)."""
    from IPython.display import HTML, display

    rows = "".join(f"<tr><td><b>{html.escape(x['stage'])}</b></td><td>{html.escape(x['result'])}</td></tr>"
                   for x in funnel_rows(r))
    secs = "".join(f"<tr><td>{s.rank}</td><td>{html.escape(s.breadcrumb)}</td><td>{s.line_start}-{s.line_end}</td>"
                   f"<td>{html.escape(pages_label(s.pages) or '-')}</td></tr>" for s in r.sections)
    display(HTML(f"<table>{rows}</table><table><tr><th>rank</th><th>section</th><th>lines</th><th>PDF pages</th>"
                 f"</tr>{secs}</table>"))


def _phrases(text: str, n: int = 120) -> list[str]:
    """Searchable pieces of a section's text: each line's words cut into runs of up to 8 words (a run of at
    least 3 words and 15 characters, so common words alone do not light up the page); Markdown and table
    markup dropped."""
    out = []
    for line in text.split("\n"):
        words = re.sub(r"<[^>]+>|[#*|`_]+", " ", line).split()
        for i in range(0, len(words), 8):
            run = " ".join(words[i:i + 8])
            if len(run) >= 15 and len(words[i:i + 8]) >= 3:
                out.append(run)
    return list(dict.fromkeys(out))[:n]


def highlighted_page(pdf: str | Path, page: int, text: str, *, zoom: float = 1.6) -> tuple[bytes, int]:
    """PNG bytes of one 1-based ``page`` of ``pdf`` with the places where ``text`` (a section's sent lines)
    occurs on it marked in yellow, and how many runs were found. Reads the PDF's text layer with pypdfium2
    (a core dependency): a scanned page without text gets no marks.

    >>> png, found = highlighted_page("3M_2018_10K.pdf", 60, section.text)  # doctest: +SKIP
    """
    import io

    import pypdfium2 as pdfium
    from PIL import Image, ImageDraw

    doc = pdfium.PdfDocument(str(pdf))
    try:
        if not 1 <= int(page) <= len(doc):
            raise InvalidInput(f"{pdf} has {len(doc)} pages; there is no page {page}")
        pg = doc[int(page) - 1]
        height = pg.get_height()
        image = pg.render(scale=zoom).to_pil().convert("RGBA")
        overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
        draw = ImageDraw.Draw(overlay)
        textpage = pg.get_textpage()
        found = 0
        for phrase in _phrases(text):
            searcher = textpage.search(phrase, match_case=False)
            hit = searcher.get_next()
            while hit is not None:
                found += 1
                start, count = hit
                for i in range(textpage.count_rects(start, count)):
                    left, bottom, right, top = textpage.get_rect(i)
                    draw.rectangle([left * zoom, (height - top) * zoom, right * zoom, (height - bottom) * zoom],
                                   fill=(255, 221, 0, 90))
                hit = searcher.get_next()
        out = io.BytesIO()
        Image.alpha_composite(image, overlay).convert("RGB").save(out, format="PNG")
        return out.getvalue(), found
    finally:
        doc.close()


def page_beside_html(index, section: Section, page: int | None = None, *, zoom: float = 1.6,
                     max_chars: int = 3000) -> str:
    """HTML of a PDF page (rendered, the section's lines on it marked in yellow) beside the section's text.

    Args:
        index: the index holding ``section``'s document (its record names the PDF).
        section: a retrieved section with pages.
        page: the 1-based page to show (default: the section's first page sent).
        zoom: the page's scale (1.6: a 10-K page about 980 pixels wide, readable at full width).
        max_chars: the section text shown is cut after this many characters (the page is whole).
    """
    rec = index.record(section.doc)
    if not rec.pdf or not section.pages:
        raise InvalidInput(f"{section.doc} did not come from a PDF: it has no pages to show")
    page = page or section.pages[0]
    if not Path(rec.pdf).is_file():
        raise InvalidInput(f"{rec.pdf} (the PDF {section.doc} was indexed from) is not there any more")
    data, found = highlighted_page(rec.pdf, page, section.text, zoom=zoom)
    png = base64.b64encode(data).decode()
    text = section.text if len(section.text) <= max_chars else section.text[:max_chars] + "\n…"
    marked = (f"{found} passage{'s' if found != 1 else ''} of the section marked in yellow" if found else
              "none of the section's lines found in the page's text layer")
    return (f"<div style='display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start'>"
            f"<div style='flex:3;min-width:520px'><b>{html.escape(section.doc)} p.{page}</b> <small>({marked})</small><br>"
            f"<img src='data:image/png;base64,{png}' style='width:100%;border:1px solid #ccc'></div>"
            f"<div style='flex:2;min-width:320px'><b>{html.escape(section.breadcrumb)}</b> (lines {section.line_start}-"
            f"{section.line_end}, {html.escape(section.cite())})<pre style='white-space:pre-wrap;font-size:11px;"
            f"max-height:60em;overflow:auto'>{html.escape(text)}</pre></div></div>")


def show_page_beside(index, section: Section, page: int | None = None, **kw) -> None:
    """Display :func:`page_beside_html`."""
    from IPython.display import HTML, display

    display(HTML(page_beside_html(index, section, page, **kw)))
