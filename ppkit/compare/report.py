"""A comparison as a report: Markdown or a standalone HTML page.

Both hold the same parts: the header (documents, criteria, fit check, what the score means); **read first**,
the sections with no counterpart both ways (A's sections nothing in B does the job of, B's sections no section
of A pairs); a summary table (one row per section of A: its counterparts, their score, the reason, what
changed, the rating where online; a container, a heading with no text of its own, is marked); then one block
per section of A with its excerpt and, per counterpart, the reason, the figures, dates and names that changed
side by side, the table rows that changed, the defined terms only in one, the sentences only in one document,
the edited sentences and the rating. Every string from a document is escaped (Markdown: table pipes; HTML:
``html.escape``).

This module only renders a :class:`ppkit.compare.types.Comparison`; it computes nothing.
"""

from __future__ import annotations

import html
from pathlib import Path

from ..core.io import atomic_write
from .types import SCORE_LEGEND, Comparison, Counterpart

__all__ = ["to_markdown", "to_html", "write_report", "read_first", "RATING_MARKS"]

RATING_MARKS = {"significant": "🔴 significant", "moderate": "🟡 moderate", "aligned": "🟢 aligned",
                "unrelated": "⚪ unrelated"}
_LIST = 5  # sentences listed per kind and pair


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _changes(c: Counterpart) -> str:
    d = c.diff
    parts = [f"{len(d.values)} values" if d.values else "",
             f"{len(d.rows)} table rows" if d.rows else "", f"{len(d.only_in_a)} only in A" if d.only_in_a else "",
             f"{len(d.only_in_b)} only in B" if d.only_in_b else "", f"{len(d.edited)} edited" if d.edited else "",
             f"{len(d.terms_only_a) + len(d.terms_only_b)} defined terms" if d.terms_only_a or d.terms_only_b else ""]
    return ", ".join(p for p in parts if p) or "no change"


def _summary_rows(cmp: Comparison) -> list[list[str]]:
    rows = []
    for i, p in enumerate(cmp.pairs, 1):
        title = p.a.title + (" (container)" if p.container else "")
        if not p.b:
            rows.append([str(i), title, "no counterpart", "", "", "", ""])
        for j, c in enumerate(p.b):
            rating = RATING_MARKS.get(c.rating.level, c.rating.level) if c.rating else ""
            rows.append([str(i) if j == 0 else "", title if j == 0 else "", c.section.title, f"{c.score:.2f}",
                         c.reason, "" if p.container else _changes(c), rating])
    return rows


_HEAD = ["#", "Section of A", "Counterpart in B", "score", "reason", "changes", "rating"]


def _header_lines(cmp: Comparison) -> list[tuple[str, str]]:
    out = [("Document A", cmp.a), ("Document B", cmp.b),
           ("Criteria", cmp.criteria if cmp.criteria is not None else "none: whole documents, section by section")]
    if cmp.fit is not None:
        out.append(("Fit check", f"{'fits' if cmp.fit.fits else 'does not fit'} "
                                 f"({'Gemini' if cmp.fit.online else 'offline'}): {cmp.fit.reason}"))
    matched = sum(1 for p in cmp.sections if p.b)
    out.append(("Sections of A", f"{len(cmp.sections)} compared, {matched} with a counterpart, "
                                 f"{len(cmp.no_counterpart)} without; {len(cmp.unmatched_b)} of B unmatched"))
    out.append(("Score", SCORE_LEGEND))
    return out


def read_first(cmp: Comparison) -> list[tuple[str, list[str]]]:
    """The lists a reviewer reads first: (heading, titles) of A's sections with no counterpart and of B's
    sections no section of A pairs."""
    return [(f"Sections of {cmp.a} with no counterpart in {cmp.b}",
             [f"{s.title} (lines {s.line_start}-{s.line_end})" for s in cmp.no_counterpart]),
            (f"Sections of {cmp.b} no section of {cmp.a} pairs",
             [f"{s.title} (lines {s.line_start}-{s.line_end})" for s in cmp.unmatched_b])]


def _details(c: Counterpart) -> list[tuple[str, list[str]]]:
    """(heading, items) of one counterpart's differences, empty kinds left out."""
    d = c.diff
    rows = [f"{r.label}: {' / '.join(r.a) or '-'} -> {' / '.join(r.b) or '-'}"
            + (f" ({r.change})" if r.change else "") for r in d.rows]
    values = [f"{v.kind}: {v.a} -> {v.b}" for v in d.values]
    kinds = [("Values (A -> B)", values), ("Table rows", rows),
             ("Only in A", list(d.only_in_a[:_LIST])), ("Only in B", list(d.only_in_b[:_LIST])),
             ("Edited (A -> B)", [f"{x} -> {y}" for x, y in d.edited[:_LIST]]),
             ("Defined only in A", list(d.terms_only_a)), ("Defined only in B", list(d.terms_only_b))]
    if c.rating is not None:
        r = c.rating
        kinds.append(("Rating", [RATING_MARKS.get(r.level, r.level)] + [f"{k}: {v}" for k, v in
                                 (("Role", r.role), ("Risk direction", r.risk), ("Analysis", r.analysis)) if v]))
    return [(k, v) for k, v in kinds if v]


def to_markdown(cmp: Comparison) -> str:
    """The report as Markdown.

    >>> to_markdown(comparison).splitlines()[0]  # doctest: +SKIP
    '# Comparison: Emerson vs TRoadhouse'
    """
    out = [f"# Comparison: {cmp.a} vs {cmp.b}", ""]
    out += [f"**{k}:** {v}  " for k, v in _header_lines(cmp)]
    out += ["", "## Read first"]
    for head, items in read_first(cmp):
        out += ["", f"**{head}:**", *[f"- {_cell(x)}" for x in items or ["none"]]]
    out += ["", "## Summary", "", "| " + " | ".join(_HEAD) + " |", "|" + "---|" * len(_HEAD)]
    out += ["| " + " | ".join(_cell(x) for x in row) + " |" for row in _summary_rows(cmp)]
    out += ["", "## Sections"]
    for i, p in enumerate(cmp.pairs, 1):
        out += ["", f"### {i}. {p.a.title}", "", f"`{p.a.breadcrumb}` (lines {p.a.line_start}-{p.a.line_end})", ""]
        if p.a.excerpt:
            out += [f"> **{cmp.a}:** {p.a.excerpt}", ""]
        names = ", ".join(c.section.title for c in p.b) or "no counterpart"
        out += [f"**Matching {cmp.b} sections:** {names}"]
        for c in p.b:
            out += ["", f"#### {c.section.title}", "",
                    f"`{c.section.breadcrumb}` (lines {c.section.line_start}-{c.section.line_end}); score "
                    f"{c.score:.2f}; {c.reason}", ""]
            if c.section.excerpt:
                out += [f"> **{cmp.b}:** {c.section.excerpt}", ""]
            for kind, items in _details(c):
                out += [f"**{kind}:**", *[f"- {x}" for x in items], ""]
    if cmp.notes:
        out += ["", "## Notes", "", *[f"- {n}" for n in cmp.notes]]
    return "\n".join(out) + "\n"


_STYLE = ("body{font-family:system-ui,sans-serif;max-width:70em;margin:2em auto;color:#1e293b}"
          "table{border-collapse:collapse}td,th{border:1px solid #cbd5e1;padding:4px 8px;text-align:left}"
          "blockquote{border-left:3px solid #94a3b8;margin:0.5em 0;padding-left:1em;color:#475569}"
          "code{font-size:90%}")


def to_html(cmp: Comparison) -> str:
    """The report as one standalone HTML page (no scripts, no external files)."""
    e = html.escape
    out = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{e(cmp.a)} vs {e(cmp.b)}</title>",
           f"<style>{_STYLE}</style></head><body>", f"<h1>Comparison: {e(cmp.a)} vs {e(cmp.b)}</h1><p>"]
    out += [f"<b>{e(k)}:</b> {e(v)}<br>" for k, v in _header_lines(cmp)]
    out += ["</p><h2>Read first</h2>"]
    for head, items in read_first(cmp):
        out += [f"<p><b>{e(head)}:</b></p><ul>" + "".join(f"<li>{e(x)}</li>" for x in items or ["none"]) + "</ul>"]
    out += ["<h2>Summary</h2><table><tr>" + "".join(f"<th>{e(h)}</th>" for h in _HEAD) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{e(x)}</td>" for x in row) + "</tr>" for row in _summary_rows(cmp)]
    out += ["</table><h2>Sections</h2>"]
    for i, p in enumerate(cmp.pairs, 1):
        out += [f"<h3>{i}. {e(p.a.title)}</h3><p><code>{e(p.a.breadcrumb)}</code> "
                f"(lines {p.a.line_start}-{p.a.line_end})</p>"]
        if p.a.excerpt:
            out += [f"<blockquote><b>{e(cmp.a)}:</b> {e(p.a.excerpt)}</blockquote>"]
        names = ", ".join(c.section.title for c in p.b) or "no counterpart"
        out += [f"<p><b>Matching {e(cmp.b)} sections:</b> {e(names)}</p>"]
        for c in p.b:
            out += [f"<h4>{e(c.section.title)}</h4><p><code>{e(c.section.breadcrumb)}</code> (lines "
                    f"{c.section.line_start}-{c.section.line_end}); score {c.score:.2f}; {e(c.reason)}</p>"]
            if c.section.excerpt:
                out += [f"<blockquote><b>{e(cmp.b)}:</b> {e(c.section.excerpt)}</blockquote>"]
            for kind, items in _details(c):
                out += [f"<p><b>{e(kind)}:</b></p><ul>" + "".join(f"<li>{e(x)}</li>" for x in items) + "</ul>"]
    if cmp.notes:
        out += ["<h2>Notes</h2><ul>" + "".join(f"<li>{e(n)}</li>" for n in cmp.notes) + "</ul>"]
    return "\n".join(out) + "\n</body></html>\n"


def write_report(cmp: Comparison, path: str | Path) -> Path:
    """Write the report to ``path``: HTML for ``.html``/``.htm``, else Markdown (atomically)."""
    path = Path(path)
    text = to_html(cmp) if path.suffix.lower() in (".html", ".htm") else to_markdown(cmp)
    atomic_write(path, text)
    return path
