"""ppkit.bench.measures.metrics and the chunk baselines' line ranges: textbook examples on hand-made items."""

import pytest

from bench_support import fixture_docs
from ppkit.bench.runs.baselines import BM25Baseline, blind_chunks, header_path_chunks
from ppkit.bench.runs.harness import _equal_context
from ppkit.bench.measures.metrics import (
    Sent,
    all_gold_at_k,
    covered,
    evidence_features,
    evidence_recall,
    findable,
    hit_at_k,
    recall_at_k,
    score_question,
    text_features,
)
from ppkit.retrieval.types import Section


def _section(doc, nid, a, b, text, rank, sent=None):
    return Section(doc, nid, f"{doc} > {nid}", a, b, text, rank, 1.0 / rank, sent or ((a, b),), len(text))


# three gold sections of one question: heading lines 10, 40 and 90 of AMD
GOLD = [("AMD#0003", "AMD", 10, 19), ("AMD#0007", "AMD", 40, 55), ("AMD#0012", "AMD", 90, 99)]


@pytest.fixture
def ranked():
    return [
        _section("AMD", "0001", 1, 9, "x" * 100, 1),  # no gold
        _section("AMD", "0003", 10, 19, "y" * 300, 2),  # gold heading 10
        _section("AMEX", "0003", 10, 19, "z" * 50, 3),  # same lines, wrong document
        # a trimmed section: its heading (40) was sent, then lines 50-55; not gold line 90
        _section("AMD", "0007", 40, 99, "w" * 200, 4, sent=((40, 41), (50, 55))),
        # a parent unit that sends gold line 90 inside its range
        _section("AMD", "0011", 85, 99, "v" * 150, 5),
    ]


def test_hit_and_recall_textbook(ranked):
    assert [hit_at_k(ranked, GOLD, k) for k in (1, 2, 3)] == [0.0, 1.0, 1.0]
    assert recall_at_k(ranked, GOLD, 1) == 0.0
    assert recall_at_k(ranked, GOLD, 3) == pytest.approx(1 / 3)
    assert recall_at_k(ranked, GOLD, 4) == pytest.approx(2 / 3)
    assert recall_at_k(ranked, GOLD, 5) == 1.0
    assert covered(ranked[:5], GOLD) == ["AMD#0003", "AMD#0007", "AMD#0012"]


def test_trimmed_section_misses_a_heading_it_did_not_send():
    s = _section("AMD", "0007", 40, 99, "w" * 200, 1, sent=((40, 41), (50, 55)))
    gold = [("AMD#0012", "AMD", 90, 99)]
    assert hit_at_k([s], gold, 1) == 0.0
    assert s.contains_line(90) is False and s.contains_line(41) is True


def test_score_question_context_and_wrong_doc(ranked):
    got = score_question(ranked, GOLD, [3, 5], doc=["AMD"])
    assert got["3"] == {"hit": 1.0, "recall": pytest.approx(1 / 3), "all_gold": 0.0, "hit_overlap": 1.0,
                        "recall_overlap": pytest.approx(1 / 3), "context_chars": 450, "n_sent": 3,
                        "wrong_doc": pytest.approx(1 / 3)}
    assert got["5"]["context_chars"] == 800 and got["5"]["wrong_doc"] == pytest.approx(1 / 5)
    assert score_question(ranked, GOLD, [5])["5"]["wrong_doc"] is None


def test_overlap_variant_counts_body_lines():
    chunk = Sent("AMD", ((12, 30),), 2000)  # a blind chunk starting below heading line 10
    gold = [("AMD#0003", "AMD", 10, 19)]
    assert hit_at_k([chunk], gold, 1) == 0.0
    assert hit_at_k([chunk], gold, 1, overlap=True) == 1.0
    assert recall_at_k([], gold, 5) == 0.0 and recall_at_k([chunk], [], 5) == 0.0


def test_equal_context_takes_top_chunks_within_the_budget():
    items = [Sent("A", ((1, 2),), 900), Sent("A", ((3, 4),), 800), Sent("A", ((5, 6),), 50)]
    assert _equal_context(items, 1000) == items[:1]  # the next one would exceed the budget
    assert _equal_context(items, 1700) == items[:2]
    assert _equal_context(items, 100) == items[:1]  # at least one chunk


def test_blind_chunks_line_ranges():
    docs = fixture_docs()
    corpus = blind_chunks(docs, size=400, overlap=100)
    text = "\n".join(docs.lines("Acme"))
    acme = [i for i, d in enumerate(corpus.docs) if d == "Acme"]
    assert len(acme) == 1 + (len(text) - 400 + 299) // 300
    assert corpus.texts[acme[0]] == text[:400]
    assert corpus.ranges[acme[0]] == ((1, text[:400].count("\n") + 1),)
    second = corpus.ranges[acme[1]][0]
    assert second[0] == text[:300].count("\n") + 1  # the line holding character 300


def test_header_path_chunks_carry_their_heading_line():
    docs = fixture_docs()
    corpus = header_path_chunks(docs)
    (i,) = [j for j, t in enumerate(corpus.texts)
            if t.startswith("[Acme > Acme Corp Annual Report > Results of Operations > Anvils]\n")]
    assert corpus.ranges[i] == ((12, 12), (14, 14))  # heading line 12 via the prefix, body line 14
    # 6 sections with text in Acme, 4 in Globex; the heading-only title nodes give none
    assert len(corpus) == 10 and corpus.docs.count("Acme") == 6


def test_bm25_baseline_ranks_exact_terms_first():
    docs = fixture_docs()
    b = BM25Baseline("bm25", header_path_chunks(docs))
    top = b.search("falling anvil lawsuits Mojave", 3)
    assert top[0].doc == "Acme" and top[0].contains_line(25)  # Legal Proceedings heading
    assert b.search("anvil", 5, docs=["Globex"]) == []  # no Globex chunk mentions anvils
    assert b.search("zzzz qqqq", 5) == []


def test_image_metrics_are_averaged_where_defined():
    from ppkit.bench.runs.harness import _aggregate

    rows = [{"3": {"hit": 1.0, "recall": 1.0, "context_chars": 10, "image_hit": 1.0, "image_precision": 0.5,
                   "image_reachable": 1.0, "images": ["a", "b"]}},
            {"3": {"hit": 0.0, "recall": 0.0, "context_chars": 30, "image_hit": None, "image_precision": None,
                   "image_reachable": None, "images": []}}]
    agg = _aggregate(rows, [3])["3"]
    assert (agg["hit"], agg["context_chars_mean"]) == (0.5, 20)
    assert (agg["image_hit"], agg["image_precision"], agg["image_reachable"]) == (1.0, 0.5, 1.0)
    assert (agg["n_image_hit"], agg["n_image_precision"], agg["images_shown_mean"]) == (1, 1, 1.0)
    assert "image_hit" not in _aggregate([{"3": {"hit": 1.0, "recall": 1.0, "context_chars": 5}}], [3])["3"]


def test_all_gold_needs_every_gold_section(ranked):
    assert [all_gold_at_k(ranked, GOLD, k) for k in (2, 4, 5)] == [0.0, 0.0, 1.0]
    assert score_question(ranked, GOLD, [5])["5"]["all_gold"] == 1.0
    assert all_gold_at_k(ranked, [], 5) == 0.0


# --- evidence_recall: the features of a text and how they are matched ---

def test_numbers_are_normalised_and_counted_once():
    f = evidence_features("Cash was $4,835 million (4,835 in 2021: $4,835.00); ratio 1.570, up 12% or 12 %. "
                          "See ID: 0062, 0119 and Note 12 for fiscal 2022.", phrases=False)
    # one 4835 however written; 1.570 -> 1.57; 12% once; the bare 12, the ids and the year are not features
    assert f.numbers == {"4835", "1.57", "12%"}
    assert f.scaled == set() and f.phrases == set() and len(f) == 3


def test_short_numbers_and_years_are_not_features_but_decimals_are():
    f = evidence_features("In 2022, 3 of 45 plants; 2,022 units; 0.5 points; 007 code", phrases=False)
    assert f.numbers == {"2022", "0.5"}  # "2,022" is an amount (written with a separator), 2022 is a year


def test_number_matching_ignores_separators_and_markup_but_not_value():
    f = evidence_features("receivables of $4,126 and inventories 3,771; margin 45%", phrases=False)
    sent = text_features("| Accounts receivable, net | **4126** |\n| Inventories | 3,77 |\n| Gross margin | 45 | % |")
    assert evidence_recall(f, sent) == (2 / 3, ["3771"])


def test_scaled_figure_matches_the_table_one_unit_down():
    f = evidence_features("Net revenue was $23.6 billion; $1.26 billion of income", phrases=False)
    assert f.scaled == {("23.6", 1), ("1.26", 2)}
    assert evidence_recall(f, text_features("| Net revenue | $ 23,601 |")) == (0.5, ["1.26"])
    assert evidence_recall(f, text_features("23,649 and 1,264")) == (1.0, [])
    assert evidence_recall(f, text_features("23,650 and 1,254")) == (0.0, ["1.26", "23.6"])  # 23.7 and 1.25
    assert evidence_recall(f, text_features("1,255"))[1] == ["23.6"]  # half up: 1.255 is 1.26


def test_key_phrases_are_non_overlapping_eight_token_runs_of_prose():
    prose = "The increase in net revenue was driven by higher sales of our EPYC server processors."
    f = evidence_features(prose)
    assert f.phrases == {("the", "increase", "in", "net", "revenue", "was", "driven", "by")}  # 15 tokens: one run
    got = evidence_recall(f, text_features("**The increase in net revenue** was driven by higher sales"))
    assert got == (1.0, [])
    assert evidence_recall(f, text_features("The increase in net revenue was mostly driven by"))[0] == 0.0
    table = "Net revenue\n$\n86,392 $\n79,474\nCost of sales\n45,000\n41,000"
    assert evidence_features(table).phrases == set()  # table evidence: numbers only


def test_only_findable_features_count_and_none_when_nothing_is_left():
    f = evidence_features("operating income fell to 1,264 from 3,648; the ratio was 1.57", phrases=False)
    doc = text_features("Operating income 1,264 and 3,648 in the prior year")
    kept = findable(f, doc)
    assert kept.numbers == {"1264", "3648"}  # 1.57 is computed, not in the filing
    assert evidence_recall(kept, text_features("income 1,264"))[0] == 0.5
    assert evidence_recall(findable(f, text_features("nothing")), doc) == (None, [])


def test_score_question_sends_only_the_question_documents_text():
    gold = [("AMD#0003", "AMD", 10, 19)]
    items = [_section("AMEX", "0003", 10, 19, "cash 4,835", 1), _section("AMD", "0003", 10, 19, "receivables 4,126", 2)]
    f = evidence_features("cash of 4,835 and receivables of 4,126", phrases=False)
    got = score_question(items, gold, [1, 2], doc=["AMD"], evidence=f)
    assert (got["1"]["evidence_recall"], got["2"]["evidence_recall"]) == (0.0, 0.5)
    assert got["2"]["evidence_missed"] == ["4835"]
