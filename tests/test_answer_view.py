"""ppkit.ui.answer_view: an answer shown as formatted text with its images, in a figure and in a widget."""

from __future__ import annotations

import pytest
from mm_helpers import fixture_tree, section

from ppkit.answer.synth import Answer, image_record
from ppkit.ui.answer_view import answer_html, image_grid, images_markdown, shown_images
from ppkit.ui.cited_answer import answer_widget
from ppkit.core.style import BLOCK, NO_MATH

pytest.importorskip("ipywidgets")


def _answer(label: str | None = None) -> Answer:
    t = fixture_tree()
    secs = [section(t, "0002", 1), section(t, "0003", 2)]
    images = [image_record(secs[0], secs[0].images[0]), image_record(secs[1], secs[1].images[0])]
    if label is not None:
        images[0] = {**images[0], "label": label}
    text = ("Two stages, see [the paper](https://example.org/p).\nFrom X (D, lines 1-2):\n"
            "  - line 1: first <b>quoted</b>\n  - line 2: second\n")
    return Answer("q", text, secs, "extractive", images, None)


def test_answer_html_renders_bullets_links_and_escapes_html():
    out = answer_html(_answer())
    assert out.startswith(f"<div class='ppkit-block {NO_MATH}' style='{BLOCK}'>")
    assert "<li>line 1: first &lt;b&gt;quoted&lt;/b&gt;</li>" in out  # raw HTML in an answer is text
    assert "<li>line 2: second</li>" in out
    assert "<a target='_blank' rel='noopener' href=\"https://example.org/p\">the paper</a>" in out
    assert "<strong>Retrieved sections</strong>" in out and "- line" not in out


def test_labels_show_formula_glyphs_readable_wherever_shown():
    # U+E000/U+E001: the math-extension font's big parentheses; U+E0FF: no glyph known, dropped
    a = _answer(label="Equation (7): L\ue000SDS\ue001  = E\ue0ff")
    assert "| 1 | Equation (7): L(SDS) = E |" in images_markdown(a)
    fig = image_grid(a)
    assert fig.axes[0].get_title() == "mm_doc: Equation (7): L(SDS) = E"
    ui = answer_widget(_FakeIndex(a), question="q")
    assert "<b>Equation (7): L(SDS) = E</b>" in ui.images.children[0].value


def test_images_the_question_names_come_first_in_the_order_it_names_them():
    a = _answer()
    files = [im["path"] for im in a.images]
    assert files == ["figures/pipeline.png", "tables/accuracy.png"]  # the answer's own order
    assert [im["path"] for im in shown_images(a)] == files  # "q" names no figure

    def asked(question):
        return Answer(question, a.text, a.sections, "extractive", a.images, None)

    table_first = asked("What does Table 1 report, and how is Fig. 1 drawn?")
    assert [im["path"] for im in shown_images(table_first)] == files[::-1]
    assert [im["path"] for im in shown_images(asked("Figure 1 beside TABLE I"))] == files
    assert [im["path"] for im in shown_images(asked("What does Table 1 report?"))] == files[::-1]
    assert table_first.images == a.images  # the answer is not changed
    # every view shows that order
    assert images_markdown(table_first).split("\n")[2].startswith("| 1 | TABLE I:")
    assert image_grid(table_first).axes[0].get_title().startswith("mm_doc: TABLE I:")
    ui = answer_widget(_FakeIndex(table_first), question="What does Table 1 report, and how is Fig. 1 drawn?")
    assert "<b>TABLE I:" in ui.images.children[0].value


def test_image_grid_returns_a_closed_figure():
    import matplotlib.pyplot as plt

    fig = image_grid(_answer())
    assert fig is not None and fig.number not in plt.get_fignums()  # shown once, by the caller
    assert len(fig.axes) == 2


class _FakeIndex:
    """What the widget uses of an index: its documents and ``ask``."""

    docs = ["mm_doc"]
    embedder = type("E", (), {"name": "fake"})()

    def __init__(self, answer=None, fail=False):
        self.answer, self.fail, self.asked = answer or _answer(), fail, []

    def record(self, doc):
        return type("R", (), {"metadata": {}})()

    def ask(self, question, k, **options):
        self.asked.append((question, k))
        if self.fail:
            raise RuntimeError("index is gone")
        return self.answer


def test_answer_widget_asks_on_enter_and_on_k():
    idx = _FakeIndex()
    ui = answer_widget(idx, k=2)
    assert idx.asked == [] and ui.answer is None and ui.images.children == ()
    assert ui.question.continuous_update is False  # the value changes on Enter, not per keystroke
    ui.question.value = "What are the stages?"  # what Enter in the browser sets
    assert idx.asked == [("What are the stages?", 2)]
    assert "<li>line 1:" in ui.evidence_box.value and "asked: What are the stages?" in ui.status.value
    ui.k.value = 4
    assert idx.asked[-1] == ("What are the stages?", 4)
    ui.ask_button.click()
    assert idx.asked[-1] == ("What are the stages?", 4) and len(idx.asked) == 3


def test_answer_widget_shows_an_error():
    ui = answer_widget(_FakeIndex(fail=True), question="q")
    assert "Asking failed." in ui.status.value and "RuntimeError: index is gone" in ui.status.value
    assert ui.images.children == () and ui.answer is None and "index is gone" in ui.summary_html()


def test_image_links_and_the_empty_quotes_they_leave_are_dropped():
    a = _answer()
    a = Answer("q", a.text + "  - line 227: ![fig](figures/x.png)\n  - line 228: see ![f](y.png) here\n", a.sections,
               "extractive", a.images, None)
    out = answer_html(a)
    assert "line 227" not in out and "<img" not in out and "<li>line 228: see  here</li>" in out

