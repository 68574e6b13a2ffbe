"""Choosing the images to show with an answer, offline.

The candidates are the image channel's for the *selected sections*
(:mod:`ppkit.retrieval.image_channel`: linked from a section, trimmed or not, discussed in it,
named by number, or recalled by caption). Each is scored by how much of the question its
caption and the sentences that discuss it share (idf-weighted stems), weighed by its section's
rank and by whether only recall reached it; an image whose figure or table the question names
(``Figure 5``) wins; a threshold and a share of the best score mean an answer may show none,
and one figure of several files is shown once (its largest file). Each choice says why it was
made (``ImageChoice.reason``). The defaults were fit leave-one-paper-out
(:mod:`ppkit.bench.fit.images`). Associating images with captions happens when the tree is built
(:mod:`ppkit.documents.images`); showing them - never wider than their own pixels - is the
notebook views' job (:mod:`ppkit.ui.answer_view`). What this module does not do: look at
pixels (online, :func:`ppkit.answer.markers.visual_filter` lets Gemini do that).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, replace

from ..core.text import stems
from ..documents.images import HEADING_LINE, IMAGE_LINK, caption_key
from ..documents.tree import Image
from ..retrieval.analyze import Analysis
from ..retrieval.image_channel import image_record_text
from ..retrieval.types import ImageLink, Section

__all__ = ["ImageChoice", "score_images", "with_priors", "select_images", "DEFAULT_THRESHOLD", "DEFAULT_RATIO",
           "DEFAULT_RANK_DECAY", "DEFAULT_RECALLED"]

# -- offline selection ---------------------------------------------------------------------
# The four defaults below were fit on the 20 multimodal questions (in-sample, k=3 and k=5 agree) by
# ``python -m ppkit.bench.fit.images``; what they give on questions about a paper the fit never saw
# (leave-one-paper-out) is on docs/results/multimodal.md.
DEFAULT_THRESHOLD = 0.05  # share of the question's (idf-weighted) terms found in an image's label/context
DEFAULT_RATIO = 0.4  # an image is shown only if it scores at least this share of the best image's score
CONTEXT_WEIGHT = 0.5  # a term found only in the discussion or the text around the image counts half
DEFAULT_RANK_DECAY = 0.7  # the match is multiplied by this per rank below the first of the image's section
DEFAULT_RECALLED = 0.5  # ... and by this when the image channel reached it only by recall (no section link)


@dataclass(frozen=True)
class ImageChoice:
    """An image of a selected section with its match score against the question."""

    section: Section
    image: Image
    score: float
    matched: tuple[str, ...] = ()  # question stems found in the label or context
    reason: str = ""  # why it is shown (caption match, anchor, discussed in section …) or why it cannot be
    via: tuple[str, ...] = ("in section",)  # how the image channel reached it
    match: float = 0.0  # the caption match before the priors (rank of its section, recalled only)

    @property
    def anchored(self) -> bool:
        return "named in the question" in self.reason

    def __repr__(self) -> str:
        return f"ImageChoice({self.section.doc}/{self.image.path} {self.score:.3f} {self.reason}: {self.image.label[:50]!r})"


def _section_lines(section) -> dict[int, str]:
    """Source line -> text for the lines actually sent (``[…]`` cut markers skipped)."""
    nums = [ln for a, b in section.sent_ranges for ln in range(a, b + 1)]
    out, j = {}, 0
    for raw in section.text.split("\n"):
        if raw == "[…]":
            continue
        if j < len(nums):
            out[nums[j]] = raw
        j += 1
    return out


def _context(lines: dict[int, str], line: int, before: int = 3, after: int = 8) -> str:
    return " ".join(lines[i] for i in range(line - before, line + after + 1)
                    if i != line and i in lines and not IMAGE_LINK.search(lines[i]) and not HEADING_LINE.match(lines[i]))


_ASKS_MATH = re.compile(r"\b(?:formula\w*|equations?|eqs?\.|math\w*|deriv\w*|proofs?|expressions?)\b", re.I)
FORMULA_PENALTY = 0.5  # a formula image is shown for a plain question only when it matches twice as well


def _links(section):
    """The image channel's candidates of a section, or (for a Section built without it) its sent images."""
    if section.image_links:
        return list(section.image_links)
    return [ImageLink(im, section.node_id, ("in section",)) for im in section.images]


def _reason(via: tuple[str, ...], section, match: str) -> str:
    where = {"in section": f"in section {section.breadcrumb}",
             "discussed in section": f"discussed in section {section.breadcrumb}",
             "recalled": "its caption and discussion match the question",
             "anchor": ""}  # the match already says which anchor
    return "; ".join([match] + [where[v] for v in via if where[v]])


def score_images(question: str, sections, *, rank_decay: float = DEFAULT_RANK_DECAY,
                 recalled: float = DEFAULT_RECALLED, analysis: Analysis | None = None) -> list[ImageChoice]:
    """Every candidate image of ``sections`` scored against ``question``, best first.

    The candidates are the image channel's (:func:`ppkit.retrieval.image_channel.link_images`:
    images named by an anchor, linked from the sections - trimmed away or not -, discussed in
    them, or recalled by their caption), each once (its best-ranked section). The score is the
    share of the question's stems, weighted by their rarity over the sections' lines and the
    images' records (idf), found in the image's caption label (weight 1) or only in the
    sentences that discuss it and the text around it (weight 0.5). Formula images (often
    fragments of one equation) count half unless the question asks for math. An image whose
    caption is an anchor the question names (``Figure 5``) scores 1. Images that cannot be shown
    (a problem on their link) score 0 with the problem as reason. The priors
    (:func:`with_priors`) then weigh the match by the rank of the image's section and by whether
    only recall reached it.
    """
    per_section = [(s, _section_lines(s)) for s in sections]
    cands: dict[tuple[str, str, int], tuple] = {}
    for s, lines in per_section:
        for link in _links(s):
            cands.setdefault((s.doc, link.image.path, link.image.line), (s, lines, link))
    docs = [set(stems(t)) for _, lines in per_section for t in lines.values() if t.strip()]
    docs += [set(stems(image_record_text(link.image))) for _, _, link in cands.values()]
    n = max(1, len(docs))
    df = Counter(t for d in docs for t in d)
    analysis = analysis or Analysis.of(question)
    named = {(a.kind, a.number) for a in analysis.anchors}
    q = set(analysis.terms)  # "Table 1" is the anchor's evidence, not a match term
    idf = {t: math.log(1 + n / (1 + df[t])) for t in q}
    total = sum(idf.values()) or 1.0
    math_asked = bool(_ASKS_MATH.search(question))
    out = []
    for s, lines, link in cands.values():
        im = link.image
        if im.problem is not None or not im.resolved:
            out.append(ImageChoice(s, im, 0.0, (), f"not shown: {im.problem or 'not resolved'}", link.via))
            continue
        label = set(stems(im.label or im.alt))
        ctx = set(stems(_context(lines, im.line) + " " + im.discussion))
        score = sum(idf[t] * (1.0 if t in label else CONTEXT_WEIGHT if t in ctx else 0.0) for t in q) / total
        matched = tuple(sorted(t for t in q if t in label or t in ctx))
        match = f"caption match {score:.2f} ({', '.join(matched[:6])})" if matched else "no shared terms"
        if im.kind == "formula" and not math_asked:
            score, match = score * FORMULA_PENALTY, match + ", formula (math not asked)"
        key = caption_key(im.label)
        if key in named or (im.figure and tuple(im.figure.split(" ", 1)) in named):
            score, match = 1.0, f"{(im.figure or im.label[:12]).capitalize()} named in the question"
        out.append(ImageChoice(s, im, round(score, 4), matched, _reason(link.via, s, match), link.via, round(score, 4)))
    return with_priors(out, rank_decay=rank_decay, recalled=recalled)


def with_priors(choices: list[ImageChoice], *, rank_decay: float = DEFAULT_RANK_DECAY,
                recalled: float = DEFAULT_RECALLED) -> list[ImageChoice]:
    """``choices`` rescored from their ``match``: times ``rank_decay`` per rank below the first of the
    image's section, times ``recalled`` when only recall reached it; an anchor keeps 1. Best first."""
    out = []
    for c in choices:
        if c.anchored or c.reason.startswith("not shown"):
            out.append(c)
            continue
        f = rank_decay ** max(0, c.section.rank - 1) * (recalled if c.via == ("recalled",) else 1.0)
        out.append(replace(c, score=round(c.match * f, 4)))
    return sorted(out, key=lambda c: (-c.score, c.section.rank, c.image.line))


def select_images(question: str, sections, *, threshold: float = DEFAULT_THRESHOLD, ratio: float = DEFAULT_RATIO,
                  max_images: int = 3, scored: list[ImageChoice] | None = None,
                  stop_at: float | None = None, analysis: Analysis | None = None) -> list[ImageChoice]:
    """The images to show with an answer: from the sections' image channel, at least ``threshold``
    and at least ``ratio`` times the best score, at most ``max_images``.

    ``stop_at`` (off by default): when the first image chosen by its match scores at least this,
    it is shown alone - a strong match is the answer's figure, the runners-up are mostly noise -;
    images the question names by number are still added. Fit leave-one-paper-out it helps at k=1
    and not at k=3/k=5 (README, "Multimodal answers"), so it is not the default.

    An image must also share at least two of the question's terms (all of them for a
    one-term question): a single common word ("work") is not evidence; an image the question
    names by number needs none. Several images of one figure (the panels sharing a caption)
    count once: the best-scoring, then largest, is kept. The result may be empty. ``scored``: the
    output of :func:`score_images` when the caller already has it; ``analysis``: the question's, when already
    read (:class:`ppkit.retrieval.analyze.Analysis`). The defaults were fit
    leave-one-paper-out on the multimodal benchmark (:mod:`ppkit.bench.fit.images`).

    >>> [c.image.label for c in select_images("What is in Table 7?", answer.sections)]  # doctest: +SKIP
    ['Table 7: Hyperparameters of fine-tuning RoBERTa base for GaLore.']
    """
    chosen: list[ImageChoice] = []
    seen: set[tuple[str, str]] = set()
    if max_images <= 0:
        return chosen
    analysis = analysis or Analysis.of(question)
    need = min(2, len(analysis.terms))
    pool = score_images(question, sections, analysis=analysis) if scored is None else scored
    pool = sorted(pool, key=lambda c: (-c.score, c.section.rank, -(c.image.width * c.image.height), c.image.line))
    best = max((c.score for c in pool if not c.anchored and not c.reason.startswith("not shown")), default=0.0)
    for c in pool:
        if c.reason.startswith("not shown") or c.score < threshold:
            continue
        if not c.anchored and (len(c.matched) < need or c.score < ratio * best):
            continue
        key = ((c.section.doc, c.image.figure) if c.image.figure else
               (c.section.doc, c.image.label) if caption_key(c.image.label) else (c.section.doc, c.image.path))
        if key in seen:
            continue
        if stop_at is not None and not c.anchored and any(not p.anchored and p.score >= stop_at for p in chosen):
            continue  # a strong match shows alone; only anchors join it
        seen.add(key)
        chosen.append(c)
        if len(chosen) == max_images:
            break
    return chosen
