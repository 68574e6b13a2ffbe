"""The extras by who needs them, the conda environment, the install script and the constraints file.

``all`` is what a user runs (scripts/install.sh), ``dev`` is ``all`` plus the test tools, the peers and the AGPL
``pdf`` extra (scripts/install.sh --dev, CI); environment.yml mirrors ``dev``; constraints.txt pins every
distribution ``dev`` brings (scripts/deps.py constraints).
"""

import re
import subprocess
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from deps_support import ROOT, deps

USER_EXTRAS = {"local", "int8", "gemini", "qdrant", "notebooks", "llamaparse", "serve", "compare", "bench"}
DEV_ONLY = {"test", "pdf", "peers"}


def _extras() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def _named(extra: str) -> set[str]:
    (req,) = _extras()[extra]
    return set(re.search(r"\[(.*)\]", req).group(1).split(","))


def _environment_pip() -> list[str]:
    text = (ROOT / "environment.yml").read_text()
    pip = text.split("- pip:", 1)[1]
    return [m.strip().strip("'\"") for m in re.findall(r"^\s+- (.+)$", pip, flags=re.M)]


def test_all_is_what_a_user_runs_and_dev_adds_the_rest():
    assert _named("all") == USER_EXTRAS
    assert _named("dev") == {"all"} | DEV_ONLY
    assert set(_extras()) == USER_EXTRAS | DEV_ONLY | {"all", "dev"}  # a new extra is placed deliberately


def test_environment_yml_mirrors_dev():
    items = _environment_pip()
    assert items[-1] == "-e ."
    reqs = [Requirement(i) for i in items[:-1]]
    assert [str(r) for r in reqs if r.name == "torch"] == ["torch==2.13.0"]  # once, the CPU build's version
    want = {str(r) for r in deps.own_requirements(deps.DEV_EXTRAS) if r.name != "torch"}
    assert {str(r) for r in reqs if r.name != "torch"} == want


def test_constraints_pin_every_distribution_dev_requires_directly():
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version and "+" not in version, f"constraints.txt: {line!r} is not name==public version"
            pins[canonicalize_name(name)] = version
    direct = {canonicalize_name(r.name): r for r in deps.own_requirements(deps.DEV_EXTRAS)}
    assert not set(direct) - set(pins), "constraints.txt lacks a requirement: python scripts/deps.py constraints"
    wrong = [f"{n}=={pins[n]} ({r})" for n, r in direct.items() if not r.specifier.contains(pins[n], prereleases=True)]
    assert not wrong, "constraints.txt pins a version pyproject.toml excludes: " + "; ".join(wrong)
    assert pins["torch"] == "2.13.0"


def test_install_script_rejects_an_unknown_option_without_installing():
    run = subprocess.run(["bash", str(ROOT / "scripts" / "install.sh"), "--everything"], capture_output=True,
                         text=True, env={"PATH": "/usr/bin:/bin", "PYTHON": "/bin/false"})
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "scripts/install.sh: unknown option --everything; use --dev and/or --latest (--help says what they do)"]
