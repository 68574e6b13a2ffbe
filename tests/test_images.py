"""Images in the tree, their report, offline selection, the marker protocol and display.

Quick tests use the hand-written fixture ``tests/fixtures/mm_doc`` (a figure, a
formula, a table, a photo in an unknown folder, and four links that must not be
loaded: ``../../secret.png``, ``/etc/passwd``, a URL, a missing file). Tests marked
``corpus`` read the five reference papers.
"""

from __future__ import annotations

import shutil
import sys

import pytest
from mm_helpers import FIXTURE_DIR, FIXTURE_MD, fixture_tree, section

from ppkit.answer.images import score_images, select_images
from ppkit.answer.markers import (
    image_catalogue,
    marker_instructions,
    parse_markers,
    visual_filter,
)
from ppkit.answer.compose import answer_stream
from ppkit.answer.events import collect
from ppkit.answer.synth import Answer, ExtractiveSynthesizer, image_record
from ppkit.documents.images import image_report, label_image, read_image_bytes
from ppkit.documents.tree import Image
from ppkit.retrieval.types import Retrieval, Section, Trace
from ppkit.ui.answer_view import image_grid, images_markdown, show_answer

PNG = b"\x89PNG\r\n\x1a\n"

# -- an audit hook records every file opened while a test asks for it ---------------------
_OPENED: list | None = None


def _audit(event, args):
    if _OPENED is not None and event == "open" and isinstance(args[0], (str, bytes)):
        _OPENED.append(args[0] if isinstance(args[0], str) else args[0].decode(errors="replace"))


sys.addaudithook(_audit)


# -- labels and kinds ------------------------------------------------------------------------
def test_fixture_images_kinds_labels_and_problems_exact():
    tree = fixture_tree()
    got = [(n.node_id, im.path, im.line, im.kind, im.label, im.problem) for n in tree for im in n.images]
    assert got == [
        ("0002", "figures/pipeline.png", 9, "figure",
         "Figure 1: The three-stage toy pipeline: encode the prompt, decode strokes, render the SVG.", None),
        ("0002", "figures/eq1.png", 17, "formula", "Equation (1): L = stroke + style", None),
        ("0003", "tables/accuracy.png", 27, "table", "TABLE I: Accuracy of the toy painter on three datasets.", None),
        ("0003", "../../secret.png", 31, "figure", "Accuracy is in Table I; the pipeline of Fig. 1 explains it.",
         "the link climbs out of the document's folder, not loaded"),
        ("0003", "/etc/passwd", 33, "figure", "", "an absolute path, not loaded"),
        ("0003", "https://example.com/remote.png", 35, "figure", "", "a URL, not loaded"),
        ("0003", "figures/missing.png", 37, "figure", "missing render", "the file does not exist"),
        ("0004", "img/photo.png", 43, "figure", "a photo of the painter at work", None),
    ]
    assert tree["0002"].images[0].resolved == str((FIXTURE_DIR / "figures" / "pipeline.png").resolve())


@pytest.mark.parametrize("lines,target,want", [
    # a caption after a figure, across a stray heading made from figure text
    (["![](figures/a.png)", "### Original", "Reconstructed", "Fig. 4: Pipeline of stroke extraction."],
     "figures/a.png", ("figure", "Fig. 4: Pipeline of stroke extraction.")),
    # a numbered heading ends the search: the caption below belongs to another section
    (["![](figures/a.png)", "## 2. Results", "Fig. 4: Not mine."], "figures/a.png", ("figure", "")),
    # a table caption comes before the table; the figure caption before it is skipped
    (["Fig. 6: A figure.", "TABLE II: Scores.", "![](tables/t.png)"], "tables/t.png", ("table", "TABLE II: Scores.")),
    # a caption right above the next table image is that table's, not this one's
    (["![](tables/t1.png)", "1 2 3", "Table 2: Theirs.", "![](tables/t2.png)"], "tables/t1.png", ("table", "1 2 3")),
    # two captions in one extracted line: a figure takes the figure's, a table the table's
    (["![](figures/f.png)", "0.1 0.2 HM Figure 5: Ensemble. Table 5: Cost."], "figures/f.png",
     ("figure", "Figure 5: Ensemble.")),
    (["0.1 0.2 HM Figure 5: Ensemble. Table 5: Cost.", "![](tables/t.png)"], "tables/t.png", ("table", "Table 5: Cost.")),
    # equations: number at the end of the next line, or on its own line
    (["![](figures/e.png)", "Nt = Mt/Vt", "(15)"], "figures/e.png", ("formula", "Equation (15): Nt = Mt/Vt")),
    (["![](figures/e.png)", "x = y + z (S2)"], "figures/e.png", ("formula", "Equation (S2): x = y + z")),
    (["![](figures/e.png)", "t", "t−1", "∥ G"], "figures/e.png", ("formula", "Formula: t t−1 ∥ G")),
    # an unknown folder takes its kind from the caption
    (["![](pics/p.png)", "Table 3: Results."], "pics/p.png", ("table", "Table 3: Results.")),
])
def test_label_image_rules(lines, target, want):
    assert label_image(lines, 1 if lines[0].startswith("![") else len(lines), target) == want


def test_image_report_lists_each_problem_clearly():
    report = image_report(fixture_tree())
    assert (report.total, report.loadable) == (8, 4)
    assert report.by_kind == {"figure": 6, "formula": 1, "table": 1}
    assert [(p.node_id, p.line, p.path, p.category) for p in report.problems] == [
        ("0003", 31, "../../secret.png", "traversal"), ("0003", 33, "/etc/passwd", "absolute"),
        ("0003", 35, "https://example.com/remote.png", "url"), ("0003", 37, "figures/missing.png", "missing")]
    text = str(report).split("\n")
    assert text[0] == "8 image links (6 figures, 1 formula, 1 table): 4 loadable, 4 not loaded"
    assert text[1] == ("  - mm_doc#0003 line 31: '../../secret.png' - traversal: the link climbs out of the "
                       "document's folder, not loaded (links may not leave the document's folder; move the file "
                       "inside it)")
    assert "missing: the file does not exist (the file is not there; restore it or remove the link)" in text[4]
    assert report.to_dict()["problems"][1]["category"] == "absolute"


def test_image_report_accepts_several_trees():
    t = fixture_tree()
    assert image_report([t, t]).total == 16
    assert image_report({"a": t}).loadable == 4


def test_nothing_outside_the_document_folder_is_read(tmp_path):
    global _OPENED
    root = tmp_path / "root"
    doc_dir = root / "x" / "y"
    shutil.copytree(FIXTURE_DIR, doc_dir)
    secret = root / "secret.png"  # where ../../secret.png points
    secret.write_bytes(PNG + b"secret")
    (doc_dir / "figures" / "link.png").symlink_to(secret)  # a link inside that leads outside
    md = doc_dir / "mm_doc.md"
    md.write_text(md.read_text(encoding="utf-8") + "\n![](figures/link.png)\n\nFig. 9: The secret.\n", encoding="utf-8")
    import IPython.display  # noqa: F401  (imported before recording: module files are not the point)

    _OPENED = []
    try:
        tree = fixture_tree(md)
        report = image_report(tree)
        secs = [section(tree, n, i) for i, n in enumerate(["0002", "0003", "0004"], start=1)]
        chosen = select_images("secret pipeline accuracy painter", secs)
        parsed = parse_markers("[SHOW: ../../secret.png | s]\n[SHOW: mm_doc/figures/link.png | l]", secs)
        forged = [{"path": "../../secret.png", "resolved": str(secret), "doc": "mm_doc", "node_id": "0003"},
                  {"path": "figures/pipeline.png", "resolved": str(secret), "doc": "mm_doc", "node_id": "0002"},
                  {"path": "figures/link.png", "resolved": str(doc_dir / "figures" / "link.png"), "doc": "mm_doc",
                   "node_id": "0004"}]
        for rec in forged:
            with pytest.raises(ValueError):
                read_image_bytes(rec)
        kept, notes = visual_filter("q", forged, ask=lambda *a: "YES")
    finally:
        opened, _OPENED = _OPENED, None
    link = tree["0004"].images[-1]
    assert (link.path, link.resolved, link.problem) == (
        "figures/link.png", None, "the link climbs out of the document's folder, not loaded")
    assert [p.category for p in report.problems] == ["traversal", "absolute", "url", "missing", "traversal"]
    assert all(c.image.problem is None for c in chosen)
    assert parsed.images == [] and len(parsed.notes) == 2
    assert kept == [] and len(notes) == 3
    outside = [p for p in opened if not str(p).startswith(str(doc_dir)) and str(p).startswith(str(tmp_path))]
    assert outside == []
    assert not any(p in ("/etc/passwd", str(secret)) for p in opened)
    assert any(p.endswith("mm_doc.md") for p in opened)  # the recorder works


# -- offline selection -----------------------------------------------------------------------
def _sections():
    t = fixture_tree()
    return [section(t, "0002", 1), section(t, "0003", 2), section(t, "0004", 3)]


def test_score_textbook_example(tmp_path):
    # docs for idf: the 4 lines ("## S", the link, the caption, "blue words here") and the image's
    # record (its caption) -> n = 5; "red" is in 2 of them, "blue" in 1:
    # idf(red) = ln(1 + 5/3), idf(blue) = ln(1 + 5/2)
    img = Image("figures/p.png", 2, resolved=str(tmp_path / "p.png"), kind="figure", label="Figure 1: red pipeline")
    s = Section("D", "0001", "D > S", 1, 4, "## S\n![](figures/p.png)\nFigure 1: red pipeline\nblue words here",
                1, 1.0, ((1, 4),), 60, False, (img,))
    assert score_images("red pipeline", [s])[0].score == 1.0  # both terms in the label
    # (idf(red) * 1 + idf(blue) * 0.5) / (idf(red) + idf(blue)): blue only in the context
    assert score_images("red blue", [s])[0].score == 0.7196
    assert score_images("red blue", [s])[0].matched == ("blue", "red")
    assert score_images("green", [s])[0].score == 0.0


def test_select_images_threshold_and_limits():
    secs = _sections()
    pick = lambda q, **kw: [c.image.path for c in select_images(q, secs, **kw)]  # noqa: E731
    assert pick("What are the three stages of the toy pipeline?") == ["figures/pipeline.png", "tables/accuracy.png"]
    assert pick("What are the three stages of the toy pipeline?", max_images=1) == ["figures/pipeline.png"]
    assert pick("What are the three stages of the toy pipeline?", threshold=0.7) == ["figures/pipeline.png"]
    assert pick("What are the three stages of the toy pipeline?", max_images=0) == []
    assert pick("How accurate is the toy painter on the datasets?") == ["tables/accuracy.png"]
    assert pick("Who funded the work?") == []  # one shared common word ("work") is not enough
    assert pick("What is the weather in Paris?") == []  # an answer may show no image
    # the missing file matches its alt text, but can never be shown
    missing = [c for c in score_images("missing render", secs) if c.image.path == "figures/missing.png"][0]
    assert missing.reason == "not shown: the file does not exist" and "figures/missing.png" not in pick("missing render")


def test_select_images_formula_needs_a_math_question_and_anchor_wins():
    secs = _sections()
    eq = lambda q: [c for c in score_images(q, secs) if c.image.path == "figures/eq1.png"][0]  # noqa: E731
    plain, math = eq("What is the stroke loss?"), eq("What is the stroke loss formulation?")
    where = "in section mm_doc > Toy Vector Painter > 1. Method"
    assert plain.reason == f"caption match 0.70 (loss, stroke), formula (math not asked); {where}"
    assert math.reason == f"caption match 0.40 (loss, stroke); {where}"  # "formulation" is in neither
    assert (plain.score, math.score) == (0.3476, 0.3955)  # the formula counts half when math is not asked
    assert [c.image.path for c in select_images("Show Table I", secs)] == ["tables/accuracy.png"]
    assert [c.reason for c in select_images("Show Table I", secs)] == [
        "Table 1 named in the question; in section mm_doc > Toy Vector Painter > 2. Results"]
    assert [c.image.path for c in select_images("Eq. (1)?", secs)] == ["figures/eq1.png"]


def _choice(path: str, figure: str, score: float, *, rank: int = 1, reason: str = "caption match"):
    """A hand-made scored image: ``figure`` is its caption number, ``score`` its match after the priors."""
    from ppkit.answer.images import ImageChoice

    img = Image(path, 3, resolved="/x/" + path, kind=figure.split()[0], label=f"{figure.capitalize()}: x",
                figure=figure, width=100, height=100)
    sec = Section("D", f"000{rank}", f"D > S{rank}", 1, 9, "text", rank, 1.0, ((1, 9),), 4, False, (img,))
    return ImageChoice(sec, img, score, ("pipelin", "stage"), reason, ("in section",), score)


def test_select_images_stop_at_a_strong_match_shows_it_alone_but_keeps_anchors():
    q = "What are the stages of the pipeline in Table 2?"
    pool = [_choice("f1.png", "figure 1", 0.7), _choice("f2.png", "figure 2", 0.5, rank=2),
            _choice("f3.png", "figure 3", 0.3, rank=3),
            _choice("t2.png", "table 2", 1.0, reason="Table 2 named in the question")]
    pick = lambda **kw: [c.image.path for c in select_images(q, [], scored=pool, **kw)]  # noqa: E731
    assert pick(max_images=4) == ["t2.png", "f1.png", "f2.png", "f3.png"]  # off: 0.3 >= 0.4 x 0.7 passes the ratio
    assert pick(stop_at=0.6, max_images=4) == ["t2.png", "f1.png"]  # 0.7 >= 0.6: the runners-up go, the anchor stays
    assert pick(stop_at=0.75) == ["t2.png", "f1.png", "f2.png"]  # no match is strong enough: unchanged
    # the anchor does not count as the strong match (it scores 1 by being named, not by matching)
    no_match = [pool[3], _choice("f2.png", "figure 2", 0.5), _choice("f3.png", "figure 3", 0.45)]
    assert [c.image.path for c in select_images(q, [], scored=no_match, stop_at=0.6)] == ["t2.png", "f2.png",
                                                                                          "f3.png"]


def test_images_only_from_the_sections_and_text_sent():
    t = fixture_tree()
    trimmed = section(t, "0002", 1, sent=((5, 8),))  # the figure line (9) was not sent
    assert trimmed.images == ()
    assert select_images("three stages of the toy pipeline", [trimmed]) == []
    only_results = [section(t, "0003", 1)]
    assert [c.image.path for c in select_images("three stages of the toy pipeline accuracy", only_results)] == \
        ["tables/accuracy.png"]


def test_extractive_synthesizer_and_ask_carry_the_images():
    secs = _sections()[:2]
    q = "What are the three stages of the toy pipeline?"
    text, info = ExtractiveSynthesizer().synthesize(q, secs)
    assert [im["path"] for im in info["images"]] == ["figures/pipeline.png", "tables/accuracy.png"]
    assert (info["image_threshold"], info["image_ratio"]) == (0.05, 0.4)  # the fitted defaults
    assert info["image_scores"][0]["path"] == "figures/pipeline.png"
    r = Retrieval(q, secs, [], Trace.blank())
    answer = collect(answer_stream(q, r, ExtractiveSynthesizer(max_images=1)))[1]
    reason = "caption match 1.00 (pipelin, stage, three, toy); in section mm_doc > Toy Vector Painter > 1. Method"
    assert answer.images == [image_record(secs[0], secs[0].images[0], reason=reason)]
    assert (answer.images[0]["width"], answer.images[0]["height"]) == (2, 2)  # from the PNG's header
    assert "images" not in answer.trace.synthesis
    assert "Images:\n  figures/pipeline.png  (Figure 1: The three-stage toy pipeline" in str(answer)


# -- the marker protocol -------------------------------------------------------------------------
MARKED = ("Answer.\n[SHOW: mm_doc/figures/pipeline.png | the pipeline]\n[SHOW: tables/accuracy.png | Table I]\n"
          "[SHOW: mm_doc/img/photo.png | photo]\n[SHOW: mm_doc/figures/missing.png | x]\n[SHOW: ../../secret.png | s]\n"
          "[SHOW: mm_doc/figures/pipeline.png | again]\n[SHOW:  | empty]\nDone.")


def test_parse_markers_valid_invalid_and_outside_sections():
    secs = _sections()[:2]  # 0004 (the photo) is not selected
    r = parse_markers(MARKED, secs)
    assert r.text == "Answer.\n\nDone."
    assert [(im["doc"], im["path"], im["node_id"]) for im in r.images] == [
        ("mm_doc", "figures/pipeline.png", "0002"), ("mm_doc", "tables/accuracy.png", "0003")]
    # the label comes from the tree, not from the model
    assert r.images[1]["label"] == "TABLE I: Accuracy of the toy painter on three datasets."
    assert r.notes == [
        "dropped '[SHOW: mm_doc/img/photo.png | photo]': not an image of the selected sections",
        "dropped '[SHOW: mm_doc/figures/missing.png | x]': the file does not exist",
        "dropped '[SHOW: ../../secret.png | s]': the link climbs out of the document's folder, not loaded",
        "dropped '[SHOW:  | empty]': no file named",
    ]
    capped = parse_markers(MARKED, secs, max_images=1)
    assert len(capped.images) == 1
    assert capped.notes[0] == "dropped '[SHOW: tables/accuracy.png | Table I]': more than 1 images asked for"
    assert parse_markers("No images here.", secs) == parse_markers("No images here.", secs)
    assert parse_markers("No images here.", secs).images == []


def test_parse_markers_ambiguous_bare_path_across_documents():
    t = fixture_tree()
    a = section(t, "0002", 1)
    from dataclasses import replace

    b = replace(section(t, "0002", 2), doc="other")
    r = parse_markers("[SHOW: figures/pipeline.png]", [a, b])
    assert r.images == [] and "is in several documents" in r.notes[0]
    assert [im["doc"] for im in parse_markers("[SHOW: other/figures/pipeline.png]", [a, b]).images] == ["other"]


def test_marker_instructions_list_only_showable_images():
    secs = _sections()[:2]
    text = marker_instructions(secs, max_images=2)
    assert "show at most 2, each by writing on its own line" in text
    assert "    [SHOW: <file> | <label>]" in text
    assert ("  - mm_doc/tables/accuracy.png | table: TABLE I: Accuracy of the toy painter on three datasets."
            in text.split("\n"))
    assert "missing" not in text and "secret" not in text
    assert [c["file"] for c in image_catalogue(secs)] == [
        "mm_doc/figures/pipeline.png", "mm_doc/figures/eq1.png", "mm_doc/tables/accuracy.png"]
    t = fixture_tree()
    assert marker_instructions([section(t, "0001")]).startswith("The retrieved sections contain no images")


def test_visual_filter_with_a_stand_in_model():
    secs = _sections()
    recs = [image_record(secs[0], secs[0].images[0]), image_record(secs[1], secs[1].images[0]),
            image_record(secs[2], secs[2].images[0])]
    seen = []

    def ask_model(prompt, data, mime):
        seen.append((data[:8], mime))
        return {0: "YES - the pipeline", 1: "No, unrelated.", 2: "maybe"}[len(seen) - 1]

    kept, notes = visual_filter("What are the stages?", recs, ask=ask_model)
    assert [r["path"] for r in kept] == ["figures/pipeline.png", "img/photo.png"]
    assert seen == [(PNG, "image/png")] * 3
    assert notes == ["dropped 'tables/accuracy.png': the model saw it and said it does not help (No, unrelated.)",
                     "kept 'img/photo.png': unclear visual check reply 'maybe'"]


def test_read_image_bytes_confined():
    s = _sections()[0]
    data, mime = read_image_bytes(image_record(s, s.images[0]))
    assert data == (FIXTURE_DIR / "figures" / "pipeline.png").read_bytes() and mime == "image/png"
    with pytest.raises(ValueError, match="no confined file"):
        read_image_bytes({"path": "https://example.com/x.png", "resolved": "/tmp/x.png"})
    with pytest.raises(ValueError, match="not that path inside a document folder"):
        read_image_bytes({"path": "figures/pipeline.png", "resolved": str(FIXTURE_MD)})
    with pytest.raises(ValueError, match="not a displayable image"):
        read_image_bytes({"path": "mm_doc.md", "resolved": str(FIXTURE_MD)})


# -- showing an answer -------------------------------------------------------------------------
def _answer():
    secs = _sections()[:2]
    images = [image_record(secs[0], secs[0].images[0], reason="caption match 1.00 (pipelin); in section 1"),
              image_record(secs[1], secs[1].images[0])]
    return Answer("q", "text", secs, "extractive", images, None)


def test_images_markdown_static_summary():
    md = images_markdown(_answer()).split("\n")
    assert md[0] == "| # | label | kind | from section | why chosen | file |"
    assert md[2].endswith("| caption match 1.00 (pipelin); in section 1 | `figures/pipeline.png` |")
    assert md[3] == ("| 2 | TABLE I: Accuracy of the toy painter on three datasets. | table | "
                     "mm_doc > Toy Vector Painter > 2. Results (`mm_doc#0003`) |  | `tables/accuracy.png` |")
    assert images_markdown(Answer("q", "t", [], "extractive")) == "_No image chosen for this answer._"


def test_show_answer_displays_each_image_with_label_and_section(monkeypatch):
    import IPython.display as d

    shown = []
    monkeypatch.setattr(d, "display", lambda obj: shown.append(obj))
    show_answer(_answer())
    kinds = [type(o).__name__ for o in shown]
    assert kinds == ["Markdown", "Markdown", "Image", "Markdown", "Image"]
    from ppkit.core.style import NO_MATH

    wrapper = f'<div class="{NO_MATH}">\n\n'  # dollars never typeset as math (ppkit.ui.dollars)
    assert shown[1].data.startswith(wrapper) and shown[1].data.endswith("\n\n</div>")
    label = shown[1].data.removeprefix(wrapper).removesuffix("\n\n</div>")
    assert label.startswith("**Figure 1: The three-stage toy pipeline")
    assert "from *mm_doc > Toy Vector Painter > 1. Method* (`mm_doc#0002`, `figures/pipeline.png`)" in label
    assert shown[2].data == (FIXTURE_DIR / "figures" / "pipeline.png").read_bytes()
    assert label.endswith("`figures/pipeline.png`)  \nwhy: caption match 1.00 (pipelin); in section 1")
    assert shown[2].width == 2  # the 2x2 fixture is shown at its own size, not upscaled to 520


def test_image_grid_returns_a_figure():
    import matplotlib

    matplotlib.use("Agg")
    fig = image_grid(_answer(), cols=2)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["mm_doc: Figure 1: The three-stage toy pipeline: encode the…",
                      "mm_doc: TABLE I: Accuracy of the toy painter on three…"]
    # readable: 1,000 pixels wide, each image 500, the row as tall as its square images plus a title
    assert tuple(fig.get_size_inches() * fig.dpi) == pytest.approx((1000, 535))
    single = image_grid(Answer("q", "t", _answer().sections, "extractive", _answer().images[:1]))
    assert single.get_size_inches()[0] * single.dpi == 1000 and len(single.axes) == 1
    assert image_grid(Answer("q", "t", [], "extractive")) is None


def test_cli_ask_images_lists_the_chosen_paths(tmp_path, capsys):
    from ppkit.cli import main
    from ppkit.core.config import Config
    from ppkit.indexing.embed import HashEmbedder
    from ppkit.pipeline import build_index

    build_index([FIXTURE_MD], tmp_path / "idx", embedder=HashEmbedder(), config=Config(online=False, embedder="hash"),
                progress=False)
    assert main(["ask", "What are the three stages of the toy pipeline?", "--index", str(tmp_path / "idx"),
                 "--k", "2", "--images"]) == 0
    out = capsys.readouterr().out
    assert "  figures/pipeline.png  (Figure 1: The three-stage" in out  # the answer lists it by label
    assert f"Image files:\n  {(FIXTURE_DIR / 'figures' / 'pipeline.png').resolve()}\n" in out  # --images: the file


# -- the reference papers ----------------------------------------------------------------------
@pytest.mark.corpus
def test_reference_papers_labels_and_the_missing_image():
    from ppkit.core.data import paper_paths
    from ppkit.documents.tree import build_tree

    trees = {p.stem: build_tree(p) for p in paper_paths()}
    report = image_report(trees)
    assert (report.total, report.loadable) == (271, 270)
    assert [(p.doc, p.path, p.category) for p in report.problems] == [
        ("VectorPainter", "figures/fileoutpart27.png", "missing")]
    labels = {(d, im.path): im for d, t in trees.items() for n in t for im in n.images}
    assert labels[("VectorFusion", "figures/fileoutpart29.png")].label.startswith(
        "Figure 3. VectorFusion generates SVGs in three stages.")
    assert labels[("NemoBot", "tables/fileoutpart5.png")].label.startswith("TABLE I: Nemobot games")
    assert labels[("Galore", "tables/fileoutpart157.png")].label == \
        "Table 7: Hyperparameters of fine-tuning RoBERTa base for GaLore."
    assert labels[("CLIP", "figures/fileoutpart7.png")].kind == "formula"
    assert labels[("VectorPainter", "figures/fileoutpart14.png")].label.startswith(
        "Fig. 4: Pipeline of Stroke Style Extraction.")


def test_answer_widget_shows_the_answer_and_its_images():
    pytest.importorskip("ipywidgets")
    from ppkit.ui import answer_widget

    class FakeIndex:  # stands in for an Index: its documents, and ask() returns the fixture answer
        docs, asked = ["mm_doc"], []
        embedder = type("E", (), {"name": "fake"})()

        def record(self, doc):
            return type("R", (), {"metadata": {}})()

        def ask(self, question, k, **options):
            self.asked.append((question, k))
            return _answer()

    idx = FakeIndex()
    ui = answer_widget(idx, question="What are the stages?", k=2)
    assert idx.asked == [("What are the stages?", 2)]
    kids = ui.images.children
    assert [type(c).__name__ for c in kids] == ["HTML", "Image", "HTML", "Image"]
    assert kids[1].value == (FIXTURE_DIR / "figures" / "pipeline.png").read_bytes()
    assert "from <i>mm_doc &gt; Toy Vector Painter &gt; 1. Method</i>" in kids[0].value
    assert answer_widget(idx).images.children == () and len(idx.asked) == 1  # no question: no ask


def test_visual_filter_sends_each_image_to_the_client():
    class ImageClient:  # what the filter needs: images=[(bytes, mime)]
        calls = []

        def generate(self, prompt, *, images=None, **kw):
            self.calls.append((prompt[:9], [m for _, m in images]))
            return type("R", (), {"text": "NO"})()

    client = ImageClient()
    kept, notes = visual_filter("Stages?", [image_record(_sections()[0], _sections()[0].images[0])], client=client)
    assert kept == [] and client.calls == [("Question:", ["image/png"])]
