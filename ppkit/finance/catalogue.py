"""The catalogue of standard measures, the statement row concepts they read, and the glossary of everyday terms.

Domain knowledge as data with provenance, not code: three JSON files beside this module, each entry with the
source of its definition (an accounting standard, a regulator's or the CFA Institute's glossary, a textbook):

* ``data/concepts.json``: the **row concepts** of the primary statements (revenue, total current assets, cash from
  operations...): the statement that holds each, the row labels that name it (phrases, matched by
  :mod:`ppkit.finance.labels`), the component rows that sum to it where a statement gives no total, whether it is an
  outflow written in brackets, a per-share figure, a cost, or optional (a company may not hold it at all);
* ``data/measures.json``: the **measures**: name, synonyms (the names analysts give it), formula over concepts and
  other measures, unit, family (liquidity, leverage, coverage, profitability, efficiency, growth, per-share, payout,
  cash flow, amount), the direction in which it is better where that is standard, and its definition in words;
* ``data/glossary.json``: **everyday terms** ("top line", "buybacks", "y/y") and what they mean: a measure, a
  concept or an operation (growth, change).

Formulas are written as text (``(cash + short_term_investments + receivables) / current_liabilities``) and parsed
here into the nodes the calculator evaluates (:mod:`ppkit.answer.metrics`): ``("item", c)`` a concept in the year
asked, ``("prev", c)`` the year before, ``("avg", c)`` their mean, ``("chg", c)`` the change, ``("cagr", c)`` a growth
compounded over the years asked, ``("num", v)`` a constant, ``(op, a, b)`` for ``+ - * /``, ``("reported", c,
node)`` the company's own row of a measure it defines itself where retrieved (else ``node``), and ``("pct", node)``
for a measure in percent. A name in a formula is a concept or, when no concept has it, another measure's formula.

This module reads and checks the data; it matches no text (:mod:`ppkit.finance.labels`, :mod:`ppkit.finance.read`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..core.errors import PpkitError

__all__ = ["Source", "Concept", "Measure", "Term", "Catalogue", "catalogue", "parse_formula", "formula_concepts",
           "UNITS", "FAMILIES", "STATEMENTS", "CatalogueError"]

DATA = Path(__file__).with_name("data")
UNITS = ("ratio", "percent", "usd", "per_share", "days", "count")
FAMILIES = ("liquidity", "leverage", "coverage", "profitability", "efficiency", "growth", "per_share", "payout",
            "cash_flow", "amount")
STATEMENTS = ("balance", "operations", "cash_flows", "reported")


class CatalogueError(PpkitError, ValueError):
    """The finance data is malformed: which file, which entry, and what is wrong."""


@dataclass(frozen=True)
class Source:
    """Where a definition comes from: a title (a standard, a glossary, a textbook) and, where there is one, a URL."""

    title: str
    url: str = ""


@dataclass(frozen=True)
class Concept:
    """A row concept of a primary statement (``statement``: balance, operations, cash_flows; ``reported``: a
    measure a company reports under its own name in any table). ``labels`` are the row labels that name it, most
    specific first; ``components`` the labels of rows that sum to it where no total row is given."""

    id: str
    name: str
    statement: str
    labels: tuple[str, ...]
    source: Source
    components: tuple[str, ...] = ()
    outflow: bool = False  # written in brackets on a cash flow statement (capex, dividends): read as its size
    per_share: bool = False  # a per-share figure: read as written, never scaled
    cost: bool = False  # a cost a statement may bracket: always its size
    optional: bool = False  # a line item a company may not hold (no row: 0 when the statement is read whole)


@dataclass(frozen=True)
class Measure:
    """A standard measure: ``name`` and ``synonyms`` (how analysts call it), ``formula`` (the parsed node; the text
    is ``expression``), ``unit`` (one of :data:`UNITS`; ``usd`` for an amount), ``family`` (one of
    :data:`FAMILIES`), ``direction`` ("higher" or "lower" is better, "" when neither is standard) and
    ``definition`` in words, with its ``source``."""

    id: str
    name: str
    expression: str
    formula: tuple
    unit: str
    family: str
    definition: str
    source: Source
    synonyms: tuple[str, ...] = ()
    direction: str = ""

    @property
    def patterns(self) -> tuple[str, ...]:
        """The names that ask for it (its name and synonyms)."""
        return (self.name, *self.synonyms)

    def __repr__(self) -> str:
        return f"Measure({self.id}: {self.expression} [{self.unit}])"


@dataclass(frozen=True)
class Term:
    """An everyday term and what it means: ``measure`` or ``concept`` (an id), or ``operation`` ("growth",
    "change", "share", "per_share", "average"), or ``words`` (a plainer phrase), with its source."""

    term: str
    source: Source
    measure: str = ""
    concept: str = ""
    operation: str = ""
    words: str = ""


@dataclass(frozen=True)
class Catalogue:
    """The three tables, by id (concepts and measures) and in file order (the glossary)."""

    concepts: dict[str, Concept] = field(default_factory=dict)
    measures: dict[str, Measure] = field(default_factory=dict)
    glossary: tuple[Term, ...] = ()

    def measure(self, key: str) -> Measure:
        """A measure by id or name."""
        if key in self.measures:
            return self.measures[key]
        for m in self.measures.values():
            if m.name == key:
                return m
        raise KeyError(key)


# ---- formulas ---------------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"(?P<num>\d+(?:\.\d+)?)|(?P<name>[a-z_][a-z0-9_]*)|(?P<op>[-+*/(),])")
_FUNCTIONS = {"avg": 1, "prev": 1, "chg": 1, "cagr": 1, "reported": 2}


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise CatalogueError(f"formula {text!r}: cannot read {text[pos:pos + 12]!r}")
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def parse_formula(text: str, concepts, measures: dict[str, str] | None = None) -> tuple:
    """The node of a formula written as text (see the module docstring); ``concepts`` are the concept ids,
    ``measures`` maps other measures' ids to their formula text (a name that is no concept).

    >>> parse_formula("(cash + receivables) / current_liabilities", {"cash", "receivables", "current_liabilities"})
    ('/', ('+', ('item', 'cash'), ('item', 'receivables')), ('item', 'current_liabilities'))
    >>> parse_formula("365 * avg(receivables) / revenue", {"receivables", "revenue"})
    ('/', ('*', ('num', 365.0), ('avg', 'receivables')), ('item', 'revenue'))
    """
    measures = measures or {}
    toks = _tokens(text)
    pos = 0

    def peek():
        return toks[pos] if pos < len(toks) else ("end", "")

    def take(expected=None):
        nonlocal pos
        t = peek()
        if expected is not None and t[1] != expected:
            raise CatalogueError(f"formula {text!r}: expected {expected!r}, found {t[1] or 'the end'!r}")
        pos += 1
        return t

    def atom():
        kind, val = take()
        if kind == "num":
            return ("num", float(val))
        if kind == "op" and val == "(":
            node = expr()
            take(")")
            return node
        if kind == "name":
            if peek()[1] == "(":
                if val not in _FUNCTIONS:
                    raise CatalogueError(f"formula {text!r}: unknown function {val!r}")
                take("(")
                arg = take()[1]
                if arg not in concepts:
                    raise CatalogueError(f"formula {text!r}: {val}() takes a concept, not {arg!r}")
                if val == "reported":
                    take(",")
                    node = ("reported", arg, expr())
                else:
                    node = (val, arg)
                take(")")
                return node
            if val in concepts:
                return ("item", val)
            if val in measures:
                return parse_formula(measures[val], concepts, measures)
            raise CatalogueError(f"formula {text!r}: {val!r} is neither a concept nor a measure")
        raise CatalogueError(f"formula {text!r}: unexpected {val or 'end'!r}")

    def chain(sub, ops):
        node = sub()
        while peek()[0] == "op" and peek()[1] in ops:
            op = take()[1]
            node = (op, node, sub())
        return node

    def expr():
        return chain(lambda: chain(atom, "*/"), "+-")

    node = expr()
    if pos != len(toks):
        raise CatalogueError(f"formula {text!r}: unexpected {peek()[1]!r}")
    return node


def formula_concepts(node) -> list[str]:
    """The concepts a formula node reads, in order (with repeats).

    >>> formula_concepts(('/', ('avg', 'receivables'), ('item', 'revenue')))
    ['receivables', 'revenue']
    """
    if node[0] == "num":
        return []
    if node[0] in ("item", "prev", "avg", "chg", "cagr"):
        return [node[1]]
    if node[0] == "reported":  # the statements the general formula reads
        return formula_concepts(node[2])
    return [c for part in node[1:] for c in formula_concepts(part)]


# ---- loading ----------------------------------------------------------------------------------------------------

def _source(entry: dict, where: str) -> Source:
    src = entry.get("source")
    if not isinstance(src, dict) or not str(src.get("title", "")).strip():
        raise CatalogueError(f"{where}: every entry needs a source {{\"title\", \"url\"}}")
    return Source(str(src["title"]).strip(), str(src.get("url", "")).strip())


def _read(name: str) -> list[dict]:
    path = DATA / name
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise CatalogueError(f"{path}: cannot read the finance data ({e})") from None
    key = path.stem
    if not isinstance(data, dict) or not isinstance(data.get(key), list):
        raise CatalogueError(f"{path}: expected {{\"{key}\": [...]}}")
    return data[key]


def load(concept_rows: list[dict], measure_rows: list[dict], term_rows: list[dict]) -> Catalogue:
    """A :class:`Catalogue` from the three tables' rows (as in the JSON files), checked: ids unique, statements,
    units and families known, formulas parsed, glossary targets existing."""
    concepts: dict[str, Concept] = {}
    for i, c in enumerate(concept_rows):
        where = f"concepts.json entry {i} ({c.get('id')})"
        if c.get("id") in concepts or not c.get("id"):
            raise CatalogueError(f"{where}: a missing or repeated id")
        if c.get("statement") not in STATEMENTS:
            raise CatalogueError(f"{where}: statement must be one of {', '.join(STATEMENTS)}")
        labels = tuple(str(x).strip().casefold() for x in c.get("labels") or [])
        if not labels:
            raise CatalogueError(f"{where}: no labels")
        concepts[c["id"]] = Concept(c["id"], c.get("name") or c["id"], c["statement"], labels, _source(c, where),
                                    tuple(str(x).strip().casefold() for x in c.get("components") or []),
                                    bool(c.get("outflow")), bool(c.get("per_share")), bool(c.get("cost")),
                                    bool(c.get("optional")))
    texts = {m.get("id"): m.get("formula", "") for m in measure_rows}
    measures: dict[str, Measure] = {}
    for i, m in enumerate(measure_rows):
        where = f"measures.json entry {i} ({m.get('id')})"
        if m.get("id") in measures or not m.get("id"):
            raise CatalogueError(f"{where}: a missing or repeated id")
        if m.get("unit") not in UNITS:
            raise CatalogueError(f"{where}: unit must be one of {', '.join(UNITS)}")
        if m.get("family") not in FAMILIES:
            raise CatalogueError(f"{where}: family must be one of {', '.join(FAMILIES)}")
        if m.get("direction", "") not in ("", "higher", "lower"):
            raise CatalogueError(f"{where}: direction must be 'higher', 'lower' or empty")
        others = {k: v for k, v in texts.items() if k != m["id"]}
        node = parse_formula(m.get("formula", ""), concepts, others)
        if m["unit"] == "percent":
            node = ("pct", node)
        measures[m["id"]] = Measure(m["id"], m.get("name") or m["id"], m["formula"], node, m["unit"], m["family"],
                                    str(m.get("definition", "")).strip(), _source(m, where),
                                    tuple(str(x).strip().casefold() for x in m.get("synonyms") or []),
                                    m.get("direction", ""))
    terms = []
    for i, t in enumerate(term_rows):
        where = f"glossary.json entry {i} ({t.get('term')})"
        targets = [k for k in ("measure", "concept", "operation", "words") if t.get(k)]
        if not str(t.get("term", "")).strip() or len(targets) != 1:
            raise CatalogueError(f"{where}: a term and exactly one of measure, concept, operation, words")
        if t.get("measure") and t["measure"] not in measures:
            raise CatalogueError(f"{where}: no measure {t['measure']!r}")
        if t.get("concept") and t["concept"] not in concepts:
            raise CatalogueError(f"{where}: no concept {t['concept']!r}")
        terms.append(Term(str(t["term"]).strip().casefold(), _source(t, where), t.get("measure", ""),
                          t.get("concept", ""), t.get("operation", ""), t.get("words", "")))
    return Catalogue(concepts, measures, tuple(terms))


@lru_cache(maxsize=1)
def catalogue() -> Catalogue:
    """The catalogue of the package's data files (read once)."""
    return load(_read("concepts.json"), _read("measures.json"), _read("glossary.json"))
