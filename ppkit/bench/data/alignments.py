"""Human section alignments: which section of one document does the job of a section of another, by a person.

Two formats, one shape (:class:`GoldAlignment`):

* **by line** (``../shared/data/comparison/alignment/*.json``): ``{"a_doc", "b_doc", "pairs": [{"a_line",
  "a_title", "b": [{"line", "title", "confidence", "basis"?}], "note", "container"?, "front_matter"?}]}``, a
  section named by its heading's line in the Markdown;
* **by title and order** (``ppkit/bench/data/alignment/*.json``, written for an extraction whose line numbers may
  move): ``a_title``/``a_order`` and ``title``/``order`` in place of the lines, ``order`` the heading's 1-based
  place among the document's headings (its node id). A heading found at its order under another title is looked
  for under that title at the nearest order (an extraction that gained or lost a heading above it); one found
  nowhere is listed in ``unmapped``.

Confidence is ``sure`` or ``likely``; an empty ``b`` means the person found no counterpart. Containers
(headings with no text of their own) and front matter are kept but left out of the section-level score
(:mod:`ppkit.bench.measures.alignment`). The files under ``../shared/data`` are read, never copied.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ...core.data import data_dir
from ...core.errors import InvalidInput
from ...core.ids import node_id
from ...documents.titles import normalize_title

__all__ = ["GoldLink", "GoldRow", "GoldAlignment", "load_alignment", "default_alignments", "OWN_ALIGNMENTS"]

OWN_ALIGNMENTS = Path(__file__).with_name("alignment")  # alignments written for ppkit (the Corning 10-Ks)


@dataclass(frozen=True)
class GoldLink:
    """One counterpart a person named: B's node id, its title, ``sure`` or ``likely``, and ``span`` when it rests
    on text without a heading of its own."""

    node: str
    title: str
    confidence: str
    basis: str = ""


@dataclass(frozen=True)
class GoldRow:
    """A section of A (node id, title) with the counterparts a person named, best first."""

    a: str
    title: str
    b: tuple[GoldLink, ...]
    container: bool = False
    front_matter: bool = False
    note: str = ""

    @property
    def scored(self) -> bool:
        """Whether the row counts in a section-level score (not a container, not front matter)."""
        return not (self.container or self.front_matter)


@dataclass(frozen=True)
class GoldAlignment:
    """A person's alignment of document ``a_doc`` with ``b_doc``, mapped onto the index's trees."""

    name: str
    a_doc: str
    b_doc: str
    rows: tuple[GoldRow, ...]
    unmapped: tuple[str, ...] = ()  # headings of the file found in neither tree, as "A: title (order 12)"

    def __repr__(self) -> str:
        scored = [r for r in self.rows if r.scored]
        return (f"GoldAlignment({self.name!r}: {self.a_doc} -> {self.b_doc}, {len(scored)} sections scored, "
                f"{sum(len(r.b) for r in scored)} links, {len(self.unmapped)} unmapped)")


def _by_line(tree, line: int) -> str | None:
    return next((n.node_id for n in tree.headings() if n.line_start == line), None)


def _by_order(tree, title: str, order: int) -> str | None:
    """The heading at ``order`` when its title is ``title``, else the nearest heading of that title."""
    want = normalize_title(title)
    same = [n for n in tree.headings() if normalize_title(n.title) == want]
    exact = node_id(order)
    if any(n.node_id == exact for n in same):
        return exact
    return min(same, key=lambda n: abs(int(n.node_id) - order)).node_id if same else None


def load_alignment(path: str | Path, trees: dict, *, a_doc: str | None = None, b_doc: str | None = None
                   ) -> GoldAlignment:
    """The alignment at ``path`` mapped onto ``trees`` (``{doc: Tree}``, e.g. an index's ``trees``).

    ``a_doc``/``b_doc``: the trees' names of the file's documents when they differ (case-insensitive names are
    matched without them).
    """
    path = Path(path)
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise InvalidInput(f"cannot read the alignment {path} ({e}); give a JSON file in the format of "
                           "../shared/data/comparison/alignment/README.md") from None

    def doc(name: str, given: str | None) -> str:
        name = given or next((t for t in trees if t.casefold() == name.casefold()), name)
        if name not in trees:
            raise InvalidInput(f"the alignment {path.name} names {name!r}, which is not among the documents "
                               f"({', '.join(trees)}); index it first")
        return name

    a, b = doc(d["a_doc"], a_doc), doc(d["b_doc"], b_doc)
    unmapped: list[str] = []

    def find(side: str, tree, entry: dict, key: str) -> str | None:
        line, order = entry.get(f"{key}line"), entry.get(f"{key}order")
        title = entry.get(f"{key}title", "")
        nid = _by_line(tree, line) if line is not None else _by_order(tree, title, order) if order else None
        if nid is None:
            unmapped.append(f"{side}: {title} ({'line ' + str(line) if line is not None else 'order ' + str(order)})")
        return nid

    rows = []
    for p in d["pairs"]:
        na = find("A", trees[a], p, "a_")
        links = tuple(GoldLink(nb, x.get("title", ""), x.get("confidence", "sure"), x.get("basis", ""))
                      for x in p.get("b", []) if (nb := find("B", trees[b], x, "")) is not None)
        if na is not None:
            rows.append(GoldRow(na, p.get("a_title", ""), links, bool(p.get("container")),
                                bool(p.get("front_matter")), p.get("note", "")))
    return GoldAlignment(path.stem, a, b, tuple(rows), tuple(unmapped))


def default_alignments() -> dict[str, Path]:
    """The human alignments the bench measures: ``{"agreements", "papers", "corning"}`` -> file."""
    shared = data_dir() / "comparison" / "alignment"
    return {"agreements": shared / "emerson_troadhouse_articles_1-4.json",
            "papers": shared / "vectorfusion_vectorpainter.json",
            "corning": OWN_ALIGNMENTS / "corning_2021_2022.json"}
