"""Benchmarks: question-set loaders, gold sections, retrieval metrics, baselines, the harness,
the reference tables, the online answer benchmark, plots and views. Never imported by ask or index.

    data/      question sets and their gold: loaders, gold, evidence, reference logs, the FinanceBench shelf
    measures/  metrics and judges: retrieval metrics, the strict numeric judge, cross-company contamination
    runs/      the benchmarks run: harness (+ results), baselines, answers, reproduce, verify, computed, abstain,
               scale, peers, metadata, transfer, extraction
    fit/       fitting on the visible sets: cv (folds, intervals), loco, the stage-2 model (rerank), image
               thresholds (images), rules after stage 2, the statement weight
    views/     figures (plots), per-question views (questions), the k control over the k=3 failures (k_choice)
    cli.py     `ppkit bench ...`

    fmt, questions = ppkit.bench.load_questions(path)
    gold = ppkit.bench.comprehensive_gold(questions, logs_dir, index)
    result = ppkit.bench.run_retrieval_bench(index, questions, gold, baselines=build_baselines(index, index.embedder)[0])

Modules load lazily what they need (matplotlib, ipywidgets, Gemini) so importing
this package is cheap.
"""

from .data.gold import GoldSet, comprehensive_gold, financebench_gold, multimodal_gold
from .data.loaders import (
    MarkdownDocs,
    detect_format,
    load_comprehensive,
    load_financebench,
    load_multimodal_queries,
    load_questions,
)
from .data.reference import load_run_logs, parse_run_log, parse_scorecard
from .measures.metrics import Sent, hit_at_k, recall_at_k
from .runs.baselines import build_baselines
from .runs.harness import markdown_table, run_retrieval_bench

# what the notebooks use, so their cells import from ppkit.bench, not from its modules
from .data.shelf import miss_causes, shelf, small_filings
from .measures.contamination import measure_contamination
from .runs.answer_judge import run_answer_judge
from .runs.computed import metric_markdown, run_metric_bench
from .runs.harness import BenchPlan
from .runs.reproduce import (failure_analysis, failure_markdown, per_question_comparison, reference_sections,
                             reference_summary, summary_markdown)
from .views.k_choice import KComparison
from .views.plots import plot_page_hits, plot_reference_vs_ppkit, plot_retrieval
from .views.questions import misses_markdown, question_browser, question_markdown

__all__ = [
    "GoldSet", "MarkdownDocs", "Sent", "build_baselines", "comprehensive_gold", "detect_format", "financebench_gold",
    "hit_at_k", "load_comprehensive", "load_financebench", "load_multimodal", "load_multimodal_queries",
    "load_questions", "load_run_logs", "markdown_table", "multimodal_gold", "parse_run_log", "parse_scorecard",
    "recall_at_k", "run_retrieval_bench",
    "BenchPlan", "KComparison", "failure_analysis", "failure_markdown", "measure_contamination", "metric_markdown", "miss_causes",
    "misses_markdown", "per_question_comparison", "plot_page_hits", "plot_reference_vs_ppkit", "plot_retrieval",
    "question_browser", "question_markdown", "reference_sections", "reference_summary", "run_answer_judge",
    "run_metric_bench", "shelf", "small_filings", "summary_markdown",
]


def load_multimodal(queries_path, reference_log_path, docs):
    """The multimodal benchmark in one call: (questions, section qrels, image qrels, GoldSet).

    ``docs`` are the papers (an Index such as ``ppkit.reference_index("papers")`` or a MarkdownDocs).
    """
    questions = load_multimodal_queries(queries_path)
    gold = multimodal_gold(questions, reference_log_path, docs)
    return questions, gold.qrels, gold.images, gold
