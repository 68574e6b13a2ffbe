"""The default install (``bash scripts/install.sh``: ``ppkit[all]``) brings no GPL or AGPL code.

What ``[all]`` brings is computed from the installed distributions' metadata (``scripts/deps.py``: ppkit's own
requirements from pyproject.toml, then every ``Requires-Dist`` recursively, markers and extras evaluated), so the
check holds in CI's environment too, which has ``[dev]`` (the AGPL ``pdf`` extra among it) installed beside.
Each distribution's license: ``License-Expression``, else its license classifiers, else its ``License`` field.
GPL and AGPL of any version fail; LGPL, MPL and permissive licenses pass and are listed in docs/licenses.md; a
license no known family names fails unless :data:`ALLOWED_UNKNOWN` names the distribution with a reason.
"""

from types import SimpleNamespace

import pytest

from deps_support import ROOT, deps

# distribution -> why its license, which no known family names, is acceptable (one line each)
ALLOWED_UNKNOWN: dict[str, str] = {}


@pytest.fixture(scope="module")
def default_install():
    c = deps.closure(deps.own_requirements(deps.DEFAULT_EXTRAS))
    assert not c.missing, f"not installed, so its license cannot be read: {c.missing}; run bash scripts/install.sh"
    return c


def test_default_install_brings_no_gpl_or_agpl(default_install):
    rows = deps.licenses(default_install)
    strong = [f"{r.name} {r.version}: {r.text} (required by {r.required_by})" for r in rows
              if r.kind == "strong copyleft"]
    assert not strong, "GPL/AGPL in the default install: " + "; ".join(strong)
    unknown = [f"{r.name}: {r.text or 'no license stated'}" for r in rows
               if r.kind == "unknown" and r.name not in ALLOWED_UNKNOWN]
    assert not unknown, "license of no known family (add to ALLOWED_UNKNOWN with a reason, or drop it): " + \
        "; ".join(unknown)
    names = {r.name for r in rows}
    assert not set(ALLOWED_UNKNOWN) - names, "ALLOWED_UNKNOWN names a distribution [all] no longer brings"


def test_the_agpl_extra_is_found_where_it_is_installed():
    """The same reading finds the layout extractor's AGPL in ``[dev]`` (so the check above can fail)."""
    if deps.installed().get("pymupdf") is None:
        pytest.skip("the pdf extra is not installed here (bash scripts/install.sh --dev installs it)")
    dev = {r.name.lower(): r for r in deps.licenses(deps.closure(deps.own_requirements(deps.DEV_EXTRAS)))}
    assert dev["pymupdf"].kind == "strong copyleft"
    assert "pymupdf" not in {n.lower() for n in deps.closure(deps.own_requirements(deps.DEFAULT_EXTRAS)).dists}


def test_license_list_in_docs_names_every_distribution_of_the_default_install(default_install):
    text = (ROOT / "docs" / "licenses.md").read_text()
    listed = {line.split(" | ")[0].removeprefix("| ").lower() for line in text.splitlines()
              if line.startswith("| ") and not line.startswith("| distribution") and not line.startswith("| ---")}
    brought = {d.metadata["Name"].lower() for d in default_install.dists.values()}
    assert brought == listed, ("docs/licenses.md is out of date (python scripts/deps.py licenses): "
                               f"missing {sorted(brought - listed)}, extra {sorted(listed - brought)}")
    assert "python scripts/deps.py licenses" in text


@pytest.mark.parametrize("text, source, kind", [
    ("GPL-3.0-only", "expression", "strong copyleft"),
    ("AGPL-3.0-or-later", "expression", "strong copyleft"),
    ("MIT AND GPL-2.0-or-later", "expression", "strong copyleft"),
    ("GPL-2.0-or-later OR MIT", "expression", "permissive"),  # a choice: the permissive one can be taken
    ("LGPL-2.1-or-later", "expression", "weak copyleft"),
    ("MPL-2.0 AND MIT", "expression", "weak copyleft"),
    ("Apache-2.0 WITH LLVM-exception AND BSD-3-Clause", "expression", "permissive"),
    ("GNU Affero General Public License v3", "classifiers", "strong copyleft"),
    ("GNU General Public License v2 or later (GPLv2+)", "classifiers", "strong copyleft"),
    ("GNU Lesser General Public License v3 (LGPLv3)", "classifiers", "weak copyleft"),
    ("MIT License; BSD License", "classifiers", "permissive"),
    ("MIT License; Other/Proprietary License", "classifiers", "unknown"),
    ("BSD-3-Clause, Apache-2.0, dependency licenses", "field", "permissive"),
    ("Proprietary, all rights reserved", "field", "unknown"),
    ("", "none", "unknown"),
])
def test_license_kinds(text, source, kind):
    assert deps.license_kind(text, source) == kind


def _dist(name, version, requires=(), **meta):
    fields = {"Name": name, **meta}

    class Meta(dict):
        def get_all(self, key):
            v = self.get(key)
            return None if v is None else list(v) if isinstance(v, (list, tuple)) else [v]

    return SimpleNamespace(metadata=Meta(fields), version=version, requires=list(requires))


def test_closure_follows_markers_and_extras_from_the_project_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "ppkit"\ndependencies = ["alpha>=1"]\n'
        '[project.optional-dependencies]\nweb = ["beta[fast]"]\npdf = ["gamma"]\nall = ["ppkit[web]"]\n')
    dists = {
        "alpha": _dist("alpha", "1.2", ['delta; python_version < "3.0"']),  # a marker false here: not followed
        "beta": _dist("Beta", "2.0", ["epsilon", 'zeta; extra == "fast"', 'eta; extra == "slow"']),
        "epsilon": _dist("epsilon", "0.1"),
        "zeta": _dist("zeta", "3.0", ["theta"]),
        "gamma": _dist("gamma", "1.28", **{"License-Expression": "AGPL-3.0"}),
    }
    c = deps.closure(deps.own_requirements(["all"], pyproject=tmp_path / "pyproject.toml"), dists=dists)
    assert list(c.dists) == ["alpha", "beta", "epsilon", "zeta"]  # gamma (pdf) is not asked for by all
    assert c.missing == {"theta": "zeta"}
    assert (c.required_by["beta"], c.required_by["zeta"]) == ("ppkit", "beta")
    assert deps.constraints_text(deps.Closure({"torch": _dist("torch", "2.13.0+cpu")}, {}, {})).endswith(
        "torch==2.13.0\n")  # the public version: a local build label would match one build only
