"""The metadata benchmark: is each filing's company, period and form read right from its text,
and does the query analyzer name the right company and filing?

    ppkit bench metadata --documents ../shared/data/financebench/documents.jsonl --markdown-dir DIR
                         [--questions ../shared/data/financebench/questions.jsonl] [--json OUT]

**Documents.** Every ``DIR/<doc_name>.md`` listed in FinanceBench's ``documents.jsonl`` is read
by :func:`ppkit.documents.metadata.document_metadata` under a *neutral* name (``doc-001``...),
so the file-name fallback cannot help, and compared with FinanceBench's fields: company
(:func:`ppkit.documents.metadata.company_matches` of FinanceBench's name against the
registrant's name, its aliases and ticker), period (``doc_period`` as the fiscal year, and
the quarter of a ``2023Q2`` in the document's name; none for a 10-K or an 8-K) and form
(``doc_type``: ``10k`` -> ``10-K``, ``10q`` -> ``10-Q``, ``8k`` -> ``8-K``, ``Earnings`` ->
``earnings release``). Each miss is listed with its cause.

**Questions.** With ``--questions``, each question about one of those documents goes through
:func:`ppkit.retrieval.analyze.analyze_catalog` over the extracted metadata (keyed by the
real document names, which the analyzer does not see: their aliases are the neutral names).
``company``: the filings it selects all belong to the question's company (and it selects
some); ``filing``: its first choice is the question's document; ``in_scope``: the document
is among those searched. Nothing here is fitted, so there is no leave-one-out figure to give.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ...core.errors import InvalidInput, MissingFile
from ...documents.metadata import company_matches, document_metadata, period_label
from ...documents.tree import parse_markdown
from ...retrieval.analyze import analyze_catalog

__all__ = ["gold_metadata", "run_metadata_bench", "metadata_markdown"]

_FORMS = {"10k": "10-K", "10q": "10-Q", "8k": "8-K", "earnings": "earnings release", "10k_annualreport": "10-K"}


def _read_jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        raise MissingFile(f"{path} not found")
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def gold_metadata(row: dict) -> dict:
    """FinanceBench's document row as ``{"company", "fiscal_year", "quarter", "form_type"}``."""
    q = re.search(r"(?:19|20)\d{2}Q([1-4])", row["doc_name"])
    return {"company": row["company"], "fiscal_year": int(row["doc_period"]),
            "quarter": int(q.group(1)) if q else None, "form_type": _FORMS.get(str(row["doc_type"]).lower())}


def _miss_causes(meta: dict, gold: dict) -> list[str]:
    causes = []
    if not company_matches(gold["company"], meta):
        causes.append("company: not found in the text" if not meta.get("company") else
                      "company: the text names another company (e.g. a later rename)")
    if meta.get("fiscal_year") is None:
        causes.append("period: not found in the text")
    elif meta["fiscal_year"] != gold["fiscal_year"]:
        causes.append("period: wrong fiscal year")
    elif meta.get("quarter") != gold["quarter"]:
        causes.append("period: wrong quarter")
    if meta.get("form_type") is None:
        causes.append("form: not found in the text")
    elif meta["form_type"] != gold["form_type"]:
        causes.append("form: wrong form")
    return causes


def _score_questions(questions: list[dict], catalog: dict[str, dict]) -> dict:
    rows, skipped = [], []
    for q in questions:
        doc = q.get("doc_name")
        if doc not in catalog:
            skipped.append(q.get("financebench_id"))
            continue
        f = analyze_catalog(catalog, q["question"])
        searched = f.docs or []
        company_docs = {d for d in catalog if company_matches(q["company"], catalog[d])} or {doc}
        first = f.companies[0] if f.companies else None
        rows.append({"id": q.get("financebench_id"), "doc": doc, "first_choice": first, "searched": searched,
                     "company": bool(searched) and set(searched) <= company_docs,
                     "filing": first == doc, "in_scope": doc in searched, "notes": f.notes})
    n = len(rows)
    share = (lambda key: round(sum(r[key] for r in rows) / n, 4) if n else None)
    return {"n": n, "skipped": skipped, "company": share("company"), "filing": share("filing"),
            "in_scope": share("in_scope"),
            "searched_mean": round(sum(len(r["searched"]) for r in rows) / n, 2) if n else None,
            "misses": [r for r in rows if not r["filing"]]}


def run_metadata_bench(documents: str | Path, markdown_dir: str | Path, *,
                       questions: str | Path | None = None) -> dict:
    """Score document metadata (and the query analyzer) against FinanceBench; see the module docstring.

    Returns:
        ``{"benchmark": "metadata", "n", "right": {"company", "period", "form", "all"}, "missing":
        [doc names without Markdown], "misses": [{"doc", "causes", "got", "gold"}],
        "misses_by_cause": {cause: [docs]}, "questions": {...} (with ``questions``)}``.
    """
    rows = _read_jsonl(Path(documents))
    folder = Path(markdown_dir)
    if not folder.is_dir():
        raise MissingFile(f"{folder} is not a folder of extracted Markdown (<doc_name>.md)")
    seen, results, missing = set(), [], []
    catalog: dict[str, dict] = {}
    for row in rows:
        name = row["doc_name"]
        if name in seen:
            continue
        seen.add(name)
        path = folder / f"{name}.md"
        if not path.is_file():
            missing.append(name)
            continue
        neutral = f"doc-{len(catalog) + 1:03d}"  # the file name must not help
        text = path.read_text(encoding="utf-8")
        meta, _ = document_metadata(path, parse_markdown(text, neutral), text.splitlines(), name=neutral)
        catalog[name] = meta
        gold = gold_metadata(row)
        causes = _miss_causes(meta, gold)
        results.append({"doc": name, "causes": causes,
                        "got": {k: meta.get(k) for k in ("company", "ticker", "period", "form_type", "period_end")},
                        "gold": {"company": gold["company"], "period": period_label(gold["fiscal_year"], gold["quarter"]),
                                 "form_type": gold["form_type"]}})
    if not results:
        raise InvalidInput(f"no Markdown in {folder} for any document of {documents}")
    n = len(results)
    right = {field: round(sum(not any(c.startswith(field) for c in r["causes"]) for r in results) / n, 4)
             for field in ("company", "period", "form")}
    right["all"] = round(sum(not r["causes"] for r in results) / n, 4)
    by_cause: dict[str, list[str]] = {}
    for r in results:
        for c in r["causes"]:
            by_cause.setdefault(c, []).append(r["doc"])
    out = {"benchmark": "metadata", "n": n, "right": right, "missing": missing,
           "misses": [r for r in results if r["causes"]], "misses_by_cause": by_cause}
    if questions is not None:
        out["questions"] = _score_questions(_read_jsonl(Path(questions)), catalog)
    return out


def metadata_markdown(result: dict) -> str:
    """The result as a short Markdown report."""
    r = result["right"]
    lines = ["| filings | company | period | form | all three |", "| --- | --- | --- | --- | --- |",
             f"| {result['n']} | {r['company']:.1%} | {r['period']:.1%} | {r['form']:.1%} | {r['all']:.1%} |"]
    for cause, docs in sorted(result["misses_by_cause"].items()):
        lines.append(f"- {cause}: {len(docs)} ({', '.join(docs)})")
    q = result.get("questions")
    if q:
        lines += ["", "| questions | company right | first-choice filing right | filing searched | filings searched (mean) |",
                  "| --- | --- | --- | --- | --- |",
                  f"| {q['n']} | {q['company']:.1%} | {q['filing']:.1%} | {q['in_scope']:.1%} | {q['searched_mean']} |"]
    return "\n".join(lines)
