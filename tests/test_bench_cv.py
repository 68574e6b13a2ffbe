"""The honest protocol's tools: leave-one-company-out folds and the bootstrap interval."""

from __future__ import annotations

from ppkit.bench.cv import bootstrap_ci, loco_folds

# question -> companies; "ab" and "bc" compare two companies each
COMPANIES = {"a1": {"A"}, "a2": {"A"}, "b1": {"B"}, "c1": {"C"}, "c2": {"C"}, "ab": {"A", "B"}, "bc": {"B", "C"},
             "d1": {"D"}}


def test_loco_folds_never_share_a_company_between_train_and_test():
    folds = loco_folds(COMPANIES)
    assert [f.company for f in folds] == ["A", "B", "C", "D"]
    for f in folds:
        train = set().union(*(COMPANIES[q] for q in f.train)) if f.train else set()
        test = set().union(*(COMPANIES[q] for q in f.test))
        assert not train & test, f
    # every question is tested exactly once
    tested = [q for f in folds for q in f.test]
    assert sorted(tested) == sorted(COMPANIES)


def test_loco_folds_exact_split():
    folds = {f.company: (f.train, f.test) for f in loco_folds(COMPANIES)}
    assert folds["A"] == (("c1", "c2", "d1"), ("a1", "a2", "ab"))  # "ab" is A's, so B (and "bc") leave train
    assert folds["B"] == (("a1", "a2", "d1"), ("b1", "bc"))  # "bc" drags C out of B's training
    assert folds["C"] == (("a1", "a2", "b1", "ab", "d1"), ("c1", "c2"))
    assert folds["D"] == (("a1", "a2", "b1", "c1", "c2", "ab", "bc"), ("d1",))


def test_bootstrap_ci_known_case():
    # 1 success in 20: resampled means are Binomial(20, 0.05) / 20; P(all 0) = 0.95^20 = 0.36 > 2.5%,
    # P(X <= 2) = 0.925 < 97.5% <= P(X <= 3) = 0.984, so the interval is [0, 3/20]
    ci = bootstrap_ci([0] * 19 + [1])
    assert ci == {"mean": 0.05, "lo": 0.0, "hi": 0.15, "n": 20}
    assert bootstrap_ci([1, 1, 1]) == {"mean": 1.0, "lo": 1.0, "hi": 1.0, "n": 3}
    assert bootstrap_ci([None, 1.0, 0.0], resamples=500) == bootstrap_ci([1.0, 0.0], resamples=500)  # None skipped
    assert bootstrap_ci([]) == {"mean": None, "lo": None, "hi": None, "n": 0}


def test_bootstrap_ci_is_deterministic():
    vals = [0.0, 1.0, 1.0, 0.0, 1.0, 0.5, 1.0]
    assert bootstrap_ci(vals) == bootstrap_ci(vals)
    a = bootstrap_ci(vals)
    assert a["lo"] <= a["mean"] <= a["hi"]
