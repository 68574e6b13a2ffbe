"""The conductor's answer stream (ppkit.pipeline.stream): event order, deltas that join to the answer,
``ask`` as the stream collected, errors as the last event, typed options; the Gemini synthesizer streaming
through the real google-genai client against the tests' local server."""

from __future__ import annotations

import contextvars
from pathlib import Path

import pytest
from gemini_server import text_reply

import ppkit
from ppkit import AskOptions, Config, HashEmbedder, build_index
from ppkit.answer.block import KINDS
from ppkit.answer.synth_gemini import parse_sources
from ppkit.answer.events import EVENT_TYPES, Delta, Done, ErrorEvent, collect
from ppkit.answer.synth_gemini import GeminiSynthesizer
from ppkit.core.errors import ConfigError, InvalidInput
from ppkit.llm.client import GeminiClient
from ppkit.retrieval.analyze import Analysis

PAPER = Path(__file__).parent / "fixtures" / "gemini_paper.md"
Q = "What is Acme's quick ratio for FY2022?"


@pytest.fixture
def client(gemini):
    return GeminiClient(attempts=2, initial_delay=0.01, max_delay=0.02)


def _types(events) -> list[str]:
    """Event types in order, runs of deltas and citations collapsed to one."""
    out: list[str] = []
    for e in events:
        if not out or out[-1] != e.type or e.type not in ("delta", "citation"):
            out.append(e.type)
    return out


def test_offline_stream_order_and_deltas_join_to_the_answer(hash_index):
    events, answer = collect(hash_index.stream(Q, k=3))
    assert _types(events) == ["analysis", "sections", "answer", "delta", "citation", "verification", "done"]
    block = next(e for e in events if e.type == "answer")
    assert block.data() == answer.block.to_dict() and block.kind in KINDS  # the block, before the evidence
    assert all(e.type in EVENT_TYPES for e in events)
    assert "".join(e.text for e in events if isinstance(e, Delta)) == answer.text
    assert sum(isinstance(e, Delta) for e in events) == answer.text.count("\n") + 1  # one delta a line
    done = events[-1]
    assert isinstance(done, Done) and done.answer is answer and "synthesize" in done.data()["seconds"]
    analysis = events[0].data()
    assert analysis["metric"] == "quick ratio" and analysis["years"] == [2022] and analysis["filters"]["docs"] == ["acme"]
    assert [s["node_id"] for s in events[1].data()["sections"]] == [s.node_id for s in answer.sections[:3]]
    cited = [(e.doc, e.node_id) for e in events if e.type == "citation"]
    # by default the extractive answer cites the sections its evidence quotes (and the metric's inputs)
    assert cited and set(cited) <= {(s.doc, s.node_id) for s in answer.sections}
    full = hash_index.ask(Q, k=3, evidence="all")  # the full pack cites every section
    assert parse_sources(full.text, full.sections) and len(parse_sources(full.text, full.sections)) == len(full.sections)
    assert events[-2].data()["report"] == answer.verification


def test_ask_is_the_stream_collected(hash_index):
    streamed = collect(hash_index.stream(Q, k=3))[1]
    asked = hash_index.ask(Q, k=3)
    assert asked.to_dict()["text"] == streamed.text
    assert [s.section_id for s in asked.sections] == [s.section_id for s in streamed.sections]
    assert asked.trace.synthesis == streamed.trace.synthesis


def test_an_error_is_the_last_event_and_ask_raises_it(hash_index):
    events, answer = collect(hash_index.stream("   "))
    assert answer is None and len(events) == 1 and isinstance(events[0], ErrorEvent)
    assert events[0].data() == {"error": "InvalidInput", "message": "the question is empty"}
    with pytest.raises(InvalidInput, match="the question is empty"):
        hash_index.ask("   ")


def test_options_are_typed_and_unknown_ones_are_named():
    opts = AskOptions.of(k=3, docs=["Acme"], verify=False, retrieval="bm25", history=None)
    assert (opts.retrieve.k, opts.retrieve.docs, opts.retrieve.retrieval, opts.verify) == (3, ["Acme"], "bm25", False)
    with pytest.raises(ConfigError, match="unknown ask option.*'kk'.*history.*the retrieve options: k, docs"):
        AskOptions.of(kk=3)


def test_the_question_is_analyzed_once(hash_index, monkeypatch):
    calls = []
    real = Analysis.of.__func__

    def counting(cls, question, filters=None):
        calls.append(question)
        return real(cls, question, filters)

    monkeypatch.setattr(Analysis, "of", classmethod(counting))
    hash_index.ask(Q, k=3)
    assert calls == [Q]


def test_gemini_streams_pieces_that_join_to_the_answer(gemini):
    reply = ("The widget cost 4.2 dollars per unit in 2023, down from 5.0.\n\nSources:\n"
             "- gemini_paper > Results (ID: 0005)")
    gemini.script("generateContent", text_reply(reply, tokens_in=700, tokens_out=30))
    index = build_index([PAPER], embedder=HashEmbedder(), progress=False, save=False,
                        config=Config(online=True, k=2, noise_online=False, analyze_online=False, rerank_online=False))
    events, answer = collect(index.stream("How much did the sparse widget cost per unit in 2023?"))
    deltas = [e.text for e in events if isinstance(e, Delta)]
    assert len(deltas) >= 2  # the server sent the reply in 40-character pieces; complete lines go out as they come
    assert "".join(deltas) == answer.text and answer.mode == "gemini"
    assert answer.text.startswith("The widget cost 4.2 dollars")
    assert [r["action"] for r in gemini.requests] == ["streamGenerateContent"]
    assert [(c["role"], c["tokens_in"], c["tokens_out"]) for c in answer.trace.model_calls] == [("synthesize", 700, 30)]
    assert [(e.node_id, e.in_context) for e in events if e.type == "citation"] == [("0005", True)]


def test_gemini_stream_holds_back_image_markers(gemini, client):
    from mm_helpers import fixture_tree, section

    tree = fixture_tree()
    secs = [section(tree, "0002", 1)]
    gemini.script("generateContent", text_reply("It has three stages.\n[SHOW: mm_doc/figures/pipeline.png | the pipeline]\n"
                                                "Sources:\n- mm_doc > Toy Vector Painter > 1. Method (ID: 0002)"))
    synth = GeminiSynthesizer(config=Config(online=True), client=client)
    synth.visual_check = False
    events, (text, info) = collect(synth.stream("What are the stages?", secs))
    shown = "".join(e.text for e in events if isinstance(e, Delta))
    assert "[SHOW" not in shown and shown == text
    assert [im["path"] for im in info["images"]] == ["figures/pipeline.png"]


def test_a_failed_stream_falls_back_to_the_offline_answer_streamed(gemini, client):
    from gemini_server import error_reply
    from mm_helpers import fixture_tree, section

    secs = [section(fixture_tree(), "0002", 1)]
    gemini.script("generateContent", error_reply(400, "bad request"))
    synth = GeminiSynthesizer(config=Config(online=True), client=client, fallback=ppkit.ExtractiveSynthesizer())
    events, (text, info) = collect(synth.stream("What are the stages?", secs))
    assert text.startswith("[Gemini could not answer") and info["synthesizer"] == "extractive"
    assert "".join(e.text for e in events if isinstance(e, Delta)) == text


def test_a_stream_stepped_from_other_contexts_keeps_its_own_run(hash_index):
    """A server may step a stream from fresh contexts (threads), or interleave two: each keeps its own run."""
    one, two = hash_index.stream(Q, k=3), hash_index.stream("What were Globex's revenues in 2022?", k=3)
    events: dict[int, list] = {1: [], 2: []}
    live = {1: one, 2: two}
    while live:
        for key, gen in list(live.items()):
            try:
                events[key].append(contextvars.Context().run(next, gen))
            except StopIteration:
                del live[key]
    assert events[1][-1].type == "done" and events[2][-1].type == "done"
    assert events[1][-1].answer.text == hash_index.ask(Q, k=3).text


def test_gemini_deltas_hold_back_a_marker_that_spans_lines(gemini, client):
    from mm_helpers import fixture_tree, section

    secs = [section(fixture_tree(), "0002", 1)]
    reply = ("It has three stages [SHOW: mm_doc/figures/pipeline.png |\nthe pipeline] as drawn.\n"
             "Sources:\n- mm_doc > Toy Vector Painter > 1. Method (ID: 0002)")
    gemini.script("generateContent", text_reply(reply))
    synth = GeminiSynthesizer(config=Config(online=True), client=client)
    synth.visual_check = False
    events, (text, info) = collect(synth.stream("What are the stages?", secs))
    assert "".join(e.text for e in events if isinstance(e, Delta)) == text and "[SHOW" not in text
    assert text.startswith("It has three stages  as drawn.\nSources:")  # the marker taken out where it stood


def test_options_of_another_type_are_refused(hash_index):
    with pytest.raises(InvalidInput, match="options must be RetrieveOptions, not int"):
        ppkit.retrieve(hash_index, Q, 5)
    with pytest.raises(InvalidInput, match="options must be AskOptions, not dict"):
        ppkit.ask(hash_index, Q, {"k": 3})
