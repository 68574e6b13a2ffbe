"""What every PDF backend shares: the error type, the per-page result, and opening a PDF with pypdfium2.

Kept apart from :mod:`ppkit.documents.extract` (the driver) so that backends such as
:mod:`ppkit.documents.textlayer` import it without importing the driver.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.errors import InvalidInput

__all__ = ["ExtractionError", "PageTexts", "open_pdfium"]


class ExtractionError(InvalidInput):
    """A PDF could not be extracted (missing, corrupt, encrypted, bad page range, no key)."""


@dataclass(frozen=True)
class PageTexts:
    """What a backend returns: Markdown per PDF page, in page order."""

    page_count: int
    pages: tuple[tuple[int, str], ...]  # (1-based page, markdown)
    failed: tuple[tuple[int, str], ...] = ()  # (page, error)
    outline: tuple[tuple[int, str, int], ...] = ()


def open_pdfium(pdf: Path):
    """Open a PDF with pypdfium2 (a ``PdfDocument``), turning its failures into a clear ExtractionError."""
    import pypdfium2

    try:
        doc = pypdfium2.PdfDocument(str(pdf))
    except pypdfium2.PdfiumError as e:
        if "password" in str(e).lower():
            raise ExtractionError(f"{pdf} is encrypted: remove the password first (e.g. qpdf --decrypt)") from None
        raise ExtractionError(f"{pdf} is not a readable PDF ({e}); check the file or export it again") from None
    if len(doc) == 0:
        doc.close()
        raise ExtractionError(f"{pdf} has no pages")
    return doc
