"""Cues a widget shows beside a retrieval: what a reader should know before trusting the sections.

Three, each one sentence that says what to do:

* **a name the index does not know**: a capitalised name of the question
  (:func:`ppkit.retrieval.analyze.question_names`) that is no indexed document's name, company or alias,
  and that no chosen section's text contains ("Tesla" over the four reference 10-Ks);
* **a manual filter against the question**: the document filter was set by hand to a document the
  question does not name, while it names others;
* **no good match**: every candidate's stage-1 similarity is below :data:`LOW_SCORE` *and* no section
  matches the question otherwise: none defines a figure, table, equation or section the question names
  (holds its caption, its equation number or its numbered heading: :mod:`ppkit.documents.anchors`; "What
  does Table 2 report?" is short and scores low, but the section holding Table 2's caption matches it;
  a section that only mentions "Table 2" does not count). The answer's own block is not consulted: it
  can state a passage for a figure the documents do not have.

:data:`LOW_SCORE` was measured with the local MiniLM embedder (cosine of the best chunk): the lowest best
score of the 40 Comprehensive questions over the four 10-Ks is 0.444, of the 20 multimodal questions over
the five papers 0.597; seven nonsense or off-topic strings ("asdfgh qwerty", "lorem ipsum dolor sit amet",
"How do I bake sourdough bread?", ...) score at most 0.354 on either index. The cue is given only for that
embedder: another one's scores are on another scale.

This module only reads: the analysis and the scores come from the retrieval modules.
"""

from __future__ import annotations

import html

from ..core.style import block
from ..documents.anchors import anchor_tier, find_anchors
from ..indexing.index import SearchIndex
from ..retrieval.analyze import analyze_query, catalog_of, question_names
from ..retrieval.types import Retrieval

__all__ = ["LOW_SCORE", "best_score", "cues_html", "retrieval_cues", "section_matches"]

LOW_SCORE = 0.38  # between 0.354 (the best nonsense string) and 0.444 (the weakest benchmark question)


def _known_words(index: SearchIndex) -> str:
    """The indexed documents' names, companies, aliases and tickers, casefolded, as one searchable string."""
    words = []
    for doc, meta in catalog_of(index).items():
        words += [doc, str(meta.get("company") or ""), str(meta.get("ticker") or ""), *map(str, meta.get("aliases") or [])]
    return " | ".join(w.casefold() for w in words if w)


def best_score(result) -> float | None:
    """The best stage-1 similarity of a :class:`~ppkit.retrieval.types.Retrieval` or an
    :class:`~ppkit.answer.synth.Answer` (its trace's candidates); None when it has no candidates."""
    if isinstance(result, Retrieval):
        scores = [c.stage1_score for c in result.candidates]
    else:
        trace = getattr(result, "trace", None)
        scores = [d["stage1_score"] for d in getattr(trace, "candidate_details", None) or [] if "stage1_score" in d]
    return max(scores) if scores else None


def section_matches(question: str, result) -> bool:
    """Whether a section of ``result`` (a Retrieval or an Answer) matches ``question`` whatever its similarity:
    it defines a figure, table, equation or section the question names (tier 2 of
    :func:`ppkit.documents.anchors.anchor_tier`)."""
    anchors = find_anchors(question)
    sections = getattr(result, "sections", [])
    return any(anchor_tier(a, s.breadcrumb, s.text) == 2 for a in anchors for s in sections)


def retrieval_cues(index: SearchIndex, question: str, result, *, manual_doc: str | None = None,
                   low_score: float = LOW_SCORE) -> list[str]:
    """What a reader should know about this retrieval, one sentence each (empty: nothing to flag).

    Args:
        index: the index searched.
        question: the question as typed.
        result: its :class:`~ppkit.retrieval.types.Retrieval` or :class:`~ppkit.answer.synth.Answer` (None:
            nothing was retrieved, only the question is read).
        manual_doc: the document the filter was set to by hand (None: the filter was automatic or off).
        low_score: the stage-1 similarity under which every candidate counts as a poor match.

    >>> retrieval_cues(index, "What was Tesla's revenue in FY2022?", index.retrieve("..."))  # doctest: +SKIP
    ["'Tesla' is not a document or company of this index (AMD, AMEX, Boeing, PepsiCo): ..."]
    """
    cues = []
    known = _known_words(index)
    sent = " ".join(s.text for s in (result.sections if result is not None else [])).casefold()
    unknown = [n for n in question_names(question)
               if n.casefold() not in known and n.casefold() not in sent]
    if unknown:
        names = ", ".join(repr(n) for n in unknown)
        docs = ", ".join(index.docs[:8]) + (", …" if len(index.docs) > 8 else "")
        cues.append(f"{names} {'is' if len(unknown) == 1 else 'are'} not a document or company of this index "
                    f"({docs}) and not in the sections found: index that document, or the answer will not be about it.")
    if manual_doc is not None:
        named = analyze_query(index, question).docs or []
        if named and manual_doc not in named:
            cues.append(f"The question names {', '.join(named)}, but the document filter is set to {manual_doc}: "
                        "set it to the documents the question names, or to that document.")
    best = best_score(result) if result is not None else None
    if best is not None and "MiniLM" in getattr(index.embedder, "name", ""):
        if best < low_score and not section_matches(question, result):
            cues.append(f"No good match: the best section scores {best:.2f} (below {low_score}); the sections below "
                        "are the nearest, not answers. Rephrase with the words the documents use.")
    return cues


def cues_html(cues: list[str]) -> str:
    """The cues as a highlighted list (empty when there are none)."""
    if not cues:
        return ""
    return block("<div class='ppkit-cues' style='background:#fff4e5;border:1px solid #e0a040;padding:4px 8px'>"
                 + "<br>".join(f"<b>note:</b> {html.escape(c)}" for c in cues) + "</div>")
