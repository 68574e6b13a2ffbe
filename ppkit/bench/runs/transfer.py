"""Carry gold sections from the reference Markdown onto another extraction of the same filing.

Gold sections are heading lines of the reference Markdown (``"Boeing#0107"``). To
benchmark an index built from another extraction of the same PDF (the offline
extractor's Markdown, raw or level-repaired), each gold heading must be found in
the other document: the heading there that covers the same text. Two signals are
used, and both are recorded:

* **Titles, in order.** The two documents' headings are aligned by normalised title
  (:func:`ppkit.documents.titles.normalize_title`) as a longest common subsequence, the same
  in-order alignment as :func:`ppkit.documents.treecheck.heading_agreement`, so a repeated
  title (``Revenues`` under each segment) pairs with its own occurrence.
* **Text.** The gold section's own text (heading to next heading) is placed in the
  other document by its rare word 8-grams and distinctive numbers, exactly as
  FinanceBench evidence is (:func:`ppkit.bench.data.evidence.map_evidence`); the node
  whose own text holds most of it is where the text went.

Decision for one gold heading (``how`` in the result):

=====================  ==============================================================
``title+text``         aligned by title, and the text lies in that heading's own text or
                       in its span (up to the next aligned heading: an extractor that
                       split the section into more headings); a repeated title aligned
                       to another occurrence moves to the occurrence holding the text
``title``              aligned by title; the text could not be placed (too little
                       text) or was placed elsewhere (said in ``note``)
``similar title+text`` no exact title, but a heading between the aligned neighbours
                       whose title contains the gold title or is contained in it
                       (``The Boeing Company and Subsidiaries Consolidated Statements of
                       Cash Flows`` for ``Consolidated Statements of Cash Flows``), and
                       the text agrees
``similar title``      such a heading alone, the text not placed
``text``               no title: the node whose own text holds the gold text
(unmapped)             none of these: listed with the reason, never dropped
=====================  ==============================================================

The result names the indexed documents (``doc_map`` reference -> target name), so
the transferred gold plugs into :func:`ppkit.bench.runs.harness.run_retrieval_bench`
unchanged. Repair never moves a heading line or changes a node id, so the gold
transferred onto a raw extraction names the same headings in its repaired copy.

This module maps gold; it does not build indexes or run the benchmark.
"""

from __future__ import annotations

import bisect
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ...core import data
from ...core.errors import InvalidInput, NotFound
from ...core.ids import ROOT_ID, section_id, split_section_id
from ...documents.titles import normalize_title
from ...documents.treecheck import lcs_pairs
from ...indexing.index import SearchIndex
from ..data.evidence import DocText, map_evidence
from ..data.gold import GoldSet, load_gold
from .harness import MODES, BenchPlan, run_retrieval_bench
from ..data.loaders import MarkdownDocs, load_questions, resolve_doc_name
from .results import RetrievalBench

__all__ = ["SectionTransfer", "TransferReport", "transfer_sections", "transfer_gold", "reference_docs_for",
           "gold_from_reference", "run_transfer_benchmark"]

HOWS = ("title+text", "title", "similar title+text", "similar title", "text")


@dataclass(frozen=True)
class SectionTransfer:
    """Where one reference section went in the other document.

    Attributes:
        source: the reference section id (``"Boeing#0107"``).
        target: the section id in the other document, ``None`` when unmapped.
        how: one of :data:`HOWS` (``""`` when unmapped).
        title / target_title: the two headings' display titles.
        text_found: share of the gold text's features (8-grams, numbers) found in the other document.
        text_nodes: where the text was placed, best first (node ids of the other document).
        note: disagreements and reasons (empty when title and text agree).
    """

    source: str
    target: str | None
    how: str
    title: str
    target_title: str = ""
    text_found: float = 0.0
    text_nodes: tuple[str, ...] = ()
    note: str = ""

    @property
    def mapped(self) -> bool:
        return self.target is not None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["text_nodes"] = list(self.text_nodes)
        d["text_found"] = round(self.text_found, 3)
        return d

    def __repr__(self) -> str:
        to = f"{self.target} ({self.how})" if self.mapped else f"UNMAPPED: {self.note}"
        return f"SectionTransfer({self.source} {self.title!r} -> {to})"


@dataclass(frozen=True)
class TransferReport:
    """All transfers of a run: coverage, how each was found, what was not.

    Attributes:
        transfers: ``{source section id: SectionTransfer}``.
        doc_map: ``{reference document: target document}``.
    """

    transfers: dict[str, SectionTransfer]
    doc_map: dict[str, str] = field(default_factory=dict)

    @property
    def coverage(self) -> float:
        """Share of the reference sections that were mapped."""
        n = len(self.transfers)
        return sum(t.mapped for t in self.transfers.values()) / n if n else 0.0

    @property
    def unmapped(self) -> dict[str, str]:
        """``{source section id: reason}``."""
        return {s: t.note for s, t in self.transfers.items() if not t.mapped}

    def by_how(self) -> dict[str, int]:
        out = {h: 0 for h in HOWS}
        for t in self.transfers.values():
            if t.mapped:
                out[t.how] += 1
        out["unmapped"] = len(self.unmapped)
        return out

    def summary(self) -> str:
        """One line: coverage and how the sections were found."""
        hows = ", ".join(f"{v} {k}" for k, v in self.by_how().items() if v)
        return (f"gold transferred from the reference Markdown: {sum(t.mapped for t in self.transfers.values())} of "
                f"{len(self.transfers)} sections ({self.coverage:.0%}): {hows}")

    def to_dict(self) -> dict:
        return {"sections": len(self.transfers), "coverage": round(self.coverage, 4), "by_how": self.by_how(),
                "unmapped": self.unmapped, "doc_map": dict(self.doc_map),
                "transfers": {s: t.to_dict() for s, t in self.transfers.items()}}

    def __repr__(self) -> str:
        return f"TransferReport({self.summary()})"


def _words(title: str) -> list[str]:
    return normalize_title(title).split()


def _contains(big: list[str], small: list[str]) -> bool:
    """Whether ``small`` occurs in ``big`` as a run of whole words."""
    n = len(small)
    return n > 0 and any(big[i:i + n] == small for i in range(len(big) - n + 1))


def _similar(a: str, b: str) -> bool:
    """Titles that differ by words around one of them (a company prefix, a ``TABLE 2:`` label).

    The shorter must keep at least two words (``Revenues`` inside any title would
    match everything)."""
    wa, wb = _words(a), _words(b)
    if wa == wb:
        return True
    small, big = (wa, wb) if len(wa) <= len(wb) else (wb, wa)
    return len(small) >= 2 and _contains(big, small)


def _overlaps(node, lo: int, hi: int) -> bool:
    """Whether a node's own text (heading to next heading) shares a line with ``lo..hi``."""
    return node.line_start <= hi and lo <= node.text_end


class _Aligned:
    """The in-order title alignment of two trees, with line windows between aligned headings."""

    def __init__(self, reference, target):
        self.ref = [n for n in reference.headings() if normalize_title(n.title)]
        self.tgt = [n for n in target.headings() if normalize_title(n.title)]
        pairs = lcs_pairs([normalize_title(n.title) for n in self.ref], [normalize_title(n.title) for n in self.tgt])
        self.pair = dict(pairs)  # index into ref -> index into tgt
        self.pos = {n.node_id: i for i, n in enumerate(self.ref)}  # ref node id -> index into ref
        self.anchors = sorted(self.pair)  # ref indices that have a partner
        self.n_lines = target.n_lines

    def partner(self, node_id: str):
        i = self.pos.get(node_id)
        return self.tgt[self.pair[i]] if i is not None and i in self.pair else None

    def window(self, node_id: str) -> tuple[int, int]:
        """Target lines between the partners of the nearest aligned headings before and after ``node_id``
        (exclusive of the earlier partner's heading line: it is that heading, not this one)."""
        i = self.pos[node_id]
        k = bisect.bisect_left(self.anchors, i)
        before = [a for a in self.anchors[:k] if a != i]
        after = [a for a in self.anchors[k:] if a != i]
        lo = self.tgt[self.pair[before[-1]]].line_start + 1 if before else 1
        hi = self.tgt[self.pair[after[0]]].line_start - 1 if after else self.n_lines
        return lo, hi


def _transfer_one(sid: str, node, ref_lines: list[str], target, tgt_doc: str, tgt_lines: list[str],
                  aligned: _Aligned, doc_text: DocText) -> SectionTransfer:
    if node.node_id == ROOT_ID:  # text before the first heading: the other document's too
        return SectionTransfer(sid, section_id(tgt_doc, ROOT_ID), "title", node.title, target.root.title)
    text = "\n".join(ref_lines[node.line_start - 1:node.text_end])
    m = map_evidence(text, target, tgt_lines, doc_text=doc_text)
    placed = m.node_ids if m.mapped else ()
    why_not = "" if m.mapped else f"text not placed ({m.reason})"

    def result(nid: str, how: str, note: str = "") -> SectionTransfer:
        return SectionTransfer(sid, section_id(tgt_doc, nid), how, node.title, target[nid].title, m.found,
                               tuple(placed), note)

    partner = aligned.partner(node.node_id) if node.node_id in aligned.pos else None
    if partner is not None:
        if not placed:
            return result(partner.node_id, "title", why_not)
        if partner.node_id in placed:
            return result(partner.node_id, "title+text")
        # the span of the partner: up to the next aligned heading (an extractor that split the section)
        _, hi = aligned.window(node.node_id)
        if any(_overlaps(target[n], partner.line_start, hi) for n in placed):
            return result(partner.node_id, "title+text", f"text spread over the headings after it: {', '.join(placed)}")
        same = [n for n in placed if normalize_title(target[n].title) == normalize_title(node.title)]
        if same:  # a repeated title aligned to the wrong occurrence: the text tells which
            return result(same[0], "title+text", f"title aligned to {partner.node_id}, the text is under {same[0]}")
        return result(partner.node_id, "title", f"text placed elsewhere: {', '.join(placed)}")

    lo, hi = aligned.window(node.node_id) if node.node_id in aligned.pos else (1, target.n_lines)
    similar = [n.node_id for n in target.headings() if lo <= n.line_start <= hi and _similar(n.title, node.title)]
    agree = [n for n in similar if n in placed]
    if agree:
        return result(agree[0], "similar title+text")
    if similar and not placed:
        note = why_not + (f"; {len(similar)} similar titles, took the first" if len(similar) > 1 else "")
        return result(similar[0], "similar title", note)
    if placed:
        first = placed[0]
        note = "" if _overlaps(target[first], lo, hi) else \
            f"outside the window between the aligned neighbours (lines {lo}-{hi})"
        if similar:
            note = "; ".join(x for x in (note, f"similar title(s) {', '.join(similar)} hold none of the text") if x)
        return result(first, "text", note)
    return SectionTransfer(sid, None, "", node.title, text_found=m.found,
                           note=f"no heading with this title; {why_not or 'text not placed'}")


def _doc_map(reference_docs, target_docs, doc_map: dict[str, str] | None) -> dict[str, str]:
    if doc_map is not None:
        return dict(doc_map)
    out = {}
    for d in reference_docs.trees:
        t = d if d in target_docs.trees else resolve_doc_name(d, list(target_docs.trees))
        if t is not None:
            out[d] = t
    return out


def transfer_sections(section_ids, reference_docs, target_docs, *, doc_map: dict[str, str] | None = None
                      ) -> TransferReport:
    """Map reference sections onto the headings of another extraction.

    Args:
        section_ids: reference section ids (``"Boeing#0107"``).
        reference_docs / target_docs: anything with ``trees`` and ``lines(doc)`` (an Index or
            :class:`ppkit.bench.data.loaders.MarkdownDocs`).
        doc_map: ``{reference doc: target doc}``; default: the same name, else
            :func:`ppkit.bench.data.loaders.resolve_doc_name`.

    Returns:
        A :class:`TransferReport`; a section whose document has no counterpart, or
        whose heading and text cannot be found, is in it unmapped with the reason.

    >>> transfer_sections(["Boeing#0107"], ref, offline).transfers["Boeing#0107"].target  # doctest: +SKIP
    'Boeing#0123'
    """
    dmap = _doc_map(reference_docs, target_docs, doc_map)
    cache: dict[str, tuple] = {}  # reference doc -> (aligned, DocText of the target)
    out: dict[str, SectionTransfer] = {}
    for sid in dict.fromkeys(section_ids):
        doc, nid = split_section_id(sid)
        if doc not in reference_docs.trees:
            raise NotFound(f"{sid}: {doc!r} is not among the reference documents {list(reference_docs.trees)}")
        node = reference_docs.trees[doc][nid]
        tgt_doc = dmap.get(doc)
        if tgt_doc is None or tgt_doc not in target_docs.trees:
            out[sid] = SectionTransfer(sid, None, "", node.title,
                                       note=f"no target document for {doc!r} among {list(target_docs.trees)}")
            continue
        if doc not in cache:
            cache[doc] = (_Aligned(reference_docs.trees[doc], target_docs.trees[tgt_doc]),
                          DocText(target_docs.lines(tgt_doc)))
        aligned, dt = cache[doc]
        out[sid] = _transfer_one(sid, node, reference_docs.lines(doc), target_docs.trees[tgt_doc], tgt_doc,
                                 target_docs.lines(tgt_doc), aligned, dt)
    return TransferReport(out, dmap)


def transfer_gold(gold: GoldSet, reference_docs, target_docs, *, doc_map: dict[str, str] | None = None
                  ) -> tuple[GoldSet, TransferReport]:
    """A gold set over the reference Markdown, re-expressed over another extraction.

    Args:
        gold: gold over ``reference_docs`` (:func:`ppkit.bench.data.gold.comprehensive_gold`, ...).
        reference_docs / target_docs / doc_map: as for :func:`transfer_sections`.

    Returns:
        ``(GoldSet over target_docs, TransferReport)``. A question keeps the sections that
        could be mapped (the others are in its ``notes``); a question none of whose
        sections could be mapped is ``unmapped`` with the reasons. Questions that had no
        gold stay unmapped. Image gold is not carried over (image paths are the extractor's).
    """
    report = transfer_sections([s for q in gold.qrels.values() for s in q], reference_docs, target_docs,
                               doc_map=doc_map)
    dmap = report.doc_map
    qrels, prov, unmapped, notes, details = {}, {}, dict(gold.unmapped), {}, {}
    docs = {qid: [dmap.get(d, d) for d in ds] for qid, ds in gold.docs.items()}
    for qid in gold.qrels:
        notes[qid] = list(gold.notes.get(qid, []))
        found: dict[str, str] = {}
        for sid in gold.qrels[qid]:
            t = report.transfers[sid]
            if not t.mapped:
                notes[qid].append(f"gold {sid} {t.title!r} not found in the other extraction: {t.note}")
                continue
            if t.target in found:
                notes[qid].append(f"gold {sid} maps onto {t.target} like another gold section of this question")
            found.setdefault(t.target, f"{sid} ({t.how})")
        details[qid] = {**gold.details.get(qid, {}), "reference_gold": list(gold.qrels[qid])}
        if not found:
            unmapped[qid] = "; ".join(n for n in notes[qid] if n.startswith("gold ")) or "no gold section mapped"
            continue
        qrels[qid] = {sid: 1 for sid in found}
        prov[qid] = found
    return GoldSet(qrels, docs, prov, unmapped, notes, details, evidence=dict(gold.evidence)), report


def reference_docs_for(target_docs, paths=None, data_root: Path | None = None) -> tuple[MarkdownDocs, dict[str, str]]:
    """The reference Markdown of the filings an index holds, and which is which.

    Args:
        target_docs: the index (or MarkdownDocs) built from another extraction.
        paths: reference Markdown files (default: the four reference 10-Ks and the five papers
            in the data folder); each is paired with the target document of its name (the same
            name, or one :func:`ppkit.bench.data.loaders.resolve_doc_name` resolves to it).

    Returns:
        ``(MarkdownDocs of the paired reference files, {reference doc: target doc})``.

    Raises:
        ValueError: no target document has a reference counterpart (says which names were tried).
    """
    if paths is None:
        paths = list(data.tenk_paths(data_root))
        try:
            paths += list(data.paper_paths(data_root))
        except data.DataNotFound:
            pass
    paths = [Path(p) for p in paths]
    names = [p.stem for p in paths]
    pairs: dict[str, str] = {}  # reference doc -> target doc
    for tdoc in target_docs.trees:
        rdoc = tdoc if tdoc in names else resolve_doc_name(tdoc, names)
        if rdoc is not None and rdoc not in pairs:
            pairs[rdoc] = tdoc
    if not pairs:
        raise InvalidInput(f"none of the indexed documents {list(target_docs.trees)} is a reference document "
                         f"({names}): name them like the reference (build_index(..., names=[...])) or pass the "
                         "reference Markdown files")
    keep = [(p, n) for p, n in zip(paths, names) if n in pairs]
    return MarkdownDocs([p for p, _ in keep], names=[n for _, n in keep]), pairs


def gold_from_reference(fmt: str, questions: list[dict], path, index: SearchIndex, args=None, *, reference_paths=None,
                        data_root: Path | None = None) -> tuple[GoldSet, TransferReport]:
    """Gold for an index built from another extraction: made over the reference Markdown, then transferred.

    Args:
        fmt / questions / path: as :func:`ppkit.bench.data.loaders.load_questions` returned them, and the file.
        index: the index (its documents named like the reference, e.g. ``AMEX``, ``Boeing``, ``PepsiCo``).
        args: CLI arguments (``reference_logs`` / ``reference_log``), if any.
        reference_paths: reference Markdown files (default: see :func:`reference_docs_for`).

    Returns:
        ``(GoldSet over the index's documents, TransferReport)``.
    """

    ref, dmap = reference_docs_for(index, reference_paths, data_root)
    return transfer_gold(load_gold(fmt, questions, Path(path), ref, args, data_root), ref, index, doc_map=dmap)


def run_transfer_benchmark(index: SearchIndex, questions_path, *, ks=(3, 5), modes=MODES,
                           reference_paths=None, progress: bool = False) -> RetrievalBench:
    """The retrieval benchmark on an index of another extraction, with gold carried over from the reference.

    The same as ``ppkit bench retrieval --questions FILE --index DIR --gold-from-reference
    --no-baselines``: the result of :func:`ppkit.bench.runs.harness.run_retrieval_bench` plus
    ``"transfer"`` (the :class:`TransferReport` as a dict).

    >>> run_transfer_benchmark(load_index(".ppkit/extract/index-raw"), "comprehensive_questions.xlsx")  # doctest: +SKIP
    """
    fmt, questions = load_questions(questions_path)
    gold, report = gold_from_reference(fmt, questions, questions_path, index, reference_paths=reference_paths)
    result = run_retrieval_bench(index, questions, gold, benchmark=fmt, plan=BenchPlan(tuple(ks), tuple(modes)),
                                 progress=progress)
    result = replace(result, questions_file=str(questions_path), format=fmt, transfer=report.to_dict())
    return result
