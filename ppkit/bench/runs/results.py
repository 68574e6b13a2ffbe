"""The retrieval benchmark's result as types: the headline scores per k and the run around them.

:class:`RetrievalBench` is what :func:`ppkit.bench.runs.harness.run_retrieval_bench` returns;
``to_dict()`` is the ``ppkit bench retrieval --json`` file (its keys are frozen by
``tests/test_interfaces.py``) and :meth:`RetrievalBench.from_dict` reads such a file back.
:class:`KScores` are the headline measures at one cut-off (see ``DEFINITIONS`` in the
harness). The per-question rows, the per-mode summaries and the baselines' stay in their
JSON shape (``per_question``, ``modes``, ``baselines``): they are rows to read and tabulate.
The renderers (tables, plots, views) take either form (:func:`as_json`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

__all__ = ["KScores", "RetrievalBench", "as_json"]

_PAGE_FIELDS = ("page_hit", "page_recall", "n_pages")
_IMAGE_FIELDS = ("image_hit", "image_precision", "image_reachable", "image_hit_by_caption",
                 "image_precision_by_caption", "n_image_hit", "n_image_precision", "images_shown_mean")


@dataclass(frozen=True)
class KScores:
    """The headline measures at one cut-off k (means over the questions; None where undefined)."""

    hit: float | None
    recall: float | None
    context_chars_mean: float | None
    hit_overlap: float | None
    recall_overlap: float | None
    wrong_doc: float | None
    n: int
    all_gold: float | None = None  # every gold section sent
    evidence_recall: float | None = None  # share of the gold evidence's numbers and key phrases sent
    n_evidence: int | None = None  # questions with evidence features (the mean's count)
    # the multimodal set only (absent from the JSON otherwise)
    image_hit: float | None = None
    image_precision: float | None = None
    image_reachable: float | None = None
    image_hit_by_caption: float | None = None
    image_precision_by_caption: float | None = None
    n_image_hit: int | None = None
    n_image_precision: int | None = None
    images_shown_mean: float | None = None
    # questions whose evidence names a page of a PDF in the index only (absent from the JSON otherwise)
    page_hit: float | None = None  # a gold evidence page among the pages of the lines sent
    page_recall: float | None = None
    n_pages: int | None = None
    # an index of several companies only (absent from the JSON otherwise)
    wrong_company: float | None = None  # share of the items sent from another company's filing
    wrong_period: float | None = None  # from a filing of the question's company that reports another period
    other_form: float | None = None  # from another filing of the question's period (its 10-K beside the full-year release)

    @classmethod
    def from_dict(cls, d: dict) -> KScores:
        return cls(**{f.name: d.get(f.name) for f in fields(cls)})

    def to_dict(self) -> dict:
        d = asdict(self)
        if self.n_image_hit is None:
            for k in _IMAGE_FIELDS:
                del d[k]
        if self.n_pages is None:
            for k in _PAGE_FIELDS:
                del d[k]
        if self.wrong_company is None:
            for k in ("wrong_company", "wrong_period", "other_form"):
                del d[k]
        return d


@dataclass(frozen=True)
class RetrievalBench:
    """One run of the retrieval benchmark (``results`` is the headline mode's)."""

    benchmark: str
    n: int  # questions scored (with gold in the index)
    fallbacks: int  # questions where an online stage fell back to its offline twin (the run is flagged)
    fallback_questions: list[str]
    results: dict[str, KScores]  # "k" -> scores
    headline_mode: str
    per_question: list[dict]  # one JSON row per question: its sections and scores in every mode
    modes: dict[str, dict]  # mode -> "k" -> scores, "candidates", ("filter" for auto)
    baselines: dict[str, dict]  # mode -> baseline -> "k" | "equal_context" -> scores
    skipped: dict[str, str]  # qid -> why it was not scored
    gold: dict  # the GoldSet's report
    index: dict  # folder, documents, embedder, chunks
    reranker: str
    definitions: dict[str, str]
    seconds: float
    questions_file: str | None = None  # set by the command line
    format: str | None = None
    transfer: dict | None = None  # gold carried from the reference Markdown (see ppkit.bench.runs.transfer)
    extra: dict = field(default_factory=dict)  # keys of a loaded file this class does not know

    @classmethod
    def from_dict(cls, d: dict) -> RetrievalBench:
        """A result from its JSON form (a ``--json`` file or ``to_dict()``)."""
        names = {f.name for f in fields(cls)} - {"extra", "results"}
        return cls(results={k: KScores.from_dict(v) for k, v in d["results"].items()},
                   **{k: v for k, v in d.items() if k in names},
                   extra={k: v for k, v in d.items() if k not in names and k != "results"})

    def to_dict(self) -> dict:
        """The JSON form, keys in the order of the ``--json`` contract."""
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        d["results"] = {k: v.to_dict() for k, v in self.results.items()}
        for k in ("questions_file", "format", "transfer"):
            if d[k] is None:
                del d[k]
        return {**d, **self.extra}


def as_json(result: RetrievalBench | dict) -> dict:
    """The JSON form of a result, whichever form it came in."""
    return result.to_dict() if isinstance(result, RetrievalBench) else result
