"""``POST /v1/compare`` (ppkit/serve/compare_route.py) on the two hand-written agreements of
tests/fixtures/compare: the JSON of ``ppkit compare --json`` in both modes, 4xx with a clear message for
bad bodies, and a file path in the body refused, never read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

import ppkit  # noqa: E402
from ppkit.compare.sections import DocSections  # noqa: E402
from ppkit.core.config import ServeSettings  # noqa: E402
from ppkit.serve.app import create_app  # noqa: E402
from ppkit.serve.engine import Engine  # noqa: E402

FIX = Path(__file__).parent / "fixtures" / "compare"
A, B = "alpha_agreement", "beta_agreement"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The two agreements (copied) indexed with the hash embedder, and a client of the app over them."""
    root = tmp_path_factory.mktemp("serve-compare")
    docs = []
    for name in (A, B):
        (root / f"{name}.md").write_text((FIX / f"{name}.md").read_text(encoding="utf-8"), encoding="utf-8")
        docs.append(root / f"{name}.md")
    index = ppkit.build_index(docs, root / "index", embedder=ppkit.HashEmbedder(), config=ppkit.Config(online=False),
                              progress=False)
    return index, TestClient(create_app(Engine(index), ServeSettings())), docs


def _without_timings(d: dict) -> dict:
    return {k: v for k, v in d.items() if k != "timings"}


def test_compare_route_is_the_json_of_ppkit_compare(served):
    index, client, _ = served
    r = client.post("/v1/compare", json={"a": A, "b": "BETA_AGREEMENT", "criteria": "liens and negative pledge",
                                         "max_sections": 2})
    assert r.status_code == 200, r.text
    want = json.loads(ppkit.compare(A, B, "liens and negative pledge", index=index, n=2).to_json())
    assert _without_timings(r.json()) == _without_timings(want)
    assert r.json()["b"] == B and len(r.json()["pairs"]) == 2 and r.json()["mode"] == "criteria"
    whole = client.post("/v1/compare", json={"a": B, "b": A}).json()
    assert whole["mode"] == "whole" and whole["criteria"] is None
    assert [p["a"]["node"] for p in whole["pairs"] if not p.get("container")] == DocSections(index, B).nodes


@pytest.mark.parametrize("body, status, message", [
    ({"a": A, "b": "nope"}, 404, "no document 'nope' in this index: GET /v1/documents lists them"),
    ({"a": A, "b": A.upper()}, 400, "compare needs two different documents"),
    ({"a": A, "b": B, "criteria": ""}, 422, "criteria: String should have at least 1 character"),
    ({"a": A, "b": B, "criteria": "  "}, 400, "--criteria is empty"),
    ({"a": A, "b": B, "criteria": "photosynthesis", "max_sections": 0}, 422,
     "max_sections: Input should be greater than or equal to 1"),
    ({"a": A, "b": B, "k": 3}, 422, "k: unknown field (not allowed)"),
    ({"a": A}, 422, "b: Field required"),
])
def test_bad_bodies_get_a_4xx_with_a_clear_message(served, body, status, message):
    r = served[1].post("/v1/compare", json=body)
    assert r.status_code == status, r.text
    assert message in r.json()["error"]["message"] and "Traceback" not in r.text


def test_a_path_in_the_body_is_not_read(served, tmp_path):
    index, client, docs = served
    other = tmp_path / "gamma_agreement.md"  # a real file the server could index if it took paths
    other.write_text(FIX.joinpath(f"{B}.md").read_text(encoding="utf-8"), encoding="utf-8")
    for name in (str(other), str(docs[0])):
        r = client.post("/v1/compare", json={"a": name, "b": B})
        assert r.status_code == 404 and "a document is named, not given by its path" in r.json()["error"]["message"]
        assert str(tmp_path) not in r.text and str(docs[0].parent) not in r.text
    assert index.docs == [A, B]
