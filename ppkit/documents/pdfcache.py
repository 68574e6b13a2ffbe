"""PDFs in: extract each PDF once, keyed by its content, and hand Markdown (with its page map) on.

``ppkit index`` takes PDFs beside Markdown. Each PDF goes through :func:`prepare_pdfs`, which
returns a Markdown file per PDF from the extraction cache, extracting what is not there yet:

* **Keyed by content.** An entry lives in ``<cache>/pdf/<pdf sha256>/<backend>-x<EXTRACT_VERSION>/``
  (backend e.g. ``textlayer-1-pypdfium2-5.15.2``), so a renamed or moved PDF is not extracted again
  and a new extractor version is. The entry keeps the extractor's output as emitted
  (``raw.md`` + ``raw.pages.json``) and, derived from it, ``<stem>.md`` + ``<stem>.pages.json``
  with letter-spaced words joined (:func:`ppkit.documents.repair.join_split_words`; no line added
  or dropped, so the page map's line ranges still hold). A newer join rule re-derives from
  ``raw.md`` without extracting again.
* **Resumable.** An entry is complete when its page map is there and names the sha256 of the
  Markdown beside it; each file is written atomically, the map last. A run killed at the 50th
  PDF keeps the 49 extracted before it, and the next run starts at the 50th.
* **Both cores.** Extraction runs in ``workers`` processes at a time (default 2; an extractor uses one core per
  PDF), largest PDF first; one progress bar counts pages (pages/s, ETA). Each PDF is read in a process of its own
  under the caps of :mod:`ppkit.documents.pdfguard` (time per page, memory), which dies with the process that
  started it: a killed ``ppkit index`` leaves no extraction running on.
* **Adopting earlier output.** ``extracted=DIR`` takes ``DIR/<stem>.md`` + ``DIR/<stem>.pages.json``
  written by ``ppkit extract`` when the map's ``pdf_sha256`` is this PDF's and the Markdown's
  sha256 matches; it is copied into the cache as a raw entry (the PDF is not extracted again).
* **License.** The offline extractor (:mod:`ppkit.documents.textlayer`, on pypdfium2) is a core
  dependency under permissive licences, so the default install extracts PDFs.

A ``<stem>.meta.json`` sidecar beside the PDF (:mod:`ppkit.documents.metadata`) is copied beside the
cached Markdown, so the metadata overrides of a PDF work as those of a Markdown file do.

This module does not choose between extractors: the cache holds the offline backend's output
(the layout and LlamaParse backends stay ``ppkit extract --backend layout|llamaparse`` plus indexing
its Markdown, or ``--extracted DIR``; each backend's entries live apart, keyed by its name).

Test hook: ``PPKIT_TEST_CRASH_AT=extracted-<n>`` SIGKILLs the process right after the n-th PDF
of a run was extracted and written (only the resume test sets it).
"""

from __future__ import annotations

import hashlib
import os
import signal
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from ..core.config import cache_dir, crash_step, pdf_caps
from ..core.errors import InvalidInput, MissingFile, PpkitError
from ..core.io import atomic_write, sha256_file
from ..core.progress import progress_bar
from .extract import ExtractionError, PageMap, extract_pdf, get_extractor, load_page_map, pdf_page_count
from .metadata import sidecar_path
from .pdfguard import GuardedRead
from .repair import JOIN_VERSION, join_split_words

__all__ = ["EXTRACT_VERSION", "MAX_PDF_PAGES", "CachedPdf", "PdfRun", "checked_page_count", "prepare_pdfs",
           "pdf_cache_dir", "is_pdf"]

EXTRACT_VERSION = 1  # bump when ppkit's extraction (extract.py) changes what a backend's output becomes
DERIVED = f"join-split-words-{JOIN_VERSION}"  # what the derived Markdown went through
RAW = "raw"
# the most pages a PDF may claim by default (a 10-K runs to a few hundred); a page tree claiming more is a broken or
# hostile file, refused before any extraction starts ($PPKIT_PDF_MAX_PAGES sets another cap: ppkit.core.config.PdfCaps)
MAX_PDF_PAGES = 100_000


def is_pdf(path: str | Path) -> bool:
    """A path ``ppkit index`` treats as a PDF (by its suffix)."""
    return Path(path).suffix.lower() == ".pdf"


def pdf_cache_dir() -> Path:
    """``<cache>/pdf``: the extraction cache (see the module docstring)."""
    return cache_dir() / "pdf"


@dataclass(frozen=True)
class CachedPdf:
    """One PDF ready to index: its Markdown and page map in the cache, and how they got there."""

    pdf: Path
    markdown: Path  # <entry>/<stem>.md (split words joined)
    page_map: PageMap
    how: str  # "cached" | "adopted" | "extracted"
    seconds: float  # extraction time (0 unless extracted in this run)
    joins: int  # letter-spaced words joined in the derived Markdown

    def __repr__(self) -> str:
        return f"CachedPdf({self.pdf.name}: {self.how}, {self.page_map.page_count} pages, {self.joins} words joined)"


@dataclass(frozen=True)
class PdfRun:
    """What :func:`prepare_pdfs` did."""

    docs: list[CachedPdf]
    seconds: float  # wall time of the extraction pool
    workers: int

    @property
    def pages_extracted(self) -> int:
        return sum(d.page_map.page_count for d in self.docs if d.how == "extracted")

    @property
    def pages_per_second(self) -> float:
        """Pages extracted per wall-clock second over the pool (0 when nothing was extracted)."""
        return self.pages_extracted / self.seconds if self.pages_extracted and self.seconds > 0 else 0.0

    def summary(self) -> str:
        n = {h: sum(1 for d in self.docs if d.how == h) for h in ("extracted", "adopted", "cached")}
        out = f"{len(self.docs)} PDFs: {n['extracted']} extracted, {n['adopted']} adopted, {n['cached']} from the cache"
        if n["extracted"]:
            out += (f"; {self.pages_extracted} pages in {self.seconds:.1f} s with {self.workers} processes "
                    f"({self.pages_per_second:.2f} pages/s)")
        return out


# ---------------------------------------------------------------------------- entries


def _offline_backend() -> str:
    """The offline backend's name, as its page maps record it."""
    return get_extractor("offline").name


def _entry(sha: str, backend: str) -> Path:
    return pdf_cache_dir() / sha / f"{backend}-x{EXTRACT_VERSION}"


def _valid(md: Path) -> PageMap | None:
    """The page map beside ``md`` when the pair is complete and consistent, else None."""
    try:
        return load_page_map(md)
    except (MissingFile, ExtractionError, OSError, ValueError, KeyError):
        return None


def _derive(pdf: Path, entry: Path, raw: PageMap, how: str, seconds: float) -> CachedPdf:
    """``<stem>.md`` + map from ``raw.md`` (split words joined), reused when already derived."""
    md = entry / f"{pdf.stem}.md"
    pm = _valid(md)
    if pm is None or pm.derived != DERIVED or pm.pdf_sha256 != raw.pdf_sha256:
        fixed = join_split_words((entry / f"{RAW}.md").read_text(encoding="utf-8"))
        atomic_write(md, fixed.text)
        pm = replace(raw, pdf=str(pdf.resolve()), markdown=md.name, derived=DERIVED,
                     joins=len(fixed.joins), markdown_sha256=hashlib.sha256(fixed.text.encode("utf-8")).hexdigest())
        pm.save(md.with_name(md.stem + ".pages.json"))  # last: it completes the derived pair
    side = sidecar_path(pdf)
    if side.is_file():
        atomic_write(sidecar_path(md), side.read_bytes())
    else:
        sidecar_path(md).unlink(missing_ok=True)
    return CachedPdf(pdf, md, pm, how, seconds, pm.joins)


def _cached(pdf: Path, sha: str, backend: str) -> Path | None:
    """The complete cache entry of this PDF for ``backend``."""
    entry = _entry(sha, backend)
    return entry if _valid(entry / f"{RAW}.md") is not None else None


def _adopt(pdf: Path, sha: str, folder: Path) -> Path | None:
    """Copy ``folder/<stem>.md`` + map (``ppkit extract`` output of this very PDF) into the cache."""
    md = folder / f"{pdf.stem}.md"
    pm = _valid(md) if md.is_file() else None
    if pm is None or pm.pdf_sha256 != sha or pm.failed_pages:
        return None
    entry = _entry(sha, pm.backend)
    atomic_write(entry / f"{RAW}.md", md.read_bytes())
    replace(pm, markdown=f"{RAW}.md").save(entry / f"{RAW}.pages.json")
    return entry


def checked_page_count(pdf: str | Path) -> int | None:
    """The pages of ``pdf`` (None when no PDF library is installed to count them), once the count is readable
    and within the cap (``PPKIT_PDF_MAX_PAGES``, default :data:`MAX_PDF_PAGES`); else an InvalidInput, before any
    extraction starts. Whichever backend counts: one that rejects an absurd page tree itself (a RuntimeError) gets
    the same one line."""
    try:
        n = pdf_page_count(Path(pdf))
    except PpkitError:
        raise
    except (RuntimeError, ValueError, OverflowError) as e:
        raise InvalidInput(f"{pdf}: its page count cannot be read ({e}); check the file or export it again") from None
    cap = pdf_caps().pages
    if n is not None and n > cap:
        raise InvalidInput(f"{pdf} claims {n:,} pages, more than the {cap:,} ppkit reads (PPKIT_PDF_MAX_PAGES): the "
                           "file is broken or not a document; check it or export it again (or raise the cap)")
    return n


def _extract_one(pdf: str, entry: str) -> float:
    """Pool worker: extract one PDF into its cache entry (Markdown first, page map last)."""
    t = time.perf_counter()
    extract_pdf(pdf, entry, backend="offline", name=RAW, progress=False, overwrite=True)  # the cache is ppkit's
    return time.perf_counter() - t


def _crash_point(n: int) -> None:
    if crash_step() == f"extracted-{n}":
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)


# ---------------------------------------------------------------------------- driver


def prepare_pdfs(pdfs, *, extracted: str | Path | None = None, workers: int = 2,
                 progress: bool = True) -> PdfRun:
    """Markdown with a page map for each PDF, from the cache or extracted now (see the module docstring).

    Args:
        pdfs: PDF files.
        extracted: a folder of ``ppkit extract`` output to adopt (``<stem>.md`` + ``<stem>.pages.json``).
        workers: extraction processes (one core each).
        progress: a progress bar over the pages to extract, with an ETA.

    Returns:
        A :class:`PdfRun`: one :class:`CachedPdf` per PDF, in the order given.

    Raises:
        InvalidInput: a PDF to extract claims more than :data:`MAX_PDF_PAGES` pages or an unreadable count.

    >>> run = prepare_pdfs(["BOEING_2022_10K.pdf"])   # doctest: +SKIP
    >>> run.docs[0].markdown.name                       # doctest: +SKIP
    'BOEING_2022_10K.md'
    """
    pdfs = [Path(p) for p in pdfs]
    for p in pdfs:
        if not p.is_file():
            raise MissingFile(f"no such PDF: {p}")
    backend = _offline_backend()
    ready: dict[int, CachedPdf] = {}
    todo: list[tuple[int, str, Path]] = []  # (position, sha256, cache entry to fill)
    pages: dict[int, int] = {}  # position -> pages to extract (0: not counted)
    for i, pdf in enumerate(pdfs):
        sha = sha256_file(pdf)
        entry = _cached(pdf, sha, backend)
        if entry is not None:
            ready[i] = _derive(pdf, entry, load_page_map(entry / f"{RAW}.md"), "cached", 0.0)
            continue
        entry = _adopt(pdf, sha, Path(extracted)) if extracted is not None else None
        if entry is not None:
            ready[i] = _derive(pdf, entry, load_page_map(entry / f"{RAW}.md"), "adopted", 0.0)
            continue
        pages[i] = checked_page_count(pdf) or 0  # refused here, before any PDF is extracted
        todo.append((i, sha, _entry(sha, backend)))
    t0 = time.perf_counter()
    n_workers = max(1, min(workers, len(todo)))
    if todo:
        _run_pool(pdfs, todo, pages, ready, n_workers, progress)
    return PdfRun([ready[i] for i in range(len(pdfs))], time.perf_counter() - t0, n_workers if todo else 0)


def _run_pool(pdfs: list[Path], todo: list[tuple[int, str, Path]], pages: dict[int, int],
              ready: dict[int, CachedPdf], workers: int, progress: bool) -> None:
    """Extract ``todo`` in up to ``workers`` guarded processes at a time, largest first (``pages``: position ->
    pages); each finished PDF is derived and kept at once. The first failure stops the others."""
    todo = sorted(todo, key=lambda t: -pages[t[0]])
    running: list[tuple[GuardedRead, int, Path]] = []
    done = 0
    with progress_bar(total=sum(pages.values()), desc=f"extracting {len(todo)} PDFs", disable=not progress,
                      unit="page") as bar:
        try:
            while todo or running:
                while todo and len(running) < workers:
                    i, _, entry = todo.pop(0)
                    running.append((GuardedRead(pdfs[i], _extract_one, str(pdfs[i]), str(entry)), i, entry))
                for read, i, entry in list(running):
                    if not read.check(0.05 / len(running)):
                        continue
                    running.remove((read, i, entry))
                    seconds = read.result
                    ready[i] = _derive(pdfs[i], entry, load_page_map(entry / f"{RAW}.md"), "extracted", seconds)
                    bar.update(pages[i])
                    bar.set_postfix_str(f"{pdfs[i].name} {pages[i]} p in {seconds:.0f} s", refresh=False)
                    done += 1
                    _crash_point(done)
        finally:
            for read, _, _ in running:
                read.stop()
