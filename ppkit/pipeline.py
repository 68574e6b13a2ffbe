"""The pipeline: which parts run (offline or Gemini) and how they are wired.

This is the one place that reads a :class:`~ppkit.core.config.Config` to choose parts:

* the **noise filter** when building: Gemini's over the skeleton tree when the config is
  online for noise, else the offline title rules (:mod:`ppkit.documents.noise`);
* the **re-ranker**: Gemini's over the candidates' breadcrumbs (anchor sections first) when online,
  else the structural re-ranker, one per index so breadcrumb vectors are embedded once;
* the **synthesizer**: Gemini's grounded answer when online, else the extractive one.

Every ``retrieve`` and ``ask`` runs its Gemini calls under one deadline
(``Config.ask_deadline``, :func:`ppkit.llm.client.online_run`); an online stage that fails
(noise, query analysis, re-ranking, synthesis) falls back to its offline twin, and the
fallbacks are in ``trace.fallbacks`` and in the printed answer. Embeddings cannot fall back
(an index of Gemini vectors cannot take local query vectors): their failure is an error.

:class:`Index` is a loaded index (:class:`ppkit.indexing.index.SearchIndex`) that can be
asked: ``index.retrieve(question, k=5)`` and ``index.ask(question)``. The functions here
build, open and share indexes (``reference_index`` caches the reference corpora's indexes
by content and settings). Below this module nothing chooses between offline and online;
above it (notebooks' views, benchmarks, the command line) everything goes through it.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
from collections.abc import Generator
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path

from .compare.comparison import compare_documents
from .compare.gemini import GeminiCompareRater
from .compare.types import Comparison
from .answer.compose import answer_stream
from .answer.events import AnalysisEvent, Done, ErrorEvent, Event, SectionsEvent, collect
from .answer.synth import Answer, ExtractiveSynthesizer, Synthesizer
from .answer.synth_gemini import GeminiSynthesizer
from .core import data
from .core.config import PACKAGE_DIR, Config, cache_dir
from .core.errors import ConfigError, InvalidInput, PpkitError
from .core.io import atomic_write, sha256_file
from .core.text import without_invisible
from .documents.noise import RuleNoiseFilter
from .documents.noise_gemini import GeminiNoiseFilter
from .indexing import build as _build
from .indexing import describe as _describe
from .indexing import index as _indexing
from .indexing import remove as _remove
from .indexing import stores as _stores
from .indexing.embed import Embedder, HashEmbedder, get_embedder
from .indexing.index import (
    FORMAT_VERSION,
    PIPELINE_VERSION,
    IndexFormatError,
    SearchIndex,
)
from .llm.client import online_run
from .retrieval.analyze import analyze_question
from .retrieval.conversation import rewrite_question
from .retrieval.metric_statements import statement_sections, with_statements
from .retrieval.rerank import AnchorPriority, StructuralReranker
from .retrieval.rerank_fitted import FittedReranker
from .retrieval.rerank_gemini import GeminiReranker
from .retrieval.retrieve import RetrieveOptions, checked_k
from .retrieval.retrieve import retrieve as _retrieve
from .retrieval.types import Retrieval

__all__ = ["Index", "AskOptions", "RetrieveOptions", "build_index", "load_index", "reference_index", "cached_index",
           "analyze_question", "retrieve", "ask", "stream", "remove_documents", "describe_documents",
           "default_reranker", "default_synthesizer", "default_noise_filter", "compare"]


@dataclass(frozen=True)
class AskOptions:
    """The per-call settings of :func:`ask` and :func:`stream`.

    Attributes:
        retrieve: the retrieval's options (:class:`ppkit.retrieval.retrieve.RetrieveOptions`: ``k``, ``docs``,
            stage-1 sizes and modes).
        history: earlier turns, oldest first: a follow-up is rewritten into a standalone question first
            (:mod:`ppkit.retrieval.conversation`).
        verify: check the answer's numbers, quotes and citations against the sections
            (:mod:`ppkit.answer.verify`) into ``Answer.verification``.
        statements: a question asking for a financial metric also gets the primary statements it needs that
            retrieval missed (:func:`ppkit.retrieval.metric_statements.statement_sections`; listed in the
            trace's ``synthesis["statements_added"]``), beyond the k sections.
        evidence: what the default synthesizer prints under the answer block: ``"support"`` (the passages
            it quotes and a few more) or ``"all"`` (the best passages of every section); see
            :class:`ppkit.answer.synth.ExtractiveSynthesizer`.
    """

    retrieve: RetrieveOptions = field(default_factory=RetrieveOptions)
    history: list | None = None
    verify: bool = True
    statements: bool = True
    evidence: str = "support"

    @classmethod
    def of(cls, **options) -> AskOptions:
        """Options from keyword arguments: these fields and :class:`RetrieveOptions`' (``None`` values left
        unset); an unknown name is an error that lists both.

        >>> AskOptions.of(k=3, verify=False).retrieve.k
        3
        """
        own = [f.name for f in fields(cls) if f.name != "retrieve"]
        theirs = [f.name for f in fields(RetrieveOptions)]
        unknown = sorted(set(options) - set(own) - set(theirs))
        if unknown:
            raise ConfigError(f"unknown ask option(s) {unknown}; the ask options are: {', '.join(own)}; "
                              f"the retrieve options: {', '.join(theirs)}")
        rest = {k: v for k, v in options.items() if k not in own}
        return cls(RetrieveOptions.of(**rest), **{k: v for k, v in options.items() if k in own and v is not None})


class Index(SearchIndex):
    """A loaded index that answers questions: :meth:`retrieve` and :meth:`ask`.

    Build one with :func:`build_index`, open one with :func:`load_index`, or take a reference
    corpus's with :func:`reference_index`.
    """

    @classmethod
    def of(cls, index: SearchIndex) -> Index:
        """The same index data with the pipeline's methods (what :func:`build_index` and :func:`load_index`
        return)."""
        if isinstance(index, cls):
            return index
        out = cls.__new__(cls)
        out.__dict__.update(index.__dict__)
        return out

    @cached_property
    def structural_reranker(self) -> StructuralReranker:
        """This index's offline re-ranker, starting from the breadcrumb vectors the index stores."""
        return StructuralReranker.for_index(self)

    def retrieve(self, question: str, k: int | None = None, *, docs: list[str] | None = None, reranker=None,
                 **options) -> Retrieval:
        """Two-stage retrieval: :func:`retrieve` with ``options`` as :class:`RetrieveOptions` fields."""
        return retrieve(self, question, RetrieveOptions.of(k=k, docs=docs, **options), reranker=reranker)

    def ask(self, question: str, k: int | None = None, *, docs: list[str] | None = None, reranker=None,
            synthesizer=None, **options) -> Answer:
        """Retrieve, then synthesize a cited Answer: :func:`ask` with ``options`` as :class:`AskOptions` fields."""
        return ask(self, question, AskOptions.of(k=k, docs=docs, **options), reranker=reranker, synthesizer=synthesizer)

    def stream(self, question: str, k: int | None = None, *, docs: list[str] | None = None, reranker=None,
               synthesizer=None, **options) -> Generator[Event, None, Answer | None]:
        """The answer as a stream of events: :func:`stream` with ``options`` as :class:`AskOptions` fields."""
        return stream(self, question, AskOptions.of(k=k, docs=docs, **options), reranker=reranker,
                      synthesizer=synthesizer)

    def remove(self, names: list[str]) -> Index:
        """Remove documents from this index's folder: :func:`remove_documents`. Returns the index without
        them, to use from then on: this object stays the index as it was loaded (on a Qdrant server, the
        collection it searches is dropped)."""
        if self.folder is None:
            raise InvalidInput("this index is in memory (save=False): there is no folder to remove documents from")
        return remove_documents(self.folder, names, embedder=self.embedder, config=self.config,
                                connection=self.store.connection)

    def describe(self, said: dict[str, dict]) -> Index:
        """Say what documents of this index's folder are (``{name: {"company", "period", "form"}}``):
        :func:`describe_documents`. Returns the index as saved; nothing is embedded again."""
        if self.folder is None:
            raise InvalidInput("this index is in memory (save=False): there is no folder to describe documents in")
        return describe_documents(self.folder, said, embedder=self.embedder, config=self.config,
                                  connection=self.store.connection)

    def compare(self, a: str, b: str, criteria: str | None = None, **options) -> Comparison:
        """Compare two of this index's documents section by section: :func:`compare`."""
        return compare(a, b, criteria, index=self, **options)


def default_reranker(index: SearchIndex):
    """Gemini when the index's config is online for re-ranking, else the config's offline re-ranker
    (``reranker``: the structural one, or the fitted model over its features).

    Sections holding an anchor the question names ("Figure 5") go first whatever the model says.
    The structural one is kept on the index, so its breadcrumb vectors are computed once.
    """
    cfg = index.config
    if isinstance(index, Index):
        if index.structural_reranker.embedder is not index.embedder:  # the embedder was swapped
            del index.structural_reranker
        structural = index.structural_reranker
    else:
        structural = StructuralReranker.for_index(index, path_vectors=False)
    offline = FittedReranker(structural=structural) if cfg.reranker == "fitted" else structural
    if cfg.online and cfg.rerank_online:
        # a failed call or an unusable reply falls back to the offline re-ranker, and says so
        return AnchorPriority(GeminiReranker(config=cfg, fallback=offline))
    return offline


def default_synthesizer(config: Config, *, evidence: str = "support", embedder: Embedder | None = None):
    """Gemini when the config is online for synthesis, else extractive (printing ``evidence`` under its block;
    ``embedder``: the index's, for the answer selector's focus similarity; the hash embedder of plumbing tests
    gives none)."""
    embed = None if embedder is None or isinstance(embedder, HashEmbedder) else embedder
    extractive = ExtractiveSynthesizer(evidence=evidence, embedder=embed)
    if config.online and config.synth_online:
        return GeminiSynthesizer(config=config, fallback=extractive)
    return extractive


def default_noise_filter(config: Config, embedder: Embedder):
    """Gemini over the skeleton tree when the config is online for noise, else the offline rules
    (with semantic matching by ``embedder``, except for the hash embedder of plumbing tests)."""
    if config.online and config.noise_online:
        return GeminiNoiseFilter(config=config)
    return RuleNoiseFilter(None if isinstance(embedder, HashEmbedder) else embedder)


def retrieve(index: SearchIndex, question: str, options: RetrieveOptions | None = None, *,
             reranker=None) -> Retrieval:
    """Analyze the question once, then two-stage retrieval with the parts the index's config calls for.

    >>> ppkit.retrieve(index, "What is AMD's quick ratio?", RetrieveOptions(k=5)).sections[0].breadcrumb  # doctest: +SKIP
    """
    opts = _typed(options, RetrieveOptions)
    with online_run(index.config.ask_deadline) as run:
        before = len(run.fallbacks)
        checked_k(question, index.config.k if opts.k is None else opts.k)
        _checked_request(question, opts.docs)
        analysis = analyze_question(index, question, filters=opts.docs is None and opts.auto_filter, docs=opts.docs)
        r = _retrieve(index, question, opts, reranker=reranker or default_reranker(index), analysis=analysis)
    return replace(r, trace=replace(r.trace, fallbacks=r.trace.fallbacks + run.fallbacks[before:]))


def ask(index: SearchIndex, question: str, options: AskOptions | None = None, *, reranker=None,
        synthesizer: Synthesizer | None = None) -> Answer:
    """Retrieve, then synthesize a cited Answer, with the parts the index's config calls for: :func:`stream`
    collected. An error the stream reports is raised.

    >>> print(ppkit.ask(index, "What is AMD's quick ratio for FY2022?"))  # doctest: +SKIP
    """
    events, answer = collect(stream(index, question, options, reranker=reranker, synthesizer=synthesizer))
    if events and isinstance(events[-1], ErrorEvent):
        raise events[-1].error
    return answer


def stream(index: SearchIndex, question: str, options: AskOptions | None = None, *, reranker=None,
           synthesizer: Synthesizer | None = None) -> Generator[Event, None, Answer | None]:
    """Answer ``question`` as a stream of events (:mod:`ppkit.answer.events`): ``analysis``, ``sections``,
    the synthesizer's ``delta`` pieces, one ``citation`` per section cited, ``verification``, then ``done``
    with the :class:`Answer` (also the generator's return value); or ``error`` (and None) on failure.

    The one place that orders the stages: a follow-up is rewritten with the history, the question is
    analyzed once (:func:`ppkit.retrieval.analyze.analyze_question`), retrieval takes the analysis, the primary statements a metric
    needs are added, the synthesizer writes from the sections it is given, and the answer is verified. All
    of its Gemini calls run under one deadline (``Config.ask_deadline``); the online stages that fell back
    to their offline twins are in ``trace.fallbacks``.

    >>> for event in ppkit.stream(index, "What is AMD's quick ratio for FY2022?"):  # doctest: +SKIP
    ...     print(event.type, event.data())
    """
    opts = _typed(options, AskOptions)
    # The run (deadline, fallbacks) is a context variable: each step of the stream runs in this stream's own
    # copy of the context, so a consumer that steps it from other contexts (a server's threads) or
    # interleaves two streams gives each its own run.
    ctx = contextvars.copy_context()
    steps = ctx.run(_run, index, question, opts, reranker, synthesizer)
    try:
        while True:
            try:
                event = ctx.run(next, steps)
            except StopIteration as stop:
                return stop.value
            yield event
    finally:
        ctx.run(steps.close)


def _run(index: SearchIndex, question: str, opts: AskOptions, reranker,
         synthesizer: Synthesizer | None) -> Generator[Event, None, Answer | None]:
    """:func:`stream`'s events under one online run: the stages, then ``done`` (or ``error``)."""
    synthesizer = synthesizer or default_synthesizer(index.config, evidence=opts.evidence, embedder=index.embedder)
    with online_run(index.config.ask_deadline) as run:
        before = len(run.fallbacks)
        try:
            answer = yield from _answer_events(index, question, opts, reranker or default_reranker(index),
                                               synthesizer)
        except Exception as e:  # noqa: BLE001 - reported as the stream's last event; ask raises it
            yield ErrorEvent(e)
            return None
    if answer.trace is not None:
        answer = replace(answer, trace=replace(answer.trace, fallbacks=answer.trace.fallbacks
                                               + run.fallbacks[before:]))
    yield Done(answer, dict(answer.trace.seconds) if answer.trace is not None else {})
    return answer


def _typed(options, kind: type):
    """``options`` when it is a ``kind`` (None: the defaults); anything else is an InvalidInput."""
    if options is None:
        return kind()
    if not isinstance(options, kind):
        raise InvalidInput(f"options must be {kind.__name__}, not {type(options).__name__} {options!r}: "
                           f"e.g. {kind.__name__}.of(k=5), or index.ask/index.retrieve(question, k=5)")
    return options


def _answer_events(index: SearchIndex, question: str, opts: AskOptions, reranker,
                   synthesizer: Synthesizer) -> Generator[Event, None, Answer]:
    """The stages of :func:`stream` in order, up to the verified Answer (without the run's fallbacks)."""
    checked_k(question, index.config.k if opts.retrieve.k is None else opts.retrieve.k)
    _checked_request(question, opts.retrieve.docs, opts.history)
    _not_empty(index)
    rewrite = rewrite_question(index, question, opts.history) if opts.history else None
    if rewrite is not None:
        question = rewrite.question
    analysis = analyze_question(index, question, filters=opts.retrieve.docs is None and opts.retrieve.auto_filter,
                                docs=opts.retrieve.docs)
    yield AnalysisEvent(analysis.to_dict())
    r = _retrieve(index, question, opts.retrieve, reranker=reranker, analysis=analysis)
    yield SectionsEvent([{"rank": s.rank, "doc": s.doc, "node_id": s.node_id, "breadcrumb": s.breadcrumb,
                          "line_start": s.line_start, "line_end": s.line_end, "pages": list(s.pages),
                          "score": s.score} for s in r.sections])
    added = []
    if opts.statements and analysis.metric is not None:  # the statements read as the tree shows them
        r = replace(r, sections=with_statements(index, list(r.sections)))
        added = statement_sections(index, question, r.sections, analysis.metric, budget=index.config.section_budget)
    return (yield from answer_stream(question, r, synthesizer, analysis, added=added, rewrite=rewrite,
                                     verify=opts.verify))


def _checked_request(question: str, docs, history=None) -> None:
    """What :func:`ppkit.retrieval.retrieve.checked_k` leaves to check, as one-line InvalidInputs: a question of
    characters that show nothing (zero-width spaces: it was answered), ``docs=[]`` (it searched nothing and said
    "Not found") and a history that is not a list of turns (``"bad"`` was read as three questions)."""
    if not without_invisible(question).strip():
        raise InvalidInput("the question holds only characters that show nothing (zero-width spaces, joiners...): "
                           "write the question")
    if docs is not None and not docs:
        raise InvalidInput("docs=[] names no document: give the documents to search, or leave docs out (None) to "
                           "search the ones the question names, else all")
    if history is None:
        return
    if not isinstance(history, (list, tuple)):
        raise InvalidInput(f"history must be a list of earlier turns, oldest first (e.g. [{{'question': ..., "
                           f"'answer': ...}}]), not a {type(history).__name__}")
    for turn in history:
        if not (isinstance(turn, str) or isinstance(getattr(turn, "question", None), str)
                or (isinstance(turn, dict) and ("question" in turn or "role" in turn))):
            raise InvalidInput(f"a history turn must be a question (str), a dict with 'question' (and 'answer') or "
                               f"'role' and 'content', or an Answer; got {type(turn).__name__} {str(turn)[:60]!r}")


def _not_empty(index: SearchIndex) -> None:
    """An InvalidInput when ``index`` holds no documents: an answer from it would be an empty "Not found" that
    passes verification (retrieval itself returns no sections, which says so)."""
    if not index.trees:
        where = f" at {index.folder}" if index.folder is not None else ""
        raise InvalidInput(f"the index{where} holds no documents, so there is nothing to answer from: add some "
                           "with `ppkit index DOCS..." + (f" --index {index.folder}`" if where else "`"))


def _one_doc_search(index: SearchIndex):
    """Retrieval in one document through :func:`retrieve` (a comparison's ``search``), in the re-ranker's order:
    no boilerplate demotion, which reads an agreement's legal text and signature pages as a filing's boilerplate."""
    def search(query: str, doc: str, k: int, retrieval: str | None = None) -> list[tuple[str, float]]:
        opts = RetrieveOptions(k=k, docs=[doc], auto_filter=False, decompose=False, statement_recall=False,
                               retrieval=retrieval, boilerplate=False)  # an agreement's legal text is content
        return [(s.node_id, s.score) for s in retrieve(index, query, opts).sections]
    return search


def compare(a: str | Path, b: str | Path, criteria: str | None = None, *, index: SearchIndex | Path | str | None = None,
            n: int = 10, a_sections: list[str] | None = None,
            config: Config | None = None, on_phase=None, progress: bool = True) -> Comparison:
    """Compare document ``a`` with document ``b`` section by section (:func:`ppkit.compare.comparison.compare_documents`).

    ``a`` and ``b`` are two documents of ``index`` (an :class:`Index` or an index folder; default the
    default index), or two files (Markdown or PDF) indexed on the fly into a cached index keyed by their
    content (:func:`cached_index`). Without ``criteria``: every section of A with the 0-3 sections of B that do
    its job (or none), containers paired through their children, and B's sections nobody pairs; with
    ``criteria``: the same pairs for up to ``n`` sections of A about them (``a_sections``: node ids of A to use
    instead of retrieving them). Retrieval runs through :func:`retrieve`; with a Gemini key (and
    ``Config.synth_online``, as for answers) the fit check and the ratings run online.

    >>> ppkit.compare("Emerson.md", "TRoadhouse.md", "collateral and liens").pairs[0].a.title  # doctest: +SKIP
    'Section 5.08 Negative Pledge'
    """
    options = {"n": n, "a_sections": a_sections, "on_phase": on_phase}
    if isinstance(index, SearchIndex) and all(isinstance(x, str) and x in index.trees for x in (a, b)):
        return _compare_in(index, str(a), str(b), criteria, **options)  # the index's own names: no file is read
    missing = [str(x) for x in (a, b) if Path(str(x)).suffix.lower() in (".md", ".pdf") and not Path(str(x)).is_file()]
    if missing:
        raise InvalidInput(f"no file {missing[0]}: give an existing Markdown or PDF file, "
                           "or a document name of the index")
    files = [Path(x) for x in (a, b) if isinstance(x, Path) or Path(str(x)).is_file()]
    if files and len(files) != 2:
        raise InvalidInput(f"compare takes two files or two document names of an index, not one of each ({a}, {b})")
    if files:
        if files[0].stem.casefold() == files[1].stem.casefold():
            raise InvalidInput(f"both files are named {files[0].stem!r}: the documents of one index need "
                               "different names; rename one of them")
        index = cached_index(files, "compare", config=config, progress=progress)
        a, b = files[0].stem, files[1].stem
    elif not isinstance(index, SearchIndex):
        index = load_index(index, config=config)
    return _compare_in(index, index.resolve_doc(str(a)), index.resolve_doc(str(b)), criteria, **options)


def _compare_in(index: SearchIndex, a: str, b: str, criteria: str | None, **options) -> Comparison:
    """:func:`compare` of two documents of ``index`` named as indexed (Gemini's rater when the config is online)."""
    cfg = index.config
    rater = GeminiCompareRater(config=cfg) if cfg.online and cfg.synth_online else None
    with online_run(cfg.ask_deadline):
        return compare_documents(index, a, b, search=_one_doc_search(index), criteria=criteria, rater=rater,
                                 **options)


def build_index(paths, folder: Path | str | None = None, *, embedder: Embedder | str | None = None,
                config: Config | None = None, noise_filter=None, **options) -> Index:
    """Index Markdown documents into ``folder``; see :func:`ppkit.indexing.build.build_index`.

    ``embedder``: an :class:`Embedder`, or its name (``"local"``, ``"hash"``... as ``Config.embedder``).

    ``config`` defaults to :meth:`Config.from_env`; ``noise_filter`` to
    :func:`default_noise_filter`. ``options``: ``fresh``, ``overrides``, ``names``,
    ``metadata``, ``described`` (what the user says a document is: ``{name: {"company", "period", "form"}}``),
    ``progress``, ``save``, ``store``, ``connection``, ``replace``.

    >>> index = ppkit.build_index(["../shared/data/10k/AMD.md"], "/tmp/amd-index")  # doctest: +SKIP
    """
    config = config or Config.from_env()
    if isinstance(embedder, str):  # a name, as ``ppkit index --embedder`` takes it: checked against the index
        config, embedder = config.set(embedder=embedder), None
    embedder = embedder or get_embedder(config.embedder)
    default_filter = noise_filter is None
    noise_filter = noise_filter or default_noise_filter(config, embedder)
    paths = list(paths) if not isinstance(paths, (str, bytes, Path)) else paths  # a bad value errors below
    index = Index.of(_build.build_index(paths, folder, embedder=embedder, config=config, noise_filter=noise_filter,
                                       **options))
    if default_filter and options.get("save", True) and not any(options.get(k) for k in ("names", "metadata",
                                                                                            "overrides")):
        _note_build(paths, index, embedder, config)
    return index


def load_index(folder: Path | str | None = None, *, embedder: Embedder | None = None,
               config: Config | None = None, trust: bool = False, connection: dict | None = None) -> Index:
    """Open an index folder; see :func:`ppkit.indexing.index.load_index` (``trust``: read the document
    paths of an index folder ppkit on this account did not write; ``connection``: its vector store's
    connection options, e.g. ``{"url": ...}`` for a Qdrant server).

    >>> index = ppkit.load_index("/tmp/amd-index")  # doctest: +SKIP
    """
    return Index.of(_indexing.load_index(folder, embedder=embedder, config=config or Config.from_env(), trust=trust,
                                         connection=connection))


def remove_documents(folder: Path | str | None, names: list[str], *, embedder: Embedder | None = None,
                     config: Config | None = None, connection: dict | None = None) -> Index:
    """Remove documents (a list of names) from the index in ``folder``: their chunks, vectors, BM25 terms,
    trees and manifest records, atomically; see :func:`ppkit.indexing.remove.remove_documents`.

    >>> ppkit.remove_documents("/tmp/10k-index", ["AMD"]).docs  # doctest: +SKIP
    ['AMEX', 'Boeing', 'PepsiCo']
    """
    return Index.of(_remove.remove_documents(folder, names, embedder=embedder, config=config or Config.from_env(),
                                             connection=connection))


def describe_documents(folder: Path | str | None, said: dict[str, dict], *, embedder: Embedder | None = None,
                       config: Config | None = None, connection: dict | None = None) -> Index:
    """Say what indexed documents are (their company, period and form), in place, nothing embedded again; see
    :func:`ppkit.indexing.describe.describe_documents`.

    >>> ppkit.describe_documents("/tmp/idx", {"report": {"company": "Harbor Lights", "period": "FY2024"}})  # doctest: +SKIP
    """
    return Index.of(_describe.describe_documents(folder, said, embedder=embedder, config=config or Config.from_env(),
                                                 connection=connection))


# the modules whose code decides what goes into an index (tree, noise, chunks, vectors, labels)
_INDEXING_CODE = ("core/markup.py", "documents/tree.py", "documents/noise.py", "documents/chunking.py",
                  "documents/metadata.py", "documents/images.py", "documents/anchors.py", "indexing/lexical.py",
                  "indexing/index.py", "indexing/build.py", "indexing/folder.py", "indexing/embed.py",
                  "indexing/stores/__init__.py", "indexing/stores/base.py", "indexing/stores/faiss.py",
                  "indexing/sections.py")


def _cache_key(paths, embedder: Embedder, config: Config) -> str:
    """The key of :func:`cached_index`: the documents' sha256 and paths, the embedder, the settings, the
    pipeline and format versions and the code that decides what goes into an index."""
    return hashlib.sha256(json.dumps({
        "docs": [sha256_file(p) for p in paths], "embedder": embedder.name, "dim": embedder.dim,
        # pointers are absolute paths: a moved data folder is another index
        "paths": [str(Path(p).resolve()) for p in paths],
        "chunk": [config.chunk_size, config.chunk_overlap], "pipeline": PIPELINE_VERSION,
        "format": FORMAT_VERSION, "code": _code_fingerprint(),
        "online_noise": bool(config.online and config.noise_online),
    }, sort_keys=True).encode()).hexdigest()[:16]


def _built_note(key: str) -> Path:
    """Where a build names the index folder it made from exactly the inputs of cache key ``key``."""
    return cache_dir() / "indexes" / ".built" / f"{key}.json"


def _note_build(paths, index: Index, embedder: Embedder, config: Config) -> None:
    """After :func:`build_index` saved ``index``: when it is what :func:`cached_index` would build from ``paths``
    (exactly those documents, in that order, under their file names, every one indexed by this build with
    the default noise filter and store), note its folder and stamp under their cache key, so the cache can
    take it instead of building the same index again (README step 3 after step 1)."""
    m = index.manifest
    docs, build = m.get("documents", []), m.get("build", {})
    if (build.get("chunks_reused") or "removed" in build or m.get("store", {}).get("name") != _stores.DEFAULT
            or [d.get("source") for d in docs] != [str(Path(p).resolve()) for p in paths]
            or [d.get("doc") for d in docs] != [Path(p).stem for p in paths]):
        return
    atomic_write(_built_note(_cache_key(paths, embedder, config)),
                 json.dumps({"folder": str(index.folder), "stamp": m.get("stamp")}))


def _adopt_build(key: str, folder: Path, embedder: Embedder, config: Config) -> Index | None:
    """The index a build noted under ``key`` (:func:`_note_build`), saved into ``folder``; None when there is
    none, it cannot be loaded, or it changed since it was noted (its stamp differs)."""
    try:
        note = json.loads(_built_note(key).read_text(encoding="utf-8"))
        built = load_index(note["folder"], embedder=embedder, config=config)
    except (OSError, ValueError, KeyError, TypeError, PpkitError):
        return None
    if not note.get("stamp") or built.manifest.get("stamp") != note["stamp"]:
        return None
    built.save(folder)
    return built


def _code_fingerprint() -> str:
    """sha256 of the modules that decide what goes into an index, so a cached reference index
    built by other code (another checkout, an edited module) is never mistaken for this one."""
    h = hashlib.sha256()
    for rel in _INDEXING_CODE:
        path = PACKAGE_DIR / rel
        if path.exists():
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def reference_index(corpus: str = "10k", *, embedder: Embedder | None = None, config: Config | None = None,
                    progress: bool = True, data_root: Path | None = None) -> Index:
    """The index of a reference corpus (``"10k"`` or ``"papers"``), built once and cached
    (see :func:`cached_index`). ``data_root``: the reference data folder, when not the one
    :func:`ppkit.core.data.data_dir` finds.
    """
    paths = (data.tenk_paths(data_root) if corpus == "10k" else data.paper_paths(data_root) if corpus == "papers"
             else None)
    if paths is None:
        raise InvalidInput(f"unknown corpus {corpus!r}: use '10k' or 'papers'")
    return cached_index(paths, corpus, embedder=embedder, config=config, progress=progress)


def cached_index(paths, name: str, *, embedder: Embedder | None = None, config: Config | None = None,
                 progress: bool = True, **options) -> Index:
    """An index of ``paths`` (Markdown files and PDFs), built once into the cache and shared.

    The cache key covers the documents' sha256, the embedder, the settings and the
    pipeline version, so tests, notebooks and benchmarks share one build per machine
    and a changed input or setting builds a new one; it lives in ``<cache>/indexes/<name>-<key>``.
    When :func:`build_index` (``ppkit index``) already made that same index into another folder and it has
    not changed since, that index is copied in instead of built again (seconds, not minutes: README step 3
    after step 1). ``options`` go to :func:`build_index` (e.g. ``workers`` for PDFs).

    >>> index = ppkit.cached_index(sorted(Path("pdfs").glob("*.pdf")), "my-shelf")  # doctest: +SKIP
    """
    config = config or Config.from_env()
    embedder = embedder or get_embedder(config.embedder)
    key = _cache_key(paths, embedder, config)
    folder = cache_dir() / "indexes" / f"{name}-{key}"
    with _indexing.index_lock(folder):
        if (folder / "manifest.json").exists():
            try:
                return load_index(folder, embedder=embedder, config=config)
            except (IndexFormatError, ValueError, FileNotFoundError):
                pass  # a corrupt cache entry is rebuilt below
        adopted = _adopt_build(key, folder, embedder, config)
        if adopted is not None:
            return adopted
        index = build_index(paths, folder, embedder=embedder, config=config, fresh=True, progress=progress,
                            save=False, **options)
        index.save(folder)
        return index
