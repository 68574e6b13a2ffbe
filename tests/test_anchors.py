"""Anchors named in questions, and anchor-aware re-ranking (offline and after any re-ranker)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from mm_helpers import candidate, fixture_tree

from ppkit.documents.anchors import (
    Anchor,
    anchor_tier,
    anchor_tiers,
    find_anchors,
    find_captions,
    norm_number,
)
from ppkit.retrieval.rerank import (
    AnchorPriority,
    StructuralReranker,
    apply_anchor_priority,
)


@pytest.mark.parametrize("question,want", [
    ("What does Figure 5 show?", [("figure", "5")]),
    ("Compare Fig. 3(b) and Fig 2a.", [("figure", "3"), ("figure", "2")]),
    ("What is in Table I and TABLE 7?", [("table", "1"), ("table", "7")]),
    ("Explain Eq. 3, Eq. (4) and Equation 12.", [("equation", "3"), ("equation", "4"), ("equation", "12")]),
    ("Summarise Section 4.2 and § 3.", [("section", "4.2"), ("section", "3")]),
    ("What is in Appendix C and Section III-A?", [("section", "c"), ("section", "3.a")]),
    ("Which Algorithm 1 step projects?", [("algorithm", "1")]),
    ("Put the table in the figure section.", []),  # words without numbers are not anchors
    ("What is a table I made?", [("table", "1")]),  # a Roman numeral reads as one (documented limit)
])
def test_find_anchors(question, want):
    assert [(a.kind, a.number) for a in find_anchors(question)] == want


def test_norm_number_and_captions():
    assert [norm_number(x) for x in ("IV", "04", "4.2.", "S1", "III-A", "F.1")] == ["4", "4", "4.2", "s1", "3.a", "f.1"]
    assert find_captions("TABLE II: Scores.") == [("table", "2", "TABLE II: Scores.")]
    assert find_captions("- **Figure 1.** Text-to-SVG.") == [("figure", "1", "Figure 1. Text-to-SVG.")]
    assert find_captions("as shown in Figure 3. The results") == []  # a mention, not a caption
    assert find_captions("plot ticks Figure 5: Ensemble. Table 5: Cost.") == [
        ("figure", "5", "Figure 5: Ensemble."), ("table", "5", "Table 5: Cost.")]


def test_anchor_tiers_on_the_fixture():
    t = fixture_tree()
    method, results, discussion = (candidate(t, n, 0.5, i) for i, n in enumerate(["0002", "0003", "0004"], 1))
    tier = lambda a, c: anchor_tier(a, c.breadcrumb, c.text)  # noqa: E731
    fig1, tab1 = Anchor("figure", "1", "Figure 1"), Anchor("table", "1", "Table I")
    eq1, sec2 = Anchor("equation", "1", "Eq. 1"), Anchor("section", "2", "Section 2")
    assert [tier(fig1, c) for c in (method, results, discussion)] == [2, 1, 0]  # caption / "Fig. 1" / none
    assert [tier(tab1, c) for c in (method, results, discussion)] == [0, 2, 0]
    assert [tier(eq1, c) for c in (method, results, discussion)] == [2, 0, 1]  # "(1)" / none / "Eq. (1)"
    assert [tier(sec2, c) for c in (method, results, discussion)] == [0, 2, 1]  # own number / "Section 2"
    assert anchor_tier(Anchor("section", "4", "Section 4"), "P > 4. Method > 4.2. Memory", "") == 1  # inside 4
    assert anchor_tier(Anchor("section", "3.a", "Section III-A"), "P > III. GAME > A. Overview", "") == 2
    assert anchor_tiers("no anchor here", [method, results]) == [0, 0]


def test_apply_anchor_priority_is_stable_and_a_noop_without_anchors():
    t = fixture_tree()
    ranked = [candidate(t, n, 0.5, i) for i, n in enumerate(["0004", "0001", "0003", "0002"], 1)]
    ids = lambda cs: [c.node_id for c in cs]  # noqa: E731
    assert ids(apply_anchor_priority("What does Figure 1 show?", ranked)) == ["0002", "0003", "0004", "0001"]
    assert ids(apply_anchor_priority("What is Eq. 1?", ranked)) == ["0002", "0004", "0001", "0003"]
    assert ids(apply_anchor_priority("What are the results?", ranked)) == ["0004", "0001", "0003", "0002"]
    assert apply_anchor_priority("What does Figure 1 show?", []) == []
    assert ids(ranked) == ["0004", "0001", "0003", "0002"]  # the input is not changed


def test_structural_reranker_puts_anchor_sections_first():
    t = fixture_tree()
    # stage 1 prefers the discussion and the title section; the anchor is defined in 0003 (TABLE I)
    cands = [candidate(t, "0004", 0.9, 1), candidate(t, "0001", 0.8, 2), candidate(t, "0002", 0.3, 3),
             candidate(t, "0003", 0.1, 4)]
    rr = StructuralReranker(embedder=None)
    ranked = rr.rerank("What does Table I report about accuracy?", cands)
    assert [c.node_id for c in ranked] == ["0003", "0004", "0001", "0002"]
    assert [c.features["anchor"] for c in ranked] == [2.0, 0.0, 0.0, 0.0]
    # Figure 1 is defined in 0002 and mentioned in 0003: both move up, defining first
    ranked = rr.rerank("What does Figure 1 show?", cands)
    assert [c.node_id for c in ranked][:2] == ["0002", "0003"]
    # without an anchor the feature is zero everywhere and does not change the score
    plain = rr.rerank("What does the accuracy show?", cands)
    assert {c.features["anchor"] for c in plain} == {0.0}
    no_anchor_weights = StructuralReranker(embedder=None, weights={"anchor": 0.0}).rerank(
        "What does the accuracy show?", cands)
    assert [c.node_id for c in plain] == [c.node_id for c in no_anchor_weights]


def test_anchor_priority_after_another_reranker():
    t = fixture_tree()

    class Reverse:  # any re-ranker: here, stage-1 order reversed
        name = "reverse"

        def rerank(self, question, candidates):
            return [replace(c, stage2_score=float(-i)) for i, c in enumerate(reversed(candidates))]

    cands = [candidate(t, n, 0.5, i) for i, n in enumerate(["0002", "0003", "0004"], 1)]
    out = apply_anchor_priority("Explain Section 2", Reverse().rerank("Explain Section 2", cands))
    assert [c.node_id for c in out] == ["0003", "0004", "0002"]
    wrapped = AnchorPriority(Reverse())
    assert wrapped.name == "reverse+anchors"
    assert [c.node_id for c in wrapped.rerank("Explain Section 2", cands)] == ["0003", "0004", "0002"]
    assert [c.node_id for c in wrapped.rerank("Explain the results", cands)] == ["0004", "0003", "0002"]

