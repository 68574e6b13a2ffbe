"""The conda environment's pip section mirrors pyproject's dependencies (core + every extra)."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _pyproject_requirements() -> set[str]:
    proj = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = set(proj["dependencies"])
    for name, extra in proj["optional-dependencies"].items():
        reqs |= {r for r in extra if not r.startswith("ppkit[")}
    return reqs


def _environment_pip() -> set[str]:
    text = (ROOT / "environment.yml").read_text()
    pip = text.split("- pip:", 1)[1]
    items = {m.strip().strip("'\"") for m in re.findall(r"^\s+- (.+)$", pip, flags=re.M)}
    return {i for i in items if i not in {"-e .", "torch==2.13.0"}}


def test_environment_yml_mirrors_pyproject():
    assert _environment_pip() == _pyproject_requirements()


def test_all_extra_names_every_other_extra():
    proj = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = set(proj["optional-dependencies"]) - {"all"}
    (all_req,) = proj["optional-dependencies"]["all"]
    assert set(re.search(r"\[(.*)\]", all_req).group(1).split(",")) == extras
