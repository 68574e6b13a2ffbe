"""An Answer from a Retrieval it is given: synthesis streamed, the trace assembled, citations and verification.

:func:`answer_stream` is the answer stage of the conductor (:func:`ppkit.pipeline.stream`): it hands the
retrieved sections (plus any the conductor added, such as the primary statements a metric needs) and the
question's analysis to a synthesizer, passes on its ``delta`` events, then yields one ``citation`` per
section the text cites and the ``verification``, and returns the :class:`ppkit.answer.synth.Answer`. It
never retrieves and never reads an index.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from dataclasses import fields, replace

from ..retrieval.analyze import Analysis
from ..retrieval.types import Retrieval, Section, Trace
from .answered import check_block, verdict
from .events import Citation, Event, VerificationEvent
from .synth import Answer, AnswerTrace, Synthesizer, answer_mode
from .synth_gemini import parse_sources
from .verify import verify_answer

__all__ = ["answer_stream"]


def answer_stream(question: str, retrieval: Retrieval, synthesizer: Synthesizer, analysis: Analysis | None = None,
                  *, added: list[Section] | tuple = (), rewrite=None,
                  verify: bool = True) -> Generator[Event, None, Answer]:
    """Synthesize from ``retrieval``'s sections and ``added`` (ranked after them), streaming the events.

    Args:
        question: the question as searched (a follow-up already rewritten).
        retrieval: what retrieval returned; its trace becomes the answer's.
        synthesizer: any :class:`ppkit.answer.synth.Synthesizer`.
        analysis: the question's analysis (read from ``question`` when not given).
        added: sections added beyond the k (their ids go to ``trace.synthesis["statements_added"]``).
        rewrite: the :class:`ppkit.retrieval.conversation.Rewrite` that produced ``question``, for the trace.
        verify: check the answer's figures, quotes and citations (:func:`ppkit.answer.verify.verify_answer`).

    >>> answer = collect(answer_stream(q, retrieval, ExtractiveSynthesizer()))[1]  # doctest: +SKIP
    """
    t0 = time.perf_counter()
    sections = list(retrieval.sections) + list(added)
    calls_before = len(synthesizer.calls)
    text, info = yield from synthesizer.stream(question, sections, analysis or Analysis.of(question))
    if added:
        info["statements_added"] = [s.section_id for s in added]
    images = info.pop("images", [])
    block = info.pop("block", None)
    used = info.pop("synthesizer", synthesizer.name)  # a Gemini synthesizer that fell back names its twin
    r = retrieval
    trace = AnswerTrace(**{f.name: getattr(r.trace, f.name) for f in fields(Trace)},
                        synthesizer=used, synthesis=info,
                        candidate_details=[c.to_dict() for c in r.candidates],
                        rewrite=rewrite.to_dict() if rewrite is not None else None)
    trace = replace(trace, seconds={**r.trace.seconds, "synthesize": round(time.perf_counter() - t0, 4)},
                    model_calls=r.trace.model_calls + list(synthesizer.calls)[calls_before:])
    for c in parse_sources(text, sections):
        yield Citation(c["doc"], c["node_id"], c["breadcrumb"], c["in_context"])
    verification = verify_answer(text, sections, question=question) if verify else None
    if verification is not None:  # the block against its cited lines; does it answer? (verification.answered)
        if block is not None:
            verification["block"] = check_block(block, sections, question=question, analysis=analysis)
        b = verification.get("block") or {}
        verification["answered"] = b.get("answered")
        verification["answered_reason"] = b.get("answered_reason", "no answer block")
        verification["verdict"] = verdict(verification, block)
    yield VerificationEvent(verification)
    return Answer(question, text, sections, answer_mode(used), images, trace, verification, block)
