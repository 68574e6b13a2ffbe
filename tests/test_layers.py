"""The layering rule: a module imports only its own layer or lower, and no module imports
itself back through others.

Layers, lowest first: core, llm, documents, indexing, finance, retrieval, answer, compare, pipeline, then
ui, bench, cli and serve (ui and bench never import each other). Every import counts, including those
made inside functions (a lazy import hides a cycle, it does not remove it). The package face
``ppkit/__init__.py`` may import anything; no module imports it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ppkit"

LAYERS = {"core": 0, "llm": 1, "documents": 2, "indexing": 3, "finance": 4, "retrieval": 5, "answer": 6,
          "compare": 7, "pipeline": 8, "ui": 9, "bench": 9, "cli": 9, "serve": 9}

# The one import of a ppkit module allowed inside a function, and why: `ppkit ask` and `ppkit index`
# must not load ppkit.bench, so cli.py imports the bench command only when it builds the bench parser; nor
# FastAPI, so `ppkit serve` imports its app only when it runs.
LAZY_IMPORTS = {("ppkit.cli", "ppkit.bench.cli"), ("ppkit.serve.cli", "ppkit.serve.app")}


def module_files(root: Path = PACKAGE) -> dict[str, Path]:
    """``{dotted module name: file}`` for every module under ``root``."""
    out = {}
    for f in sorted(root.rglob("*.py")):
        parts = list(f.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, int, bool]]:
    """The ppkit modules that ``module`` imports, with line numbers and whether the import is at the
    module's top level; every import statement counts."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            # `from pkg import name` imports the module pkg.name when there is one, else pkg
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in modules:
                t = t.rpartition(".")[0]
            if t and t != module:
                out.append((t, node.lineno, node.col_offset == 0))
    return out


def layer_of(module: str) -> str:
    parts = module.split(".")
    return "face" if len(parts) == 1 else parts[1]


def violations(root: Path = PACKAGE) -> list[str]:
    """Every upward import, import of the package face, ui<->bench import, ppkit import inside a function,
    and import cycle."""
    modules = module_files(root)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    problems = []
    for m, path in modules.items():
        src = layer_of(m)
        for target, line, top in imports_of(m, path, modules):
            dst = layer_of(target)
            where = f"{path.relative_to(root.parent)}:{line}"
            if src == "face":
                continue
            if not top and (m, target) not in LAZY_IMPORTS:
                problems.append(f"{where}: {m} imports {target} inside a function (import ppkit modules at the top; "
                                "imports inside functions are for optional third-party packages)")
            if dst == "face":
                problems.append(f"{where}: {m} imports the package face {target} (import the module instead)")
                continue
            graph[m].add(target)
            if LAYERS[dst] > LAYERS[src]:
                problems.append(f"{where}: {m} ({src}) imports {target} ({dst}), a higher layer")
            elif {src, dst} == {"ui", "bench"}:
                problems.append(f"{where}: {m} ({src}) imports {target} ({dst}); ui and bench stay apart")
    problems += [f"import cycle: {' -> '.join(c)}" for c in cycles(graph)]
    return list(dict.fromkeys(problems))  # one line per import statement


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp) + [sorted(comp)[0]])

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_module_is_in_a_layer():
    unknown = sorted(m for m in module_files() if layer_of(m) not in LAYERS and layer_of(m) != "face")
    assert unknown == []


def test_imports_follow_the_layers():
    problems = violations()
    assert problems == [], "\n".join(problems)


def test_every_module_imports():
    """No import-time cycle hides behind the graph: each module imports on its own."""
    import importlib

    for m in module_files():
        importlib.import_module(m)


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def toy(tmp_path):
    """A tiny package laid out like ppkit, clean to start with."""
    root = tmp_path / "ppkit"
    _write(root, "__init__.py", "from .pipeline import run\n")
    _write(root, "core/__init__.py", "")
    _write(root, "core/text.py", "def words(s):\n    return s.split()\n")
    _write(root, "documents/__init__.py", "")
    _write(root, "documents/tree.py", "from ..core.text import words\n")
    _write(root, "pipeline.py", "from .documents.tree import words\n\ndef run():\n    return words('a b')\n")
    return root


def test_a_clean_package_passes(toy):
    assert violations(toy) == []


def test_an_upward_import_inside_a_function_fails(toy):
    _write(toy, "core/text.py", "def words(s):\n    from ..documents import tree\n    return s.split()\n")
    problems = violations(toy)
    assert any("ppkit.core.text (core) imports ppkit.documents.tree (documents), a higher layer" in p
               for p in problems), problems
    assert any(p.startswith("import cycle: ppkit.core.text -> ppkit.documents.tree") for p in problems), problems
    assert any("inside a function" in p for p in problems), problems


def test_a_cycle_inside_one_layer_fails(toy):
    _write(toy, "documents/noise.py", "from .tree import words\n")
    _write(toy, "documents/tree.py", "from ..core.text import words\nfrom . import noise\n")
    assert violations(toy) == ["import cycle: ppkit.documents.noise -> ppkit.documents.tree -> ppkit.documents.noise"]


def test_a_ppkit_import_inside_a_function_fails(toy):
    _write(toy, "pipeline.py", "def run():\n    from .documents.tree import words\n    return words('a b')\n")
    assert violations(toy) == ["ppkit/pipeline.py:2: ppkit.pipeline imports ppkit.documents.tree inside a function "
                               "(import ppkit modules at the top; imports inside functions are for optional "
                               "third-party packages)"]


def test_importing_the_face_fails(toy):
    _write(toy, "documents/tree.py", "import ppkit\n")
    assert violations(toy) == ["ppkit/documents/tree.py:1: ppkit.documents.tree imports the package face ppkit "
                               "(import the module instead)"]
