"""Map annotated evidence (PDF page text) onto the sections of a Markdown document.

FinanceBench annotates each question with ``evidence_text`` cut from the PDF's
page text. The Markdown of the same filing was made by another extractor, so the
two never agree character for character: the PDF puts every table cell on a line
of its own (``Net revenue\\n$\\n86,392 $\\n79,474``) where the Markdown writes
``| Net Revenue | $ 86,392 | $ 79,474 |``, hyphenation and quotes differ, and page
headers (``Table of Contents``, page numbers) are mixed in. Prose and tables
therefore need different evidence:

* **prose** is matched by word 8-grams of normalised text (lower case, no markup,
  ``16,434`` -> ``16434``), which survive line breaks and markup;
* **tables** are matched by their *distinctive numbers*: numbers with at least three
  digits that are not years, in whatever order the rows and columns come out (a
  table with fewer than three such numbers falls back to its words' 8-grams).

Every feature is weighted by its rarity in the document (``1 / number of lines
holding it``) and very common ones (boilerplate 8-grams, numbers on dozens of lines)
are ignored. The sections (a node's own text, heading to next heading) are then
chosen greedily: the one holding the most remaining weight, until the rest is
small. The result says how much of the evidence was found (``found``) and how much
the chosen sections hold (``covered``), so a weak mapping is visible instead of
silently wrong.

This module only maps text; it does not load question files.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field

from ...core.ids import ROOT_ID

__all__ = ["EvidenceMatch", "DocText", "map_evidence", "map_evidence_on_page", "normalise", "evidence_kind"]

NGRAM = 8
MAX_NGRAM_DF = 4  # an 8-gram on more lines than this is boilerplate
MAX_NUMBER_DF = 25  # a number on more lines than this tells nothing
_TRANS = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-", "−": "-", "\u00a0": " "})
_TOKEN = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*")
_NUMERIC_LINE = re.compile(r"^[\s$€£%()\-–—.,0-9]*$")
_YEAR = re.compile(r"(?:19|20)\d\d")


def normalise(text: str) -> str:
    """Lower case, NFKC, plain quotes and dashes, no Markdown/HTML markup, single spaces.

    >>> normalise("| **Net Revenue** | $ 86,392 |")
    'net revenue $ 86,392'
    """
    t = unicodedata.normalize("NFKC", text).translate(_TRANS)
    t = re.sub(r"<[^>]+>", " ", t)
    t = re.sub(r"[*_`|#\\]+", " ", t)
    return re.sub(r"\s+", " ", t).strip().casefold()


def evidence_tokens(text: str) -> list[str]:
    """Word and number tokens of normalised text, thousands separators dropped (``16,434`` -> ``16434``)."""
    out = []
    for t in _TOKEN.findall(normalise(text)):
        if t[0].isdigit():
            t = t.replace(",", "")
        out.append(t)
    return out


def _numbers(text: str) -> set[str]:
    """Distinctive numbers: at least three digits, not a bare year (``2022``)."""
    out = set()
    for raw in re.findall(r"\d[\d,]*(?:\.\d+)?", text):
        digits = re.sub(r"\D", "", raw)
        if len(digits) < 3:
            continue
        if _YEAR.fullmatch(raw):
            continue
        out.add(raw.replace(",", "").rstrip("0").rstrip(".") if "." in raw else raw.replace(",", ""))
    return out


def evidence_kind(text: str) -> str:
    """``"table"`` when at least 40% of the non-empty lines are numbers only (PDF table cells), else ``"prose"``."""
    lines = [ln for ln in text.split("\n") if ln.strip()]
    if not lines:
        return "prose"
    numeric = sum(1 for ln in lines if _NUMERIC_LINE.match(ln) and any(c.isdigit() for c in ln))
    return "table" if numeric / len(lines) >= 0.4 else "prose"


class DocText:
    """Per-document lookup tables for matching: 8-gram -> lines, number -> lines.

    Args:
        lines: the document's lines (index = line number - 1).
    """

    def __init__(self, lines: list[str]):
        self.n_lines = len(lines)
        self.ngram_lines: dict[tuple, set[int]] = defaultdict(set)  # 8-gram -> 1-based lines where it starts
        self.number_lines: dict[str, set[int]] = defaultdict(set)  # number -> 1-based lines
        stream: list[tuple[str, int]] = []  # (token, line) over the whole document
        for ln, line in enumerate(lines, start=1):
            for t in evidence_tokens(line):
                stream.append((t, ln))
            for num in _numbers(line):
                self.number_lines[num].add(ln)
        toks = [t for t, _ in stream]
        for i in range(len(toks) - NGRAM + 1):
            # an 8-gram spanning lines is credited to every line it touches
            key = tuple(toks[i : i + NGRAM])
            self.ngram_lines[key].update({stream[i][1], stream[i + NGRAM - 1][1]})


@dataclass(frozen=True)
class EvidenceMatch:
    """Where one evidence text lives in a document.

    Attributes:
        node_ids: the chosen sections, best first.
        kind: ``"prose"`` or ``"table"``.
        features: evidence features looked for (8-grams for prose plus distinctive numbers).
        found: share of the feature weight found anywhere in the document.
        covered: share of the found weight inside the chosen sections.
        lines: document lines holding matched features, per chosen node.
        mapped: whether the evidence was placed with confidence.
        reason: why not, when it was not.
    """

    node_ids: tuple[str, ...]
    kind: str
    features: int
    found: float
    covered: float
    lines: dict = field(default_factory=dict, repr=False)
    mapped: bool = True
    reason: str = ""

    def to_dict(self) -> dict:
        return {"node_ids": list(self.node_ids), "kind": self.kind, "features": self.features,
                "found": round(self.found, 3), "covered": round(self.covered, 3), "mapped": self.mapped,
                "reason": self.reason, "lines": {k: sorted(v)[:20] for k, v in self.lines.items()}}


def _owner(line: int, starts: list[int], ids: list[str]) -> str:
    """The node whose own text holds ``line``: the last heading at or above it (``0000`` above the first)."""
    i = bisect.bisect_right(starts, line) - 1
    return ids[i] if i >= 0 else ROOT_ID


def map_evidence(text: str, tree, lines: list[str], *, doc_text: DocText | None = None,
                 max_sections: int = 3, min_features: int = 3) -> EvidenceMatch:
    """Find the sections of ``tree`` whose text holds the evidence ``text``.

    Args:
        text: the evidence (PDF page text or an excerpt of it).
        tree / lines: the document's tree and lines.
        doc_text: prebuilt lookup tables for ``lines`` (built here when ``None``).
        max_sections: at most this many sections per evidence text.
        min_features: fewer matched features than this in the best section is "not mapped".

    Returns:
        An :class:`EvidenceMatch`; ``mapped=False`` with a reason when the evidence
        could not be placed (it is reported, never dropped).

    >>> map_evidence("Net revenue for 2022 was $23.6 billion ...", tree, lines).node_ids  # doctest: +SKIP
    ('0060',)
    """
    kind = evidence_kind(text)
    if not text.strip():
        return EvidenceMatch((), kind, 0, 0.0, 0.0, mapped=False, reason="empty evidence text")
    dt = doc_text or DocText(lines)
    feats: dict[object, set[int]] = {}  # feature -> lines holding it
    n_feats = 0
    nums = _numbers(text)
    if kind == "prose" or len(nums) < 3:  # a table without distinctive numbers falls back to its words
        toks = evidence_tokens(text)
        grams = {tuple(toks[i : i + NGRAM]) for i in range(len(toks) - NGRAM + 1)}
        n_feats += len(grams)
        for g in grams:
            where = dt.ngram_lines.get(g)
            if where and len(where) <= MAX_NGRAM_DF:
                feats[("g", g)] = where
    n_feats += len(nums)
    for num in nums:
        where = dt.number_lines.get(num)
        if where and len(where) <= MAX_NUMBER_DF:
            feats[("n", num)] = where
    if n_feats == 0:
        return EvidenceMatch((), kind, 0, 0.0, 0.0, mapped=False,
                             reason="no usable features (too short, or no distinctive numbers)")
    if not feats:
        return EvidenceMatch((), kind, n_feats, 0.0, 0.0, mapped=False, reason="no feature found in the document")

    heads = tree.headings()
    starts = [n.line_start for n in heads]
    ids = [n.node_id for n in heads]
    weight = {f: 1.0 / len(where) for f, where in feats.items()}
    node_feats: dict[str, set] = defaultdict(set)  # node id -> features in its own text
    node_lines: dict[str, set[int]] = defaultdict(set)
    for f, where in feats.items():
        for ln in where:
            nid = _owner(ln, starts, ids)
            node_feats[nid].add(f)
            node_lines[nid].add(ln)
    # found: share of features present anywhere (unweighted: each 8-gram/number counts once)
    found = len(feats) / n_feats
    total = sum(weight.values())
    chosen: list[str] = []
    covered: set = set()
    first_gain = None
    while len(chosen) < max_sections:
        gains = {nid: sum(weight[f] for f in fs - covered) for nid, fs in node_feats.items() if nid not in chosen}
        if not gains:
            break
        best = max(gains, key=lambda nid: (gains[nid], len(node_feats[nid] - covered), -int(nid)))
        if first_gain is None:
            first_gain = gains[best]
        elif gains[best] < 0.25 * first_gain or len(node_feats[best] - covered) < min_features:
            break
        chosen.append(best)
        covered |= node_feats[best]
    cov = sum(weight[f] for f in covered) / total if total else 0.0
    best_n = len(node_feats[chosen[0]]) if chosen else 0
    mapped = best_n >= min_features or (best_n >= 1 and best_n == len(feats) and found >= 0.5)
    reason = "" if mapped else (f"only {best_n} matched feature(s) in the best section "
                                f"({len(feats)} of {n_feats} found in the document)")
    return EvidenceMatch(tuple(chosen), kind, n_feats, found, cov,
                         {nid: node_lines[nid] for nid in chosen}, mapped, reason)



def map_evidence_on_page(text: str, tree, lines: list[str], first: int, last: int) -> EvidenceMatch:
    """Place evidence on its PDF page: the lines ``first..last`` (1-based) that the page map gives.

    For evidence that :func:`map_evidence` could not place in the whole document: matched
    again against the page's lines only (fewer competing lines, so more features are
    distinctive); failing that, the section that owns most of the page's non-empty lines
    (``kind`` ``"page"``, ``covered`` 0: the page is known, the passage is not).
    """
    page = [ln if first <= i <= last else "" for i, ln in enumerate(lines, start=1)]
    m = map_evidence(text, tree, page)
    if m.mapped:
        return m
    heads = tree.headings()
    starts, ids = [n.line_start for n in heads], [n.node_id for n in heads]
    owners: dict[str, int] = defaultdict(int)
    for i in range(max(first, 1), min(last, len(lines)) + 1):
        if lines[i - 1].strip():
            owners[_owner(i, starts, ids)] += 1
    if not owners:
        return EvidenceMatch((), "page", 0, 0.0, 0.0, mapped=False, reason=f"lines {first}-{last} of the page are empty")
    best = max(owners, key=lambda nid: (owners[nid], -int(nid)))
    return EvidenceMatch((best,), "page", m.features, m.found, 0.0, {best: set()}, True,
                         f"placed by its page only ({m.reason})")
