"""ppkit.bench.views.plots: figures come back closed (the caller shows them once) with the plotted data."""

from __future__ import annotations

import pytest

from ppkit.bench.views.plots import plot_reference_vs_ppkit, plot_retrieval

plt = pytest.importorskip("matplotlib.pyplot")

RESULT = {"benchmark": "toy", "n": 2,
          "modes": {"auto": {"3": {"hit": 0.5, "recall": 0.25, "context_chars_mean": 100.0},
                             "5": {"hit": 1.0, "recall": 0.5, "context_chars_mean": 200.0}}},
          "baselines": {"auto": {"blind": {"5": {"hit": 0.5, "recall": 0.5, "context_chars_mean": 150.0}}}}}


def test_plot_retrieval_returns_rows_and_a_closed_figure():
    rows, fig = plot_retrieval(RESULT)
    assert [(r["system"], r["k"], r["hit"]) for r in rows] == [
        ("ppkit (auto filter)", "3", 0.5), ("ppkit (auto filter)", "5", 1.0), ("blind", "5", 0.5)]
    assert fig.number not in plt.get_fignums()
    assert len(fig.axes) == 2


def test_plot_reference_vs_ppkit_returns_means_and_a_closed_figure():
    rows = [{"qid": "a", "reference_k3": 0.0, "reference_k5": 1.0, "ppkit_k3": 0.5, "ppkit_k5": 1.0},
            {"qid": "b", "reference_k3": 1.0, "reference_k5": 1.0, "ppkit_k3": None, "ppkit_k5": 0.0}]
    means, fig = plot_reference_vs_ppkit(rows)
    assert means == {"reference_k3": 0.5, "reference_k5": 1.0, "ppkit_k3": 0.5, "ppkit_k5": 0.5}
    assert fig.number not in plt.get_fignums()
