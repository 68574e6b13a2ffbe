"""The multimodal benchmark through `ppkit bench retrieval`'s path: gold from the reference log
(sections and images), image metrics, and the harness on the hand-written paper fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mm_helpers import FIXTURE_MD, fixture_tree, section

from ppkit.bench.data.gold import gold_lines, map_breadcrumb, multimodal_gold
from ppkit.bench.runs.harness import BenchPlan, run_retrieval_bench
from ppkit.bench.data.loaders import QuestionSetError, load_multimodal_queries
from ppkit.bench.measures.metrics import (
    hit_at_k,
    image_hit,
    image_key,
    image_metrics,
    image_precision,
    recall_at_k,
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
    gold = gold_lines({"mm_doc#0003": 1, "mm_doc#0004": 1}, trees)
    assert hit_at_k(secs, gold, 2) == 1.0 and recall_at_k(secs, gold, 2) == 0.5
    assert hit_at_k(secs, gold_lines({"mm_doc#0004": 1}, trees), 2) == 0.0
    # a trimmed section whose sent text does not hold the gold heading line does not hit
    trimmed = [section(t, "0003", 1, sent=((24, 30),))]
    assert hit_at_k(trimmed, gold_lines({"mm_doc#0003": 1}, trees), 1) == 0.0


def test_map_breadcrumb_is_robust_to_markup():
    trees = {"mm_doc": fixture_tree()}
    assert map_breadcrumb("mm_doc > Toy Vector Painter > 2. Results", trees) == [("mm_doc", "0003")]
    assert map_breadcrumb("MM_DOC > **Toy Vector Painter** > 2.  RESULTS", trees) == [("mm_doc", "0003")]
    assert map_breadcrumb("mm_doc > 2. Results", trees) == [("mm_doc", "0003")]  # an ancestor left out
    assert map_breadcrumb("mm_doc > Nowhere", trees) == []
    assert map_breadcrumb("Unknown > 2. Results", trees) == []
    two = {"G": parse_markdown("# A\n## Epochs\ntext\n# B\n## Epochs\ntext\n", "G")}
    assert map_breadcrumb("G > Epochs", two) == [("G", "0002"), ("G", "0004")]  # a title naming two headings
    assert map_breadcrumb("G > B > Epochs", two) == [("G", "0004")]
    quotes = {"N": parse_markdown("# II. GAMES\n## A. Shannon’s Taxonomy\n", "N")}
    assert map_breadcrumb("N > II. GAMES > A. Shannon's Taxonomy", quotes) == [("N", "0002")]


def test_image_key():
    assert image_key("Galore", "C:/Proxy-Pointer/MultiModal/data/extracted_papers/Galore/tables/fileoutpart157.png") \
        == "Galore/tables/fileoutpart157.png"
    assert image_key("CLIP", "C:\\x\\CLIP\\figures\\f.png") == "CLIP/figures/f.png"
    assert image_key("CLIP", "./figures/f.png") == "CLIP/figures/f.png"


def _fixture_gold(trees):
    questions = load_multimodal_queries(FIX / "mm_queries.json")
    return questions, multimodal_gold(questions, FIX / "mm_reference_log.json", _Docs(trees))


class _Docs:
    def __init__(self, trees):
        self.trees = trees


def test_multimodal_gold_from_a_fixture_log():
    questions, gold = _fixture_gold({"mm_doc": fixture_tree()})
    q1, q2 = (q["qid"] for q in questions)
    assert gold.qrels[q1] == {"mm_doc#0002": 1}
    assert any("Nowhere" in n for n in gold.notes[q1])  # a source naming no heading is reported, not guessed
    assert gold.images[q1] == {"mm_doc/figures/eq1.png": 1}
    # the reference's label names Figure 1, whose file is pipeline.png: the by-caption view follows the label
    assert gold.images_by_caption[q1] == ["mm_doc/figures/pipeline.png"]
    assert gold.qrels[q2] == {"mm_doc#0003": 1, "mm_doc#0004": 1} and q2 not in gold.images


def test_a_file_that_is_not_the_query_set_is_refused(tmp_path):
    bad = tmp_path / "q.json"
    bad.write_text(json.dumps({"questions": []}), encoding="utf-8")
    with pytest.raises(QuestionSetError):
        load_multimodal_queries(bad)


def test_the_harness_scores_images_on_the_fixture(tmp_path):
    from ppkit.core.config import Config
    from ppkit.indexing.embed import HashEmbedder
    from ppkit.pipeline import build_index

    index = build_index([FIXTURE_MD], tmp_path / "idx", embedder=HashEmbedder(),
                        config=Config(online=False, embedder="hash"), progress=False)
    questions, gold = _fixture_gold(index.trees)
    res = run_retrieval_bench(index, questions, gold, benchmark="multimodal", plan=BenchPlan((3, 5), ("auto",)))
    assert (res.benchmark, res.n, sorted(res.results)) == ("multimodal", 2, ["3", "5"])
    r5 = res.results["5"]  # k=5 over a 4-section document: every section is sent
    assert (r5.hit, r5.recall, r5.n_image_hit) == (1.0, 1.0, 1)
    q1 = res.per_question[0]["results"]["5"]
    assert q1["images"][0] == "mm_doc/figures/pipeline.png"
    assert (q1["image_hit"], q1["image_hit_by_caption"]) == (0.0, 1.0)  # eq1.png by path, Figure 1 by caption
    assert q1["image_reachable"] == 1.0  # eq1.png was among the sections' images, just not chosen
    assert {"image_hit", "image_precision", "image_reachable", "image_hit_by_caption", "image_precision_by_caption",
            "n_image_hit", "n_image_precision", "images_shown_mean"} <= set(r5.to_dict())


def test_image_metrics_for_one_question():
    t = fixture_tree()
    secs = [section(t, "0002", 1), section(t, "0003", 2)]
    m = image_metrics("What are the three stages of the toy pipeline?", secs,
                      ["mm_doc/figures/pipeline.png", "mm_doc/img/photo.png"])
    assert m["images"] == ["mm_doc/figures/pipeline.png", "mm_doc/tables/accuracy.png"]
    assert (m["image_hit"], m["image_precision"], m["image_reachable"]) == (1.0, 0.5, 1.0)
    none = image_metrics("What is the weather in Paris?", secs, ["mm_doc/img/photo.png"])
    assert (none["images"], none["image_hit"], none["image_precision"], none["image_reachable"]) == ([], 0.0, None, 0.0)


@pytest.mark.corpus
def test_reference_gold_maps_every_source():
    from bench_support import bench_dir

    from ppkit.core.data import paper_paths
    from ppkit.documents.tree import build_tree

    trees = {p.stem: build_tree(p) for p in paper_paths()}
    questions = load_multimodal_queries(bench_dir() / "multimodal_queries.json")
    gold = multimodal_gold(questions, bench_dir() / "multimodal_reference_log.json", _Docs(trees))
    assert len(gold.qrels) == 20 and not any("matches no heading" in n for ns in gold.notes.values() for n in ns)
    q1, q9, q13 = questions[0]["qid"], questions[8]["qid"], questions[12]["qid"]
    # "Galore > Epochs" names two headings (the extraction made a table column a heading twice)
    assert set(gold.qrels[q1]) == {"Galore#0036", "Galore#0037", "Galore#0038", "Galore#0014", "Galore#0013"}
    assert gold.images[q1] == {"Galore/tables/fileoutpart157.png": 1}
    assert q9 not in gold.images  # question 9: the reference showed no image
    assert sum(len(v) for v in gold.images.values()) == 38
    assert gold.images_by_caption[q13] == ["VectorFusion/figures/fileoutpart33.png"]  # label Figure 5, path eq. (7)
