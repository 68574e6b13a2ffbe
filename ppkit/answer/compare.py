"""Compare two indexed documents section by section.

Two modes, both ending with the sections of B that no section of A matched:

* **With criteria** (the reference system's DocComparator): a fit check (do both documents hold
  sections about the criteria?), up to ``n`` sections of A chosen by retrieval of the criteria in A
  alone (hybrid recall, :data:`CRITERIA_RETRIEVAL`: a criterion's defined terms are lexical; then
  200 chunks -> 50 sections -> re-ranked by path, as every retrieval), then for each of them 0-3
  counterparts in B, retrieved in B alone with the query *criteria + A's breadcrumb + the head of
  A's text* (a pool of ``candidates``, 20) and re-ranked offline by functional equivalence:
  reciprocal-rank fusion of the retrieval order, the titles' word similarity (numbering dropped),
  the titles' embedding similarity ("Negative Pledge" and "Liens"), the similarity of the
  sections' text vectors and the cosine of their word (stem) counts. The best counterpart is
  always kept; a second or third only when its fused score is within :data:`COUNTERPART_FLOOR` of
  the best (a weak runner-up is dropped rather than shown as a match).
* **Whole document** (no criteria): every section of A paired with its best counterpart in B, one
  to one where the structure allows: an assignment (Hungarian method, ``linear_sum_assignment``) on
  a similarity matrix that averages title, breadcrumb, text-vector and numbering similarity;
  a section of A left without a partner, or whose partner is below :data:`MIN_MATCH`, has "no
  counterpart" (unless a section of B has its title: a section split in two).

Every pair carries the computed differences (:func:`ppkit.answer.compare_diff.diff_sections`);
online, a rater adds the reference's ratings (:mod:`ppkit.answer.compare_gemini`).

Retrieval goes through the conductor: the caller passes ``search`` (the pipeline's ``retrieve``
restricted to one document), so this module never assembles a second pipeline. It does not
write reports (:mod:`ppkit.answer.compare_report`).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Protocol

import numpy as np
from rapidfuzz import fuzz, process

from ..core.errors import InvalidInput, MissingDependency
from ..core.text import clip, stems
from ..documents.titles import normalize_title, numbering_prefix
from .compare_diff import PairDiff, diff_sections

__all__ = ["SectionRef", "Rating", "Counterpart", "Pair", "FitCheck", "Comparison", "Searcher", "Rater",
           "compare_documents", "MIN_MATCH", "RRF_K", "COUNTERPART_FLOOR", "CRITERIA_RETRIEVAL"]

MIN_MATCH = 0.5  # whole-document mode: the similarity (0..1) below which a section has no counterpart
RRF_K = 60  # reciprocal-rank fusion constant (Cormack et al. 2009), not tuned here
EXCERPT_CHARS = 300  # characters of a section's text shown in a report
HEAD_CHARS = 400  # characters of A's text in the counterpart query (the embedder reads about 1,000)
FIT_SHARE = 0.5  # offline fit: share of the criteria's terms one section of each document must hold
# criteria mode: a 2nd or 3rd counterpart is kept only when its fused score is at least this share of the
# best's; chosen leave-one-report-out on the reference's four reports (every fold chose 0.96), see
# docs/results/compare.md
COUNTERPART_FLOOR = 0.96
CRITERIA_RETRIEVAL = "hybrid"  # stage-1 recall of the criteria in A and B (dense + BM25, fused by rank)


class Searcher(Protocol):
    """Retrieval in one document: ``search(query, doc, k, retrieval=None)`` -> ``[(node_id, score), ...]`` best
    first; ``retrieval`` names the stage-1 recall (``"dense"``, ``"bm25"``, ``"hybrid"``; ``None``: the index's)."""

    def __call__(self, query: str, doc: str, k: int, retrieval: str | None = None) -> list[tuple[str, float]]: ...


@dataclass(frozen=True)
class SectionRef:
    """A section of one document: node id, title, breadcrumb and line range."""

    doc: str
    node: str
    title: str
    breadcrumb: str
    line_start: int
    line_end: int
    excerpt: str = ""  # the head of its text (set on the sections of pairs)

    def to_dict(self) -> dict:
        d = {"node": self.node, "title": self.title, "breadcrumb": self.breadcrumb,
             "lines": [self.line_start, self.line_end]}
        return {**d, "excerpt": self.excerpt} if self.excerpt else d


@dataclass(frozen=True)
class Rating:
    """The reference's rating of a pair (online): level, the pair's role, risk direction, analysis."""

    level: str  # significant | moderate | aligned | unrelated
    role: str = ""
    risk: str = ""
    analysis: str = ""


@dataclass(frozen=True)
class Counterpart:
    """A section of B matched to a section of A, with its match score and what differs."""

    section: SectionRef
    score: float  # match score, 0..1 (criteria mode: fused rank score scaled to the best; whole: similarity)
    diff: PairDiff
    rating: Rating | None = None

    def to_dict(self) -> dict:
        d = {**self.section.to_dict(), "score": round(self.score, 4), "diff": self.diff.to_dict()}
        if self.rating is not None:
            d["rating"] = asdict(self.rating)
        return d


@dataclass(frozen=True)
class Pair:
    """A section of A and its counterparts in B, best first (none: "no counterpart")."""

    a: SectionRef
    b: tuple[Counterpart, ...]

    def to_dict(self) -> dict:
        return {"a": self.a.to_dict(), "b": [c.to_dict() for c in self.b]}


@dataclass(frozen=True)
class FitCheck:
    """Whether the criteria fit both documents, and the sections that show it."""

    fits: bool
    reason: str
    a_sections: tuple[str, ...] = ()  # titles of A's sections that match the criteria
    b_sections: tuple[str, ...] = ()
    online: bool = False


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare_documents`; ``to_json()`` is what ``ppkit compare --json`` prints."""

    a: str
    b: str
    criteria: str | None
    pairs: tuple[Pair, ...]
    # whole documents: every section of B no pair holds;
    # criteria: B's sections retrieved for the criteria that no pair holds
    unmatched_b: tuple[SectionRef, ...]
    fit: FitCheck | None = None
    timings: dict = field(default_factory=dict)  # phase -> seconds
    notes: tuple[str, ...] = ()  # fallbacks and what was skipped

    @property
    def mode(self) -> str:
        return "whole" if self.criteria is None else "criteria"

    def __repr__(self) -> str:
        matched = sum(1 for p in self.pairs if p.b)
        return (f"Comparison({self.a!r} vs {self.b!r}, {self.mode}: {len(self.pairs)} sections of A, {matched} "
                f"matched, {len(self.unmatched_b)} of B unmatched)")

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "criteria": self.criteria, "mode": self.mode,
                "fit": asdict(self.fit) if self.fit else None, "pairs": [p.to_dict() for p in self.pairs],
                "unmatched_b": [s.to_dict() for s in self.unmatched_b], "timings": self.timings,
                "notes": list(self.notes)}

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kw)


class Rater(Protocol):
    """The online part: a fit check and a rating per pair (the Gemini rater implements it)."""

    def fit(self, criteria: str, a: str, a_titles: list[str], b: str, b_titles: list[str]) -> FitCheck | None: ...

    def rate(self, criteria: str | None, a: SectionRef, a_text: str, b: SectionRef, b_text: str) -> Rating | None: ...


# --------------------------------------------------------------------------- the documents' sections

class _Doc:
    """One document's indexed sections: refs, texts (on demand) and mean chunk vectors."""

    def __init__(self, index, doc: str):
        self.index, self.doc = index, doc
        tree = index.trees[doc]
        self.units = index.units(doc)  # node_id -> (first, last line) of each indexed section
        self.refs = {nid: SectionRef(doc, nid, tree[nid].title, tree[nid].breadcrumb, a, b)
                     for nid, (a, b) in self.units.items()}
        self._texts: dict[str, str] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._counts: dict[str, Counter] = {}  # node_id -> stem counts of its text
        self._title_vectors: dict[str, np.ndarray] = {}

    def text(self, nid: str) -> str:
        if nid not in self._texts:
            a, b = self.units[nid]
            self._texts[nid] = self.index.rendered_text(self.doc, a, b)
        return self._texts[nid]

    def ref(self, nid: str) -> SectionRef:
        """The section's ref with the head of its text as excerpt."""
        return replace(self.refs[nid], excerpt=clip(self.text(nid), EXCERPT_CHARS))

    def vector(self, nid: str) -> np.ndarray:
        """The normalised mean of the section's chunk vectors (zeros when it has none)."""
        if nid not in self._vectors:
            ids = np.asarray([c.chunk_id for c in self.index.chunks_of(self.doc, nid)], dtype=np.int64)
            v = self.index.store.vectors(ids).mean(axis=0) if len(ids) else np.zeros(self.index.embedder.dim)
            n = float(np.linalg.norm(v))
            self._vectors[nid] = (v / n if n else v).astype(np.float32)
        return self._vectors[nid]

    def matrix(self, nids: list[str]) -> np.ndarray:
        return np.stack([self.vector(n) for n in nids]) if nids else np.zeros((0, self.index.embedder.dim))

    def counts(self, nid: str) -> Counter:
        """The stem counts of the section's text (computed once: a definitions section runs to 100,000 characters)."""
        if nid not in self._counts:
            self._counts[nid] = Counter(stems(self.text(nid)))
        return self._counts[nid]

    def title_matrix(self, nids: list[str]) -> np.ndarray:
        """The normalised embeddings of the sections' titles, numbering dropped, each embedded once as a query
        (the local embedder's query path: a few milliseconds, where a batch through torch costs seconds)."""
        for n in nids:
            if n not in self._title_vectors:
                v = np.asarray(self.index.embedder.embed_query(_title_key(self.refs[n].title) or self.refs[n].title),
                               dtype=np.float32)
                norm = float(np.linalg.norm(v))
                self._title_vectors[n] = v / norm if norm else v
        return np.stack([self._title_vectors[n] for n in nids]) if nids else np.zeros((0, self.index.embedder.dim))


def _title_key(title: str) -> str:
    return normalize_title(title, drop_numbering=True)


def _number(title: str) -> str:
    """The numbering of a title without its word (``Section 5.08`` and ``5.08.`` -> ``5.08``)."""
    p = numbering_prefix(title).casefold()
    for word in ("section", "article", "item", "part", "note", "schedule", "exhibit", "appendix", "chapter"):
        p = p.replace(word, "")
    return p.strip(" .:)(")


def _tf_cosine(x: str | Counter, y: str | Counter) -> float:
    """Cosine of two texts' stem counts (log-scaled), so a long section is not favoured for holding every word;
    ``x`` and ``y`` are texts or their stem counts."""
    cx = x if isinstance(x, Counter) else Counter(stems(x))
    cy = y if isinstance(y, Counter) else Counter(stems(y))
    dot = sum((1 + np.log(v)) * (1 + np.log(cy[w])) for w, v in cx.items() if w in cy)
    nx = np.sqrt(sum((1 + np.log(v)) ** 2 for v in cx.values()))
    ny = np.sqrt(sum((1 + np.log(v)) ** 2 for v in cy.values()))
    return float(dot / (nx * ny)) if nx and ny else 0.0


def _rrf(rankings: list[list[int]], n: int) -> np.ndarray:
    """Reciprocal-rank fusion of rankings of positions 0..n-1 (each a list, best first)."""
    out = np.zeros(n)
    for r in rankings:
        for rank, i in enumerate(r):
            out[i] += 1.0 / (RRF_K + rank + 1)
    return out


def _keep_best(fused: np.ndarray, keep: int, floor: float = COUNTERPART_FLOOR) -> list[tuple[int, float]]:
    """The best ``keep`` positions by fused score, each with its score scaled to the best's (1.0 first); after
    the first, only those at ``floor`` or above.

    >>> _keep_best(np.array([0.5, 1.0, 0.97, 0.9]), 3)
    [(1, 1.0), (2, 0.97)]
    """
    if not len(fused) or keep < 1:
        return []
    best = sorted(range(len(fused)), key=lambda i: -fused[i])[:keep]
    top = float(fused[best[0]])
    scaled = [(i, float(fused[i]) / top if top > 0 else 0.0) for i in best]
    return [scaled[0]] + [(i, s) for i, s in scaled[1:] if s >= floor]


# --------------------------------------------------------------------------- criteria mode

def _fit_offline(criteria: str, da: _Doc, db: _Doc, hits_a: list[str], hits_b: list[str]) -> FitCheck:
    """Each document fits when one of its retrieved sections holds at least :data:`FIT_SHARE` of the
    criteria's terms (stems, stop words dropped) in its title and text."""
    want = set(stems(criteria))
    if not want:
        raise InvalidInput("the criteria hold no searchable word; write what to compare, e.g. "
                           "--criteria 'collateral, guarantees and liens'")

    def matching(d: _Doc, hits: list[str]) -> list[str]:
        return [d.refs[n].title for n in hits
                if len(want & set(stems(d.refs[n].title + " " + d.text(n)))) >= FIT_SHARE * len(want)]

    ma, mb = matching(da, hits_a), matching(db, hits_b)
    missing = [d for d, m in ((da.doc, ma), (db.doc, mb)) if not m]
    reason = (f"sections about the criteria in both documents ({len(ma)} in {da.doc}, {len(mb)} in {db.doc})"
              if not missing else f"no section of {' or '.join(missing)} holds half of the criteria's terms")
    return FitCheck(not missing, reason, tuple(ma), tuple(mb))


def _counterparts(criteria: str, ref: SectionRef, da: _Doc, db: _Doc, search: Searcher, k: int,
                  keep: int, floor: float) -> list[tuple[str, float]]:
    """Up to ``keep`` sections of B for A's section ``ref``, by functional equivalence (see the module)."""
    head = clip(da.text(ref.node), HEAD_CHARS)
    crumb = ref.breadcrumb.split(" > ", 1)[-1]
    hits = [n for n, _ in search(f"{criteria}\n{crumb}\n{head}", db.doc, k) if n in db.refs]
    if not hits:
        return []
    title_a = _title_key(ref.title)
    titles = [fuzz.token_set_ratio(title_a, _title_key(db.refs[n].title)) for n in hits]
    title_vec = db.title_matrix(hits) @ da.title_matrix([ref.node])[0]
    cos = db.matrix(hits) @ da.vector(ref.node)
    share = [_tf_cosine(da.counts(ref.node), db.counts(n)) for n in hits]
    order = lambda xs: sorted(range(len(hits)), key=lambda i: -xs[i])  # noqa: E731
    fused = _rrf([list(range(len(hits))), order(titles), order(list(title_vec)), order(list(cos)), order(share)],
                 len(hits))
    return [(hits[i], score) for i, score in _keep_best(fused, keep, floor)]


# --------------------------------------------------------------------------- whole-document mode

def similarity_matrix(da: _Doc, db: _Doc, a_ids: list[str], b_ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Section similarity, 0..1: the mean of title, breadcrumb (parents) and text-vector similarity, with
    the same numbering (``5.08`` and ``Section 5.08``) as a fourth signal where two titles share it (a
    renumbered section is not penalised). Returns (similarity, title similarity), both ``len(a) x len(b)``."""
    ta = [_title_key(da.refs[n].title) for n in a_ids]
    tb = [_title_key(db.refs[n].title) for n in b_ids]
    pa = [" ".join(_title_key(t) for t in da.refs[n].breadcrumb.split(" > ")[1:-1]) for n in a_ids]
    pb = [" ".join(_title_key(t) for t in db.refs[n].breadcrumb.split(" > ")[1:-1]) for n in b_ids]
    title = process.cdist(ta, tb, scorer=fuzz.token_set_ratio, workers=1) / 100.0
    parent = process.cdist(pa, pb, scorer=fuzz.token_sort_ratio, workers=1) / 100.0
    vec = np.clip(da.matrix(a_ids) @ db.matrix(b_ids).T, 0.0, 1.0)
    na = [_number(da.refs[n].title) for n in a_ids]
    nb = [_number(db.refs[n].title) for n in b_ids]
    same = np.array([[float(bool(x) and x == y) for y in nb] for x in na]).reshape(len(a_ids), len(b_ids))
    return (title + parent + vec + same) / (3.0 + same), title


def _assign(sim: np.ndarray, title: np.ndarray) -> list[tuple[int, int]]:
    """One-to-one pairs (i, j) maximising total similarity, kept where ``sim >= MIN_MATCH``; a row left
    without a partner takes its best column of the same title (title similarity >= 0.9: a section split in
    two, "Debt" and "Debt (Continued)") when that is above :data:`MIN_MATCH` (many to one), else none."""
    try:
        from scipy.optimize import linear_sum_assignment
    except ImportError:
        raise MissingDependency("comparing whole documents needs scipy: pip install 'ppkit[compare]' "
                                "(or pass criteria to compare chosen sections)") from None

    if not sim.size:
        return []
    rows, cols = linear_sum_assignment(-sim)
    pairs = {int(i): int(j) for i, j in zip(rows, cols) if sim[i, j] >= MIN_MATCH}
    for i in range(sim.shape[0]):
        same = np.where(title[i] >= 0.9, sim[i], -1.0)
        if i not in pairs and same.max() >= MIN_MATCH:
            pairs[i] = int(same.argmax())
    return sorted(pairs.items())


# --------------------------------------------------------------------------- the comparison

def compare_documents(index, a: str, b: str, *, search: Searcher, criteria: str | None = None, n: int = 10,
                      counterparts: int = 3, candidates: int = 20, floor: float = COUNTERPART_FLOOR,
                      a_sections: list[str] | None = None,
                      rater: Rater | None = None,
                      on_phase: Callable[[str, int, int], None] | None = None) -> Comparison:
    """Compare document ``a`` with document ``b`` of ``index`` (see the module for the two modes).

    Args:
        index: a loaded index holding both documents.
        a, b: the documents' names in the index.
        search: retrieval in one document, through the conductor (:class:`Searcher`).
        criteria: what to compare ("collateral, guarantees and liens"); ``None``: the whole documents.
        n: criteria mode: sections of A to compare (the reference's 10).
        counterparts: criteria mode: at most this many sections of B per section of A (3).
        floor: criteria mode: a second or third counterpart is kept when its fused score is at least this share
            of the best's (:data:`COUNTERPART_FLOOR`; 0 keeps ``counterparts`` of them).
        candidates: criteria mode: sections of B retrieved per section of A before re-ranking (20).
        a_sections: criteria mode: these node ids of A instead of the ones retrieval chooses.
        rater: the online part (fit check and ratings); ``None``: offline.
        on_phase: called as ``on_phase(phase, done, total)`` while working (progress).

    Returns:
        A :class:`Comparison`.

    >>> ppkit.compare("Emerson.md", "TRoadhouse.md", criteria="liens and guarantees").pairs[0]  # doctest: +SKIP
    """
    if a == b:
        raise InvalidInput(f"compare needs two different documents, got {a!r} twice")
    if n < 1 or counterparts < 0 or not 0 <= floor <= 1:
        raise InvalidInput(f"n must be at least 1, counterparts at least 0 and floor within 0..1 (got n={n}, "
                           f"counterparts={counterparts}, floor={floor})")
    phase = on_phase or (lambda *_: None)
    da, db = _Doc(index, a), _Doc(index, b)
    timings, notes = {}, []
    t0 = time.perf_counter()
    if criteria is not None and not criteria.strip():
        raise InvalidInput("--criteria is empty: give what to compare, or leave it out to compare whole documents")
    if criteria is None:
        phase("matching sections", 0, 1)
        a_ids, b_ids = list(da.refs), list(db.refs)
        sim, title = similarity_matrix(da, db, a_ids, b_ids)
        assigned = dict(_assign(sim, title))
        found = {i: [(b_ids[j], float(sim[i, j]))] for i, j in assigned.items()}
        a_list = a_ids
        timings["match"] = time.perf_counter() - t0
        fit = None
    else:
        phase("fit check", 0, 1)
        hits_a = [nid for nid, _ in search(criteria, a, n, CRITERIA_RETRIEVAL) if nid in da.refs]
        hits_b = [nid for nid, _ in search(criteria, b, n, CRITERIA_RETRIEVAL) if nid in db.refs]
        fit = _fit_offline(criteria, da, db, hits_a, hits_b)
        if rater is not None:
            online_fit = rater.fit(criteria, a, [da.refs[x].title for x in hits_a], b,
                                   [db.refs[x].title for x in hits_b])
            fit = online_fit or fit
            if online_fit is None:
                notes.append("the online fit check failed; the offline one was used")
        timings["fit"] = time.perf_counter() - t0
        if not fit.fits:
            return Comparison(a, b, criteria, (), (), fit, timings, tuple(notes))
        unknown = [x for x in a_sections or () if x not in da.refs]
        if unknown:
            raise InvalidInput(f"{a} has no indexed section {unknown[0]!r}; pass node ids of its sections "
                               f"(e.g. {', '.join(list(da.refs)[:3])})")
        a_list, found = (list(a_sections) if a_sections else hits_a), {}
        for i, nid in enumerate(a_list):
            phase("counterparts", i, len(a_list))
            found[i] = _counterparts(criteria, da.refs[nid], da, db, search, candidates, counterparts, floor)
        b_ids = hits_b
        timings["match"] = time.perf_counter() - t0 - timings["fit"]
    t1 = time.perf_counter()
    pairs, used = [], set()
    for i, nid in enumerate(a_list):
        phase("differences", i, len(a_list))
        cps = []
        for bid, score in found.get(i, []):
            used.add(bid)
            rating = None
            if rater is not None:
                rating = rater.rate(criteria, da.refs[nid], da.text(nid), db.refs[bid], db.text(bid))
                if rating is None:
                    notes.append(f"no rating for {da.refs[nid].title} / {db.refs[bid].title}")
            cps.append(Counterpart(db.ref(bid), score, diff_sections(da.text(nid), db.text(bid)), rating))
        pairs.append(Pair(da.ref(nid), tuple(cps)))
    timings["differences"] = time.perf_counter() - t1
    unmatched = tuple(db.refs[x] for x in b_ids if x not in used)
    phase("done", 1, 1)
    return Comparison(a, b, criteria, tuple(pairs), unmatched, fit, {k: round(v, 3) for k, v in timings.items()},
                      tuple(dict.fromkeys(notes)))
