"""Noise sections: what is dropped before chunking, and why.

Six categories, as in the reference system: table of contents,
abbreviations/glossary, acknowledgments, foreword/preface, executive summary,
references/bibliography. A noise node's *own text* is dropped; its children are
judged on their own (in 10-Ks an "Index to Consolidated Financial Statements"
heading can sit above the statements themselves).

A filing extracted from its PDF repeats the page header's "Table of Contents" (or "Index") link
at the top of every page, and the extractor makes it a heading: the page's text, a financial
statement as often as not, becomes that heading's own text. So a node titled like a table of
contents whose own text holds a table of figures (``min_figure_rows`` rows with two or more
numbers; a table of contents has one page number a row, :func:`ppkit.core.markup.figure_rows`)
is kept, and the decision says why.

Offline filter (:class:`RuleNoiseFilter`), three layers, first match wins:

1. **rule** - anchored title patterns (``^(table of )?contents$``, ``^works cited$``...),
   after removing numbering ("7.", "A.2", "Item 3.") and markup;
2. **fuzzy** - rapidfuzz similarity >= ``fuzzy_threshold`` to a category exemplar
   (typos, spelling variants: "Acknowledgements", "Bibliografy");
3. **semantic** - cosine similarity >= ``semantic_threshold`` between the title's
   embedding and a category's exemplar embeddings (variants such as "Note of
   Thanks"); only for short titles, since long headings are never these sections.

Online filter (:class:`GeminiNoiseFilter`, in :mod:`ppkit.documents.noise_gemini`): one call
per document over the skeleton tree with a JSON schema.

Every decision records its category, the filter that made it and a reason; the
index stores them and :func:`apply_overrides` lets a user flip any of them.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace
from typing import Protocol

import numpy as np

from ..core.errors import InvalidInput
from ..core.markup import figure_rows
from .titles import normalize_title
from .tree import Tree

__all__ = ["CATEGORIES", "NoiseDecision", "NoiseFilter", "RuleNoiseFilter", "apply_overrides"]

# category -> human label
CATEGORIES: dict[str, str] = {
    "toc": "table of contents",
    "glossary": "abbreviations / glossary",
    "acknowledgments": "acknowledgments",
    "foreword": "foreword / preface",
    "executive_summary": "executive summary",
    "references": "references / bibliography",
}

_RULES: dict[str, str] = {
    "toc": r"(table of contents?|contents|toc|index|index to (the )?form 10 ?k|list of (figures|tables))",
    "glossary": r"(glossary( of [a-z ]+)?|(list of )?abbreviations( and acronyms)?|acronyms|nomenclature|"
                r"(list of )?symbols|notations?|terms and definitions)",
    "acknowledgments": r"(acknowledge?ments?|(a )?(note|word|words) of (thanks|gratitude)|thanks|thank you|credits)",
    "foreword": r"(foreword|preface|prologue|forward)",
    "executive_summary": r"(executive summary|summary for (policy ?makers|executives)|management summary)",
    "references": r"(references?|bibliography|works cited|literature cited|cited works|reference list|citations)",
}
_RULES_RE = {c: re.compile(rf"^{p}$") for c, p in _RULES.items()}

# exemplars for fuzzy and semantic matching: category -> phrases
EXEMPLARS: dict[str, list[str]] = {
    "toc": ["table of contents", "contents", "index", "list of figures"],
    "glossary": ["glossary", "abbreviations", "acronyms", "list of abbreviations", "glossary of terms"],
    "acknowledgments": ["acknowledgments", "acknowledgements", "thanks to contributors",
                        "we thank", "expression of gratitude", "special thanks"],
    "foreword": ["foreword", "preface"],
    "executive_summary": ["executive summary"],  # fuzzy only: "Executive Overview" in a 10-K is content
    "references": ["references", "bibliography", "works cited", "literature cited", "list of references"],
}

@dataclass(frozen=True)
class NoiseDecision:
    """The noise verdict on one node."""

    node_id: str
    title: str
    noise: bool
    category: str | None = None
    filter: str = ""  # rule | fuzzy | semantic | gemini | override | content (a page header kept)
    reason: str = ""
    score: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


class NoiseFilter(Protocol):
    name: str

    def decide(self, tree: Tree, lines: list[str]) -> dict[str, NoiseDecision]:
        """Return a decision for every node that is noise (others may be omitted)."""
        ...


class RuleNoiseFilter:
    """Offline noise filter: title rules, then fuzzy matching, then embedding similarity.

    Args:
        embedder: any Embedder for the semantic layer (``None`` disables it).
        fuzzy_threshold: rapidfuzz ``ratio`` (0-100) to an exemplar.
        semantic_threshold: cosine similarity to an exemplar.
        max_words: titles longer than this are never noise by fuzzy/semantic match.
        min_figure_rows: a node titled as a table of contents whose own text has this many rows of
            figures is a page header over a page of content, and kept (0: never).
    """

    name = "offline-rules"

    def __init__(self, embedder=None, *, fuzzy_threshold: float = 85.0, semantic_threshold: float = 0.80,
                 max_words: int = 4, min_figure_rows: int = 5):
        self.embedder = embedder
        self.min_figure_rows = min_figure_rows
        self.fuzzy_threshold = fuzzy_threshold
        self.semantic_threshold = semantic_threshold
        self.max_words = max_words
        self._exemplar_vecs: tuple[list[str], np.ndarray] | None = None

    def __repr__(self) -> str:
        return f"RuleNoiseFilter(embedder={self.embedder!r})"

    def _exemplars(self) -> tuple[list[str], np.ndarray]:
        if self._exemplar_vecs is None:
            cats = [c for c, ex in EXEMPLARS.items() for _ in ex]  # category of each EXEMPLARS_FLAT entry
            # executive summaries are matched by rule and fuzzy only: by meaning, "Executive
            # Overview" (a 10-K's MD&A summary of results, which answers questions) is close
            cats = [None if c == "executive_summary" else c for c in cats]
            self._exemplar_vecs = (cats, self.embedder.embed_documents(EXEMPLARS_FLAT))
        return self._exemplar_vecs

    def classify_title(self, title: str) -> NoiseDecision | None:
        """The decision for one title by rule or fuzzy match (no embedding), or None."""
        t = normalize_title(title, drop_numbering=True)
        if not t:
            return None
        for cat, rx in _RULES_RE.items():
            if rx.match(t):
                return NoiseDecision("", title, True, cat, "rule", f"title matches the {CATEGORIES[cat]} rule")
        if len(t.split()) <= self.max_words:
            from rapidfuzz import fuzz

            best = max(((fuzz.ratio(t, e), c, e) for c, ex in EXEMPLARS.items() for e in ex))
            if best[0] >= self.fuzzy_threshold:
                return NoiseDecision("", title, True, best[1], "fuzzy",
                                     f"title is {best[0]:.0f}% similar to {best[2]!r}", round(best[0] / 100, 3))
        return None

    def decide(self, tree: Tree, lines: list[str] | None = None) -> dict[str, NoiseDecision]:
        out: dict[str, NoiseDecision] = {}  # node_id -> decision
        pending: list[tuple[str, str]] = []  # (node_id, normalised title) for the semantic layer
        for n in tree.headings():
            d = self.classify_title(n.title)
            if d is not None:
                out[n.node_id] = replace(d, node_id=n.node_id)
                continue
            t = normalize_title(n.title, drop_numbering=True)
            if t and len(t.split()) <= self.max_words and not re.search(r"\d", t):
                pending.append((n.node_id, t))
        if pending and self.embedder is not None:
            cats, ex = self._exemplars()
            texts = EXEMPLARS_FLAT
            q = self.embedder.embed_documents([t for _, t in pending])
            sims = q @ ex.T  # (pending, exemplars)
            for (node_id, t), row in zip(pending, sims):
                row = np.where([c is not None for c in cats], row, -1.0)
                j = int(np.argmax(row))
                if row[j] >= self.semantic_threshold:
                    out[node_id] = NoiseDecision(
                        node_id, tree[node_id].title, True, cats[j], "semantic",
                        f"title embeds close to {texts[j]!r} (cosine {row[j]:.2f})", round(float(row[j]), 3))
        return self._page_headers(tree, lines, out) if lines is not None and self.min_figure_rows else out

    def _page_headers(self, tree: Tree, lines: list[str], decisions: dict[str, NoiseDecision]) -> dict[str, NoiseDecision]:
        """The decisions with each "table of contents" whose own text is a table of figures kept."""
        out = dict(decisions)
        for node_id, d in decisions.items():
            if d.noise and d.category == "toc":
                n = tree[node_id]
                rows = figure_rows(lines[n.line_start:n.text_end])
                if rows >= self.min_figure_rows:
                    out[node_id] = NoiseDecision(node_id, d.title, False, None, "content",
                                                 f"titled as a table of contents, but its text has {rows} rows of "
                                                 "figures (a page header over a page of content)")
        return out


EXEMPLARS_FLAT = [e for ex in EXEMPLARS.values() for e in ex]


def apply_overrides(decisions: dict[str, NoiseDecision], tree: Tree, overrides: dict[str, bool | str]) -> dict[str, NoiseDecision]:
    """Flip decisions by hand: ``{node_id: False}`` keeps a node, ``{node_id: "toc"}`` (or True) drops it.

    Returns a new dict; the input is not changed.
    """
    out = dict(decisions)
    for node_id, v in overrides.items():
        title = tree[node_id].title  # raises a clear KeyError for a wrong id
        if v is False:
            out[node_id] = NoiseDecision(node_id, title, False, None, "override", "kept by override")
        else:
            cat = v if isinstance(v, str) else (decisions.get(node_id).category if node_id in decisions else None)
            if cat is not None and cat not in CATEGORIES:
                raise InvalidInput(f"unknown noise category {cat!r}; use one of {sorted(CATEGORIES)}")
            out[node_id] = NoiseDecision(node_id, title, True, cat, "override", "dropped by override")
    return out


def kept_nodes(tree: Tree, decisions: dict[str, NoiseDecision]) -> set[str]:
    """Node ids whose own text is kept (everything not decided to be noise)."""
    return {nid for nid in tree.nodes if not (nid in decisions and decisions[nid].noise)}
