"""ppkit.ui.tables: a wide table shows the columns its text discusses, the rest behind a toggle."""

import pytest
from jupyter_math import html_math

from ppkit.core.errors import InvalidInput
from ppkit.ui.tables import columns_first

pd = pytest.importorskip("pandas")


def _scores():
    cols = {f"measure_{i:02d}": [i / 100, i / 50] for i in range(19)}
    return pd.DataFrame({**cols, "image_hit": [0.61, 0.72], "image_precision": [0.33, 0.44],
                         "note": ["$5 and $6", "-"]}, index=["k=3", "k=5"])


def test_the_named_columns_come_first_and_every_column_sits_behind_the_toggle():
    t = columns_first(_scores(), ["image_hit", "image_precision", "measure_00"])
    assert list(t.shown.columns) == ["image_hit", "image_precision", "measure_00"]
    out = t._repr_html_()
    first, toggle = out.split("<details", 1)
    assert "<th>image_hit</th>" in first and "0.72" in first and "measure_05" not in first
    assert "<summary>all 22 columns (also measure_01, measure_02," in toggle
    assert all(f"<th>{c}</th>" in toggle for c in _scores().columns)  # the whole table, no "..."
    assert "..." not in toggle and html_math(out) == []  # "$5 and $6" stays text
    assert repr(t) == "ColumnsFirst(['image_hit', 'image_precision', 'measure_00'], 22 columns in all)"


def test_no_toggle_when_every_column_is_shown_and_a_clear_error_for_an_unknown_one():
    frame = _scores()[["image_hit", "image_precision"]]
    assert "<details" not in columns_first(frame, ["image_precision", "image_hit"])._repr_html_()
    with pytest.raises(InvalidInput, match="not a column of this table: image_recall; its columns are image_hit"):
        columns_first(frame, ["image_recall"])
