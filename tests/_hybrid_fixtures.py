"""Shared helpers for the hybrid-retrieval tests: two tiny hand-written 10-Ks and an index of them.

``Alpha.md`` (ticker AWC, Items as headings) and ``Beta.md`` (ticker BFI, Items as bold lines,
a sidecar ``Beta.meta.json`` adding the alias "BetaCo") live in ``tests/fixtures/hybrid/``.
The index uses the HashEmbedder (a plumbing stand-in, not a retrieval model).
"""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "hybrid"
DOCS = [FIXTURES / "Alpha.md", FIXTURES / "Beta.md"]


def make_index(folder=None, *, store: str = "faiss", dim: int = 64):
    from ppkit import HashEmbedder, build_index

    return build_index(DOCS, folder, embedder=HashEmbedder(dim), progress=False, store=store,
                       save=folder is not None)


@pytest.fixture(scope="module")
def fixture_index(tmp_path_factory):
    return make_index(tmp_path_factory.mktemp("hybrid") / "index")


def real_paths():
    """The reference 10-Ks, or skip when the data folder is not there."""
    from ppkit.core import data

    try:
        return data.tenk_paths()
    except data.DataNotFound as e:
        pytest.skip(f"reference corpus not available: {e}")


@pytest.fixture(scope="session")
def tenk_index():
    """The cached reference index of the four 10-Ks with the real MiniLM model."""
    real_paths()
    import ppkit

    return ppkit.reference_index("10k", progress=False)
