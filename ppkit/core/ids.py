"""How sections are named: node ids, section ids and breadcrumbs, defined once.

* A **node id** is the 4-digit, zero-padded pre-order number of a heading (``"0001"`` is the
  first heading; the document root is :data:`ROOT_ID`); documents with more than 9,999
  headings get longer ids.
* A **section id** is ``"doc#node"`` (``"AMD#0066"``): the name of a section in runs, qrels
  and traces (:func:`section_id`, :func:`split_section_id`).
* A **breadcrumb** is the titles from the document down to a node joined by
  :data:`BREADCRUMB_SEP` (``"AMD > Financial Statements > Cash Flows"``).
"""

from __future__ import annotations

__all__ = ["ROOT_ID", "BREADCRUMB_SEP", "node_id", "section_id", "split_section_id", "breadcrumb_titles", "breadcrumb_path"]

ROOT_ID = "0000"  # the document itself
BREADCRUMB_SEP = " > "


def node_id(n: int) -> str:
    """The id of the ``n``-th heading in pre-order: ``node_id(66) == "0066"``."""
    return f"{n:04d}"


def section_id(doc: str, node: str) -> str:
    """The id of a section in runs and qrels: ``section_id("AMD", "0066") == "AMD#0066"``."""
    return f"{doc}#{node}"


def split_section_id(sid: str) -> tuple[str, str]:
    """``"AMD#0066"`` -> ``("AMD", "0066")``; a document name may itself hold ``#``."""
    doc, _, node = sid.rpartition("#")
    return doc, node


def breadcrumb_titles(breadcrumb: str) -> list[str]:
    """The titles of a breadcrumb, document first: ``"AMD > Embedded"`` -> ``["AMD", "Embedded"]``."""
    return breadcrumb.split(BREADCRUMB_SEP)


def breadcrumb_path(breadcrumb: str) -> str:
    """The breadcrumb without its document: ``"AMD > Item 8 > Cash Flows"`` -> ``"Item 8 > Cash Flows"``.

    What the structural re-ranker embeds and the index stores a vector for.
    """
    return breadcrumb.split(BREADCRUMB_SEP, 1)[1] if BREADCRUMB_SEP in breadcrumb else breadcrumb
