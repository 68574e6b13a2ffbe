"""The FinanceBench shelf (``../shared/data/financebench``): its PDFs and questions, and a small part of it
that indexes in seconds (what notebook 09 runs under nbmake; the whole shelf is the bench command).

>>> pdfs, questions = shelf(); small = small_filings(pdfs, questions, max_pages=16)  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

from ...core.data import financebench_dir
from ...documents.extract import pdf_page_count
from .loaders import load_financebench
from ..runs.results import as_json

__all__ = ["shelf", "small_filings", "miss_causes", "CAUSES"]


def shelf(root: Path | None = None) -> tuple[list[Path], list[dict]]:
    """The shelf's PDFs (sorted by name) and its questions (:func:`ppkit.bench.data.loaders.load_financebench`)."""
    d = financebench_dir(root)
    return sorted((d / "pdfs").glob("*.pdf")), load_financebench(d / "questions.jsonl")


def small_filings(pdfs: list[Path], questions: list[dict], *, max_pages: int = 16) -> list[Path]:
    """The PDFs of at most ``max_pages`` pages that at least one question is about (by file name), in order."""
    asked = {q["doc"] for q in questions} | {e["doc"] for q in questions for e in q.get("evidence") or []}
    return [p for p in pdfs if p.stem in asked and (pdf_page_count(p) or max_pages + 1) <= max_pages]


CAUSES = ("metadata", "extraction", "recall", "ranking", "trimming")


def miss_causes(result, gold, *, k: str = "5", mode: str = "auto") -> dict[str, list[str]]:
    """The questions that missed at ``k`` in ``mode``, grouped by the first stage that lost them.

    A miss is page_hit 0 where the question has an evidence page in the index, else section hit 0.
    Causes, in pipeline order: ``metadata`` (the filter from the question left out every gold
    filing), ``extraction`` (no evidence text was found in the extracted filing: its gold is the
    page alone), ``recall`` (no gold section among the candidates), ``ranking`` (a gold section
    among the candidates, none in the top k), ``trimming`` (a gold section sent, but not the lines
    of the evidence page).

    Args:
        result: a :class:`~ppkit.bench.runs.results.RetrievalBench` or its JSON form.
        gold: the run's :class:`~ppkit.bench.data.gold.GoldSet` (its evidence placements).
    """
    out: dict[str, list[str]] = {c: [] for c in CAUSES}
    for row in as_json(result)["per_question"]:
        e = row["modes"].get(mode)
        if e is None or k not in e:
            continue
        at = e[k]
        missed = at["page_hit"] == 0 if "page_hit" in at else at["hit"] == 0
        if not missed:
            continue
        placed = [m for m in (gold.details.get(row["qid"]) or {}).get("evidence", []) if m.get("mapped")]
        if e["filter"] is not None and not set(row["docs"]) & set(e["filter"]):
            cause = "metadata"
        elif placed and all(m.get("kind") == "page" for m in placed):
            cause = "extraction"
        elif not e["candidates"]["hit"]:
            cause = "recall"
        elif not at["hit"]:
            cause = "ranking"
        else:
            cause = "trimming"
        out[cause].append(row["qid"])
    return out
