"""Shared helpers for the multimodal tests: the hand-written fixture document and its sections."""

from __future__ import annotations

from pathlib import Path

from ppkit.retrieval.types import Candidate, Section
from ppkit.documents.tree import build_tree, read_lines

FIXTURE_DIR = Path(__file__).parent / "fixtures" / "mm_doc"
FIXTURE_MD = FIXTURE_DIR / "mm_doc.md"


def fixture_tree(path: Path = FIXTURE_MD):
    return build_tree(path)


def section(tree, node_id: str, rank: int = 1, *, sent=None) -> Section:
    """A Section for a node's own text, as load_sections would build it (untrimmed unless ``sent``)."""
    n = tree[node_id]
    lines = read_lines(tree.source)
    ranges = sent or ((n.line_start, n.text_end),)
    text = "\n[…]\n".join("\n".join(lines[a - 1 : b]) for a, b in ranges)
    images = tuple(im for im in n.images if any(a <= im.line <= b for a, b in ranges))
    return Section(tree.doc, node_id, n.breadcrumb, n.line_start, n.text_end, text, rank, 1.0, tuple(ranges),
                   len(text), sent is not None, images)


def candidate(tree, node_id: str, stage1: float, rank: int) -> Candidate:
    n = tree[node_id]
    text = "\n".join(read_lines(tree.source)[n.line_start - 1 : n.text_end])
    return Candidate(tree.doc, node_id, n.breadcrumb, stage1, rank, 1, (stage1,), n.line_start, n.text_end,
                     text[:150], text)
