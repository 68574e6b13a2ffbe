"""Each indexed section's rendered lines and BM25 terms, computed once when the index is built.

Every question's ~50 candidate sections are scored on their full text (the re-ranker's BM25, the
numeric-row density) and a large chosen section is trimmed line by line (BM25 over its lines). Rendering
HTML tables (:func:`ppkit.core.markup.render`) and tokenising + stemming that text
(:func:`ppkit.indexing.lexical.lexical_tokens`) are costly, and the same every time a
section comes back. So the index stores, per document, for every indexed section (``node_id`` ->
its unit's line range): the rendered lines ``(source line, text)`` and each line's BM25 terms. A
query then only looks them up.

The text stored is the text rendered from the source whose sha256 the manifest records; the index
still checks that hash before it hands out any line (:meth:`ppkit.indexing.index.SearchIndex.lines`),
so a pointer never serves text from a document that changed.

A section's terms are its lines' terms in order: ``lexical_tokens("\\n".join(texts))`` equals the
concatenation of ``lexical_tokens(text)`` per line, since no token spans a newline
(``tests/test_sections.py`` checks it on the reference 10-Ks).

File: ``rendered/<the document's tree file name>``, JSON
``{"doc", "tokenizer", "units": {node_id: [first line, last line, [[line, text], ...], ["term term", ...]]}}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..core.errors import InvalidInput
from .lexical import TOKENIZER, lexical_tokens

__all__ = ["SectionText", "section_text", "save_section_texts", "load_section_texts"]


@dataclass(frozen=True)
class SectionText:
    """One section's rendered lines and their BM25 terms (space-joined per line, split on use)."""

    start: int
    end: int
    lines: list  # [(source line, rendered text), ...]
    terms: tuple[str, ...]  # per line: its terms joined by spaces (terms never hold a space)

    def __repr__(self) -> str:
        return f"SectionText(lines {self.start}-{self.end}, {len(self.lines)} rendered)"

    @cached_property
    def text(self) -> str:
        """The section's text: its rendered lines joined by newlines (what a Candidate carries)."""
        return "\n".join(t for _, t in self.lines)

    @property
    def chars(self) -> int:
        """Length of :attr:`text`."""
        return len(self.text)

    def line_tokens(self) -> list[list[str]]:
        """Each rendered line's BM25 terms."""
        return [t.split() for t in self.terms]

    def tokens(self) -> list[str]:
        """The BM25 terms of the whole section text (the lines joined by newlines)."""
        return " ".join(t for t in self.terms if t).split()


def section_text(lines: list[tuple[int, str]], start: int, end: int) -> SectionText:
    """The :class:`SectionText` of rendered ``lines`` (lines ``start``..``end`` of a document)."""
    return SectionText(start, end, list(lines), tuple(" ".join(lexical_tokens(t)) for _, t in lines))


def save_section_texts(path: Path, doc: str, texts: dict[str, SectionText]) -> None:
    """Write one document's section texts (``{node_id: SectionText}``) as JSON."""
    units = {nid: [s.start, s.end, [list(x) for x in s.lines], list(s.terms)] for nid, s in texts.items()}
    path.write_text(json.dumps({"doc": doc, "tokenizer": TOKENIZER, "units": units}, ensure_ascii=False),
                    encoding="utf-8")


def load_section_texts(path: Path, doc: str) -> dict[str, SectionText]:
    """``{node_id: SectionText}`` of one document, as :func:`save_section_texts` wrote them.

    Raises:
        InvalidInput: the file is another document's or from another tokenizer (rebuild the index).
    """
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    if raw.get("doc") != doc or raw.get("tokenizer") != TOKENIZER:
        raise InvalidInput(f"{path} holds {raw.get('doc')!r} tokenised with {raw.get('tokenizer')!r}, "
                           f"not {doc!r} with {TOKENIZER!r}")
    return {nid: SectionText(int(a), int(b), [(int(ln), t) for ln, t in lines], tuple(terms))
            for nid, (a, b, lines, terms) in raw["units"].items()}
