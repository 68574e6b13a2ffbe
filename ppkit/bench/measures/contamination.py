"""Comparison questions: one filtered sub-retrieval per company, merged so each is represented.

"Compare the current ratios of AMD and Boeing" over one index of several filings tends
to return five sections of whichever company's balance sheet embeds closer, and a
section of a third company that happens to match. Decomposition runs one retrieval per
named company (its own document, the question without the company names) and merges the
results round-robin in the order the companies were named, so every company gets at
least one section and no other company gets any.

:func:`contamination` and :func:`measure_contamination` report how often sections come
from companies the question did not ask about, and whether every company asked about is
represented, with and without decomposition (and without any filter); the comparison
questions with gold sections live in ``data/comparison_questions.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

from ...core.config import project_root
from ...core.errors import MissingFile
from ...core.ids import split_section_id
from ...indexing.index import SearchIndex

__all__ = ["contamination", "measure_contamination", "load_comparison_questions", "gold_hit"]


def contamination(sections, companies: list[str]) -> dict:
    """Sections from documents outside ``companies``, and how many each company got."""
    per = {c: sum(1 for s in sections if s.doc == c) for c in companies}
    wrong = [s.section_id for s in sections if s.doc not in companies]
    return {"sections": len(sections), "wrong_company": len(wrong), "wrong_sections": wrong, "per_company": per,
            "all_represented": all(v > 0 for v in per.values())}


def gold_hit(index: SearchIndex, sections, gold: list[str]) -> dict[str, bool]:
    """For each gold ``DOC#NODE``: is its heading line inside the text sent for a section?"""
    out = {}
    for g in gold:
        doc, node = split_section_id(g)
        line = index.trees[doc][node].line_start
        out[g] = any(s.doc == doc and s.contains_line(line) for s in sections)
    return out


def load_comparison_questions(path: str | Path | None = None) -> list[dict]:
    """The comparison questions (``data/comparison_questions.json`` in the checkout)."""
    if path is None:
        root = project_root()
        if root is None:
            raise MissingFile("data/comparison_questions.json ships with the ppkit checkout, not the wheel: "
                                    "pass path= to a copy")
        path = root / "data" / "comparison_questions.json"
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return data["questions"] if isinstance(data, dict) else data


SETTINGS = {
    "no filter": {"auto_filter": False, "decompose": False},
    "filter, one pool": {"decompose": False},
    "decomposed": {"decompose": True},
}


def measure_contamination(index: SearchIndex, questions: list[dict] | None = None, *, k: int = 5, retrieval: str | None = None,
                          reranker=None) -> dict:
    """Cross-contamination and gold coverage of the comparison questions under three settings.

    Settings: ``no filter`` (one search over every document), ``filter, one pool`` (the
    named companies' documents searched together), ``decomposed`` (one search per company).

    Returns:
        ``{"n", "k", "settings": {name: {"wrong_company_share", "all_represented",
        "gold_company_hit", "gold_hit"}}, "per_question": [...]}`` where
        ``wrong_company_share`` = sections from companies not asked about / all sections,
        ``all_represented`` = share of questions where every company got a section,
        ``gold_company_hit`` = share of (question, company) pairs with a gold section of
        that company in the sections, ``gold_hit`` = share of gold sections covered.
    """
    questions = load_comparison_questions() if questions is None else questions
    per_q = []
    agg = {name: {"sections": 0, "wrong": 0, "repr": 0, "pairs": 0, "pair_hits": 0, "gold": 0, "gold_hits": 0}
           for name in SETTINGS}
    for q in questions:
        row = {"id": q["id"], "question": q["question"], "settings": {}}
        for name, kw in SETTINGS.items():
            r = index.retrieve(q["question"], k, retrieval=retrieval, reranker=reranker, **kw)
            c = contamination(r.sections, q["companies"])
            hits = gold_hit(index, r.sections, q["gold"])
            pair_hits = {co: any(v for g, v in hits.items() if g.startswith(co + "#")) for co in q["companies"]}
            row["settings"][name] = {**c, "sections_returned": [s.section_id for s in r.sections],
                                     "gold_hit": hits, "company_hit": pair_hits}
            a = agg[name]
            a["sections"] += c["sections"]
            a["wrong"] += c["wrong_company"]
            a["repr"] += int(c["all_represented"])
            a["pairs"] += len(pair_hits)
            a["pair_hits"] += sum(pair_hits.values())
            a["gold"] += len(hits)
            a["gold_hits"] += sum(hits.values())
        per_q.append(row)
    n = len(questions)
    settings = {name: {"wrong_company_share": round(a["wrong"] / max(1, a["sections"]), 3),
                       "all_represented": round(a["repr"] / max(1, n), 3),
                       "gold_company_hit": round(a["pair_hits"] / max(1, a["pairs"]), 3),
                       "gold_hit": round(a["gold_hits"] / max(1, a["gold"]), 3)} for name, a in agg.items()}
    return {"n": n, "k": k, "retrieval": retrieval, "settings": settings, "per_question": per_q}
