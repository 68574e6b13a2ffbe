"""PDF -> Markdown, with a line -> page map beside it.

Three backends behind one small interface (:class:`Extractor`):

* ``offline`` (the default offline backend): :class:`ppkit.documents.textlayer.TextLayerExtractor`
  reads the PDF's text layer (characters with font, size and position) through ``pypdfium2``
  (Apache-2.0/BSD, a core dependency) and decides headings, tables and running headers from
  per-document statistics. Tens of pages a second per core; no model, no pymupdf.
* ``layout``: ``pymupdf4llm`` 1.28.2 in layout mode (its ONNX layout model ships inside the
  ``pymupdf-layout`` wheel, so nothing is downloaded at run time). AGPL-licensed, hence the optional
  extra ``ppkit[pdf]``; a few pages a second. OCR is switched off: the filings and papers here carry
  a text layer, and no OCR engine is installed.
* ``llamaparse``: LlamaParse through the maintained ``llama-cloud`` client
  (``LlamaCloud(...).parsing.parse(...)``), extra ``ppkit[llamaparse]``; runs only
  when ``LLAMA_CLOUD_API_KEY`` is set.

:func:`extract_pdf` writes ``<name>.md`` and ``<name>.pages.json`` into a folder,
atomically (temp file + rename). The page map records, for every extracted PDF
page, the 1-based line range it occupies in the Markdown, numbered exactly as
:mod:`ppkit.documents.tree` numbers lines, so a section's ``line_start..text_end`` names the
PDF pages a citation should point to (:meth:`PageMap.pages_of`).

This module does not repair heading levels (see :mod:`ppkit.documents.repair`) and does not
judge the tree (see :mod:`ppkit.documents.treecheck`); it keeps the extractor's Markdown as
emitted.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..core.config import llama_cloud_key, offline_forced
from ..core.errors import InvalidInput, MissingDependency, MissingFile
from ..core.io import atomic_write
from ..core.progress import progress_bar
from .pdfbase import ExtractionError, PageTexts, open_pdfium
from .pdfguard import check_inflated, note_page, read_guarded
from .textlayer import TextLayerExtractor
from .tree import parse_markdown

__all__ = [
    "ExtractionError", "PageMap", "PageTexts", "Extraction", "Extractor", "LayoutExtractor", "open_pdfium", "check_outputs",
    "LlamaParseExtractor", "get_extractor", "extract_pdf", "parse_page_range", "load_page_map",
    "pdf_page_count", "render_page", "resolve_backend", "extract_pdf_guarded", "pages_without_text", "no_text_warning",
]

PAGE_MAP_FORMAT = 1


# ---------------------------------------------------------------------------- page map


@dataclass(frozen=True)
class PageMap:
    """Which PDF page each Markdown line came from.

    ``pages`` holds ``(page, line_start, line_end)`` triples: 1-based PDF page
    numbers and 1-based inclusive Markdown line ranges, in Markdown order. A page
    that produced no text has ``line_end == line_start - 1``.
    """

    pdf: str
    pdf_sha256: str
    markdown: str  # file name of the Markdown beside the map
    markdown_sha256: str
    backend: str
    page_count: int  # pages in the PDF (not only the extracted ones)
    pages: tuple[tuple[int, int, int], ...]
    failed_pages: tuple[tuple[int, str], ...] = ()  # (page, error) the backend reported
    outline: tuple[tuple[int, str, int], ...] = ()  # the PDF's bookmarks: (level, title, page)
    derived: str = ""  # what the Markdown went through after extraction ("": as the backend emitted it)
    joins: int = 0  # letter-spaced words joined by that step (ppkit.documents.repair.join_split_words)

    def page_of(self, line: int) -> int | None:
        """The PDF page of a Markdown line, or None when the line is past the end.

        >>> PageMap("a.pdf", "", "a.md", "", "x", 2, ((1, 1, 3), (2, 4, 9))).page_of(5)
        2
        """
        for page, start, end in self.pages:
            if start <= line <= end:
                return page
        return None

    def pages_of(self, line_start: int, line_end: int) -> list[int]:
        """PDF pages that a line range (e.g. a section) spans, in order."""
        return [p for p, s, e in self.pages if s <= line_end and e >= line_start and e >= s]

    def to_dict(self) -> dict:
        return {
            "format": PAGE_MAP_FORMAT, "pdf": self.pdf, "pdf_sha256": self.pdf_sha256,
            "markdown": self.markdown, "markdown_sha256": self.markdown_sha256, "backend": self.backend,
            "page_count": self.page_count,
            "pages": [{"page": p, "line_start": s, "line_end": e} for p, s, e in self.pages],
            "failed_pages": [{"page": p, "error": err} for p, err in self.failed_pages],
            "outline": [{"level": lv, "title": t, "page": p} for lv, t, p in self.outline],
            "derived": self.derived, "joins": self.joins,
        }

    @classmethod
    def from_dict(cls, d: dict) -> PageMap:
        if d.get("format") != PAGE_MAP_FORMAT:
            raise ExtractionError(f"page map format {d.get('format')!r} is not {PAGE_MAP_FORMAT}: re-extract the PDF")
        return cls(
            pdf=d["pdf"], pdf_sha256=d["pdf_sha256"], markdown=d["markdown"],
            markdown_sha256=d["markdown_sha256"], backend=d["backend"], page_count=d["page_count"],
            pages=tuple((x["page"], x["line_start"], x["line_end"]) for x in d["pages"]),
            failed_pages=tuple((x["page"], x["error"]) for x in d.get("failed_pages", ())),
            outline=tuple((x["level"], x["title"], x["page"]) for x in d.get("outline", ())),
            derived=d.get("derived", ""), joins=d.get("joins", 0),
        )

    def save(self, path: str | Path) -> None:
        atomic_write(Path(path), json.dumps(self.to_dict(), ensure_ascii=False, indent=1) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> PageMap:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


def pages_without_text(pages, lines: list[str]) -> list[int]:
    """The PDF pages whose lines hold no text (``pages``: a page map's ``(page, line_start, line_end)`` triples;
    ``lines``: the Markdown's lines): a scan without a text layer, or blank pages.

    >>> pages_without_text([(1, 1, 2), (2, 3, 2), (3, 3, 4)], ["# Title", "Text.", "", " "])
    [2, 3]
    """
    return [p for p, s, e in pages if not any(line.strip() for line in lines[s - 1:e])]


def _page_ranges(pages: list[int], most: int = 8) -> str:
    """``[1, 2, 3, 7]`` -> ``"1-3, 7"`` (past ``most`` ranges: "and N more pages")."""
    runs: list[list[int]] = []
    for p in pages:
        if runs and p == runs[-1][1] + 1:
            runs[-1][1] = p
        else:
            runs.append([p, p])
    out = ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in runs[:most])
    rest = sum(b - a + 1 for a, b in runs[most:])
    return out + (f" and {rest} more" if rest else "")


def no_text_warning(doc: str, pages: list[int], page_count: int) -> str:
    """The warning for a PDF with pages without text (:func:`pages_without_text`).

    >>> no_text_warning("scan", [1, 2, 3], 3)
    'scan: no text layer on pages 1-3 of 3 (scanned images? ppkit reads the text of a PDF, it does no OCR): they cannot be found or quoted; run OCR on the PDF (e.g. ocrmypdf) and index it again'
    """
    return (f"{doc}: no text layer on pages {_page_ranges(pages)} of {page_count} (scanned images? ppkit reads the "
            "text of a PDF, it does no OCR): they cannot be found or quoted; run OCR on the PDF (e.g. ocrmypdf) and "
            "index it again")


def load_page_map(markdown_path: str | Path) -> PageMap:
    """The page map saved beside an extracted Markdown file (``X.md`` -> ``X.pages.json``).

    Raises:
        FileNotFoundError: no map beside the file (it was not made by ``ppkit extract``).
        ExtractionError: the Markdown changed since extraction, so line numbers would lie.
    """
    md = Path(markdown_path)
    path = md.with_name(md.stem + ".pages.json")
    if not path.is_file():
        raise MissingFile(f"no page map {path}: only Markdown made by `ppkit extract` has one")
    pm = PageMap.load(path)
    if hashlib.sha256(md.read_bytes()).hexdigest() != pm.markdown_sha256:
        raise ExtractionError(f"{md} changed since it was extracted: its page map no longer fits; re-extract")
    return pm


# ---------------------------------------------------------------------------- backends


class Extractor(Protocol):
    """Any object that turns PDF pages into Markdown."""

    name: str

    def extract_pages(self, pdf: Path, pages: list[int] | None, *, progress: bool = True) -> PageTexts:
        """Markdown of ``pages`` (1-based; None: all) of ``pdf``."""
        ...


def _open_pdf(pdf: Path):
    """Open a PDF with pymupdf, turning its failures into a clear ExtractionError."""
    import pymupdf

    try:
        doc = pymupdf.open(pdf, filetype="pdf")
    except Exception as e:  # pymupdf raises FileDataError / RuntimeError for broken files
        raise ExtractionError(f"{pdf} is not a readable PDF ({e}); check the file or export it again") from None
    if doc.needs_pass:
        doc.close()
        raise ExtractionError(f"{pdf} is encrypted: remove the password first (e.g. qpdf --decrypt)")
    if doc.page_count == 0:
        doc.close()
        raise ExtractionError(f"{pdf} has no pages")
    return doc


class LayoutExtractor:
    """pymupdf4llm in layout mode, page by page so progress shows per page.

    pymupdf4llm assigns heading levels from the font sizes of all title and
    section-header boxes it parsed. Parsing one page per call would rank sizes per
    page, so after all pages are parsed the ranking is redone over the whole range
    with the library's own ``update_header_tags``; the Markdown is then identical to
    one ``pymupdf4llm.to_markdown(pdf, pages=...)`` call (a test checks this).

    Args:
        header / footer: keep running page headers and footers (page numbers,
            "Table of Contents" back-links). Off by default: they repeat on every page.
    """

    def __init__(self, *, header: bool = False, footer: bool = False):
        try:
            import pymupdf4llm
            from pymupdf4llm.helpers import document_layout
        except ImportError as e:
            raise MissingDependency(
                f"the layout extractor needs pymupdf4llm ({e}): pip install 'ppkit[pdf]' (AGPL-licensed); "
                "or use --backend offline (no extra needed)"
            ) from None
        if not getattr(pymupdf4llm, "_use_layout", False):
            raise MissingDependency("pymupdf4llm runs without its layout model: pip install 'pymupdf-layout'")
        self._dl = document_layout
        self.header, self.footer = header, footer
        self.name = f"pymupdf4llm-{pymupdf4llm.__version__}-layout"

    def extract_pages(self, pdf: Path, pages: list[int] | None, *, progress: bool = True) -> PageTexts:
        doc = _open_pdf(pdf)
        try:
            numbers = pages if pages is not None else list(range(1, doc.page_count + 1))
            parsed = None
            layout_pages = []
            sizes: set[int] = set()  # font sizes of all headings seen, for level ranking
            for pno in progress_bar(numbers, desc=f"{pdf.name} pages", disable=not progress):
                note_page(pno, pdf)
                one = self._dl.parse_document(doc, pages=[pno - 1], use_ocr=False, force_text=True)
                parsed = parsed or one
                for box in one.pages[0].boxes:
                    if box.boxclass in ("title", "section-header"):
                        sizes.add(box.max_fontsize)
                layout_pages.extend(one.pages)
            parsed.pages = layout_pages
            if sizes:
                self._dl.update_header_tags(parsed.pages, sizes)
            chunks = parsed.to_markdown(header=self.header, footer=self.footer, page_chunks=True)
            outline = tuple((lv, t, p) for lv, t, p in doc.get_toc(simple=True))
            return PageTexts(
                page_count=doc.page_count,
                pages=tuple((c["metadata"]["page_number"], c["text"]) for c in chunks),
                outline=outline,
            )
        finally:
            doc.close()


class LlamaParseExtractor:
    """LlamaParse through ``llama-cloud`` (>= 2). Needs ``LLAMA_CLOUD_API_KEY``.

    The PDF is uploaded (``client.files.create``) and parsed with
    ``client.parsing.parse(..., expand=["markdown"])``, which polls until the job ends.
    Constructing the extractor checks the key and the package, and talks to no server.

    Args:
        api_key: default ``$LLAMA_CLOUD_API_KEY``.
        tier: LlamaParse tier (``"fast"``, ``"cost_effective"``, ``"agentic"``, ``"agentic_plus"``).
        timeout: seconds to wait for the parse job.
    """

    def __init__(self, *, api_key: str | None = None, tier: str = "agentic", version: str = "latest",
                 timeout: float = 1800.0):
        key = api_key or llama_cloud_key()
        if not key:
            raise ExtractionError(
                "LlamaParse needs an API key: set LLAMA_CLOUD_API_KEY, or use the offline backend "
                "(--backend offline)"
            )
        if offline_forced():
            raise ExtractionError("PPKIT_OFFLINE is set, so LlamaParse (an online service) is not used; "
                                  "unset it or use --backend offline")
        try:
            from llama_cloud import LlamaCloud
        except ImportError as e:
            raise MissingDependency(f"LlamaParse needs llama-cloud ({e}): pip install 'ppkit[llamaparse]'") from None
        self.client = LlamaCloud(api_key=key)
        self.tier, self.version, self.timeout = tier, version, timeout
        self.name = f"llamaparse-{tier}"

    def extract_pages(self, pdf: Path, pages: list[int] | None, *, progress: bool = True) -> PageTexts:
        page_count = None
        try:  # the page count validates the range
            page_count = pdf_page_count(pdf)
        except ImportError:
            pass
        kwargs = {}
        if pages is not None:
            kwargs["page_ranges"] = {"target_pages": ",".join(str(p) for p in pages)}
        with progress_bar(total=1, desc=f"{pdf.name} (LlamaParse)", disable=not progress) as bar:
            uploaded = self.client.files.create(file=pdf, purpose="parse")
            result = self.client.parsing.parse(
                file_id=uploaded.id, tier=self.tier, version=self.version, expand=["markdown"],
                timeout=self.timeout, **kwargs,
            )
            bar.update(1)
        if result.markdown is None:
            raise ExtractionError(f"LlamaParse returned no Markdown for {pdf}")
        ok, failed = [], []
        for pg in result.markdown.pages:
            if getattr(pg, "success", False):
                ok.append((pg.page_number, pg.markdown))
            else:
                failed.append((pg.page_number, getattr(pg, "error", "failed")))
        return PageTexts(page_count=page_count or len(result.markdown.pages), pages=tuple(ok), failed=tuple(failed))


def resolve_backend(backend: str) -> str:
    """``"auto"`` as the backend it stands for: ``"llamaparse"`` when ``LLAMA_CLOUD_API_KEY`` is set and
    ``PPKIT_OFFLINE`` is not, else ``"offline"``; any other name as it is."""
    if backend == "auto":
        return "llamaparse" if llama_cloud_key() and not offline_forced() else "offline"
    return backend


def get_extractor(backend: str = "auto", **kwargs) -> Extractor:
    """An extractor by name: ``"offline"`` (text layer), ``"layout"`` (pymupdf4llm, extra ``pdf``),
    ``"llamaparse"``, or ``"auto"``.

    ``auto`` is LlamaParse when ``LLAMA_CLOUD_API_KEY`` is set and ``PPKIT_OFFLINE``
    is not, else offline.

    >>> get_extractor("offline").name.startswith("textlayer-")
    True
    """
    backend = resolve_backend(backend)
    if backend == "offline":
        return TextLayerExtractor(**kwargs)
    if backend == "layout":
        return LayoutExtractor(**kwargs)
    if backend == "llamaparse":
        return LlamaParseExtractor(**kwargs)
    raise InvalidInput(f"unknown extraction backend {backend!r}: use offline, layout, llamaparse or auto")


# ---------------------------------------------------------------------------- driver


@dataclass(frozen=True)
class Extraction:
    """One extracted PDF: where its Markdown and page map were written."""

    pdf: Path
    markdown_path: Path
    page_map_path: Path
    page_map: PageMap = field(repr=False)
    n_lines: int
    n_headings: int
    seconds: float


def parse_page_range(spec: str | None, page_count: int) -> list[int] | None:
    """1-based pages from ``"1-20"``, ``"3"`` or ``"1-5,9,12-14"``; None for all pages.

    >>> parse_page_range("2-4,7", 10)
    [2, 3, 4, 7]
    """
    if spec is None or str(spec).strip() == "":
        return None
    pages: set[int] = set()
    for part in str(spec).split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not m:
            raise ExtractionError(f"page range {spec!r}: expected e.g. 1-20 or 1-5,9")
        a, b = int(m.group(1)), int(m.group(2) or m.group(1))
        if a < 1 or b < a:
            raise ExtractionError(f"page range {spec!r}: pages count from 1 and ranges go up")
        if b > page_count:
            raise ExtractionError(f"page range {spec!r} goes past the last page ({page_count})")
        pages.update(range(a, b + 1))
    return sorted(pages)


def _join_pages(pages: tuple[tuple[int, str], ...]) -> tuple[str, tuple[tuple[int, int, int], ...]]:
    """Concatenate page Markdown; each page starts on a fresh line. Returns (text, page ranges)."""
    parts: list[str] = []
    ranges = []
    line = 1  # first line of the next page
    for page, md in pages:
        md = md.replace("\r\n", "\n")
        if md and not md.endswith("\n"):
            md += "\n"
        n = md.count("\n")  # every page ends with a newline, so lines == newlines
        ranges.append((page, line, line + n - 1))
        parts.append(md)
        line += n
    return "".join(parts), tuple(ranges)


def _check_pdf(pdf: Path) -> None:
    if not pdf.is_file():
        raise MissingFile(f"no such PDF: {pdf}")
    with open(pdf, "rb") as f:
        head = f.read(1024)
    if b"%PDF-" not in head:  # the spec allows junk before the header, within the first 1 KB
        raise ExtractionError(f"{pdf} is not a PDF (no %PDF- header); give a PDF file")


def check_outputs(out: Path, stem: str, overwrite: bool) -> None:
    """Refuse, before any work, an ``out`` that is a file and outputs ppkit did not write.

    ``out/stem.md`` is ppkit's when the page map beside it names it by its sha256 (an unedited
    earlier extraction); anything else there is the user's and is replaced only with ``overwrite``.
    """
    if out.exists() and not out.is_dir():
        raise InvalidInput(f"--out {out} is a file: pass a folder for NAME.md and NAME.pages.json")
    md_path, map_path = out / f"{stem}.md", out / f"{stem}.pages.json"
    if overwrite or not (md_path.exists() or map_path.exists()):
        return
    try:
        ours = hashlib.sha256(md_path.read_bytes()).hexdigest() == PageMap.load(map_path).markdown_sha256
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        ours = False
    if not ours:
        raise InvalidInput(f"{md_path if md_path.exists() else map_path} is already there and was not written by "
                           "ppkit extract (or was edited since); nothing was changed: pass --overwrite to replace it, "
                           "or another --out")


def extract_pdf(pdf: str | Path, out_dir: str | Path, *, pages: str | list[int] | None = None,
                backend: str | Extractor = "auto", name: str | None = None, progress: bool = True,
                overwrite: bool = False) -> Extraction:
    """Extract one PDF to ``out_dir/<name>.md`` plus ``out_dir/<name>.pages.json``.

    Args:
        pdf: the PDF file.
        out_dir: folder for the outputs (created if missing).
        pages: 1-based page range (``"1-20"`` or a list); None for all pages.
        backend: ``"offline"``, ``"layout"``, ``"llamaparse"``, ``"auto"``, or an :class:`Extractor`.
        name: output file stem (default: the PDF's stem).
        progress: show a progress bar per page (quiet under ``PPKIT_QUIET=1``).
        overwrite: replace ``<name>.md``/``<name>.pages.json`` that ppkit did not write (or that were
            edited since); without it they are an :class:`InvalidInput` and nothing is written.

    The PDF's caps (:mod:`ppkit.documents.pdfguard`) are checked here: its decompressed bytes before any page is
    parsed, each page's time when the next starts. Run through :func:`ppkit.documents.pdfguard.read_guarded` (as
    ``ppkit extract`` does), a page is also stopped mid-way past its time, and the reading process past its memory.

    Returns:
        An :class:`Extraction` with the paths, the page map and the time taken.

    >>> ex = extract_pdf("BOEING_2022_10K.pdf", "/tmp/x", pages="1-20")  # doctest: +SKIP
    >>> ex.page_map.page_of(120)                                         # doctest: +SKIP
    9
    """
    t0 = time.perf_counter()
    pdf = Path(pdf)
    _check_pdf(pdf)
    check_outputs(Path(out_dir), name or pdf.stem, overwrite)
    extractor = get_extractor(backend) if isinstance(backend, str) else backend
    check_inflated(pdf)  # a decompression bomb ends here, before any page is parsed
    page_count = pdf_page_count(pdf)
    if pages is None or isinstance(pages, str):
        page_list = parse_page_range(pages, page_count or 10**9)
    else:
        page_list = parse_page_range(",".join(str(int(p)) for p in pages), page_count or 10**9)
    texts = extractor.extract_pages(pdf, page_list, progress=progress)
    if not texts.pages:
        failed = "; ".join(f"page {p}: {err}" for p, err in texts.failed[:5])
        raise ExtractionError(f"{pdf}: no page produced Markdown ({failed or 'nothing extracted'})")
    text, ranges = _join_pages(texts.pages)
    out = Path(out_dir)
    stem = name or pdf.stem
    md_path = out / f"{stem}.md"
    map_path = out / f"{stem}.pages.json"
    atomic_write(md_path, text)
    pm = PageMap(
        pdf=str(pdf.resolve()), pdf_sha256=hashlib.sha256(pdf.read_bytes()).hexdigest(),
        markdown=md_path.name, markdown_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        backend=extractor.name, page_count=texts.page_count, pages=ranges,
        failed_pages=texts.failed, outline=texts.outline,
    )
    pm.save(map_path)
    tree = parse_markdown(text, stem)
    return Extraction(pdf=pdf, markdown_path=md_path, page_map_path=map_path, page_map=pm,
                      n_lines=tree.n_lines, n_headings=len(tree) - 1, seconds=time.perf_counter() - t0)


def _extract_with(pdf: str, out_dir: str, options: dict) -> Extraction:
    return extract_pdf(pdf, out_dir, **options)


def extract_pdf_guarded(pdf: str | Path, out_dir: str | Path, **options) -> Extraction:
    """:func:`extract_pdf` in a process of its own under the caps of :mod:`ppkit.documents.pdfguard` (a page
    stopped past its time, the process past its memory; it dies with this one), unless the backend is LlamaParse
    (a remote service: nothing is parsed here). ``options``: :func:`extract_pdf`'s.

    >>> ex = extract_pdf_guarded("BOEING_2022_10K.pdf", "/tmp/x")  # doctest: +SKIP
    """
    backend = options.get("backend", "auto")
    if not isinstance(backend, str) or resolve_backend(backend) == "llamaparse":
        return extract_pdf(pdf, out_dir, **options)
    if backend == "layout":  # a missing extra said here in one line, not from inside the reading process
        LayoutExtractor()
    return read_guarded(pdf, _extract_with, str(pdf), str(out_dir), options)


def pdf_page_count(pdf: Path) -> int:
    """Pages in the PDF (pypdfium2; an unreadable PDF is an ExtractionError)."""
    doc = open_pdfium(Path(pdf))
    n = len(doc)
    doc.close()
    return n


def render_page(pdf: str | Path, page: int, *, zoom: float = 1.5) -> bytes:
    """PNG bytes of one 1-based ``page`` of ``pdf`` (pymupdf, from the ``pdf`` extra), to show a cited
    page beside the section that cites it.

    >>> png = render_page("3M_2018_10K.pdf", 60)  # doctest: +SKIP
    """
    try:
        doc = _open_pdf(Path(pdf))
    except ImportError:
        raise MissingDependency("rendering PDF pages needs pymupdf: pip install 'ppkit[pdf]' "
                                "(pymupdf4llm, AGPL-3.0)") from None
    try:
        if not 1 <= int(page) <= doc.page_count:
            raise InvalidInput(f"{pdf} has {doc.page_count} pages; there is no page {page}")
        return doc[int(page) - 1].get_pixmap(matrix=(zoom, 0, 0, zoom, 0, 0)).tobytes("png")
    finally:
        doc.close()
