"""Issue 45, the PDFs: a decompression bomb, a page that takes too long or too much memory, a page tree that points to
itself, a scan of 2,000 pages without text, and ``kill -9`` of ``ppkit index``. Each PDF is made here (hand-written
bytes, or pypdfium2); each case ends in one clear line or a warning, and loses nothing."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
import zlib

import pytest

from ppkit.core.config import PdfCaps
from ppkit.documents.pdfguard import check_inflated, inflated_bytes

from .conftest import ROOT, blank_pdf, cli_env, one_line, pdf_bytes, run_cli

TEXT_OPS = b"BT /F1 12 Tf 100 700 Td (Hello world) Tj ET\n"  # one line of text drawn: 45 bytes of a content stream


def one_page(content: bytes, *, filters: bytes = b"/FlateDecode", encode=lambda b: zlib.compress(b, 9)) -> bytes:
    """A one-page PDF whose content stream is ``content``, compressed (the bomb: a few KB that inflate to MB)."""
    data = encode(content)
    return pdf_bytes([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                      b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
                      b"/Resources << /Font << /F1 5 0 R >> >> >>",
                      b"<< /Length %d /Filter %s >>\nstream\n" % (len(data), filters) + data + b"\nendstream",
                      b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"])


# -- decompressed bytes ------------------------------------------------------------------------------------------
def test_a_decompression_bomb_is_one_line_naming_its_cap(tmp_path):
    """Case 2: was: a 582 KB PDF inflating to 300 MB ran 117 s at 5.9 GB (a 300 MB bomb under ``ppkit extract``
    here: 30 s, 4.1 GB). The bytes are counted before any page is parsed and the count stops at the cap; set low
    here, the same happens to a 40 KB file that inflates to 12 MB, under ``ppkit extract`` and ``ppkit index``."""
    bomb = tmp_path / "bomb.pdf"
    bomb.write_bytes(one_page(TEXT_OPS * 270_000))
    assert bomb.stat().st_size < 60_000
    env = {"PPKIT_PDF_MAX_INFLATED": 10_000_000, "PPKIT_CACHE_DIR": tmp_path / "cache"}
    for args in (["extract", bomb, "--out", tmp_path / "out", "--quiet"],
                 ["index", bomb, "--index", tmp_path / "ix", "--embedder", "hash", "--quiet"]):
        started = time.monotonic()
        result = run_cli(*args, env=env)
        one_line(result, f"{bomb}: its streams decompress to more than 10,000,000 bytes",
                  "PPKIT_PDF_MAX_INFLATED=10000000", "raise PPKIT_PDF_MAX_INFLATED to read it")
        assert time.monotonic() - started < 60
    assert not (tmp_path / "out").exists() and not (tmp_path / "ix").exists()
    assert not list((tmp_path / "cache").rglob("*.md"))


@pytest.mark.parametrize("filters, encode", [
    (b"/FlateDecode", lambda b: zlib.compress(b, 9)),
    (b"[/FlateDecode /FlateDecode]", lambda b: zlib.compress(zlib.compress(b, 9), 9)),  # compressed twice
    (b"[/ASCIIHexDecode /FlateDecode]", lambda b: zlib.compress(b, 9).hex().encode() + b">"),
    (b"/ASCII85Decode", lambda b: __import__("base64").a85encode(b) + b"~>"),  # not compressed: counted as decoded
], ids=["flate", "flate-twice", "hex-then-flate", "ascii85"])
def test_the_decompressed_bytes_are_counted_through_the_filters(tmp_path, filters, encode):
    """Each filter chain is counted as PDFium decodes it, every stage's output (a stream compressed twice counts
    its middle stage too), and a count stops at its cap instead of inflating the rest."""
    content = TEXT_OPS * 20_000  # 880,000 bytes
    data = one_page(content, filters=filters, encode=encode)
    middle = len(zlib.compress(content, 9)) if filters.count(b"Flate") == 2 else 0
    assert inflated_bytes(data, 10**9) == len(content) + middle  # the file's one stream
    assert inflated_bytes(data, 100_000) is None
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(data)
    assert check_inflated(pdf, PdfCaps(inflated=len(content) + middle)) == len(content) + middle


def test_an_encrypted_bomb_is_counted_on_its_decrypted_copy(tmp_path):
    """Most filings are encrypted with an empty password: their streams cannot be inflated as they are (counted
    raw, the bomb reads as nothing); PDFium's decrypted copy, made without decoding a stream, is counted."""
    pymupdf = pytest.importorskip("pymupdf")  # only to encrypt the file (the extra "pdf")
    plain = tmp_path / "plain.pdf"
    plain.write_bytes(one_page(TEXT_OPS * 270_000))
    enc = tmp_path / "enc.pdf"
    pymupdf.open(plain).save(enc, encryption=pymupdf.PDF_ENCRYPT_AES_128, owner_pw="o", user_pw="", deflate=False)
    assert b"/Encrypt" in enc.read_bytes() and inflated_bytes(enc.read_bytes(), 10**9) < 1_000_000
    with pytest.raises(Exception, match="decompress to more than 10,000,000 bytes"):
        check_inflated(enc, PdfCaps(inflated=10_000_000))


def test_the_reference_pdfs_are_far_under_the_cap():
    """The default cap leaves room: the largest of the reference PDFs decompresses to about a tenth of it."""
    pdfs = sorted((ROOT.parent / "shared" / "data").glob("*/*.pdf"))
    if not pdfs:
        pytest.skip("the reference data is not here")
    assert max(check_inflated(p) for p in pdfs) < PdfCaps().inflated / 4


# -- time per page, memory ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def heavy_page(tmp_path_factory):
    """One page of 530,000 lines of text drawn (24 MB of content, 60 KB of file): PDFium takes seconds and some
    400 MB to parse it, within the decompressed-bytes cap."""
    path = tmp_path_factory.mktemp("heavy") / "heavy.pdf"
    path.write_bytes(one_page(TEXT_OPS * 530_000))
    return path


def test_a_page_past_its_time_is_stopped_and_named(tmp_path, heavy_page):
    """The page is read in a process of its own that reports each page; past the cap it is killed in the middle
    of the PDF library's work, and the line names the page and the cap."""
    started = time.monotonic()
    result = run_cli("extract", heavy_page, "--out", tmp_path / "out", "--quiet", env={"PPKIT_PDF_PAGE_SECONDS": 0.2})
    err = one_line(result, "took more than 0.2 s", "PPKIT_PDF_PAGE_SECONDS=0.2")
    assert "page 1 took" in err or "opening it took" in err
    assert time.monotonic() - started < 60 and not (tmp_path / "out").exists()


def test_a_page_past_the_memory_cap_is_stopped_and_named(tmp_path, heavy_page):
    result = run_cli("extract", heavy_page, "--out", tmp_path / "out", "--quiet",
                     env={"PPKIT_PDF_MAX_MEMORY": 200_000_000})
    one_line(result, "reading it took more than 200,000,000 bytes of memory", "PPKIT_PDF_MAX_MEMORY=200000000")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name, value", [("PPKIT_PDF_MAX_INFLATED", "10"), ("PPKIT_PDF_PAGE_SECONDS", "nan"),
                                         ("PPKIT_PDF_MAX_MEMORY", "-1"), ("PPKIT_PDF_MAX_PAGES", "many")])
def test_a_cap_out_of_range_isone_line(tmp_path, name, value):
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(one_page(TEXT_OPS))
    result = run_cli("extract", pdf, "--out", tmp_path / "out", env={name: value})
    one_line(result, name)
    assert not (tmp_path / "out").exists()


# -- a broken page tree ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kids, pages, bad", [(b"2 0 R", 1, 1), (b"2 0 R 3 0 R", 2, 2)], ids=["only-itself", "itself-and-a-page"])
def test_a_page_tree_that_points_to_itself_isone_line(tmp_path, kids, pages, bad):
    """Case 8: was: a 55-line PdfiumError traceback (CLI) and an InternalError (a job, tests/test_serve_jobs.py)."""
    pdf = tmp_path / "loop.pdf"
    pdf.write_bytes(pdf_bytes([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
                               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"]))
    env = {"PPKIT_CACHE_DIR": tmp_path / "cache"}
    for args in (["extract", pdf, "--out", tmp_path / "out", "--quiet"],
                 ["index", pdf, "--index", tmp_path / "ix", "--embedder", "hash", "--quiet"]):
        one_line(run_cli(*args, env=env), f"{pdf}: page {bad} of {pages} cannot be read", "its page tree is broken")
    assert not (tmp_path / "out").exists() and not (tmp_path / "ix").exists()


# -- a scan: pages without text ----------------------------------------------------------------------------------
def test_a_scan_of_2000_pages_is_indexed_with_a_warning_and_no_period_from_its_name(tmp_path):
    """Case 9: was: exit 0, 0 chunks, no word said, and the period FY2000 taken from the file name. Indexed all
    the same (exit status 0), with a warning naming the pages without text; the period is the text's (none)."""
    scan = blank_pdf(tmp_path / "scan_2000.pdf", 2000)
    env = {"PPKIT_CACHE_DIR": tmp_path / "cache"}
    result = run_cli("index", scan, "--index", tmp_path / "ix", "--embedder", "hash", "--quiet", env=env)
    assert result.returncode == 0, result.stderr
    warning = ("ppkit index: warning: scan_2000: no text layer on pages 1-2000 of 2000 (scanned images? ppkit reads "
               "the text of a PDF, it does no OCR): they cannot be found or quoted; run OCR on the PDF")
    assert result.stderr.startswith(warning) and result.stderr.count("\n") == 1
    assert "indexed 1 documents, 0 chunks" in result.stdout
    rec = json.loads((tmp_path / "ix" / "manifest.json").read_text())["documents"][0]
    assert rec["metadata"]["period"] is None and rec["metadata"]["fiscal_year"] is None
    assert "fiscal_year" not in rec["metadata"]["sources"]
    result = run_cli("extract", scan, "--out", tmp_path / "out", "--quiet", env=env)
    assert result.returncode == 0 and "no text layer on pages 1-2000 of 2000" in result.stderr


# -- kill -9 of ppkit index ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("delay", [0.3, 1.0, 2.0, 3.5])
def test_kill_9_of_an_index_run_leaves_nothing_running(tmp_path, heavy_page, delay):
    """Case 10: was: 2 of 9 kills two seconds in left a worker and a resource tracker running for 11 minutes,
    holding the caller's stdout. Killed at several moments (starting, spawning the reader, reading the page), the
    run's stdout ends within seconds: no process of it holds it any more."""
    proc = subprocess.Popen([sys.executable, "-m", "ppkit.cli", "index", str(heavy_page), "--index", str(tmp_path / "ix"),
                             "--embedder", "hash", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=cli_env(PPKIT_CACHE_DIR=tmp_path / "cache"), cwd=ROOT)
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    out, deadline = b"", time.monotonic() + 20
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:  # every process that held the pipe is gone
                break
            out += chunk
    else:
        pytest.fail(f"20 s after kill -9 at {delay} s, a process of the run still holds its stdout ({out[-300:]!r})")
    proc.stdout.close()
