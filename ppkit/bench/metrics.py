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

Images (the multimodal set), per question and k, against the reference run's images:

* **image_hit**: 1 when at least one image the synthesizer chose is a gold image (None when
  the question has no gold image);
* **image_precision**: the share of chosen images that are gold (None when none was chosen);
* **image_reachable**: at least one gold image is among the images the selection can choose
  from for the k sections - the image channel's candidates (``Section.image_links``: linked from
  the section, trimmed or not, discussed in it, named by number, recalled by caption), else the
  images of the text sent - the ceiling of image_hit for any choice over that retrieval;
* the **by caption** pair: the same against every image whose caption the reference's label
  names (its labels and paths sometimes disagree, and one figure can be several files).

Images are named ``Doc/folder/file.png`` (:func:`image_key`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from ..answer.synth import ExtractiveSynthesizer, Synthesizer

__all__ = ["Sent", "covered", "hit_at_k", "recall_at_k", "context_chars", "score_question", "mean", "image_key",
           "image_hit", "image_precision", "image_metrics"]


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


def image_key(doc: str, path: str) -> str:
    """``"Galore/tables/fileoutpart157.png"``: an image named by its paper and its path below the paper's folder,
    from an absolute path under that folder (any OS) or a path relative to the document.

    >>> image_key("Galore", "C:/data/extracted_papers/Galore/tables/fileoutpart157.png")
    'Galore/tables/fileoutpart157.png'
    >>> image_key("CLIP", "./figures/x.png")
    'CLIP/figures/x.png'
    """
    p = path.replace("\\", "/")
    i = p.lower().rfind(f"/{doc.lower()}/")
    if i >= 0:
        rel = p[i + len(doc) + 2:]
    elif p.startswith("/") or ":" in p.split("/", 1)[0]:
        rel = "/".join(p.split("/")[-2:])  # an absolute path elsewhere: its folder and file
    else:
        rel = "/".join(x for x in PurePosixPath(p).parts if x != ".")
    return f"{doc}/{rel}"


def image_hit(chosen: list[str], gold: list[str]) -> float | None:
    """1.0 if at least one chosen image is gold, else 0.0; None when there are no gold images.

    >>> image_hit(["a", "b"], ["b", "c"]), image_hit([], ["c"]), image_hit(["a"], [])
    (1.0, 0.0, None)
    """
    if not gold:
        return None
    return 1.0 if set(chosen) & set(gold) else 0.0


def image_precision(chosen: list[str], gold: list[str]) -> float | None:
    """Share of chosen images that are gold; None when nothing was chosen.

    >>> image_precision(["a", "b", "c", "d"], ["b", "d", "e"]), image_precision([], ["b"])
    (0.5, None)
    """
    if not chosen:
        return None
    g = set(gold)
    return sum(c in g for c in chosen) / len(chosen)


def _pool(section) -> list:
    """The images a selection can choose from for a section: the image channel's, else those of the text sent."""
    return [link.image for link in section.image_links] if getattr(section, "image_links", ()) else list(section.images)


def image_metrics(question: str, sections, gold_images, *, gold_by_caption=None,
                  synthesizer: Synthesizer | None = None) -> dict:
    """Images the synthesizer chooses for ``question`` from ``sections``, scored against the gold.

    Returns:
        ``{"images", "image_labels", "image_hit", "image_precision", "image_reachable"}`` (plus
        ``image_hit_by_caption`` / ``image_precision_by_caption`` when ``gold_by_caption`` is given);
        a metric is None where it is undefined.
    """
    _, info = (synthesizer or ExtractiveSynthesizer()).synthesize(question, sections)
    chosen = [image_key(im["doc"], im["path"]) for im in info.get("images", [])]
    gold = list(gold_images)
    out = {"images": chosen, "image_labels": [im.get("label", "") for im in info.get("images", [])],
           "image_hit": image_hit(chosen, gold), "image_precision": image_precision(chosen, gold),
           "image_reachable": image_hit([image_key(s.doc, im.path) for s in sections for im in _pool(s)], gold)}
    if gold_by_caption is not None:
        out["image_hit_by_caption"] = image_hit(chosen, list(gold_by_caption))
        out["image_precision_by_caption"] = image_precision(chosen, list(gold_by_caption))
    return out
