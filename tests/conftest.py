"""Shared fixtures: tiny indexes over hand-written documents, and the cached reference index."""

from pathlib import Path

import pytest

FIX = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixture_docs(tmp_path):
    """Copies of the two fixture 10-K-like documents in a temp folder (so tests may edit them)."""
    out = []
    for name in ("acme.md", "globex.md"):
        p = tmp_path / "docs" / name
        p.parent.mkdir(exist_ok=True)
        p.write_text((FIX / name).read_text(encoding="utf-8"), encoding="utf-8")
        out.append(p)
    return out


@pytest.fixture
def hash_index(tmp_path, fixture_docs):
    """A small saved index built with the deterministic hash embedder (plumbing only)."""
    import ppkit

    return ppkit.build_index(fixture_docs, tmp_path / "index", embedder=ppkit.HashEmbedder(),
                             config=ppkit.Config(online=False), progress=False)


@pytest.fixture(scope="session")
def tenk_index():
    """The four reference 10-Ks indexed with the real local model (built once per cache)."""
    import ppkit

    return ppkit.reference_index("10k", config=ppkit.Config(online=False), progress=False)
