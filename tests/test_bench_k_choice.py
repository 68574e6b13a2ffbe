"""ppkit.bench.views.k_choice: the k control of notebook 06 reruns the comparison at the k chosen."""

import pytest

from bench_support import bench_dir
from ppkit.core.errors import InvalidInput

pytest.importorskip("ipywidgets")


@pytest.mark.corpus
@pytest.mark.model
def test_the_k_control_reruns_the_failures_and_the_scores_at_the_k_chosen():
    import ppkit
    from ppkit.bench.views.k_choice import KComparison

    index = ppkit.reference_index("10k", progress=False)
    view = KComparison(index, bench_dir())  # no baselines: ppkit alone
    shown3, rows3 = view.table.value, view.rows
    assert [len(f["ppkit"]) for f in rows3] == [3, 3, 3] and list(view.result["results"]) == ["3"]
    assert "ppkit k=3 sends it" in shown3 and "All 40 questions at k=3" in shown3

    view.k.value = 10  # what a click on "10" does
    assert [len(f["ppkit"]) for f in view.rows] == [10, 10, 10] and list(view.result["results"]) == ["10"]
    shown10 = view.table.value
    assert "ppkit k=10 sends it" in shown10 and "All 40 questions at k=10" in shown10
    at3, at10 = (r["results"][k] for r, k in ((view._runs[3][1], "3"), (view.result, "10")))
    assert at10["context_chars_mean"] > at3["context_chars_mean"] and at10["recall"] >= at3["recall"]
    for f3, f10 in zip(rows3, view.rows):  # a larger k sends the same top sections and more
        assert [s["section_id"] for s in f10["ppkit"][:3]] == [s["section_id"] for s in f3["ppkit"]]
        assert set(f3["ppkit_covers"]) <= set(f10["ppkit_covers"])

    view.k.value = 3  # back: the k already computed is shown again, not rerun
    assert view.rows is rows3 and view.table.value == shown3 and view.summary_html() == shown3
    with pytest.raises(InvalidInput, match="k=4 is not one of the choices"):
        KComparison(index, bench_dir(), k=4)
