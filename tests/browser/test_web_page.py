"""The ``ppkit serve`` web page in headless Chromium, used the way a person uses it.

A real ``ppkit serve`` (its own process, a free port of 127.0.0.1, a fresh cache folder) over a tiny
hash-embedder index of two fixture filings. The test types a question and presses Enter: the answer block
shows before the text, the text streams in pieces, the ranked breadcrumbs and citations appear; a citation
in the text is activated with the keyboard: the section opens with the cited line highlighted. A two-page PDF
(written with pypdfium2) is uploaded: the progress bar and status follow the job to "indexed", the document is
listed, and a question about it is answered with its PDF page named; the company filter narrows the list;
the document is removed. Screenshots go to ``.ppkit/screenshots/``.

Run: ``pytest tests/browser/test_web_page.py -m browser`` (needs Chromium: ``apt-get install chromium``).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import ppkit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from serve_support import make_pdf  # noqa: E402

pytestmark = [pytest.mark.browser]

FIX = Path(__file__).resolve().parents[1] / "fixtures"

# records, in order, when the answer block is drawn ("block") and each change of the answer's text ("clear": the
# text redrawn for one more piece, "add": nodes added): one observer, so the records keep their order
_WATCH = """() => {
  window.__seen = [];
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.target.id === "answer-block" && r.addedNodes.length) window.__seen.push("block");
      else if (r.target.id === "answer-text" && r.removedNodes.length) window.__seen.push("clear");
      else if (r.target.id === "answer-text" && r.addedNodes.length) window.__seen.push("add");
    }
  }).observe(document.getElementById("ask-panel"), {childList: true, subtree: true});
}"""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory, deadline):
    """``ppkit serve`` over acme and globex (hash embedder) on a free loopback port; its URL."""
    tmp = tmp_path_factory.mktemp("serve-page")
    docs = []
    for name in ("acme.md", "globex.md"):
        (tmp / name).write_bytes((FIX / name).read_bytes())
        docs.append(tmp / name)
    ppkit.build_index(docs, tmp / "index", embedder=ppkit.HashEmbedder(), config=ppkit.Config(online=False),
                      progress=False)
    port = _free_port()
    env = {**os.environ, "PPKIT_CACHE_DIR": str(tmp / "cache"), "PPKIT_OFFLINE": "1", "PPKIT_QUIET": "1",
           "NO_PROXY": "127.0.0.1,localhost"}
    env.pop("PPKIT_API_TOKEN", None)
    log = tmp / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", "import sys; from ppkit.cli import main; sys.exit(main())",
                                 "serve", "--index", str(tmp / "index"), "--port", str(port)],
                                env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        end = time.monotonic() + deadline.left(60)
        while True:
            if proc.poll() is not None:
                pytest.fail(f"ppkit serve exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
            try:
                urllib.request.urlopen(url + "/healthz", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > end:
                    pytest.fail(f"ppkit serve did not answer within 60 s:\n{log.read_text(errors='replace')[-3000:]}")
                time.sleep(0.2)
        yield url, tmp
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _answered(page, timeout_ms: float) -> None:
    """Wait for the answer's end (its timings, or an error) and fail on an error."""
    page.wait_for_function("() => /Done in|Error/.test(document.getElementById('ask-status').textContent)",
                           timeout=timeout_ms)
    status = page.locator("#ask-status").inner_text()
    assert "Done in" in status, status


def _doc_rows(page) -> list[str]:
    return page.locator("#documents tbody tr").evaluate_all("rows => rows.map(r => r.dataset.doc)")


def test_ask_cite_upload_remove(browser, server, deadline, screenshots):
    url, tmp = server
    errors: list[str] = []
    page = browser.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    wait = lambda cap: deadline.left(cap) * 1000  # noqa: E731
    try:
        page.goto(url + "/", timeout=wait(30))
        page.wait_for_function("() => document.querySelectorAll('#documents tbody tr').length === 2", timeout=wait(30))
        assert _doc_rows(page) == ["acme", "globex"]

        # ask with the keyboard: the answer block first, then the text in pieces, the breadcrumbs and citations
        page.evaluate(_WATCH)
        page.get_by_label("Question").fill("What is Acme's quick ratio for FY2022?")
        page.get_by_label("Question").press("Enter")
        _answered(page, wait(30))
        seen = page.evaluate("() => window.__seen")
        assert "block" in seen and "add" not in seen[:seen.index("block")], seen  # the block before any text
        assert seen[seen.index("block"):].count("clear") >= 5, seen  # the text redrawn piece by piece
        assert "Not found" in page.locator("#answer-block").inner_text()
        assert page.locator("#breadcrumbs li").count() >= 3
        assert page.locator("#breadcrumbs li").first.inner_text().startswith("acme >")
        assert "Consolidated Balance Sheets" in page.locator("#citations").inner_text()
        text = page.locator("#answer-text").inner_text()
        assert text.startswith("[offline extractive answer") and "Sources:" in text

        # a citation in the text, reached with Tab and opened with Enter: its line highlighted, the rest not
        cite = page.locator("#answer-text button.cite", has_text="acme#0010 line 40")
        cite.focus()
        page.keyboard.press("Enter")
        page.wait_for_selector("#section-view:not([hidden]) .ln", timeout=wait(10))
        assert "Consolidated Balance Sheets" in page.locator("#section-title").inner_text()
        assert page.locator("#section-lines .ln.hl").evaluate_all("r => r.map(x => x.dataset.line)") == ["40"]
        assert "Total current liabilities" in page.locator("#section-lines .ln.hl").inner_text()
        assert page.locator("#section-pages").inner_text().startswith("No PDF pages")
        page.screenshot(path=str(screenshots / "serve_page_answer.png"), full_page=True)

        # upload a PDF: the bar and status follow the job to "indexed"
        pdf = make_pdf(tmp / "Initech 2022 10K.pdf")
        page.set_input_files("#upload-file", str(pdf))
        page.get_by_role("button", name="Upload").click()
        page.wait_for_function("() => /extracting|indexing|loading/.test(document.getElementById('upload-status')"
                               ".textContent)", timeout=wait(20))
        page.wait_for_function("() => /indexed|failed/.test(document.getElementById('upload-status').textContent)",
                               timeout=wait(90))
        assert page.locator("#upload-status").inner_text() == "Initech_2022_10K: indexed"
        assert page.locator("#upload-progress").evaluate("p => p.value") == 1
        page.wait_for_function("() => document.querySelectorAll('#documents tbody tr').length === 3", timeout=wait(10))
        assert _doc_rows(page) == ["acme", "globex", "Initech_2022_10K"]
        row = page.locator("#documents tbody tr[data-doc='Initech_2022_10K'] td").all_inner_texts()
        assert row[1:5] == ["Initech", "FY2022", "10-K", "2"]

        # the company filter narrows the list (and the documents searched)
        page.get_by_label("Company").select_option("Initech")
        assert _doc_rows(page) == ["Initech_2022_10K"]
        page.get_by_label("Question").fill("What was the net revenue in 2022?")
        page.get_by_role("button", name="Ask").click()
        _answered(page, wait(30))
        assert "2,750" in page.locator("#answer-block").inner_text()
        assert {t.split(" >")[0] for t in page.locator("#breadcrumbs li").all_inner_texts()} == {"Initech_2022_10K"}
        page.locator("#answer-block button.cite").first.click()
        page.wait_for_function("() => document.getElementById('section-pages').textContent.startsWith('PDF pages')",
                               timeout=wait(10))
        assert page.locator("#section-pages").inner_text() == "PDF pages 2"
        assert "2,750" in page.locator("#section-lines .ln.hl").inner_text()
        page.screenshot(path=str(screenshots / "serve_page_upload.png"), full_page=True)

        # remove it
        page.get_by_label("Company").select_option("")
        page.once("dialog", lambda d: d.accept())
        page.get_by_role("button", name="Remove Initech_2022_10K").click()
        page.wait_for_function("() => document.querySelectorAll('#documents tbody tr').length === 2", timeout=wait(20))
        assert page.locator("#upload-status").inner_text() == "Removed Initech_2022_10K."
        assert _doc_rows(page) == ["acme", "globex"]
        with urllib.request.urlopen(url + "/v1/documents", timeout=5) as r:
            assert b"Initech" not in r.read()
    finally:
        page.close()
    assert errors == [], f"JavaScript errors in the page: {errors}"


def test_upload_says_what_the_document_is_and_the_filter_selects_it(browser, server, deadline, screenshots):
    """Issue 47: the upload's company, period and form, prefilled from the file (its name here) and corrected by
    hand, are what the documents table shows and what the filters select; the Edit button changes them."""
    url, tmp = server
    errors: list[str] = []
    page = browser.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    wait = lambda cap: deadline.left(cap) * 1000  # noqa: E731
    report = tmp / "QUARRY_2024_10K.md"
    report.write_text("# Quarry Lane Outfitters\n\nQuarry Lane Outfitters sells hiking boots and tents.\n\n"
                      "## Results\n\n| Line item | 2024 | 2023 |\n| --- | --- | --- |\n| Net sales | 4,120 | 3,870 |\n",
                      encoding="utf-8")
    try:
        page.goto(url + "/", timeout=wait(30))
        page.wait_for_function("() => document.querySelectorAll('#documents tbody tr').length === 2", timeout=wait(30))
        page.set_input_files("#upload-file", str(report))
        page.wait_for_function("() => document.getElementById('upload-period').value === 'FY2024'", timeout=wait(20))
        assert page.locator("#upload-form-type").input_value() == "10-K"  # from the file's name
        page.locator("#upload-company").fill("Quarry Lane Outfitters")
        page.get_by_role("button", name="Upload").click()
        page.wait_for_function("() => /indexed|failed/.test(document.getElementById('upload-status').textContent)",
                               timeout=wait(90))
        assert page.locator("#upload-status").inner_text() == "QUARRY_2024_10K: indexed"
        page.wait_for_function("() => document.querySelectorAll('#documents tbody tr').length === 3", timeout=wait(10))
        page.locator("#filter-company").select_option("Quarry Lane Outfitters")
        page.locator("#filter-period").select_option("FY2024")
        assert _doc_rows(page) == ["QUARRY_2024_10K"]
        page.get_by_label("Question").fill("What were the net sales in 2024?")
        page.get_by_role("button", name="Ask").click()
        _answered(page, wait(30))
        assert {t.split(" >")[0] for t in page.locator("#breadcrumbs li").all_inner_texts()} == {"QUARRY_2024_10K"}

        # the Edit button: globex said to be another period; the period filter follows
        page.locator("#filter-company").select_option("")
        page.locator("#filter-period").select_option("")
        page.get_by_role("button", name="Edit globex").click()
        page.locator("#edit-company").fill("Globex Corporation")
        page.locator("#edit-period").fill("FY2023")
        page.locator("#edit-form-type").fill("10-K")
        page.get_by_role("button", name="Save").click()
        page.wait_for_function("() => /Saved|Not saved/.test(document.getElementById('upload-status').textContent)",
                               timeout=wait(30))
        assert page.locator("#upload-status").inner_text() == "Saved what globex is."
        page.wait_for_function("() => [...document.getElementById('filter-period').options].some(o => o.value === 'FY2023')",
                               timeout=wait(10))
        page.locator("#filter-period").select_option("FY2023")
        assert _doc_rows(page) == ["globex"]
        row = page.locator("#documents tbody tr[data-doc='globex'] td").all_inner_texts()
        assert row[1:4] == ["Globex Corporation", "FY2023", "10-K"]
        page.screenshot(path=str(screenshots / "serve_page_describe.png"), full_page=True)
        page.locator("#filter-period").select_option("")
        page.once("dialog", lambda d: d.accept())
        page.get_by_role("button", name="Remove QUARRY_2024_10K").click()
        page.wait_for_function("() => document.querySelectorAll('#documents tbody tr').length === 2", timeout=wait(20))
    finally:
        page.close()
    assert errors == [], f"JavaScript errors in the page: {errors}"
