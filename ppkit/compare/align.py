"""Whole-document alignment by function: each section of A with the 0-3 sections of B that do the same job.

The method, in order:

1. **Score every pair** (section of A, section of B) with a linear function of the first-pass signals of
   :mod:`ppkit.compare.signals` (own text, text vectors, titles, the parents' texts, place in the document);
2. **make it consistent**: add the second-pass signals computed from that first score (the share of A's parent's
   sections whose best counterpart lies under B's parent, and how many sections of A prefer this section of B)
   and score again. Both sets of weights come from a conditional logit (McFadden 1973): for each section of A, a
   softmax over B's sections, fitted to maximise the probability of the human-aligned counterparts
   (``ppkit bench compare --fit``; the weights and where they were fitted are in ``align_weights.json``);
3. **decide**: a section's counterparts are its best section of B and up to two more within ``extra`` (logit
   units) of the best. A section whose best stands out of its row (``(best - mean) / std`` over B's sections)
   ``none_z`` robust deviations less than the typical section of this pair of documents does (the median over A's
   sections, scaled by 1.4826 x the median absolute deviation), and less than ``none_stand`` in itself, has **no
   counterpart**: nothing in B does its job;
4. **containers** (headings with no text of their own) are paired through their children: the deepest heading
   of B under which at least half of their sections' counterparts lie;
5. every pair carries its **score** (the softmax probability: the alignment's belief that this section of B is
   the counterpart, among all of B's sections) and its **reason** in words (shared defined terms, same title,
   parents paired, mutual best); B's sections no pair holds are listed as unmatched.

It does not compute what differs within a pair (:mod:`ppkit.compare.diff`) or choose sections for criteria
(:mod:`ppkit.compare.comparison`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..core.errors import InvalidInput
from ..core.ids import ROOT_ID
from ..core.io import atomic_write
from ..core.text import stems
from .sections import DocSections
from .signals import FIRST, SECOND, consistency, first_pass

__all__ = ["AlignWeights", "Link", "Alignment", "align", "score_matrix", "decide", "stand_out", "WEIGHTS_PATH",
           "MAX_COUNTERPARTS"]

WEIGHTS_PATH = Path(__file__).with_name("align_weights.json")
MAX_COUNTERPARTS = 3
CONTAINER_SHARE = 0.5  # a container's counterpart holds at least this share of its sections' counterparts
_TERM = re.compile(r"\b[A-Z][\w’'-]+(?:\s+(?:(?:of|and|for|the|to|in|on)\s+)?[A-Z][\w’'-]+)+")


@dataclass(frozen=True)
class AlignWeights:
    """The fitted parts of the alignment: the two passes' weights, the no-counterpart and extra-counterpart
    thresholds, and where they were fitted (``fitted_on``, ``command``)."""

    first: dict[str, float]  # signal -> weight, first pass (FIRST)
    second: dict[str, float]  # signal -> weight, second pass (FIRST + SECOND)
    none_z: float  # robust z of a section's stand-out below which it has no counterpart (see decide)
    extra: float  # a second or third counterpart scores within this of the best (logit units)
    none_stand: float  # ... and only when its stand-out is below this
    fitted_on: str = ""
    command: str = ""

    def __post_init__(self):
        missing = [k for k in FIRST if k not in self.first] + [k for k in FIRST + SECOND if k not in self.second]
        if missing:
            raise InvalidInput(f"alignment weights lack {', '.join(missing)}; refit them with "
                               "`ppkit bench compare --fit FILE`")

    @classmethod
    def load(cls, path: str | Path = WEIGHTS_PATH) -> AlignWeights:
        """The weights saved at ``path`` (default: the package's own, ``align_weights.json``)."""
        try:
            return cls(**json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError) as e:
            raise InvalidInput(f"cannot read alignment weights from {path} ({e}); refit them with "
                               "`ppkit bench compare --fit FILE`") from None

    def save(self, path: str | Path) -> Path:
        """Write the weights as JSON (atomically)."""
        atomic_write(Path(path), json.dumps(asdict(self), indent=1) + "\n")
        return Path(path)


@dataclass(frozen=True)
class Link:
    """One counterpart of a section of A: B's node id, the score (0..1) and the reason in words."""

    b: str
    score: float
    reason: str


@dataclass(frozen=True)
class Alignment:
    """Every section and container of A with its counterparts in B, best first, and B's sections none holds."""

    a: str
    b: str
    links: dict[str, tuple[Link, ...]]  # A's section or container -> its counterparts (empty: none)
    containers: frozenset[str]
    unmatched_b: tuple[str, ...]


def score_matrix(signals: dict[str, np.ndarray], weights: dict[str, float]) -> np.ndarray:
    """The linear score ``sum_k weights[k] * signals[k]`` (``len(A) x len(B)``)."""
    first = next(iter(signals.values()))
    return sum((weights[k] * signals[k] for k in weights), np.zeros_like(first))


def stand_out(s: np.ndarray) -> np.ndarray:
    """How far each row's best score stands out of its row: ``(best - mean) / std`` over B's sections."""
    return (s.max(axis=1) - s.mean(axis=1)) / np.maximum(s.std(axis=1), 1e-9)


def decide(s: np.ndarray, none_z: float, extra: float, none_stand: float = np.inf) -> list[list[int]]:
    """For each row of scores ``s``: the columns kept, best first (see the module, step 3).

    A row has no counterpart when its best stands out less than the other rows' do (:func:`stand_out`, compared
    by a robust z: median, 1.4826 x the median absolute deviation, below ``none_z``) and less than ``none_stand``
    in itself (two documents whose sections nearly all match, such as two years of one filing, have a tight spread
    of stand-outs: a section there is not unmatched for being slightly below its neighbours).

    >>> s = np.array([[9.0, 0, 1, 0, 1], [6.0, 0, 5.8, 0, 0], [3.0, 0, 2.8, 0, 2.9], [8.0, 0, 1, 0, 1]])
    >>> decide(s, -1.0, 0.6)  # the third row's best hardly stands out: no counterpart
    [[0], [0, 2], [], [0]]
    >>> decide(s, -1.0, 0.6, none_stand=0.5)  # ... but it stands out more than 0.5 in itself: kept
    [[0], [0, 2], [0, 4, 2], [0]]
    """
    if not s.size:
        return [[] for _ in range(s.shape[0])]
    best, stand = s.max(axis=1), stand_out(s)
    med = float(np.median(stand))
    spread = 1.4826 * float(np.median(np.abs(stand - med))) or float(stand.std()) or 1.0
    out = []
    for i, row in enumerate(s):
        if (stand[i] - med) / spread < none_z and stand[i] < none_stand:
            out.append([])
            continue
        order = [int(j) for j in np.argsort(-row, kind="stable")[:MAX_COUNTERPARTS]]
        out.append([j for k, j in enumerate(order) if k == 0 or row[j] >= best[i] - extra])
    return out


def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _shared_terms(ta: str, tb: str, k: int = 3) -> list[str]:
    """Up to ``k`` capitalised terms (defined terms, names) both texts use, the rarest in ``tb`` first; else the
    longest words both use."""
    ca = Counter(m.group(0) for m in _TERM.finditer(ta))
    cb = Counter(m.group(0) for m in _TERM.finditer(tb))
    both = sorted(set(ca) & set(cb), key=lambda t: (cb[t] + ca[t], -len(t)))
    if both:
        return both[:k]
    words_b = set(stems(tb))
    seen: dict[str, str] = {}
    for w in re.findall(r"[A-Za-z][A-Za-z-]{5,}", ta):
        s = stems(w)
        if s and s[0] in words_b:
            seen.setdefault(s[0], w.lower())
    return sorted(seen.values(), key=len, reverse=True)[:k]


def _reason(sa: DocSections, sb: DocSections, i: int, j: int, sig: dict[str, np.ndarray],
            mutual: bool) -> str:
    a, b = sa.nodes[i], sb.nodes[j]
    parts = []
    terms = _shared_terms(sa.text(a), sb.text(b))
    if terms:
        parts.append("shared terms: " + ", ".join(terms))
    if sig["title_fuzz"][i, j] >= 0.9:
        parts.append("same title")
    elif sig["title_words"][i, j] > 0:
        parts.append("title words shared")
    pa, pb = sa.parent(a), sb.parent(b)
    if sig["parent_votes"][i, j] >= CONTAINER_SHARE and ROOT_ID not in (pa, pb):
        parts.append(f"same position: {sa.title(pa)} ↔ {sb.title(pb)}")
    if mutual:
        parts.append("mutual best")
    return "; ".join(parts) or "closest text"


def _ancestors(d: DocSections, nid: str) -> list[str]:
    """The headings above ``nid`` (the root left out), nearest first."""
    out, p = [], d.tree[nid].parent_id
    while p is not None and p != ROOT_ID:
        out.append(p)
        p = d.tree[p].parent_id
    return out


def _containers(sa: DocSections, sb: DocSections, links: dict[str, tuple[Link, ...]]) -> dict[str, tuple[Link, ...]]:
    """Each container of A with the deepest heading of B under which at least :data:`CONTAINER_SHARE` of its
    sections' first counterparts lie (none when no heading of B holds that many)."""
    out = {}
    for c in sa.containers:
        under = sa.sections_under(c)
        firsts = [links[x][0].b for x in under if links.get(x)]
        votes = Counter(h for x in firsts for h in _ancestors(sb, x))
        held = [h for h, k in votes.items() if k >= CONTAINER_SHARE * len(firsts)]
        if not held:
            out[c] = ()
            continue
        head = max(held, key=lambda h: (sb.tree[h].depth, votes[h]))
        k = votes[head]
        out[c] = (Link(head, k / len(under), f"through its sections: {k} of {len(under)} have their counterpart "
                                             f"under {sb.title(head)}"),)
    return out


def align(sa: DocSections, sb: DocSections, weights: AlignWeights | None = None, *,
          signals: dict[str, np.ndarray] | None = None) -> Alignment:
    """Align document A's sections (``sa``) with document B's (``sb``); see the module.

    ``weights``: default the package's fitted ones (:meth:`AlignWeights.load`); ``signals``: the first-pass
    signals when already computed (:func:`ppkit.compare.signals.first_pass`, as the fitting does).

    >>> align(DocSections(index, "Emerson"), DocSections(index, "TRoadhouse")).links["0003"][0]  # doctest: +SKIP
    Link(b='0012', score=0.93, reason='shared terms: ...; same position: Article 1. DEFINITIONS ↔ ARTICLE 1 ...')
    """
    w = weights or AlignWeights.load()
    sig = dict(signals) if signals is not None else first_pass(sa, sb)
    sig.update(consistency(sa, sb, score_matrix({k: sig[k] for k in FIRST}, w.first)))
    s = score_matrix(sig, w.second)
    keep = decide(s, w.none_z, w.extra, w.none_stand)
    prob = _softmax(s) if s.size else s
    col_best = s.argmax(axis=0) if s.size else np.zeros(0, int)
    links: dict[str, tuple[Link, ...]] = {}
    for i, cols in enumerate(keep):
        links[sa.nodes[i]] = tuple(
            Link(sb.nodes[j], float(prob[i, j]), _reason(sa, sb, i, j, sig, k == 0 and col_best[j] == i))
            for k, j in enumerate(cols))
    links.update(_containers(sa, sb, links))
    used = {lk.b for ls in links.values() for lk in ls}
    return Alignment(sa.doc, sb.doc, links, frozenset(sa.containers), tuple(x for x in sb.nodes if x not in used))
