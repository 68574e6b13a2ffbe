"""How far a section alignment agrees with a person's: the scores of ``../shared/data/comparison/alignment/README.md``.

Over the rows of a :class:`ppkit.bench.data.alignments.GoldAlignment` that are neither containers nor front
matter:

* **best counterpart right**: among the sections the person gave a counterpart, the share whose first predicted
  counterpart is one of the person's (sure or likely);
* **pairs precision and recall**: every predicted link against every gold link (sure and likely);
* **no counterpart recognised**: among the sections the person gave none, the share predicted with none.

``predicted`` is ``{A's node id: [B's node ids, best first]}``; a section missing from it has no counterpart.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..data.alignments import GoldAlignment

__all__ = ["AlignmentScore", "score_alignment", "ratio"]


def ratio(hit: int, of: int) -> float | None:
    """``hit / of``, or None when ``of`` is 0."""
    return hit / of if of else None


@dataclass(frozen=True)
class AlignmentScore:
    """Counts behind the four scores (each score is a property)."""

    best_hit: int
    best_of: int  # scored sections the person gave a counterpart
    pairs_hit: int
    pairs_found: int
    pairs_gold: int
    none_hit: int
    none_of: int  # scored sections the person gave none
    misses: tuple[str, ...] = ()  # "A title -> predicted | gold" for each wrong first counterpart or missed none

    @property
    def best(self) -> float | None:
        return ratio(self.best_hit, self.best_of)

    @property
    def precision(self) -> float | None:
        return ratio(self.pairs_hit, self.pairs_found)

    @property
    def recall(self) -> float | None:
        return ratio(self.pairs_hit, self.pairs_gold)

    @property
    def none(self) -> float | None:
        return ratio(self.none_hit, self.none_of)

    def __add__(self, other: AlignmentScore) -> AlignmentScore:
        fields = ("best_hit", "best_of", "pairs_hit", "pairs_found", "pairs_gold", "none_hit", "none_of")
        return AlignmentScore(*(getattr(self, f) + getattr(other, f) for f in fields), self.misses + other.misses)

    def to_dict(self) -> dict:
        return {**asdict(self), "best": self.best, "precision": self.precision, "recall": self.recall,
                "none": self.none}


def score_alignment(gold: GoldAlignment, predicted: dict[str, list[str]], *, titles: dict[str, str] | None = None
                    ) -> AlignmentScore:
    """The scores of ``predicted`` against ``gold`` (see the module); ``titles``: B's node id -> title, for the
    ``misses`` lines.

    >>> from ppkit.bench.data.alignments import GoldAlignment, GoldLink, GoldRow
    >>> g = GoldAlignment("toy", "A", "B", (GoldRow("0001", "Fees", (GoldLink("0004", "Fees", "sure"),)),
    ...                                      GoldRow("0002", "Bids", ())))
    >>> s = score_alignment(g, {"0001": ["0004", "0005"], "0002": []})
    >>> s.best, s.precision, s.recall, s.none
    (1.0, 0.5, 1.0, 1.0)
    """
    name = (titles or {}).get
    counts = dict.fromkeys(("best_hit", "best_of", "pairs_hit", "pairs_found", "pairs_gold", "none_hit", "none_of"), 0)
    misses = []
    for row in gold.rows:
        if not row.scored:
            continue
        want = {x.node for x in row.b}
        got = list(dict.fromkeys(predicted.get(row.a, [])))
        counts["pairs_hit"] += len(want & set(got))
        counts["pairs_found"] += len(got)
        counts["pairs_gold"] += len(want)
        if want:
            counts["best_of"] += 1
            counts["best_hit"] += bool(got and got[0] in want)
        else:
            counts["none_of"] += 1
            counts["none_hit"] += not got
        if (want and not (got and got[0] in want)) or (not want and got):
            misses.append(f"{row.title} -> {name(got[0], got[0]) if got else 'none'} | "
                          f"{', '.join(x.title or x.node for x in row.b) or 'none'}")
    return AlignmentScore(**counts, misses=tuple(misses))
