"""``POST /v1/compare``: two documents of the served index compared section by section.

The body is ``{"a", "b", "criteria"?, "max_sections"?}``; the response is the JSON of ``ppkit compare --json``
(:meth:`ppkit.compare.types.Comparison.to_dict`). ``a`` and ``b`` are names of the served index's documents
(case-insensitive, as ``GET /v1/documents`` lists them): they are looked up in the index only, never used as
paths, so a request cannot make the server read or index a file. An unknown name is a 404 that lists the
documents; the same document twice, empty criteria or a bad field a 400 / 422 with a one-line message.

The comparison runs in a worker thread under the engine's index lock (it fills the same index caches as an
answer), so concurrent questions wait for it; it is not cut by the per-request deadline (a comparison of two
10-Ks takes a few seconds). This module holds the route only; the comparison is :func:`ppkit.pipeline.compare`.
"""

from __future__ import annotations

from typing import Annotated

import anyio
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from pydantic import Field

from ..pipeline import compare
from .engine import Engine
from .models import MAX_QUESTION, DocName, _Strict

__all__ = ["CompareRequest", "add_compare_route", "MAX_COMPARE_SECTIONS"]

MAX_COMPARE_SECTIONS = 50  # sections of A one criteria-mode request may ask for (the reference uses 10)


class CompareRequest(_Strict):
    """Two documents of the served index and, optionally, what to compare and how many sections of A."""

    a: DocName = Field(examples=["Emerson"], description="a document of the index (see GET /v1/documents)")
    b: DocName = Field(examples=["TRoadhouse"], description="the document to compare it with")
    criteria: Annotated[str, Field(min_length=1, max_length=MAX_QUESTION)] | None = Field(
        None, examples=["collateral, guarantees and liens"],
        description="what to compare; left out: the whole documents, every section of A paired")
    max_sections: Annotated[int, Field(ge=1, le=MAX_COMPARE_SECTIONS)] = Field(
        10, description="with criteria: sections of A to compare (default 10, as the reference)")


def add_compare_route(app: FastAPI, engine: Engine) -> None:
    """Register ``POST /v1/compare`` on ``app`` over ``engine``'s index (errors go to the app's handlers)."""

    def run(req: CompareRequest) -> dict:
        index = engine.index
        a, b = engine.resolve(req.a), engine.resolve(req.b)  # NotFound (404): neither a path nor the other names
        with engine._lock.hold():  # the index's lazy caches, as every step of an answer
            result = compare(a, b, req.criteria, index=index, n=req.max_sections, progress=False)
        return result.to_dict()

    @app.post("/v1/compare")
    async def compare_route(req: CompareRequest):
        """Two documents of the index compared section by section: the JSON of ``ppkit compare --json``."""
        return JSONResponse(await anyio.to_thread.run_sync(run, req))
