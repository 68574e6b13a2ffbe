"""Every ``ppkit.…`` name written in prose resolves to something that exists.

The prose is ``README.md``, ``docs/**/*.md`` (code examples included) and, for every module under
``ppkit/``, its docstrings (module, class and function, read with ``ast``) and its comments (read
with ``tokenize``). A name resolves when the longest importable module prefix imports and the rest
is found by ``getattr`` (or, on a class, as a dataclass field or an annotated attribute). On
failure the test lists every name that does not resolve, with file:line.
"""

from __future__ import annotations

import ast
import importlib
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "ppkit"

# A dotted name: ``ppkit`` then one or more ``.identifier``; trailing punctuation (``.``, ``,``,
# ``)``, backticks) is not part of it because it is not an identifier character.
NAME = re.compile(r"(?<![\w./-])ppkit(?:\.[A-Za-z_]\w*)+")

# Names that look dotted but are not Python names, each with its reason. Empty today: file paths
# such as ``src/ppkit.x`` are already left out by the look-behind in NAME.
NOT_PYTHON: set[str] = set()


def markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def markdown_names(path: Path) -> list[tuple[str, int]]:
    out = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        out += [(m.group(0), lineno) for m in NAME.finditer(line)]
    return out


def source_names(path: Path) -> list[tuple[str, int]]:
    """Names in the docstrings and comments of one module, with their line numbers."""
    text = path.read_text(encoding="utf-8")
    out = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            doc = body[0].value
            for offset, line in enumerate(doc.value.splitlines()):
                out += [(m.group(0), doc.lineno + offset) for m in NAME.finditer(line)]
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            out += [(m.group(0), tok.start[0]) for m in NAME.finditer(tok.string)]
    return out


def class_member(cls: type, name: str) -> bool:
    """A dataclass field or an annotated attribute of ``cls`` (or of a base): they are real names
    of the class even when ``getattr`` on the class itself finds no default."""
    for base in cls.__mro__:
        if name in getattr(base, "__dataclass_fields__", {}) or name in base.__dict__.get("__annotations__", {}):
            return True
        if name in (getattr(base, "__slots__", ()) or ()):
            return True
    return False


def resolves(name: str) -> bool:
    parts = name.split(".")
    obj, rest = None, []
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        rest = parts[i:]
        break
    if obj is None:
        return False
    for attr in rest:
        if hasattr(obj, attr):
            obj = getattr(obj, attr)
        elif isinstance(obj, type) and class_member(obj, attr):
            obj = None  # a field: nothing further to look inside
        else:
            return False
    return True


def all_names() -> list[tuple[str, str, int]]:
    found = []
    for path in markdown_files():
        found += [(n, str(path.relative_to(ROOT)), ln) for n, ln in markdown_names(path)]
    for path in sorted(PACKAGE.rglob("*.py")):
        found += [(n, str(path.relative_to(ROOT)), ln) for n, ln in source_names(path)]
    return [(n, f, ln) for n, f, ln in found if n not in NOT_PYTHON]


def test_the_scan_finds_names():
    names = {n for n, _, _ in all_names()}
    assert "ppkit.pipeline" in names or any(n.startswith("ppkit.pipeline.") for n in names)
    assert len(names) > 50


def test_every_dotted_name_resolves():
    cache: dict[str, bool] = {}
    bad = []
    for name, file, lineno in all_names():
        if name not in cache:
            cache[name] = resolves(name)
        if not cache[name]:
            bad.append(f"{file}:{lineno}: {name}")
    assert not bad, "names that do not resolve:\n" + "\n".join(bad)


def test_scan_reads_docstrings_and_comments(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('"""See ppkit.pipeline.stream."""\n\n\ndef g():\n    """Uses ppkit.no_such."""\n'
                 '    return 1  # like ppkit.cli.main.\n', encoding="utf-8")
    assert source_names(f) == [("ppkit.pipeline.stream", 1), ("ppkit.no_such", 5), ("ppkit.cli.main", 6)]
    assert resolves("ppkit.pipeline.stream") and not resolves("ppkit.no_such")
