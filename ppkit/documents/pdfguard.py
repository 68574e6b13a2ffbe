"""Caps on reading one PDF, so that no file can exhaust the machine: decompressed bytes, pages, time per page and
memory; and one clear line for a page the PDF library cannot load.

A 582 KB PDF whose one content stream inflates to 300 MB made the text-layer extractor run for 30 s at 4.1 GB of
resident memory (the PDF library parses the whole stream into objects). The caps (:class:`ppkit.core.config.PdfCaps`,
from ``PPKIT_PDF_MAX_INFLATED``, ``PPKIT_PDF_MAX_PAGES``, ``PPKIT_PDF_PAGE_SECONDS``, ``PPKIT_PDF_MAX_MEMORY``) are
checked while reading, and the first one passed ends the reading with :class:`PdfCapExceeded`, whose message names
the cap, its value and the variable that raises it:

* **decompressed bytes** (:func:`check_inflated`, before the PDF library parses a page): every stream of the file
  that text extraction decodes (page contents, forms, fonts, object streams; not images) is decompressed here,
  piece by piece and counting (Flate, also after ASCII-hex or ASCII-85; LZW and run-length counted by length), and
  the count stops at the cap, so memory stays at a few megabytes whatever the file claims. An encrypted PDF (most
  filings are, with an empty password) is counted on the decrypted copy PDFium writes without decoding a stream.
  A filter this does not read (an image codec, say) is counted as its input.
* **pages**: :func:`ppkit.documents.pdfcache.checked_page_count`, before any extraction.
* **time per page** and **memory**: a PDF read through :func:`read_guarded` (``ppkit extract``, ``ppkit index``,
  the server's uploads) is read in a process of its own (:class:`ppkit.core.child.Child`) that reports each page
  as it starts (:func:`read_page`); the caller kills it when one page takes longer than the cap or its resident
  memory passes the cap, even inside the PDF library. Read in this process (``extract_pdf`` called from Python),
  a page's time is checked when the next page starts.

A page PDFium cannot load (a page tree that points to itself, say) is an :class:`ExtractionError` naming the page
(it was a 55-line traceback). This module does not judge what a page says (a page without text is reported by
:func:`ppkit.documents.extract.pages_without_text`).
"""

from __future__ import annotations

import base64
import binascii
import re
import time
import zlib
from pathlib import Path

from ..core.child import Child, ChildError, in_child, tell
from ..core.config import PdfCaps, pdf_caps
from .pdfbase import ExtractionError

__all__ = ["PdfCapExceeded", "check_inflated", "inflated_bytes", "note_page", "read_page", "read_guarded",
           "GuardedRead"]

_CHUNK = 1 << 20  # bytes decompressed at a time
_STREAM = re.compile(rb"stream(?:\r\n|\n|\r)")
_FILTER = re.compile(rb"/Filter\s*(\[[^\]]{0,400}\]|/[A-Za-z0-9]+)")
_NAME = re.compile(rb"/([A-Za-z0-9]+)")
_IMAGE = re.compile(rb"/Subtype\s*/Image\b")
_NOT_HEX = re.compile(rb"[^0-9A-Fa-f]")
_FLATE, _HEX, _A85 = {b"FlateDecode", b"Fl"}, {b"ASCIIHexDecode", b"AHx"}, {b"ASCII85Decode", b"A85"}
_LZW, _RUNS = {b"LZWDecode", b"LZW"}, {b"RunLengthDecode", b"RL"}


class PdfCapExceeded(ExtractionError):
    """Reading a PDF passed one of its caps; the message names the cap and how to raise it."""


def _over(pdf, what: str, var: str, value) -> PdfCapExceeded:
    return PdfCapExceeded(f"{pdf}: {what}, the cap set by {var}={value}; the file was not read (a broken or hostile "
                          f"PDF?): check it, or raise {var} to read it")


# ---------------------------------------------------------------------------- decompressed bytes


class _Budget:
    """Bytes left to decompress; :meth:`take` raises once they are spent."""

    def __init__(self, cap: int):
        self.cap, self.used = cap, 0

    def take(self, n: int) -> None:
        self.used += n
        if self.used > self.cap:
            raise OverflowError


def _inflated(pieces, budget: _Budget):
    """The pieces of what the Flate data in ``pieces`` inflates to, at most :data:`_CHUNK` bytes each, charged to
    ``budget`` as they come (never held whole); a stream zlib cannot read ends at the error, as PDFium's does."""
    d = zlib.decompressobj(zlib.MAX_WBITS | 32)  # a zlib or gzip header
    try:
        for data in pieces:
            while data:
                out = d.decompress(data, _CHUNK)
                budget.take(len(out))
                yield out
                if d.eof:
                    return
                data = d.unconsumed_tail
        out = d.flush()
        budget.take(len(out))
        yield out
    except zlib.error:
        return


def _lzw_length(data: bytes, limit: int) -> int:
    """The length LZW-decoding ``data`` gives (the PDF variant: 9 to 12-bit codes, early change), counted without
    making the bytes (each code's string is its prefix's plus one) and no further than past ``limit``."""
    lengths = [1] * 256 + [0, 0]  # 256 clear, 257 end of data
    total, prev, width, bits, nbits = 0, None, 9, 0, 0
    for byte in data:
        bits, nbits = (bits << 8) | byte, nbits + 8
        while nbits >= width:
            nbits -= width
            code = (bits >> nbits) & ((1 << width) - 1)
            if code == 256:
                del lengths[258:]
                width, prev = 9, None
                continue
            if code == 257:
                return total
            n = lengths[code] if code < len(lengths) else (lengths[prev] + 1 if prev is not None else 1)
            total += n
            if total > limit:
                return total
            if prev is not None and len(lengths) < 4096:
                lengths.append(lengths[prev] + 1)
            prev = code
            if len(lengths) + 1 >= (1 << width) and width < 12:
                width += 1
        bits &= (1 << nbits) - 1
    return total


def _runs_length(data: bytes, limit: int) -> int:
    """The length run-length decoding ``data`` gives, counted no further than past ``limit``."""
    total, i = 0, 0
    while i < len(data) and total <= limit:
        n = data[i]
        if n == 128:
            break
        total, i = (total + n + 1, i + n + 2) if n < 128 else (total + 257 - n, i + 2)
    return total


def _decoded_size(data: bytes, filters: list[bytes], budget: _Budget) -> None:
    """Charge ``budget`` with what ``data`` decodes to through ``filters``, as far as they are read here: ASCII
    filters first, then Flate (piece by piece: a stream compressed twice is never held whole), then LZW or
    run-length by length alone."""
    k = 0
    try:
        while k < len(filters) and (filters[k] in _HEX or filters[k] in _A85):
            if filters[k] in _HEX:
                digits = _NOT_HEX.sub(b"", data.split(b">")[0])
                data = binascii.unhexlify(digits + b"0" * (len(digits) % 2))  # an odd last digit is followed by 0
            else:
                data = base64.a85decode(data.split(b"~>")[0], ignorechars=b" \t\n\r\x0b\x0c")
            k += 1
    except ValueError:
        return
    pieces, flate = iter((data,)), False
    while k < len(filters) and filters[k] in _FLATE:
        pieces, flate, k = _inflated(pieces, budget), True, k + 1
    if k < len(filters) and (filters[k] in _LZW or filters[k] in _RUNS):
        data = b"".join(pieces) if flate else data
        budget.take((_lzw_length if filters[k] in _LZW else _runs_length)(data, budget.cap - budget.used))
    elif flate:
        for _ in pieces:  # charged as they come
            pass
    else:  # unread filters (an image codec) or none: the stream as it is
        budget.take(len(data))


def _streams(data: bytes):
    """(the dictionary before it, its bytes) for each stream of a PDF file, in file order."""
    pos = 0
    for m in _STREAM.finditer(data):
        if m.start() < pos or data[max(0, m.start() - 3):m.start()] == b"end":
            continue
        head = data[max(0, m.start() - 4096):m.start()]
        head = head[head.rfind(b"obj") + 3:] if b"obj" in head else head
        end = data.find(b"endstream", m.end())
        end = len(data) if end < 0 else end
        yield head, data[m.end():end]
        pos = end


def inflated_bytes(data: bytes, cap: int) -> int | None:
    """The bytes the streams of the PDF file ``data`` decode to, images left out; ``None`` past ``cap`` (counting
    stops there)."""
    budget = _Budget(cap)
    try:
        for head, raw in _streams(data):
            if _IMAGE.search(head):
                continue
            f = _FILTER.search(head)
            _decoded_size(raw, _NAME.findall(f.group(1)) if f else [], budget)
    except OverflowError:
        return None
    return budget.used


def _decrypted(pdf: Path) -> bytes | None:
    """An encrypted PDF as PDFium writes it without its encryption (streams copied, not decoded); ``None`` when the
    file is not encrypted or cannot be opened (the extractor then says why)."""
    import io

    import pypdfium2
    import pypdfium2.raw as R

    try:
        doc = pypdfium2.PdfDocument(str(pdf))
    except pypdfium2.PdfiumError:
        return None
    try:
        if R.FPDF_GetSecurityHandlerRevision(doc.raw) < 0:
            return None
        out = io.BytesIO()
        doc.save(out, flags=R.FPDF_REMOVE_SECURITY)
        return out.getvalue()
    finally:
        doc.close()


def check_inflated(pdf: str | Path, caps: PdfCaps | None = None) -> int:
    """The bytes ``pdf``'s streams decompress to (images left out); a :class:`PdfCapExceeded` past ``caps.inflated``
    (default :func:`ppkit.core.config.pdf_caps`), before any page is parsed.

    >>> check_inflated("BOEING_2022_10K.pdf")   # doctest: +SKIP
    17402880
    """
    caps = caps or pdf_caps()
    pdf = Path(pdf)
    data = pdf.read_bytes()
    if b"/Encrypt" in data:
        data = _decrypted(pdf) or data
    n = inflated_bytes(data, caps.inflated)
    if n is None:
        raise _over(pdf, f"its streams decompress to more than {caps.inflated:,} bytes", "PPKIT_PDF_MAX_INFLATED",
                    caps.inflated)
    return n


# ---------------------------------------------------------------------------- pages


_LAST: list = [None, 0.0]  # in this process: (pdf, page) being read, and when it started


def note_page(pno: int, pdf: Path, caps: PdfCaps | None = None) -> None:
    """Page ``pno`` (1-based) of ``pdf`` starts: reported to the parent when read in a guarded process; otherwise
    the previous page's time is checked against the cap (a :class:`PdfCapExceeded`)."""
    now, prev = time.monotonic(), _LAST[0]
    _LAST[0], _LAST[1], since = (pdf, pno), now, _LAST[1]
    if in_child():
        tell("page", pno)
        return
    caps = caps or pdf_caps()
    if prev is not None and prev[0] == pdf and now - since > caps.page_seconds:
        _LAST[0] = None
        raise _over(pdf, f"page {prev[1]} took more than {caps.page_seconds:g} s to read", "PPKIT_PDF_PAGE_SECONDS",
                    f"{caps.page_seconds:g}")


def read_page(doc, pno: int, pdf: Path):
    """Page ``pno`` (1-based) of the open PDFium document ``doc`` (:func:`note_page` first); a page PDFium cannot
    load is an :class:`ExtractionError` naming it."""
    import pypdfium2

    note_page(pno, pdf)
    try:
        return doc[pno - 1]
    except pypdfium2.PdfiumError as e:
        raise ExtractionError(f"{pdf}: page {pno} of {len(doc)} cannot be read ({e}): its page tree is broken; "
                              "check the file or export it again") from None


# ---------------------------------------------------------------------------- a process of its own


class GuardedRead:
    """``target(*args)`` reading ``pdf`` in a process of its own, killed past the time per page or the memory cap.
    Call :meth:`check` until it returns ``True``; then :attr:`result` holds the return value.

    >>> read = GuardedRead("a.pdf", extract_pdf, "a.pdf", "out")   # doctest: +SKIP
    """

    def __init__(self, pdf: str | Path, target, *args, caps: PdfCaps | None = None):
        self.pdf, self.caps = Path(pdf), caps or pdf_caps()
        self.child = Child(target, *args, name=f"ppkit-read-{self.pdf.name[:40]}")
        self.page, self.since, self.started = 0, time.monotonic(), False
        self.result = None

    def check(self, wait: float = 0.05) -> bool:
        """Take the child's news for up to ``wait`` seconds: ``True`` once it is done; its error raised (a cap
        passed: :class:`PdfCapExceeded`, the child killed)."""
        for message in self.child.poll(wait):
            if message[0] == "started":  # opening the file (decompressed bytes, page count) is timed as a page
                self.started, self.since = True, time.monotonic()
            elif message[0] == "page":
                self.page, self.since = message[1], time.monotonic()
            elif message[0] == "done":
                self.result = message[1]
                return True
            elif message[0] == "error":
                error = message[1]
                raise (RuntimeError(f"reading {self.pdf} failed in its process:\n{error}")
                       if isinstance(error, ChildError) else error)
            elif message[0] == "died":
                raise ExtractionError(f"{self.pdf}: the process reading it ended without an answer (exit status "
                                      f"{message[1]}; out of memory?) at page {self.page}: check the file, or raise "
                                      "PPKIT_PDF_MAX_MEMORY if the machine has the memory")
        caps = self.caps
        if self.started and time.monotonic() - self.since > caps.page_seconds:
            self.stop()
            raise _over(self.pdf, f"{f'page {self.page}' if self.page else 'opening it'} took more than "
                                  f"{caps.page_seconds:g} s", "PPKIT_PDF_PAGE_SECONDS", f"{caps.page_seconds:g}")
        rss = self.child.rss()
        if rss is not None and rss > caps.memory:
            self.stop()
            raise _over(self.pdf, f"reading it took more than {caps.memory:,} bytes of memory"
                        + (f" at page {self.page}" if self.page else ""), "PPKIT_PDF_MAX_MEMORY", caps.memory)
        return False

    def stop(self) -> None:
        """Kill the reading process (if it still runs)."""
        self.child.kill()


def read_guarded(pdf: str | Path, target, *args, caps: PdfCaps | None = None):
    """``target(*args)`` run as a :class:`GuardedRead` of ``pdf``, waited for; its return value.

    >>> ex = read_guarded("a.pdf", extract_pdf, "a.pdf", "out")   # doctest: +SKIP
    """
    read = GuardedRead(pdf, target, *args, caps=caps)
    try:
        while not read.check(0.05):
            pass
        return read.result
    finally:
        read.stop()
