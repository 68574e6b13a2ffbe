"""Following the pointers: each chosen section's text, read from its hash-checked source.

A section larger than the per-section budget is trimmed to its heading plus the chunks
most similar to the question, in document order, ``[…]`` marking each cut; the trim is
recorded on the :class:`ppkit.retrieval.types.Section` (``trimmed``, ``sent_ranges``,
``chars_total``). What is sent never exceeds the budget (cut marks included).
"""

from __future__ import annotations

import numpy as np

from ..indexing.index import SearchIndex
from .recall import rendered_lines
from .types import Candidate, Section

__all__ = ["load_sections"]

_CUT = "[…]"  # marks text left out of a trimmed section


def _trim(index: SearchIndex, doc: str, node_id: str, a: int, b: int, qv: np.ndarray | None,
          budget: int) -> tuple[list[tuple[int, str]], tuple, bool, int]:
    """The section's rendered text within ``budget`` characters: its heading plus its chunks most
    similar to the question, in document order, ``[…]`` marking each cut.

    Returns (numbered lines sent, line ranges sent, trimmed?, characters of the whole section).
    """
    full = rendered_lines(index, doc, a, b)
    full_chars = sum(len(t) + 1 for _, t in full) - 1
    if full_chars <= budget:
        return full, ((a, b),), False, full_chars
    chunks = index.chunks_of(doc, node_id)
    chosen: list = []
    # sizes are measured on the rendered lines each chunk brings (a chunk's own body can be shorter:
    # HTML tables render as pipe rows, a split line comes whole): +1 newline, +4 for a "\n[…]" cut
    # mark; the head line and a final cut mark are reserved first
    used = len(full[0][1]) + 1 + len(_CUT) + 1
    if chunks and qv is not None:
        sims = index.store.vectors(np.asarray([c.chunk_id for c in chunks], dtype=np.int64)) @ qv
        for j in np.argsort(-sims):
            c = chunks[int(j)]
            size = sum(len(t) + 1 for _, t in rendered_lines(index, doc, c.line_start, c.line_end)) + len(_CUT) + 1
            if used + size <= budget:
                chosen.append(c)
                used += size
    if not chosen:  # no chunk fits (or no chunk geometry): keep the head, line by line
        out, used = [], len(_CUT) + 1
        for ln, t in full:
            if used + len(t) + 1 > budget and out:
                break
            out.append((ln, t))
            used += len(t) + 1
        return _fit(out + [(0, _CUT)], budget), ((a, out[-1][0]),), True, full_chars
    chosen.sort(key=lambda c: c.line_start)
    # merge overlapping line ranges (the heading line first), then render them from the source
    ranges: list[list[int]] = [[a, a]]
    for c in chosen:
        if c.line_start <= ranges[-1][1] + 1:
            ranges[-1][1] = max(ranges[-1][1], c.line_end)
        else:
            ranges.append([c.line_start, c.line_end])
    out: list[tuple[int, str]] = []
    for x, y in ranges:
        if out:
            out.append((0, _CUT))
        out.extend(rendered_lines(index, doc, x, y))
    if y < b:
        out.append((0, _CUT))
    return _fit(out, budget), tuple((x, y) for x, y in ranges), True, full_chars


def _fit(lines: list[tuple[int, str]], budget: int) -> list[tuple[int, str]]:
    """A hard stop at ``budget`` characters (joined with newlines): a line that would cross it is
    cut and ends with ``…``, so even a heading longer than the budget never overruns it."""
    out, used = [], 0
    for ln, t in lines:
        need = len(t) + (1 if out else 0)
        if used + need <= budget:
            out.append((ln, t))
            used += need
            continue
        room = budget - used - (1 if out else 0) - 1  # 1 for the "…"
        if room > 0:
            out.append((ln, t[:room] + "…"))
        break
    return out


def load_sections(index: SearchIndex, chosen: list[Candidate], *, budget: int, query_vec: np.ndarray | None = None) -> list[Section]:
    """Follow the pointers: read each chosen section from its (hash-checked) source."""
    out = []
    for rank, c in enumerate(chosen, start=1):
        a, b = index.units(c.doc)[c.node_id]
        numbered, ranges, trimmed, full_chars = _trim(index, c.doc, c.node_id, a, b, query_vec, budget)
        text = "\n".join(t for _, t in numbered)
        tree = index.trees[c.doc]
        images = tuple(im for n in tree.nodes.values() if a <= n.line_start <= b for im in n.images
                       if any(x <= im.line <= y for x, y in ranges))
        score = c.stage2_score if c.stage2_score is not None else c.stage1_score
        out.append(Section(c.doc, c.node_id, c.breadcrumb, a, b, text, rank, float(score), ranges,
                           full_chars, trimmed, images, tuple(ln for ln, _ in numbered)))
    return out
