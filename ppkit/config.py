"""Where things are, and which parts the pipeline uses.

One module knows the paths (project root, data, figures, cache), built from
``Path(__file__)`` and overridable by the environment:

* ``PPKIT_DATA_DIR``  - the reference corpora (see :mod:`ppkit.data`)
* ``PPKIT_CACHE_DIR`` - generated indexes and the LLM response cache
* ``PPKIT_FIGURES_DIR`` - where plots are written
* ``PPKIT_OFFLINE=1`` - never use Gemini even when a key is set
* ``GEMINI_API_KEY`` / ``GOOGLE_API_KEY`` - switch the LLM roles online

Nothing here has side effects at import time: folders are created by the code
that writes into them.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

__all__ = ["PACKAGE_DIR", "project_root", "cache_dir", "figures_dir", "gemini_key", "Config"]

PACKAGE_DIR = Path(__file__).resolve().parent


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


def gemini_key() -> str | None:
    """The Gemini key from the environment, unless ``PPKIT_OFFLINE`` is set."""
    if os.environ.get("PPKIT_OFFLINE", "").strip() not in ("", "0", "false", "no"):
        return None
    return os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY") or None


def _env_int(name: str, default: int) -> int:
    v = os.environ.get(name)
    if v is None or v.strip() == "":
        return default
    try:
        return int(v)
    except ValueError:
        raise ValueError(f"{name}={v!r} is not an integer") from None


@dataclass(frozen=True)
class Config:
    """Which parts the pipeline uses and their settings.

    ``online=None`` means: online when a Gemini key is set (and ``PPKIT_OFFLINE``
    is not). Each LLM role can be forced offline on its own.

    Attributes:
        embedder: ``"local"`` (MiniLM shipped in a wheel), ``"gemini"``, or ``"hash"``
            (a tiny deterministic embedder for plumbing tests only).
        chunk_size / chunk_overlap: characters per chunk and overlap between chunks.
        recall_chunks: stage-1 chunk recall (200 in the reference).
        candidates: sections kept after dedup (50 in the reference).
        k: sections handed to the synthesizer.
        section_budget: characters of one section sent to the synthesizer.
    """

    online: bool | None = None
    embedder: str = "local"
    chunk_size: int = 2000
    chunk_overlap: int = 200
    recall_chunks: int = 200
    candidates: int = 50
    k: int = 5
    section_budget: int = 6000
    noise_online: bool = True
    rerank_online: bool = True
    synth_online: bool = True
    gemini_model: str = "gemini-2.5-flash"
    gemini_embed_model: str = "gemini-embedding-001"
    gemini_embed_dim: int = 1536
    gemini_base_url: str | None = None
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_env(cls, **overrides) -> Config:
        """Defaults from ``PPKIT_*`` variables, then ``overrides``."""
        cfg = cls(
            embedder=os.environ.get("PPKIT_EMBEDDER", "local"),
            k=_env_int("PPKIT_K", 5),
            section_budget=_env_int("PPKIT_SECTION_BUDGET", 6000),
            gemini_model=os.environ.get("PPKIT_GEMINI_MODEL", "gemini-2.5-flash"),
            gemini_base_url=os.environ.get("PPKIT_GEMINI_BASE_URL") or None,
        )
        return replace(cfg, **overrides)

    @property
    def use_gemini(self) -> bool:
        """True when the LLM roles run online."""
        if self.online is None:
            return gemini_key() is not None
        return self.online

    def to_dict(self) -> dict:
        return asdict(self)
