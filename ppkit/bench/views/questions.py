"""Per-question views of a retrieval benchmark result: static Markdown/HTML, and an ipywidgets browser.

The static renderings are what a headless run (nbmake, CI) shows; the widget is a
dropdown over the questions that shows the same HTML. Neither re-runs retrieval:
they read a :func:`ppkit.bench.runs.harness.run_retrieval_bench` result.
"""

from __future__ import annotations

import html

from ...core.errors import MissingDependency
from ...core.ids import split_section_id
from ...core.style import block
from ..runs.results import RetrievalBench, as_json

# a gold section's mark drawn with CSS (a check in a green box), not an emoji a machine may lack the font for
_GOLD = ("<span title='gold section' style='display:inline-block;width:0.9em;height:0.9em;margin-right:4px;"
         "background:#186a3b;border-radius:2px;color:#fff;font-size:0.75em;line-height:0.9em;text-align:center;"
         "vertical-align:middle'>&#10003;</span>")

__all__ = ["question_view", "question_markdown", "question_html", "misses_markdown", "question_browser"]


def question_view(row: dict, *, trees=None, reference: dict | None = None, ks=("3", "5")) -> dict:
    """The facts shown for one question: gold, per mode the sections sent (gold marked), the
    candidates' first gold rank, and the reference run's nodes when ``reference`` is given
    (``{k: [section ids]}``)."""
    def crumb(sid):
        if trees is None:
            return sid
        doc, nid = split_section_id(sid)
        return f"{trees[doc][nid].breadcrumb} ({sid})" if doc in trees and nid in trees[doc].nodes else sid

    gold = list(row["gold"])
    modes = {}
    for mode, e in row["modes"].items():
        modes[mode] = {
            "filter": e.get("filter"),
            "sections": [{"section_id": s, "label": crumb(s), "gold": s in gold} for s in e["sections"]],
            "covered": {k: e["covered"].get(k, []) for k in ks if k in e["covered"]},
            "hit": {k: e[k]["hit"] for k in ks if k in e}, "recall": {k: e[k]["recall"] for k in ks if k in e},
            "chars": {k: e[k]["context_chars"] for k in ks if k in e},
            "first_gold_rank": e["candidates"]["first_gold_rank"],
        }
    ref = {str(k): [{"section_id": s, "label": crumb(s), "gold": s in gold} for s in v]
           for k, v in (reference or {}).items()}
    return {"qid": row["qid"], "question": row["question"], "gold": [{"section_id": g, "label": crumb(g)} for g in gold],
            "modes": modes, "reference": ref}


def question_markdown(row: dict, *, trees=None, reference: dict | None = None) -> str:
    """One question as Markdown (what was retrieved, which of it is gold)."""
    v = question_view(row, trees=trees, reference=reference)
    out = [f"**{v['qid']}**: {v['question']}", "", "Gold: " + "; ".join(g["label"] for g in v["gold"])]
    for mode, m in v["modes"].items():
        hr = ", ".join(f"hit@{k} {m['hit'][k]:.0f} recall@{k} {m['recall'][k]:.2f} ({m['chars'][k]:,} chars)"
                       for k in m["hit"])
        out.append(f"- ppkit, filter `{mode}` ({m['filter'] or 'all documents'}): {hr}; first gold among the "
                   f"candidates at rank {m['first_gold_rank'] or '–'}")
        out += [f"    {i}. {'[gold]' if s['gold'] else '·'} {s['label']}" for i, s in enumerate(m["sections"], start=1)]
    for k, secs in v["reference"].items():
        out.append(f"- reference run k={k}: " + "; ".join(("[gold] " if s["gold"] else "") + s["label"] for s in secs))
    return "\n".join(out)


def question_html(row: dict, *, trees=None, reference: dict | None = None) -> str:
    """One question as HTML (for the widget)."""
    v = question_view(row, trees=trees, reference=reference)
    e = html.escape
    parts = [f"<h4>{e(v['qid'])}: {e(v['question'])}</h4>",
             "<p><b>Gold</b>: " + "; ".join(e(g["label"]) for g in v["gold"]) + "</p>"]
    for mode, m in v["modes"].items():
        hr = ", ".join(f"hit@{k} {m['hit'][k]:.0f} · recall@{k} {m['recall'][k]:.2f} · {m['chars'][k]:,} chars"
                       for k in m["hit"])
        items = "".join(f"<li style='color:{'#186a3b' if s['gold'] else '#444'}'>{_GOLD if s['gold'] else ''}"
                        f"{e(s['label'])}</li>" for s in m["sections"])
        parts.append(f"<p><b>ppkit, filter {e(mode)}</b> ({e(str(m['filter'] or 'all documents'))}): {hr}; "
                     f"first gold candidate at rank {m['first_gold_rank'] or '–'}</p><ol>{items}</ol>")
    for k, secs in v["reference"].items():
        items = "".join(f"<li>{_GOLD if s['gold'] else ''}{e(s['label'])}</li>" for s in secs)
        parts.append(f"<p><b>reference run k={e(k)}</b></p><ol>{items}</ol>")
    return "\n".join(parts)


def misses_markdown(result: RetrievalBench | dict, *, k: str = "5", mode: str = "auto", trees=None) -> str:
    """The questions whose gold was not sent at ``k`` in ``mode``, with where the first gold candidate ranked."""
    result = as_json(result)
    rows = [r for r in result["per_question"] if r["modes"][mode][k]["hit"] == 0]
    out = [f"{len(rows)} of {result['n']} questions send no gold section at k={k} (filter {mode}):", ""]
    for r in rows:
        e = r["modes"][mode]
        rank = e["candidates"]["first_gold_rank"]
        out.append(f"- {r['qid']}: first gold at candidate rank {rank if rank else 'not among the candidates'}; "
                   f"sent {', '.join(e['sections'][: int(k)])}")
    return "\n".join(out)


def question_browser(result: RetrievalBench | dict, *, trees=None, references: dict | None = None):
    """An ipywidgets dropdown over the questions showing :func:`question_html`.

    Args:
        result: a benchmark result.
        trees: doc -> Tree, for breadcrumbs (e.g. ``index.trees``).
        references: ``{qid: {k: [section ids]}}`` of a reference run (optional).

    Returns:
        An ``ipywidgets.VBox``.
    """
    result = as_json(result)
    try:
        import ipywidgets as w
    except ImportError:
        raise MissingDependency("the question browser needs ipywidgets: pip install 'ppkit[notebooks]'") from None
    rows = {r["qid"]: r for r in result["per_question"]}
    labels = [(f"{'✓' if r['results']['5']['hit'] else '✗'} {qid}: {r['question'][:70]}", qid)
              for qid, r in rows.items()] if all("5" in r["results"] for r in rows.values()) else \
        [(f"{qid}: {r['question'][:70]}", qid) for qid, r in rows.items()]
    pick = w.Dropdown(options=labels, description="question", layout=w.Layout(width="95%"))
    out = w.HTML()

    def show(change=None):
        qid = pick.value
        # inline styles, so JupyterLab's widget line height does not double every row (see ppkit.core.style)
        out.value = block(question_html(rows[qid], trees=trees, reference=(references or {}).get(qid)))

    pick.observe(show, names="value")
    if labels:
        show()
    return w.VBox([pick, out])
