"""The multimodal benchmark: gold from the reference run, section and image metrics.

The 20 questions over the five papers (``benchmarks/multimodal_queries.json``) have
no hand-made gold. As the design says, the gold is the reference system's run
(``benchmarks/multimodal_reference_log.json``):

* **gold sections** - its ``sources`` breadcrumbs (``"Galore > 5. Experiments >
  5.1. Comparison …"``) matched to section ids ``DOC#NODEID`` over our trees. The
  match is robust to markup (emphasis, quotes, spacing, case): an exact path match
  first, then the same last title under a matching ancestor chain, then the last
  title alone; a breadcrumb that names several headings (``Galore > Epochs`` is
  two) gives them all; one that names none is reported, not guessed.
* **gold images** - its ``images_found`` paths reduced to ``Doc/folder/file.png``.
  The reference's labels and paths do not always agree (its label "Figure 5: overview
  of latent score distillation" sits on the path of equation (7)), and a figure made
  of several image files is one label but one path, so a second view,
  ``gold_by_caption``, takes every image whose caption is the one the reference's
  label names (the path when the label names no caption). Both are reported.

Metrics (per question, then averaged; a question without gold of a kind is left
out of that metric's mean, and the count is reported):

* ``hit``  - at least one gold heading line is inside the text sent for the k
  sections (the design's hit@k); ``recall`` - the share of gold sections so covered;
* ``image_hit`` - at least one chosen image is a gold image;
* ``image_precision`` - the share of chosen images that are gold images
  (undefined when nothing was chosen);
* ``image_reachable`` - at least one gold image is among the images of the k
  sections (the ceiling of ``image_hit`` for any image choice over that retrieval);
* ``context_chars_mean`` - characters sent, beside the hit rate as always.

What it does not do: judge the answer text (that needs an LLM judge).
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ..answer.images import DEFAULT_THRESHOLD
from ..answer.synth import ExtractiveSynthesizer
from ..core.config import Config
from ..core.data import benchmark_path
from ..core.errors import InvalidInput
from ..core.ids import breadcrumb_titles, split_section_id
from ..documents.anchors import find_captions
from ..documents.images import caption_key
from ..indexing.index import SearchIndex
from ..pipeline import reference_index

__all__ = ["MMQuery", "load_multimodal", "match_breadcrumb", "image_key", "section_hit", "section_recall",
           "image_hit", "image_precision", "image_metrics", "run_multimodal"]


@dataclass(frozen=True)
class MMQuery:
    """One multimodal benchmark question with its gold."""

    qid: str
    question: str
    category: str
    papers: tuple[str, ...]
    gold_sections: tuple[str, ...]  # "DOC#NODEID"
    gold_images: tuple[str, ...]  # "Doc/figures/fileoutpartN.png"
    gold_by_caption: tuple[str, ...] = ()  # the images whose caption the reference's labels name (see below)
    unmatched: tuple[str, ...] = ()  # reference breadcrumbs that name no heading here
    reference_labels: dict = field(default_factory=dict, repr=False)  # gold image -> the reference's label


def _norm(title: str) -> str:
    """Markup-free comparable title: no emphasis/HTML, unified quotes and dashes, no punctuation, casefolded."""
    t = unicodedata.normalize("NFKC", title)
    t = re.sub(r"</?[a-zA-Z][^>]*>", "", t).replace("**", "").replace("__", "")
    t = t.translate(str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-", "´": ""}))
    t = re.sub(r"[^\w\s]", " ", t.casefold())
    return re.sub(r"\s+", " ", t).strip()


def match_breadcrumb(breadcrumb: str, trees: dict) -> list[str]:
    """Section ids whose heading the breadcrumb ``Doc > A > B`` names (empty if none).

    >>> match_breadcrumb("Galore > 4. GaLore for Memory-Efficient Training > 4.2. Memory-Efficient Optimization",
    ...                  trees)  # doctest: +SKIP
    ['Galore#0011']
    """
    parts = [p.strip() for p in breadcrumb_titles(breadcrumb)]
    doc = next((d for d in trees if _norm(d) == _norm(parts[0])), None)
    if doc is None or len(parts) < 2:
        return []
    want = [_norm(p) for p in parts[1:]]
    nodes = [n for n in trees[doc].headings()]
    paths = {n.node_id: [_norm(t) for t in n.path[1:]] for n in nodes}
    exact = [i for i, p in paths.items() if p == want]
    if exact:
        return [f"{doc}#{i}" for i in exact]
    # same last title, with the breadcrumb's ancestors appearing in order among the node's ancestors
    def ordered_subset(sub, full):
        it = iter(full)
        return all(any(x == y for y in it) for x in sub)

    last = [i for i, p in paths.items() if p and p[-1] == want[-1]]
    chained = [i for i in last if ordered_subset(want[:-1], paths[i][:-1])]
    return [f"{doc}#{i}" for i in (chained or last)]


def image_key(path: str, doc: str | None = None) -> str:
    """``Doc/folder/file.png`` from a reference path (any OS) or, with ``doc``, from a tree-relative path.

    >>> image_key("C:/Proxy-Pointer/MultiModal/data/extracted_papers/Galore/tables/fileoutpart157.png")
    'Galore/tables/fileoutpart157.png'
    >>> image_key("figures/x.png", "CLIP")
    'CLIP/figures/x.png'
    """
    parts = [p for p in path.replace("\\", "/").split("/") if p and p != "."]
    if doc is not None:
        return "/".join([doc, *parts])
    return "/".join(parts[-3:])


def _caption_images(key: str, label: str, trees: dict) -> list[str]:
    """The images of the reference label's caption (``"Galore - Table 7: …"`` -> every image captioned
    Table 7 in Galore); the path itself when the label names no caption or none matches."""
    doc = key.split("/", 1)[0]
    caps = find_captions(label.split(" - ", 1)[-1])
    if not caps or doc not in trees:
        return [key]
    want = caps[0][:2]
    found = [image_key(im.path, doc) for n in trees[doc] for im in n.images if caption_key(im.label) == want]
    return found or [key]


def load_multimodal(trees: dict, queries_path: str | Path | None = None,
                    log_path: str | Path | None = None) -> list[MMQuery]:
    """The 20 questions with gold sections (over ``trees``: doc -> Tree) and gold images."""
    qp = Path(queries_path) if queries_path else benchmark_path("multimodal_queries.json")
    lp = Path(log_path) if log_path else benchmark_path("multimodal_reference_log.json")
    try:
        queries = json.loads(qp.read_text(encoding="utf-8"))["test_queries"]
        log = {str(r["id"]): r for r in json.loads(lp.read_text(encoding="utf-8"))["results"]}
    except (KeyError, TypeError, json.JSONDecodeError) as e:
        raise InvalidInput(f"{qp} / {lp} are not the multimodal query set and reference log ({e})") from None
    out = []
    for q in queries:
        qid = str(q["id"])
        ref = log.get(qid)
        if ref is None:
            raise InvalidInput(f"question {qid} has no entry in {lp}")
        gold, unmatched = [], []
        for b in ref.get("sources", []):
            ids = match_breadcrumb(b, trees)
            gold += [i for i in ids if i not in gold]
            if not ids:
                unmatched.append(b)
        images = {image_key(im["path"]): im.get("label", "") for im in ref.get("images_found", [])}
        by_caption = []
        for key, label in images.items():
            by_caption += [k for k in _caption_images(key, label, trees) if k not in by_caption]
        papers = tuple(q.get("papers") or [q["paper"]])
        out.append(MMQuery(qid, q["query"], q.get("category", ""), papers, tuple(gold), tuple(images),
                           tuple(by_caption), tuple(unmatched), images))
    return out


# -- metrics (textbook definitions; see the module docstring) ---------------------------------
def _gold_lines(gold_sections, trees: dict) -> list[tuple[str, int]]:
    out = []
    for sid in gold_sections:
        doc, node = split_section_id(sid)
        out.append((doc, trees[doc][node].line_start))
    return out


def section_hit(sections, gold_sections, trees: dict) -> bool | None:
    """At least one gold heading line inside the text sent for ``sections``; None without gold."""
    lines = _gold_lines(gold_sections, trees)
    if not lines:
        return None
    return any(s.doc == d and s.contains_line(ln) for d, ln in lines for s in sections)


def section_recall(sections, gold_sections, trees: dict) -> float | None:
    """Share of gold sections whose heading line is inside the text sent; None without gold."""
    lines = _gold_lines(gold_sections, trees)
    if not lines:
        return None
    return sum(any(s.doc == d and s.contains_line(ln) for s in sections) for d, ln in lines) / len(lines)


def image_hit(chosen: list[str], gold: list[str]) -> float | None:
    """1.0 if at least one chosen image is gold, else 0.0; None when there are no gold images.

    >>> image_hit(["a", "b"], ["b", "c"]), image_hit([], ["c"]), image_hit(["a"], [])
    (1.0, 0.0, None)
    """
    if not gold:
        return None
    return 1.0 if set(chosen) & set(gold) else 0.0


def image_precision(chosen: list[str], gold: list[str]) -> float | None:
    """Share of chosen images that are gold; None when nothing was chosen.

    >>> image_precision(["a", "b", "c", "d"], ["b", "d", "e"]), image_precision([], ["b"])
    (0.5, None)
    """
    if not chosen:
        return None
    g = set(gold)
    return sum(c in g for c in chosen) / len(chosen)


def image_metrics(question: str, sections, gold_images, *, synthesizer=None, gold_by_caption=None) -> dict:
    """Images chosen for ``question`` from ``sections`` and their scores against the gold.

    The per-question, per-k piece a benchmark harness calls (``ppkit bench retrieval``
    over the multimodal set): ``gold_images`` are ``Doc/folder/file.png`` keys (as in
    ``GoldSet.images[qid]``).

    Returns:
        ``{"images", "image_labels", "image_hit", "image_precision", "image_reachable"}``
        (+ the ``_by_caption`` pair when ``gold_by_caption`` is given); a metric is None
        where it is undefined (see the module docstring).
    """
    synthesizer = synthesizer or ExtractiveSynthesizer()
    _, info = synthesizer.synthesize(question, sections)
    chosen = [image_key(im["path"], im["doc"]) for im in info.get("images", [])]
    gold = list(gold_images)
    out = {"images": chosen, "image_labels": [im.get("label", "") for im in info.get("images", [])],
           "image_hit": image_hit(chosen, gold), "image_precision": image_precision(chosen, gold),
           # the best image_hit any choice could get from these sections (retrieval's ceiling)
           "image_reachable": image_hit([image_key(im.path, s.doc) for s in sections for im in s.images], gold)}
    if gold_by_caption is not None:
        out["image_hit_by_caption"] = image_hit(chosen, list(gold_by_caption))
        out["image_precision_by_caption"] = image_precision(chosen, list(gold_by_caption))
    return out


def _mean(values) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return round(sum(vals) / len(vals), 4) if vals else None


def run_multimodal(index: SearchIndex, ks=(3, 5), *, synthesizer=None, reranker=None, queries: list[MMQuery] | None = None,
                   auto_filter: bool = True) -> dict:
    """Run the 20 questions offline and score sections and images at each k.

    Retrieval runs once per question at the largest k (the top 3 of a top-5 list are
    the top 3), synthesis (hence image choice) runs at each k on that k's sections.

    Returns:
        ``{"benchmark": "multimodal", "n", "settings", "results": {"3": {"hit", "recall",
        "context_chars_mean", "image_hit", "image_precision", "n_image_hit", "n_image_precision",
        "image_reachable", "image_hit_by_caption", "image_precision_by_caption", "images_chosen_mean",
        "wrong_doc_share"}, "5": …}, "per_question": […]}``
    """
    synthesizer = synthesizer or ExtractiveSynthesizer()
    threshold = getattr(synthesizer, "image_threshold", None)
    if threshold is None and isinstance(synthesizer, ExtractiveSynthesizer):
        threshold = DEFAULT_THRESHOLD
    queries = queries if queries is not None else load_multimodal(index.trees)
    kmax = max(ks)
    per_q = []
    for q in queries:
        r = index.retrieve(q.question, kmax, reranker=reranker, auto_filter=auto_filter)
        row = {"qid": q.qid, "question": q.question, "category": q.category, "papers": list(q.papers),
               "gold_sections": list(q.gold_sections), "gold_images": list(q.gold_images),
               "unmatched_sources": list(q.unmatched), "docs_filter": r.trace.docs_filter, "k": {}}
        for k in ks:
            secs = r.sections[:k]
            row["k"][str(k)] = {
                "sections": [s.section_id for s in secs],
                "hit": section_hit(secs, q.gold_sections, index.trees),
                "recall": section_recall(secs, q.gold_sections, index.trees),
                "context_chars": sum(len(s.text) for s in secs),
                **image_metrics(q.question, secs, q.gold_images, synthesizer=synthesizer,
                                gold_by_caption=q.gold_by_caption),
                "wrong_doc": sum(s.doc not in q.papers for s in secs),
            }
        per_q.append(row)
    results = {}
    for k in ks:
        rows = [p["k"][str(k)] for p in per_q]
        results[str(k)] = {
            "hit": _mean(r["hit"] for r in rows),
            "recall": _mean(r["recall"] for r in rows),
            "context_chars_mean": _mean(r["context_chars"] for r in rows),
            "image_hit": _mean(r["image_hit"] for r in rows),
            "image_precision": _mean(r["image_precision"] for r in rows),
            "n_image_hit": sum(r["image_hit"] is not None for r in rows),
            "n_image_precision": sum(r["image_precision"] is not None for r in rows),
            "image_reachable": _mean(r["image_reachable"] for r in rows),
            "image_hit_by_caption": _mean(r["image_hit_by_caption"] for r in rows),
            "image_precision_by_caption": _mean(r["image_precision_by_caption"] for r in rows),
            "images_chosen_mean": _mean(len(r["images"]) for r in rows),
            "wrong_doc_share": round(sum(r["wrong_doc"] for r in rows) / max(1, k * len(rows)), 4),
        }
    return {"benchmark": "multimodal", "n": len(per_q),
            "settings": {"ks": list(ks), "synthesizer": getattr(synthesizer, "name", type(synthesizer).__name__),
                         "image_threshold": threshold,
                         "max_images": getattr(synthesizer, "max_images", None), "auto_filter": auto_filter,
                         "embedder": index.embedder.name},
            "results": results, "per_question": per_q}


def main(argv: list[str] | None = None) -> int:
    """``python -m ppkit.bench.mm_eval [--k 3 --k 5] [--json OUT]``: the 20 questions offline over the papers' index."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m ppkit.bench.mm_eval", description=main.__doc__)
    p.add_argument("--k", type=int, action="append", help="sections per answer (repeatable; default 3 and 5)")
    p.add_argument("--json", help="write the full results (with per-question rows) here")
    args = p.parse_args(argv)
    index = reference_index("papers", config=Config.from_env(online=False), progress=False)
    res = run_multimodal(index, ks=tuple(args.k or (3, 5)))
    if args.json:
        Path(args.json).write_text(json.dumps(res, ensure_ascii=False, indent=1), encoding="utf-8")
    print(json.dumps({"benchmark": res["benchmark"], "n": res["n"], "settings": res["settings"],
                      "results": res["results"]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
