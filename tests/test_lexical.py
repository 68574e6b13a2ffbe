"""BM25 (ppkit.indexing.lexical.LexicalIndex) and reciprocal rank fusion, with hand-computed values."""

import json
import math
from collections import Counter

import numpy as np
import pytest

from ppkit.core.errors import InvalidInput
from ppkit.indexing.lexical import TOKENIZER, LexicalIndex, dedup_sections, lexical_tokens, rrf

CORPUS = ["apple banana apple", "banana cherry", "cherry cherry cherry date"]


def _lucene(tf, dl, df, n=3, avgdl=3.0, k1=1.5, b=0.75):
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))


def test_tokens_stem_drop_stopwords_and_join_thousands():
    assert lexical_tokens("Goodwill of $24,177 million in Note 4") == ["goodwil", "24177", "million", "note", "4"]
    assert lexical_tokens("The cherries") == ["cherri"]
    # a comma between numbers that is not a thousands separator stays a separator
    assert lexical_tokens("1,2") == ["1", "2"]


def test_bm25_textbook_scores():
    li = LexicalIndex.build(CORPUS)
    s = li.scores("apple")
    assert s[0] == pytest.approx(_lucene(tf=2, dl=3, df=1), rel=1e-6)
    assert s[1] == 0 and s[2] == 0
    s = li.scores("cherry")
    assert s[1] == pytest.approx(_lucene(tf=1, dl=2, df=2), rel=1e-6)  # 0.2211
    assert s[2] == pytest.approx(_lucene(tf=3, dl=4, df=2), rel=1e-6)  # 0.2892
    assert round(float(s[2]), 4) == 0.2892


def test_search_order_ties_scope_and_unknown_terms():
    li = LexicalIndex.build(CORPUS, chunk_ids=[10, 11, 12])
    ids, scores = li.search("cherry", 5)
    assert ids.tolist() == [12, 11]
    ids, _ = li.search("cherry", 5, allowed_ids=np.array([11]))
    assert ids.tolist() == [11]
    ids, _ = li.search("banana", 5)  # equal tf, dl 3 vs 2: the shorter document scores higher
    assert ids.tolist() == [11, 10]
    assert li.search("zebra", 5)[0].tolist() == []
    assert li.search("the of and", 5)[0].tolist() == []  # only stopwords
    two = LexicalIndex.build(["dog", "dog"], chunk_ids=[5, 3])
    assert two.search("dog", 5)[0].tolist() == [3, 5]  # a tie is broken by chunk id


def test_save_load_roundtrip_plain_files(tmp_path):
    li = LexicalIndex.build(CORPUS, chunk_ids=[10, 11, 12])
    li.save(tmp_path / "bm25")
    files = sorted(p.name for p in (tmp_path / "bm25").iterdir())
    assert all(f.endswith((".npy", ".json")) for f in files), files
    for f in files:  # every array loads without pickle
        if f.endswith(".npy"):
            np.load(tmp_path / "bm25" / f, allow_pickle=False)
    assert json.loads((tmp_path / "bm25" / "lexical.json").read_text())["tokenizer"] == TOKENIZER
    back = LexicalIndex.load(tmp_path / "bm25")
    assert isinstance(back.model.scores["data"], np.memmap)
    for q in ("apple", "cherry date", "banana"):
        a, b = li.search(q, 3), back.search(q, 3)
        assert a[0].tolist() == b[0].tolist()
        assert np.allclose(a[1], b[1])


def test_load_refuses_other_tokenizer(tmp_path):
    LexicalIndex.build(CORPUS).save(tmp_path)
    meta = json.loads((tmp_path / "lexical.json").read_text())
    (tmp_path / "lexical.json").write_text(json.dumps({**meta, "tokenizer": "old"}))
    with pytest.raises(ValueError, match="rebuild"):
        LexicalIndex.load(tmp_path)
    with pytest.raises(FileNotFoundError, match="no BM25 index"):
        LexicalIndex.load(tmp_path / "missing")


def test_rrf_textbook_example():
    fused = rrf({"dense": ["A", "B", "C"], "bm25": ["C", "A", "D"]})
    assert [x for x, _ in fused] == ["A", "C", "B", "D"]
    scores = dict(fused)
    assert scores["A"] == pytest.approx(1 / 61 + 1 / 62)  # 0.032522
    assert scores["C"] == pytest.approx(1 / 63 + 1 / 61)  # 0.032266
    assert scores["B"] == pytest.approx(1 / 62)
    assert scores["D"] == pytest.approx(1 / 63)
    assert round(scores["A"], 6) == 0.032522


def test_rrf_after_dedup_does_not_inflate_many_chunk_sections():
    # chunk ranking: section S has three chunks at ranks 1-3, T one chunk at rank 4
    chunks = ["S", "S", "S", "T"]
    with pytest.raises(ValueError, match="deduplicate"):
        rrf({"dense": chunks})
    sections = dedup_sections(chunks)
    assert sections == ["S", "T"]
    fused = dict(rrf({"dense": sections, "bm25": ["T", "S"]}))
    assert fused["S"] == pytest.approx(1 / 61 + 1 / 62) and fused["T"] == pytest.approx(1 / 62 + 1 / 61)


def test_small_set_bm25_equals_bm25s_bit_for_bit():
    from ppkit.indexing.lexical import bm25_scores

    texts = ["Cash and cash equivalents $24,177 million", "Dividends paid in Note 4; dividends declared", "",
             "cash cash cash flows from operating activities", "Goodwill and intangible assets, Note 4",
             "| Capital expenditures | (1,150) | (1,098) |"]
    for q in ("cash dividends", "24,177 Note 4", "capital expenditures and operating cash flows",
              "nothing here", "", "dividends dividends cash"):
        want = LexicalIndex.build(texts).scores(q)
        got = bm25_scores(q, texts)
        assert got.dtype == np.float32 and got.tobytes() == want.tobytes(), q
        # the same from each text's term counts (what the structural re-ranker keeps per section)
        counts = [(Counter(lexical_tokens(t)), len(lexical_tokens(t))) for t in texts]
        assert bm25_scores(q, texts, counts=counts).tobytes() == want.tobytes(), q
    assert bm25_scores("cash", []).tolist() == []
    with pytest.raises(InvalidInput):
        bm25_scores("cash", texts, counts=[(Counter(), 0)])
