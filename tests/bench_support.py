"""Shared helpers of the tests/test_bench_*.py files (not a test module)."""

from __future__ import annotations

from pathlib import Path

import pytest

FIX = Path(__file__).parent / "fixtures"
FIX_DOCS = [FIX / "bench_acme.md", FIX / "bench_globex.md"]
FIX_NAMES = ["Acme", "Globex"]


def bench_dir() -> Path:
    """The reference ``benchmarks/`` folder, or skip (with how to point at it) when it is absent."""
    from ppkit.core.data import DataNotFound, data_dir

    try:
        return data_dir() / "benchmarks"
    except DataNotFound as e:
        pytest.skip(f"reference data not found ({e}); set PPKIT_DATA_DIR")


def tenk_docs():
    """The four 10-Ks as trees and lines (no embedding)."""
    from ppkit.bench.data.loaders import MarkdownDocs
    from ppkit.core.data import tenk_paths

    bench_dir()
    return MarkdownDocs(tenk_paths())


def fixture_docs():
    from ppkit.bench.data.loaders import MarkdownDocs

    return MarkdownDocs(FIX_DOCS, names=FIX_NAMES)


def build_fixture_index(folder: Path):
    """A tiny index over the two fixture filings with the hash embedder (plumbing only)."""
    from ppkit import Config, HashEmbedder, build_index

    return build_index(FIX_DOCS, folder, embedder=HashEmbedder(64), config=Config(embedder="hash", online=False),
                       names=FIX_NAMES, progress=False, fresh=True)
