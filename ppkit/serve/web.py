"""The web page of ``ppkit serve`` at ``/``: plain HTML, JavaScript and CSS shipped in ``ppkit/serve/static/``.

No build step and no external resource: the page (``index.html``, ``app.js``, ``section.js``, ``app.css``,
``favicon.svg``) calls the same routes a client does: ``POST /v1/ask/stream`` (the answer block first, then the
text as it streams, the citations as they are confirmed; the conversation's last turns sent as ``history``),
``GET /v1/sections/{doc}/{node}`` (a citation clicked: the section with its Markdown and HTML tables drawn as
tables, the cited lines, row, cell and period header lit, PDF pages marked), ``GET /v1/documents`` (filtered by
company, period and form), ``POST /v1/documents`` and ``GET /v1/jobs/{id}`` (an upload and its progress bar), and
``DELETE /v1/documents/{name}``. What the page does is described in docs/serve.md ("The web page").

The page and its files are served without the token (they hold no data); with ``PPKIT_API_TOKEN`` set the
page asks for the token and sends it with every request (kept in the tab's session storage only).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

__all__ = ["add_web_page", "is_public", "STATIC"]

STATIC = Path(__file__).parent / "static"
# the page's scripts and styles come from this server only; nothing inline, no frames
_HEADERS = {"Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
            "X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}


def is_public(path: str) -> bool:
    """Whether ``path`` is the page or one of its files (served without the token)."""
    return path == "/" or path.startswith("/static/")


def add_web_page(app: FastAPI) -> None:
    """Serve the page at ``/`` and its files under ``/static/``."""

    @app.get("/", include_in_schema=False)
    async def page():
        return FileResponse(STATIC / "index.html", media_type="text/html", headers=_HEADERS)

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
