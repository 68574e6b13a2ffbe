"""Shared fixtures: tiny indexes over hand-written documents, the cached reference index,
``gemini``: the local Gemini stand-in (tests/gemini_server.py) with ppkit pointed at it, and ``prior_selector``: the
answer selector's hand-set prior in place of the fitted weights."""

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
def agreements_index(tmp_path_factory):
    """The two hand-written credit agreements of tests/fixtures/compare indexed with the hash embedder (the
    comparison tests: words, titles and structure decide)."""
    import ppkit

    return ppkit.build_index([FIX / "compare" / f"{n}_agreement.md" for n in ("alpha", "beta")],
                             tmp_path_factory.mktemp("agreements") / "index", embedder=ppkit.HashEmbedder(),
                             config=ppkit.Config(online=False), progress=False)


@pytest.fixture(scope="session")
def tenk_index():
    """The four reference 10-Ks indexed with the real local model (built once per cache)."""
    import ppkit

    return ppkit.reference_index("10k", config=ppkit.Config(online=False), progress=False)

@pytest.fixture
def prior_selector(monkeypatch):
    """The answer selector's hand-set prior (``tests/fixtures/selector_prior.json``: every feature counts, a block
    states its answer at a confidence of 0.5) in place of the weights fitted on the benchmarks, for tests of what
    happens around a stated answer (citations, follow-ups, the verdict line) on documents of a few sentences, where
    the fitted calibration, made on whole filings, would hedge."""
    from ppkit.answer.select import load_selector

    monkeypatch.setenv("PPKIT_SELECTOR", str(FIX / "selector_prior.json"))
    return load_selector()


@pytest.fixture
def gemini(monkeypatch, tmp_path):
    """A running :class:`gemini_server.GeminiServer`; ppkit's Gemini path is online and talks to it.

    Sets ``PPKIT_GEMINI_BASE_URL`` to the server, a dummy ``GEMINI_API_KEY``, unsets
    ``PPKIT_OFFLINE``, and gives ``PPKIT_CACHE_DIR`` a fresh temporary folder (so no test
    reads another's cached replies).
    """
    from gemini_server import GeminiServer

    srv = GeminiServer().start()
    monkeypatch.setenv("PPKIT_GEMINI_BASE_URL", srv.url)
    monkeypatch.setenv("GEMINI_API_KEY", "test-key-not-real")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("PPKIT_OFFLINE", raising=False)
    monkeypatch.setenv("PPKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")  # never send the local calls through a proxy
    yield srv
    srv.stop()
