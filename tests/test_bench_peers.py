"""ppkit bench peers on a tiny hand-written fixture: the peer recipes' chunks, where they lie in the source,
ragnav's blocks and variants, and one run beside ppkit through the retrieval harness (so the optional ``peers``
extra does not rot).

``tests/fixtures/peers/Acme.md`` (20 lines) and ``Zenith.md`` (11 lines); the HashEmbedder stands in for
the model (plumbing, not quality), ragnav included (through its embedding-client API).
"""

from pathlib import Path

import pytest

pytest.importorskip("langchain_text_splitters")
pytest.importorskip("llama_index.core")
pytest.importorskip("ragnav")

from ppkit import HashEmbedder, build_index
from ppkit.bench.data.gold import GoldSet
from ppkit.bench.measures.metrics import Sent
from ppkit.bench.runs.peers import PEERS, RECIPES, peer_corpora, run_peers
from ppkit.bench.runs.ragnav_peer import RAGNAV, build_ragnav

FIX = Path(__file__).parent / "fixtures" / "peers"
SMALL = {"size": 120, "overlap": 20, "child_size": 60, "child_overlap": 10, "chunk_tokens": 40, "overlap_tokens": 5}


@pytest.fixture(scope="module")
def index():
    return build_index([FIX / "Acme.md", FIX / "Zenith.md"], None, embedder=HashEmbedder(64), progress=False,
                       save=False)


def test_recipe_chunks_lie_where_their_text_is(index):
    c = peer_corpora(index, **SMALL)

    def acme(name):
        return [r for d, r in zip(c[name]["corpus"].docs, c[name]["corpus"].ranges) if d == "Acme"]

    # headers stripped: body lines only
    assert acme("lc-header") == [((3, 3),), ((7, 8),), ((12, 13),), ((17, 20),)]
    # the header path prefix carries the section heading: its heading line is covered too
    assert acme("lc-header+path") == [((1, 1), (3, 3)), ((5, 5), (7, 8)), ((10, 10), (12, 13)), ((15, 15), (17, 20))]
    assert c["lc-header+path"]["corpus"].texts[2].startswith(
        "[Acme Corp Annual Report > Item 7. Management's Discussion > Liquidity]\nCash on hand")
    # LlamaIndex keeps the heading in the node text and embeds its header_path metadata
    assert acme("llamaindex")[:3] == [((1, 3),), ((5, 8),), ((10, 12),)]
    assert c["llamaindex"]["corpus"].texts[1].startswith("header_path: /Acme Corp Annual Report/\n\n## Item 7.")
    # small-to-big: children of the parents above, each pointing at its parent
    kids = c["parent-child"]["children"]
    assert list(zip(kids.ranges[:5], c["parent-child"]["parent_of"][:5])) == [
        (((3, 3),), 0), (((7, 7),), 1), (((8, 8),), 1), (((12, 12),), 2), (((13, 13),), 2)]
    assert acme("fixed-size")[0] == ((1, 7),)
    assert all(c[n]["corpus"].settings.get("unlocated", 0) == 0 for n in RECIPES)


def test_peers_run_beside_ppkit_on_the_same_gold(index, tmp_path):
    questions = [{"qid": "q1", "text": "Acme cash on hand revolving credit line liquidity"},
                 {"qid": "q2", "text": "Zenith supply of optical glass risk factors"}]
    gold = GoldSet(qrels={"q1": {"Acme#0003": 1}, "q2": {"Zenith#0002": 1}}, docs={"q1": ["Acme"], "q2": ["Zenith"]})
    res = run_peers(index, questions, gold, benchmark="fixture", cache=tmp_path, split=SMALL,
                    ragnav_embedder=index.embedder)
    assert res["n"] == 2 and list(res["recipes"]) == list(PEERS)
    pc = res["recipes"]["parent-child"]
    assert (pc["chunks"], pc["children"], pc["embedded_now"]) == (7, 11, True)
    # the path-prefixed chunk of Liquidity names its heading and shares the most words with q1
    assert res["recipes"]["lc-header+path"]["scores"]["none"]["3"]["hit"] == 1.0
    assert res["recipes"]["lc-header"]["scores"]["none"]["3"]["recall"] == 0.0  # headers stripped: no heading line sent
    assert set(res["ppkit"]["scores"]) == {"auto", "none", "gold"}
    # restricted to the question's filing, ragnav's best block for q1 is the Liquidity text (lines 11-14)
    assert res["recipes"]["ragnav"]["scores"]["gold"]["3"]["hit_overlap"] == 1.0
    assert res["recipes"]["ragnav"]["chunks"] == 14  # Acme: 4 headings + 4 bodies; Zenith: 3 + 3
    again = run_peers(index, questions, gold, benchmark="fixture", cache=tmp_path, split=SMALL,
                      ragnav_embedder=index.embedder)
    for name in ("parent-child", "ragnav"):  # vectors and their embed (build) time from the cache
        assert again["recipes"][name]["embedded_now"] is False
        assert again["recipes"][name]["embed_seconds"] == res["recipes"][name]["embed_seconds"]


def test_ragnav_variants_filter_route_and_expand(index, tmp_path):
    peers, info = build_ragnav(index, cache=tmp_path, embedder=index.embedder)
    assert list(peers) == list(RAGNAV) and info["ragnav"]["embedded_now"] is True
    q = "cash on hand and the revolving credit line"
    first = peers["ragnav"].search(q, 5, docs=["Acme"])
    text = "Cash on hand was 33 million dollars at year end.\nThe revolving credit line is undrawn."
    assert first[0] == Sent("Acme", ((11, 14),), len(text), label="md:Acme#p5")  # a body: the lines under its heading
    assert {s.doc for s in first} == {"Acme"}
    # structure expansion: the seed, then its parent headings up to the title, in the seed's order
    assert [s.ranges for s in peers["ragnav+structure"].search(q, 4, docs=["Acme"])] == [
        ((11, 14),), ((10, 10),), ((5, 5),), ((1, 1),)]
    # routed: ragnav picks the documents itself, whatever filter it is handed
    glass = "optical glass supply concentrated in one country"
    assert {s.doc for s in peers["ragnav"].search(glass, 5, docs=["Acme"])} == {"Acme"}
    assert peers["ragnav-routed"].search(glass, 5, docs=["Acme"])[0].doc == "Zenith"


def test_missing_library_names_the_extra(monkeypatch):
    import builtins

    from ppkit.bench.runs import peers
    from ppkit.core.errors import MissingDependency

    real = builtins.__import__

    def no_langchain(name, *a, **k):
        if name.startswith("langchain_text_splitters"):
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_langchain)
    with pytest.raises(MissingDependency, match=r"ppkit\[peers\]"):
        peers._langchain()


def test_peers_table_counts_a_section_found_by_any_of_its_lines():
    from ppkit.bench.runs.peers import peers_markdown

    strict = {"hit": 0.0, "recall": 0.0, "hit_overlap": 0.5, "recall_overlap": 0.25, "context_chars_mean": 900.0}
    ppkit_scores = {"hit": 1.0, "recall": 0.5, "hit_overlap": 1.0, "recall_overlap": 0.5, "context_chars_mean": 800.0}
    result = {"benchmark": "b", "n": 2, "embedder": "hash",
              "ppkit": {"chunks": 3, "scores": {"auto": {"3": ppkit_scores, "5": ppkit_scores}},
                        "split_seconds_at_index_time": 0.1, "query": {"p50_ms": 1, "p95_ms": 2}},
              "recipes": {"lc-header": {"chunks": 4, "embed_seconds": 1.0, "split_seconds": 0.2,
                                        "query": {"p50_ms": 1, "p95_ms": 2},
                                        "scores": {"auto": {"3": strict, "5": strict,
                                                            "equal_context": {**strict, "chunks_mean": 2.0}}}}}}
    row = next(r for r in peers_markdown(result).splitlines() if r.startswith("| lc-header |"))
    assert row.split(" | ")[2:7] == ["0.50", "0.25", "0.50", "0.25", "900"]  # heading line stripped: overlap counts
