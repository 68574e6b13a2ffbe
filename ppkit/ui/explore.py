"""Looking at what each stage did: tables and plots the notebooks show.

* :func:`tree_stats` - per-document statistics of skeleton trees (a DataFrame);
* :func:`suspicious_levels` - headings whose level the parser probably got wrong;
* :func:`noise_table` / :func:`noise_categories` - noise decisions and the six categories;
* :func:`compare_chunking` / :func:`plot_chunk_lengths` - structure-guided chunks next to
  blind fixed-size chunks of the same text;
* :func:`index_files` - what an index folder holds.

pandas and matplotlib (the ``notebooks`` extra) are imported where used. This module
computes and tabulates; it does not parse, chunk or retrieve (it calls the modules
that do) and holds no widgets (see :mod:`ppkit.ui.widgets`).
"""

from __future__ import annotations

import bisect
import json
from dataclasses import asdict, dataclass, is_dataclass
from pathlib import Path

from ..core.errors import InvalidInput, MissingDependency, MissingFile
from ..core.ids import ROOT_ID
from ..documents.chunking import Chunk, chunk_tree, fixed_size_chunks
from ..documents.noise import CATEGORIES, EXEMPLARS, NoiseDecision
from ..documents.titles import is_numbered
from ..documents.tree import Tree, read_lines

__all__ = ["LevelIssue", "is_numbered", "suspicious_levels", "tree_stats", "as_frame", "noise_table",
           "noise_categories", "BlindChunk", "ChunkComparison", "compare_chunking", "plot_chunk_lengths",
           "index_files"]


def _pandas():
    try:
        import pandas as pd
    except ImportError:
        raise MissingDependency("ppkit.ui.explore needs pandas: pip install 'ppkit[notebooks]'") from None
    return pd


def as_frame(rows):
    """A DataFrame from a list of dataclasses or dicts (an empty list gives an empty frame)."""
    pd = _pandas()
    return pd.DataFrame([asdict(r) if is_dataclass(r) else dict(r) for r in rows])


# -- heading levels ---------------------------------------------------------------------------



@dataclass(frozen=True)
class LevelIssue:
    """A heading whose level looks wrong, and the level it probably should have."""

    doc: str
    node_id: str
    title: str
    level: int
    prev_id: str  # the heading right before it
    prev_title: str
    prev_level: int
    left_section: str  # the section the parser closed because of it (the previous heading's parent)
    suggested_level: int
    reason: str


def suspicious_levels(tree: Tree) -> list[LevelIssue]:
    """Headings the parser probably put at too high a level.

    The rule is small and general. A heading is flagged when

    1. it climbs to a shallower level than the heading right before it (it closes a section),
    2. it has no subsections of its own,
    3. it carries no numbering (``Item 7``, ``Note 5``, ``3.2``, ``(a)``), and
    4. the heading before it is not the first of its siblings (a run was under way).

    A real new division usually has a number or subsections; a lone, unnumbered leaf
    that breaks off a run of siblings is most likely one more sibling, e.g. a 10-K's
    ``# Gaming`` right after ``## Client`` under MD&A's results by segment. The rule
    flags the first heading of such a break, not every heading after it.

    Returns:
        Issues in document order (an empty list when nothing looks wrong).

    >>> t = parse_markdown("# MD&A\\n## Data Center\\nx\\n## Client\\ny\\n# Gaming\\nz\\n", "D")  # doctest: +SKIP
    >>> [i.title for i in suspicious_levels(t)]                                                # doctest: +SKIP
    ['Gaming']
    """
    heads = tree.headings()
    out = []
    for prev, h in zip(heads, heads[1:]):
        if h.level >= prev.level or h.children or is_numbered(h.title):
            continue
        parent = tree[prev.parent_id]
        if parent.children.index(prev.node_id) == 0:
            continue
        out.append(LevelIssue(
            tree.doc, h.node_id, h.title, h.level, prev.node_id, prev.title, prev.level, parent.title,
            prev.level,
            f"level-{h.level} leaf right after level-{prev.level} sibling {prev.title!r}: it closes "
            f"{parent.title!r} although it has no number and no subsections"))
    return out


def tree_stats(trees, lines: dict[str, list[str]] | None = None):
    """Per-document statistics of skeleton trees.

    Args:
        trees: Tree objects (one per document).
        lines: ``{doc: lines}``; default: read from each tree's source file.

    Returns:
        A DataFrame indexed by document: lines, headings, headings per level (``L1``..),
        deepest level, leaves, figures (image links, ``figures_missing`` not on disk),
        own-text size of the headed sections (median / 90th percentile / max characters)
        and the number of :func:`suspicious_levels`.
    """
    pd = _pandas()
    trees = list(trees)
    deepest = max((n.level for t in trees for n in t.headings()), default=1)
    rows = []
    for tree in trees:
        doc_lines = (lines or {}).get(tree.doc)
        if doc_lines is None:
            if not tree.source:
                raise InvalidInput(f"tree {tree.doc!r} was built from text: pass its lines as lines={{doc: lines}}")
            doc_lines = read_lines(tree.source)
        heads = tree.headings()
        sizes = sorted(len("\n".join(doc_lines[n.line_start : n.text_end])) for n in heads)  # body, no heading
        images = [im for n in tree for im in n.images]
        row = {"doc": tree.doc, "lines": tree.n_lines, "headings": len(heads)}
        for level in range(1, deepest + 1):  # headings per level, same columns for every document
            row[f"L{level}"] = sum(1 for n in heads if n.level == level)
        row.update({
            "max_depth": max((n.depth for n in heads), default=0),
            "leaves": sum(1 for n in heads if not n.children),
            "figures": len(images),
            "figures_missing": sum(1 for im in images if im.resolved is None),
            "section_chars_median": int(_quantile(sizes, 0.5)),
            "section_chars_p90": int(_quantile(sizes, 0.9)),
            "section_chars_max": sizes[-1] if sizes else 0,
            "suspicious_levels": len(suspicious_levels(tree)),
        })
        rows.append(row)
    return pd.DataFrame(rows).set_index("doc")


def _quantile(sorted_values: list[int], q: float) -> float:
    """Linear-interpolation quantile of sorted values (numpy's default method); 0 when empty."""
    if not sorted_values:
        return 0.0
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


# -- noise ------------------------------------------------------------------------------------

def noise_categories():
    """The six noise categories: key, label and the exemplar phrases fuzzy/semantic matching uses."""
    pd = _pandas()
    return pd.DataFrame([{"category": c, "label": label, "exemplars": ", ".join(EXEMPLARS.get(c, []))}
                         for c, label in CATEGORIES.items()])


def noise_table(decisions: dict[str, dict[str, NoiseDecision]], trees: dict[str, Tree] | None = None):
    """Noise decisions of several documents as one table.

    Args:
        decisions: ``{doc: {node_id: NoiseDecision}}`` (what filters return, what an index stores).
        trees: ``{doc: Tree}``; when given, a ``breadcrumb`` column is added.

    Returns:
        A DataFrame with doc, node_id, title, noise, category, filter, reason, score, in document order.
    """
    pd = _pandas()
    rows = []
    for doc, decs in decisions.items():
        for node_id in sorted(decs):
            row = {"doc": doc, **decs[node_id].to_dict()}
            if trees is not None:
                row["breadcrumb"] = trees[doc][node_id].breadcrumb
            rows.append(row)
    cols = ["doc", "node_id", "title", "noise", "category", "filter", "reason", "score"]
    return pd.DataFrame(rows, columns=cols + (["breadcrumb"] if trees is not None else []))


# -- chunking ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class BlindChunk:
    """A fixed-size piece of a document cut without looking at headings."""

    start: int  # character offsets into the document text (end exclusive)
    end: int
    line_start: int  # 1-based source lines the piece touches
    line_end: int
    parts: tuple[tuple[str, int], ...]  # (node id, characters of the piece in that node's own text)
    text: str

    @property
    def node_ids(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.parts)

    @property
    def crosses(self) -> bool:
        """Whether the piece mixes text of more than one section."""
        return len(self.parts) > 1

    def __repr__(self) -> str:
        where = " + ".join(f"{n} ({c} chars)" for n, c in self.parts)
        return f"BlindChunk(chars {self.start}-{self.end}, lines {self.line_start}-{self.line_end}: {where})"


@dataclass(frozen=True)
class ChunkComparison:
    """Structure-guided chunks and blind fixed-size chunks of one document."""

    doc: str
    size: int
    overlap: int
    structured: list[Chunk]
    blind: list[BlindChunk]

    def lengths(self):
        """Long-format DataFrame (method, chars) of chunk bodies (without the breadcrumb prefix)."""
        pd = _pandas()
        rows = [("structure-guided", len(c.body)) for c in self.structured]
        rows += [("blind fixed-size", len(b.text)) for b in self.blind]
        return pd.DataFrame(rows, columns=["method", "chars"])

    def summary(self):
        """One row per method: chunks, median / 90th percentile / max characters, chunks mixing sections."""
        pd = _pandas()
        rows = []
        for method, lengths, crossing in (
            ("structure-guided", sorted(len(c.body) for c in self.structured), 0),  # never crosses, by construction
            ("blind fixed-size", sorted(len(b.text) for b in self.blind), sum(b.crosses for b in self.blind)),
        ):
            rows.append({"method": method, "chunks": len(lengths), "chars_median": int(_quantile(lengths, 0.5)),
                         "chars_p90": int(_quantile(lengths, 0.9)), "chars_max": lengths[-1] if lengths else 0,
                         "chunks_mixing_sections": crossing})
        return pd.DataFrame(rows).set_index("method")

    def crossing(self, min_each: int = 0) -> list[BlindChunk]:
        """Blind chunks that mix sections, keeping those with at least ``min_each`` characters in each
        of two or more sections (``min_each=300`` finds pieces that really blend two topics)."""
        return [b for b in self.blind if sum(1 for _, c in b.parts if c >= min_each) >= 2]


def compare_chunking(tree: Tree, lines: list[str], kept: set[str] | None = None, *, size: int = 2000,
                     overlap: int = 200) -> ChunkComparison:
    """Cut one document both ways with the same size and overlap.

    Args:
        tree / lines: the document's tree and lines (:func:`ppkit.documents.tree.read_lines`).
        kept: node ids for the structure-guided chunks (default: all; the blind cut
            always sees the whole text, which is what a blind pipeline does).
        size / overlap: characters per chunk and repeated between neighbours.

    Returns:
        A :class:`ChunkComparison`; each blind chunk knows which sections it mixes.
    """
    structured = chunk_tree(tree, lines, kept, size=size, overlap=overlap)
    text = "\n".join(lines)
    line_offsets = [0]  # character offset of the start of each line
    for line in lines[:-1]:
        line_offsets.append(line_offsets[-1] + len(line) + 1)
    heads = tree.headings()
    starts = [line_offsets[n.line_start - 1] for n in heads]  # offset of each heading line
    ids = [n.node_id for n in heads]
    blind = []
    for a, b, piece in fixed_size_chunks(text, size=size, overlap=overlap):
        # the sections a piece touches: the one holding its first character, then every heading inside it
        first = bisect.bisect_right(starts, a) - 1
        cuts = [a] + [s for s in starts[first + 1 :] if s < b] + [b]
        owners = [ids[first] if first >= 0 else ROOT_ID] + ids[first + 1 : first + len(cuts) - 1]
        # a part that is only whitespace (the newline before a heading) mixes nothing
        parts = tuple((nid, hi - lo) for nid, lo, hi in zip(owners, cuts, cuts[1:]) if text[lo:hi].strip())
        blind.append(BlindChunk(a, b, bisect.bisect_right(line_offsets, a), bisect.bisect_right(line_offsets, b - 1),
                                parts, piece))
    return ChunkComparison(tree.doc, size, overlap, structured, blind)


def plot_chunk_lengths(comparison: ChunkComparison, *, bins: int = 40):
    """Histogram of chunk lengths, structure-guided vs blind.

    Returns:
        (the long-format lengths DataFrame, the matplotlib Figure); the caller saves it.
    """
    import matplotlib.pyplot as plt

    data = comparison.lengths()
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    top = max(int(data["chars"].max()) if len(data) else 1, 1)
    edges = [top * i / bins for i in range(bins + 1)]
    for method, color in (("blind fixed-size", "#bbbbbb"), ("structure-guided", "#1f77b4")):
        values = data.loc[data["method"] == method, "chars"]
        ax.hist(values, bins=edges, alpha=0.75, color=color, label=f"{method} ({len(values)} chunks)")
    ax.set_xlabel("characters per chunk (body, without the breadcrumb prefix)")
    ax.set_ylabel("chunks")
    ax.set_title(f"{comparison.doc}: chunk lengths, size {comparison.size}, overlap {comparison.overlap}")
    ax.legend()
    fig.tight_layout()
    plt.close(fig)  # the caller displays or saves it; don't leave it open in pyplot's state
    return data, fig


# -- index folder -----------------------------------------------------------------------------

_FILE_ROLES = {
    "manifest.json": "format version, embedder name + dimension, settings, documents (sha256, metadata), build timings",
    "chunks.jsonl": "one chunk per line: id, doc, node id, line range, breadcrumb, text",
    "noise.json": "every flagged node per document: category, filter, reason",
    "vectors.faiss": "the chunk vectors (faiss.write_index), row i = chunk id i",
}


def index_files(folder: str | Path):
    """What an index folder holds: one row per file with its size and role.

    Returns:
        A DataFrame with file (relative path), bytes, records (lines of a JSONL file,
        nodes of a tree, documents of the manifest) and role.
    """
    pd = _pandas()
    folder = Path(folder)
    if not (folder / "manifest.json").is_file():
        raise MissingFile(f"{folder} is not an index folder (no manifest.json)")
    rows = []
    for p in sorted(q for q in folder.rglob("*") if q.is_file()):
        rel = p.relative_to(folder).as_posix()
        records = None
        if p.suffix == ".jsonl":
            with open(p, encoding="utf-8") as f:
                records = sum(1 for line in f if line.strip())
        elif rel.startswith("trees/") and p.suffix == ".json":
            records = len(json.loads(p.read_text(encoding="utf-8"))["nodes"])
        elif rel.startswith("rendered/") and p.suffix == ".json":
            records = len(json.loads(p.read_text(encoding="utf-8"))["units"])
        elif rel == "manifest.json":
            records = len(json.loads(p.read_text(encoding="utf-8"))["documents"])
        role = _FILE_ROLES.get(rel, "the document's skeleton tree (nodes, line ranges, figures)"
                               if rel.startswith("trees/") else
                               "each indexed section's rendered lines and their BM25 terms"
                               if rel.startswith("rendered/") else "")
        rows.append({"file": rel, "bytes": p.stat().st_size, "records": records, "role": role})
    frame = pd.DataFrame(rows, columns=["file", "bytes", "records", "role"])
    frame["records"] = frame["records"].astype("Int64")  # missing for files without records, not NaN floats
    return frame
