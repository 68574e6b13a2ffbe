"""Stage 1 with a choice of recall: dense, BM25, or both fused (hybrid); optionally the static channel too.

``dense+static`` and ``hybrid+static`` add a third retriever: the static word-piece embedding
(:class:`ppkit.indexing.static.StaticEmbedder`) over the same chunks, its vectors computed from the chunk
texts on first use and cached outside the index (:mod:`ppkit.indexing.static_channel`).

Each retriever returns its top ``recall`` (200) chunks inside the allowed scope; each
chunk ranking is deduplicated to a *section* ranking (first appearance of each
(doc, node id)); dense and BM25 section rankings are fused with reciprocal rank fusion
(:func:`ppkit.indexing.lexical.rrf`, k = 60); with ``+static``, the first ``candidates`` (50) sections of
the static channel's ranking are then fused the same way with the first 50 of the mode's own ranking
(``hybrid+static`` = RRF(RRF(dense, BM25)[:50], static[:50])). The first ``candidates`` sections become
:class:`~ppkit.retrieval.types.Candidate` objects for stage 2, which is unchanged.

What a Candidate carries does not depend on the mode, so re-rankers work the same:
``chunk_scores`` are the dense similarities of the section's recalled chunks (chunks
that only BM25 or the static channel recalled are scored against the query vector too), ``stage1_score`` is
the best of them, ``stage1_rank`` is the position in the (fused) stage-1 order, and
``recall`` records the mode, the section's rank in each list and its fused score (with ``+static``: the
RRF of its rank in the mode's own ranking and in the static list, each counted only within ``candidates``).
``mode="dense"`` is plain dense recall: the sections of the ``recall`` nearest chunks, in order of first appearance.

Scope: ``{doc: None | [Items]}`` (see :meth:`ppkit.retrieval.analyze.QueryFilters.scope`). FAISS
searches the allowed chunk ids; a store with payload filters (Qdrant) gets the scope as
a filter instead.
"""

from __future__ import annotations

import time

import numpy as np

from ..core.config import RETRIEVAL_MODES
from ..core.errors import InvalidInput
from ..indexing.index import SearchIndex
from ..indexing.lexical import dedup_sections, rrf
from ..indexing.static_channel import static_chunk_vectors
from .recall import make_candidate
from .section_channel import section_ranking
from .types import Candidate, RecallInfo

__all__ = ["RRF_K", "recall_sections", "scope_chunk_ids"]

RRF_K = 60


def scope_chunk_ids(index: SearchIndex, scope: dict | None) -> np.ndarray | None:
    """Chunk ids inside ``scope`` (``None``: everything).

    A document whose scope names Items keeps only the chunks of sections in those Items.
    """
    if scope is None:
        return None
    out = []
    for doc, items in scope.items():
        doc = index.resolve_doc(doc)
        ids = index.chunk_ids([doc])
        if items:
            wanted = set(items)
            sec = index.section_items(doc)
            ids = np.asarray([c for c in ids if sec.get(index.chunk(int(c)).node_id) in wanted], dtype=np.int64)
        out.append(ids)
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def _dense_chunks(index: SearchIndex, qv: np.ndarray, recall: int, scope: dict | None):
    store = index.store
    if scope is not None and store.supports_where:
        return store.search(qv, recall, where=scope)
    return store.search(qv, recall, allowed_ids=scope_chunk_ids(index, scope))


def _with_static(base: str, own: list, static: list, candidates: int) -> list[tuple[tuple[str, str], float]]:
    """The mode's own section ranking fused with the static channel's by RRF, the first ``candidates`` of
    each: a section enters only through a list that has it among its own first 50. Fused whole, sections
    mediocre in both lists outrank one list's best, and gold recall among the 50 measured below dense alone;
    with the cut it is above dense, and above one RRF of the three lists (docs/results/retrieval.md,
    `ppkit bench retrieval --cv loco --retrieval MODE`)."""
    return rrf({base: [key for key, _ in own[:candidates]], "static": static[:candidates]}, k=RRF_K)


def recall_sections(index: SearchIndex, search_text: str, qv: np.ndarray, *, mode: str,
                    scope: dict | None = None, recall: int = 200, candidates: int = 50,
                    snippet_chars: int = 150, section_slots: int = 0) -> tuple[list[Candidate], RecallInfo]:
    """Stage 1: the first ``candidates`` sections by dense, BM25 or fused rank.

    Args:
        search_text: the text to search with (the question without filtered names).
        qv: its query vector (needed in every mode: candidates carry dense similarities).
        mode: ``"dense"``, ``"bm25"``, ``"hybrid"``, ``"dense+static"`` or ``"hybrid+static"`` (one of
            :data:`ppkit.core.config.RETRIEVAL_MODES`; ``+static``: the static channel's ranking fused in too).
        scope: ``{doc: None | [Items]}``; ``None`` searches everything.
        section_slots: of the ``candidates`` slots, at most this many go to the section channel's best
            sections that chunk recall did not bring (:mod:`ppkit.retrieval.section_channel`); 0: off.

    Returns:
        (candidates in stage-1 order, trace info with per-list sizes and timings).
    """
    if mode not in RETRIEVAL_MODES:
        raise InvalidInput(f"unknown retrieval mode {mode!r}: use one of {', '.join(RETRIEVAL_MODES)}")
    t0 = time.perf_counter()
    key_of = {}  # chunk id -> (doc, node_id)
    sims: dict[int, float] = {}  # chunk id -> dense similarity
    rankings: dict[str, list] = {}  # list name -> section keys, best first
    recalled: dict[str, list[int]] = {}  # list name -> chunk ids
    seconds = {}
    base, _, static = mode.partition("+")  # "hybrid+static" -> "hybrid", "static"
    if base in ("dense", "hybrid"):
        ids, scores = _dense_chunks(index, qv, recall, scope)
        recalled["dense"] = [int(i) for i in ids]
        sims.update({int(i): float(s) for i, s in zip(ids, scores)})
        seconds["vector_search"] = round(time.perf_counter() - t0, 4)
    if base in ("bm25", "hybrid"):
        t = time.perf_counter()
        ids, _ = index.lexical.search(search_text, recall, allowed_ids=scope_chunk_ids(index, scope))
        recalled["bm25"] = [int(i) for i in ids]
        seconds["bm25_search"] = round(time.perf_counter() - t, 4)
    if static:
        t = time.perf_counter()
        ids, _ = static_chunk_vectors(index).search(search_text, recall, allowed_ids=scope_chunk_ids(index, scope))
        recalled["static"] = [int(i) for i in ids]
        seconds["static_search"] = round(time.perf_counter() - t, 4)
    for name, ids in recalled.items():
        for cid in ids:
            if cid not in key_of:
                c = index.chunk(cid)
                key_of[cid] = (c.doc, c.node_id)
        rankings[name] = dedup_sections(key_of[cid] for cid in ids)
    own = [name for name in rankings if name != "static"]  # the mode's own lists: dense and/or bm25
    fused = (rrf({name: rankings[name] for name in own}, k=RRF_K) if len(own) > 1
             else [(key, None) for key in rankings[own[0]]])
    if static:
        fused = _with_static(base, fused, rankings["static"], candidates)
    chosen = fused[:candidates]
    if section_slots > 0:  # the section channel's own sections take the last slots (the count stays fixed)
        t = time.perf_counter()
        head = {key for key, _ in fused[:candidates - section_slots]}
        extra = [key for key in section_ranking(index, search_text, scope, candidates) if key not in head]
        chosen = fused[:candidates - min(section_slots, len(extra))] + [(key, None) for key in extra[:section_slots]]
        rankings["sections"] = extra[:section_slots]
        seconds["section_channel"] = round(time.perf_counter() - t, 4)
    chosen_keys = {key for key, _ in chosen}

    # chunks of the chosen sections that only BM25 recalled: score them against the query vector
    missing = [cid for cid in dict.fromkeys(c for ids in recalled.values() for c in ids)
               if cid not in sims and key_of[cid] in chosen_keys]
    by_key: dict[tuple[str, str], list[int]] = {}  # (doc, node) -> recalled chunk ids (distinct)
    for cid in dict.fromkeys(c for ids in recalled.values() for c in ids):
        by_key.setdefault(key_of[cid], []).append(cid)
    unrecalled = chosen_keys - set(by_key)  # the section channel's: all their chunks are scored, none was recalled
    for key in sorted(unrecalled):
        by_key[key] = [c.chunk_id for c in index.chunks_of(*key)]
        missing += [cid for cid in by_key[key] if cid not in sims]
    if missing:
        vecs = index.store.vectors(np.asarray(missing, dtype=np.int64))
        sims.update({cid: float(v) for cid, v in zip(missing, vecs @ qv)})
    rank_in = {name: {key: r for r, key in enumerate(keys, start=1)} for name, keys in rankings.items()}

    out = []
    for rank, (key, fscore) in enumerate(chosen, start=1):
        doc, node_id = key
        info = {"mode": mode, "ranks": {name: rank_in[name].get(key) for name in rankings}}
        if fscore is not None:
            info["rrf_score"] = round(fscore, 6)
        out.append(make_candidate(index, doc, node_id, [sims[c] for c in by_key[key]], rank,
                                  chunk_hits=0 if key in unrecalled else None, snippet_chars=snippet_chars,
                                  recall=info))
    lists = {name: {"chunks": len(recalled.get(name, ())), "sections": len(rankings[name])} for name in rankings}
    return out, RecallInfo(mode, len(key_of), len(set(key_of.values())), len(out), lists,
                           RRF_K if len(recalled) > 1 else None, seconds)
