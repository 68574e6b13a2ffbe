"""Where things are, and which parts the pipeline uses: the one reader of the environment.

No other module of ``ppkit`` reads ``os.environ`` (``tests/test_config_env.py`` checks it): each
setting has one small function here, or a :class:`Config` field filled by :meth:`Config.from_env`.

Paths, built from ``Path(__file__)`` and overridable by the environment:

* ``PPKIT_DATA_DIR``  - the reference corpora (:func:`data_dir_override`, see :mod:`ppkit.core.data`)
* ``PPKIT_CACHE_DIR`` (else ``XDG_CACHE_HOME``) - generated indexes and the LLM response cache (:func:`cache_dir`)
* ``PPKIT_FIGURES_DIR`` - where plots are written (:func:`figures_dir`)
* ``PPKIT_INDEX`` - the index ``ppkit index`` writes and ``ppkit ask`` reads (:func:`index_dir_override`)
* ``PPKIT_SELECTOR`` - the answer selector's weights (``ppkit bench fit-answers --out``) in place of the package's
  (:func:`selector_override`)
* ``PPKIT_CONFIG_DIR`` (else ``XDG_CONFIG_HOME``) - the index-stamp key's folder (:func:`config_dir`)

Switches and keys:

* ``PPKIT_OFFLINE=1`` - never use Gemini or LlamaParse even when a key is set (:func:`offline_forced`)
* ``GEMINI_API_KEY`` / ``GOOGLE_API_KEY`` - switch the LLM roles online (:func:`gemini_key`)
* ``LLAMA_CLOUD_API_KEY`` - LlamaParse for PDF extraction (:func:`llama_cloud_key`)
* ``PPKIT_GEMINI_BASE_URL`` - another Gemini server, e.g. the tests' own (:func:`gemini_base_url`)
* ``PPKIT_QUIET=1`` - no progress bars (:func:`quiet_forced`)
* ``PPKIT_TEST_CRASH_AT`` - test hook: the save/removal/extraction step at which to kill the process (:func:`crash_step`)
* ``PPKIT_API_TOKEN``, ``PPKIT_SERVE_MAX_BODY``, ``PPKIT_SERVE_TRUST_INDEX``, ``PPKIT_SERVE_ALLOWED_HOSTS``,
  ``PPKIT_SERVE_BODY_SECONDS`` - ``ppkit serve``'s bearer token, request size limit, trust of its index folder,
  the host names it answers for and the time a request body may take (:func:`serve_settings`)
* ``PPKIT_PDF_MAX_INFLATED``, ``PPKIT_PDF_MAX_PAGES``, ``PPKIT_PDF_PAGE_SECONDS``, ``PPKIT_PDF_MAX_MEMORY`` - the
  caps on reading one PDF (:func:`pdf_caps`)

:class:`Config` fields (read by :meth:`Config.from_env`, see :data:`ENV_FIELDS`):

* index-time (recorded in an index folder; changing them means rebuilding it): ``PPKIT_EMBEDDER``
* query-time: ``PPKIT_K``, ``PPKIT_SECTION_BUDGET``, ``PPKIT_SEPARATE_FILINGS``, ``PPKIT_RETRIEVAL``,
  ``PPKIT_RERANKER``
* LLM: ``PPKIT_GEMINI_MODEL``, ``PPKIT_GEMINI_BASE_URL``, ``PPKIT_LLM_TIMEOUT``, ``PPKIT_LLM_ATTEMPTS``,
  ``PPKIT_ASK_DEADLINE``

Nothing here has side effects at import time: folders are created by the code
that writes into them.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

from .errors import ConfigError

__all__ = ["PACKAGE_DIR", "project_root", "cache_dir", "figures_dir", "gemini_key", "offline_forced", "Config",
           "RETRIEVAL_MODES", "check_fields", "ENV_FIELDS", "INDEX_TIME_FIELDS", "data_dir_override",
           "index_dir_override", "selector_override", "config_dir", "quiet_forced", "llama_cloud_key",
           "gemini_base_url", "crash_step",
           "ServeSettings", "serve_settings", "export_env", "PdfCaps", "pdf_caps", "LOOPBACK_HOSTS"]

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


def _env_text(name: str) -> str | None:
    """``$name``, or None when it is unset or empty."""
    return os.environ.get(name) or None


def data_dir_override() -> str | None:
    """``$PPKIT_DATA_DIR`` as given (None when unset or empty): the reference data folder to use."""
    return _env_text("PPKIT_DATA_DIR")


def index_dir_override() -> Path | None:
    """``$PPKIT_INDEX`` (None when unset or empty): the index folder ``ppkit index`` writes and ``ppkit ask`` reads."""
    env = _env_text("PPKIT_INDEX")
    return Path(env).expanduser() if env else None


def selector_override() -> Path | None:
    """``$PPKIT_SELECTOR`` (None when unset or empty): a selector.json fitted by ``ppkit bench fit-answers``."""
    env = _env_text("PPKIT_SELECTOR")
    return Path(env).expanduser() if env else None


def config_dir() -> Path:
    """ppkit's settings folder (the index-stamp key): ``$PPKIT_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/ppkit``,
    else ``~/.config/ppkit``."""
    env = _env_text("PPKIT_CONFIG_DIR")
    return Path(env).expanduser() if env else Path(os.environ.get("XDG_CONFIG_HOME", Path.home() / ".config")) / "ppkit"


def quiet_forced() -> bool:
    """``PPKIT_QUIET`` is set (to anything but ``0``): no progress bars (the test suite sets it)."""
    return os.environ.get("PPKIT_QUIET", "").strip() not in ("", "0")


def llama_cloud_key() -> str | None:
    """``$LLAMA_CLOUD_API_KEY`` (None when unset or empty): LlamaParse's key. ``PPKIT_OFFLINE`` is the caller's check."""
    return _env_text("LLAMA_CLOUD_API_KEY")


def gemini_base_url() -> str | None:
    """``$PPKIT_GEMINI_BASE_URL`` (None when unset or empty): the Gemini server to talk to instead of Google's."""
    return _env_text("PPKIT_GEMINI_BASE_URL")


def crash_step() -> str | None:
    """Test hook: ``$PPKIT_TEST_CRASH_AT``, the step of a save (:data:`ppkit.indexing.folder.CRASH_STEPS`), a
    removal (:data:`ppkit.indexing.remove.REMOVE_CRASH_STEPS`) or an extraction at which the process kills itself."""
    return os.environ.get("PPKIT_TEST_CRASH_AT")


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")  # the names a server on this machine always answers for


@dataclass(frozen=True)
class ServeSettings:
    """``ppkit serve``'s settings (:func:`serve_settings` reads them from the environment).

    Attributes:
        token: the bearer token every route but ``/healthz`` requires (``PPKIT_API_TOKEN``; None: no
            authentication, allowed on a loopback address only).
        max_body: the largest request body accepted, in bytes (``PPKIT_SERVE_MAX_BODY``, default 64 KiB).
        max_upload: the largest document upload (``POST /v1/documents``) accepted, in bytes
            (``PPKIT_SERVE_MAX_UPLOAD``, default 64 MiB).
        trust_index: read the documents of an index folder ppkit on this account did not write
            (``PPKIT_SERVE_TRUST_INDEX=1``; ``ppkit serve --trust-index`` sets it for its worker processes).
        allowed_hosts: the host names a request's ``Host`` header may name (:mod:`ppkit.serve.origin`); None: no
            Host check (an app made in code). :func:`serve_settings` gives :data:`LOOPBACK_HOSTS` and the names in
            ``PPKIT_SERVE_ALLOWED_HOSTS`` (comma-separated; ``ppkit serve`` adds the address it listens on and each
            ``--allowed-host``).
        any_ip: a ``Host`` written as an IP address is allowed too (a server listening on every address;
            ``PPKIT_SERVE_ANY_IP=1``).
        body_seconds: the seconds a request body may take to arrive, plus one per 64 KiB of it
            (``PPKIT_SERVE_BODY_SECONDS``, default 30): a body sent a byte at a time is cut off (408).
    """

    token: str | None = field(default=None, repr=False)
    max_body: int = 64 * 1024
    trust_index: bool = False
    max_upload: int = 64 * 1024 * 1024
    allowed_hosts: tuple[str, ...] | None = None
    any_ip: bool = False
    body_seconds: float = 30.0

    def __post_init__(self):
        if not (math.isfinite(self.body_seconds) and self.body_seconds > 0):
            raise ConfigError(f"PPKIT_SERVE_BODY_SECONDS={self.body_seconds}: give positive, finite seconds")
        if self.max_body < 1024:
            raise ConfigError(f"PPKIT_SERVE_MAX_BODY={self.max_body}: give at least 1024 bytes")
        if self.max_upload < 1024:
            raise ConfigError(f"PPKIT_SERVE_MAX_UPLOAD={self.max_upload}: give at least 1024 bytes")


def serve_settings() -> ServeSettings:
    """:class:`ServeSettings` from ``PPKIT_API_TOKEN``, ``PPKIT_SERVE_MAX_BODY``, ``PPKIT_SERVE_MAX_UPLOAD``,
    ``PPKIT_SERVE_TRUST_INDEX``, ``PPKIT_SERVE_ALLOWED_HOSTS``, ``PPKIT_SERVE_ANY_IP`` and
    ``PPKIT_SERVE_BODY_SECONDS``."""
    max_body = _env_field("PPKIT_SERVE_MAX_BODY", int)
    max_upload = _env_field("PPKIT_SERVE_MAX_UPLOAD", int)
    body_seconds = _env_field("PPKIT_SERVE_BODY_SECONDS", float)
    trust, any_ip = (os.environ.get(v, "").strip().casefold() not in ("", "0", "false", "no")
                     for v in ("PPKIT_SERVE_TRUST_INDEX", "PPKIT_SERVE_ANY_IP"))
    hosts = [h.strip() for h in os.environ.get("PPKIT_SERVE_ALLOWED_HOSTS", "").split(",") if h.strip()]
    return ServeSettings(token=_env_text("PPKIT_API_TOKEN"), max_body=ServeSettings.max_body if max_body is None
                         else max_body, trust_index=trust,
                         max_upload=ServeSettings.max_upload if max_upload is None else max_upload,
                         allowed_hosts=tuple(dict.fromkeys([*LOOPBACK_HOSTS, *hosts])), any_ip=any_ip,
                         body_seconds=ServeSettings.body_seconds if body_seconds is None else body_seconds)


@dataclass(frozen=True)
class PdfCaps:
    """The caps on reading one PDF (:func:`pdf_caps` reads them from the environment; see
    :mod:`ppkit.documents.pdfguard`). Past one, reading stops with a line naming it and its variable.

    Attributes:
        inflated: the bytes a PDF's streams (page contents, fonts, forms; not images) may decompress to, in all
            (``PPKIT_PDF_MAX_INFLATED``, default 256 MiB; the largest of the 77 reference PDFs needs 30 MB).
        pages: the pages a PDF may have (``PPKIT_PDF_MAX_PAGES``, default 100,000).
        page_seconds: the seconds one page may take to read (``PPKIT_PDF_PAGE_SECONDS``, default 60; a 10-K
            page takes about 0.1 s).
        memory: the resident bytes the process reading a PDF may reach (``PPKIT_PDF_MAX_MEMORY``, default 1 GiB;
            Linux only: checked from ``/proc``).
    """

    inflated: int = 256 * 1024 * 1024
    pages: int = 100_000
    page_seconds: float = 60.0
    memory: int = 1024 * 1024 * 1024

    def __post_init__(self):
        for name, var, low in (("inflated", "PPKIT_PDF_MAX_INFLATED", 1024), ("pages", "PPKIT_PDF_MAX_PAGES", 1),
                               ("memory", "PPKIT_PDF_MAX_MEMORY", 16 * 1024 * 1024)):
            if getattr(self, name) < low:
                raise ConfigError(f"{var}={getattr(self, name)}: give at least {low}")
        if not (math.isfinite(self.page_seconds) and self.page_seconds > 0):
            raise ConfigError(f"PPKIT_PDF_PAGE_SECONDS={self.page_seconds}: give positive, finite seconds")


def pdf_caps() -> PdfCaps:
    """:class:`PdfCaps` from ``PPKIT_PDF_MAX_INFLATED``, ``PPKIT_PDF_MAX_PAGES``, ``PPKIT_PDF_PAGE_SECONDS`` and
    ``PPKIT_PDF_MAX_MEMORY`` (each unset or blank: its default)."""
    read = {"inflated": ("PPKIT_PDF_MAX_INFLATED", int), "pages": ("PPKIT_PDF_MAX_PAGES", int),
            "page_seconds": ("PPKIT_PDF_PAGE_SECONDS", float), "memory": ("PPKIT_PDF_MAX_MEMORY", int)}
    return PdfCaps(**{k: v for k, (var, kind) in read.items() if (v := _env_field(var, kind)) is not None})


def export_env(**variables: str) -> None:
    """Set environment variables of this process for the processes it starts next (``ppkit serve --workers N``
    hands its index folder and options to its worker processes this way)."""
    os.environ.update(variables)


def check_fields(cls, names, what: str) -> None:
    """Refuse names that are not fields of the dataclass ``cls``, listing the ones that are."""
    unknown = sorted(set(names) - {f.name for f in fields(cls)})
    if unknown:
        raise ConfigError(f"unknown {what} {unknown}; the {what.split()[0]} fields are: "
                          + ", ".join(f.name for f in fields(cls)))


_KINDS = {str: "text", int: "an integer", float: "a number (seconds)"}

# Config field -> the variable Config.from_env reads it from, and the field's type; the groups say when a
# field matters (a field not listed here is set in code only).
ENV_FIELDS: dict[str, tuple[str, type]] = {
    # index-time (recorded in the index folder: see INDEX_TIME_FIELDS)
    "embedder": ("PPKIT_EMBEDDER", str),
    # query-time: retrieval and what the synthesizer is sent
    "k": ("PPKIT_K", int),
    "section_budget": ("PPKIT_SECTION_BUDGET", int),
    "separate_filings": ("PPKIT_SEPARATE_FILINGS", int),
    "retrieval": ("PPKIT_RETRIEVAL", str),
    "reranker": ("PPKIT_RERANKER", str),
    # query-time: the LLM
    "gemini_model": ("PPKIT_GEMINI_MODEL", str),
    "gemini_base_url": ("PPKIT_GEMINI_BASE_URL", str),
    "llm_timeout": ("PPKIT_LLM_TIMEOUT", float),
    "llm_attempts": ("PPKIT_LLM_ATTEMPTS", int),
    "ask_deadline": ("PPKIT_ASK_DEADLINE", float),
}

# numeric fields: (name, lowest value, what to give instead); each must also be a finite number
_RANGES = (
    ("chunk_size", 1, "give characters per chunk, at least 1"),
    ("chunk_overlap", 0, "give characters, 0 or more"),
    ("recall_chunks", 1, "give a number of chunks, at least 1"),
    ("candidates", 1, "give a number of sections, at least 1"),
    ("separate_filings", 0, "give 0 (off) or a number of filings"),
    ("k", 1, "give a number of sections, at least 1"),
    ("section_budget", 1, "give characters per section, at least 1 (default 6000)"),
    ("gemini_embed_dim", 1, "give a number of dimensions, at least 1"),
    ("llm_timeout", 0, "give positive, finite seconds"),
    ("llm_attempts", 1, "give at least 1 (the first try)"),
    ("ask_deadline", 0, "give finite seconds, or 0 for no deadline"),
)

# the fields that decide what goes into an index; an index folder records them (its manifest's "embedder"
# and "settings"), and opening it with a Config that sets one explicitly to another value is an error
INDEX_TIME_FIELDS = ("embedder", "chunk_size", "chunk_overlap")


def _env_field(name: str, kind: type):
    """``$name`` as ``kind``, or None when unset or blank; a value of another type is a ConfigError."""
    v = os.environ.get(name)
    if v is None or v.strip() == "":
        return None
    try:
        return kind(v)
    except ValueError:
        raise ConfigError(f"{name}={v!r} is not {_KINDS[kind]}") from None


@dataclass(frozen=True)
class Config:
    """Which parts the pipeline uses and their settings: every switch is a field.

    ``Config()`` is the offline default. :meth:`from_env` reads the fields' ``PPKIT_*`` variables
    (:data:`ENV_FIELDS`) and the Gemini key; the entry points (``ppkit`` commands,
    :func:`ppkit.build_index`, :func:`ppkit.load_index`, :func:`ppkit.reference_index`) call
    it when no Config is given and pass the result down.

    Attributes:
        online: the LLM roles run on Gemini (``from_env``: a key is set and ``PPKIT_OFFLINE``
            is not). Each role can be kept offline on its own with the ``*_online`` fields.
        embedder: ``"local"`` (MiniLM shipped in a wheel; ``"local-fp32"``/``"local-bf16"``/``"local-int8"`` pin
            its precision), ``"gemini"``, or ``"hash"``
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
        explicit: the names of the fields that were set rather than left at their defaults: every field
            whose value is not the default, plus those set by a variable in :meth:`from_env`, by its
            overrides or by :meth:`set` even to the default's value (``Config(k=5)`` cannot be told from
            ``Config()``: use ``Config().set(k=5)``). It carries over through ``dataclasses.replace``, is
            left out of comparisons, ``repr`` and :meth:`to_dict`, and is what lets an index refuse a
            Config that contradicts its index-time settings while the defaults open any index.
    """

    # The field order is the order of to_dict(); the comments group the fields by when they matter.
    # -- which parts: the LLM roles online or not
    online: bool = False
    # -- index-time (INDEX_TIME_FIELDS: recorded in the index folder, a change means a rebuild)
    embedder: str = "local"
    chunk_size: int = 2000
    chunk_overlap: int = 200
    # -- query-time: retrieval
    recall_chunks: int = 200
    candidates: int = 50
    separate_filings: int = 4
    k: int = 5
    section_budget: int = 6000
    retrieval: str = "dense"
    reranker: str = "structural"
    strip_names: bool = False
    # -- query-time: which LLM roles run online (when ``online``)
    noise_online: bool = True  # the noise filter runs at index time
    analyze_online: bool = True
    rerank_online: bool = True
    synth_online: bool = True
    rewrite_online: bool = True
    # -- the LLM client (query-time; index-time too for online noise filtering)
    gemini_model: str = "gemini-2.5-flash"
    gemini_embed_model: str = "gemini-embedding-001"
    gemini_embed_dim: int = 1536
    gemini_base_url: str | None = None
    llm_timeout: float = 60.0
    llm_attempts: int = 5
    ask_deadline: float = 120.0
    # -- bookkeeping, not a setting: the names of the fields set explicitly (see the class docstring)
    explicit: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    def __post_init__(self):
        if self.retrieval not in RETRIEVAL_MODES:
            raise ConfigError(f"retrieval={self.retrieval!r}: use one of {', '.join(RETRIEVAL_MODES)}")
        if self.reranker not in RERANKERS:
            raise ConfigError(f"reranker={self.reranker!r}: use one of {', '.join(RERANKERS)}")
        for name, low, what in _RANGES:  # every number finite and in range, whoever set it
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < low \
                    or (name == "llm_timeout" and v == 0):
                raise ConfigError(f"{name}={v!r}: {what}")  # from_env names the variable instead
        if self.chunk_overlap >= self.chunk_size:
            raise ConfigError(f"chunk_overlap={self.chunk_overlap!r}: give less than chunk_size ({self.chunk_size})")
        changed = {f.name for f in fields(self) if f.name != "explicit" and getattr(self, f.name) != f.default}
        object.__setattr__(self, "explicit", frozenset(self.explicit) | changed)

    @classmethod
    def from_env(cls, **overrides) -> Config:
        """The dataclass defaults, then the environment, then ``overrides``.

        Reads ``PPKIT_OFFLINE`` and ``GEMINI_API_KEY``/``GOOGLE_API_KEY`` (``online`` when a key is set), and
        one variable per field of :data:`ENV_FIELDS` (``PPKIT_EMBEDDER``, ``PPKIT_K``, ...); an unset or blank
        variable leaves the field's default. The fields a variable or an override sets are ``explicit``
        (``online=None`` as an override: from the key, as without it).
        """
        check_fields(cls, overrides, "Config field(s)")
        from_vars = {name: v for name, (var, kind) in ENV_FIELDS.items() if (v := _env_field(var, kind)) is not None}
        try:
            env = cls(online=gemini_key() is not None, **from_vars, explicit=frozenset(from_vars))
        except ConfigError as e:  # a field set by its variable: name the variable, as the user wrote it
            var = next((ENV_FIELDS[n][0] for n in from_vars if str(e).startswith(f"{n}=")), None)
            if var is None:
                raise
            raise ConfigError(f"${var}={os.environ[var]!r}: {str(e).split(': ', 1)[1]}") from None
        return env.set(
            **{k: v for k, v in overrides.items() if k != "online" or v is not None})

    def set(self, **changes) -> Config:
        """A copy with ``changes``, which count as set explicitly (``dataclasses.replace`` marks only
        values other than the defaults)."""
        if "explicit" in changes:
            raise ConfigError("explicit is bookkeeping, not a setting: set the fields themselves")
        return replace(self, **changes, explicit=self.explicit | frozenset(changes))

    def to_dict(self) -> dict:
        """The settings (every field but ``explicit``), in field order."""
        d = asdict(self)
        del d["explicit"]
        return d


def store_connection_env(variables: dict[str, str]) -> dict[str, str]:
    """``{connection option: value}`` from the environment for a vector store's connection.

    ``variables`` is ``{environment variable: connection option}`` as a store module declares it
    (e.g. the Qdrant store's ``{"QDRANT_URL": "url", "QDRANT_API_KEY": "api_key"}``); unset or empty
    variables are left out. The store decides when these defaults apply (see
    :mod:`ppkit.indexing.stores`); an index folder never supplies them.
    """
    return {option: os.environ[var] for var, option in variables.items() if os.environ.get(var)}


def financebench_markdown_dir() -> Path | None:
    """``$PPKIT_FINANCEBENCH_MD``: a folder of the FinanceBench filings as Markdown (``ppkit extract``
    output, ``<doc_name>.md``) that ``ppkit bench scale`` measures; None when unset or empty."""
    value = os.environ.get("PPKIT_FINANCEBENCH_MD")
    return Path(value) if value else None


def child_env(**extra: str) -> dict[str, str]:
    """The environment for a child process: a copy of this process's, with ``extra`` set
    (e.g. ``child_env(PPKIT_QUIET="1")``)."""
    return {**os.environ, **extra}
