"""Where the reference corpora are.

Looked up in this order:

1. ``$PPKIT_DATA_DIR`` (a folder laid out like ``shared/data``),
2. ``../shared/data`` beside the checkout (how developers and CI have it),
3. a download cache (``<cache>/data``), filled by :func:`download` from the public
   Proxy-Pointer-RAG repository (MIT) where neither of the above exists.

This module never writes into the first two: they may be read-only.
"""

from __future__ import annotations

import urllib.request
from pathlib import Path

from .config import cache_dir, data_dir_override, project_root
from .errors import MissingFile

__all__ = ["data_dir", "tenk_paths", "paper_paths", "benchmark_path", "financebench_dir", "download", "DataNotFound"]

TENK_COMPANIES = ("AMD", "AMEX", "Boeing", "PepsiCo")
PAPERS = ("CLIP", "Galore", "NemoBot", "VectorFusion", "VectorPainter")

# Public sources for a machine with neither PPKIT_DATA_DIR nor ../shared/data.
# Relative path in the data folder -> URL. Only the five papers' Markdown is listed so far
# (its address in the public repository is known); the 10-K Markdown, the paper images, the
# benchmark files and the PDFs must be put in place by hand (see shared/data/README.md).
_REPO = "https://raw.githubusercontent.com/Proxy-Pointer/Proxy-Pointer-RAG/main/"
SOURCES: dict[str, str] = {
    **{f"papers/{p}/{p}.md": f"{_REPO}MultiModal/data/extracted_papers/{p}/{p}.md" for p in PAPERS},
}


class DataNotFound(MissingFile):
    """The reference data could not be located."""


def _candidates() -> list[Path]:
    out = []
    env = data_dir_override()
    if env:
        out.append(Path(env).expanduser())
    root = project_root()
    if root is not None:
        out.append(root.parent / "shared" / "data")
    out.append(Path.cwd().parent / "shared" / "data")
    out.append(cache_dir() / "data")
    return out


def data_dir(root: Path | None = None) -> Path:
    """The folder holding ``10k/``, ``papers/`` and ``benchmarks/``: ``root`` when given, else
    ``$PPKIT_DATA_DIR``, else ``../shared/data`` beside the checkout (or the working folder),
    else the download cache.

    Raises:
        DataNotFound: with what was tried and how to fix it.
    """
    if root is not None:
        if not Path(root).is_dir():
            raise DataNotFound(f"reference data folder {root} does not exist")
        return Path(root).resolve()
    env = data_dir_override()
    if env and not Path(env).expanduser().is_dir():
        raise DataNotFound(f"PPKIT_DATA_DIR={env!r} is not a folder")
    tried = _candidates()
    for c in tried:
        if (c / "10k").is_dir() or (c / "benchmarks").is_dir() or (c / "papers").is_dir():
            return c.resolve()
    raise DataNotFound(
        "reference data not found; looked in: " + ", ".join(str(t) for t in tried)
        + ". Set PPKIT_DATA_DIR to a folder laid out like shared/data (10k/, papers/, benchmarks/); "
        "ppkit.core.data.download() fetches only the five papers' Markdown."
    )


def tenk_paths(root: Path | None = None) -> list[Path]:
    """The four FY2022 10-K Markdown files (AMD, AMEX, Boeing, PepsiCo)."""
    d = data_dir(root) / "10k"
    paths = [d / f"{c}.md" for c in TENK_COMPANIES]
    missing = [p for p in paths if not p.is_file()]
    if missing:
        raise DataNotFound(f"missing 10-K Markdown: {', '.join(map(str, missing))}")
    return paths


def paper_paths(root: Path | None = None) -> list[Path]:
    """The five research papers' Markdown files."""
    d = data_dir(root) / "papers"
    paths = [d / p / f"{p}.md" for p in PAPERS]
    missing = [p for p in paths if not p.is_file()]
    if missing:
        raise DataNotFound(f"missing paper Markdown: {', '.join(map(str, missing))}")
    return paths


def financebench_dir(root: Path | None = None) -> Path:
    """``financebench/`` of the reference data: ``pdfs/`` (the filings), ``questions.jsonl``, ``documents.jsonl``."""
    d = data_dir(root) / "financebench"
    if not (d / "pdfs").is_dir() or not (d / "questions.jsonl").is_file():
        raise DataNotFound(f"no FinanceBench shelf in {d} (expected pdfs/ and questions.jsonl)")
    return d


def benchmark_path(name: str, root: Path | None = None) -> Path:
    """A file in ``benchmarks/``, e.g. ``benchmark_path("comprehensive_questions.xlsx")``."""
    p = data_dir(root) / "benchmarks" / name
    if not p.exists():
        raise DataNotFound(f"no benchmark file {p}")
    return p


def download(dest: Path | None = None, *, timeout: float = 60.0) -> Path:
    """Fetch the corpora listed in ``SOURCES`` into ``dest`` (default: the cache).

    Files already present are kept. Returns the data folder. Needs network
    access; on failure it says which file could not be fetched.
    """
    dest = Path(dest) if dest is not None else cache_dir() / "data"
    for rel, url in SOURCES.items():
        target = dest / rel
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(target.suffix + ".part")
        try:
            with urllib.request.urlopen(url, timeout=timeout) as r, open(tmp, "wb") as f:
                f.write(r.read())
        except OSError as e:
            raise DataNotFound(f"could not download {url} -> {target}: {e}") from None
        tmp.replace(target)
    return dest
