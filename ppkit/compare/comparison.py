"""Compare two indexed documents section by section: the alignment by function, then what differs in each pair.

Two modes over one alignment (:func:`ppkit.compare.align.align`: every section of A with the 0-3 sections of B
that do its job, "no counterpart" where none does, containers paired through their children):

* **Whole document** (no criteria): every section of A, in document order (containers too, marked), with its
  counterparts; ``unmatched_b`` lists B's sections that no pair holds.
* **With criteria**: a fit check (do both documents hold sections about the criteria?), then the same
  alignment restricted to up to ``n`` sections of A about the criteria, chosen by retrieval in A alone (hybrid
  recall, :data:`CRITERIA_RETRIEVAL`: a criterion's defined terms are lexical), exhibits left out unless the
  criteria ask for one; ``unmatched_b`` lists B's sections retrieved for the criteria that no pair holds. A
  section's counterparts are the same in both modes.

Every pair carries the computed differences (:func:`ppkit.compare.diff.diff_sections`); online, a rater adds
the reference's ratings (:mod:`ppkit.compare.gemini`).

Retrieval goes through the conductor: the caller passes ``search`` (the pipeline's ``retrieve`` restricted to
one document), so this module never assembles a second pipeline. It does not write reports
(:mod:`ppkit.compare.report`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..core.errors import InvalidInput
from ..core.text import stems
from .align import AlignWeights, Alignment, align
from .diff import PairDiff, diff_sections
from .sections import DocSections
from .types import Comparison, Counterpart, FitCheck, Pair, Rater, Searcher

__all__ = ["compare_documents", "criteria_sections", "CRITERIA_RETRIEVAL", "FIT_SHARE"]

FIT_SHARE = 0.5  # offline fit: share of the criteria's terms one section of each document must hold
CRITERIA_RETRIEVAL = "hybrid"  # stage-1 recall of the criteria in A and B (dense + BM25, fused by rank)
_POOL = 3  # criteria mode: sections retrieved per section kept (room for the exhibits and containers left out)
_NO_TEXT = PairDiff(0.0, (), (), 0, (), (), (), ())  # a container's pair: no text of its own to compare


def _fit_offline(criteria: str, sa: DocSections, sb: DocSections, hits_a: list[str], hits_b: list[str]) -> FitCheck:
    """Each document fits when one of its retrieved sections holds at least :data:`FIT_SHARE` of the
    criteria's terms (stems, stop words dropped) in its title and text."""
    want = set(stems(criteria))

    def matching(d: DocSections, hits: list[str]) -> list[str]:
        return [d.title(n) for n in hits
                if len(want & set(stems(d.title(n) + " " + d.text(n)))) >= FIT_SHARE * len(want)]

    ma, mb = matching(sa, hits_a), matching(sb, hits_b)
    missing = [d for d, m in ((sa.doc, ma), (sb.doc, mb)) if not m]
    reason = (f"sections about the criteria in both documents ({len(ma)} in {sa.doc}, {len(mb)} in {sb.doc})"
              if not missing else f"no section of {' or '.join(missing)} holds half of the criteria's terms")
    return FitCheck(not missing, reason, tuple(ma), tuple(mb))


def criteria_sections(criteria: str, d: DocSections, search: Searcher, n: int) -> list[str]:
    """Up to ``n`` sections of ``d`` about ``criteria``, in retrieval's order: sections with text of their own,
    exhibits left out unless the criteria name one ("exhibit", "exhibits")."""
    exhibits = "exhibit" in stems(criteria)
    hits = [x for x, _ in search(criteria, d.doc, _POOL * n, CRITERIA_RETRIEVAL)]
    return [x for x in dict.fromkeys(hits) if x in d.refs and x not in d.containers
            and (exhibits or not d.exhibit(x))][:n]


def _pair(a: str, alignment: Alignment, sa: DocSections, sb: DocSections, criteria: str | None,
          rater: Rater | None, notes: list[str]) -> Pair:
    container = a in alignment.containers
    cps = []
    for link in alignment.links.get(a, ()):
        rating = None
        if rater is not None and not container:
            rating = rater.rate(criteria, sa.refs[a], sa.text(a), sb.refs[link.b], sb.text(link.b))
            if rating is None:
                notes.append(f"no rating for {sa.title(a)} / {sb.title(link.b)}")
        diff = _NO_TEXT if container else diff_sections(sa.text(a), sb.text(link.b))
        cps.append(Counterpart(sb.ref(link.b), link.score, diff, link.reason, rating))
    return Pair(sa.ref(a), tuple(cps), container)


def compare_documents(index, a: str, b: str, *, search: Searcher, criteria: str | None = None, n: int = 10,
                      a_sections: list[str] | None = None, rater: Rater | None = None,
                      weights: AlignWeights | None = None,
                      on_phase: Callable[[str, int, int], None] | None = None) -> Comparison:
    """Compare document ``a`` with document ``b`` of ``index`` (see the module for the two modes).

    Args:
        index: a loaded index holding both documents.
        a, b: the documents' names in the index.
        search: retrieval in one document, through the conductor (:class:`ppkit.compare.types.Searcher`).
        criteria: what to compare ("collateral, guarantees and liens"); ``None``: the whole documents.
        n: criteria mode: sections of A to compare (the reference's 10).
        a_sections: criteria mode: these node ids of A instead of the ones retrieval chooses.
        rater: the online part (fit check and ratings); ``None``: offline.
        weights: the alignment's weights (default: the package's fitted ones).
        on_phase: called as ``on_phase(phase, done, total)`` while working (progress).

    Returns:
        A :class:`ppkit.compare.types.Comparison`.

    >>> ppkit.compare("Emerson.md", "TRoadhouse.md", criteria="liens and guarantees").pairs[0]  # doctest: +SKIP
    """
    if a == b:
        raise InvalidInput(f"compare needs two different documents, got {a!r} twice")
    if n < 1:
        raise InvalidInput(f"n must be at least 1 (got n={n})")
    if criteria is not None and not criteria.strip():
        raise InvalidInput("--criteria is empty: give what to compare, or leave it out to compare whole documents")
    if criteria is not None and not stems(criteria):
        raise InvalidInput("the criteria hold no searchable word; write what to compare, e.g. "
                           "--criteria 'collateral, guarantees and liens'")
    phase = on_phase or (lambda *_: None)
    t0 = time.perf_counter()
    sa, sb = DocSections(index, a), DocSections(index, b)
    timings, notes, fit = {"sections": time.perf_counter() - t0}, [], None
    if criteria is None:
        chosen = sorted(sa.nodes + sa.containers, key=lambda x: sa.tree[x].line_start)
        b_pool = sb.nodes
    else:
        phase("fit check", 0, 1)
        hits_a = criteria_sections(criteria, sa, search, n)
        hits_b = criteria_sections(criteria, sb, search, n)
        fit = _fit_offline(criteria, sa, sb, hits_a, hits_b)
        if rater is not None:
            online = rater.fit(criteria, a, [sa.title(x) for x in hits_a], b, [sb.title(x) for x in hits_b])
            fit = online or fit
            if online is None:
                notes.append("the online fit check failed; the offline one was used")
        timings["fit"] = time.perf_counter() - t0 - timings["sections"]
        if not fit.fits:
            return Comparison(a, b, criteria, (), (), fit, _rounded(timings), tuple(notes))
        unknown = [x for x in a_sections or () if x not in sa.refs]
        if unknown:
            raise InvalidInput(f"{a} has no section {unknown[0]!r} with text of its own; pass node ids of its "
                               f"sections (e.g. {', '.join(sa.nodes[:3])})")
        chosen, b_pool = list(a_sections) if a_sections else hits_a, hits_b
    t1 = time.perf_counter()
    phase("aligning sections", 0, 1)
    alignment = align(sa, sb, weights)
    timings["align"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    pairs = []
    for i, x in enumerate(chosen):
        phase("differences", i, len(chosen))
        pairs.append(_pair(x, alignment, sa, sb, criteria, rater, notes))
    timings["differences"] = time.perf_counter() - t2
    used = {c.section.node for p in pairs for c in p.b}
    unmatched = tuple(sb.refs[x] for x in b_pool if x not in used)
    phase("done", 1, 1)
    return Comparison(a, b, criteria, tuple(pairs), unmatched, fit, _rounded(timings), tuple(dict.fromkeys(notes)))


def _rounded(timings: dict) -> dict:
    return {k: round(v, 3) for k, v in timings.items()}
