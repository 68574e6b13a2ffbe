"""``scripts/deps.py`` (what an extra brings, as installed) loaded once for the tests that read it."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _load():
    if "ppkit_scripts_deps" not in sys.modules:
        spec = importlib.util.spec_from_file_location("ppkit_scripts_deps", ROOT / "scripts" / "deps.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # before running it: its dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules["ppkit_scripts_deps"]


deps = _load()
