"""The shared plumbing of the Gemini parts (noise filter, re-ranker, synthesizer).

Each Gemini part lives beside its offline twin in the stage it serves
(:mod:`ppkit.documents.noise_gemini`, :mod:`ppkit.retrieval.rerank_gemini`,
:mod:`ppkit.answer.synth_gemini`); this module holds what they share: a lazily created
:class:`ppkit.llm.client.GeminiClient` (retries, cache, token counts), ``calls`` (the
model calls a part made, for traces) and ``last_notes`` (what went wrong in its last
call and what it did instead). The client is created on first use, so ``prompt(...)``
works without a key.

Failure policy: a reply a part cannot use (not JSON, unknown ids) or a call that failed
after its retries (or at the run's deadline) is handed to the part's offline twin - the
re-ranker's ``fallback`` (the structural re-ranker; stage-1 order without one), the noise
filter's title rules, the synthesizer's ``fallback`` (the extractive one; without one it
raises :class:`ppkit.llm.client.LLMError`) - noted in ``last_notes`` and recorded with
:func:`ppkit.llm.client.fall_back`, so the answer's trace and printout say so. Prompts fence
document text (:mod:`ppkit.llm.fence`).
"""

from __future__ import annotations

from ..core.config import Config
from .client import GeminiClient

__all__ = ["GeminiPart"]


class GeminiPart:
    """Shared plumbing: a lazily created client and a log of this part's calls."""

    role = ""

    def __init__(self, config: Config | None = None, client=None):
        self.config = config or Config()
        self._client = client
        self.calls: list[dict] = []  # this part's model calls (see GeminiClient.calls)
        self.last_notes: list[str] = []

    @property
    def client(self):
        if self._client is None:
            self._client = GeminiClient(config=self.config)
        return self._client

    def _generate(self, prompt: str, **kw):
        """client.generate, with this part's share of the client's call log copied into ``calls``."""
        client = self.client
        before = len(client.calls)
        try:
            return client.generate(prompt, **kw)
        finally:
            self.calls.extend({**c, "role": self.role} for c in client.calls[before:])

    def _generate_stream(self, prompt: str, **kw):
        """client.generate_stream (yields text pieces, returns the LLMResult), its calls copied into ``calls``."""
        client = self.client
        before = len(client.calls)
        try:
            return (yield from client.generate_stream(prompt, **kw))
        finally:
            self.calls.extend({**c, "role": self.role} for c in client.calls[before:])
