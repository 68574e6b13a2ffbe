"""The notebooks are committed without outputs and carry their own execution timeout.

Decision: outputs are not committed. A rendered copy goes stale as soon as the package
changes, and stale error outputs mislead; CI executes every notebook with nbmake
(``scripts/test.sh``), which is the check that they work. Each notebook's
``metadata.execution.timeout`` is what nbmake uses as its per-notebook timeout.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert [p.name for p in NOTEBOOKS if p.name[:2] in ("02", "03", "04", "05")] == [
        "02_skeleton_tree.ipynb", "03_noise_filtering.ipynb", "04_chunking_and_indexing.ipynb",
        "05_two_stage_retrieval.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_clean(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    timeout = nb["metadata"].get("execution", {}).get("timeout")
    assert isinstance(timeout, int) and 0 < timeout <= 900, f"{path.name}: set metadata.execution.timeout (<= 900 s)"
    cells = nb["cells"]
    assert cells and cells[0]["cell_type"] == "markdown", f"{path.name}: start with a Markdown statement of what it shows"
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        assert cell.get("outputs") == [], f"{path.name} cell {i}: strip outputs before committing"
        assert cell.get("execution_count") is None, f"{path.name} cell {i}: strip execution counts"
        assert not any(line.lstrip().startswith(("!pip", "%pip", "!conda", "%conda")) for line in source.splitlines()), \
            f"{path.name} cell {i}: no install cells; dependencies belong in pyproject.toml"
