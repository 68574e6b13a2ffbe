"""The image channel: the figures and tables offered with the retrieved sections.

A section's images are not only the links that survived trimming. For each retrieved
section this module gathers, before anything is chosen (:mod:`ppkit.answer.images`):

* **anchor**: every image of the section's document whose figure or table number the question
  names (``Figure 5``), wherever it sits - resolved before, and independent of, any trimming;
* **in section**: every image linked from the section's own lines, sent or trimmed away;
* **discussed in section**: images whose figure the section's text names ("as shown in
  Figure 5"; papers often place a figure one section before the one that discusses it);
* **recalled**: image *records* - the caption plus the sentences that discuss the figure -
  matched directly against the question, so that a described figure is found even when its
  section is not among the k (the best ``max_recalled`` figures per document above ``min_share``; the files of
  one figure take one place and come together).

Anchor and recalled images are attached to the document's best-ranked section. What this module
does not do: decide what is shown (that is the selection's job), or look at pixels.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace

from ..core.text import stems
from ..documents.tree import Image
from ..indexing.index import SearchIndex
from .analyze import Analysis
from .types import ImageLink, Section

__all__ = ["link_images", "image_record_text", "record_match"]

_ORDER = ("anchor", "in section", "discussed in section", "recalled")


def image_record_text(image: Image) -> str:
    """What an image is about, in words: its caption label and the sentences that discuss it."""
    return f"{image.label or image.alt} {image.discussion}".strip()


def record_match(terms: set[str], text: str, idf: dict[str, float]) -> float:
    """Share of the question's idf weight found in ``text``'s stems (0..1)."""
    total = sum(idf.get(t, 0.0) for t in terms) or 1.0
    have = set(stems(text))
    return sum(idf.get(t, 0.0) for t in terms if t in have) / total


def _doc_images(index: SearchIndex, doc: str) -> list[tuple[str, Image]]:
    return [(n.node_id, im) for n in index.trees[doc] for im in n.images if im.problem is None and im.resolved]


def _recalled(terms: set[str], images: list[tuple[str, Image]], max_recalled: int,
              min_share: float) -> list[tuple[str, Image, float]]:
    records = [set(stems(image_record_text(im))) for _, im in images]
    n = max(1, len(records))
    df = Counter(t for r in records for t in r)
    idf = {t: math.log(1 + n / (1 + df[t])) for t in terms}
    scored = [(nid, im, record_match(terms, image_record_text(im), idf)) for nid, im in images]
    scored = [x for x in scored if x[2] >= min_share and x[1].kind != "formula"]
    out, places = [], []  # a figure of several files takes one place, and brings all its files
    for nid, im, score in sorted(scored, key=lambda x: -x[2]):
        place = im.figure or f"{nid}/{im.path}#{im.line}"
        if place not in places:
            if len(places) == max_recalled:
                continue
            places.append(place)
        out.append((nid, im, score))
    return out


def link_images(index: SearchIndex, question: str, sections: list[Section], *, max_recalled: int = 3,
                min_share: float = 0.25, analysis: Analysis | None = None) -> list[Section]:
    """``sections`` with their ``image_links`` filled in (new Section objects; the input is unchanged).

    >>> [l.via for l in link_images(index, "What does Table 1 show?", sections)[0].image_links]  # doctest: +SKIP
    [('anchor', 'in section'), ('in section',)]
    """
    analysis = analysis or Analysis.of(question)  # its anchors and match terms
    named = {(a.kind, a.number) for a in analysis.anchors if a.kind in ("figure", "table")}
    terms = set(analysis.terms)
    first_of_doc: dict[str, int] = {}
    for i, s in enumerate(sections):
        first_of_doc.setdefault(s.doc, i)
    links: list[dict[tuple[str, str], list]] = [{} for _ in sections]  # per section: (doc, path) -> [node, vias, score]

    def add(i: int, node_id: str, im: Image, via: str, score: float = 0.0) -> None:
        cur = links[i].setdefault((sections[i].doc, im.path + f"#{im.line}"), [node_id, [], 0.0, im])
        if via not in cur[1]:
            cur[1].append(via)
        cur[2] = max(cur[2], score)

    for doc, i0 in first_of_doc.items():
        images = _doc_images(index, doc)
        for nid, im in images:
            if im.figure and tuple(im.figure.split(" ", 1)) in named:
                add(i0, nid, im, "anchor")
        for nid, im, score in _recalled(terms, images, max_recalled, min_share):
            add(i0, nid, im, "recalled", score)
        for i, s in enumerate(sections):
            if s.doc != doc:
                continue
            inside = {n.node_id for n in index.trees[doc] if s.line_start <= n.line_start <= s.line_end}
            for nid, im in images:
                if s.line_start <= im.line <= s.line_end:
                    add(i, nid, im, "in section")
                elif inside.intersection(im.discussed_in):
                    add(i, nid, im, "discussed in section")
    out = []
    for s, linked in zip(sections, links):
        ordered = [ImageLink(im, nid, tuple(sorted(vias, key=_ORDER.index)), round(score, 4))
                   for nid, vias, score, im in linked.values()]
        ordered.sort(key=lambda link: (_ORDER.index(link.via[0]), link.image.line))
        out.append(replace(s, image_links=tuple(ordered)))
    return out
