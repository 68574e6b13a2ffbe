"""The whole-document alignment by function (ppkit/compare/align.py, signals.py, sections.py) on hand-checkable
inputs: the decision rule, the consistency signals, the sections and containers of a document, the weights file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ppkit
from ppkit.compare.align import AlignWeights, align, decide, score_matrix, stand_out
from ppkit.compare.sections import DocSections, is_exhibit
from ppkit.compare.signals import FIRST, SECOND, consistency, first_pass, tfidf_vectors
from ppkit.core.errors import InvalidInput

FIX = Path(__file__).parent / "fixtures" / "compare"
A, B = "alpha_agreement", "beta_agreement"


@pytest.fixture(scope="module")
def index(agreements_index):
    return agreements_index


def test_sections_and_containers_of_a_document(index):
    sa = DocSections(index, A)
    titles = [sa.title(x) for x in sa.nodes]
    # every heading with text of its own; the article headings (no text of their own) are containers
    assert titles == ["Section 1.01 Defined Terms", "Section 2.01 Financial Covenant", "Section 2.02 Negative Pledge",
                      "Section 2.03 Insurance", "Section 3.01 Events of Default", "Article 4. Company Guarantee"]
    assert [sa.title(x) for x in sa.containers] == ["Alpha Credit Agreement", "Article 1. Definitions",
                                                    "Article 2. Covenants", "Article 3. Events of Default"]
    assert sa.text("0007") == "\nThe Borrower will maintain insurance with financially sound insurers against such " \
                              "risks as are customary for companies in the same industry.\n"
    assert sa.parent("0007") == "0004" and sa.parent("0001") == "0000"
    assert [sa.title(x) for x in sa.sections_under("0004")] == ["Section 2.01 Financial Covenant",
                                                                 "Section 2.02 Negative Pledge", "Section 2.03 Insurance"]
    assert sa.position[sa.nodes[0]] == 0.0 and sa.position[sa.nodes[-1]] == 1.0
    assert sa.refs["0007"].line_start == 30  # the heading's line
    assert is_exhibit(("Deal", "EXHIBITA-2")) and not is_exhibit(("Exhibit Deal", "Section 1 Fees"))  # doc name skipped


def test_decide_keeps_near_runners_up_and_drops_rows_that_do_not_stand_out():
    s = np.array([[9.0, 0, 1, 0, 1], [6.0, 0, 5.8, 0, 0], [3.0, 0, 2.8, 0, 2.9], [8.0, 0, 1, 0, 1]])
    # stand-outs (best - mean) / std: 1.98, 1.26, 0.89, 1.98; median 1.62, robust spread 1.4826 * 0.36
    assert np.round(stand_out(s), 2).tolist() == [1.98, 1.26, 0.89, 1.98]
    assert decide(s, -1.0, 0.6) == [[0], [0, 2], [], [0]]
    assert decide(s, -1.0, 0.0) == [[0], [0], [], [0]]  # no runner-up within 0 of the best
    assert decide(s, -1.0, 0.6, none_stand=0.5) == [[0], [0, 2], [0, 4, 2], [0]]  # stands out enough in itself
    assert decide(np.zeros((0, 3)), -1.0, 0.6) == []


def test_tfidf_rows_are_unit_length_and_rare_terms_weigh_more():
    from collections import Counter

    m = tfidf_vectors([Counter({"lien": 1, "borrow": 1}), Counter({"borrow": 2}), Counter({"borrow": 1, "fee": 1})])
    assert np.allclose(np.sqrt(m.multiply(m).sum(axis=1)).A.ravel(), 1.0)
    row = m.toarray()[0]  # "lien" is in one text of three, "borrow" in all three
    assert row.max() == row[0] and row[1] < row[0]


def test_consistency_counts_parents_and_column_ranks(index):
    sa, sb = DocSections(index, A), DocSections(index, B)
    s1 = np.full((len(sa.nodes), len(sb.nodes)), 0.0)
    b = {sb.title(x): j for j, x in enumerate(sb.nodes)}
    for i, x in enumerate(sa.nodes):  # a first score whose best is chosen by hand
        s1[i, b[{"0003": "1.01 Defined Terms", "0005": "6.02 Financial Covenants", "0006": "6.01 Liens",
                 "0007": "6.03 Restricted Payments", "0009": "7.01 Events of Default",
                 "0010": "8.01 Guaranty of Obligations"}[x]]] = 1.0 + i / 10
    sig = consistency(sa, sb, s1)
    covenant = sa.nodes.index("0005")
    # Article 2's three sections all have their best under ARTICLE VI: a share of 3/3 for every section there
    assert sig["parent_votes"][covenant, b["6.01 Liens"]] == 1.0
    assert sig["parent_votes"][covenant, b["7.01 Events of Default"]] == 0.0
    # 6.02's favourite is 2.01 (the only row scoring it): rank 0 -> -log(1) = 0; another row ranks lower
    assert sig["mutual"][covenant, b["6.02 Financial Covenants"]] == 0.0
    assert sig["mutual"][0, b["6.02 Financial Covenants"]] < 0.0
    assert set(sig) == set(SECOND)


def test_align_with_given_weights_uses_each_signal(index):
    sa, sb = DocSections(index, A), DocSections(index, B)
    sig = first_pass(sa, sb)
    assert set(sig) == set(FIRST) and all(m.shape == (len(sa.nodes), len(sb.nodes)) for m in sig.values())
    only_titles = AlignWeights({k: float(k == "title_fuzz") for k in FIRST},
                               {k: 5.0 * float(k == "title_fuzz") for k in FIRST + SECOND}, -9.0, 0.0, 0.0)
    links = align(sa, sb, only_titles).links
    b = {x: sb.title(x) for x in sb.nodes}
    assert b[links["0009"][0].b] == "7.01 Events of Default" and "same title" in links["0009"][0].reason
    assert b[links["0003"][0].b] == "1.01 Defined Terms"
    s = score_matrix(sig, only_titles.first)
    assert np.allclose(s, sig["title_fuzz"])
    probs = [lk.score for ls in links.values() for lk in ls]
    assert all(0.0 <= p <= 1.0 for p in probs)


def test_weights_round_trip_and_clear_errors(tmp_path):
    w = AlignWeights.load()  # the package's fitted weights
    assert set(w.first) == set(FIRST) and set(w.second) == set(FIRST + SECOND) and w.fitted_on
    back = AlignWeights.load(w.save(tmp_path / "w.json"))
    assert back == w
    (tmp_path / "bad.json").write_text(json.dumps({"first": {"text": 1.0}, "second": {}, "none_z": 0, "extra": 0,
                                                   "none_stand": 0}), encoding="utf-8")
    with pytest.raises(InvalidInput, match="alignment weights lack vector"):
        AlignWeights.load(tmp_path / "bad.json")
    with pytest.raises(InvalidInput, match="cannot read alignment weights from"):
        AlignWeights.load(tmp_path / "missing.json")
