"""The k=3 versus k=5 comparison at a k the reader picks: a control (3 / 5 / 10) that reruns it.

For the chosen k, :class:`KComparison` reruns two things and shows them:

* :func:`ppkit.bench.runs.reproduce.failure_analysis`: for every section the reference's k=3 failures
  needed, whether the reference's k=3 run sent it and whether ppkit's offline retrieval sends it at k,
  with the characters ppkit sends;
* :func:`ppkit.bench.runs.harness.run_retrieval_bench` over the 40 questions at k, the pipeline's own
  document filter: ppkit beside the flat-RAG baselines given (hit, recall, all gold, characters sent).

A k is computed the first time it is chosen (about 5-10 s on 2 loaded cores with the three baselines)
and kept. ``summary_html()`` is the same table as static HTML, for a headless run. This module only
displays what the bench runs compute.
"""

from __future__ import annotations

import html
from pathlib import Path

from ...core.errors import InvalidInput, MissingDependency
from ...core.style import block
from ...indexing.index import SearchIndex
from ..data.gold import comprehensive_gold
from ..data.loaders import load_comprehensive
from ..runs.harness import BenchPlan, run_retrieval_bench
from ..runs.reproduce import failure_analysis

__all__ = ["KComparison"]

_CELL = "border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top"
_YES, _NO = "<span style='color:#14532d'>yes</span>", "<b style='color:#b00020'>no</b>"


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _f(x) -> str:
    return "–" if x is None else f"{x:.2f}"


def _table(head: list[str], rows: list[list[str]]) -> str:
    th = "".join(f"<th style='{_CELL}'>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td style='{_CELL}'>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table class='ppkit-k-table' style='border-collapse:collapse;margin:4px 0'><tr>{th}</tr>{body}</table>"


class KComparison:
    """The reference's k=3 failures and the 40-question scores at a chosen k, rerun when k changes.

    Args:
        index: the four 10-Ks' index (:func:`ppkit.reference_index`).
        bench_dir: the reference data's ``benchmarks/`` folder.
        baselines: ``{name: baseline}`` from :func:`ppkit.bench.runs.baselines.build_baselines` (default none:
            ppkit alone).
        ks: the choices of the control.
        k: the first k shown.
        questions, gold: the Comprehensive questions and gold (default: read from ``bench_dir``).

    Controls: ``k`` (toggle buttons). State: ``rows`` (the failure analysis at the current k) and
    ``result`` (the 40-question run at the current k).

    >>> view = KComparison(index, bench_dir, baselines=baselines)  # doctest: +SKIP
    >>> view.k.value = 10  # reruns both at k=10
    """

    def __init__(self, index: SearchIndex, bench_dir, *, baselines: dict | None = None,
                 ks: tuple[int, ...] = (3, 5, 10), k: int = 3, questions: list[dict] | None = None, gold=None):
        if k not in ks:
            raise InvalidInput(f"k={k} is not one of the choices {list(ks)}: pass k= one of them, or add it to ks=")
        try:
            import ipywidgets as w
        except ImportError:
            raise MissingDependency("the k comparison needs ipywidgets: pip install 'ppkit[notebooks]'") from None
        self.index, self.bench_dir, self.baselines = index, Path(bench_dir), baselines or {}
        self.questions = questions or load_comprehensive(self.bench_dir / "comprehensive_questions.xlsx")
        self.gold = gold or comprehensive_gold(self.questions, self.bench_dir / "comprehensive_k5", index)
        self._runs: dict[int, tuple[list[dict], dict]] = {}  # k -> (failure rows, the 40-question result's JSON)
        self.rows: list[dict] = []
        self.result: dict | None = None
        self.k = w.ToggleButtons(options=[(str(x), x) for x in ks], value=k, description="k",
                                 tooltips=[f"ppkit's top {x} sections" for x in ks],
                                 style={"button_width": "4em"})
        self.table = w.HTML()
        self.widget = w.VBox([self.k, self.table])
        self.k.observe(lambda _: self.refresh(), names="value")
        self.refresh()

    def __repr__(self) -> str:
        return f"KComparison(k={self.k.value}, {len(self.rows)} failures, {len(self._runs)} k computed)"

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    def refresh(self) -> None:
        """Run the comparison at the control's k (the first time it is chosen) and show it."""
        k = int(self.k.value)
        if k not in self._runs:
            rows = failure_analysis(self.index, self.bench_dir, k=k, questions=self.questions, gold=self.gold)
            plan = BenchPlan((k,), ("auto",), (k,), ("auto",))
            result = run_retrieval_bench(self.index, self.questions, self.gold, benchmark="comprehensive", plan=plan,
                                         baselines=self.baselines).to_dict()
            self._runs[k] = (rows, result)
        self.rows, self.result = self._runs[k]
        self.table.value = block(self.table_html())

    def failures_html(self) -> str:
        """The needed sections of each k=3 failure: sent by the reference at k=3, sent by ppkit at k."""
        k = int(self.k.value)
        rows, needed, ref_sent, sent = [], 0, 0, 0
        for f in self.rows:
            ref = {x["section_id"] for x in f["reference_k3"]}
            chars = sum(x["chars"] for x in f["ppkit"])
            for i, n in enumerate(f["needed"]):
                sid = n["section_id"]
                needed += 1
                ref_sent += sid in ref
                sent += sid in f["ppkit_covers"]
                rows.append([(f"{_e(f['company'])} Q{f['qno']}<br><small>{chars:,} characters sent</small>"
                              if i == 0 else ""),
                             f"{_e(n['breadcrumb'])} <code>{_e(sid)}</code>",
                             _YES if sid in ref else _NO, _YES if sid in f["ppkit_covers"] else _NO])
        head = ["question", "section the correct answer cited", "reference k=3 sent it", f"ppkit k={k} sends it"]
        return (f"<div><b>The reference's k=3 failures at k={k}:</b> ppkit sends {sent} of the {needed} needed "
                f"sections (the reference's k=3 run sent {ref_sent}).</div>" + _table(head, rows))

    def scores_html(self) -> str:
        """The 40 questions at the control's k: ppkit (its own document filter) beside the baselines."""
        k, r = str(self.k.value), self.result

        def row(name: str, v: dict) -> list[str]:
            return [name, _f(v["hit"]), _f(v["recall"]), _f(v.get("all_gold")), f"{v['context_chars_mean']:,.0f}"]

        rows = [row("ppkit", r["results"][k])]
        rows += [row(_e(name), agg[k]) for name, agg in r.get("baselines", {}).get("auto", {}).items() if k in agg]
        return (f"<div style='margin-top:6px'><b>All {r['n']} questions at k={k}</b> (each system with the "
                "question's own document filter):</div>"
                + _table(["system", "hit", "recall", "all gold", "characters sent"], rows))

    def table_html(self) -> str:
        """:meth:`failures_html` and :meth:`scores_html`, one block."""
        return self.failures_html() + self.scores_html()

    def summary_html(self) -> str:
        """The current state as static HTML (for a rendered or headless run)."""
        return block(self.table_html())
