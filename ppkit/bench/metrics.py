"""Retrieval metrics against gold heading lines (how retrieval quality is measured without an LLM).

What a retriever *sent* is a list of items, each with a ``doc`` and
``contains_line(line)`` (a :class:`ppkit.Section` qualifies: its ``sent_ranges``
are the source lines in the text actually sent, after any trimming), and a size in
characters (``len(item.text)``, or ``item.chars``). A gold section is
``(section_id, doc, heading line, end of its own text)``.

* **hit@k**: 1 when at least one gold heading line lies inside the text sent for one
  of the first k items, else 0.
* **recall@k**: the share of the question's gold sections whose heading line lies
  inside the text sent for the first k items.
* **context chars**: characters sent for the first k items. Always reported beside
  hit and recall: sending a whole filing would "hit" everything.
* **overlap variants** (``hit_overlap``/``recall_overlap``): lenient versions in which
  a gold section counts when *any* of its own lines (heading to next heading) was
  sent. They matter for chunk baselines, whose chunks may hold a section's body
  without its heading line; they are reported beside the strict numbers so that the
  comparison does not hinge on the definition.

A chunk baseline's item is a :class:`Sent` built from the chunk's source line range.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Sent", "covered", "hit_at_k", "recall_at_k", "context_chars", "score_question", "mean"]


@dataclass(frozen=True)
class Sent:
    """One retrieved item as sent: source line ranges of one document, and its size."""

    doc: str
    ranges: tuple[tuple[int, int], ...]
    chars: int
    label: str = ""  # e.g. the chunk's id or breadcrumb, for display

    def contains_line(self, line: int) -> bool:
        return any(a <= line <= b for a, b in self.ranges)

    def overlaps(self, first: int, last: int) -> bool:
        return any(a <= last and first <= b for a, b in self.ranges)


def _chars(item) -> int:
    c = getattr(item, "chars", None)
    return int(c) if c is not None else len(item.text)


def _overlaps(item, first: int, last: int) -> bool:
    f = getattr(item, "overlaps", None)
    if f is not None:
        return f(first, last)
    return any(a <= last and first <= b for a, b in item.sent_ranges)


def covered(items, gold, *, overlap: bool = False) -> list[str]:
    """Section ids of the gold sections covered by ``items``.

    Args:
        items: sent items (Sections or :class:`Sent`).
        gold: ``[(section_id, doc, heading line, own-text end)]``.
        overlap: count any sent line of the gold section's own text, not only its heading line.
    """
    out = []
    for sid, doc, line, end in gold:
        for it in items:
            if it.doc != doc:
                continue
            if it.contains_line(line) or (overlap and _overlaps(it, line, end)):
                out.append(sid)
                break
    return out


def hit_at_k(items, gold, k: int, *, overlap: bool = False) -> float:
    """1.0 when a gold heading line is inside the text sent for one of the first ``k`` items.

    >>> s = Sent("AMD", ((10, 20),), 500)
    >>> hit_at_k([s], [("AMD#0003", "AMD", 12, 15)], k=1)
    1.0
    """
    return 1.0 if covered(list(items)[:k], gold, overlap=overlap) else 0.0


def recall_at_k(items, gold, k: int, *, overlap: bool = False) -> float:
    """Share of gold sections whose heading line is inside the text sent for the first ``k`` items."""
    if not gold:
        return 0.0
    return len(covered(list(items)[:k], gold, overlap=overlap)) / len(gold)


def context_chars(items, k: int) -> int:
    """Characters sent for the first ``k`` items."""
    return sum(_chars(it) for it in list(items)[:k])


def score_question(items, gold, ks, *, doc: list[str] | None = None) -> dict:
    """All metrics of one question at each k.

    Returns ``{str(k): {"hit", "recall", "hit_overlap", "recall_overlap", "context_chars",
    "n_sent", "wrong_doc"}}``; ``wrong_doc`` is the share of the first k items from a
    document other than ``doc`` (``None`` when ``doc`` is not given).
    """
    items = list(items)
    out = {}
    for k in ks:
        top = items[:k]
        wrong = None
        if doc:
            wrong = (sum(1 for it in top if it.doc not in doc) / len(top)) if top else 0.0
        out[str(k)] = {"hit": hit_at_k(top, gold, k), "recall": recall_at_k(top, gold, k),
                       "hit_overlap": hit_at_k(top, gold, k, overlap=True),
                       "recall_overlap": recall_at_k(top, gold, k, overlap=True),
                       "context_chars": context_chars(top, k), "n_sent": len(top), "wrong_doc": wrong}
    return out


def mean(rows: list[dict], key: str) -> float | None:
    """Mean of ``row[key]`` over rows where it is not None (None when there is none)."""
    vals = [r[key] for r in rows if r.get(key) is not None]
    return sum(vals) / len(vals) if vals else None
