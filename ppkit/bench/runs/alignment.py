"""``ppkit bench compare``'s first view: the whole-document alignment against human alignments.

Three pairs (:func:`ppkit.bench.data.alignments.default_alignments`): the two credit agreements (Emerson's
Articles 1-4 only: the rest is held out and has no gold here), the two papers whole, and Corning's 2021 and 2022
10-K from the FinanceBench shelf (indexed from the PDFs; written for ppkit by a helper who had not read the
comparison code). For each pair the four scores of :mod:`ppkit.bench.measures.alignment` with:

* **frozen**: the package's weights (``ppkit/compare/align_weights.json``), as ``ppkit compare`` runs;
* **in-sample**: weights fitted now on the visible pairs (agreements, papers), scored on them (an optimistic
  figure for those two; for Corning, which is never fitted on, an out-of-sample one);
* **leave-one-pair-out**: each visible pair scored with the weights fitted on the other alone.

It also times ``ppkit.compare`` of the two agreements, whole documents, on the loaded index (indexing not timed).
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path

from ...compare.align import AlignWeights
from ...core.data import data_dir
from ...pipeline import cached_index, compare
from ..data.alignments import default_alignments, load_alignment
from ..fit.align import fit_weights, leave_one_out, pair_data, predict
from ..measures.alignment import AlignmentScore, score_alignment

__all__ = ["run_alignment_bench", "alignment_markdown", "alignment_indexes", "VISIBLE", "CORNING_INDEX",
           "FIT_COMMAND"]

VISIBLE = ("agreements", "papers")  # the pairs anything may be fitted on
_FITTED_ON = {"agreements": "the agreements (Emerson's Articles 1-4)", "papers": "the papers (whole)"}
CORNING_INDEX = "compare-corning"  # the cache name of the two Corning 10-Ks' index (also the whole-document bench's)
FIT_COMMAND = "ppkit bench compare --fit ppkit/compare/align_weights.json"


def alignment_indexes(config=None) -> dict:
    """``{pair name: index}``: the agreements and papers from the reference Markdown (one index, shared with the
    reports' bench and notebook 10), Corning's 10-Ks from the shelf's PDFs."""
    comparison = data_dir() / "comparison"
    docs = cached_index([comparison / f"{d}.md" for d in ("Emerson", "TRoadhouse", "VectorFusion", "VectorPainter")],
                        "comparison", config=config)
    shelf = data_dir() / "financebench" / "pdfs"
    corning = cached_index([shelf / "CORNING_2021_10K.pdf", shelf / "CORNING_2022_10K.pdf"], CORNING_INDEX,
                           config=config)
    return {"agreements": docs, "papers": docs, "corning": corning}


def _scored(p, w: AlignWeights) -> AlignmentScore:
    return score_alignment(p.gold, predict(p, w), titles={x: p.sb.title(x) for x in p.sb.nodes})


def run_alignment_bench(indexes: dict, *, frozen: AlignWeights | None = None, files: dict[str, Path] | None = None
                        ) -> dict:
    """The view (see the module) over ``indexes`` (``{pair name: index}``, :func:`alignment_indexes`)."""
    files = files or default_alignments()
    frozen = frozen or AlignWeights.load()
    pairs = {}
    for name, index in indexes.items():
        gold = load_alignment(files[name], index.trees)
        pairs[name] = pair_data(name, index, gold)
    visible = [pairs[k] for k in VISIBLE if k in pairs]
    fitted = fit_weights(visible, fitted_on=", ".join(_FITTED_ON.get(p.name, p.name) for p in visible),
                         command=FIT_COMMAND)
    loo = leave_one_out(visible) if len(visible) > 1 else {}
    rows = []
    for name, p in pairs.items():
        row = {"pair": name, "a": p.gold.a_doc, "b": p.gold.b_doc, "unmapped": list(p.gold.unmapped),
               "sections_a": len(p.sa.nodes), "sections_b": len(p.sb.nodes),
               "frozen": _scored(p, frozen).to_dict(), "in_sample": _scored(p, fitted).to_dict()}
        if name in loo:
            row["lopo"] = loo[name][1].to_dict()
        rows.append(row)
    timing = {}
    if "agreements" in pairs:
        p = pairs["agreements"]
        t0 = time.perf_counter()
        result = compare(p.gold.a_doc, p.gold.b_doc, index=indexes["agreements"])
        timing = {"a": p.gold.a_doc, "b": p.gold.b_doc, "seconds": round(time.perf_counter() - t0, 2),
                  "phases": result.timings}
    return {"rows": rows, "fitted": asdict(fitted), "frozen_fitted_on": frozen.fitted_on, "timing": timing}


def _cell(s: dict | None) -> str:
    if not s:
        return "-"

    def r(x):
        return "-" if x is None else f"{x:.2f}"

    return (f"{r(s['best'])} ({s['best_hit']}/{s['best_of']}) | {r(s['precision'])} ({s['pairs_hit']}/"
            f"{s['pairs_found']}) | {r(s['recall'])} ({s['pairs_hit']}/{s['pairs_gold']}) | {r(s['none'])} "
            f"({s['none_hit']}/{s['none_of']})")


def alignment_markdown(result: dict) -> str:
    """The view as a Markdown table: per pair and weights, best counterpart right, pairs precision and recall,
    no counterpart recognised (counts in brackets)."""
    out = ["| pair | weights | best counterpart right | pairs precision | pairs recall | no counterpart recognised |",
           "|---|---|---|---|---|---|"]
    for row in result["rows"]:
        label = f"{row['pair']} ({row['a']} → {row['b']})"
        out.append(f"| {label} | frozen | {_cell(row['frozen'])} |")
        out.append(f"| | fitted in-sample{'' if row['pair'] in VISIBLE else ' (never fitted on)'} | "
                   f"{_cell(row['in_sample'])} |")
        if "lopo" in row:
            out.append(f"| | leave-one-pair-out | {_cell(row['lopo'])} |")
    t = result.get("timing")
    if t:
        out += ["", f"Whole-document `ppkit.compare` of {t['a']} and {t['b']} on the loaded index: {t['seconds']} s "
                    f"(phases: {', '.join(f'{k} {v} s' for k, v in t['phases'].items())})."]
    unmapped = [f"{r['pair']}: {len(r['unmapped'])}" for r in result["rows"] if r["unmapped"]]
    if unmapped:
        out += ["", "Headings of the alignment files found in no tree: " + "; ".join(unmapped) + "."]
    return "\n".join(out) + "\n"
