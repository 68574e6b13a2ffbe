"""The signals that say whether a section of B does the job of a section of A: one matrix per signal.

Every function here takes the two documents' sections (:class:`ppkit.compare.sections.DocSections`) and returns a
``len(A) x len(B)`` array over their sections (text of their own, document order). First pass, from each pair alone:

* ``text``: cosine of the sections' own words, TF-IDF weighted (stems, log-scaled counts, idf over the sections
  of both documents), so the defined terms and cross-references a section uses ("Swing Line Loan", "Section 2.05")
  weigh by how rare they are; a long section is not favoured for holding every word;
* ``vector``: cosine of the sections' text vectors (the stored chunk vectors, :meth:`DocSections.vector`);
* ``title_words``: the same TF-IDF cosine over the titles, numbering dropped ("Section 4.08 Taxes" and
  "5.11 Taxes" share "taxes");
* ``title_fuzz``: RapidFuzz ``token_set_ratio`` of the titles, numbering dropped, 0..1;
* ``parent``: TF-IDF cosine of the parents' whole texts (an Article's sections pair with the counterpart
  Article's);
* ``position``: 1 minus the distance of the two sections' places in their documents (0..1 each).

Second pass, from a first score ``s1`` of every pair (:func:`consistency`):

* ``parent_votes``: the share of A's parent's sections whose best counterpart (by ``s1``) lies under B's
  parent: containers paired through their children;
* ``mutual``: ``-log(1 + r)``, ``r`` the number of A's sections that prefer this section of B more than this
  one does (0 for B's favourite): a soft one-to-one backbone.

Nothing here is fitted or decides a pair (:mod:`ppkit.compare.align`).
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
from rapidfuzz import fuzz, process

from ..core.errors import MissingDependency
from ..core.text import stems
from ..documents.titles import normalize_title
from .sections import DocSections

__all__ = ["FIRST", "SECOND", "first_pass", "consistency", "tfidf_vectors", "title_key"]

FIRST = ("text", "vector", "title_words", "title_fuzz", "parent", "position")
SECOND = ("parent_votes", "mutual")


def title_key(title: str) -> str:
    """A title as the signals compare it: casefolded, numbering and punctuation dropped."""
    return normalize_title(title, drop_numbering=True) or normalize_title(title)


def tfidf_vectors(counts: list[Counter], df: Counter | None = None, n: int | None = None):
    """L2-normalised TF-IDF rows of ``counts`` (one Counter of terms per text) as a SciPy sparse matrix:
    ``(1 + log tf) * log((n + 1) / (df + 0.5))``, ``df`` and ``n`` by default those of ``counts`` themselves."""
    try:
        from scipy import sparse
    except ImportError:
        raise MissingDependency("comparing documents needs scipy: pip install 'ppkit[compare]'") from None
    if df is None:
        df = Counter(t for c in counts for t in c)
        n = len(counts)
    vocab = {t: i for i, t in enumerate(df)}
    rows, cols, vals = [], [], []
    for r, c in enumerate(counts):
        for t, k in c.items():
            if t in vocab:
                rows.append(r)
                cols.append(vocab[t])
                vals.append((1.0 + np.log(k)) * np.log((n + 1) / (df[t] + 0.5)))
    m = sparse.csr_matrix((vals, (rows, cols)), shape=(len(counts), len(vocab)), dtype=np.float64)
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1))).ravel()
    norms[norms == 0] = 1.0
    return sparse.csr_matrix(sparse.diags(1.0 / norms) @ m)


def _cosines(ca: list[Counter], cb: list[Counter], df: Counter | None = None, n: int | None = None) -> np.ndarray:
    if df is None:
        df, n = Counter(t for c in ca + cb for t in c), len(ca) + len(cb)
    va, vb = tfidf_vectors(ca, df, n), tfidf_vectors(cb, df, n)
    return np.asarray((va @ vb.T).todense())


def first_pass(sa: DocSections, sb: DocSections) -> dict[str, np.ndarray]:
    """The first-pass signals (:data:`FIRST`) of every section of A against every section of B."""
    A, B = sa.nodes, sb.nodes
    ca = [Counter(stems(sa.text(x))) for x in A]
    cb = [Counter(stems(sb.text(x))) for x in B]
    df, n = Counter(t for c in ca + cb for t in c), len(ca) + len(cb)
    ta, tb = [title_key(sa.title(x)) for x in A], [title_key(sb.title(x)) for x in B]
    out = {"text": _cosines(ca, cb, df, n),
           "vector": np.clip(sa.matrix(A) @ sb.matrix(B).T, 0.0, 1.0).astype(np.float64),
           "title_words": _cosines([Counter(stems(t)) for t in ta], [Counter(stems(t)) for t in tb], df, n),
           "title_fuzz": process.cdist(ta, tb, scorer=fuzz.token_set_ratio, workers=1) / 100.0}
    pa, pb = sorted({sa.parent(x) for x in A}), sorted({sb.parent(x) for x in B})
    parents = _cosines([Counter(stems(sa.subtree_text(p))) for p in pa], [Counter(stems(sb.subtree_text(p))) for p in pb])
    ia, ib = [pa.index(sa.parent(x)) for x in A], [pb.index(sb.parent(x)) for x in B]
    out["parent"] = parents[np.ix_(ia, ib)]
    pos_a = np.array([sa.position[x] for x in A])
    pos_b = np.array([sb.position[x] for x in B])
    out["position"] = 1.0 - np.abs(pos_a[:, None] - pos_b[None, :])
    return out


def consistency(sa: DocSections, sb: DocSections, s1: np.ndarray) -> dict[str, np.ndarray]:
    """The second-pass signals (:data:`SECOND`) from a first score ``s1`` (``len(A) x len(B)``)."""
    if not s1.size:
        return {k: np.zeros_like(s1) for k in SECOND}
    A, B = sa.nodes, sb.nodes
    best = s1.argmax(axis=1)
    pa, pb = [sa.parent(x) for x in A], [sb.parent(x) for x in B]
    votes: dict[str, Counter] = defaultdict(Counter)  # A's parent -> {B's parent: its sections' best counterparts}
    for i in range(len(A)):
        votes[pa[i]][pb[best[i]]] += 1
    share = np.array([[votes[pa[i]][pb[j]] / sum(votes[pa[i]].values()) for j in range(len(B))]
                      for i in range(len(A))])
    rank = np.empty(s1.shape, dtype=np.float64)  # rank[i, j]: how many rows of column j score above row i
    order = np.argsort(-s1, axis=0, kind="stable")
    rank[order, np.arange(s1.shape[1])[None, :]] = np.arange(s1.shape[0])[:, None]
    return {"parent_votes": share, "mutual": -np.log1p(rank)}
