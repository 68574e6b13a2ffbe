"""Shared fixtures. ``gemini``: the local Gemini stand-in (tests/gemini_server.py), with ppkit
pointed at it through the environment and an isolated cache."""

from __future__ import annotations

import pytest


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
