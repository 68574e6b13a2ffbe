"""Every third-party import in ``ppkit/`` is declared by the extra its subpackage serves, and the core declares
nothing that the package does not import.

The imports are read from the source (function-level ones and ``TYPE_CHECKING`` ones too); the distribution
that provides a module is read from the installed metadata (the environment of ``scripts/install.sh --dev``,
which holds every extra). An import counts as declared when that distribution is named directly, not merely
brought along by another one, in the core dependencies or in an extra that :data:`EXTRAS_OF` allows for the
importing module.
"""

import ast
import importlib.metadata as md
import sys
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from deps_support import ROOT, deps

PKG = ROOT / "ppkit"

# module (a subpackage, or a module within one: the longest prefix counts) -> the extras its imports may come from,
# beside the core dependencies
EXTRAS_OF = {
    "ppkit": (),  # __init__.py, pipeline.py, cli.py
    "ppkit.core": (),
    "ppkit.llm": ("gemini",),
    "ppkit.documents": ("pdf", "llamaparse"),
    "ppkit.indexing": ("local", "int8", "qdrant"),
    "ppkit.retrieval": (),
    "ppkit.answer": (),
    "ppkit.finance": (),
    "ppkit.compare": ("compare",),
    "ppkit.ui": ("notebooks",),
    "ppkit.serve": ("serve", "local"),  # the usage counts in the served model's word pieces, when it is installed
    "ppkit.bench": ("bench", "notebooks", "peers", "serve", "compare"),  # fit-align: scipy's minimize
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """Third-party dotted module -> the ppkit modules that import it."""
    out: dict[str, set[str]] = {}
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in ("ppkit", "__future__"):
                    continue
                out.setdefault(name, set()).add(_module_name(path))
    return out


def _entry(module: str) -> str:
    return max((k for k in EXTRAS_OF if module == k or module.startswith(k + ".")), key=len)


_PROVIDERS = md.packages_distributions()  # top-level module -> distribution names


def _providers(dotted: str) -> set[str]:
    """The installed distributions that provide ``dotted`` (a namespace such as ``google`` narrowed to the
    distributions whose files hold the submodule)."""
    parts = dotted.split(".")
    names = {canonicalize_name(d) for d in _PROVIDERS.get(parts[0], [])}
    if len(names) > 1 and len(parts) > 1:
        sub = "/".join(parts[:2])
        narrowed = {n for n in names
                    if any(str(f).startswith(sub + "/") or str(f).startswith(sub + ".")
                           for f in md.distribution(n).files or [])}
        names = narrowed or names
    return names


def _declared(extras: tuple[str, ...]) -> set[str]:
    return {canonicalize_name(r.name) for r in deps.own_requirements(extras)}


def test_every_subpackage_has_an_entry_naming_real_extras():
    subpackages = {f"ppkit.{p.name}" for p in PKG.iterdir() if (p / "__init__.py").is_file()}
    assert subpackages <= set(EXTRAS_OF), f"add to EXTRAS_OF: {sorted(subpackages - set(EXTRAS_OF))}"
    known = set(deps.tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    assert {e for extras in EXTRAS_OF.values() for e in extras} <= known


def test_every_third_party_import_is_declared_by_its_subpackages_extras():
    problems = []
    for dotted, importers in sorted(_imports().items()):
        providers = _providers(dotted)
        if not providers:
            problems.append(f"{dotted} (imported by {', '.join(sorted(importers))}): no installed distribution "
                            "provides it; declare it, then bash scripts/install.sh --dev")
            continue
        for module in sorted(importers):
            extras = EXTRAS_OF[_entry(module)]
            if not providers & _declared(extras):
                problems.append(f"{module} imports {dotted} ({', '.join(sorted(providers))}), which neither the "
                                f"core nor {', '.join(extras) or 'any extra'} declares")
    assert not problems, "\n".join(problems)


def test_core_declares_only_what_the_package_imports():
    project = deps.tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {canonicalize_name(deps.Requirement(r).name) for r in project["dependencies"]}
    imported = set().union(*(_providers(d) for d in _imports()))
    assert not core - imported, f"core dependencies ppkit never imports: {sorted(core - imported)}"


@pytest.mark.parametrize("module, extra", [("httpx", "bench"), ("openpyxl", "bench"), ("scipy", "compare")])
def test_the_issue_49_modules_sit_in_their_extras(module, extra):
    """httpx was declared nowhere, openpyxl and scipy were core dependencies of every install."""
    providers = _providers(module)
    assert providers & _declared((extra,))
    assert not providers & _declared(())
