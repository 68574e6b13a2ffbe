"""Figures of benchmark results. Each function returns (data, Figure); the caller saves the figure.

Figures are closed in pyplot before they are returned: the caller shows one by displaying it
(a notebook cell ending in ``fig``); left open, a notebook would draw it a second time.

:func:`plot_retrieval` draws hit@k and recall@k against the mean characters sent,
one point per system and cut-off: quality only means something beside the context
size it costs.
"""

from __future__ import annotations

from ..runs.results import RetrievalBench, as_json

__all__ = ["retrieval_points", "plot_retrieval", "plot_reference_vs_ppkit", "page_points", "plot_page_hits"]


def retrieval_points(result: RetrievalBench | dict, *, mode: str = "auto") -> list[dict]:
    """The plotted rows: ``{"system", "k", "hit", "recall", "context_chars"}`` for ppkit and each baseline in ``mode``.

    ``result``: a :class:`~ppkit.bench.runs.results.RetrievalBench` or its JSON form (a ``--json`` file).
    """
    result = as_json(result)
    rows = []
    m = result["modes"].get(mode, {})
    for k, v in m.items():
        if k.isdigit():
            rows.append({"system": f"ppkit ({mode} filter)", "k": k, "hit": v["hit"], "recall": v["recall"],
                         "context_chars": v["context_chars_mean"]})
    for name, agg in result.get("baselines", {}).get(mode, {}).items():
        for k, v in agg.items():
            rows.append({"system": name, "k": k if k.isdigit() else "=ctx", "hit": v["hit"], "recall": v["recall"],
                         "context_chars": v["context_chars_mean"]})
    return rows


def plot_retrieval(result: RetrievalBench | dict, *, mode: str = "auto", figsize=(11, 4.2)):
    """hit@k and recall@k versus mean context characters, ppkit beside the baselines.

    Returns:
        (rows plotted, matplotlib Figure).
    """
    import matplotlib.pyplot as plt

    result = as_json(result)
    rows = retrieval_points(result, mode=mode)
    fig, axes = plt.subplots(1, 2, figsize=figsize, sharex=True)
    systems = list(dict.fromkeys(r["system"] for r in rows))
    markers = ["o", "s", "^", "D", "v", "P"]
    for ax, metric in zip(axes, ("hit", "recall")):
        for i, sysname in enumerate(systems):
            pts = [r for r in rows if r["system"] == sysname and r[metric] is not None]
            pts_k = sorted([p for p in pts if p["k"].isdigit()], key=lambda p: int(p["k"]))
            xs = [p["context_chars"] for p in pts_k]
            ys = [p[metric] for p in pts_k]
            line, = ax.plot(xs, ys, marker=markers[i % len(markers)], label=sysname,
                            lw=2.5 if sysname.startswith("ppkit") else 1.2)
            for p in pts:
                ax.annotate(f"k={p['k']}" if p["k"].isdigit() else "=ctx", (p["context_chars"], p[metric]),
                            textcoords="offset points", xytext=(4, 4), fontsize=7, color=line.get_color())
            eq = [p for p in pts if not p["k"].isdigit()]
            if eq:
                ax.scatter([p["context_chars"] for p in eq], [p[metric] for p in eq], marker="*", s=120,
                           color=line.get_color(), zorder=3)
        ax.set_xlabel("mean characters sent")
        ax.set_ylabel(f"{metric}@k")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.set_title(f"{metric}@k vs context size")
    axes[0].legend(fontsize=8, loc="lower right")
    fig.suptitle(f"{result.get('benchmark', '')}: {result['n']} questions, filter mode '{mode}' "
                 "(★ = baseline at ppkit@5's context size)", fontsize=10)
    fig.tight_layout()
    plt.close(fig)  # the caller displays or saves it; an open figure would be drawn a second time
    return rows, fig


def plot_reference_vs_ppkit(rows: list[dict], *, figsize=(7, 3.6)):
    """Per-question bars of the reference's and ppkit's gold coverage at k=3 and k=5.

    ``rows``: ``{"qid", "reference_k3", "reference_k5", "ppkit_k3", "ppkit_k5"}`` (recall values, 0..1),
    e.g. from :func:`ppkit.bench.runs.reproduce.per_question_comparison`.

    Returns:
        (means per column, Figure).
    """
    import matplotlib.pyplot as plt

    cols = ["reference_k3", "reference_k5", "ppkit_k3", "ppkit_k5"]
    means = {c: (sum(r[c] for r in rows if r[c] is not None) / max(1, sum(1 for r in rows if r[c] is not None)))
             for c in cols}
    fig, ax = plt.subplots(figsize=figsize)
    ax.bar(range(len(cols)), [means[c] for c in cols], color=["#999", "#666", "#4c8", "#184"])
    ax.set_xticks(range(len(cols)), ["reference k=3", "reference k=5", "ppkit k=3", "ppkit k=5"])
    for i, c in enumerate(cols):
        ax.text(i, means[c] + 0.02, f"{means[c]:.2f}", ha="center", fontsize=9)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("mean recall of the gold sections")
    ax.set_title("Gold sections among the sections sent (Comprehensive, gold = reference k=5 citations)", fontsize=9)
    fig.tight_layout()
    plt.close(fig)  # the caller displays or saves it; an open figure would be drawn a second time
    return means, fig


def page_points(result: RetrievalBench | dict, *, k: str = "5") -> list[dict]:
    """``{"system", "store", "page_hit", "hit", "context_chars"}`` at ``k``: ppkit in each filter mode (``auto``: one
    shared store filtered from the question; ``gold``: the per-document store, filtered to the gold filing;
    ``none``: no filter) and each baseline at ppkit@5's context size."""
    result = as_json(result)
    store = {"auto": "shared, own filter", "none": "shared, no filter", "gold": "per document"}
    rows = [{"system": "ppkit", "store": store.get(mode.split(":")[0], mode), "page_hit": m[k].get("page_hit"),
             "hit": m[k]["hit"], "context_chars": m[k]["context_chars_mean"]}
            for mode, m in result["modes"].items() if k in m]
    for mode, by_name in result.get("baselines", {}).items():
        for name, agg in by_name.items():
            v = agg.get("equal_context") or {}
            rows.append({"system": name, "store": store.get(mode, mode) + " (equal context)",
                         "page_hit": v.get("page_hit"), "hit": v.get("hit"), "context_chars": v.get("context_chars_mean")})
    return rows


def plot_page_hits(result: RetrievalBench | dict, *, k: str = "5", figsize=(9, 3.6)):
    """page_hit@k (an evidence page among the pages of the lines sent) and section hit@k per system and store.

    Returns:
        (rows plotted, matplotlib Figure).
    """
    import matplotlib.pyplot as plt

    rows = page_points(result, k=k)
    labels = [f"{r['system']}\n{r['store']}" for r in rows]
    # wide enough for every label side by side (about 1.1 inches a bar pair), labels slanted so none overlap
    fig, ax = plt.subplots(figsize=(max(figsize[0], 1.1 * len(rows)), figsize[1]))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r["page_hit"] or 0 for r in rows], width=0.4, label=f"page hit@{k}", color="#184")
    ax.bar([x + 0.2 for x in xs], [r["hit"] or 0 for r in rows], width=0.4, label=f"section hit@{k}", color="#9c9")
    for x, r in zip(xs, rows):
        if r["page_hit"] is not None:
            ax.text(x - 0.2, r["page_hit"] + 0.02, f"{r['page_hit']:.2f}", ha="center", fontsize=8)
    ax.set_xticks(list(xs), labels, fontsize=8, rotation=30, ha="right", rotation_mode="anchor")
    ax.set_ylim(0, 1.15)
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(f"{as_json(result).get('benchmark', '')}: {as_json(result)['n']} questions", fontsize=9)
    fig.tight_layout()
    plt.close(fig)  # the caller displays or saves it; an open figure would be drawn a second time
    return rows, fig
