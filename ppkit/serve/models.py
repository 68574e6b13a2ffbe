"""The request bodies of ``ppkit serve`` (pydantic): strict types, bounded sizes, unknown fields refused.

``AskRequest`` is the body of ``POST /v1/ask`` and ``POST /v1/ask/stream``; ``ChatRequest`` the
OpenAI-compatible ``POST /v1/chat/completions``: every field OpenAI's clients send that ppkit does not use
(``frequency_penalty``, ``response_format``, ``tools``, ...) is accepted and ignored, as are message parts other
than text; ``k`` and ``docs`` are ppkit's own. The question is held to one limit on every route: the last message
of a chat, like ``question``, is at most :data:`MAX_QUESTION` characters. Responses are the conductor's own JSON,
not models here.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["Turn", "AskRequest", "Message", "TextPart", "ChatRequest", "DescribeRequest", "MAX_QUESTION",
           "MAX_TURNS"]

MAX_QUESTION = 2000  # characters of one question (or one turn of a history)
MAX_TURNS = 20  # earlier turns a follow-up may bring

Question = Annotated[str, Field(min_length=1, max_length=MAX_QUESTION)]
DocName = Annotated[str, Field(min_length=1, max_length=200)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Turn(_Strict):
    """One earlier turn of a conversation."""

    question: Question
    answer: Annotated[str, Field(max_length=100_000)] = ""


class AskRequest(_Strict):
    """A question, with the sections to use, the documents to search and the earlier turns."""

    question: Question = Field(examples=["What is AMD's quick ratio for FY2022?"])
    k: Annotated[int, Field(ge=1, le=50)] | None = Field(None, description="sections to use (default 5)")
    docs: Annotated[list[DocName], Field(min_length=1, max_length=100)] | None = Field(
        None, description="search only these documents (default: the ones the question names, else all)")
    history: Annotated[list[Turn], Field(max_length=MAX_TURNS)] | None = Field(
        None, description="earlier turns, oldest first: a follow-up is rewritten into a standalone question")


class _OpenAI(BaseModel):
    """An OpenAI shape: typed where ppkit reads it, every other field accepted and ignored."""

    model_config = ConfigDict(extra="ignore", strict=True)


class TextPart(_OpenAI):
    """A part of a message's content: its text when it is a text part (``{"type": "text", "text": ...}``); other
    parts (an image, a file) are accepted and left out."""

    type: str
    text: Annotated[str, Field(max_length=100_000)] = ""


class Message(_OpenAI):
    """One chat message; its content a string, a list of parts, or none (a tool call's)."""

    role: Literal["system", "user", "assistant", "developer", "tool", "function"]
    content: Annotated[str, Field(max_length=100_000)] | Annotated[list[TextPart], Field(max_length=50)] | None = None
    name: str | None = None

    def text(self) -> str:
        """The content's text as one string."""
        if self.content is None:
            return ""
        return self.content if isinstance(self.content, str) else "".join(
            p.text for p in self.content if p.type == "text")


class ChatRequest(_OpenAI):
    """OpenAI's chat-completions body: the last user message is the question, the earlier user messages its
    history. Every other OpenAI field is accepted and ignored (ppkit's answer is not sampled, and calls no tool)."""

    messages: Annotated[list[Message], Field(min_length=1, max_length=2 * MAX_TURNS + 2)]
    model: str | None = None
    stream: bool = False
    k: Annotated[int, Field(ge=1, le=50)] | None = None
    docs: Annotated[list[DocName], Field(min_length=1, max_length=100)] | None = None
    # accepted and ignored
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    n: Literal[1] | None = None
    user: str | None = None
    seed: int | None = None
    stream_options: dict | None = None

    @model_validator(mode="after")
    def _one_question_limit(self):
        """The question (the last message) and each earlier user question within :data:`MAX_QUESTION`, as on
        ``/v1/ask``."""
        for i, m in enumerate(self.messages):
            if m.role == "user" and len(m.text()) > MAX_QUESTION:
                raise ValueError(f"messages[{i}] is a question of {len(m.text()):,} characters, over the "
                                 f"{MAX_QUESTION:,} a question may have (as on /v1/ask): send a shorter one")
        return self


class DescribeRequest(_Strict):
    """What a document is, said by the user (``PATCH /v1/documents/{name}``): any of the three; an empty string
    clears one, a field left out stays as it is."""

    company: Annotated[str, Field(max_length=200)] | None = Field(None, examples=["Harbor Lights Holdings, Inc."])
    period: Annotated[str, Field(max_length=20)] | None = Field(None, description="FY2024, 2024, FY2024Q2 or Q2 2024")
    form: Annotated[str, Field(max_length=40)] | None = Field(None, description="10-K, 10-Q, 8-K, 20-F, 40-F, 10-KT, "
                                                                                  "6-K or earnings release")
