"""Stage 1's section channel: BM25 over each section's titles and a short extractive summary.

Chunk recall finds a section through the text of its chunks; a section whose *name* is what the
question asks for ("Liquidity and Capital Resources", "Stock Repurchases") but whose chunks are
tables or boilerplate can miss the 50 candidates. This channel scores one short record per
section: its breadcrumb titles (the document's own heading vocabulary) and the first sentences
of its text (an extractive summary, at most :data:`SUMMARY_CHARS` characters), with BM25
(:class:`ppkit.indexing.lexical.LexicalIndex`).

:func:`section_ranking` gives the sections in scope, best first. Stage 1
(:func:`ppkit.retrieval.hybrid.recall_sections`) gives the channel a fixed share of the 50
candidate slots (``section_slots``): the channel's best sections that chunk recall did not already
bring fill them, so the candidate count does not grow.

The records are built from the index's trees and source lines once per index (keyed by the
documents' sha256) and kept in memory; nothing is written.
"""

from __future__ import annotations

import re

import numpy as np

from ..core.ids import breadcrumb_titles
from ..indexing.index import SearchIndex
from ..indexing.lexical import LexicalIndex
from .recall import rendered_lines

__all__ = ["section_records", "section_ranking", "section_summary", "SUMMARY_CHARS"]

SUMMARY_CHARS = 300
_HEAD_LINES = 12  # source lines read for a summary
_SENT = re.compile(r"(?<=[.!?])\s+")
_CACHE: dict[tuple, tuple[LexicalIndex, list[tuple[str, str]]]] = {}  # documents' sha256 -> (BM25, row keys)


def section_summary(lines: list[str], max_chars: int = SUMMARY_CHARS) -> str:
    """The first sentences of a section's text (after its heading), up to ``max_chars``; table rows are skipped.

    >>> section_summary(["# Liquidity", "Cash was $5 billion. We expect more.", "| a | 1 |"], 25)
    'Cash was $5 billion.'
    """
    prose = " ".join(ln.strip() for ln in lines[1:] if ln.strip() and not ln.lstrip().startswith(("|", "#", "!")))
    out = ""
    for s in _SENT.split(" ".join(prose.split())):
        if out and len(out) + 1 + len(s) > max_chars:
            break
        out = f"{out} {s}".strip()
    return out[:max_chars]


def section_records(index: SearchIndex) -> tuple[LexicalIndex, list[tuple[str, str]]]:
    """(BM25 over one record per section, the (doc, node id) of each row)."""
    key = tuple((d, index.record(d).sha256) for d in index.docs)
    if key not in _CACHE:
        texts, keys = [], []
        for doc in index.docs:
            tree = index.trees[doc]
            for node_id, (a, b) in index.units(doc).items():
                head = [t for _, t in rendered_lines(index, doc, a, min(b, a + _HEAD_LINES))]
                titles = " ".join(breadcrumb_titles(tree[node_id].breadcrumb)[1:])
                texts.append(f"{titles}\n{section_summary(head)}")
                keys.append((doc, node_id))
        _CACHE[key] = (LexicalIndex.build(texts), keys)
    return _CACHE[key]


def section_ranking(index: SearchIndex, search_text: str, scope: dict | None, limit: int) -> list[tuple[str, str]]:
    """The ``limit`` best sections in ``scope`` (``{doc: None | [Items]}``; ``None``: all) for ``search_text``."""
    lex, keys = section_records(index)
    allowed = None
    if scope is not None:
        docs = {index.resolve_doc(d): items for d, items in scope.items()}
        items_of = {d: index.section_items(d) for d in docs}
        allowed = np.asarray([i for i, (d, n) in enumerate(keys) if d in docs
                              and (not docs[d] or items_of[d].get(n) in set(docs[d]))], dtype=np.int64)
    rows, _ = lex.search(search_text, limit, allowed_ids=allowed)
    return [keys[int(r)] for r in rows]
