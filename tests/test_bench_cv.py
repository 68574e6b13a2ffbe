"""The honest protocol's tools: leave-one-company-out folds and the bootstrap interval."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from bench_support import FIX, build_fixture_index
from ppkit.bench.fit.cv import bootstrap_ci, company_keys, loco_choice, loco_folds, loco_table
from ppkit.bench.fit.loco import VARIANTS, loco_markdown, loco_pooled
from ppkit.bench.fit.rerank import SHELF_SET, QuestionSet, question_companies, runnable, set_companies, shelf_set
from ppkit.cli import main
from ppkit.core.config import Config

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


# --- company keys: one fold per company across pooled sets (the reference index and the shelf) ---

REF = {"AMD": {"company": "Advanced Micro Devices, Inc.", "ticker": "AMD"},
       "AMEX": {"company": "American Express Company", "ticker": "AXP"}, "CLIP": {}}
SHELF = {"AMD_2015_10K": {"company": "Advanced Micro Devices, Inc.", "ticker": None},
         "AMERICANEXPRESS_2022_10K": {"company": "American Express Company", "ticker": "AXP"},
         "ADOBE_2015_10K": {"company": "Adobe Systems Incorporated"}, "ADOBE_2022_10K": {"company": "Adobe Inc."},
         "AMERICANWATERWORKS_2020_10K": {"company": "American Water Works Company, Inc.", "ticker": "AWK"}}


def test_company_keys_agree_across_sets():
    keys = company_keys({"comprehensive": REF, "shelf": SHELF})
    assert keys == {"comprehensive": {"AMD": "advanced micro devices", "AMEX": "american express", "CLIP": "CLIP"},
                    "shelf": {"AMD_2015_10K": "advanced micro devices", "AMERICANEXPRESS_2022_10K": "american express",
                              "ADOBE_2015_10K": "adobe", "ADOBE_2022_10K": "adobe",
                              "AMERICANWATERWORKS_2020_10K": "american water works"}}
    # a reference AMD question and a shelf AMD question are tested in one fold, never trained on for it
    q = {"c:1": {keys["comprehensive"]["AMD"]}, "s:1": {keys["shelf"]["AMD_2015_10K"]},
         "s:2": {keys["shelf"]["ADOBE_2015_10K"]}, "s:3": {keys["shelf"]["ADOBE_2022_10K"]},
         "c:2": {keys["comprehensive"]["CLIP"]}}
    folds = {f.company: (f.train, f.test) for f in loco_folds(q)}
    assert folds == {"CLIP": (("c:1", "s:1", "s:2", "s:3"), ("c:2",)),
                     "adobe": (("c:1", "s:1", "c:2"), ("s:2", "s:3")),
                     "advanced micro devices": (("s:2", "s:3", "c:2"), ("c:1", "s:1"))}


def test_company_keys_one_document_per_company_keep_the_document_folds():
    # without the shelf (the reference indexes: one filing per company, papers without a company)
    # the folds are the documents' folds: the same train and test questions as before company keys
    keys = company_keys({"comprehensive": REF})["comprehensive"]
    docs = {"a": {"AMD"}, "b": {"AMEX"}, "ab": {"AMD", "AMEX"}, "p": {"CLIP"}}
    by_doc = sorted((f.train, f.test) for f in loco_folds(docs))
    by_company = sorted((f.train, f.test) for f in loco_folds({q: {keys[d] for d in ds} for q, ds in docs.items()}))
    assert by_company == by_doc == [(("a", "b", "ab"), ("p",)), (("a", "p"), ("b",)), (("p",), ("a", "ab"))]


def _fake_set(name, catalog, docs_of):
    """A QuestionSet whose index has ``catalog`` and whose questions are about ``docs_of[qid]``."""
    index = SimpleNamespace(docs=list(catalog), record=lambda d: SimpleNamespace(metadata=catalog[d]))
    gold = SimpleNamespace(docs=docs_of, qrels={q: [] for q in docs_of})
    return QuestionSet(name, Path(f"{name}.jsonl"), "financebench", [{"qid": q} for q in docs_of], gold, index)


def test_question_companies_pool_the_reference_index_and_the_shelf():
    ref = _fake_set("comprehensive", REF, {"1": ["AMD"], "2": ["AMD", "AMEX"], "3": ["CLIP"]})
    shelf = _fake_set(SHELF_SET, SHELF, {"fb1": ["AMD_2015_10K"], "fb2": ["ADOBE_2022_10K"]})
    companies = set_companies([ref, shelf])
    got = {f"{qs.name}:{q}": question_companies(qs, q, companies) for qs in (ref, shelf) for q in qs.gold.docs}
    assert got == {"comprehensive:1": {"advanced micro devices"},
                   "comprehensive:2": {"advanced micro devices", "american express"},
                   "comprehensive:3": {"CLIP"}, "financebench_shelf:fb1": {"advanced micro devices"},
                   "financebench_shelf:fb2": {"adobe"}}
    # alone, the reference set keeps one company per document (its folds are unchanged)
    alone = set_companies([ref])
    assert {q: question_companies(ref, q, alone) for q in ref.gold.docs} == {
        "1": {"advanced micro devices"}, "2": {"advanced micro devices", "american express"}, "3": {"CLIP"}}


def test_shelf_set_asks_the_financebench_questions_of_the_shelf_index(tmp_path, monkeypatch):
    monkeypatch.setenv("PPKIT_CACHE_DIR", str(tmp_path / "cache"))
    build_fixture_index(tmp_path / "ix")
    qs = shelf_set(tmp_path / "ix", Config(embedder="hash", online=False), questions=FIX / "bench_financebench.jsonl")
    assert (qs.name, qs.index_dir, qs.fmt) == (SHELF_SET, str(tmp_path / "ix"), "financebench")
    assert [q["qid"] for q in runnable(qs)] == ["fb-acme-prose", "fb-acme-table"]


def test_shelf_index_without_cv_is_one_message(capsys, monkeypatch):
    monkeypatch.setenv("PPKIT_OFFLINE", "1")
    assert main(["bench", "retrieval", "--questions", str(FIX / "bench_financebench.jsonl"),
                 "--shelf-index", "nowhere"]) == 2
    err = capsys.readouterr().err
    assert "--shelf-index pools a set into --cv loco" in err and "Traceback" not in err


def _row(h3, h5, page=None):
    five = {"hit": h5, "recall": h5, "all_gold": h5, "context_chars": 100, **({"page_hit": page} if page is not None else {})}
    return {"3": {"hit": h3, "recall": h3, "all_gold": h3}, "5": five}


def test_loco_pooled_pairs_out_of_sample_with_hand_set_per_question():
    hand = {"a:1": _row(1.0, 1.0), "a:2": _row(0.0, 1.0), "s:1": _row(0.0, 0.0, 0.0), "s:2": _row(1.0, 1.0, 1.0)}
    fitted = {"a:1": _row(1.0, 1.0), "a:2": _row(1.0, 1.0), "s:1": _row(0.0, 1.0, 1.0), "s:2": _row(0.0, 1.0, 1.0)}
    pooled = loco_pooled({"per_question": {"handset": hand, "fitted_in": fitted, "fitted_loco": fitted}})
    assert pooled["n"] == 4
    assert pooled["handset"]["3"]["hit"]["mean"] == 0.5 and pooled["fitted_loco"]["5"]["hit"]["mean"] == 1.0
    assert pooled["fitted_loco"]["5"]["page_hit"] == {"mean": 1.0, "lo": 1.0, "hi": 1.0, "n": 2}
    d = pooled["paired"]
    assert (d["3"]["hit"]["mean"], d["3"]["hit"]["won"], d["3"]["hit"]["lost"]) == (0.0, 1, 1)
    assert (d["5"]["hit"]["mean"], d["5"]["hit"]["won"], d["5"]["hit"]["lost"]) == (0.25, 1, 0)
    assert (d["5"]["page_hit"]["mean"], d["5"]["page_hit"]["n"]) == (0.5, 2)
    table = loco_markdown({"folds": [], "resamples": 2000, "seed": 0, "pooled": pooled,
                           "sets": {"a": {"n": 2, **{v: {} for v in VARIANTS}}, "s": {"n": 2, **{v: {} for v in VARIANTS}}}})
    assert "**all sets pooled** (4 questions)" in table
    assert "| hit@5 | +0.250 [+0.000, +0.750] | 1 | 0 |" in table


def test_loco_choice_never_chooses_with_the_held_out_company():
    # the setting 2 suits A's questions only, 1 suits B's and C's
    scores = {"a1": {1: 0.0, 2: 1.0}, "a2": {1: 0.0, 2: 1.0}, "b1": {1: 1.0, 2: 0.0}, "c1": {1: 1.0, 2: 0.0},
              "ab": {1: 0.0, 2: 5.0}}
    companies = {"a1": {"A"}, "a2": {"A"}, "b1": {"B"}, "c1": {"C"}, "ab": {"A", "B"}}
    chosen = loco_choice(scores, companies, [1, 2])
    # A's fold tests a1, a2 and ab and trains on c1 only (b1 shares B with ab): 1; B's trains on a1, a2, c1 and C's on
    # all but c1: 2 both times (ab's 5 counts only where A and B are not held out)
    assert chosen == {"a1": 1, "a2": 1, "ab": 1, "b1": 2, "c1": 2}
    # a tie keeps the earlier value of the grid
    assert loco_choice({"x": {1: 1.0, 2: 1.0}, "y": {1: 1.0, 2: 1.0}}, {"x": {"X"}, "y": {"Y"}}, [2, 1]) == {"x": 2, "y": 2}


def test_loco_table_means_per_set_and_the_chosen_setting_per_question():
    rows = {"a:1": {"x": {"hit": 1.0, "page": None, "chars": 1000}, "y": {"hit": 0.0, "page": None, "chars": 3000}},
            "a:2": {"x": {"hit": 0.0, "page": None, "chars": 2000}, "y": {"hit": 1.0, "page": None, "chars": 5000}},
            "b:1": {"x": {"hit": 1.0, "page": 0.0, "chars": 10}, "y": {"hit": 1.0, "page": 1.0, "chars": 20}}}
    chosen = {"a:1": "x", "a:2": "y", "b:1": "y"}
    lines = loco_table(rows, chosen, ["x", "y"], [("hit@3", "hit"), ("page hit", "page"), ("chars", "chars")],
                       label=str.upper)
    assert lines == [
        "| set | setting | questions | hit@3 | page hit | chars |",
        "| --- | --- | --- | --- | --- | --- |",
        "| a | X | 2 | 0.500 |  | 1,500 |",
        "| a | Y | 2 | 0.500 |  | 4,000 |",
        "| a | **LOCO** | 2 | 1.000 |  | 3,000 |",  # a:1 with x (1.0, 1000), a:2 with y (1.0, 5000)
        "| b | X | 1 | 1.000 | 0.000 | 10 |",
        "| b | Y | 1 | 1.000 | 1.000 | 20 |",
        "| b | **LOCO** | 1 | 1.000 | 1.000 | 20 |",
    ]
