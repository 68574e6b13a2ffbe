"""One document's sections as a comparison sees them: every heading with text of its own, and the containers.

A **section** is the text from a heading to the next heading of any level (what a heading-chunking tool sees,
and what a person aligning two documents reads): its own text, not its subtree. A **container** is a heading
with no text of its own and sections below it ("Article 4. REPRESENTATIONS AND WARRANTIES" followed by its
numbered sections); it is paired through its children (:mod:`ppkit.compare.align`). The document root counts
as a section when the document has text before its first heading (a preamble).

For each section :class:`DocSections` holds its ref (title, breadcrumb, heading line to last line of its own
text), its text as the index renders it (HTML tables as pipe rows), its parent and its place in the document,
and a text vector: the mean of the stored chunk vectors of the indexed section that holds it (a section the
noise filter left out, such as "References", has none and gets zeros; nothing is embedded here).

It does not score or pair sections (:mod:`ppkit.compare.signals`, :mod:`ppkit.compare.align`).
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from ..core.ids import ROOT_ID
from ..core.text import clip
from ..documents.titles import normalize_title
from .types import SectionRef

__all__ = ["DocSections", "is_exhibit", "EXCERPT_CHARS"]

EXCERPT_CHARS = 300  # characters of a section's text shown in a report
_SPACE = re.compile(r"[\s|*#_`>-]+")
_EXHIBIT = re.compile(r"^(?:(?:part|item) [\divxlc]+[a-z]? )*exhibit")  # on a normalised title


def is_exhibit(breadcrumb_titles: list[str] | tuple[str, ...]) -> bool:
    """Whether a section is (inside) an exhibit: a title on its path (the document's name left out) starts with
    "Exhibit", after a Part or Item number ("EXHIBIT H - Competitive Bid Quote", "EXHIBITA-2", a 10-K's "Item 15.
    Exhibits and Financial Statement Schedules").

    >>> is_exhibit(["Deal", "EXHIBIT B", "FORM OF NOTICE"]), is_exhibit(["10-K", "Item 15. Exhibits, Schedules"])
    (True, True)
    >>> is_exhibit(["Deal", "Section 7.01 Liens"]), is_exhibit(["Deal", "Section 2 Exhibits to this Agreement"])
    (False, False)
    """
    return any(_EXHIBIT.match(normalize_title(t)) for t in breadcrumb_titles[1:])


class DocSections:
    """The sections and containers of document ``doc`` of ``index`` (see the module)."""

    def __init__(self, index, doc: str):
        self.index, self.doc = index, doc
        self.tree = tree = index.trees[doc]
        self.units = index.units(doc)  # node_id -> (first, last line) of each indexed section
        self.nodes: list[str] = []  # sections with text of their own, in document order
        self.containers: list[str] = []  # headings without text of their own that have sections below them
        self._texts: dict[str, str] = {}
        for n in tree:
            own = self._own_text(n.node_id)
            if _SPACE.sub("", own):
                self.nodes.append(n.node_id)
                self._texts[n.node_id] = own
            elif n.children and n.node_id != ROOT_ID:
                self.containers.append(n.node_id)
        self.position = {nid: i / max(1, len(self.nodes) - 1) for i, nid in enumerate(self.nodes)}
        self.refs = {nid: SectionRef(doc, nid, self.title(nid), tree[nid].breadcrumb, tree[nid].line_start,
                                     tree[nid].text_end) for nid in self.nodes + self.containers}
        self._vectors: dict[str, np.ndarray] = {}

    def _own_text(self, nid: str) -> str:
        n = self.tree[nid]
        first = n.line_start if nid == ROOT_ID else n.line_start + 1  # the root has no heading line
        return self.index.rendered_text(self.doc, first, n.text_end) if n.text_end >= first else ""

    def title(self, nid: str) -> str:
        """The section's title (the document's name for a preamble)."""
        return self.tree[nid].title

    def text(self, nid: str) -> str:
        """The section's own text, its heading line left out (a container's: empty)."""
        return self._texts.get(nid, "")

    def parent(self, nid: str) -> str:
        """The node id of the heading above (``0000``, the root, for a top heading and for the root itself)."""
        return self.tree[nid].parent_id or ROOT_ID

    def subtree_text(self, nid: str) -> str:
        """The text of the section and every section below it."""
        n = self.tree[nid]
        return "\n".join(self.text(x) for x in self.nodes if n.line_start <= self.tree[x].line_start <= n.subtree_end)

    def sections_under(self, nid: str) -> list[str]:
        """The sections (with text) below heading ``nid``, in order."""
        n = self.tree[nid]
        return [x for x in self.nodes if x != nid and n.line_start <= self.tree[x].line_start <= n.subtree_end]

    def ref(self, nid: str) -> SectionRef:
        """The section's ref with the head of its text as excerpt."""
        return replace(self.refs[nid], excerpt=clip(self.text(nid), EXCERPT_CHARS))

    def unit_of(self, nid: str) -> str | None:
        """The indexed section holding ``nid``'s heading (itself, or the unit a short section was folded into)."""
        if nid in self.units:
            return nid
        line = self.tree[nid].line_start
        return next((u for u, (a, b) in self.units.items() if a <= line <= b), None)

    def vector(self, nid: str) -> np.ndarray:
        """The normalised mean of the stored chunk vectors of :meth:`unit_of` (zeros when there is none)."""
        if nid not in self._vectors:
            unit = self.unit_of(nid)
            ids = np.asarray([c.chunk_id for c in self.index.chunks_of(self.doc, unit)] if unit else [], np.int64)
            v = self.index.store.vectors(ids).mean(axis=0) if len(ids) else np.zeros(self.index.embedder.dim)
            norm = float(np.linalg.norm(v))
            self._vectors[nid] = (v / norm if norm else v).astype(np.float32)
        return self._vectors[nid]

    def matrix(self, nids: list[str] | None = None) -> np.ndarray:
        """The text vectors of ``nids`` (default: every section), one row each."""
        nids = self.nodes if nids is None else nids
        return np.stack([self.vector(n) for n in nids]) if nids else np.zeros((0, self.index.embedder.dim))

    def exhibit(self, nid: str) -> bool:
        """Whether the section is (inside) an exhibit (:func:`is_exhibit`)."""
        return is_exhibit(self.tree[nid].path)
