"""No dollar amount in a notebook is typeset as math: each notebook is run and read the way JupyterLab shows it.

JupyterLab hands every Markdown cell, every ``text/markdown`` and ``text/html`` output, and the
text of some widgets (an ``HTMLMath`` value, a ``Label``, a description) to MathJax, which pairs
``$`` signs into italic math: "$4.6 billion ... $246 million" in a 10-K's text loses its dollars
and its spaces. ``tests/jupyter_math.py`` ports the rules JupyterLab 4.6 uses; a math span whose
opening ``$`` is followed by a figure came from money, and fails the test with the cell it is in.

The static Markdown cells are read without running anything (quick); the outputs need each notebook
run (nbclient, the notebook's own ``metadata.execution.timeout``, the widget state stored), which is
why that test is marked ``corpus`` and ``model`` like the notebooks themselves. Run one notebook with
``pytest tests/test_notebook_math.py -k 02_skeleton``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jupyter_math import from_currency, html_math, markdown_math, text_math

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def currency_math(nb: dict) -> list[str]:
    """Where the notebook ``nb`` (its JSON, outputs and widget state included) shows money as math."""
    found = []

    def check(where: str, spans: list[str]) -> None:
        found.extend(f"{where}: {s[:100]!r}" for s in spans if from_currency(s))

    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "markdown":
            check(f"cell {i} (Markdown)", markdown_math(_text(cell["source"])))
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "text/html" in data:
                check(f"cell {i} (HTML output)", html_math(_text(data["text/html"])))
            elif "text/markdown" in data:
                check(f"cell {i} (Markdown output)", markdown_math(_text(data["text/markdown"])))
    state = nb.get("metadata", {}).get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    for model_id, model in state.get("state", {}).items():
        st, name = model.get("state", {}), model.get("model_name", "")
        where = f"widget {name} {model_id[:8]}"
        if name == "HTMLMathModel":
            check(where, html_math(_text(st.get("value"))))
        if name == "LabelModel":
            check(where, text_math(_text(st.get("value"))))
        if st.get("description"):
            desc = _text(st["description"])
            check(where + " description", html_math(desc) if st.get("description_allow_html") else text_math(desc))
    return found


def test_the_checker_finds_money_typeset_in_each_place_jupyterlab_typesets():
    amounts = "up from $3.1 million to $12 million"
    nb = {"cells": [{"cell_type": "markdown", "source": [amounts]},
                    {"cell_type": "code", "source": "", "outputs": [
                        {"output_type": "display_data", "data": {"text/html": f"<p>{amounts}</p>"}},
                        {"output_type": "display_data", "data": {"text/markdown": amounts, "text/html": "<p>x</p>"}},
                        {"output_type": "display_data", "data": {"text/markdown": f"`{amounts}`"}}]}],
          "metadata": {"widgets": {"application/vnd.jupyter.widget-state+json": {"state": {
              "a1": {"model_name": "LabelModel", "state": {"value": amounts}},
              "b2": {"model_name": "HTMLModel", "state": {"value": amounts}},  # an HTML widget is not typeset
              "c3": {"model_name": "IntSliderModel", "state": {"description": amounts}}}}}}}
    where = [f.split(":")[0] for f in currency_math(nb)]
    # the output holding both HTML and Markdown is shown as HTML, as JupyterLab prefers it
    assert where == ["cell 0 (Markdown)", "cell 1 (HTML output)", "widget LabelModel a1",
                     "widget IntSliderModel c3 description"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_markdown_cells_show_money_as_money(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert currency_math({"cells": [c for c in nb["cells"] if c["cell_type"] == "markdown"]}) == []


@pytest.mark.corpus
@pytest.mark.model
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_executed_outputs_show_money_as_money(path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(path, as_version=4)
    timeout = nb.metadata.get("execution", {}).get("timeout", 600)
    nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=True,
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    found = currency_math(json.loads(nbformat.writes(nb)))
    assert found == [], f"{path.name} shows dollar amounts as math:\n" + "\n".join(found)
