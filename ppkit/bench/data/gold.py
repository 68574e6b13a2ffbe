"""Gold sections for each question set, as qrels (``{qid: {section_id: 1}}``).

A gold section is a heading line: ``"AMD#0114"`` names the heading of
node 0114 in the AMD 10-K. Every loader here returns a :class:`GoldSet` that says,
beside the qrels, where each gold section came from and which questions could
not be given gold, so nothing is dropped silently.

* **Comprehensive**: the node ids that the reference k=5 answers cite, inline
  (``ID: 0085``) and under ``Sources:`` (all 40 of those answers were judged
  correct). A source cited by name only (``(Source: Consolidated Balance Sheets)``)
  is matched to the retrieved node with that title. Node ids in the logs are the
  same pre-order heading ids ppkit assigns; the loader checks the logged title
  against the tree for every cited node.
* **FinanceBench**: the sections holding the annotated evidence
  (:func:`ppkit.bench.data.evidence.map_evidence`).
* **Multimodal**: the reference run's source breadcrumbs mapped onto the papers'
  trees, and its images (``images_found``) as image gold.

``docs`` is anything with ``trees`` (doc -> Tree) and ``lines(doc)``: an
:class:`ppkit.Index` or a :class:`ppkit.bench.data.loaders.MarkdownDocs`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ...core.data import benchmark_path
from ...core.ids import ROOT_ID, section_id, split_section_id
from ...documents.anchors import find_captions
from ...documents.metadata import metadata_from_name
from ...documents.images import caption_key
from ...documents.titles import normalize_title
from .evidence import DocText, map_evidence, map_evidence_on_page
from .loaders import norm_name, resolve_doc_name
from ..measures.metrics import image_key
from .reference import clean_breadcrumb, load_run_logs

__all__ = ["GoldSet", "comprehensive_gold", "financebench_gold", "multimodal_gold", "map_breadcrumb", "gold_lines"]


@dataclass(frozen=True)
class GoldSet:
    """Gold sections for a question set.

    Attributes:
        qrels: ``{qid: {section_id: 1}}`` (the BEIR/ranx shape).
        docs: ``{qid: indexed document name(s)}`` the question is about.
        provenance: ``{qid: {section_id: how it was found}}``.
        unmapped: ``{qid: reason}`` for questions with no gold at all.
        notes: ``{qid: [remarks]}``: partial problems (an evidence text that could not
            be placed while others were, a title that disagreed with the tree, ...).
        details: per question extra data (evidence matches, cited ids, ...).
        images: ``{qid: {image key: 1}}`` image gold (multimodal only).
        images_by_caption: ``{qid: [image keys]}``: every image whose caption the reference's labels
            name (multimodal only; see :mod:`ppkit.bench.measures.metrics`).
        evidence: ``{qid: [(text, figures only?)]}``: the gold evidence whose features
            ``evidence_recall`` looks for in the text sent (:func:`ppkit.bench.measures.metrics.evidence_features`):
            FinanceBench's ``evidence_text`` (numbers and key phrases), the Comprehensive reference
            answer (its figures only).
    """

    qrels: dict[str, dict[str, int]]
    docs: dict[str, list[str]]
    provenance: dict[str, dict[str, str]] = field(default_factory=dict)
    unmapped: dict[str, str] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)
    details: dict[str, dict] = field(default_factory=dict)
    images: dict[str, dict[str, int]] = field(default_factory=dict)
    images_by_caption: dict[str, list[str]] = field(default_factory=dict)
    evidence: dict[str, list[tuple[str, bool]]] = field(default_factory=dict)

    @property
    def coverage(self) -> float:
        """Share of questions that have gold."""
        n = len(self.qrels) + len(self.unmapped)
        return len(self.qrels) / n if n else 0.0

    def report(self) -> dict:
        """A plain summary: counts, coverage, the unmapped questions and the notes."""
        return {"questions": len(self.qrels) + len(self.unmapped), "with_gold": len(self.qrels),
                "coverage": round(self.coverage, 4), "gold_sections": sum(len(v) for v in self.qrels.values()),
                "unmapped": dict(self.unmapped), "notes": {k: v for k, v in self.notes.items() if v}}

    def __repr__(self) -> str:
        return (f"GoldSet({len(self.qrels)} questions with gold, {len(self.unmapped)} unmapped, "
                f"{sum(len(v) for v in self.qrels.values())} gold sections)")


def gold_lines(qrels: dict[str, int], trees) -> list[tuple[str, str, int, int]]:
    """``[(section_id, doc, heading line, end of own text)]`` of one question's gold sections."""
    out = []
    for sid in qrels:
        doc, nid = split_section_id(sid)
        n = trees[doc][nid]
        out.append((sid, doc, n.line_start, n.text_end))
    return out


def _match_name(name: str, nodes: list[tuple[str, str]], tree) -> list[str]:
    """Node ids among ``nodes`` ((id, breadcrumb)) whose title the source ``name`` ends with; else a unique tree title."""
    key = normalize_title(name)
    hits = []
    for nid, crumb in nodes:
        title = normalize_title(clean_breadcrumb(crumb)[-1])
        if title and (key == title or key.endswith(" " + title)):
            hits.append((len(title), nid))
    if hits:
        best = max(h[0] for h in hits)
        return [nid for ln, nid in hits if ln == best]
    found = [n.node_id for n in tree.headings() if normalize_title(n.title) == key]
    return found if len(found) == 1 else []


def comprehensive_gold(questions: list[dict], logs_dir, docs) -> GoldSet:
    """Gold sections of the Comprehensive questions from the reference k=5 run logs.

    Args:
        questions: from :func:`ppkit.bench.data.loaders.load_comprehensive`.
        logs_dir: the folder of the reference k=5 logs (``benchmarks/comprehensive_k5``).
        docs: the 10-K documents (an Index or MarkdownDocs).

    Returns:
        A :class:`GoldSet`; ``details[qid]`` holds the cited ids, the reference's
        retrieved nodes and any name citations.

    >>> gold.qrels["AMD-1"]  # doctest: +SKIP
    {'AMD#0114': 1, 'AMD#0062': 1}
    """
    logs = load_run_logs(logs_dir)
    by_company: dict[str, dict] = {}  # indexed doc -> {qno: entry}
    for company, log in logs.items():
        doc = resolve_doc_name(company, list(docs.trees))
        if doc is not None:
            by_company[doc] = {e["qno"]: e for e in log["entries"]}
    qrels, qdocs, prov, unmapped, notes, details, evidence = {}, {}, {}, {}, {}, {}, {}
    for q in questions:
        qid = q["qid"]
        doc = resolve_doc_name(q["doc"], list(docs.trees))
        qdocs[qid] = [doc] if doc else []
        notes[qid] = []
        if doc is None:
            unmapped[qid] = f"document {q['doc']!r} is not among {list(docs.trees)}"
            continue
        entry = by_company.get(doc, {}).get(q["qno"])
        if entry is None:
            unmapped[qid] = f"no reference k=5 log entry for {doc} Q{q['qno']} in {logs_dir}"
            continue
        tree = docs.trees[doc]
        logged = dict(entry["nodes"])  # node id -> logged breadcrumb
        for nid, crumb in entry["nodes"]:  # the log's titles must name the same headings as ours
            if nid in tree.nodes and normalize_title(clean_breadcrumb(crumb)[-1]) != normalize_title(tree[nid].title):
                notes[qid].append(f"logged title of {nid} {crumb!r} differs from the tree's {tree[nid].title!r}")
        found: dict[str, str] = {}
        for nid in entry["cited"]["ids"]:
            if nid not in tree.nodes:
                notes[qid].append(f"cited id {nid} is not a heading of {doc}")
                continue
            if nid not in logged:
                notes[qid].append(f"cited id {nid} was not among the reference's retrieved nodes")
            found.setdefault(section_id(doc, nid), "cited id")
        for name in entry["cited"]["names"]:
            ids = _match_name(name, entry["nodes"], tree)
            if not ids:
                notes[qid].append(f"source named {name!r} matches no retrieved node")
            for nid in ids:
                found.setdefault(section_id(doc, nid), f"cited by name {name!r}")
        details[qid] = {"cited_ids": entry["cited"]["ids"], "cited_names": entry["cited"]["names"],
                        "reference_nodes": [nid for nid, _ in entry["nodes"]]}
        evidence[qid] = [(entry["response"], True)]
        if not found:
            unmapped[qid] = "the reference answer cites no node id or resolvable source name"
            continue
        qrels[qid] = {sid: 1 for sid in found}
        prov[qid] = found
    return GoldSet(qrels, qdocs, prov, unmapped, notes, details, evidence=evidence)


def financebench_gold(questions: list[dict], docs, *, aliases: dict | None = None) -> GoldSet:
    """Gold sections of FinanceBench questions: where their evidence texts live.

    A question about a document that ``docs`` does not hold is unmapped (say which);
    an evidence text that cannot be placed is listed in ``notes`` and, when none of a
    question's evidence could be placed, the question is unmapped.
    """
    names = list(docs.trees)
    meta = {}
    if hasattr(docs, "manifest"):
        meta = {d["doc"]: d.get("metadata", {}) for d in docs.manifest.get("documents", [])}
    doc_texts: dict[str, DocText] = {}
    qrels, qdocs, prov, unmapped, notes, details, evidence = {}, {}, {}, {}, {}, {}, {}
    for q in questions:
        qid = q["qid"]
        notes[qid] = []
        qdoc = resolve_doc_name(q["doc"], names, aliases, meta)
        if qdoc is None and not metadata_from_name(q["doc"]).get("fiscal_year"):
            # a set that names only the company (the four 10-Ks); a dated filing name that matched no
            # document means that filing is not indexed, never another year's filing of the company
            qdoc = resolve_doc_name(q.get("company", ""), names, aliases, meta)
        qdocs[qid] = [qdoc] if qdoc else []
        found: dict[str, str] = {}
        matches = []
        if not q["evidence"]:
            unmapped[qid] = "no evidence annotated"
            continue
        for i, ev in enumerate(q["evidence"]):
            doc = resolve_doc_name(ev["doc"], names, aliases, meta) or qdoc
            if doc is None:
                notes[qid].append(f"evidence {i}: document {ev['doc']!r} is not indexed")
                matches.append({"evidence": i, "doc": ev["doc"], "mapped": False, "reason": "document not indexed"})
                continue
            if doc not in doc_texts:
                doc_texts[doc] = DocText(docs.lines(doc))
            m = map_evidence(ev["text"], docs.trees[doc], docs.lines(doc), doc_text=doc_texts[doc])
            span = _page_span(docs, doc, ev.get("page"))
            if not m.mapped and span:  # a PDF's page map narrows the search to the evidence page
                m = map_evidence_on_page(ev["text"], docs.trees[doc], docs.lines(doc), *span)
            matches.append({"evidence": i, "doc": doc, "page": ev.get("page"), **m.to_dict()})
            if not m.mapped:
                notes[qid].append(f"evidence {i} ({doc}, page {ev.get('page')}): not placed: {m.reason}")
                continue
            for nid in m.node_ids:
                found.setdefault(section_id(doc, nid), f"evidence {i} ({m.kind}, covered {m.covered:.2f})")
        details[qid] = {"evidence": matches}
        evidence[qid] = [(ev["text"], False) for ev in q["evidence"] if ev["text"].strip()]
        if not found:
            unmapped[qid] = "; ".join(notes[qid]) or "no evidence could be placed"
            continue
        qrels[qid] = {sid: 1 for sid in found}
        prov[qid] = found
    return GoldSet(qrels, qdocs, prov, unmapped, notes, details, evidence=evidence)


def _page_span(docs, doc: str, page) -> tuple[int, int] | None:
    """The first and last line of ``doc`` on the zero-based PDF ``page`` (FinanceBench's
    ``evidence_page_num``), from the index's page map; None without one."""
    if page is None or not hasattr(docs, "page_ranges"):
        return None
    spans = [(a, b) for p, a, b in docs.page_ranges(doc) if p == int(page) + 1]
    return (min(a for a, _ in spans), max(b for _, b in spans)) if spans else None


def map_breadcrumb(crumb: str, trees) -> list[tuple[str, str]]:
    """``[(doc, node_id)]`` a logged breadcrumb names: document by name (any case), then the
    node whose title path equals the crumb's (markup stripped), else the nodes whose last
    titles match the crumb's tail (a breadcrumb may skip levels)."""
    parts = [normalize_title(p) for p in clean_breadcrumb(crumb)]
    doc = next((d for d in trees if norm_name(d) == norm_name(parts[0])), None)
    if doc is None:
        doc = resolve_doc_name(parts[0], list(trees))
    if doc is None:
        return []
    tree = trees[doc]
    want = parts[1:]
    if not want:
        return [(doc, ROOT_ID)]
    exact = [n.node_id for n in tree.headings() if [normalize_title(t) for t in n.path[1:]] == want]
    if exact:
        return [(doc, nid) for nid in exact]
    # tail match: the last title equal, and the earlier crumb titles appear in order among the ancestors
    out = []
    for n in tree.headings():
        path = [normalize_title(t) for t in n.path[1:]]
        if path[-1] != want[-1]:
            continue
        it = iter(path[:-1])
        if all(any(p == w for p in it) for w in want[:-1]):
            out.append((doc, n.node_id))
    return out


def _caption_images(key: str, label: str, trees) -> list[str]:
    """The images of the reference label's caption (``"Galore - Table 7: …"`` -> every image captioned
    Table 7 in Galore); the image itself when the label names no caption or none matches."""
    doc = key.split("/", 1)[0]
    caps = find_captions(label.split(" - ", 1)[-1])
    if not caps or doc not in trees:
        return [key]
    want = caps[0][:2]
    found = [image_key(doc, im.path) for n in trees[doc] for im in n.images if caption_key(im.label) == want]
    return found or [key]


def multimodal_gold(questions: list[dict], reference_log, docs) -> GoldSet:
    """Gold sections and images of the multimodal queries from the reference run.

    Args:
        questions: from :func:`ppkit.bench.data.loaders.load_multimodal_queries`.
        reference_log: ``multimodal_reference_log.json`` (path or the parsed dict).
        docs: the papers (an Index or MarkdownDocs).

    Returns:
        A :class:`GoldSet` whose ``images`` holds ``{qid: {"Galore/tables/fileoutpart157.png": 1}}``,
        ``images_by_caption`` the images the reference's labels name by caption, and
        ``details[qid]["image_nodes"]`` the node each gold image's link sits in.
    """
    log = reference_log if isinstance(reference_log, dict) else json.loads(Path(reference_log).read_text("utf-8"))
    by_id = {int(r["id"]): r for r in log.get("results", [])}
    trees = docs.trees
    qrels, qdocs, prov, unmapped, notes, details, images = {}, {}, {}, {}, {}, {}, {}
    images_by_caption: dict[str, list[str]] = {}
    for q in questions:
        qid = q["qid"]
        notes[qid] = []
        qdocs[qid] = [d for d in (resolve_doc_name(x, list(trees)) for x in q["docs"]) if d]
        r = by_id.get(q["qno"])
        if r is None:
            unmapped[qid] = f"query {q['qno']} is not in the reference log"
            continue
        found: dict[str, str] = {}
        for crumb in r.get("sources", []):
            hits = map_breadcrumb(crumb, trees)
            if not hits:
                notes[qid].append(f"source {crumb!r} matches no heading")
            elif len(hits) > 1:
                notes[qid].append(f"source {crumb!r} matches {len(hits)} headings; all kept")
            for doc, nid in hits:
                found.setdefault(section_id(doc, nid), f"reference source {crumb!r}")
        imgs: dict[str, int] = {}
        image_nodes: dict[str, str | None] = {}
        for im in r.get("images_found", []):
            doc = next((d for d in trees if f"/{d.lower()}/" in im["path"].replace("\\", "/").lower()), None)
            if doc is None:
                notes[qid].append(f"image {im['path']!r} is in no indexed paper")
                continue
            key = image_key(doc, im["path"])
            imgs[key] = 1
            rel = key.split("/", 1)[1]
            owner = next((n.node_id for n in trees[doc] for x in n.images if x.path.replace("\\", "/") == rel), None)
            image_nodes[key] = section_id(doc, owner) if owner else None
            if owner is None:
                notes[qid].append(f"image {key} is not linked from the paper's Markdown")
        labels = {image_key(d, im["path"]): im.get("label", "") for im in r.get("images_found", [])
                  for d in trees if f"/{d.lower()}/" in im["path"].replace("\\", "/").lower()}
        by_caption: list[str] = []
        for key, label in labels.items():
            by_caption += [k for k in _caption_images(key, label, trees) if k not in by_caption]
        details[qid] = {"sources": r.get("sources", []), "image_nodes": image_nodes,
                        "image_labels": labels}
        if imgs:
            images[qid] = imgs
            images_by_caption[qid] = by_caption
        if not found:
            unmapped[qid] = "no reference source could be mapped onto a heading"
            continue
        qrels[qid] = {sid: 1 for sid in found}
        prov[qid] = found
    return GoldSet(qrels, qdocs, prov, unmapped, notes, details, images, images_by_caption)


def _sibling(questions: Path, name: str, explicit: str | None, data_root: Path | None = None) -> Path:
    if explicit:
        return Path(explicit)
    near = questions.resolve().parent / name
    return near if near.exists() else benchmark_path(name, data_root)


def load_gold(fmt: str, questions: list[dict], path: Path, docs, args=None, data_root: Path | None = None):
    """The gold set for a question file of format ``fmt`` (used by the CLI and notebooks)."""
    if fmt == "comprehensive":
        return comprehensive_gold(questions, _sibling(path, "comprehensive_k5",
                                                           getattr(args, "reference_logs", None), data_root), docs)
    if fmt == "financebench":
        return financebench_gold(questions, docs)
    return multimodal_gold(questions, _sibling(path, "multimodal_reference_log.json",
                                                    getattr(args, "reference_log", None), data_root), docs)
