"""The notebooks in JupyterLab, used the way a researcher uses them, in headless Chromium.

Each test opens a copy of a notebook, runs all its cells, then drives its widgets with the
mouse and keyboard and checks what the page shows (not the Python state): 00's own-documents
cells (the reference index opened, the cited answer's block first, a follow-up about a company
not indexed gets a note); 05's query
explorer (type a question, press Enter, move k, change the document filter: the chosen
breadcrumbs change; rows are not doubled in height and text does not wrap mid-word; the cues for
an unknown company, a filter against the question and a nonsense question; the cited-answer
widget), 02's tree browser (click a node: its text appears; the arrow keys move the selection
and not the notebook's cells; long rows scroll sideways; the search box selects a heading and
scrolls it into view; the text is rendered, tables as tables), 07's answers (the Figure 5
question shows its figure and no "Not found";  every image loads, a figure is
shown once, the image grid is readable, the benchmark table shows its image columns, labels carry no
private-use glyphs, Enter in the answer box asks and the answer is formatted), 10's comparison (lines join
paired sections under a score legend, the sections with no counterpart listed first; a pair clicked shows
both texts side by side, differences marked, and at 1280 px no column is cut off: each fits its output or
sits in a box that scrolls sideways), 06's k control (a click on 10 reruns the comparison and changes the
table), and no dollar amount typeset as math in 02 and 06 (MathJax is shown live by a control cell added to
the page, then no other ``mjx-container`` may exist). Screenshots go to ``.ppkit/screenshots/`` (git-ignored).

Run: ``pytest tests/browser -m browser`` (needs Chromium: ``apt-get install chromium``).
"""

from __future__ import annotations

import re
from pathlib import Path
import time

import pytest

import ppkit
from ppkit.core import data
from ppkit.documents.tree import read_lines
from ppkit.ui.widgets import TreeView

# the notebooks read the reference corpora through the real model: out of the quick "not corpus and not model" run
pytestmark = [pytest.mark.browser, pytest.mark.corpus, pytest.mark.model]

_PRIVATE_USE = re.compile("[\ue000-\uf8ff]")

# the notebook's kernel is idle and every code cell has run (or one failed: its error is returned)
_RUN_STATE = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const cells = panel.content.widgets.filter((c) => c.model.type === "code");
  for (const c of cells) {
    const err = c.model.outputs.toJSON().find((o) => o.output_type === "error");
    if (err) return "error: " + err.ename + ": " + err.evalue + "\\n" + err.traceback.join("\\n");
  }
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  if (!kernel || kernel.status !== "idle") return null;
  return cells.every((c) => c.model.executionCount !== null) ? "done" : null;
}"""

_KERNEL_IDLE = """() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const s = panel && panel.sessionContext && panel.sessionContext.session;
  return !!(s && s.kernel && s.kernel.status === "idle" && panel.content.widgets.length);
}"""


def _poll(fn, deadline, cap: float, what: str):
    """Call ``fn`` every 0.25 s until it returns something truthy (at most ``cap`` seconds)."""
    end = time.monotonic() + deadline.left(cap)
    last = None
    while time.monotonic() < end:
        last = fn()
        if last:
            return last
        time.sleep(0.25)
    pytest.fail(f"timed out after {cap:.0f} s waiting for {what} (last value: {last!r})")


def _run_notebook(browser, lab, name: str, deadline, errors: list[str]):
    """A page with notebook ``name`` open and all its cells run."""
    page = browser.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(lab.url(name), timeout=deadline.left(60) * 1000)
    page.wait_for_function(_KERNEL_IDLE, timeout=deadline.left(120) * 1000, polling=250)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    state = _poll(lambda: page.evaluate(_RUN_STATE), deadline, 600, f"{name} to run")
    assert state == "done", f"{name}: a cell failed:\n{state}"
    return page


def _cell(page, i: int):
    return page.locator(".jp-Notebook .jp-Cell").nth(i)


def _cell_with(notebook: str, needle: str) -> int:
    """The index of the first cell of ``notebook`` whose source holds ``needle`` (cells move as notebooks grow)."""
    import json

    path = Path(__file__).resolve().parents[2] / "notebooks" / notebook
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return next(i for i, c in enumerate(cells) if needle in "".join(c["source"]))


def _active_cell(page) -> int:
    return page.evaluate("() => window.jupyterapp.shell.currentWidget.content.activeCellIndex")


@pytest.fixture
def errors():
    """JavaScript errors of the page: none may happen."""
    out: list[str] = []
    yield out
    assert out == [], f"JavaScript errors in the page: {out}"


def _no_math_but_a_control(page, deadline) -> str:
    """Add a Markdown cell holding real math at the end of the open notebook and wait until MathJax has set
    it (so the typesetter is live and has read the outputs rendered before it); returns the text of every
    other ``mjx-container`` of the notebook (what MathJax made of dollar signs)."""
    page.evaluate("""() => {
      const nb = window.jupyterapp.shell.currentWidget.content;
      nb.model.sharedModel.insertCell(nb.widgets.length, {cell_type: 'markdown', source: 'control: $x^2 + y$'});
      nb.widgets[nb.widgets.length - 1].rendered = true;
    }""")
    control = page.locator(".jp-Notebook .jp-Cell").last
    _poll(lambda: control.locator("mjx-container").count() == 1, deadline, 60, "MathJax to set the control cell")
    return page.evaluate("""() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].slice(0, -1)
        .flatMap(c => [...c.querySelectorAll('mjx-container')].map(m => m.textContent)).join(' | ')""")


def _n_cells(notebook: str) -> int:
    import json

    path = Path(__file__).resolve().parents[2] / "notebooks" / notebook
    return len(json.loads(path.read_text(encoding="utf-8"))["cells"])


def test_00_start_here(browser, lab, deadline, screenshots, errors):
    page = _run_notebook(browser, lab, "00_start_here.ipynb", deadline, errors)
    try:
        first = _cell(page, _cell_with("00_start_here.ipynb", "index_folder(FOLDER)"))
        assert "4 documents from the reference 10-Ks" in first.inner_text() and "cached" in first.inner_text()
        cell = _cell(page, _cell_with("00_start_here.ipynb", "CitedAnswer(index"))
        widget = cell.locator(".jupyter-widgets").first
        block = widget.locator(".ppkit-answer-block")
        assert block.count() == 1 and "1.57" in block.inner_text() and "quick ratio" in block.inner_text()
        text = widget.inner_text()
        # the answer block first, then the computed figure, the verification, the evidence
        order = [text.index(w) for w in ("Answer", "Computed figure", "Verification", "Evidence", "Sections retrieved")]
        assert order == sorted(order), order
        assert "[verified]" in text and "AMD#0089" in text
        box = widget.locator(".widget-text input[type='text']").first
        box.fill("What was Tesla's revenue in FY2022?")
        box.press("Enter")
        _poll(lambda: "asked: What was Tesla" in widget.inner_text(), deadline, 60, "Enter to ask about Tesla")
        cues = widget.locator(".ppkit-cues")
        assert cues.count() == 1 and "'Tesla' is not a document or company of this index" in cues.inner_text()
        assert "Conversation (1 turn)" in widget.inner_text()  # the first question, listed under the answer
        cell.screenshot(path=str(screenshots / "00_cited_answer.png"))
    finally:
        page.close()
        lab.shutdown_kernels()


def test_05_query_explorer(browser, lab, deadline, screenshots, errors):
    page = _run_notebook(browser, lab, "05_two_stage_retrieval.ipynb", deadline, errors)
    try:
        cell = _cell(page, 3)  # QueryExplorer(index, "For PepsiCo, ...", k=5), then its static summary
        chosen = cell.locator(".widget-html-content tr[style*='font-weight:bold'] td:nth-child(3)")
        assert len(chosen.all_inner_texts()) == 5
        assert all(b.startswith("PepsiCo >") for b in chosen.all_inner_texts())

        # rows are not doubled by the widgets' 28px line height, and the section text wraps at spaces
        rows = cell.locator(".widget-html-content table tbody tr")
        assert rows.first.evaluate("r => getComputedStyle(r.cells[2]).lineHeight") == "16.8px"  # 12px * 1.4
        heights = sorted(rows.evaluate_all("rows => rows.map(r => r.getBoundingClientRect().height)"))
        assert len(heights) >= 50 and heights[len(heights) // 2] < 24, heights  # one line: about 21px
        pre = cell.locator(".widget-html-content pre").first
        assert pre.evaluate("e => getComputedStyle(e).wordBreak") == "normal"
        shown = cell.locator(".widget-html-content table").first.evaluate(
            """t => { const box = t.closest('.widget-html').getBoundingClientRect();
                      return [...t.querySelectorAll('tbody tr')].filter(
                          r => r.getBoundingClientRect().bottom <= box.bottom + 1).length; }""")
        assert shown >= 10, f"only {shown} candidate rows visible in the explorer's box"

        # a new question: type it and press Enter
        question = cell.locator(".widget-text input[type='text']").first
        question.fill("For AMD, what is the quick ratio for FY2022?")
        question.press("Enter")
        # a document's own root section (its cover, breadcrumb "AMD") is a section too since short bodies are chunked
        _poll(lambda: all((b + " >").startswith("AMD >") for b in chosen.all_inner_texts()) and chosen.count() == 5,
              deadline, 60, "the AMD sections to be chosen")
        amd_top5 = chosen.all_inner_texts()
        assert "quick ratio" in cell.locator(".widget-html-content").first.inner_text()

        # move k from 5 to 3 with the keyboard
        handle = cell.locator(".noUi-handle").first
        handle.focus()
        handle.press("ArrowLeft")
        handle.press("ArrowLeft")
        _poll(lambda: chosen.count() == 3, deadline, 30, "k = 3 to leave three chosen rows")
        assert chosen.all_inner_texts() == amd_top5[:3]

        # the document filter: Boeing only, although the question names AMD
        cell.locator(".widget-dropdown select").first.select_option(label="Boeing")
        _poll(lambda: chosen.count() == 3 and all((b + " >").startswith("Boeing >") for b in chosen.all_inner_texts()),
              deadline, 60, "the Boeing filter to change the chosen sections")
        assert "document filter: Boeing (chosen in the filter)" in cell.inner_text()
        # the static summary under the widget still shows the state the cell ran with
        assert "PepsiCo >" in cell.locator(".jp-RenderedHTML").first.inner_text()
        assert "The question names AMD, but the document filter is set to Boeing" in cell.inner_text()  # its cue
        cell.locator(".jupyter-widgets").first.screenshot(path=str(screenshots / "05_query_explorer.png"))

        # the cues printed for an unknown company, a filter against the question and a nonsense question
        cues = _cell(page, _cell_with("05_two_stage_retrieval.ipynb", "for cue in probe.cues()")).inner_text()
        assert "'Tesla' is not a document or company of this index" in cues
        assert "but the document filter is set to Boeing" in cues and "No good match" in cues
        # the cited answer for the explorer's question: its block first, with the computed reinvestment rate
        answer = _cell(page, _cell_with("05_two_stage_retrieval.ipynb", "CitedAnswer(index, explorer.query.value"))
        block = answer.locator(".jupyter-widgets .ppkit-answer-block")
        assert block.count() == 1 and "PepsiCo" in block.inner_text()
        answer.screenshot(path=str(screenshots / "05_cited_answer.png"))
    finally:
        page.close()
        lab.shutdown_kernels()


def test_02_tree_browser(browser, lab, deadline, screenshots, errors):
    amd = ppkit.build_tree(data.data_dir() / "10k" / "AMD.md")
    view = TreeView(amd)
    view.select("0066")  # the notebook's state: its visible rows are the page's rows
    rows = view.visible()
    first = next(nid for nid in rows[1:] if amd[nid].children)  # a closed node with children
    child = amd[first].children[0]

    page = _run_notebook(browser, lab, "02_skeleton_tree.ipynb", deadline, errors)
    try:
        cell = _cell(page, 5)
        box = cell.locator(".ppkit-node-list")
        shown = cell.locator(".widget-html-content b").first  # the breadcrumb of the node shown
        assert box.locator("[role=option]").count() == len(rows)
        assert shown.inner_text() == amd["0066"].breadcrumb

        def showing(node_id):
            return lambda: shown.inner_text() == amd[node_id].breadcrumb

        # select a node with the mouse: its text appears
        box.locator(f"[role=option][data-value='{first}']").click()
        _poll(showing(first), deadline, 30, f"node {first}'s text")
        active = _active_cell(page)

        # the arrow keys act on the list, not on the notebook's cells: -> opens, down/up move, <- closes
        page.keyboard.press("ArrowRight")
        _poll(lambda: box.locator(f"[role=option][data-value='{child}']").count() == 1, deadline, 30,
              f"ArrowRight to open {first}")
        page.keyboard.press("ArrowDown")
        _poll(showing(child), deadline, 30, f"ArrowDown to select {child}")
        assert box.locator("[aria-selected=true]").get_attribute("data-value") == child
        page.keyboard.press("ArrowUp")
        _poll(showing(first), deadline, 30, f"ArrowUp to select {first}")
        page.keyboard.press("ArrowLeft")
        _poll(lambda: box.locator(f"[role=option][data-value='{child}']").count() == 0, deadline, 30,
              f"ArrowLeft to close {first}")
        assert _active_cell(page) == active and \
            page.locator(".jp-Notebook .jp-Cell").count() == _n_cells("02_skeleton_tree.ipynb")

        # long rows keep their text on one line and the list scrolls sideways
        widths = box.evaluate("b => [b.scrollWidth, b.clientWidth]")
        assert widths[0] > widths[1], widths
        assert box.evaluate("b => { b.scrollLeft = 200; return b.scrollLeft; }") > 0
        box.evaluate("b => { b.scrollLeft = 0; }")

        # the search box: a heading far down the tree is selected, shown and scrolled into view
        titles = [n.title.casefold() for n in amd]
        target = next(n for n in reversed(list(amd)) if n.depth >= 2 and len(n.title) > 8
                      and sum(n.title.casefold() in t for t in titles) == 1)
        search = cell.locator(".widget-text input[type='text']").first
        search.fill(target.title)
        search.press("Enter")
        _poll(showing(target.node_id), deadline, 30, f"the search to select {target.node_id}")
        row = box.locator("[aria-selected=true]")
        _poll(lambda: row.evaluate("""r => { const b = r.closest('.ppkit-node-list').getBoundingClientRect();
                                            const x = r.getBoundingClientRect();
                                            return x.top >= b.top - 1 && x.bottom <= b.bottom + 1; }"""),
              deadline, 10, "the selected row to be scrolled into view")
        assert "1 of 1" in cell.inner_text()
        # the node's text is rendered (no raw Markdown table pipes or HTML tags), tables as tables
        with_table = view.find("Consolidated Balance Sheets")  # the same search in Python: a node with a table
        assert "<table" in amd.text(with_table, read_lines(amd.source))
        search.fill("Consolidated Balance Sheets")
        search.press("Enter")
        _poll(showing(with_table), deadline, 30, f"the search to select {with_table}")
        text = cell.locator(".ppkit-node-text").first
        _poll(lambda: text.locator("table").count() >= 1, deadline, 30, "the balance sheet's table to render")
        assert "<td" not in text.inner_text() and "<table" not in text.inner_text()
        cell.locator(".jupyter-widgets").first.screenshot(path=str(screenshots / "02_tree_browser.png"))
    finally:
        page.close()
        lab.shutdown_kernels()


def test_02_money_is_not_typeset_as_math(browser, lab, deadline, screenshots, errors):
    page = _run_notebook(browser, lab, "02_skeleton_tree.ipynb", deadline, errors)
    try:
        summary = _cell(page, _cell_with("02_skeleton_tree.ipynb", "summary_html()")).locator(".jp-RenderedHTML").first
        # AMD's "Embedded" section, shown selected in the static tree: its amounts read as written
        assert "Embedded net revenue of $4.6 billion in 2022" in summary.inner_text()
        assert _no_math_but_a_control(page, deadline) == ""
    finally:
        page.close()
        lab.shutdown_kernels()


def test_06_k_control_reruns_the_comparison(browser, lab, deadline, screenshots, errors):
    page = _run_notebook(browser, lab, "06_k3_vs_k5_failure_analysis.ipynb", deadline, errors)
    try:
        cell = _cell(page, _cell_with("06_k3_vs_k5_failure_analysis.ipynb", "KComparison(index"))
        widget = cell.locator(".jupyter-widgets").first
        table = widget.locator(".widget-html-content").first
        assert "ppkit k=3 sends it" in table.inner_text() and "All 40 questions at k=3" in table.inner_text()
        at3 = table.inner_text()
        widget.locator(".widget-toggle-button", has_text="10").click()
        _poll(lambda: "ppkit k=10 sends it" in table.inner_text(), deadline, 120, "k=10 to rerun the comparison")
        at10 = table.inner_text()
        assert "All 40 questions at k=10" in at10 and "ppkit k=3" not in at10 and at10 != at3
        sent = [int(m.replace(",", "")) for m in re.findall(r"([\d,]+) characters sent", at10)]
        sent3 = [int(m.replace(",", "")) for m in re.findall(r"([\d,]+) characters sent", at3)]
        assert len(sent) == len(sent3) == 3 and all(a > b for a, b in zip(sent, sent3))  # ten sections, not three
        widget.screenshot(path=str(screenshots / "06_k_control.png"))
        # the metric table's ground truth keeps its dollar sign; nothing in the notebook is set as math
        metric = _cell(page, _cell_with("06_k3_vs_k5_failure_analysis.ipynb", "run_metric_bench(index"))
        assert "truth $9068.00" in metric.inner_text()
        assert _no_math_but_a_control(page, deadline) == ""
    finally:
        page.close()
        lab.shutdown_kernels()


def test_07_multimodal_answers(browser, lab, deadline, screenshots, errors):
    page = _run_notebook(browser, lab, "07_multimodal_answers.ipynb", deadline, errors)
    try:
        # every image on the page has loaded
        images = page.locator(".jp-OutputArea-output img")
        _poll(lambda: images.evaluate_all("ims => ims.length > 0 && ims.every(i => i.complete)"), deadline, 30,
              "the images to load")
        sizes = images.evaluate_all("ims => ims.map(i => i.naturalWidth)")
        assert len(sizes) >= 4 and all(w > 0 for w in sizes), sizes
        # the image grid is shown once (the cell returns the figure; pyplot does not draw it again), at a
        # readable size (1,000 pixels wide before the inline backend trims its margins)
        grid = _cell(page, 8).locator(".jp-OutputArea-output img")
        assert grid.count() == 1 and grid.first.evaluate("i => i.naturalWidth") >= 900
        # the benchmark table shows the image columns its text discusses; the rest behind a toggle
        table = _cell(page, _cell_with("07_multimodal_answers.ipynb", "columns_first(scores"))
        shown = table.locator(".jp-RenderedHTML table").first
        heads = shown.locator("th").all_inner_texts()
        assert "image_hit" in heads and "image_precision" in heads and "..." not in shown.inner_text()
        toggle = table.locator("details")
        assert toggle.count() == 1 and re.match(r"all \d+ columns \(also ", toggle.locator("summary").inner_text())
        # labels without private-use glyphs (formula captions)
        assert not _PRIVATE_USE.search(_cell(page, 4).inner_text())
        assert not any(_PRIVATE_USE.search(t) for t in _cell(page, 6).locator("strong").all_inner_texts())

        # the Figure 5 question: its caption as the answer, the figure shown, no "Not found"
        fig5 = _cell(page, _cell_with("07_multimodal_answers.ipynb", "What does Figure 5 of VectorPainter show?"))
        assert "Not found" not in fig5.inner_text() and "Fig. 5" in fig5.inner_text()
        fig5_images = fig5.locator(".jp-OutputArea-output img")
        assert fig5_images.count() >= 1
        assert all(w > 0 for w in fig5_images.evaluate_all("ims => ims.map(i => i.naturalWidth)"))
        empty = page.locator(".jp-Notebook li").evaluate_all(  # no quoted line left empty by an image link
            "lis => lis.filter(li => /^\\s*line \\d+(-\\d+)?:\\s*$/.test(li.innerText)).length")
        assert empty == 0
        fig5.screenshot(path=str(screenshots / "07_figure5.png"))

        cell = _cell(page, _cell_with("07_multimodal_answers.ipynb", "answer_widget(index, question="))
        widget = cell.locator(".jupyter-widgets").first
        assert "Nemobot" in widget.inner_text()
        assert widget.locator("pre").count() == 0  # formatted, not a text dump
        assert widget.locator(".widget-html-content li").count() >= 3
        box = widget.locator(".widget-text input[type='text']")
        q = "What are the hyperparameters for fine-tuning RoBERTa with GaLore?"
        box.fill(q)
        box.press("Enter")
        _poll(lambda: f"asked: {q}" in widget.inner_text(), deadline, 60, "Enter to ask the new question")
        assert "Galore" in widget.inner_text() and widget.locator(".widget-html-content li").count() >= 3
        assert widget.locator(".ppkit-answer-block").count() == 1  # the answer block, first
        assert "Sections retrieved" in widget.inner_text()
        widget_images = widget.locator("img")
        _poll(lambda: widget_images.evaluate_all("ims => ims.every(i => i.complete)"), deadline, 30,
              "the widget's images to load")
        assert all(w > 0 for w in widget_images.evaluate_all("ims => ims.map(i => i.naturalWidth)"))
        cell.screenshot(path=str(screenshots / "07_answer_widget.png"))
        _cell(page, 8).screenshot(path=str(screenshots / "07_image_grid.png"))
    finally:
        page.close()
        lab.shutdown_kernels()


# an element is cut off when it reaches past the output area's edges, unless a box of its own HTML (inside its
# widget: the widget's box or the notebook's scrolling far below is no help to a reader) scrolls sideways, holds it
# and is not cut off itself
_CUT_OFF = """([el, area]) => {
  const outside = (e) => {
    const a = area.getBoundingClientRect(), r = e.getBoundingClientRect();
    return r.left < a.left - 1 || r.right > a.right + 1;
  };
  const cut = (e) => {
    for (let p = e.parentElement; p && p !== area && !p.classList.contains("jupyter-widgets"); p = p.parentElement) {
      const ox = getComputedStyle(p).overflowX;
      if ((ox === "auto" || ox === "scroll") && p.scrollWidth > p.clientWidth) return cut(p);
    }
    return outside(e);
  };
  return cut(el);
}"""


def test_10_compare_documents(browser, lab, deadline, screenshots, errors):
    page = _run_notebook(browser, lab, "10_compare_documents.ipynb", deadline, errors)
    try:
        page.set_viewport_size({"width": 1280, "height": 900})  # a laptop's window: the view must fit or scroll
        cell = _cell(page, _cell_with("10_compare_documents.ipynb", "CompareView(index"))
        widget = cell.locator(".jupyter-widgets").first
        assert widget.locator("svg.ppkit-alignment line").count() >= 3  # lines between paired sections
        assert "Score: how sure the alignment is" in widget.locator(".ppkit-legend").inner_text()  # one score, a legend
        assert widget.locator(".ppkit-read-first li").count() >= 2  # no counterpart, both ways
        options = widget.locator(".widget-select select option")  # the list of pairs (not the dropdowns)
        assert options.count() >= 3
        # "2. <A title>  ↔  <B title>  (score 0.87)", spaces shown as no-break spaces
        label = (options.nth(1).text_content() or "").replace("\xa0", " ")
        m = re.match(r"\s*\d+\.\s+(.+?)\s+↔\s+(.+?)\s+\(score \d\.\d\d\)$", label)
        assert m, repr(label)
        a_title, b_title = m.groups()
        assert not re.search(r"exhibit", a_title, re.I)  # the criterion does not ask for exhibits
        options.nth(1).click()  # click a pair: both texts side by side
        heads = widget.locator(".ppkit-side-by-side .ppkit-column > b")
        _poll(lambda: heads.count() == 2 and heads.nth(0).inner_text().endswith(a_title)
              and heads.nth(1).inner_text().endswith(b_title), deadline, 30,
              f"the clicked pair's texts ({a_title} / {b_title})")
        texts = widget.locator(".ppkit-side-by-side pre")
        assert all(len(t) > 100 for t in texts.all_inner_texts())
        assert widget.locator(".ppkit-side-by-side del, .ppkit-side-by-side ins").count() > 0  # differences marked
        area = cell.locator(".jp-OutputArea-output").first.element_handle()
        for sel in (".ppkit-column", "svg.ppkit-alignment", ".ppkit-read-first"):
            for el in widget.locator(sel).element_handles():
                assert not page.evaluate(_CUT_OFF, [el, area]), f"{sel} is cut off at 1280 px"
        widget.screenshot(path=str(screenshots / "10_compare_widget.png"))
    finally:
        page.close()
        lab.shutdown_kernels()
