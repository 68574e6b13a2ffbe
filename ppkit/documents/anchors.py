"""Anchors: the "Figure 5", "Table I", "Eq. 3", "Section 4.2" a question names.

A question that names an anchor is asking about one specific place in a paper,
so the sections that *contain* that anchor should be read first, whatever their
embedding similarity. This module finds anchors in a question, tells how strongly
a candidate section contains one, and reorders a ranked list accordingly:

* tier 2 - the section *defines* the anchor: it holds the caption ``Figure 5: …``
  / ``TABLE I: …``, the equation numbered ``(3)``, or it is the section numbered
  ``4.2`` itself;
* tier 1 - the section *mentions* it (``as shown in Fig. 5``, ``Eq. (3)``), or it
  lies inside section ``4.2``;
* tier 0 - neither.

:func:`apply_anchor_priority` moves tier-2 sections first, then tier-1, keeping the
re-ranker's order inside each tier (a stable sort), so it can follow *any*
re-ranker (structural or Gemini). Numbers are compared after normalising Roman
numerals (``Table I`` == ``TABLE 1``), letters and supplementary prefixes
(``Fig. S1``) kept as written.

This module only reads text already in memory (candidate text, breadcrumbs); it
does not retrieve and does not parse images. The caption pattern here is shared
with :mod:`ppkit.documents.images`, which labels images with their captions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.ids import breadcrumb_titles

__all__ = ["Anchor", "find_anchors", "find_captions", "anchor_tier", "anchor_tiers",
           "norm_number"]

# numbers as papers write them: 3, 3a, S1, I, IV, 4.2, C.1, III-A
_ROMAN = re.compile(r"^[IVXL]+$")
_ROMAN_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50}


def _roman_to_int(s: str) -> int:
    total, prev = 0, 0
    for ch in reversed(s):
        v = _ROMAN_VALUES[ch]
        total += -v if v < prev else v
        prev = max(prev, v)
    return total


def norm_number(num: str, *, roman: bool = True) -> str:
    """Comparable form of an anchor number.

    >>> norm_number("IV"), norm_number("4.2."), norm_number("S1"), norm_number("III-A")
    ('4', '4.2', 's1', '3.a')
    """
    parts = [p for p in re.split(r"[.\-]", num.strip().rstrip(".")) if p]
    out = []
    for p in parts:
        if roman and _ROMAN.match(p):
            out.append(str(_roman_to_int(p)))
        elif p.isdigit():
            out.append(str(int(p)))
        else:
            out.append(p.casefold())
    return ".".join(out)


@dataclass(frozen=True)
class Anchor:
    """An anchor named in a question: ``kind`` figure | table | equation | section | algorithm."""

    kind: str
    number: str  # normalised (see norm_number)
    text: str  # as written in the question

    def __repr__(self) -> str:
        return f"Anchor({self.kind} {self.number!r} from {self.text!r})"


# -- in questions --------------------------------------------------------------------------
_NUM = r"(S?\d+[a-z]?|S?[IVXL]+)\b"
_Q_PATTERNS = [  # (kind, pattern); tag words case-insensitive, Roman numerals upper-case only
    ("figure", re.compile(r"\b(?i:fig(?:ure)?s?\.?)\s*" + _NUM)),
    ("table", re.compile(r"\b(?i:tables?|tab\.)\s*" + _NUM)),
    ("algorithm", re.compile(r"\b(?i:algorithms?|alg\.)\s*" + _NUM)),
    ("equation", re.compile(r"\b(?i:eqs?\.|equations?)\s*(?:\(\s*)?(S?\d+[a-z]?)\s*\)?")),
    ("section", re.compile(r"(?:\b(?i:sections?|sec\.)|§)\s*(\d+(?:\.\d+)*|[IVXL]+(?:[.\-][A-Z])?)\b")),
    ("section", re.compile(r"\b(?i:appendix)\s+([A-Z](?:\.\d+)*)\b")),
]


def find_anchors(question: str) -> list[Anchor]:
    """The anchors a question names, in order of appearance, without duplicates.

    >>> find_anchors("What does Table I report, and how does Fig. 5 relate to Eq. (3) in Section 4.2?")
    [Anchor(table '1' from 'Table I'), Anchor(figure '5' from 'Fig. 5'), Anchor(equation '3' from 'Eq. (3)'), Anchor(section '4.2' from 'Section 4.2')]
    """
    found: list[tuple[int, Anchor]] = []
    for kind, rx in _Q_PATTERNS:
        for m in rx.finditer(question):
            appendix = m.group(0).casefold().startswith("appendix")
            num = norm_number(m.group(1), roman=not appendix)
            if kind == "figure":  # a sub-figure ("Fig. 2a") lives in figure 2
                num = re.sub(r"(?<=\d)[a-z]$", "", num)
            found.append((m.start(), Anchor(kind, num, m.group(0).strip())))
    out, seen = [], set()
    for _, a in sorted(found, key=lambda x: x[0]):
        if (a.kind, a.number) not in seen:
            seen.add((a.kind, a.number))
            out.append(a)
    return out


# -- captions in documents ------------------------------------------------------------------
_CAPTION_TAGS = {"fig.": "figure", "figure": "figure", "fig": "figure", "table": "table", "tab.": "table",
                 "algorithm": "algorithm", "alg.": "algorithm"}
# a caption starts a line (after list/emphasis markers) with ':' or '.', or sits inside a line with ':'
_CAPTION_START = re.compile(r"^[\s\-*•>]*(?:\*\*)?(Fig\.|Figure|FIGURE|FIG\.|Table|TABLE|Tab\.|Algorithm|ALGORITHM)"
                            r"\s*(S?\d+[a-z]?|S?[IVXL]+)(?:\*\*)?\s*[:.]\s*(?=\S)")
_CAPTION_INLINE = re.compile(r"(?<=\s)(Fig\.|Figure|FIGURE|FIG\.|Table|TABLE|Tab\.|Algorithm|ALGORITHM)"
                             r"\s*(S?\d+[a-z]?|S?[IVXL]+)\s*:\s*(?=\S)")


def find_captions(line: str) -> list[tuple[str, str, str]]:
    """Captions in one line as (kind, normalised number, caption text), left to right.

    A caption is ``Figure 3: …`` / ``Fig. 3. …`` / ``TABLE I: …`` at the start of a line,
    or ``Figure 5: …`` (with a colon) inside a line, where extraction glued it to the
    figure's own text. Its text runs to the next caption in the same line.

    >>> find_captions("0.1 0.2 HM CLIP-CITE Figure 5: Weight ensemble. Table 5: Efficiency.")
    [('figure', '5', 'Figure 5: Weight ensemble.'), ('table', '5', 'Table 5: Efficiency.')]
    """
    starts = []
    m = _CAPTION_START.match(line)
    if m:
        starts.append((m.start(1), m))
    starts += [(mi.start(1), mi) for mi in _CAPTION_INLINE.finditer(line) if not (m and mi.start(1) == m.start(1))]
    starts.sort(key=lambda x: x[0])
    out = []
    for i, (pos, mm) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(line)
        text = re.sub(r"\s+", " ", line[pos:end].replace("**", "")).strip()
        out.append((_CAPTION_TAGS[mm.group(1).casefold()], norm_number(mm.group(2)), text))
    return out


_EQ_NUMBER = re.compile(r"(?:^|\s)\(\s*(S?\d+[a-z]?)\s*\)\s*(?:[,.]\s*)?$")
_TITLE_NUMBER = re.compile(r"^(?:(?i:section|appendix)\s+)?(?:(\d+(?:\.\d+)*)\.?\s|([IVXL]+|[A-Z](?:\.\d+)*)[.)]\s*)\s*(?=\S)")


_EQ_NUMBER_MID = re.compile(r"^[^=]*=.*?\s\(\s*(S?\d{1,3}[a-z]?)\s*\)\s*\+")


def equation_number(line: str) -> str | None:
    """The equation number of a line: ``... = Mt/Vt (15)``, a line ``(15)``, or a two-part
    equation numbered in its middle (``L = a (4) + b``); normalised."""
    m = _EQ_NUMBER.search(line.strip()) or _EQ_NUMBER_MID.search(line)
    return norm_number(m.group(1)) if m else None


def title_number(title: str) -> str | None:
    """The number a heading starts with: ``4.2. Memory…`` -> ``4.2``, ``III. METHOD`` -> ``3``, ``C. Ablation`` -> ``c``."""
    m = _TITLE_NUMBER.match(title.strip())
    if not m:
        return None
    # digits may be followed by a space ("4 Experiments"); a letter or Roman numeral needs
    # its dot ("A. Overview") so that "A Survey of ..." is not section A
    return norm_number(m.group(1) or m.group(2))


def _mention_patterns(anchor: Anchor) -> list[re.Pattern]:
    return [rx for kind, rx in _Q_PATTERNS if kind == anchor.kind]


def _section_numbers(breadcrumb: str) -> tuple[set[str], set[str]]:
    """(numbers naming this section, numbers naming its ancestors) from the breadcrumb's titles.

    ``4.2. X`` is ``4.2``; a lettered subsection under a numbered one (``III. M > A. O``)
    is ``3.a``; a lone letter at the top level is an appendix (``C. Ablation`` -> ``c``).
    """
    titles = breadcrumb_titles(breadcrumb)[1:]
    nums = [title_number(t) for t in titles]
    full: list[set[str]] = []
    for i, n in enumerate(nums):
        names: set[str] = set()
        if n is not None:
            if n[0].isdigit() or "." in n or i == 0:
                names.add(n)
            if i > 0 and nums[i - 1] is not None and "." not in n and not n[0].isdigit():
                names.add(f"{nums[i - 1]}.{n}")
        full.append(names)
    own = full[-1] if full else set()
    ancestors = set().union(*full[:-1]) if len(full) > 1 else set()
    return own, ancestors


def anchor_tier(anchor: Anchor, breadcrumb: str, text: str) -> int:
    """How strongly a section contains ``anchor``: 2 defines it, 1 mentions or encloses it, 0 neither."""
    if anchor.kind == "section":
        own, ancestors = _section_numbers(breadcrumb)
        if anchor.number in own:
            return 2
        if anchor.number in ancestors:
            return 1
    else:
        for line in text.split("\n"):
            if anchor.kind == "equation":
                if equation_number(line) == anchor.number:
                    return 2
            elif any(k == anchor.kind and n == anchor.number for k, n, _ in find_captions(line)):
                return 2
    for rx in _mention_patterns(anchor):
        for m in rx.finditer(text):
            appendix = m.group(0).casefold().startswith("appendix")
            if norm_number(m.group(1), roman=not appendix) == anchor.number:
                return 1
    return 0


def anchor_tiers(question: str, candidates) -> list[int]:
    """Per candidate (anything with ``breadcrumb`` and ``text``), the best tier over the question's anchors."""
    anchors = find_anchors(question)
    if not anchors:
        return [0] * len(candidates)
    return [max(anchor_tier(a, c.breadcrumb, c.text or getattr(c, "snippet", "")) for a in anchors)
            for c in candidates]
