"""Where things are, and which parts the pipeline uses.

One module knows the paths (project root, data, figures, cache), built from
``Path(__file__)`` and overridable by the environment:

* ``PPKIT_DATA_DIR``  - the reference corpora (see :mod:`ppkit.core.data`)
* ``PPKIT_CACHE_DIR`` - generated indexes and the LLM response cache
* ``PPKIT_FIGURES_DIR`` - where plots are written
* ``PPKIT_OFFLINE=1`` - never use Gemini even when a key is set
* ``GEMINI_API_KEY`` / ``GOOGLE_API_KEY`` - switch the LLM roles online

Nothing here has side effects at import time: folders are created by the code
that writes into them.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from .errors import ConfigError

__all__ = ["PACKAGE_DIR", "project_root", "cache_dir", "figures_dir", "gemini_key", "offline_forced", "Config",
           "RETRIEVAL_MODES", "check_fields"]

RETRIEVAL_MODES = ("dense", "bm25", "hybrid", "dense+static", "hybrid+static")  # stage-1 recall ("+static": the static channel too)
RERANKERS = ("structural", "fitted")  # offline stage 2

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # the ppkit package folder


def project_root() -> Path | None:
    """The checkout this package runs from, or None for an installed wheel."""
    root = PACKAGE_DIR.parent
    return root if (root / "pyproject.toml").is_file() else None


def cache_dir() -> Path:
    """Generated indexes and caches: ``$PPKIT_CACHE_DIR``, else ``<checkout>/.ppkit``, else ``~/.cache/ppkit``."""
    env = os.environ.get("PPKIT_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    root = project_root()
    if root is not None:
        return root / ".ppkit"
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ppkit"


def figures_dir() -> Path:
    """Where plots go: ``$PPKIT_FIGURES_DIR``, else ``<checkout>/figures``, else the cache."""
    env = os.environ.get("PPKIT_FIGURES_DIR")
    if env:
        return Path(env).expanduser()
    root = project_root()
    return (root / "figures") if root is not None else cache_dir() / "figures"


def offline_forced() -> bool:
    """``PPKIT_OFFLINE`` is set (to anything but ``0``/``false``/``no``): never go online."""
    return os.environ.get("PPKIT_OFFLINE", "").strip().casefold() not in ("", "0", "false", "no")


def gemini_key() -> str | None:
    """The Gemini key from the environment, unless ``PPKIT_OFFLINE`` is set."""
    if offline_forced():
        return None
    return os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY") or None


def check_fields(cls, names, what: str) -> None:
    """Refuse names that are not fields of the dataclass ``cls``, listing the ones that are."""
    unknown = sorted(set(names) - {f.name for f in fields(cls)})
    if unknown:
        raise ConfigError(f"unknown {what} {unknown}; the {what.split()[0]} fields are: "
                          + ", ".join(f.name for f in fields(cls)))


def _env_number(name: str, default, kind=int, what: str = "an integer"):
    """``$name`` as ``kind`` (``default`` when unset or empty); anything else is a ConfigError saying ``what`` it must be."""
    v = os.environ.get(name)
    if v is None or v.strip() == "":
        return default
    try:
        return kind(v)
    except ValueError:
        raise ConfigError(f"{name}={v!r} is not {what}") from None


def _env_int(name: str, default: int) -> int:
    return _env_number(name, default)


def _env_float(name: str, default: float) -> float:
    return _env_number(name, default, float, "a number (seconds)")


@dataclass(frozen=True)
class Config:
    """Which parts the pipeline uses and their settings: every switch is a field.

    ``Config()`` is the offline default. :meth:`from_env` is the one place that reads the
    ``PPKIT_*`` variables and the Gemini key; the entry points (``ppkit`` commands,
    :func:`ppkit.build_index`, :func:`ppkit.load_index`, :func:`ppkit.reference_index`) call
    it when no Config is given and pass the result down.

    Attributes:
        online: the LLM roles run on Gemini (``from_env``: a key is set and ``PPKIT_OFFLINE``
            is not). Each role can be kept offline on its own with the ``*_online`` fields.
        embedder: ``"local"`` (MiniLM shipped in a wheel; ``"local-fp32"``/``"local-bf16"`` pin its precision),
            ``"gemini"``, or ``"hash"``
            (a tiny deterministic embedder for plumbing tests only).
        chunk_size / chunk_overlap: characters per chunk and overlap between chunks.
        recall_chunks: stage-1 chunk recall (200 in the reference).
        candidates: sections kept after dedup (50 in the reference).
        separate_filings: a search scope of 2 to this many filings (a company's annual report beside its
            full-year release, say) gives each filing a stage 1 of its own (``recall_chunks`` chunks and
            ``candidates`` sections, as a store of that filing alone would), the lists merged round-robin for
            stage 2; a larger scope (a question naming no company) shares one stage 1; 0 or 1: always shared.
        k: sections handed to the synthesizer.
        section_budget: characters of one section sent to the synthesizer.
        retrieval: stage-1 recall: ``"dense"``, ``"bm25"``, ``"hybrid"``, or ``"dense+static"`` / ``"hybrid+static"``
            (the static-embedding channel fused in too, :mod:`ppkit.retrieval.hybrid`).
        reranker: offline stage 2: ``"structural"`` (hand-set weights) or ``"fitted"`` (a logistic model
            over the same features, ``ppkit.retrieval.rerank_fitted``); the Gemini re-ranker's fallback too.
        strip_names: search with the question minus the names that became document filters
            (measured worse on the 10-Ks, so off).
        noise_online / analyze_online / rerank_online / synth_online / rewrite_online: per LLM
            role, whether it runs online when ``online`` is true.
        gemini_model / gemini_embed_model / gemini_embed_dim / gemini_base_url: the Gemini settings
            (``gemini_base_url`` points the client at another server, e.g. the tests' own).
        llm_timeout: seconds one Gemini HTTP request may take (then it is retried).
        llm_attempts: HTTP attempts per Gemini call, the first included.
        ask_deadline: seconds for all the Gemini calls of one ``ask`` (or one benchmark question)
            together; past it no call starts and the online stages left fall back to their
            offline twins (0: no deadline).
    """

    online: bool = False
    embedder: str = "local"
    chunk_size: int = 2000
    chunk_overlap: int = 200
    recall_chunks: int = 200
    candidates: int = 50
    separate_filings: int = 4
    k: int = 5
    section_budget: int = 6000
    retrieval: str = "dense"
    reranker: str = "structural"
    strip_names: bool = False
    noise_online: bool = True
    analyze_online: bool = True
    rerank_online: bool = True
    synth_online: bool = True
    rewrite_online: bool = True
    gemini_model: str = "gemini-2.5-flash"
    gemini_embed_model: str = "gemini-embedding-001"
    gemini_embed_dim: int = 1536
    gemini_base_url: str | None = None
    llm_timeout: float = 60.0
    llm_attempts: int = 5
    ask_deadline: float = 120.0

    def __post_init__(self):
        if self.retrieval not in RETRIEVAL_MODES:
            raise ConfigError(f"retrieval={self.retrieval!r}: use one of {', '.join(RETRIEVAL_MODES)}")
        if self.reranker not in RERANKERS:
            raise ConfigError(f"reranker={self.reranker!r}: use one of {', '.join(RERANKERS)}")
        if not self.llm_timeout > 0:
            raise ConfigError(f"llm_timeout={self.llm_timeout!r}: give positive seconds")
        if self.separate_filings < 0:
            raise ConfigError(f"separate_filings={self.separate_filings!r}: give 0 (off) or a number of filings")
        if self.llm_attempts < 1:
            raise ConfigError(f"llm_attempts={self.llm_attempts!r}: give at least 1 (the first try)")
        if self.ask_deadline < 0:
            raise ConfigError(f"ask_deadline={self.ask_deadline!r}: give seconds, or 0 for no deadline")

    @classmethod
    def from_env(cls, **overrides) -> Config:
        """Defaults from the environment, then ``overrides``.

        Reads ``PPKIT_OFFLINE``, ``GEMINI_API_KEY``/``GOOGLE_API_KEY`` (online when a key is set),
        ``PPKIT_EMBEDDER``, ``PPKIT_K``, ``PPKIT_SECTION_BUDGET``, ``PPKIT_RETRIEVAL``, ``PPKIT_RERANKER``,
        ``PPKIT_SEPARATE_FILINGS``,
        ``PPKIT_GEMINI_MODEL``, ``PPKIT_GEMINI_BASE_URL``, ``PPKIT_LLM_TIMEOUT``, ``PPKIT_LLM_ATTEMPTS``
        and ``PPKIT_ASK_DEADLINE``.
        """
        check_fields(cls, overrides, "Config field(s)")
        cfg = cls(
            online=gemini_key() is not None,
            embedder=os.environ.get("PPKIT_EMBEDDER", "local"),
            k=_env_int("PPKIT_K", 5),
            section_budget=_env_int("PPKIT_SECTION_BUDGET", 6000),
            separate_filings=_env_int("PPKIT_SEPARATE_FILINGS", 4),
            retrieval=os.environ.get("PPKIT_RETRIEVAL", "dense") or "dense",
            reranker=os.environ.get("PPKIT_RERANKER", "structural") or "structural",
            gemini_model=os.environ.get("PPKIT_GEMINI_MODEL", "gemini-2.5-flash"),
            gemini_base_url=os.environ.get("PPKIT_GEMINI_BASE_URL") or None,
            llm_timeout=_env_float("PPKIT_LLM_TIMEOUT", 60.0),
            llm_attempts=_env_int("PPKIT_LLM_ATTEMPTS", 5),
            ask_deadline=_env_float("PPKIT_ASK_DEADLINE", 120.0),
        )
        return replace(cfg, **{k: v for k, v in overrides.items() if k != "online" or v is not None})

    @property
    def use_gemini(self) -> bool:
        """True when the LLM roles run online."""
        return self.online

    def to_dict(self) -> dict:
        return asdict(self)


def financebench_markdown_dir() -> Path | None:
    """``$PPKIT_FINANCEBENCH_MD``: a folder of the FinanceBench filings as Markdown (``ppkit extract``
    output, ``<doc_name>.md``) that ``ppkit bench scale`` measures; None when unset or empty."""
    value = os.environ.get("PPKIT_FINANCEBENCH_MD")
    return Path(value) if value else None


def child_env(**extra: str) -> dict[str, str]:
    """The environment for a child process: a copy of this process's, with ``extra`` set
    (e.g. ``child_env(PPKIT_QUIET="1")``)."""
    return {**os.environ, **extra}
