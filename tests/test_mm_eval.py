"""The multimodal benchmark pieces: gold from the reference log, metrics, the offline runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mm_helpers import FIXTURE_MD, fixture_tree, section

from ppkit.bench.mm_eval import (
    image_hit, image_key, image_metrics, image_precision, load_multimodal, match_breadcrumb, run_multimodal, section_hit,
    section_recall,
)
from ppkit.documents.tree import parse_markdown

FIX = Path(__file__).parent / "fixtures"


def test_image_metrics_textbook():
    # 4 chosen, 2 of them in the gold of 3: precision 2/4; at least one hit
    assert image_precision(["a", "b", "c", "d"], ["b", "d", "e"]) == 0.5
    assert image_hit(["a", "b", "c", "d"], ["b", "d", "e"]) == 1.0
    assert image_hit(["a"], ["b"]) == 0.0 and image_precision(["a"], ["b"]) == 0.0
    assert image_hit([], ["b"]) == 0.0  # showing nothing misses the reference's image
    assert image_precision([], ["b"]) is None  # precision of nothing is undefined, not 0 or 1
    assert image_hit(["a"], []) is None  # no reference image: the question does not count for image_hit


def test_section_hit_and_recall_by_heading_line():
    t = fixture_tree()
    trees = {"mm_doc": t}
    secs = [section(t, "0002", 1), section(t, "0003", 2)]
    assert section_hit(secs, ["mm_doc#0003", "mm_doc#0004"], trees) is True
    assert section_recall(secs, ["mm_doc#0003", "mm_doc#0004"], trees) == 0.5
    assert section_hit(secs, ["mm_doc#0004"], trees) is False
    # a trimmed section whose sent text does not hold the gold heading line does not hit
    trimmed = [section(t, "0003", 1, sent=((24, 30),))]
    assert section_hit(trimmed, ["mm_doc#0003"], trees) is False
    assert section_hit(secs, [], trees) is None and section_recall(secs, [], trees) is None


def test_match_breadcrumb_is_robust_to_markup_and_reports_misses():
    trees = {"mm_doc": fixture_tree()}
    assert match_breadcrumb("mm_doc > Toy Vector Painter > 2. Results", trees) == ["mm_doc#0003"]
    assert match_breadcrumb("MM_DOC > **Toy Vector Painter** > 2.  RESULTS", trees) == ["mm_doc#0003"]
    assert match_breadcrumb("mm_doc > 2. Results", trees) == ["mm_doc#0003"]  # an ancestor left out
    assert match_breadcrumb("mm_doc > Nowhere", trees) == []
    assert match_breadcrumb("Unknown > 2. Results", trees) == []
    two = {"G": parse_markdown("# A\n## Epochs\ntext\n# B\n## Epochs\ntext\n", "G")}
    assert match_breadcrumb("G > Epochs", two) == ["G#0002", "G#0004"]  # a title that names two headings
    assert match_breadcrumb("G > B > Epochs", two) == ["G#0004"]
    quotes = {"N": parse_markdown("# II. GAMES\n## A. Shannon’s Taxonomy\n", "N")}
    assert match_breadcrumb("N > II. GAMES > A. Shannon's Taxonomy", quotes) == ["N#0002"]


def test_image_key():
    assert image_key("C:/Proxy-Pointer/MultiModal/data/extracted_papers/Galore/tables/fileoutpart157.png") == \
        "Galore/tables/fileoutpart157.png"
    assert image_key("C:\\x\\CLIP\\figures\\f.png") == "CLIP/figures/f.png"
    assert image_key("./figures/f.png", "CLIP") == "CLIP/figures/f.png"


def test_load_multimodal_gold_from_a_fixture_log():
    trees = {"mm_doc": fixture_tree()}
    q1, q2 = load_multimodal(trees, FIX / "mm_queries.json", FIX / "mm_reference_log.json")
    assert (q1.qid, q1.papers, q1.gold_sections, q1.unmatched) == ("1", ("mm_doc",), ("mm_doc#0002",),
                                                                    ("mm_doc > Nowhere",))
    assert q1.gold_images == ("mm_doc/figures/eq1.png",)
    # the reference's label names Figure 1, whose file is pipeline.png: the by-caption view follows the label
    assert q1.gold_by_caption == ("mm_doc/figures/pipeline.png",)
    assert (q2.papers, q2.gold_sections, q2.gold_images) == (("mm_doc", "other"), ("mm_doc#0003", "mm_doc#0004"), ())


def test_load_multimodal_rejects_other_files(tmp_path):
    bad = tmp_path / "q.json"
    bad.write_text(json.dumps({"questions": []}), encoding="utf-8")
    with pytest.raises(ValueError, match="not the multimodal query set"):
        load_multimodal({}, bad, FIX / "mm_reference_log.json")


def test_run_multimodal_offline_on_the_fixture(tmp_path):
    from ppkit.core.config import Config
    from ppkit.indexing.embed import HashEmbedder
    from ppkit.pipeline import build_index

    index = build_index([FIXTURE_MD], tmp_path / "idx", embedder=HashEmbedder(),
                        config=Config(online=False, embedder="hash"), progress=False)
    queries = load_multimodal(index.trees, FIX / "mm_queries.json", FIX / "mm_reference_log.json")
    res = run_multimodal(index, ks=(3, 5), queries=queries)
    assert (res["benchmark"], res["n"], sorted(res["results"])) == ("multimodal", 2, ["3", "5"])
    r5 = res["results"]["5"]  # k=5 over a 4-section document: every section is sent
    assert (r5["hit"], r5["recall"], r5["n_image_hit"]) == (1.0, 1.0, 1)
    q1 = res["per_question"][0]["k"]["5"]
    assert q1["images"][0] == "mm_doc/figures/pipeline.png"
    assert (q1["image_hit"], q1["image_hit_by_caption"]) == (0.0, 1.0)  # eq1.png by path, Figure 1 by caption
    assert q1["image_reachable"] == 1.0  # eq1.png was among the sections' images, just not chosen
    assert res["settings"]["image_threshold"] == 0.3
    assert set(r5) == {"hit", "recall", "context_chars_mean", "image_hit", "image_precision", "n_image_hit",
                       "n_image_precision", "image_reachable", "image_hit_by_caption", "image_precision_by_caption",
                       "images_chosen_mean", "wrong_doc_share"}


@pytest.mark.corpus
def test_reference_gold_matches_every_source():
    from ppkit.core.data import paper_paths
    from ppkit.documents.tree import build_tree

    trees = {p.stem: build_tree(p) for p in paper_paths()}
    qs = load_multimodal(trees)
    assert len(qs) == 20 and [q.unmatched for q in qs] == [()] * 20
    q1 = qs[0]
    # "Galore > Epochs" names two headings (the extraction made a table column a heading twice)
    assert q1.gold_sections == ("Galore#0036", "Galore#0037", "Galore#0038", "Galore#0014", "Galore#0013")
    assert q1.gold_images == ("Galore/tables/fileoutpart157.png",)
    assert qs[8].gold_images == ()  # question 9: the reference showed no image
    assert sum(len(q.gold_images) for q in qs) == 38
    assert qs[12].gold_by_caption == ("VectorFusion/figures/fileoutpart33.png",)  # label Figure 5, path eq. (7)


@pytest.mark.corpus
@pytest.mark.model
def test_two_reference_questions_offline():
    import ppkit

    index = ppkit.reference_index("papers", progress=False)
    qs = [q for q in load_multimodal(index.trees) if q.qid in ("1", "6")]
    res = run_multimodal(index, ks=(5,), queries=qs)
    got = {p["qid"]: p["k"]["5"] for p in res["per_question"]}
    assert got["1"]["images"] == ["Galore/tables/fileoutpart157.png"]  # Table 7: RoBERTa fine-tuning hyperparameters
    assert got["6"]["images"] == ["CLIP/figures/fileoutpart3.png"]  # Figure 2: the CLIP-CITE framework
    assert (got["1"]["hit"], got["6"]["hit"]) == (True, True)


def test_image_metrics_for_one_question():
    t = fixture_tree()
    secs = [section(t, "0002", 1), section(t, "0003", 2)]
    m = image_metrics("What are the three stages of the toy pipeline?", secs,
                      ["mm_doc/figures/pipeline.png", "mm_doc/img/photo.png"])
    assert m["images"] == ["mm_doc/figures/pipeline.png", "mm_doc/tables/accuracy.png"]
    assert (m["image_hit"], m["image_precision"], m["image_reachable"]) == (1.0, 0.5, 1.0)
    none = image_metrics("What is the weather in Paris?", secs, ["mm_doc/img/photo.png"])
    assert (none["images"], none["image_hit"], none["image_precision"], none["image_reachable"]) == ([], 0.0, None, 0.0)
