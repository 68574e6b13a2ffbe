"""Following the pointers: each chosen section's text, read from its hash-checked source.

A section larger than the per-section budget is trimmed to what the question asks, in
document order, ``[…]`` marking each cut; the trim is recorded on the
:class:`ppkit.retrieval.types.Section` (``trimmed``, ``sent_ranges``, ``chars_total``).
What is sent never exceeds the budget (cut marks included).

What is kept (:func:`_trim`, with the question's text): the heading, then the section's
rendered lines (paragraphs, list items, table rows) best first by
``BM25(question, line) / max + similarity of the line's best chunk, min-max scaled over
the section's chunks`` (BM25 with the section's lines as the collection; equal weights,
fixed a priori), each line taken whole when the text sent still fits. A kept table row
brings its table's header row (the column labels), the ``| --- |`` rule and the table's
caption (the nearest non-blank line above the table, when it is not a table row and is
short) along. A gap of blank lines only is sent as such, any other gap as ``[…]``.
Without the question's text (``query=None``) the section keeps its chunks most similar
to the question vector instead, whole, best first. A line longer than the budget (a page
extracted as one line) is first cut at sentence, then word ends (:func:`_pieces`), so its
sentences can be sent; whole, it could never be.
"""

from __future__ import annotations

import re

import numpy as np

from ..documents.chunking import split_line
from ..indexing.index import SearchIndex
from ..indexing.lexical import bm25_scores, lexical_tokens
from .recall import rendered_lines
from .types import Candidate, Section

__all__ = ["load_sections"]

_CUT = "[…]"  # marks text left out of a trimmed section
_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
CAPTION_CHARS = 200  # a line above a table longer than this is prose, not its caption


def _trim(index: SearchIndex, doc: str, node_id: str, a: int, b: int, qv: np.ndarray | None,
          budget: int, query: str | None = None) -> tuple[list[tuple[int, str]], tuple, bool, int]:
    """The section's rendered text within ``budget`` characters: its heading plus what the question
    asks (see the module docstring), in document order, ``[…]`` marking each cut.

    Returns (numbered lines sent, line ranges sent, trimmed?, characters of the whole section).
    """
    full = rendered_lines(index, doc, a, b)
    full_chars = sum(len(t) + 1 for _, t in full) - 1
    if full_chars <= budget:
        return full, ((a, b),), False, full_chars
    full, tokens = _pieces(full, index.line_tokens(doc, a, b), budget)
    if query and query.strip():
        kept = _keep_lines(index, doc, node_id, full, qv, query, budget, tokens)
        if kept is not None:
            return kept + (True, full_chars)
    return _trim_by_chunks(index, doc, node_id, a, b, qv, budget, full) + (True, full_chars)


def _pieces(full: list[tuple[int, str]], tokens: list[list[str]], budget: int):
    """``full`` with each body line that could never be sent whole (longer than the budget less the
    heading) cut at sentence, then word ends into pieces of a quarter of the budget, each keeping its
    source line number; and the BM25 terms of each line or piece. Without the cut, such a line is
    dropped whole and only the heading is sent."""
    room = budget - len(full[0][1]) - len(_CUT) - 2
    if all(len(t) <= room for _, t in full[1:]):
        return full, tokens
    out, terms = [full[0]], [tokens[0]]
    for (ln, t), tok in zip(full[1:], tokens[1:]):
        if len(t) <= room:
            out.append((ln, t))
            terms.append(tok)
            continue
        for piece in split_line(t, max(16, budget // 4)):
            out.append((ln, piece))
            terms.append(lexical_tokens(piece))
    return out, terms


def _is_row(t: str) -> bool:
    return t.lstrip().startswith("|")


def _companions(full: list[tuple[int, str]]) -> dict[int, tuple[int, ...]]:
    """For each table row (index into ``full``): the lines it is sent with: its table's header row,
    the rule below it and the table's caption."""
    out: dict[int, tuple[int, ...]] = {}
    i, n = 1, len(full)
    while i < n:
        if not _is_row(full[i][1]):
            i += 1
            continue
        j = i
        while j < n and _is_row(full[j][1]):
            j += 1
        head = [i] + ([i + 1] if i + 1 < j and _RULE.match(full[i + 1][1]) else [])
        c = i - 1
        while c > 0 and not full[c][1].strip():
            c -= 1
        cap = [c] if c > 0 and not _is_row(full[c][1]) and len(full[c][1]) <= CAPTION_CHARS else []
        for r in range(i, j):
            out[r] = tuple(x for x in cap + head if x != r)
        i = j
    return out


def _layout(full: list[tuple[int, str]], keep: list[int]) -> list[tuple[int, str]]:
    """The lines sent for the kept indices (sorted, 0 first): a gap of blank lines is sent, any other gap is ``[…]``."""
    out: list[tuple[int, str]] = []
    prev = None
    for i in keep:
        if prev is not None and i > prev + 1:
            gap = full[prev + 1:i]
            out.extend(gap if all(not t.strip() for _, t in gap) else [(0, _CUT)])
        out.append(full[i])
        prev = i
    if prev is not None and prev < len(full) - 1 and any(t.strip() for _, t in full[prev + 1:]):
        out.append((0, _CUT))
    return out


def _layout_sizer(full: list[tuple[int, str]]):
    """``keep`` (sorted) ``->`` the characters of ``_layout(full, keep)`` joined by newlines, without laying out: prefix sums of the lines' sizes and of
    the non-blank lines make each gap one subtraction (the greedy trim asks it once per candidate line)."""
    chars, filled = [0], [0]  # before line i: characters + newlines; non-blank lines
    for _, t in full:
        chars.append(chars[-1] + len(t) + 1)
        filled.append(filled[-1] + (1 if t.strip() else 0))
    cut, n = len(_CUT) + 1, len(full)

    def size(keep: list[int]) -> int:
        total, prev = 0, None
        for i in keep:
            if prev is not None and i > prev + 1:  # a gap: sent as is when blank, else one cut mark
                total += cut if filled[i] > filled[prev + 1] else chars[i] - chars[prev + 1]
            total += len(full[i][1]) + 1
            prev = i
        if prev is not None and prev < n - 1 and filled[n] > filled[prev + 1]:
            total += cut
        return total - 1 if total else 0

    return size


def _line_scores(index: SearchIndex, doc: str, node_id: str, full: list[tuple[int, str]], qv, query: str,
                 tokens: list[list[str]] | None = None) -> np.ndarray:
    """BM25 of the question over the section's lines (scaled by its maximum) plus the similarity of
    each line's best chunk (min-max scaled over the section's chunks); the heading's is unused."""
    texts = [t for _, t in full]
    lex = np.asarray(bm25_scores(query, texts, tokens=tokens), dtype=np.float64)
    if lex.max() > 0:
        lex = lex / lex.max()
    sim = np.zeros(len(full))
    chunks = index.chunks_of(doc, node_id)
    if chunks and qv is not None:
        v = index.store.vectors(np.asarray([c.chunk_id for c in chunks], dtype=np.int64)) @ qv
        lo, hi = float(v.min()), float(v.max())
        v = (v - lo) / (hi - lo) if hi > lo else np.ones_like(v)
        for i, (ln, _) in enumerate(full):
            over = [float(x) for c, x in zip(chunks, v) if c.line_start <= ln <= c.line_end]
            sim[i] = max(over) if over else 0.0
    return lex + sim


def _keep_lines(index: SearchIndex, doc: str, node_id: str, full: list[tuple[int, str]], qv, query: str,
                budget: int, tokens: list[list[str]] | None = None):
    """The lines the question asks for within ``budget`` (None when nothing but the heading fits);
    ``tokens``: each line's BM25 terms when already known."""
    scores = _line_scores(index, doc, node_id, full, qv, query, tokens)
    companions = _companions(full)
    order = sorted((i for i in range(1, len(full)) if full[i][1].strip()), key=lambda i: (-scores[i], i))
    keep = {0}
    layout_size = _layout_sizer(full)
    used = layout_size([0])
    for i in order:
        if i in keep or used + len(full[i][1]) + 1 > budget:  # cannot fit, whatever else it brings
            continue
        trial = keep | {i} | set(companions.get(i, ()))
        size = layout_size(sorted(trial))
        if size <= budget:
            keep, used = trial, size
    if keep == {0}:
        return None
    out = _layout(full, sorted(keep))
    ranges: list[list[int]] = []
    for ln, _ in out:
        if ln == 0:
            continue
        if ranges and ranges[-1][0] <= ln <= ranges[-1][1] + 1:
            ranges[-1][1] = max(ranges[-1][1], ln)
        else:
            ranges.append([ln, ln])
    return _fit(out, budget), tuple((x, y) for x, y in ranges)


def _trim_by_chunks(index: SearchIndex, doc: str, node_id: str, a: int, b: int, qv, budget: int, full):
    """The heading plus the section's chunks most similar to ``qv``, whole, within ``budget``."""
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
        return _fit(out + [(0, _CUT)], budget), ((a, out[-1][0]),)
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
    return _fit(out, budget), tuple((x, y) for x, y in ranges)


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


def load_sections(index: SearchIndex, chosen: list[Candidate], *, budget: int, query_vec: np.ndarray | None = None,
                  query: str | None = None) -> list[Section]:
    """Follow the pointers: read each chosen section from its (hash-checked) source; a section over
    ``budget`` keeps what ``query`` (the question's text) asks, else its chunks nearest ``query_vec``."""
    out = []
    for rank, c in enumerate(chosen, start=1):
        a, b = index.units(c.doc)[c.node_id]
        numbered, ranges, trimmed, full_chars = _trim(index, c.doc, c.node_id, a, b, query_vec, budget, query)
        text = "\n".join(t for _, t in numbered)
        tree = index.trees[c.doc]
        images = tuple(im for n in tree.nodes.values() if a <= n.line_start <= b for im in n.images
                       if any(x <= im.line <= y for x, y in ranges))
        score = c.stage2_score if c.stage2_score is not None else c.stage1_score
        page_lines = index.pages_of(c.doc, ranges)  # from the page map stored in the index
        pages = sorted({p for ln, t in numbered if ln and t.strip() for p, x, y in page_lines if x <= ln <= y})
        out.append(Section(c.doc, c.node_id, c.breadcrumb, a, b, text, rank, float(score), ranges,
                           full_chars, trimmed, images, tuple(ln for ln, _ in numbered),
                           pages=tuple(pages), page_lines=page_lines))
    return out
