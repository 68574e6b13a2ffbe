"""What ``tests/test_question_wording.py`` reads: the visible benchmark questions as stem pairs, and the regular
expressions and word lists of ``ppkit/`` with the pairs of consecutive content words each one requires or allows.

* **Visible questions**: the Comprehensive ``.xlsx`` (column Question), every ``*.jsonl`` under the reference data
  (field ``question``), the multimodal ``.json`` (``query``), and ``ppkit/bench/data/**/*.jsonl``. A folder named
  ``sealed`` is never entered (a sealed set is not visible). Questions are only ever kept as stem pairs here.
* **Stems**: :func:`ppkit.core.text.stems` (Snowball stems, stop words dropped); a *pair* is two consecutive stems.
* **Regular expressions** (by AST, every ``*.py`` of the package): the pattern argument of ``re.compile``,
  ``re.search|match|fullmatch|findall|finditer|sub|split``; a name is followed to its string constant (module level or
  assigned once in the function), ``+``, f-strings and ``"|".join(...)`` over a literal list are read; what cannot be
  read stays unknown. A pattern is parsed by Python's own regex parser and walked as a language of words: escapes,
  classes, quantifiers, groups and anchors are syntax; every alternation branch (top level and inside groups) is
  followed, so ``(?:net|gross)\\s+(?:sales|margin)`` yields the four pairs it can match. A class or ``\\w+`` is an
  unknown word that no question repeats; ``decreas\\w*`` is the prefix ``decreas``.
* **Word lists**: list/tuple/set literals of two or more strings (``__all__`` aside), dict literals whose keys are
  strings and whose values are constants (a word table: keys and string values), and ``"a b c".split()``. An entry
  with regex syntax is read as a regex; a snake_case identifier (``net_income``) names a catalogue entry, not
  wording, and is counted but not read for pairs.

It does not judge whether a repeated pair is a coincidence: it lists them. ``python tests/wording_support.py DIR``
prints the counts for the package folder ``DIR`` (used to measure an old commit).
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

try:  # Python >= 3.11
    from re import _constants as _C
    from re import _parser as _sre
except ImportError:  # pragma: no cover - older Pythons
    import sre_constants as _C  # type: ignore[no-redef]
    import sre_parse as _sre  # type: ignore[no-redef]

from ppkit.core.text import stems

MARK = "\ue000"  # an unknown character (a class, a wildcard, an expression the scanner cannot read)
WILD = ("*", "")  # an unknown word: never repeats a question
REGEX_FUNCS = {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "split"}
_FLAGS_ARG = {"compile": 1, "search": 2, "match": 2, "fullmatch": 2, "findall": 2, "finditer": 2, "split": 3,
              "sub": 4}
_LIMIT = 4000  # word-path summaries kept per sub-pattern (a bound against pathological products)
_SYNTAX = re.compile(r"\\|\(|\[|\||[?*+]")  # an entry that is written as a regex


# --- visible questions -------------------------------------------------------------------------------------------

def _walk_files(root: Path, suffix: str):
    """Files under ``root`` ending in ``suffix``, sorted, never entering a folder whose name holds "sealed"."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if "sealed" not in d.casefold()]
        out += [Path(dirpath) / f for f in filenames if f.endswith(suffix) and "sealed" not in f.casefold()]
    return sorted(out)


def visible_questions(data: Path | None, bench_data: Path) -> dict[str, list[str]]:
    """``{file: [question, ...]}`` for every visible question file (``data`` may be None: the reference data is
    absent, and only the package's own question files are read)."""
    out: dict[str, list[str]] = {}
    roots = ([data] if data is not None else []) + [bench_data]
    for root in roots:
        for f in _walk_files(root, ".jsonl"):
            qs = [r["question"] for r in map(json.loads, filter(str.strip, f.read_text(encoding="utf-8").splitlines()))
                  if isinstance(r, dict) and isinstance(r.get("question"), str)]
            if qs:
                out[str(f)] = qs
    if data is not None:
        for f in _walk_files(data, ".xlsx"):
            import openpyxl

            wb = openpyxl.load_workbook(f, read_only=True, data_only=True)
            rows = list(wb.worksheets[0].iter_rows(values_only=True))
            wb.close()
            head = [str(h or "").strip().casefold() for h in rows[0]] if rows else []
            if "question" in head:
                col = head.index("question")
                out[str(f)] = [str(r[col]) for r in rows[1:] if col < len(r) and r[col]]
        for f in _walk_files(data, ".json"):
            try:
                doc = json.loads(f.read_text(encoding="utf-8"))
            except ValueError:
                continue
            items = doc.get("test_queries") if isinstance(doc, dict) else None
            qs = [q["query"] for q in items or [] if isinstance(q, dict) and isinstance(q.get("query"), str)]
            if qs:
                out[str(f)] = qs
    return out


class QuestionPairs:
    """The consecutive stem pairs of a set of questions; :meth:`repeats` says which of them a pattern pair matches."""

    def __init__(self, questions):
        self.pairs: set[tuple[str, str]] = set()
        for q in questions:
            s = stems(q)
            self.pairs.update(pairwise(s))
        self._by_head: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
        for a, b in self.pairs:
            self._by_head[a[:3], b[:3]].append((a, b))

    def repeats(self, x: tuple[str, str], y: tuple[str, str]) -> tuple[str, str] | None:
        """The question pair that the word matchers ``x`` then ``y`` match (``("=", stem)`` or ``("^", prefix)``),
        else None."""
        if WILD in (x, y):
            return None
        if x[0] == "=" and y[0] == "=":
            return (x[1], y[1]) if (x[1], y[1]) in self.pairs else None
        for a, b in self._by_head.get((x[1][:3], y[1][:3]), ()):
            if _matches(x, a) and _matches(y, b):
                return a, b
        return None


def _matches(m: tuple[str, str], s: str) -> bool:
    return s == m[1] if m[0] == "=" else s.startswith(m[1])


# --- a regex as a language of words --------------------------------------------------------------------------------
# A path through a sub-pattern is summarised as ("f", chars) when it crosses no word boundary, else as
# ("b", head chars, first whole content word, last whole content word, tail chars); pairs of consecutive content words
# are collected as paths are joined. Words are matchers: ("=", stem), ("^", stem prefix) or WILD.

class TooWide(ValueError):
    """A pattern whose alternatives multiply beyond what the reader keeps (never met in ppkit so far)."""


_SEP = ("b", "", None, None, "")
_EMPTY = ("f", "")
_ANY = frozenset({("f", MARK), _SEP})


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch in "'’" or ch == MARK


def _norm(chars: str) -> str:
    while MARK + MARK in chars:
        chars = chars.replace(MARK + MARK, MARK)
    return chars[:60]


def word(chars: str):
    """The matcher of one word as written in a pattern: None for a stop word or nothing, WILD when unknown."""
    chars = chars.strip("'’").casefold()
    if not chars:
        return None
    if MARK in chars:
        core = chars.rstrip(MARK)
        if MARK in core or len(core) < 3 or any(c.isdigit() for c in core):
            return WILD  # an unknown word, or a number ("fy20\d{2}") rather than wording
        st = stems(core)
        return ("^", st[0]) if st else WILD
    st = stems(chars)
    return ("=", st[0]) if st else None


def _join(a, b, pairs: set):
    if a[0] == "f":
        return ("f", _norm(a[1] + b[1])) if b[0] == "f" else ("b", _norm(a[1] + b[1]), *b[2:])
    if b[0] == "f":
        return ("b", a[1], a[2], a[3], _norm(a[4] + b[1]))
    m = word(a[4] + b[1])
    seq = [x for x in (a[3], m, b[2]) if x is not None]
    pairs.update(pairwise(seq))
    first = next((x for x in (a[2], m, b[2]) if x is not None), None)
    last = next((x for x in (b[3], m, a[3]) if x is not None), None)
    return ("b", a[1], first, last, b[4])


def _concat(xs, ys, pairs: set):
    out = {_join(a, b, pairs) for a in xs for b in ys}
    if len(out) > _LIMIT:
        raise TooWide(f"more than {_LIMIT} distinct word paths; this scanner cannot read the pattern whole")
    return out


def _chars(chars) -> set:
    return {("f", c.casefold()) if _is_word_char(c) else _SEP for c in chars}


# a category of characters -> (holds word characters, holds separators)
_CATEGORIES = {"CATEGORY_DIGIT": (True, False), "CATEGORY_NOT_DIGIT": (True, True), "CATEGORY_WORD": (True, False),
               "CATEGORY_NOT_WORD": (False, True), "CATEGORY_SPACE": (False, True), "CATEGORY_NOT_SPACE": (True, True)}


def _klass(items) -> set:
    """A character class: up to four word characters are read as those characters, more as one unknown character;
    a class that holds a blank or punctuation also allows a word break."""
    letters, unknown, sep = set(), False, False
    for op, av in items:
        if op is _C.NEGATE:
            return set(_ANY)
        if op is _C.LITERAL:
            c = chr(av)
            if _is_word_char(c):
                letters.add(c.casefold())
            else:
                sep = True
        elif op is _C.RANGE:
            chars = [chr(c) for c in range(av[0], min(av[1], av[0] + 300) + 1)]
            unknown = unknown or any(_is_word_char(c) for c in chars)
            sep = sep or not all(_is_word_char(c) for c in chars)
        elif op is _C.CATEGORY:
            wordy, breaks = _CATEGORIES.get(str(av), (False, True))
            unknown, sep = unknown or wordy, sep or breaks
    out = {("f", MARK)} if unknown or len(letters) > 4 or not (letters or sep) else {("f", c) for c in letters}
    return out | ({_SEP} if sep else set())


def _seq(items, pairs: set) -> set:
    cur = {_EMPTY}
    for op, av in items:
        cur = _concat(cur, _node(op, av, pairs), pairs)
    return cur


def _node(op, av, pairs: set) -> set:
    if op is _C.LITERAL:
        return _chars(chr(av))
    if op in (_C.NOT_LITERAL, _C.ANY):
        return set(_ANY)
    if op is _C.IN:
        return _klass(av)
    if op is _C.BRANCH:
        return set().union(*(_seq(alt, pairs) for alt in av[1]))
    if op is _C.SUBPATTERN:
        return _seq(av[-1], pairs)
    if op is getattr(_C, "ATOMIC_GROUP", None):
        return _seq(av, pairs)
    if op in (_C.MAX_REPEAT, _C.MIN_REPEAT, getattr(_C, "POSSESSIVE_REPEAT", None)):
        lo, hi, body = av
        one = _seq(body, pairs)
        out = ({_EMPTY} if lo == 0 else set()) | one
        if hi >= 2:
            out |= _concat(one, one, pairs)
        return out
    if op is _C.GROUPREF:
        return {("f", MARK)}
    if op is _C.GROUPREF_EXISTS:
        _group, yes, no = av
        return _seq(yes, pairs) | (_seq(no, pairs) if no else {_EMPTY})
    return {_EMPTY}  # anchors, \b, lookarounds: zero width


def regex_word_pairs(pattern: str, *, verbose: bool = False) -> set[tuple[tuple[str, str], tuple[str, str]]]:
    """Every pair of consecutive content-word matchers that a string matched by ``pattern`` can hold.

    >>> sorted((a[1], b[1]) for a, b in regex_word_pairs(r"\\b(?:tin|zinc)\\s+(?:of\\s+)?(?:lids?|cups?)"))
    [('tin', 'cup'), ('tin', 'lid'), ('zinc', 'cup'), ('zinc', 'lid')]

    Raises:
        re.error: ``pattern`` is not a regular expression.
        TooWide: it allows more distinct word paths than this reader keeps.
    """
    pairs: set = set()
    tree = _sre.parse(pattern, re.VERBOSE if verbose else 0)
    for s in _seq(list(tree), pairs):
        if s[0] == "b":  # the head and tail fragments are whole words at the pattern's ends
            head, tail = word(s[1]), word(s[4])
            ends = [(head, s[2]), (s[3], tail)] if s[2] is not None else [(head, tail)]
            pairs.update((x, y) for x, y in ends if x is not None and y is not None)
    return {p for p in pairs if WILD not in p}


def branch_count(pattern: str) -> int:
    """Alternation branches as written: the top level's (1 when it has no ``|``) plus those of every group that
    holds a ``|`` (``r"a(?:b|c)|d"`` -> 2 + 2)."""
    stack = [0]  # the number of "|" seen at each open level
    total, i, n = 0, 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i += 1
            if i < n and pattern[i] == "^":
                i += 1
            if i < n and pattern[i] == "]":
                i += 1
            while i < n and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
        elif c == "(":
            stack.append(0)
        elif c == ")" and len(stack) > 1:
            bars = stack.pop()
            total += bars + 1 if bars else 0
        elif c == "|":
            stack[-1] += 1
        i += 1
    while len(stack) > 1:  # an unbalanced "(" (a piece the scanner could not read)
        bars = stack.pop()
        total += bars + 1 if bars else 0
    return total + stack[0] + 1


# --- what the package holds ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Literal:
    """A regex pattern or a word list found in the package."""

    file: str  # relative to the package's parent ("ppkit/answer/question.py")
    line: int
    kind: str  # "regex" | "list"
    text: str  # the pattern as read (unknown pieces as MARK), or the entries joined by " | "
    entries: tuple[str, ...] = ()  # a list's entries
    verbose: bool = False  # a regex compiled with re.VERBOSE
    branches: int = 0

    def clipped(self, n: int = 90) -> str:
        t = self.text.replace(MARK, "…").replace("\n", " ")
        return t if len(t) <= n else t[: n - 1] + "…"


PROSE_WORDS = 12  # a plain entry longer than this is a sentence of documentation or a message, not a word


def _prose(entries) -> bool:
    """A container of sentences (descriptions, messages) rather than words: some entry without regex syntax
    (``|`` or ``\\``) has more than :data:`PROSE_WORDS` words."""
    return any("|" not in e and "\\" not in e and len(e.split()) > PROSE_WORDS for e in entries)


def _is_identifier(s: str) -> bool:
    return s.isidentifier() and "_" in s.strip("_")


def literal_pairs(lit: Literal):
    """``[(pattern-side pair, the entry or branch text)]`` for one literal: a regex's word pairs, or each list entry's
    (entries written as a regex are read as one)."""
    if lit.kind == "regex":
        try:
            return [(p, lit.text) for p in regex_word_pairs(lit.text, verbose=lit.verbose)]
        except (re.error, TooWide) as e:
            raise ValueError(f"{lit.file}:{lit.line}: the pattern cannot be read ({e}); teach "
                             f"tests/wording_support.py to read it") from None
    out = []
    for e in lit.entries:
        if _is_identifier(e):
            continue
        if _SYNTAX.search(e):
            try:
                out += [(p, e) for p in regex_word_pairs(e)]
                continue
            except re.error:
                pass
        s = [("=", x) for x in stems(e)]
        out += [(p, e) for p in pairwise(s)]
    return out


class _Scope:
    """Names to the expression last assigned to them: the function's own (assigned once), then the module's."""

    def __init__(self, module: dict, local: dict | None = None):
        self.module, self.local = module, local or {}

    def get(self, name: str):
        return self.local.get(name, self.module.get(name))

    def bound(self, name: str, value: ast.AST) -> _Scope:
        return _Scope(self.module, {**self.local, name: value})


def _assigned(body) -> dict:
    out, seen = {}, defaultdict(int)
    for st in body:
        for node in ast.walk(st) if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else ():
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                out[node.targets[0].id] = node.value
                seen[node.targets[0].id] += 1
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                out[node.target.id] = node.value
                seen[node.target.id] += 1
    return out, seen


def _text(node, scope: _Scope, depth: int = 0) -> str:
    """The string an expression builds, with MARK for what cannot be read."""
    if depth > 12:
        return MARK
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_text(v.value if isinstance(v, ast.FormattedValue) else v, scope, depth + 1)
                       for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _text(node.left, scope, depth + 1) + _text(node.right, scope, depth + 1)
    if isinstance(node, ast.Name):
        target = scope.get(node.id)
        return MARK if target is None or target is node else _text(target, scope, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        f = node.func
        if f.attr == "join" and isinstance(f.value, ast.Constant) and isinstance(f.value.value, str) and node.args:
            items = _items(node.args[0], scope, depth + 1)
            return MARK if items is None else f.value.value.join(items)
        if f.attr == "escape" and isinstance(f.value, ast.Name) and f.value.id == "re" and node.args:
            return re.escape(_text(node.args[0], scope, depth + 1)).replace(re.escape(MARK), MARK)
    return MARK


def _items(node, scope: _Scope, depth: int) -> list[str] | None:
    """The strings a literal sequence (or a comprehension over one) holds, else None."""
    if depth > 12:
        return None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_text(e, scope, depth + 1) for e in node.elts]
    if isinstance(node, ast.Name):
        target = scope.get(node.id)
        return None if target is None else _items(target, scope, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
            "sorted", "tuple", "list", "set", "frozenset") and len(node.args) == 1:
        return _items(node.args[0], scope, depth + 1)
    if isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp)) and len(node.generators) == 1:
        g = node.generators[0]
        base = _items(g.iter, scope, depth + 1)
        if base is None or not isinstance(g.target, ast.Name) or g.ifs:
            return None
        return [_text(node.elt, scope.bound(g.target.id, ast.Constant(b)), depth + 1) for b in base]
    return None


def _is_re_call(node) -> str | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in REGEX_FUNCS \
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "re":
        return node.func.attr
    return None


def _verbose(call: ast.Call, fn: str) -> bool:
    flag_nodes = [k.value for k in call.keywords if k.arg == "flags"]
    if len(call.args) > _FLAGS_ARG[fn]:
        flag_nodes.append(call.args[_FLAGS_ARG[fn]])
    return any(isinstance(n, ast.Attribute) and n.attr in ("X", "VERBOSE") for f in flag_nodes for n in ast.walk(f))


def _str_const(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _constant_value(node) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(isinstance(e, ast.Constant) for e in node.elts)
    return False


def scan_file(path: Path, rel: str) -> list[Literal]:
    """The regex patterns and word lists of one module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    module, _ = _assigned(tree.body)
    scopes: dict[int, _Scope] = {}
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            body = fn.body if isinstance(fn.body, list) else []
            local, seen = _assigned(body)
            sc = _Scope(module, {k: v for k, v in local.items() if seen[k] == 1})
            for node in ast.walk(fn):  # functions come outer first, so the innermost one's names win
                scopes[id(node)] = sc
    top = _Scope(module)
    skip: set[int] = set()
    for node in ast.walk(tree):  # __all__ is a list of names, not words
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            skip.add(id(node.value))
    out: list[Literal] = []
    for node in ast.walk(tree):
        fn = _is_re_call(node)
        if fn:
            arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "pattern"), None)
            if arg is None:
                continue
            scope = scopes.get(id(node), top)
            text = _text(arg, scope)
            if not text.replace(MARK, ""):
                continue  # nothing written here: a pattern from elsewhere (a list read in a loop, a parameter)
            line = arg.lineno
            if isinstance(arg, ast.Name) and isinstance(scope.get(arg.id), ast.AST):
                line = getattr(scope.get(arg.id), "lineno", line)
            out.append(Literal(rel, line, "regex", text, verbose=_verbose(node, fn), branches=branch_count(text)))
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)) and id(node) not in skip:
            if len(node.elts) >= 2 and all(_str_const(e) for e in node.elts):
                entries = tuple(e.value for e in node.elts)
                if not _prose(entries):
                    out.append(Literal(rel, node.lineno, "list", " | ".join(entries), entries))
        elif isinstance(node, ast.Dict) and len(node.keys) >= 2 and all(k is not None and _str_const(k)
                                                                          for k in node.keys):
            if all(_constant_value(v) for v in node.values):
                entries = [k.value for k in node.keys]
                for v in node.values:
                    skip.add(id(v))
                    vs = v.elts if isinstance(v, (ast.List, ast.Tuple, ast.Set)) else [v]
                    entries += [e.value for e in vs if _str_const(e)]
                if not _prose(entries):
                    out.append(Literal(rel, node.lineno, "list", " | ".join(entries), tuple(entries)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "split" \
                and _str_const(node.func.value) and not node.keywords \
                and (not node.args or len(node.args) == 1 and _str_const(node.args[0])):
            sep = node.args[0].value if node.args else None
            entries = tuple(w.strip() for w in node.func.value.value.split(sep) if w.strip())
            if len(entries) >= 2:
                out.append(Literal(rel, node.lineno, "list", " | ".join(entries), entries))
    return sorted(out, key=lambda x: (x.line, x.kind, x.text))


def scan_package(package: Path) -> list[Literal]:
    """Every regex pattern and word list of every module under ``package`` (a ``ppkit/`` folder; a ``sealed`` folder
    is not entered)."""
    out: list[Literal] = []
    for f in _walk_files(package, ".py"):
        out += scan_file(f, f.relative_to(package.parent).as_posix())
    return out


# --- the count --------------------------------------------------------------------------------------------------

@dataclass
class Count:
    """Regex patterns (call sites with written text), their alternation branches, word lists and their entries."""

    patterns: int = 0
    branches: int = 0
    lists: int = 0
    entries: int = 0
    folders: set = field(default_factory=set)

    @property
    def patterns_and_lists(self) -> int:
        return self.patterns + self.lists

    def add(self, lit: Literal) -> None:
        if lit.kind == "regex":
            self.patterns += 1
            self.branches += lit.branches
        else:
            self.lists += 1
            self.entries += len(lit.entries)


def subpackage(lit: Literal) -> str:
    """``answer`` for ``ppkit/answer/x.py``; a top-level module is named by its file (``pipeline.py``)."""
    parts = lit.file.split("/")
    return parts[1] if len(parts) > 2 else parts[-1]


def count(literals, folders=None) -> Count:
    """The totals over ``literals`` in the given subpackages (all when None)."""
    c = Count(folders=set(folders or ()))
    for lit in literals:
        if folders is None or subpackage(lit) in folders:
            c.add(lit)
    return c


def count_table(literals) -> str:
    """One line per subpackage, then the total: patterns, branches, lists, entries."""
    by = sorted({subpackage(x) for x in literals})
    rows = [(name, count(literals, {name})) for name in by] + [("all", count(literals))]
    lines = [f"{'folder':<16}{'patterns':>9}{'branches':>9}{'lists':>7}{'entries':>9}{'pat+lists':>10}"]
    lines += [f"{n:<16}{c.patterns:>9}{c.branches:>9}{c.lists:>7}{c.entries:>9}{c.patterns_and_lists:>10}"
              for n, c in rows]
    return "\n".join(lines)


if __name__ == "__main__":  # python tests/wording_support.py PACKAGE_DIR
    found = scan_package(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent.parent / "ppkit"))
    print(count_table(found))
    for group in (("answer", "retrieval"), ("answer", "retrieval", "finance")):
        c = count(found, set(group))
        print(f"{' + '.join(group)}: patterns {c.patterns}, branches {c.branches}, lists {c.lists}, "
              f"entries {c.entries}, patterns + lists {c.patterns_and_lists}")
