"""The ``ppkit serve`` web page in headless Chromium, used the way a person uses it.

A real ``ppkit serve`` (its own process, a free port of 127.0.0.1, a fresh cache folder) over a tiny
hash-embedder index of four fixture filings: acme and globex, northwind (its balance sheet a Markdown table) and
contoso (an HTML table, as LlamaParse writes them). What is checked:

* asking with the keyboard: the answer block shows before the text, the text streams in pieces, the ranked
  breadcrumbs and citations appear, the answer's mode is a small label and not a banner in the text; a reference in
  the text, reached with Tab and opened with Enter, opens its section with the cited row lit;
* a follow-up: "And Contoso?" after Northwind's quick ratio is answered with Contoso's figure (the page sends the
  conversation as ``history`` and shows it; "New conversation" forgets it);
* a table citation: the HTML table shown as a table, the cited row, its cell and the header giving its period lit
  and scrolled into view inside the section's box;
* a new question clears the section opened from the old answer; a removed document's answer and links go;
* 390x844 and 360x740 without horizontal page scroll, the question box and the Remove buttons reachable;
* a two-page PDF uploaded (the bar and status follow the job to "indexed"), answered with its page named and the
  section shown by page, filtered, removed; the upload estimate counts down, then says it is over;
* what a document is (issue 47): the upload's company, period and form prefilled from the file (``POST
  /v1/documents/cover``), corrected by hand, shown in the documents table and selected by the filters; a row's Edit
  button changes them (``PATCH /v1/documents/{name}``);
* no JavaScript error and no failed request (the favicon included).

Screenshots go to ``.ppkit/screenshots/``.

Run: ``pytest tests/browser/test_web_page.py -m browser`` (needs Chromium: ``apt-get install chromium``).
"""

from __future__ import annotations

import json
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
DOCS = ("acme", "contoso", "globex", "northwind")

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

# the page is wider than its window: a horizontal scroll bar
_OVERFLOW = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory, deadline):
    """``ppkit serve`` over the four fixture filings (hash embedder) on a free loopback port; its URL."""
    tmp = tmp_path_factory.mktemp("serve-page")
    docs = []
    for name in DOCS:
        (tmp / f"{name}.md").write_bytes((FIX / f"{name}.md").read_bytes())
        docs.append(tmp / f"{name}.md")
    ppkit.build_index(docs, tmp / "index", embedder=ppkit.HashEmbedder(), config=ppkit.Config(online=False),
                      progress=False)
    port = _free_port()
    env = {**os.environ, "PPKIT_CACHE_DIR": str(tmp / "cache"), "PPKIT_OFFLINE": "1", "PPKIT_QUIET": "1",
           "NO_PROXY": "127.0.0.1,localhost",
           # the answer selector's hand-set prior: the page is tested on filings of a few sentences, where the weights
           # fitted on whole filings would hedge every answer (tests/conftest.py, prior_selector)
           "PPKIT_SELECTOR": str(FIX / "selector_prior.json")}
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


class Page:
    """A fresh tab on the server's page that records JavaScript errors and failed requests."""

    def __init__(self, browser, url: str, deadline, *, width: int = 1400, height: int = 1000):
        self.page, self.deadline = browser.new_page(), deadline
        self.errors: list[str] = []
        self.failed: list[str] = []
        self.asked: list[dict] = []  # the bodies sent to /v1/ask/stream
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("response", lambda r: r.status >= 400 and self.failed.append(f"{r.status} {r.url}"))
        self.page.on("request", lambda r: r.url.endswith("/v1/ask/stream")
                     and self.asked.append(json.loads(r.post_data)))
        self.page.set_viewport_size({"width": width, "height": height})
        self.page.goto(url + "/", timeout=self.wait(30))
        self.page.wait_for_function("() => document.querySelectorAll('#documents tbody tr').length > 0",
                                    timeout=self.wait(30))

    def wait(self, cap: float) -> float:
        return self.deadline.left(cap) * 1000

    def ask(self, question: str, *, enter: bool = True) -> None:
        """Type ``question`` and ask (Enter, or the Ask button); wait for the answer's end, failing on an error."""
        box = self.page.get_by_label("Question")
        box.fill(question)
        if enter:
            box.press("Enter")
        else:
            self.page.get_by_role("button", name="Ask", exact=True).click()
        self.page.wait_for_function("() => /Done in|Error/.test(document.getElementById('ask-status').textContent)",
                                    timeout=self.wait(30))
        status = self.page.locator("#ask-status").inner_text()
        assert "Done in" in status, status

    def rows(self) -> list[str]:
        return self.page.locator("#documents tbody tr").evaluate_all("rows => rows.map(r => r.dataset.doc)")

    def lit(self, what: str = "[data-line].hl") -> list[str]:
        """The source lines lit in the section shown."""
        return self.page.locator(f"#section-lines {what}").evaluate_all("r => r.map(x => x.dataset.line)")

    def open_section(self, link) -> None:
        link.click()
        self.page.wait_for_selector("#section-view:not([hidden]) [data-line]", timeout=self.wait(10))

    def close(self) -> None:
        self.page.close()
        assert self.errors == [], f"JavaScript errors in the page: {self.errors}"
        assert self.failed == [], f"failed requests: {self.failed}"


@pytest.fixture
def tab(browser, server, deadline):
    """A fresh tab on the page at 1400x1000, its scripts loaded; closed after the test, which then fails on a
    JavaScript error or a failed request."""
    p = Page(browser, server[0], deadline)
    yield p
    p.close()


def test_ask_cite_upload_remove(tab, server, screenshots):
    url, tmp = server
    p, page = tab, tab.page
    assert p.rows() == list(DOCS)
    # the question box is the page's first text input
    assert page.evaluate("() => document.querySelector('input:not([type]), input[type=text]').id") == "question"

    # ask with the keyboard: the answer block first, then the text in pieces, the breadcrumbs and citations
    page.evaluate(_WATCH)
    p.ask("What is Acme's quick ratio for FY2022?")
    seen = page.evaluate("() => window.__seen")
    assert "block" in seen and "add" not in seen[:seen.index("block")], seen  # the block before any text
    assert seen[seen.index("block"):].count("clear") >= 5, seen  # the text redrawn piece by piece
    # Acme's balance sheet lacks an input of the ratio: the block says so and cites what was found
    assert "Not stated directly: the quick ratio needs" in page.locator("#answer-block").inner_text()
    assert page.locator("#breadcrumbs li").count() >= 3
    assert page.locator("#breadcrumbs li").first.inner_text().startswith("acme >")
    assert "Consolidated Balance Sheets" in page.locator("#citations").inner_text()
    text = page.locator("#answer-text").inner_text()
    assert text.startswith("Not stated directly") and "Sources:" in text and "offline extractive" not in text
    mode = page.locator("#answer-mode")  # the mode: a small label beside the block, not a banner
    assert mode.inner_text() == "offline" and "no language model" in mode.get_attribute("title")

    # a reference in the text, reached with Tab and opened with Enter: its table row lit, the rest not
    cite = page.locator("#answer-text a.cite", has_text="acme#0010 line 40")
    cite.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#section-view:not([hidden]) [data-line]", timeout=p.wait(10))
    assert "Consolidated Balance Sheets" in page.locator("#section-title").inner_text()
    assert p.lit() == ["40"] and p.lit(".src-table tr.hl") == ["40"]
    assert "Total current liabilities" in page.locator("#section-lines tr.hl").inner_text()
    assert page.locator("#section-lines .hl-cell").inner_text() == "1,500"  # the figure the block states
    assert page.locator("#section-lines .hl-head").all_inner_texts() == ["2022"]
    assert page.locator("#section-pages").inner_text().startswith("No PDF pages")
    page.screenshot(path=str(screenshots / "serve_page_answer.png"), full_page=True)

    # a new question: the old answer's section is closed
    p.ask("What was Globex's net revenue in 2022?")
    assert page.locator("#section-view").is_hidden() and page.locator("#section-lines [data-line]").count() == 0
    assert "700" in page.locator("#answer-block").inner_text()

    # upload a PDF: the bar and status follow the job to "indexed"
    pdf = make_pdf(tmp / "Initech 2022 10K.pdf")
    page.set_input_files("#upload-file", str(pdf))
    page.get_by_role("button", name="Upload").click()
    page.wait_for_function("() => /extracting|indexing|loading/.test(document.getElementById('upload-status')"
                           ".textContent)", timeout=p.wait(20))
    page.wait_for_function("() => /indexed|failed/.test(document.getElementById('upload-status').textContent)",
                           timeout=p.wait(90))
    assert page.locator("#upload-status").inner_text() == "Initech_2022_10K: indexed"
    assert page.locator("#upload-progress").evaluate("p => p.value") == 1
    page.wait_for_function("() => document.querySelectorAll('#documents tbody tr').length === 5", timeout=p.wait(10))
    assert p.rows() == ["acme", "contoso", "globex", "northwind", "Initech_2022_10K"]
    row = page.locator("#documents tbody tr[data-doc='Initech_2022_10K'] td").all_inner_texts()
    assert row[1:5] == ["Initech", "FY2022", "10-K", "2"]

    # the company filter narrows the list (and the documents searched); the PDF's section shown by page
    page.get_by_role("button", name="New conversation").click()
    page.get_by_label("Company").select_option("Initech")
    assert p.rows() == ["Initech_2022_10K"]
    p.ask("What was the net revenue in 2022?", enter=False)
    assert "2,750" in page.locator("#answer-block").inner_text()
    assert {t.split(" >")[0] for t in page.locator("#breadcrumbs li").all_inner_texts()} == {"Initech_2022_10K"}
    p.open_section(page.locator("#answer-block a.cite").first)
    assert page.locator("#section-pages").inner_text() == "PDF pages 2"
    assert page.locator("#section-lines .page-mark").all_inner_texts() == ["Page 2"]
    assert "2,750" in page.locator("#section-lines .ln.hl").inner_text()
    page.screenshot(path=str(screenshots / "serve_page_upload.png"), full_page=True)

    # remove it: its answer, its links and its section go with it
    page.get_by_label("Company").select_option("")
    p.ask("What was Globex's net revenue in 2022?")  # one more turn: the conversation goes on without Initech's
    p.ask("What was the net revenue of Initech_2022_10K in 2022?")
    assert "2,750" in page.locator("#answer-block").inner_text()
    assert "2,750" in page.locator("#turns").inner_text()  # the first turn's answer, from Initech
    p.open_section(page.locator("#answer-block a.cite").first)
    page.once("dialog", lambda d: d.accept())
    page.get_by_role("button", name="Remove Initech_2022_10K").click()
    page.wait_for_function("() => document.querySelectorAll('#documents tbody tr').length === 4", timeout=p.wait(20))
    assert page.locator("#upload-status").inner_text() == "Removed Initech_2022_10K."
    assert p.rows() == list(DOCS)
    assert page.locator("#answer-block").is_hidden() and page.locator("#answer-text").inner_text() == ""
    assert page.locator("a.cite[data-doc='Initech_2022_10K']").count() == 0
    assert page.locator("#section-view").is_hidden()
    assert "Initech_2022_10K, which was removed" in page.locator("#ask-status").inner_text()
    assert page.locator("#turns li").all_inner_texts() == [  # the turns answered from it are gone too
        "Q: What was Globex's net revenue in 2022?\nA: $700 million: \u201cNet revenue was $700 million in 2022 "
        "compared to $650 million in 2021.\u201d"]
    with urllib.request.urlopen(url + "/v1/documents", timeout=5) as r:
        assert b"Initech" not in r.read()


def test_a_follow_up_and_a_table_citation_with_its_cell_lit(tab, screenshots):
    p, page = tab, tab.page
    p.ask("What is the quick ratio of Northwind for fiscal 2023?")
    assert "1.25" in page.locator("#answer-block").inner_text()
    assert page.locator("#conversation").is_hidden() and "history" not in p.asked[-1]

    # the follow-up names only the other company: the page sends the first turn, the answer is Contoso's
    p.ask("And Contoso?")
    assert "0.80: quick ratio, contoso FY2023" in page.locator("#answer-block").inner_text()
    assert p.asked[-1]["history"] == [{"question": "What is the quick ratio of Northwind for fiscal 2023?",
                                       "answer": p.asked[-1]["history"][0]["answer"]}]
    assert "1.25" in p.asked[-1]["history"][0]["answer"]
    turns = page.locator("#turns li").all_inner_texts()
    assert len(turns) == 1 and "Northwind" in turns[0] and "1.25" in turns[0]
    assert "Conversation (1 earlier turn)" in page.locator("#conversation-title").inner_text()

    # the block's first citation: the HTML table as a table, its row, cell and period lit, in view in its box
    link = page.locator("#answer-block a.cite").first
    assert link.inner_text() == "contoso#0004 line 28"
    p.open_section(link)
    assert page.locator("#section-lines table.src-table").count() == 1
    shown = page.locator("#section-lines").inner_text()
    assert "<td>" not in shown and "<tr>" not in shown and "Cash and cash equivalents" in shown
    assert p.lit(".src-table tr.hl") == ["28"]
    cell = page.locator("#section-lines .hl-cell")
    assert cell.inner_text() == "$1,150"
    assert page.locator("#section-lines .hl-head").all_inner_texts() == ["December 31, 2023"]
    box = page.locator("#section-lines").bounding_box()
    c = cell.bounding_box()
    assert box["y"] <= c["y"] and c["y"] + c["height"] <= box["y"] + box["height"] + 1, (box, c)
    page.screenshot(path=str(screenshots / "serve_page_table.png"), full_page=True)

    # the cited section (a link built from the cited sections): every cited row lit
    p.open_section(page.locator("#citations a.cite", has_text="Consolidated Balance Sheets"))
    assert p.lit(".src-table tr.hl") == ["28", "33", "38", "61"]
    assert page.locator("#section-lines .hl-cell").all_inner_texts() == ["$1,150", "250", "600", "2,500"]

    # New conversation forgets it: the next follow-up has nothing to follow
    page.get_by_role("button", name="New conversation").click()
    assert page.locator("#conversation").is_hidden() and page.locator("#answer-block").is_hidden()
    assert page.evaluate("() => document.activeElement.id") == "question"
    p.ask("And Contoso?")
    assert "history" not in p.asked[-1] and "0.80: quick ratio" not in page.locator("#answer-block").inner_text()


@pytest.mark.parametrize("width, height", [(390, 844), (360, 740)])
def test_a_phone_screen_has_no_horizontal_scroll(browser, server, deadline, screenshots, width, height):
    url, _ = server
    p = Page(browser, url, deadline, width=width, height=height)
    page = p.page
    try:
        assert page.evaluate(_OVERFLOW) == 0
        question = page.get_by_label("Question").bounding_box()
        assert question["x"] >= 0 and question["x"] + question["width"] <= width
        p.ask("What is the quick ratio of Contoso for fiscal 2023?")
        p.open_section(page.locator("#answer-block a.cite").first)
        assert page.evaluate(_OVERFLOW) == 0  # the wide table scrolls inside its own box
        # the documents fit the screen: no scroll inside their box either, every Remove button on the screen
        assert page.evaluate("() => { const b = document.getElementById('documents-box'); "
                             "return b.scrollWidth - b.clientWidth; }") == 0
        for name in DOCS:
            b = page.get_by_role("button", name=f"Remove {name}").bounding_box()
            assert 0 <= b["x"] and b["x"] + b["width"] <= width, (name, b)
        assert page.evaluate(_OVERFLOW) == 0
        page.screenshot(path=str(screenshots / f"serve_page_{width}.png"), full_page=True)
    finally:
        p.close()


def test_the_upload_estimate_counts_down_then_says_it_is_over(tab):
    # jobLine (app.js) turns a job into the status line: the server's estimate (from its measured rates) is counted
    # down on the page's clock; once it has run out (the server keeps saying 0.5 s), the time so far is shown
    lines = tab.page.evaluate("""() => {
      const job = (eta) => ({name: "x", stage: "indexing", state: "running", eta_seconds: eta, pages_total: null});
      const clock = {began: performance.now() - 7000, end: null};
      const out = [jobLine(job(9.2), clock)];
      clock.end -= 5000;  // five seconds later, the server saying the same
      out.push(jobLine(job(4.2), clock));
      clock.end -= 5000;  // past the estimate: the server says 0.5 s from now on
      out.push(jobLine(job(0.5), clock));
      return out;
    }""")
    assert lines == ["x: indexing, about 10 s left", "x: indexing, about 5 s left",
                     "x: indexing, longer than estimated: 7 s so far"]


def test_tables_are_read_from_their_source_lines(tab):
    # section.js on hand-written tables: an HTML table's rows keep their source lines (a row over several lines,
    # a cell split over two), entities are decoded, colspans placed, tags never shown; a pipe table keeps an
    # escaped pipe inside a cell. The cited row's cell is the one whose figure the answer states first.
    got = tab.page.evaluate("""() => {
      const L = (first, texts) => texts.map((text, i) => ({line: first + i, text}));
      const html = L(10, ["<table><thead><tr><th></th><th>FY&nbsp;2023</th><th>FY 2022</th></tr></thead>",
                          "<tbody><tr><td colspan='3'>**Assets**</td></tr>",
                          "<tr>", "<td>Cash &amp; equivalents</td><td>$1,150</td>", "<td>$980</td>", "</tr>",
                          "<tr><td>Debt<br/>(long-term)</td><td>(2,500)</td><td>2,300", "</td></tr></tbody></table>",
                          "After the table."]);
      const md = L(30, ["| Item | 2023 |", "| --- | ---: |", "| Cash \\\\| bank | 42 |"]);
      const segs = segments([...html, ...md]);
      const rows = htmlRows(segs[0].lines);
      const nodes = sectionNodes({lines: html, pages: []}, [[13, 13]], figures("Cash was $1,150 (980)."));
      const holder = document.createElement("div");
      holder.append(...nodes);
      return {
        kinds: segs.map((s) => s.kind + ":" + s.lines[0].line + "-" + s.lines[s.lines.length - 1].line),
        rows: rows.map((r) => [r.start, r.end, r.head,
                               r.cells.map((c) => c.text + (c.colspan > 1 ? "/" + c.colspan : ""))]),
        md: mdRows(segs[2].lines).map((r) => r.cells.map((c) => c.text)),
        lit: [...holder.querySelectorAll("tr.hl")].map((r) => r.dataset.line),
        cell: [...holder.querySelectorAll(".hl-cell")].map((c) => c.textContent),
        head: [...holder.querySelectorAll(".hl-head")].map((c) => c.textContent),
        shown: holder.textContent.includes("<"),
      };
    }""")
    assert got["kinds"] == ["html:10-17", "line:18-18", "md:30-32"]
    assert got["rows"] == [[10, 10, True, ["", "FY 2023", "FY 2022"]], [11, 11, False, ["Assets/3"]],
                           [12, 15, False, ["Cash & equivalents", "$1,150", "$980"]],
                           [16, 17, False, ["Debt (long-term)", "(2,500)", "2,300"]]]
    assert got["md"] == [["Item", "2023"], ["Cash | bank", "42"]]
    assert got["lit"] == ["12"] and got["cell"] == ["$1,150"] and got["head"] == ["FY 2023"]
    assert got["shown"] is False


def test_references_in_the_text_resolve_against_the_answers_sections(tab):
    # renderText (app.js): ppkit's own reference forms become links to the sections the answer's data names; two
    # documents with the same node id are told apart by the line's range or the breadcrumb written before the id
    links = tab.page.evaluate("""() => {
      state.answer = {block: null, cited: [], refs: [], docs: new Set(), sections: [
        {doc: "north", node_id: "0005", line_start: 1, line_end: 10, breadcrumb: "north > Balance"},
        {doc: "south", node_id: "0005", line_start: 20, line_end: 30, breadcrumb: "south > Balance"}],
        text: ["Found: 7 (south#0005 line 21).", "- cash, 2023: 7, row \\"Cash\\", line 25 (ID: 0005)",
               "From south > … > Balance (lines 20-30):", "  - line 22: | Cash | 7 |", "",
               "Sources:", "- north > … > Balance (ID: 0005)", "- south > … > Balance (ID: 0005)",
               "- elsewhere (ID: 0999)"].join("\\n")};
      renderText();
      const shown = document.getElementById("answer-text");
      return [[...shown.querySelectorAll("a.cite")].map((a) => [a.textContent, a.dataset.doc]),
              state.answer.refs.map((r) => r.lines), shown.textContent.includes("elsewhere (ID: 0999)")];
    }""")
    assert links[0] == [["south#0005 line 21", "south"], ["line 25 (ID: 0005)", "south"], ["line 22", "south"],
                        ["(ID: 0005)", "north"], ["(ID: 0005)", "south"]]
    assert links[1] == [[21, 21], [25, 25], [22, 22], None, None]
    assert links[2] is True  # an id no section of the answer has stays text


def test_upload_says_what_the_document_is_and_the_filter_selects_it(tab, server, screenshots):
    """Issue 47: the upload's company, period and form, prefilled from the file (its cover; the company from its
    name) and corrected by hand, are what the documents table shows and what the filters select; the Edit button
    changes them."""
    _, tmp = server
    p, page = tab, tab.page
    report = tmp / "QUARRY_2024_10K.md"
    report.write_text("# Quarry Lane Outfitters\n\nFORM 10-K\n\nFor the fiscal year ended December 31, 2024\n\n"
                      "Quarry Lane Outfitters sells hiking boots and tents.\n\n"
                      "## Results\n\n| Line item | 2024 | 2023 |\n| --- | --- | --- |\n| Net sales | 4,120 | 3,870 |\n",
                      encoding="utf-8")
    page.set_input_files("#upload-file", str(report))
    page.wait_for_function("() => document.getElementById('upload-period').value === 'FY2024'", timeout=p.wait(20))
    assert page.locator("#upload-form-type").input_value() == "10-K"  # both from the cover (a period never from a name)
    assert page.locator("#upload-company").input_value() == "QUARRY"  # from the file's name: corrected by hand
    page.locator("#upload-company").fill("Quarry Lane Outfitters")
    page.get_by_role("button", name="Upload").click()
    page.wait_for_function("() => /indexed|failed/.test(document.getElementById('upload-status').textContent)",
                           timeout=p.wait(90))
    assert page.locator("#upload-status").inner_text() == "QUARRY_2024_10K: indexed"
    assert [page.locator(f"#upload-{k}").input_value() for k in ("company", "period", "form-type")] == ["", "", ""]
    page.wait_for_function("() => document.querySelectorAll('#documents tbody tr').length === 5", timeout=p.wait(10))
    page.locator("#filter-company").select_option("Quarry Lane Outfitters")
    page.locator("#filter-period").select_option("FY2024")
    assert p.rows() == ["QUARRY_2024_10K"]
    p.ask("What were the net sales in 2024?", enter=False)
    assert {t.split(" >")[0] for t in page.locator("#breadcrumbs li").all_inner_texts()} == {"QUARRY_2024_10K"}

    # the Edit button: globex said to be another company and period; the period filter follows
    page.locator("#filter-company").select_option("")
    page.locator("#filter-period").select_option("")
    page.get_by_role("button", name="Edit globex").click()
    page.locator("#edit-company").fill("Globex Corporation")
    page.locator("#edit-period").fill("FY2023")
    page.locator("#edit-form-type").fill("10-K")
    page.get_by_role("button", name="Save").click()
    page.wait_for_function("() => /Saved|Not saved/.test(document.getElementById('upload-status').textContent)",
                           timeout=p.wait(30))
    assert page.locator("#upload-status").inner_text() == "Saved what globex is."
    page.wait_for_function("() => [...document.getElementById('filter-period').options]"
                           ".some(o => o.value === 'FY2023')", timeout=p.wait(10))
    page.locator("#filter-period").select_option("FY2023")
    assert p.rows() == ["globex"]
    row = page.locator("#documents tbody tr[data-doc='globex'] td").all_inner_texts()
    assert row[1:4] == ["Globex Corporation", "FY2023", "10-K"]
    page.screenshot(path=str(screenshots / "serve_page_describe.png"), full_page=True)

    # as they were: globex's fields cleared again (read from the document: none), the upload removed
    page.locator("#filter-period").select_option("")
    page.get_by_role("button", name="Edit globex").click()
    for k in ("company", "period", "form-type"):
        page.locator(f"#edit-{k}").fill("")
    page.get_by_role("button", name="Save").click()
    page.wait_for_function("() => document.querySelector(\"#documents tr[data-doc='globex'] td[data-label=Company]\")"
                           ".textContent === ''", timeout=p.wait(30))
    page.once("dialog", lambda d: d.accept())
    page.get_by_role("button", name="Remove QUARRY_2024_10K").click()
    page.wait_for_function("() => document.querySelectorAll('#documents tbody tr').length === 4", timeout=p.wait(20))
    assert p.rows() == list(DOCS)
