"""Merging sub-retrievals: a section two sub-retrievals both found is sent once."""

from ppkit.retrieval.retrieve import merge_round_robin


def test_merge_skips_a_key_taken_already():
    # two company names resolved to one filing: both sub-retrievals rank its sections
    a = ["fl#0014", "fl#0015", "fl#0010"]
    b = ["fl#0014", "fl#0015", "fl#0006"]
    assert merge_round_robin([a, b], 4, key=str) == ["fl#0014", "fl#0015", "fl#0010", "fl#0006"]
    assert merge_round_robin([a, b], 4) == ["fl#0014", "fl#0014", "fl#0015", "fl#0015"]  # without a key: as before


def test_merge_with_a_key_keeps_distinct_lists_unchanged():
    a, b = ["a1", "a2", "a3"], ["b1", "b2"]
    assert merge_round_robin([a, b], 4, key=str) == merge_round_robin([a, b], 4) == ["a1", "b1", "a2", "b2"]
