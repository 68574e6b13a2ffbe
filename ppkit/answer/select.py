"""The answer selector: one score over named features for every candidate, a calibrated confidence, one block.

:func:`select` reads the question once (:func:`ppkit.answer.question.read_question`), builds the candidates of the
retrieved sections (:func:`ppkit.answer.candidates.candidates`), keeps those whose unit the answer type asked can be
(a hard filter: a percent never answers "how much"), scores each on the same features (:data:`FEATURES`), and
takes the best. Its confidence is the calibrated probability that it states the answer (a logistic function of
its score, fitted out of sample). Above the threshold the block states it; below, the block is ``closest`` (the
best passage, worded "Not stated directly; the closest passage: ...") or ``not_found``. A question that names a
company or a year no retrieved section mentions is ``not_found`` before anything is scored
(:func:`ppkit.answer.scope.missing_from`).

The features, each in [-1, 1]:

* ``focus_sim``: the cosine similarity of the question's focus and the candidate's own words (a row label, the
  clause around a figure, a passage), by the index's embedding model (MiniLM offline); 0 without one;
* ``focus_cover``: the share of the focus's stems (through the catalogue: the measure's name and its inputs' row
  names) in the candidate's own words; ``wide_cover``: in its wider words (row, header, caption, sentence,
  breadcrumb);
* ``agree``: other candidates, from other lines, that state the same figure (a table cell and a sentence of the
  MD&A; a computed value and the company's own row), counted up to 3 and divided by 3;
* ``rank``: 1 / the section's rank;
* ``concept``: its row label names a concept of the measure asked (1; 0.5 with a qualifier), and a computed value;
* ``computed``: a value computed from the statements;
* ``cue``: a passage that states a cause, for a question asking why.

The weights, the calibration and the threshold are data (``selector.json`` beside this module), fitted under
leave-one-company-out on development sets by ``ppkit bench fit-answers`` (:mod:`ppkit.bench.fit.answers`), never
on a sealed set. This module fits nothing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..core.config import selector_override
from ..core.errors import InvalidInput
from ..core.text import clip
from ..finance.labels import words
from ..retrieval.analyze import Analysis
from ..retrieval.types import Section
from .block import MAX_CHARS, AnswerBlock
from .candidates import Candidate, candidates
from .question import Asked, in_scope, read_question
from .scope import missing_from, not_found_line, refused

__all__ = ["FEATURES", "Selector", "Selection", "select", "features", "compatible", "load_selector", "share", "agreement", "admissible",
           "SELECTOR_PATH"]

FEATURES = ("focus_sim", "focus_cover", "wide_cover", "agree", "rank", "concept", "computed", "cue")
SELECTOR_PATH = Path(__file__).with_name("selector.json")
_KIND_OF = {"cell": "figure", "clause": "figure", "computed": "computed", "which": "figure", "yes_no": "yes_no",
            "passage": "passage", "not_meaningful": "not_meaningful"}
# the candidate units an answer type can be (a hard filter)
_UNITS = {"amount": ("amount",), "percent": ("percent",), "ratio": ("ratio",), "days": ("days",),
          "per_share": ("per_share", "amount"), "count": ("count", "amount"), "date": ("date",),
          "yes_no": ("yes_no",), "which": ("which",), "narrative": ("",)}
_SHORTLIST = 48  # candidates whose similarity is computed (the best by the other features)


@dataclass(frozen=True)
class Selector:
    """The fitted selector: a weight per feature (a candidate's score is their weighted sum); the confidence of
    the best candidate is ``1 / (1 + exp(-(a * score + b * logit(share) + c * computed + d)))``, ``share`` its
    softmax probability among the candidates (:func:`share`), ``computed`` its feature (a value computed from the
    statements; ``calibration = (a, b, c, d)``); a block states its answer when the confidence is at least
    ``threshold``."""

    weights: dict[str, float]
    bias: float = 0.0
    calibration: tuple[float, ...] = (1.0, 0.0, 0.0, 0.0)
    threshold: float = 0.5
    note: str = ""

    def score(self, f: dict[str, float]) -> float:
        return self.bias + sum(self.weights.get(k, 0.0) * f.get(k, 0.0) for k in FEATURES)

    def confidence(self, score: float, share: float = 1.0, computed: float = 0.0) -> float:
        a, b, c, d = (tuple(self.calibration) + (0.0, 0.0, 0.0))[:4]
        p = min(max(share, 1e-6), 1 - 1e-6)
        z = a * score + b * math.log(p / (1 - p)) + c * computed + d
        return 1 / (1 + math.exp(-z)) if z > -60 else 0.0

    def to_dict(self) -> dict:
        return {"features": list(FEATURES), "weights": self.weights, "bias": self.bias,
                "calibration": list(self.calibration), "threshold": self.threshold, "note": self.note}


def load_selector(path: str | Path | None = None) -> Selector:
    """The selector saved in ``path``; by default the file ``$PPKIT_SELECTOR`` names (a selector fitted on your own
    questions by ``ppkit bench fit-answers --out``), else the one fitted for the package."""
    return _load_selector(str(path or selector_override() or SELECTOR_PATH))


@lru_cache(maxsize=4)
def _load_selector(path: str) -> Selector:  # read once per path (an error is not cached: read again next time)
    if not Path(path).is_file():
        raise InvalidInput(f"no answer selector at {path} (PPKIT_SELECTOR names a selector.json that "
                           "`ppkit bench fit-answers --out` wrote; unset it for the package's own)")
    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
        return Selector({k: float(d["weights"].get(k, 0.0)) for k in FEATURES}, float(d.get("bias", 0.0)),
                        tuple(float(x) for x in d.get("calibration", (1.0, 0.0, 0.0, 0.0))),
                        float(d.get("threshold", 0.5)), str(d.get("note", "")))
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise InvalidInput(f"{path} is not an answer selector ({type(e).__name__}: {e}); write one with "
                           "`ppkit bench fit-answers --out`") from None


@dataclass(frozen=True)
class Selection:
    """What the selector chose: the block, the question read, the candidates scored (best first: ``(score,
    candidate, features)``) and the best one's confidence."""

    block: AnswerBlock
    asked: Asked
    ranked: list = field(default_factory=list, repr=False)
    confidence: float | None = None
    chosen: Candidate | None = None


def compatible(asked: Asked, c: Candidate) -> bool:
    """Whether candidate ``c`` can be the answer asked (the hard filter): of the answer type asked; of the period
    asked (a cell of another year's column, a year's figure where a quarter is asked, is none)."""
    if c.kind == "not_meaningful":
        return asked.figure
    if asked.quarter is not None and c.kind in ("cell", "computed", "clause") and not c.quarterly:
        return False  # a quarter asked: a year's figure is no answer
    if c.kind == "cell" and asked.year is not None and c.year is not None and c.year != asked.year \
            and not asked.compare:
        return False  # another year's column
    return c.unit in _UNITS.get(asked.type, ())


def admissible(asked: Asked, c: Candidate, f: dict[str, float]) -> bool:
    """Whether a compatible candidate may answer at all: it shares a word with what is asked (a measure the
    catalogue computes always does), and, when the question names a part of the company (a segment, a product),
    it names that part too (the whole company's figure is no answer about a part)."""
    if asked.entity and not _cover(asked.entity, f"{c.context} {c.wide}"):
        return False
    if c.extra.get("metric") is not None or not asked.focus_words:
        return True
    if c.extra.get("from") == "passage":  # yes or no read from a sentence: the sentence is about what is asked
        return f["focus_cover"] >= 0.5
    if c.kind in ("passage", "clause"):
        return bool(f["focus_cover"])  # the sentence itself, not only its section's title
    if c.kind == "which":  # the table is about the measure asked (its caption, header or title)
        return bool(f["focus_cover"])
    return bool(f["wide_cover"] or f["focus_cover"])


def _cover(want: frozenset[str], text: str) -> float:
    if not want:
        return 0.0
    return len(want & set(words(text))) / len(want)


def agreement(cands: list[Candidate]) -> dict[int, float]:
    """``{id(candidate): agree}``: for each candidate with a figure, the candidates of other lines stating the same
    value (within 0.5%), counted up to 3, over 3."""
    by_value: dict[int, list[Candidate]] = {}
    for c in cands:
        if c.value is not None and c.value != 0:
            by_value.setdefault(round(math.log10(abs(c.value)) * 400), []).append(c)
    out = {}
    for c in cands:
        if c.value is None or c.value == 0:
            continue
        key = round(math.log10(abs(c.value)) * 400)
        near = [o for k in (key - 1, key, key + 1) for o in by_value.get(k, []) if o is not c and
                abs(o.value - c.value) <= 0.005 * abs(c.value) and (o.section.section_id, o.lines[-1:]) !=
                (c.section.section_id, c.lines[-1:])]
        out[id(c)] = min(3, len({(o.section.section_id, o.lines[-1:]) for o in near})) / 3
    return out


def features(asked: Asked, c: Candidate, sim: float = 0.0, agree: float = 0.0) -> dict[str, float]:
    """The features of candidate ``c`` for the question read as ``asked`` (``sim``: its focus similarity,
    ``agree``: :func:`agreement`)."""
    return {"focus_sim": sim, "focus_cover": _cover(asked.focus_words, c.context),
            "wide_cover": _cover(asked.focus_words, c.wide), "agree": agree,
            "rank": 1.0 / max(1, c.section.rank), "concept": c.label_concept,
            "computed": 1.0 if c.kind in ("computed", "not_meaningful") or c.extra.get("from") == "measure" else 0.0,
            "cue": 1.0 if c.cue and asked.type == "narrative" else 0.0}


Embed = Callable[[list[str]], np.ndarray]


def _similarities(asked: Asked, texts: list[str], embed: Embed | None) -> list[float]:
    if embed is None or not texts:
        return [0.0] * len(texts)
    vecs = embed([asked.focus or asked.question, *texts])
    vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-9)
    return [float(x) for x in vecs[1:] @ vecs[0]]


def rank_candidates(asked: Asked, cands: list[Candidate], selector: Selector,
                    embed: Embed | None = None) -> list[tuple[float, Candidate, dict[str, float]]]:
    """The type-compatible candidates scored, best first; the similarity is computed for the best
    :data:`_SHORTLIST` by the other features."""
    ok = [c for c in cands if compatible(asked, c)]
    agree = agreement(cands)
    first = sorted(((selector.score(features(asked, c, 0.0, agree.get(id(c), 0.0))), i, c) for i, c in enumerate(ok)),
                   key=lambda x: -x[0])
    short = [c for _, _, c in first[:_SHORTLIST]]
    sims = _similarities(asked, [clip(c.context, 300) for c in short], embed)
    out = []
    for c, sim in zip(short, sims):
        f = features(asked, c, sim, agree.get(id(c), 0.0))
        out.append((selector.score(f), c, f))
    out += [(s, c, features(asked, c, 0.0, agree.get(id(c), 0.0))) for s, _, c in first[_SHORTLIST:]]
    out = [x for x in out if admissible(asked, x[1], x[2])]
    out.sort(key=lambda x: (-x[0], x[1].section.rank, x[1].lines[:1]))
    return out


def share(scores) -> float:
    """The best candidate's share of the choice: its softmax probability among all the scores (1 for one)."""
    if not len(scores):
        return 0.0
    x = np.asarray(scores, dtype=float)
    return float(1.0 / np.exp(x - x.max()).sum())


def _closest(asked: Asked, cands: list[Candidate], ranked, conf: float | None) -> AnswerBlock | None:
    """The best passage as a hedge: the chosen candidate's sentence, else the passage that shares most of the
    focus; None when nothing shares any of it."""
    gap = next((c for c in cands if c.kind == "missing"), None)
    if gap is not None and not ranked:  # a measure asked whose inputs the statements lack: say which
        return AnswerBlock(clip(f"Not stated directly: {gap.text}.", MAX_CHARS), "closest", gap.citations, asked.type,
                           conf)
    best = None
    if ranked:
        c = ranked[0][1]
        shown = c.extra.get("sentence") or c.wide if c.kind == "clause" else c.text
        best = (c, shown)
    else:
        scored = sorted(((_cover(asked.focus_words, c.context), -c.section.rank, i, c) for i, c in enumerate(cands)
                         if c.kind in ("passage", "clause", "yes_no", "cell")), key=lambda x: x[:3], reverse=True)
        if scored and scored[0][0] > 0:
            c = scored[0][3]
            best = (c, c.extra.get("sentence") or (c.text if c.kind == "cell" else c.context))
    if best is None:
        return None
    c, shown = best
    text = clip(f"Not stated directly; the closest passage: {shown}", MAX_CHARS - 100)
    return AnswerBlock(text, "closest", c.citations, asked.type, conf)


def select(question: str, sections: list[Section], analysis: Analysis | None = None, *,
           embed: Embed | None = None, selector: Selector | None = None) -> Selection:
    """The answer block for ``question`` from ``sections`` (see the module docstring).

    Args:
        question: the question (a follow-up already rewritten).
        sections: the retrieved sections, in rank order.
        analysis: the question's analysis (read from the question when not given).
        embed: texts -> vectors (the index's embedder), for the focus similarity; None: no similarity.
        selector: the weights (default: :func:`load_selector`).
    """
    analysis = analysis or Analysis.of(question)
    selector = selector or load_selector()
    asked = in_scope(read_question(question, analysis), sections)
    missing = missing_from(question, sections, analysis)
    if refused(question, sections, analysis, missing):
        return Selection(AnswerBlock(not_found_line(missing), "not_found", (), asked.type, None), asked)
    cands = candidates(asked, sections)
    ranked = rank_candidates(asked, cands, selector, embed)
    if not ranked:
        hedge = _closest(asked, cands, [], None)
        if hedge is not None:  # the gap (a measure's missing inputs) as the chosen one: its found inputs are shown
            gap = next((c for c in cands if c.kind == "missing"), None)
            return Selection(hedge, asked, ranked, None, gap)
        what = asked.focus or "the question"
        return Selection(AnswerBlock(f"Not found: no retrieved passage is about {what}.", "not_found", (),
                                     asked.type, None), asked, ranked)
    score, best, feats = ranked[0]
    conf = selector.confidence(score, share([sc for sc, _, _ in ranked]), feats["computed"])
    if conf >= selector.threshold:
        block = AnswerBlock(clip(best.text, MAX_CHARS), _KIND_OF[best.kind], best.citations, asked.type, conf)
        return Selection(block, asked, ranked, conf, best)
    hedge = _closest(asked, cands, ranked, conf)
    return Selection(hedge, asked, ranked, conf, best)
