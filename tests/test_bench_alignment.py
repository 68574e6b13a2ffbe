"""Human alignments as gold (ppkit/bench/data/alignments.py), their scores (bench/measures/alignment.py) and the
fitting of the alignment's weights (bench/fit/align.py), on the hand-written agreements of tests/fixtures/compare
with alignments written here; one corpus test checks that the shipped Corning alignment maps onto its PDFs' trees."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ppkit
from ppkit.bench.data.alignments import OWN_ALIGNMENTS, GoldAlignment, GoldLink, GoldRow, load_alignment
from ppkit.bench.fit.align import fit_logit, fit_weights, leave_one_out, pair_data, predict
from ppkit.bench.measures.alignment import score_alignment
from ppkit.compare.signals import FIRST, SECOND
from ppkit.core.errors import InvalidInput

FIX = Path(__file__).parent / "fixtures" / "compare"
A, B = "alpha_agreement", "beta_agreement"

# a person's reading of the two fixture agreements, keyed by heading line
BY_LINE = {"a_doc": A, "b_doc": B, "pairs": [
    {"a_line": 3, "a_title": "Article 1. Definitions", "b": [{"line": 3, "title": "ARTICLE I DEFINITIONS",
                                                                "confidence": "sure"}], "container": True},
    {"a_line": 5, "a_title": "Section 1.01 Defined Terms", "b": [{"line": 5, "confidence": "sure"}]},
    {"a_line": 15, "a_title": "Section 2.01 Financial Covenant", "b": [{"line": 19, "confidence": "sure"}]},
    {"a_line": 26, "a_title": "Section 2.02 Negative Pledge", "b": [{"line": 15, "confidence": "sure"}]},
    {"a_line": 30, "a_title": "Section 2.03 Insurance", "b": []},
    {"a_line": 36, "a_title": "Section 3.01 Events of Default", "b": [{"line": 36, "confidence": "sure"}]},
    {"a_line": 40, "a_title": "Article 4. Company Guarantee", "b": [{"line": 42, "confidence": "sure"},
                                                                      {"line": 7, "confidence": "likely"}]}]}


@pytest.fixture(scope="module")
def index(agreements_index):
    return agreements_index


@pytest.fixture
def by_line(tmp_path):
    path = tmp_path / "by_line.json"
    path.write_text(json.dumps(BY_LINE), encoding="utf-8")
    return path


def test_load_by_line_and_by_title_and_order(index, by_line, tmp_path):
    g = load_alignment(by_line, index.trees)
    assert (g.a_doc, g.b_doc) == (A, B)
    assert [(r.a, [x.node for x in r.b]) for r in g.rows] == [
        ("0002", ["0002"]), ("0003", ["0003"]), ("0005", ["0006"]), ("0006", ["0005"]), ("0007", []),
        ("0009", ["0009"]), ("0010", ["0011"])]  # line 7 is no heading of B: unmapped, the link dropped
    assert g.unmapped == ("B:  (line 7)",) and [r.scored for r in g.rows][:2] == [False, True]
    by_order = {"a_doc": A.upper(), "b_doc": B, "pairs": [  # names matched case-insensitively
        {"a_title": "Section 2.02 Negative Pledge", "a_order": 6, "b": [{"title": "6.01 Liens", "order": 5}]},
        # an extraction that lost a heading above: the title is found at the nearest order
        {"a_title": "Section 2.03 Insurance", "a_order": 8, "b": [{"title": "6.03 Restricted Payments", "order": 6}]},
        {"a_title": "Section 9.99 Nowhere", "a_order": 3, "b": []}]}
    (tmp_path / "o.json").write_text(json.dumps(by_order), encoding="utf-8")
    g2 = load_alignment(tmp_path / "o.json", index.trees)
    assert [(r.a, [x.node for x in r.b]) for r in g2.rows] == [("0006", ["0005"]), ("0007", ["0007"])]
    assert g2.unmapped == ("A: Section 9.99 Nowhere (order 3)",)


def test_bad_alignment_files_say_what_to_do(index, tmp_path):
    (tmp_path / "x.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(InvalidInput, match="cannot read the alignment"):
        load_alignment(tmp_path / "x.json", index.trees)
    (tmp_path / "y.json").write_text(json.dumps({**BY_LINE, "a_doc": "gamma"}), encoding="utf-8")
    with pytest.raises(InvalidInput, match="names 'gamma', which is not among the documents"):
        load_alignment(tmp_path / "y.json", index.trees)


def test_scores_count_best_pairs_and_no_counterpart():
    g = GoldAlignment("toy", "A", "B", (
        GoldRow("0001", "Art 1", (GoldLink("0001", "", "sure"),), container=True),  # not scored
        GoldRow("0002", "Fees", (GoldLink("0010", "", "sure"), GoldLink("0011", "", "likely"))),
        GoldRow("0003", "Liens", (GoldLink("0012", "", "sure"),)),
        GoldRow("0004", "Bids", ()),
        GoldRow("0005", "Currency", ())))
    s = score_alignment(g, {"0001": ["0099"], "0002": ["0011", "0013"], "0003": ["0013", "0012"], "0004": [],
                            "0005": ["0014"]}, titles={"0013": "Taxes", "0014": "Notices"})
    # best: Fees right (a likely link counts), Liens wrong; pairs: 0011, 0012 of 5 found and 3 gold; none: Bids
    assert (s.best_hit, s.best_of, s.pairs_hit, s.pairs_found, s.pairs_gold, s.none_hit, s.none_of) == \
        (1, 2, 2, 5, 3, 1, 2)
    assert (s.best, s.precision, s.recall, s.none) == (0.5, 0.4, 2 / 3, 0.5)
    assert s.misses == ("Liens -> Taxes | 0012", "Currency -> Notices | none")
    assert (s + s).best_of == 4 and (s + s).misses == s.misses * 2


def test_conditional_logit_recovers_the_informative_signal():
    rng = np.random.default_rng(0)
    x = rng.random((30, 8, 2))  # 30 sections of A, 8 of B, 2 signals: the first marks the gold column
    rows = []
    for i in range(30):
        j = int(rng.integers(8))
        x[i, j, 0] += 1.0
        rows.append((i, (j,)))
    w = fit_logit([(x, tuple(rows))])
    assert w[0] > 2.0 and abs(w[1]) < 1.0


def test_fit_and_leave_one_pair_out_on_two_pairs(index, by_line):
    gold = load_alignment(by_line, index.trees)
    p = pair_data("fixture", index, gold)
    assert p.rows[:2] == ((0, (0,)), (1, (2,)))  # (A's section row, gold columns of B's sections)
    w = fit_weights([p, p], fitted_on="fixture twice")
    assert set(w.first) == set(FIRST) and set(w.second) == set(FIRST + SECOND) and w.fitted_on == "fixture twice"
    s = score_alignment(gold, predict(p, w))
    assert s.best == 1.0 and s.best_of == 5  # in-sample on five hand-made rows
    loo = leave_one_out([p, pair_data("again", index, gold)])
    assert set(loo) == {"fixture", "again"} and all(score.best_of == 5 for _, score in loo.values())


# headings of the extraction the alignment was written on (text layer version 4) that version 8 reads as the table
# rows they are (the alignment's README, "Known extraction artefacts"): they map to no section
TABLE_ROWS_NOW = {f"A: {t} (order {o})" for t, o in [
    ("Common Stock GLW New York Stock Exchange (NYSE)", 5), ("Period purchased (1) (2) programs programs", 53),
    ("Assets", 152), ("Liabilities and Equity", 153),
    ("Current portion of long-term debt and short-term borrowings $ 55 $ 156", 226), ("Long-term debt", 227),
    ("Change in benefit obligation", 233), ("Change in plan assets", 234), ("Funded status at end of year", 235),
    ("Assumed health care trend rates at December 31 2021 2020", 238),
    ("Japanese yen-denominated (2) 3.6 2.0 Other foreign currencies (3) 0.9 Total gross notional value outstanding "
     "$ 8.9 $ 7.5", 253)]}


@pytest.mark.corpus
def test_the_corning_alignment_maps_onto_its_pdfs():
    """Every heading the helper named is found at its order and title in the trees of the PDFs' extraction."""
    from ppkit.bench.runs.alignment import CORNING_INDEX
    from ppkit.core.data import data_dir

    shelf = data_dir() / "financebench" / "pdfs"
    if not (shelf / "CORNING_2021_10K.pdf").is_file():
        pytest.skip("the FinanceBench shelf is not here")
    index = ppkit.cached_index([shelf / "CORNING_2021_10K.pdf", shelf / "CORNING_2022_10K.pdf"], CORNING_INDEX,
                               progress=False)
    g = load_alignment(OWN_ALIGNMENTS / "corning_2021_2022.json", index.trees)
    assert set(g.unmapped) <= TABLE_ROWS_NOW and len([r for r in g.rows if r.scored]) >= 60
