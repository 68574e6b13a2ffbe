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

import hashlib
import json
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import cast

from .answer.synth import Answer, ExtractiveSynthesizer
from .answer.synth import ask as _ask
from .answer.synth_gemini import GeminiSynthesizer
from .core import data
from .core.config import PACKAGE_DIR, Config, cache_dir
from .core.errors import InvalidInput
from .core.io import sha256_file
from .documents.noise import RuleNoiseFilter
from .documents.noise_gemini import GeminiNoiseFilter
from .indexing import build as _build
from .indexing import index as _indexing
from .indexing.embed import Embedder, HashEmbedder, get_embedder
from .indexing.index import (
    FORMAT_VERSION,
    PIPELINE_VERSION,
    IndexFormatError,
    SearchIndex,
)
from .llm.client import online_run
from .retrieval.rerank import AnchorPriority, StructuralReranker
from .retrieval.rerank_fitted import FittedReranker
from .retrieval.rerank_gemini import GeminiReranker
from .retrieval.retrieve import retrieve as _retrieve
from .retrieval.types import Retrieval

__all__ = ["Index", "build_index", "load_index", "reference_index", "cached_index", "retrieve", "ask", "default_reranker",
           "default_synthesizer", "default_noise_filter"]


class Index(SearchIndex):
    """A loaded index that answers questions: :meth:`retrieve` and :meth:`ask`.

    Build one with :func:`build_index`, open one with :func:`load_index`, or take a reference
    corpus's with :func:`reference_index`.
    """

    @cached_property
    def structural_reranker(self) -> StructuralReranker:
        """This index's offline re-ranker, starting from the breadcrumb vectors the index stores."""
        return StructuralReranker.for_index(self)

    def retrieve(self, question: str, k: int | None = None, *, docs: list[str] | None = None, reranker=None,
                 **kw) -> Retrieval:
        """Two-stage retrieval; see :func:`ppkit.retrieval.retrieve.retrieve` for the options."""
        return retrieve(self, question, k, docs=docs, reranker=reranker, **kw)

    def ask(self, question: str, k: int | None = None, *, docs: list[str] | None = None, reranker=None,
            synthesizer=None, history=None, **kw) -> Answer:
        """Retrieve, then synthesize an Answer; see :func:`ppkit.answer.synth.ask` for the options."""
        return ask(self, question, k, docs=docs, reranker=reranker, synthesizer=synthesizer, history=history, **kw)


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
    if cfg.use_gemini and cfg.rerank_online:
        # a failed call or an unusable reply falls back to the offline re-ranker, and says so
        return AnchorPriority(GeminiReranker(config=cfg, fallback=offline))
    return offline


def default_synthesizer(config: Config):
    """Gemini when the config is online for synthesis, else extractive."""
    if config.use_gemini and config.synth_online:
        return GeminiSynthesizer(config=config, fallback=ExtractiveSynthesizer())
    return ExtractiveSynthesizer()


def default_noise_filter(config: Config, embedder: Embedder):
    """Gemini over the skeleton tree when the config is online for noise, else the offline rules
    (with semantic matching by ``embedder``, except for the hash embedder of plumbing tests)."""
    if config.use_gemini and config.noise_online:
        return GeminiNoiseFilter(config=config)
    return RuleNoiseFilter(None if isinstance(embedder, HashEmbedder) else embedder)


def retrieve(index: SearchIndex, question: str, k: int | None = None, *, docs: list[str] | None = None,
             reranker=None, **kw) -> Retrieval:
    """Two-stage retrieval with the parts the index's config calls for.

    >>> ppkit.retrieve(index, "What is AMD's quick ratio?", k=5).sections[0].breadcrumb  # doctest: +SKIP
    """
    with online_run(index.config.ask_deadline) as run:
        before = len(run.fallbacks)
        r = _retrieve(index, question, k, docs=docs, reranker=reranker or default_reranker(index), **kw)
    return replace(r, trace=replace(r.trace, fallbacks=r.trace.fallbacks + run.fallbacks[before:]))


def ask(index: SearchIndex, question: str, k: int | None = None, *, docs: list[str] | None = None, reranker=None,
        synthesizer=None, history=None, **kw) -> Answer:
    """Retrieve, then synthesize a cited Answer, with the parts the index's config calls for.

    >>> print(ppkit.ask(index, "What is AMD's quick ratio for FY2022?"))  # doctest: +SKIP
    """
    with online_run(index.config.ask_deadline) as run:
        before = len(run.fallbacks)
        a = _ask(index, question, k, docs=docs, reranker=reranker or default_reranker(index),
                 synthesizer=synthesizer or default_synthesizer(index.config), history=history, **kw)
    if a.trace is None:
        return a
    return replace(a, trace=replace(a.trace, fallbacks=a.trace.fallbacks + run.fallbacks[before:]))


def build_index(paths, folder: Path | str | None = None, *, embedder: Embedder | None = None,
                config: Config | None = None, noise_filter=None, **options) -> Index:
    """Index Markdown documents into ``folder``; see :func:`ppkit.indexing.build.build_index`.

    ``config`` defaults to :meth:`Config.from_env`; ``noise_filter`` to
    :func:`default_noise_filter`. ``options``: ``fresh``, ``overrides``, ``names``,
    ``metadata``, ``progress``, ``save``, ``store``, ``connection``, ``replace``.

    >>> index = ppkit.build_index(["../shared/data/10k/AMD.md"], "/tmp/amd-index")  # doctest: +SKIP
    """
    config = config or Config.from_env()
    embedder = embedder or get_embedder(config.embedder)
    noise_filter = noise_filter or default_noise_filter(config, embedder)
    return cast(Index, _build.build_index(paths, folder, embedder=embedder, config=config,
                                             noise_filter=noise_filter, index_class=Index, **options))


def load_index(folder: Path | str | None = None, *, embedder: Embedder | None = None,
               config: Config | None = None, trust: bool = False, connection: dict | None = None) -> Index:
    """Open an index folder; see :func:`ppkit.indexing.index.load_index` (``trust``: read the document
    paths of an index folder ppkit on this account did not write; ``connection``: its vector store's
    connection options, e.g. ``{"url": ...}`` for a Qdrant server).

    >>> index = ppkit.load_index("/tmp/amd-index")  # doctest: +SKIP
    """
    return cast(Index, _indexing.load_index(folder, embedder=embedder, config=config or Config.from_env(),
                                            index_class=Index, trust=trust, connection=connection))


# the modules whose code decides what goes into an index (tree, noise, chunks, vectors, labels)
_INDEXING_CODE = ("core/markup.py", "documents/tree.py", "documents/noise.py", "documents/chunking.py",
                  "documents/metadata.py", "documents/images.py", "documents/anchors.py", "indexing/lexical.py",
                  "indexing/index.py", "indexing/build.py", "indexing/folder.py", "indexing/embed.py",
                  "indexing/stores/__init__.py", "indexing/stores/base.py", "indexing/stores/faiss.py",
                  "indexing/sections.py")


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
    ``options`` go to :func:`build_index` (e.g. ``workers`` for PDFs).

    >>> index = ppkit.cached_index(sorted(Path("pdfs").glob("*.pdf")), "my-shelf")  # doctest: +SKIP
    """
    config = config or Config.from_env()
    embedder = embedder or get_embedder(config.embedder)
    key = hashlib.sha256(json.dumps({
        "docs": [sha256_file(p) for p in paths], "embedder": embedder.name, "dim": embedder.dim,
        # pointers are absolute paths: a moved data folder is another index
        "paths": [str(Path(p).resolve()) for p in paths],
        "chunk": [config.chunk_size, config.chunk_overlap], "pipeline": PIPELINE_VERSION,
        "format": FORMAT_VERSION, "code": _code_fingerprint(),
        "online_noise": bool(config.use_gemini and config.noise_online),
    }, sort_keys=True).encode()).hexdigest()[:16]
    folder = cache_dir() / "indexes" / f"{name}-{key}"
    with _indexing.index_lock(folder):
        if (folder / "manifest.json").exists():
            try:
                return load_index(folder, embedder=embedder, config=config)
            except (IndexFormatError, ValueError, FileNotFoundError):
                pass  # a corrupt cache entry is rebuilt below
        index = build_index(paths, folder, embedder=embedder, config=config, fresh=True, progress=progress,
                            save=False, **options)
        index.save(folder)
        return index
