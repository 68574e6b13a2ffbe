"""Helpers of the ``ppkit serve`` tests: a small PDF with a text layer, written with pypdfium2."""

from __future__ import annotations

import ctypes
from pathlib import Path

# a two-page filing: big lines are headings to the text-layer extractor, small ones body text
INITECH_PAGES = [
    [(20, "INITECH CORPORATION"), (11, "Form 10-K for the fiscal year ended December 31, 2022."),
     (16, "Item 1. Business"), (11, "Initech makes TPS report software for banks and insurers."),
     (11, "The company has 1,200 employees in Austin, Texas.")],
    [(16, "Item 7. Results of Operations"),
     (11, "Initech's net revenue was $2,750 million in 2022, up from $2,400 million in 2021."),
     (11, "Operating income was $410 million in 2022.")],
]


def make_pdf(path: Path, pages=INITECH_PAGES) -> Path:
    """Write ``pages`` (lists of ``(font size, text)`` lines, top to bottom) as a Letter-size PDF at ``path``."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    pdf = pdfium.PdfDocument.new()
    for lines in pages:
        page = pdf.new_page(612, 792)
        y = 740.0
        for size, text in lines:
            obj = raw.FPDFPageObj_NewTextObj(pdf.raw, b"Helvetica", float(size))
            utf16 = (text + "\x00").encode("utf-16-le")  # pdfium's FPDF_WIDESTRING
            raw.FPDFText_SetText(obj, ctypes.cast(ctypes.create_string_buffer(utf16, len(utf16)),
                                                  ctypes.POINTER(raw.FPDF_WCHAR)))
            raw.FPDFPageObj_Transform(obj, 1, 0, 0, 1, 60, y)
            raw.FPDFPage_InsertObject(page.raw, obj)
            y -= size * 2.2
        raw.FPDFPage_GenerateContent(page.raw)
    pdf.save(str(path))
    return path
