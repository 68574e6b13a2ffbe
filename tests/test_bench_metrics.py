"""ppkit.bench.metrics and the chunk baselines' line ranges: textbook examples on hand-made items."""

import pytest

from bench_support import fixture_docs
from ppkit.bench.baselines import BM25Baseline, blind_chunks, header_path_chunks
from ppkit.bench.harness import _equal_context
from ppkit.bench.metrics import Sent, covered, hit_at_k, recall_at_k, score_question
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
    assert got["3"] == {"hit": 1.0, "recall": pytest.approx(1 / 3), "hit_overlap": 1.0,
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
    from ppkit.bench.harness import _aggregate

    rows = [{"3": {"hit": 1.0, "recall": 1.0, "context_chars": 10, "image_hit": 1.0, "image_precision": 0.5,
                   "image_reachable": 1.0, "images": ["a", "b"]}},
            {"3": {"hit": 0.0, "recall": 0.0, "context_chars": 30, "image_hit": None, "image_precision": None,
                   "image_reachable": None, "images": []}}]
    agg = _aggregate(rows, [3])["3"]
    assert (agg["hit"], agg["context_chars_mean"]) == (0.5, 20)
    assert (agg["image_hit"], agg["image_precision"], agg["image_reachable"]) == (1.0, 0.5, 1.0)
    assert (agg["n_image_hit"], agg["n_image_precision"], agg["images_shown_mean"]) == (1, 1, 1.0)
    assert "image_hit" not in _aggregate([{"3": {"hit": 1.0, "recall": 1.0, "context_chars": 5}}], [3])["3"]
