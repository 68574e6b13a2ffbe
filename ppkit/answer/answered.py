"""Does the answer block answer what was asked? The check behind "verified", beside the quote check.

The quote check (:func:`ppkit.answer.verify.verify_block`) says the block's figures and words stand in the lines it
cites. That is not enough: a real quote of PepsiCo's advertising expense stands in its lines too, and it does not
answer "what was PepsiCo's revenue?". :func:`check_answered` reads the question once (an
:class:`ppkit.answer.question.Asked`) and the block's cited lines, and makes four checks, each ``True``, ``False``
or ``None`` (nothing to check):

* **type**: the block's figure is of the answer type asked: an amount (a dollar figure, or a number of a table in
  millions), a percent, a ratio, days, a per-share figure, a count, a date; a yes/no block starts with Yes or No. A
  percent that is a change (its clause or column speaks of an increase, a decline, "vs.") does not answer a share
  or a margin asked, nor a share a growth;
* **measure**: the block's own words name what is asked. Its own words are the cited table row's label, the clause
  of its sentence around the figure, or its passage (for "which one", the row's table). The rules, in order, the
  first with a verdict deciding (:data:`_MEASURE_RULES`): a part the question names (a segment, a product:
  :attr:`Asked.entity`) must be named by the words or their table; a share asked ("what percentage of revenue came
  from X") names X; the words name the measure through the finance catalogue (:func:`ppkit.finance.read.mentions`:
  measure names and synonyms, row concepts' labels and names, the glossary): an amount by its concept, a measure
  computed from others (a ratio, a margin, free cash flow) only by its own name or, for a percent or ratio, by all
  its inputs and nothing else; a catalogue name of **another** measure or concept fails (the "Cost of sales" row
  for revenue, "operating cash flow" for free cash flow); the table or sentence may name it for a row that is the
  part asked or a clause; without a catalogue measure, the words hold :data:`FOCUS_SHARE` of the question's focus
  words (:attr:`Asked.focus_words`);
* **period**: the year of the figure (the year heading its table column, the later of a "2022 vs. 2021" column;
  else the years of its clause, or of its sentence when it names one; a computed block's "FY2022") is a year asked
  (for a change asked, the latest). A figure of another column of a table that shows the year asked, or of a
  sentence that names other years, is another period; with no year asked, a figure of an earlier column than its
  table's latest is; where a quarter is asked, a figure of another quarter or of a full year is;
* **company**: the block cites the filings of the company asked (the analysis's filters: for a follow-up, the
  company after the rewrite, :mod:`ppkit.retrieval.conversation`).

``answered`` is ``False`` when a check fails, ``None`` when none could be made, else ``True``. A ``closest`` or
``not_found`` block states no answer (``False``). :func:`verdict` turns a verification into what a view shows:
"verified" only when the quotes check and the block answers; "quotes check, but the block may not answer the
question: <reason>" when it may not; the block's kind and confidence beside it.

This module reads the block, its cited lines and the question; it changes neither and chooses nothing
(:mod:`ppkit.answer.select` does).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..finance.catalogue import catalogue, formula_concepts
from ..finance.labels import words
from ..finance.read import mentions
from ..retrieval.analyze import Analysis
from ..retrieval.types import Section
from .passages import section_passages
from .question import Asked, read_question
from .statement_rows import cell_value, rows_of
from .verify import mask_references, number_form, numbers_with_values, verify_block

__all__ = ["Check", "Answered", "check_answered", "check_block", "asked_docs", "verdict", "verdict_line", "CHECKS",
           "FOCUS_SHARE"]

CHECKS = ("type", "measure", "period", "company")
FOCUS_SHARE = 0.5  # without a catalogue measure, the share of the focus's words a block's own words must hold
_WORD = {"amount": "an amount", "percent": "a percent", "ratio": "a ratio", "days": "a number of days",
         "per_share": "a per-share figure", "count": "a count", "date": "a date", "yes_no": "a yes or no",
         "which": "which one", "narrative": "a passage"}
# the figures each answer type can be written as (a figure's form: :func:`_form`)
_FORMS = {"amount": ("money", "number"), "percent": ("percent",), "ratio": ("multiple", "number"),
          "days": ("days",), "per_share": ("money", "number"), "count": ("number", "money"), "date": ("date",)}
_YEAR = re.compile(r"(?<![\d,.$])((?:19|20)\d{2})(?!\d|,\d)")
_FY2 = re.compile(r"\bfy\s?'?(\d{2})\b", re.I)
_MONTH = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b|\b\d{1,2}/\d{1,2}/"
                    r"\d{2,4}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?:19|20)\d\d\b", re.I)
_YES_NO = re.compile(r"^\W*(?:yes|no)\b", re.I)
# where a clause ends around a figure: a semicolon or colon, a comma before a new clause, a sentence's end
_CLAUSE_END = re.compile(r"[;:]|,\s+(?:and|but|while|which|whereas|compared|as compared|versus|offset|up|down|"
                         r"an increase|a decrease)\b|\.\s", re.I)


@dataclass(frozen=True)
class Check:
    """One check of :func:`check_answered`: ``ok`` (``None``: nothing to check) and why, in words."""

    ok: bool | None
    reason: str = ""

    def to_dict(self) -> dict:
        return {"ok": self.ok, "reason": self.reason}


@dataclass(frozen=True)
class Answered:
    """Whether a block answers the question: ``answered`` (True, False or None: not checkable), ``reason`` in words
    and the four ``checks`` (:data:`CHECKS`)."""

    answered: bool | None
    reason: str
    checks: dict[str, Check] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"answered": self.answered, "answered_reason": self.reason,
                "answered_checks": {k: c.to_dict() for k, c in self.checks.items()}}


# ---- what the block states --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Stated:
    """What a block states, read from its text and its cited lines."""

    figure: dict | None  # the block's figure (numbers_with_values), None for words
    form: str  # money, percent, multiple, days, number, date, yes_no or "" (words)
    own: str  # its own words: a row's label, the clause around its figure, its passage
    wide: str  # its wider words: the row's header and caption, the sentence, the breadcrumb
    years: tuple[int, ...]  # the period of its figure
    shown: tuple[int, ...]  # the years its table (or cited section) shows
    row: bool  # read from a table row
    head: str = ""  # a row's column header over the figure


def _years(text: str) -> tuple[int, ...]:
    ys = [int(y) for y in _YEAR.findall(text)] + [2000 + int(y) for y in _FY2.findall(text)]
    return tuple(dict.fromkeys(ys))


def _figure(text: str) -> dict | None:
    """The block's figure: its first number that is no year and no small count."""
    for n in numbers_with_values(mask_references(text)):
        plain = n["decimals"] == 0 and not (n["percent"] or n["currency"] or n["scale"] or n["multiple"])
        if plain and (1900 <= n["value"] <= 2100 and "," not in n["text"] or n["value"] < 2):
            continue
        return n
    return None


def _same(n: dict, v: float) -> bool:
    """Whether a cell's value ``v`` is the figure ``n`` as written (sign and scale words aside)."""
    t = 0.5 * 10 ** -n["decimals"] + 1e-9
    return abs(abs(v) - n["value"]) <= t or any(abs(abs(v) * s / n["scale"] - n["value"]) <= t
                                                for s in (1e3, 1e6, 1e9) if n["scale"])


def _clause(text: str, a: int, b: int) -> str:
    starts = [m.end() for m in _CLAUSE_END.finditer(text, 0, a)]
    m = _CLAUSE_END.search(text, b)
    return text[starts[-1] if starts else 0:m.start() if m else len(text)].strip(" ,")


def _cited(block, sections: list[Section]) -> list[tuple[Section, int]]:
    """(section, line) of every line the block cites, in citation order."""
    by = {(s.doc, s.node_id): s for s in sections}
    return [(by[(c.doc, c.node)], ln) for c in block.citations if (c.doc, c.node) in by
            for ln in range(c.line_start, c.line_end + 1)]


def _row_at(section: Section, line: int, n: dict):
    """(label, wide words, the figure's column year, the table's years, the column's header) of the table row at
    ``line`` holding ``n``, or None. A column of two years ("2022 vs. 2021": a change) is of the later one."""
    for p in section_passages(section):
        if p.kind != "row" or p.line != line:
            continue
        k = next((i for i, v in enumerate(p.values) if (x := cell_value(v)) is not None and _same(n, x)), None)
        if k is None:
            return None
        head = p.header[k] if k < len(p.header) else ""
        shown = tuple(y for h in p.header for y in _years(h))
        return (p.row_label or p.label, " ".join([p.label, p.header_text, p.caption, section.breadcrumb]),
                (max(_years(head)),) if _years(head) else (), shown, head)
    for ln, cells, years in rows_of(section):
        if ln != line or len(cells) - 1 != len(years):
            continue
        k = next((i for i, v in enumerate(cells[1:]) if (x := cell_value(v)) is not None and _same(n, x)), None)
        if k is not None:
            return cells[0], f"{cells[0]} {section.breadcrumb}", (years[k],), tuple(years), str(years[k])
    return None


def _stated(block, sections: list[Section]) -> _Stated:
    text = block.text
    if block.kind == "yes_no" or _YES_NO.match(text):
        n = _figure(text)
        return _Stated(n, "yes_no", text, text, _years(text), (), False)
    n = _figure(text) if block.kind in ("computed", "figure") else None
    if n is None:
        form = "date" if _MONTH.search(text) else ""
        return _Stated(None, form, text, " ".join([text] + [s.breadcrumb for s, _ in _cited(block, sections)[:1]]),
                       _years(text), (), False)
    form = number_form(n, mask_references(text)[n["span"][1]:n["span"][1] + 20])
    cited = _cited(block, sections)
    for s, ln in cited:  # a table row holding the figure
        row = _row_at(s, ln, n)
        if row is not None:
            label, wide, years, shown, head = row
            return _Stated(n, form, label, wide, years, shown, True, head)
    after = text[n["span"][1]:].lstrip(" :")
    quoted = re.match(r"[“\"](.+?)[”\"]?$", after, re.S)
    if quoted:  # a figure of a sentence: "$4.2 billion: “Revenue rose to $4.2 billion in 2022 ...”"
        sentence = quoted.group(1)
        m = next((x for x in numbers_with_values(mask_references(sentence)) if x["value"] == n["value"]), None)
        own = _clause(sentence, *m["span"]) if m else sentence
        ys = _years(own) or (_years(sentence) if len(_years(sentence)) == 1 else ())
        shown = tuple(y for s, _ in cited[:1] for y in _years(s.text))
        return _Stated(n, form, own, f"{sentence} {' '.join(s.breadcrumb for s, _ in cited[:1])}", ys, shown, False)
    # a computed figure named after it ("1.57: quick ratio, Acme FY2023 = ..."), or a figure in a model's sentence
    own = re.split(r"\s=\s", after, maxsplit=1)[0] if after else _clause(text, *n["span"])
    return _Stated(n, form, own, f"{text} {' '.join(s.breadcrumb for s, _ in cited[:1])}", _years(own or text), (),
                   False)


# ---- the checks -------------------------------------------------------------------------------------------------

def _type(asked: Asked, st: _Stated, block) -> Check:
    if asked.type == "yes_no":
        return Check(st.form == "yes_no", "" if st.form == "yes_no" else "it states no yes or no")
    if asked.type in ("which", "narrative"):
        return Check(None)
    forms = _FORMS.get(asked.type, ())
    if asked.type == "date":
        ok = st.form == "date" or bool(_years(block.text))
        return Check(ok, "" if ok else "it states no date")
    if st.figure is None:
        return Check(False, f"it states no figure; {_WORD[asked.type]} is asked")
    fig = st.figure["text"]
    if st.form == "money" and asked.type == "per_share" and st.figure["scale"]:
        return Check(False, f"it states an amount ({fig}), not a per-share figure")
    if st.form == "number" and asked.type == "ratio" and st.row and st.figure["decimals"] == 0:
        return Check(False, f"it states a table's amount ({fig}); {_WORD['ratio']} is asked")
    if st.form in forms:
        return _percent_kind(asked, st) if st.form == "percent" else Check(True)
    said = {"money": "an amount", "percent": "a percent", "multiple": "a multiple", "days": "a number of days",
            "number": "a number"}.get(st.form, "no figure")
    return Check(False, f"it states {said} ({fig}); {_WORD[asked.type]} is asked")


_CHANGE = re.compile(r"\b(?:increas|decreas|gr[eo]w|rose|rise|declin|fell|fall|drop|up\b|down\b|higher|lower|chang|"
                     r"vs\b|versus|compared|improv|growth)", re.I)
_SHARE = re.compile(r"\b(?:as an? (?:percent(?:age)?|share|proportion) of|percent(?:age)? of|share of|proportion of|"
                    r"of (?:total |net )*(?:revenues?|sales)\b|% of)", re.I)


def _percent_kind(asked: Asked, st: _Stated) -> Check:
    """A percent is a change (its clause or column speaks of an increase, a decline, "vs.") or a share (of
    revenue...): a change where a share or a margin is asked answers another question, and the reverse."""
    where = f"{st.head} {st.own}" if st.row else st.own
    change, share = bool(_CHANGE.search(where)), bool(_SHARE.search(where))
    m = asked.measure
    growth = m is not None and m.family == "growth"
    if change and not share and not growth and (asked.share is not None or _composite(asked)):
        return Check(False, f"its figure ({st.figure['text']}) is a change; {_what(asked)} is asked")
    if share and not change and growth:
        return Check(False, f"its figure ({st.figure['text']}) is a share, not a change; {_what(asked)} is asked")
    return Check(True)


def _concepts(asked: Asked) -> set[str]:
    """What names the measure asked: ``measure:<id>``, the concept it reports as where it has one, and its input
    concepts' ids."""
    m = asked.measure
    if m is None:
        return set()
    own = {m.formula[1]} if m.formula[0] in ("item", "reported") else set()
    return {f"measure:{m.id}"} | own | set(formula_concepts(m.formula))


def _composite(asked: Asked) -> bool:
    """A measure computed from others (a ratio, a margin, free cash flow): naming one of its inputs is not naming
    it. A growth names its amount."""
    m = asked.measure
    return m is not None and m.formula[0] != "item" and m.family != "growth"


def _itself(asked: Asked) -> set[str]:
    m = asked.measure
    return {f"measure:{m.id}"} | ({m.formula[1]} if m.formula[0] in ("item", "reported") else set())


def _named(text: str) -> list[tuple[str, set[str]]]:
    """(name, ids) of the catalogue's measures and concepts ``text`` names: a measure that is one concept's amount
    counts as that concept."""
    cat = catalogue()
    out = []
    for m in mentions(text):
        if m.kind == "concept":
            out.append((cat.concepts[m.id].name, {m.id}))
        elif m.kind == "measure":
            x = cat.measures[m.id]
            ids = {f"measure:{x.id}"} | ({x.formula[1]} if x.formula[0] == "item" else set())
            out.append((x.name, ids))
    return out


def _cover(want: frozenset[str], text: str) -> float:
    return len(want & set(words(text, True))) / len(want) if want else 0.0


def _what(asked: Asked) -> str:
    return asked.measure.name if asked.measure is not None else (asked.focus or "what is asked")


def _names_measure(asked: Asked, text: str) -> bool:
    """Whether ``text`` names the measure asked by its own name or a synonym (a measure the question defines,
    "the reinvestment rate, defined as ...", is named by the question alone), where no longer catalogue name
    holds those words ("sales" in "Cost of sales" names cost of sales)."""
    m = asked.measure
    if m is None:
        return False
    have = words(text, True)
    cat = catalogue()
    other = [(x.start, x.end) for x in mentions(text) if x.kind in ("measure", "concept") and
             f"measure:{x.id}" not in _itself(asked) and x.id not in _itself(asked) and
             not (x.kind == "measure" and cat.measures[x.id].formula[0] == "item" and
                  cat.measures[x.id].formula[1] in _itself(asked))]
    for name in m.patterns:
        want = tuple(w for w in words(name) if w != "|")
        for i in range(len(have) - len(want) + 1):
            if want and have[i:i + len(want)] == want and not any(a < i + len(want) and i < b and b - a > len(want)
                                                                  for a, b in other):
                return True
    return False


def _entity_words(asked: Asked) -> str:
    """The question's own words for the part it names (a segment, a product)."""
    toks = [t for t in re.findall(r"[\w&'’.-]+", asked.question) if set(words(t)) & asked.entity]
    return " ".join(dict.fromkeys(t.rstrip(".").removesuffix("'s").removesuffix("’s") for t in toks)) or "it"


@dataclass(frozen=True)
class _Read:
    """What the measure rules read of a block: its own and wide words, the catalogue names in its own words, the
    ids that name the measure asked (:func:`_concepts`), how to call its words in a reason, whether its row is the
    part asked."""

    asked: Asked
    st: _Stated
    own: str
    named: list
    want: set
    label: str
    part: bool

    def says(self, verb: str) -> str:
        """``label`` with ``verb`` agreeing ("its row 'X' names", "its words 'X' name")."""
        if verb == "do":
            return f"{self.label} {'does' if self.st.row else 'do'}"
        return f"{self.label} {verb}{'s' if self.st.row else ''}"


def _part_missing(r: _Read) -> Check | None:
    """A part asked (a segment, a product): the block's words or its table must name it."""
    if r.asked.entity and not _cover(r.asked.entity, f"{r.own} {r.st.wide}"):
        return Check(False, f"{r.says('do')} not name {_entity_words(r.asked)}, the part asked")
    return None


def _share_part_missing(r: _Read) -> Check | None:
    """A share asked ("what percentage of revenue came from X"): the block's words name X, unless they name a
    catalogue share measure asked itself (capex as a share of cash from operations)."""
    a = r.asked
    if a.share is None or a.type != "percent":
        return None
    if r.want and a.measure.unit == "percent" and (_names_measure(a, r.own) or any(ids & _itself(a) for _, ids in r.named)):
        return None
    piece = frozenset(w for w in words(a.share[0], True) if w != "|")
    if piece and not _cover(piece, f"{r.own} {r.st.head}"):
        return Check(False, f"{r.says('do')} not name {a.share[0]!r}, whose share is asked")
    return None


def _names_it(r: _Read) -> Check | None:
    """The measure by its name or a synonym; an amount by its concept's labels (a measure computed from others
    only by its own name)."""
    if not r.want:
        return None
    ids = _itself(r.asked) if _composite(r.asked) else r.want
    return Check(True) if _names_measure(r.asked, r.own) or any(x & ids for _, x in r.named) else None


def _names_its_inputs(r: _Read) -> Check | None:
    """A percent or ratio named by all its inputs and nothing else ("operating income as a percentage of net
    revenue")."""
    if not r.want or r.asked.measure.unit not in ("percent", "ratio") or r.st.form not in ("percent", "multiple",
                                                                                               "number"):
        return None
    inputs = set(formula_concepts(r.asked.measure.formula))
    if len(inputs) > 1 and all(x & inputs for _, x in r.named) and inputs <= {i for _, x in r.named for i in x}:
        return Check(True)
    return None


def _names_another(r: _Read) -> Check | None:
    """Another catalogue measure or concept: for a measure computed from others, any name but its own (one of its
    inputs is not it); for an amount, a name that is not its concept's (unless the row is the part asked)."""
    if not r.want:
        return None
    if _composite(r.asked) and r.named:
        return Check(False, f"{r.says('name')} {r.named[0][0]}, not {_what(r.asked)}")
    other = [name for name, x in r.named if not x & r.want]
    if other and not r.part and r.asked.type != "which":
        return Check(False, f"{r.says('name')} {other[0]}, not {_what(r.asked)}")
    return None


def _table_names_it(r: _Read) -> Check | None:
    """A row that is the part asked, or a clause of a sentence: its table (header, caption, breadcrumb) or its
    sentence names the measure."""
    if not r.want or not (r.part or not r.st.row):
        return None
    ids = _itself(r.asked) if _composite(r.asked) else r.want
    wide = r.st.wide
    return Check(True) if any(x & ids for _, x in _named(wide)) or _names_measure(r.asked, wide) else None


def _shares_the_focus(r: _Read) -> Check | None:
    """The question's focus words (no catalogue measure, or an amount named in other words): at least
    :data:`FOCUS_SHARE` of them in its own words (or its table's, for the part asked; any in a passage's)."""
    a = r.asked
    if not a.focus_words or r.want and _composite(a):
        return None
    if _cover(a.focus_words, r.own) >= FOCUS_SHARE:
        return Check(True)
    if not r.want and (r.part and _cover(a.focus_words, r.st.wide) >= FOCUS_SHARE
                       or a.type == "narrative" and _cover(a.focus_words, r.st.wide) > 0):
        return Check(True)
    return None


# the measure check: the first rule with a verdict decides; none: the words do not name what is asked
_MEASURE_RULES = (_part_missing, _share_part_missing, _names_it, _names_its_inputs, _names_another, _table_names_it,
                  _shares_the_focus)


def _measure(asked: Asked, st: _Stated, block) -> Check:
    if block.kind == "not_meaningful":
        return Check(None)
    own = st.wide if asked.type == "which" else st.own
    r = _Read(asked, st, own, _named(own), _concepts(asked), f"its {'row' if st.row else 'words'} {st.own[:80]!r}",
              bool(asked.entity) and _cover(asked.entity, own) > 0)
    for rule in _MEASURE_RULES:
        found = rule(r)
        if found is not None:
            return found
    if r.want:
        where = "its table does" if asked.type == "which" else r.says("do")
        return Check(False, f"{where} not name {_what(asked)}")
    if not asked.focus_words:
        return Check(None)
    return Check(False, f"{r.says('hold')} {'none' if not _cover(asked.focus_words, own) else 'under half'} of the words "
                        f"of {asked.focus or 'the question'!r}")


_QUARTER = re.compile(r"\bq([1-4])\b|\b(first|second|third|fourth)[- ]quarter\b|\b(?:three|3)[- ]months?\b|"
                      r"\b(?:twelve|12)[- ]months\b|\b(?:year|fiscal year)s? ended\b|\bfull[- ]year\b", re.I)
_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4}


def _quarter(text: str) -> int | None:
    """The quarter ``text`` names (1-4), 0 for a full year ("year ended", "twelve months"), -1 for a quarter it does
    not say which ("three months ended"), None when it names neither."""
    for m in _QUARTER.finditer(text):
        if m.group(1):
            return int(m.group(1))
        if m.group(2):
            return _ORDINAL[m.group(2).casefold()]
        return -1 if re.match(r"(?:three|3)", m.group(0), re.I) else 0
    return None


def _period(asked: Asked, st: _Stated, block) -> Check:
    if block.kind == "not_meaningful" or st.figure is None and st.form != "yes_no":
        return Check(None)
    if asked.quarter:  # a quarter asked: a figure of another quarter, or of a year, answers another period
        where = f"{st.head} {st.wide}" if st.row else st.wide
        said = _quarter(where)
        if said in (1, 2, 3, 4) and said != asked.quarter or said == 0 or said is None and st.row:
            return Check(False, f"its figure is {'of Q' + str(said) if said else 'a full year' + chr(39) + 's'}; "
                                f"Q{asked.quarter} is asked")
    want, got = set(asked.years), set(st.years)
    if want:
        if not got:
            return Check(None)
        # a change or comparison asked: the figure is of the latest year asked; else of any year asked
        if (max(got) == max(want)) if asked.compare and st.form == "percent" else got & want:
            return Check(True)
        if not set(st.shown) & want and st.row and min(abs(g - w) for g in got for w in want) <= 1:
            return Check(None)  # its table shows none of the years asked: a fiscal year named another way
        said = ", ".join(str(y) for y in sorted(got))
        asked_y = ", ".join(str(y) for y in sorted(want))
        return Check(False, f"its figure is of {said}; {asked_y} {'is' if len(want) == 1 else 'are'} asked")
    if asked.compare or not st.row or not got or not st.shown:
        return Check(None)
    if max(st.shown) > max(got):
        return Check(False, f"its figure is of {max(got)}, an earlier year than its table's latest ({max(st.shown)})")
    return Check(True)


def asked_docs(filters) -> set[str] | None:
    """The filings of the companies a question names (its analysis's filters, or their dict as in a trace), or
    None when it names none."""
    if filters is None:
        return None
    get = filters.get if isinstance(filters, dict) else lambda k, d=None: getattr(filters, k, d)
    docs = {d for v in (get("company_docs") or {}).values() for d in v} | set(get("companies") or [])
    return docs or None


def _company(docs: set[str] | None, block) -> Check:
    if not docs or not block.citations:
        return Check(None)
    cited = {c.doc for c in block.citations}
    if cited & docs:
        return Check(True)
    return Check(False, f"it cites {', '.join(sorted(cited))}; the question asks about {', '.join(sorted(docs))}")


def check_answered(block, sections: list[Section], asked: Asked | None, *, docs: set[str] | None = None) -> Answered:
    """Whether ``block`` (an :class:`ppkit.answer.block.AnswerBlock`) answers the question read as ``asked``
    (see the module docstring).

    Args:
        block: the answer block.
        sections: the sections retrieved (the block's citations are looked up among them).
        asked: the question read (:func:`ppkit.answer.question.read_question`); None: nothing to check against.
        docs: the filings of the company asked (:func:`asked_docs`); None: the question names no company.

    >>> check_answered(block, sections, read_question("What was Norwell's revenue in 2023?")).answered  # doctest: +SKIP
    True
    """
    if block is None:
        return Answered(None, "no answer block")
    if block.kind == "not_found":
        return Answered(False, "the block states no answer: the sources do not state it")
    if block.kind == "closest":
        return Answered(False, "the block states no answer: it is the closest passage, not stated directly")
    if asked is None or not asked.question.strip():
        return Answered(None, "no question to check the block against")
    st = _stated(block, sections)
    checks = {"type": _type(asked, st, block), "measure": _measure(asked, st, block),
              "period": _period(asked, st, block), "company": _company(docs, block)}
    failed = [c.reason for c in checks.values() if c.ok is False]
    if failed:
        return Answered(False, "; ".join(failed), checks)
    if all(c.ok is None for c in checks.values()):
        return Answered(None, "nothing in the question to check the block against", checks)
    passed = [k for k, c in checks.items() if c.ok]
    return Answered(True, f"it states {_WORD.get(asked.type, 'an answer')} and matches the "
                          f"{', '.join(passed)} asked", checks)


def check_block(block, sections: list[Section], *, question: str = "", analysis: Analysis | None = None) -> dict:
    """The block's whole verification: its quote check (:func:`ppkit.answer.verify.verify_block`) and whether it
    answers ``question`` (:func:`check_answered`; ``analysis``, the question's
    :class:`ppkit.retrieval.analyze.Analysis`, names the company asked and the names the question uses).

    Returns verify_block's dict with ``answered`` (True, False or None), ``answered_reason`` and
    ``answered_checks`` (:data:`CHECKS`, each ``{"ok", "reason"}``).
    """
    asked = read_question(mask_references(question), analysis) if question.strip() else None
    out = verify_block(block, sections, question=question, asked=asked)
    docs = asked_docs(analysis.filters) if analysis is not None else None
    return {**out, **check_answered(block, list(sections), asked, docs=docs).to_dict()}


# ---- what the views show ----------------------------------------------------------------------------------------

def verdict(verification: dict | None, block=None) -> dict:
    """What a view shows of a verification: ``{"status", "label", "kind", "confidence", "beside", "quotes",
    "answered"}`` (``beside``: the block's kind and confidence in words, shown beside the label).

    ``status`` is ``verified`` (the quotes check and the block answers), ``unanswered`` (the quotes check, but the
    block may not answer), ``unchecked`` (the quotes check; whether it answers could not be checked),
    ``problems`` (the quotes do not check) or ``none`` (not verified). ``label`` is the words shown. The quotes
    are the block's (its figures and words in the lines it cites) when there is a block, else the answer text's;
    the text's own problems are the verification's ``ok`` and its summary line.

    >>> verdict({"ok": True, "block": {"verified": True, "answered": False, "answered_reason": "it names cost of sales"}})["label"]
    'quotes check, but the block may not answer the question: it names cost of sales'
    """
    v = verification or {}
    b = v.get("block") or {}
    kind = getattr(block, "kind", None) or b.get("kind")
    conf = getattr(block, "confidence", None) if block is not None else b.get("confidence")
    beside = ", ".join(x for x in ((kind or "").replace("_", " "), "" if conf is None else f"confidence {conf:.2f}")
                       if x)
    out = {"kind": kind, "confidence": None if conf is None else round(conf, 3), "beside": beside,
           "answered": b.get("answered")}
    if not v:
        return {**out, "status": "none", "label": "not verified", "quotes": None}
    quotes = bool(b["verified"]) if "verified" in b else bool(v.get("ok"))  # the block's quotes, else the text's
    if not quotes:
        why = "; ".join(b.get("reasons") or []) or "figures or quotes not found in the cited lines"
        return {**out, "status": "problems", "label": f"the quotes do not check: {why}"[:300], "quotes": False}
    if b.get("answered") is True:
        return {**out, "status": "verified", "label": "verified", "quotes": True}
    if b.get("answered") is False:
        return {**out, "status": "unanswered", "label": "quotes check, but the block may not answer the question: "
                + b.get("answered_reason", ""), "quotes": True}
    return {**out, "status": "unchecked", "label": "quotes check; whether the block answers the question was not "
            "checked" + (f" ({b['answered_reason']})" if b.get("answered_reason") else ""), "quotes": True}


def verdict_line(verification: dict | None, block=None) -> str:
    """:func:`verdict` in one line, the block's kind and confidence beside it.

    >>> verdict_line({"ok": True, "block": {"verified": True, "answered": True, "kind": "figure", "confidence": 0.83}})
    'answer block: [verified] (figure, confidence 0.83)'
    """
    d = verdict(verification, block)
    return f"answer block: [{d['label']}]" + (f" ({d['beside']})" if d["beside"] else "")
