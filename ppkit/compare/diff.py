"""What differs between two matched sections, computed without an LLM.

:func:`diff_sections` takes the rendered text of a section of document A and of its counterpart in
document B and returns a :class:`PairDiff`:

* **table rows aligned by label**: each pipe row (``| Total debt | 1,200 |``) is keyed by its first
  text cell; rows with the same label (exactly, else fuzzily) are paired with both values and the
  change (``+150`` for one number on each side, else ``changed``), rows of one side only are listed;
* **sentences only in A / only in B**: every sentence of one side is aligned with its closest
  sentence of the other (RapidFuzz ``ratio``); below :data:`SENTENCE_MATCH` it has no counterpart,
  above it and not equal it is an edited sentence (both wordings kept);
* **defined terms in one only**: ``"X" means ...``, ``"X" shall mean ...``, ``(the "X")``;
* **values side by side**: in each edited sentence, the words that changed, when they hold a figure
  (``$3,500,000,000`` -> ``$300,000,000``), a date (``May 23, 2018`` -> ``April 24, 2025``) or a name (a party:
  ``JPMorgan Chase Bank`` -> ``Bank of America``), each with its kind (:class:`ValueChange`);
* **a similarity score**: the share of both sides' sentences (and table rows) that found a
  counterpart, in [0, 1] (for texts with neither, their RapidFuzz ``ratio`` / 100).

This module does not choose which sections to compare (:mod:`ppkit.compare.align`) and does
not rate how much a difference matters (the Gemini rater, :mod:`ppkit.compare.gemini`).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import asdict, dataclass

from rapidfuzz import fuzz, process

__all__ = ["PairDiff", "RowChange", "ValueChange", "diff_sections", "sentences", "table_rows", "defined_terms",
           "value_changes", "SENTENCE_MATCH"]

SENTENCE_MATCH = 80.0  # RapidFuzz ratio (0-100) from which two sentences say the same thing (edits aside)
_ROW_MATCH = 90.0  # token-sort ratio from which two row labels name the same row
_MIN_SENTENCE = 20  # characters: shorter pieces (headings, list markers) are not sentences

_SPLIT = re.compile(r"(?<=[.;!?])\s+(?=[\"“(\[]?[A-Z0-9])")
_SEPARATOR_ROW = re.compile(r"^\|?[\s:|-]*$")
_NUMBER = re.compile(r"^\(?-?\$?\s*\(?([0-9][0-9,]*(?:\.[0-9]+)?)\)?\s*%?\)?$")
_QUOTE = "\"“”"
_TERM = re.compile(rf"[{_QUOTE}]([^{_QUOTE}\n]{{2,80}})[{_QUOTE}]\s*(?:,\s*)?(?:means|shall mean|shall have the meaning|"
                   r"has the meaning|refers to|is defined)\b", re.I)
_MONTH = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b|"
                    r"\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b(?:19|20)\d{2}\b", re.I)
_DIGIT = re.compile(r"\d")
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+\b|\b[A-Z]{2,}\b")
_PAREN_TERM = re.compile(rf"\((?:the |each |a |an )?[{_QUOTE}]([^{_QUOTE}\n]{{2,80}})[{_QUOTE}]\)")


@dataclass(frozen=True)
class RowChange:
    """One table row aligned by its label: both sides' values and the change (``""``: the same)."""

    label: str
    a: tuple[str, ...]  # the row's values in A (() when the row is in B only)
    b: tuple[str, ...]
    change: str  # "+150", "-2.5", "changed", "" (equal), "only in A", "only in B"


@dataclass(frozen=True)
class ValueChange:
    """A figure, date or name that an edited sentence changed: its kind and both sides' words."""

    kind: str  # "figure" | "date" | "name"
    a: str
    b: str


@dataclass(frozen=True)
class PairDiff:
    """The computed differences of one pair of sections (A's text against B's)."""

    similarity: float  # share of sentences and table rows of both sides with a counterpart, 0..1 (see diff_sections)
    only_in_a: tuple[str, ...]  # sentences of A with no close sentence in B
    only_in_b: tuple[str, ...]
    common: int  # sentences of A with a counterpart in B
    edited: tuple[tuple[str, str], ...]  # (A's sentence, B's closest) aligned but not equal
    rows: tuple[RowChange, ...]  # table rows: changed, or in one side only (equal rows left out)
    terms_only_a: tuple[str, ...]  # terms defined in A's text and not in B's
    terms_only_b: tuple[str, ...]
    values: tuple[ValueChange, ...] = ()  # figures, dates and names the edited sentences changed

    @property
    def changed(self) -> bool:
        """Whether anything differs (a sentence, an edit, a table row or a defined term)."""
        return bool(self.only_in_a or self.only_in_b or self.edited or self.rows or self.terms_only_a
                    or self.terms_only_b or self.values)

    def to_dict(self) -> dict:
        return asdict(self)


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` outside table rows, whitespace collapsed, pieces under 20 characters dropped.

    >>> sentences("## Section 1.01 Definitions\\nThe Borrower shall pay. Each Lender may assign its rights.")
    ['The Borrower shall pay.', 'Each Lender may assign its rights.']
    """
    out = []
    for para in re.split(r"\n\s*\n|\n(?=\s*(?:[-*•]|\(?[a-z0-9]{1,4}[.)])\s)", text):
        lines = [ln for ln in para.splitlines() if not ln.lstrip().startswith(("|", "#"))]
        flat = re.sub(r"\s+", " ", " ".join(lines)).strip()
        out += [s.strip() for s in _SPLIT.split(flat) if len(s.strip()) >= _MIN_SENTENCE]
    return out


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def table_rows(text: str) -> dict[str, tuple[str, ...]]:
    """Pipe rows of ``text`` keyed by label (the first cell holding a letter): ``{label: values}``.

    >>> table_rows("| Item | 2023 |\\n|---|---|\\n| Total debt | 1,200 |")
    {'Item': ('2023',), 'Total debt': ('1,200',)}
    """
    rows: dict[str, tuple[str, ...]] = {}
    for line in text.splitlines():
        if not line.lstrip().startswith("|") or _SEPARATOR_ROW.match(line.strip()):
            continue
        cells = [c for c in _cells(line) if c]
        label_at = next((i for i, c in enumerate(cells) if re.search(r"[A-Za-z]", c)), None)
        if label_at is None:
            continue
        label = re.sub(r"\s+", " ", cells[label_at])
        rows.setdefault(label, tuple(cells[label_at + 1:]))
    return rows


def defined_terms(text: str) -> set[str]:
    """Terms ``text`` defines: ``"X" means``, ``"X" shall have the meaning``, ``(the "X")``.

    >>> sorted(defined_terms('“Lien” means any mortgage. Acme Corp. (the “Borrower”) agrees.'))
    ['Borrower', 'Lien']
    """
    found = {m.group(1).strip() for m in _TERM.finditer(text)}
    found |= {m.group(1).strip() for m in _PAREN_TERM.finditer(text)}
    return {t for t in found if re.search(r"[A-Za-z]", t)}


def _kind(a: str, b: str) -> str | None:
    both = f"{a} {b}"
    if _MONTH.search(both):
        return "date"
    if _DIGIT.search(both):
        return "figure"
    if _NAME.search(a) and _NAME.search(b):
        return "name"
    return None


def value_changes(edited: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> tuple[ValueChange, ...]:
    """The figures, dates and names that changed between each edited pair of sentences (words compared in order,
    :class:`difflib.SequenceMatcher`), each change once.

    >>> value_changes([("The fee is 0.10% until May 23, 2018.", "The fee is 0.15% until April 24, 2025.")])
    (ValueChange(kind='figure', a='0.10%', b='0.15%'), ValueChange(kind='date', a='May 23, 2018.', b='April 24, 2025.'))
    """
    out = []
    for sa, sb in edited:
        wa, wb = sa.split(), sb.split()
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes():
            if op != "replace":
                continue
            x, y = " ".join(wa[i1:i2]), " ".join(wb[j1:j2])
            kind = _kind(x, y)
            if kind:
                out.append(ValueChange(kind, x, y))
    return tuple(dict.fromkeys(out))


def _number(value: str) -> float | None:
    m = _NUMBER.match(value.strip())
    if not m:
        return None
    x = float(m.group(1).replace(",", ""))
    return -x if value.strip().startswith(("(", "-")) else x


def _change(a: tuple[str, ...], b: tuple[str, ...]) -> str:
    if a == b:
        return ""
    if len(a) == len(b) == 1 or (a and b):
        x, y = _number(a[-1]), _number(b[-1])  # the last value: a table's latest column
        if x is not None and y is not None and len(a) == len(b) == 1:
            d = y - x
            return f"{d:+,.2f}".rstrip("0").rstrip(".") if d else ""
    return "changed"


def _align_rows(ra: dict[str, tuple[str, ...]], rb: dict[str, tuple[str, ...]]) -> tuple[list[RowChange], int]:
    """Rows paired by label (exact, then the closest label above :data:`_ROW_MATCH`); equal rows counted."""
    out, equal, left = [], 0, dict(rb)
    for label, va in ra.items():
        key = label if label in left else None
        if key is None and left:
            best = process.extractOne(label, list(left), scorer=fuzz.token_sort_ratio)
            key = best[0] if best and best[1] >= _ROW_MATCH else None
        if key is None:
            out.append(RowChange(label, va, (), "only in A"))
            continue
        vb = left.pop(key)
        change = _change(va, vb)
        if change:
            out.append(RowChange(label, va, vb, change))
        else:
            equal += 1
    out += [RowChange(label, (), vb, "only in B") for label, vb in left.items()]
    return out, equal


def _closest(xs: list[str], ys: list[str]) -> list[str | None]:
    """For each sentence of ``xs``: its closest sentence of ``ys`` when within :data:`SENTENCE_MATCH`, else None."""
    if not xs or not ys:
        return [None] * len(xs)
    scores = process.cdist(xs, ys, scorer=fuzz.ratio, workers=1)  # len(xs) x len(ys), 0..100
    return [ys[int(row.argmax())] if row.max() >= SENTENCE_MATCH else None for row in scores]


def diff_sections(a_text: str, b_text: str) -> PairDiff:
    """The computed differences between section texts ``a_text`` and ``b_text`` (rendered Markdown).

    >>> d = diff_sections("The fee is 0.10% per annum. The Borrower shall pay it quarterly.",
    ...                   "The fee is 0.15% per annum. The Borrower shall pay it quarterly.")
    >>> d.common, d.similarity
    (2, 1.0)
    """
    sa, sb = sentences(a_text), sentences(b_text)
    # exact repeats first (cheap), fuzzy alignment for the rest
    set_b, set_a = set(sb), set(sa)
    rest_a = [s for s in sa if s not in set_b]
    rest_b = [s for s in sb if s not in set_a]
    near_a = _closest(rest_a, rest_b)
    only_a = [s for s, m in zip(rest_a, near_a) if m is None]
    only_b = [s for s, m in zip(rest_b, _closest(rest_b, rest_a)) if m is None]
    edited = tuple(dict.fromkeys((s, m) for s, m in zip(rest_a, near_a) if m is not None))
    rows, equal_rows = _align_rows(table_rows(a_text), table_rows(b_text))
    paired_rows = sum(1 for r in rows if r.a and r.b) + equal_rows
    n_rows = 2 * paired_rows + sum(1 for r in rows if not (r.a and r.b))
    ta, tb = defined_terms(a_text), defined_terms(b_text)
    fa, fb = {t.casefold() for t in ta}, {t.casefold() for t in tb}
    total = len(sa) + len(sb) + n_rows
    matched = (len(sa) - len(only_a)) + (len(sb) - len(only_b)) + 2 * paired_rows
    # no sentence and no row (a heading with a line or two): how alike the two texts are as strings
    similarity = matched / total if total else fuzz.ratio(a_text.strip(), b_text.strip()) / 100.0
    return PairDiff(similarity=round(similarity, 4), only_in_a=tuple(dict.fromkeys(only_a)),
                    only_in_b=tuple(dict.fromkeys(only_b)), common=len(sa) - len(only_a), edited=edited, rows=tuple(rows),
                    terms_only_a=tuple(sorted(t for t in ta if t.casefold() not in fb)),
                    terms_only_b=tuple(sorted(t for t in tb if t.casefold() not in fa)),
                    values=value_changes(edited))
