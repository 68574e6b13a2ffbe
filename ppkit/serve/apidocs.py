"""The API's reference at ``/docs``: one page of plain HTML made here from the OpenAPI description, so it shows
offline (FastAPI's own ``/docs`` loads Swagger UI from a CDN and stays blank without the network).

Each route with its method, summary, parameters and the fields of its JSON body (name, type, whether required,
description); the full machine-readable description stays at ``/openapi.json``. The page loads nothing (its
Content-Security-Policy allows no script and no other site) and needs the token like every route but the web
page. This module does not document responses beyond their status codes.
"""

from __future__ import annotations

import html
import json

from fastapi import FastAPI
from fastapi.responses import HTMLResponse

__all__ = ["add_api_docs", "api_docs_html"]

_HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
            "X-Content-Type-Options": "nosniff"}


def _type(schema: dict, spec: dict) -> str:
    """A field's type in a few words (``list of string``, ``integer``, ``Turn``)."""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " or ".join(_type(s, spec) for s in schema["anyOf"] if s.get("type") != "null")
    if schema.get("type") == "array":
        return f"list of {_type(schema.get('items', {}), spec)}"
    return str(schema.get("type", "any"))


def _fields(schema: dict, spec: dict) -> list[str]:
    """Table rows of a body's fields."""
    if "$ref" in schema:
        schema = spec.get("components", {}).get("schemas", {}).get(schema["$ref"].rsplit("/", 1)[-1], {})
    required = set(schema.get("required", []))
    rows = []
    for name, field in schema.get("properties", {}).items():
        rows.append(f"<tr><td><code>{html.escape(name)}</code></td><td>{html.escape(_type(field, spec))}</td>"
                    f"<td>{'yes' if name in required else ''}</td>"
                    f"<td>{html.escape(str(field.get('description', '')))}</td></tr>")
    return rows


def api_docs_html(spec: dict) -> str:
    """The page for the OpenAPI description ``spec``."""
    info = spec.get("info", {})
    out = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(info.get('title', 'API'))} "
           "API</title><style>body{font:15px/1.45 sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}"
           "code{background:#f3f3f3;padding:0 .2em}table{border-collapse:collapse;margin:.5rem 0}"
           "td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:left;vertical-align:top}</style></head><body>",
           f"<h1>{html.escape(info.get('title', 'API'))} API</h1>",
           f"<p>{html.escape(info.get('summary') or info.get('description', ''))} The full description: "
           "<a href='/openapi.json'>/openapi.json</a>.</p>"]
    for path, methods in spec.get("paths", {}).items():
        for method, op in methods.items():
            out.append(f"<h2><code>{method.upper()} {html.escape(path)}</code></h2>")
            text = op.get("description") or op.get("summary") or ""
            out.append(f"<p>{html.escape(text)}</p>")
            params = op.get("parameters", [])
            if params:
                out.append("<table><tr><th>parameter</th><th>in</th><th>type</th><th>required</th></tr>")
                out += [f"<tr><td><code>{html.escape(p['name'])}</code></td><td>{html.escape(p.get('in', ''))}</td>"
                        f"<td>{html.escape(_type(p.get('schema', {}), spec))}</td>"
                        f"<td>{'yes' if p.get('required') else ''}</td></tr>" for p in params]
                out.append("</table>")
            for kind, content in op.get("requestBody", {}).get("content", {}).items():
                rows = _fields(content.get("schema", {}), spec)
                if rows:
                    out.append(f"<p>Body ({html.escape(kind)}):</p><table><tr><th>field</th><th>type</th>"
                               "<th>required</th><th>description</th></tr>" + "".join(rows) + "</table>")
            codes = ", ".join(sorted(op.get("responses", {})))
            out.append(f"<p>Responses: {html.escape(codes)}; errors are <code>"
                       f"{html.escape(json.dumps({'error': {'type': '...', 'message': '...'}}))}</code>.</p>")
    out.append("</body></html>")
    return "\n".join(out)


def add_api_docs(app: FastAPI) -> None:
    """Serve :func:`api_docs_html` of ``app``'s OpenAPI description at ``/docs`` (create the app with
    ``docs_url=None``)."""

    @app.get("/docs", include_in_schema=False)
    async def docs():
        return HTMLResponse(api_docs_html(app.openapi()), headers=_HEADERS)
