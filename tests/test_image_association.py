"""Image-caption association over the whole document and the image channel of retrieval.

Fixture ``tests/fixtures/mm_far``: a table image whose caption sits 49 lines below it, in the
next section (the first-pass label is the table's own word "Method"); a figure of two image
files sharing one caption; Figure 1 placed in section 1 and discussed in section 3.
"""

from __future__ import annotations

from pathlib import Path

from mm_helpers import section

from ppkit import Config, HashEmbedder, build_index
from ppkit.answer.images import select_images
from ppkit.answer.synth import ExtractiveSynthesizer
from ppkit.documents.images import associate_images, image_size
from ppkit.documents.tree import Tree, build_tree
from ppkit.retrieval.image_channel import link_images

FAR = Path(__file__).parent / "fixtures" / "mm_far" / "mm_far.md"


def _images(tree):
    return [(n.node_id, im.path, im.kind, im.label, im.figure, im.discussed_in, (im.width, im.height))
            for n in tree for im in n.images]


def test_captions_by_number_and_proximity_groups_and_discussion_exact():
    assert _images(build_tree(FAR)) == [
        ("0002", "figures/overview.png", "figure", "Figure 1: Overview of the relay pipeline with a sorter and a mixer.",
         "figure 1", ("0004",), (40, 20)),
        # the caption is 49 lines below, in section 3: claimed because no other table image claims it
        ("0003", "tables/scores.png", "table", "TABLE 1: Sorting scores of the relay on four benchmarks.",
         "table 1", ("0005",), (50, 10)),
        ("0004", "figures/panel_a.png", "figure", "Figure 2: Mixer panels: (a) input, (b) output.", "figure 2",
         ("0005",), (12, 12)),
        ("0004", "figures/panel_b.png", "figure", "Figure 2: Mixer panels: (a) input, (b) output.", "figure 2",
         ("0005",), (30, 24)),
    ]
    im = build_tree(FAR)["0002"].images[0]
    assert im.discussion == "As shown in Figure 1, the sorter feeds the mixer."


def test_associate_images_leaves_a_claimed_caption_alone_and_round_trips():
    tree = build_tree(FAR)
    lines = FAR.read_text(encoding="utf-8").split("\n")
    again = associate_images(lines, list(tree.nodes.values()))
    assert {nid: imgs for nid, imgs in again.items()} == {nid: n.images for nid, n in tree.nodes.items()}
    assert _images(Tree.from_dict(tree.to_dict())) == _images(tree)  # the tree JSON keeps the new fields
    assert image_size(FAR) == (0, 0)  # not an image


def _index(tmp_path):
    return build_index([FAR], tmp_path / "idx", embedder=HashEmbedder(), config=Config(online=False, embedder="hash"),
                       progress=False)


def test_channel_offers_trimmed_discussed_and_named_images(tmp_path):
    index = _index(tmp_path)
    tree = index.trees["mm_far"]
    trimmed = section(tree, "0004", 1, sent=((58, 62),))  # section 3 sent without its figure lines
    assert trimmed.images == ()
    [linked] = link_images(index, "What does Table 1 report?", [trimmed])
    got = [(link.image.path, link.via) for link in linked.image_links]
    assert got == [("tables/scores.png", ("anchor", "recalled")),  # "report" is in its discussion too
                   ("figures/panel_a.png", ("in section",)),
                   ("figures/panel_b.png", ("in section",)),
                   ("figures/overview.png", ("discussed in section",))]
    chosen = select_images("What does Table 1 report?", [linked])
    assert [(c.image.path, c.reason) for c in chosen] == [
        ("tables/scores.png", "Table 1 named in the question; its caption and discussion match the question")]
    # without the channel only the text sent counts, and the figure lines were trimmed away
    assert select_images("What are the mixer panels input output?", [trimmed]) == []


def test_a_multi_image_figure_is_shown_once_by_its_largest_file(tmp_path):
    index = _index(tmp_path)
    [linked] = link_images(index, "mixer panels input output", [section(index.trees["mm_far"], "0004", 1)])
    text, info = ExtractiveSynthesizer().synthesize("mixer panels input output", [linked])
    assert [(im["path"], im["width"], im["height"]) for im in info["images"]] == [("figures/panel_b.png", 30, 24)]
    assert info["images"][0]["reason"] == ("caption match 1.00 (input, mixer, output, panel); in section "
                                           "mm_far > Far Captions > 3. Results; its caption and discussion match "
                                           "the question")


def test_with_priors_textbook_example():
    from dataclasses import replace as _r

    from ppkit.answer.images import ImageChoice, with_priors

    tree = build_tree(FAR)
    s1, s2 = section(tree, "0002", 1), section(tree, "0004", 2)
    a = ImageChoice(s1, tree["0002"].images[0], 0.5, ("x", "y"), "caption match", ("in section",), 0.5)
    b = ImageChoice(s2, tree["0004"].images[1], 0.6, ("x", "y"), "caption match", ("recalled",), 0.6)
    got = with_priors([b, a], rank_decay=0.7, recalled=0.5)
    assert [(c.image.path, c.score) for c in got] == [("figures/overview.png", 0.5), ("figures/panel_b.png", 0.21)]
    assert [c.score for c in with_priors([b, a], rank_decay=1.0, recalled=1.0)] == [0.6, 0.5]
    named = _r(b, reason="Figure 2 named in the question", score=1.0)
    assert with_priors([named], rank_decay=0.5, recalled=0.5)[0].score == 1.0  # an anchor keeps 1


def test_lopo_scores_each_question_with_a_fit_that_never_saw_its_paper():
    from ppkit.answer.images import score_images
    from ppkit.bench.fit import images as image_fit
    from ppkit.bench.fit.images import Scored, lopo

    tree = build_tree(FAR)
    secs = (section(tree, "0002", 1), section(tree, "0004", 2))
    q = "relay pipeline sorter mixer panels"
    scored = tuple(score_images(q, list(secs), rank_decay=1.0, recalled=1.0))
    rows = [Scored("a", q, ("P1",), ("mm_far/figures/overview.png",), scored, secs),
            Scored("b", q, ("P2",), ("mm_far/figures/overview.png",), scored, secs),
            Scored("c", q, ("P3", "P1"), ("mm_far/figures/panel_b.png",), scored, secs)]
    res = lopo(rows)
    # fold P1 trains on b only (c touches P1); fold P2 on a and c; fold P3 on a and b
    assert {p: (f["n_train"], f["n_test"]) for p, f in res["folds"].items()} == {"P1": (1, 1), "P2": (2, 1),
                                                                                 "P3": (2, 1)}
    assert sorted(res["per_question"]) == ["a", "b", "c"]
    assert image_fit.evaluate(rows[:1], res["folds"]["P1"]["params"])["per_question"][0]["hit"] == 1.0


def test_explain_names_the_cause_of_each_miss():
    from ppkit.answer.images import score_images
    from ppkit.bench.fit.images import Scored, explain

    tree = build_tree(FAR)
    secs = (section(tree, "0002", 1), section(tree, "0004", 2))
    q = "relay pipeline sorter mixer panels"
    scored = tuple(score_images(q, list(secs), rank_decay=1.0, recalled=1.0))  # overview, panel_a, panel_b
    row = lambda *gold: Scored("q", q, ("mm_far",), gold, scored, secs)  # noqa: E731
    a, b, o = "mm_far/figures/panel_a.png", "mm_far/figures/panel_b.png", "mm_far/figures/overview.png"
    got = explain(row(b), [o, a])
    assert got["cause"] == "same figure, another file"  # panel_a shares Figure 2 with the reference's panel_b
    assert [x["is"] for x in got["shown"]] == ["other", "same figure as a reference"]
    assert got["reference"] == [{"image": b, "is": "candidate 3",
                                 "label": "Figure 2: Mixer panels: (a) input, (b) output."}]
    assert explain(row(b), [o])["cause"] == "ranked below"
    assert explain(row(b), [o, b])["cause"] == "hit"
    assert explain(row(b), [o, b])["reference"][0]["is"] == "shown"
    missing = explain(row("mm_far/tables/absent.png"), [o])
    assert (missing["cause"], missing["reference"][0]["is"]) == ("not a candidate", "not a candidate")
    assert explain(row(), [o])["cause"] == "no reference image"
