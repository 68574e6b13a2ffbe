"""The fitted re-ranker: loads a model and ranks a hand-made candidate list as its weights say."""

from __future__ import annotations

import json

import pytest

from ppkit.core.errors import InvalidInput
from ppkit.retrieval.rerank_fitted import DEFAULT_MODEL_PATH, FittedModel, FittedReranker, relevant_k
from ppkit.retrieval.types import Candidate


def cand(node: str, s1: float, text: str, recalled: bool = True) -> Candidate:
    return Candidate("DOC", node, f"DOC > Part {node}", s1, int(node), int(recalled), (s1,), 10 * int(node),
                     10 * int(node) + 5, text[:20], text, recall={"mode": "dense"} if recalled else {})


CANDS = [cand("1", 0.2, "cash and equivalents"), cand("2", 0.9, "segment revenue by region"),
         cand("3", 0.5, "inventory write-downs")]


def model(coef: float, **kw) -> FittedModel:
    return FittedModel(("dense_raw",), (coef,), -1.0, **kw)


def test_ranks_by_the_weights():
    up = FittedReranker(model=model(2.0)).rerank("revenue", CANDS)
    assert [c.node_id for c in up] == ["2", "3", "1"]
    # p = sigmoid(2 s - 1): 0.9 -> sigmoid(0.8), 0.5 -> 0.5, 0.2 -> sigmoid(-0.6)
    assert [c.stage2_score for c in up] == [0.69, 0.5, 0.3543]
    down = FittedReranker(model=model(-2.0)).rerank("revenue", CANDS)
    assert [c.node_id for c in down] == ["1", "3", "2"]


def test_text_feature_weight():
    m = FittedModel(("text_lex",), (3.0,), 0.0)
    ranked = FittedReranker(model=m).rerank("inventory write-downs", CANDS)
    assert ranked[0].node_id == "3"


def test_threshold_shrinks_k():
    ranked = FittedReranker(model=model(2.0, threshold=0.5)).rerank("revenue", CANDS)
    assert relevant_k(ranked, 3, 0.5) == 2
    assert relevant_k(ranked, 3, 0.95) == 1  # at least one
    assert relevant_k(ranked, 2, 0.0) == 2


def test_domain_rules_off_puts_added_statements_last():
    cands = CANDS + [cand("4", 0.95, "balance sheet", recalled=False)]
    on = FittedReranker(model=model(2.0)).rerank("revenue", cands)
    off = FittedReranker(model=model(2.0, domain_rules=False)).rerank("revenue", cands)
    assert [c.node_id for c in on] == ["4", "2", "3", "1"]
    assert [c.node_id for c in off] == ["2", "3", "1", "4"]


def test_round_trip_and_checks(tmp_path):
    m = model(2.0, threshold=0.3, meta={"commit": "abc"})
    path = tmp_path / "m.json"
    path.write_text(json.dumps(m.to_dict()))
    back = FittedModel.load(path)
    assert back == m and back.meta == {"commit": "abc"}
    with pytest.raises(InvalidInput):
        FittedModel(("dense", "hits"), (1.0,), 0.0)
    with pytest.raises(InvalidInput):
        FittedModel(("nonsense",), (1.0,), 0.0)


def test_committed_model_records_how_it_was_fitted():
    m = FittedModel.load()
    assert DEFAULT_MODEL_PATH.name == "fitted_rerank.json"
    assert m.meta["fitted_by"] == "python -m ppkit.bench.fit_rerank"
    assert [s["file"] for s in m.meta["training_sets"]] == ["comprehensive_questions.xlsx", "financebench_dev.jsonl",
                                                            "multimodal_queries.json"]
    assert m.meta["commit"]
