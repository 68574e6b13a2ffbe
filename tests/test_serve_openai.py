"""ppkit.serve.openai_compat: the model list and the word-piece counts of ``usage``, on hand-checked sentences."""

from __future__ import annotations

from pathlib import Path

import pytest

from ppkit.serve import openai_compat
from ppkit.serve.openai_compat import count_tokens, model_id, models_list, usage


class _Index:
    def __init__(self, folder):
        self.folder = folder


def test_the_model_is_the_served_index():
    assert model_id(_Index(Path("/srv/indexes/filings-2022"))) == "filings-2022"
    assert model_id(_Index(None)) == "ppkit"  # an index held in memory
    assert models_list(_Index(Path("/x/shelf")), created=7) == {
        "object": "list", "data": [{"id": "shelf", "object": "model", "created": 7, "owned_by": "ppkit"}]}


def test_word_pieces_of_the_local_tokenizer():
    if openai_compat._tokenizer() is None:
        pytest.skip("the MiniLM tokenizer is not installed (the 'local' extra)")
    # globe ##x | sells | ham ##mo ##cks | .
    assert count_tokens("Globex sells hammocks.") == 7
    # did | in ##ite ##ch | ' | s | t ##ps | revenue | grow | in | f ##y ##20 ##23 | ?
    assert count_tokens("Did Initech's TPS revenue grow in FY2023?") == 16
    assert count_tokens("") == 0
    assert usage("Globex sells hammocks.", "") == {"prompt_tokens": 7, "completion_tokens": 0, "total_tokens": 7}


def test_without_the_tokenizer_words_and_marks_are_counted(monkeypatch):
    monkeypatch.setattr(openai_compat, "_tokenizer", lambda: None)
    assert count_tokens("Globex sells hammocks.") == 4  # Globex | sells | hammocks | .
    assert count_tokens("Did Initech's TPS revenue grow in FY2023?") == 10
    assert usage("a b", "c, d") == {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5}
