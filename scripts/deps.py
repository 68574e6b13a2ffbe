"""What an extra of ppkit brings into an environment: which distributions, at which versions, under which licenses.

ppkit's own requirements are read from the checkout's ``pyproject.toml`` (the core list and the extras asked for;
an extra naming other extras of ppkit, such as ``all`` and ``dev``, is expanded), everything below them from the
metadata of the distributions installed in this interpreter's environment: each ``Requires-Dist`` marker is
evaluated here, with the extras the requirement was asked with, and a requirement's own extras are followed.
It resolves no versions and installs, downloads or imports nothing: it describes an environment pip has built.

A distribution's license is read from its ``License-Expression`` field, else its ``License ::`` classifiers,
else its ``License`` field, and sorted into permissive, weak copyleft (LGPL, MPL), strong copyleft (GPL, AGPL
of any version) or unknown (see :func:`license_kind`).

Run in the environment CI passed with (the checkout's ``.venv`` after ``bash .ci/run``)::

    python scripts/deps.py constraints   # constraints.txt: ppkit[dev] and all it brings, at the installed versions
    python scripts/deps.py licenses      # docs/licenses.md: the licenses of what the default install ([all]) brings

tests/test_licenses.py and tests/test_packaging.py import this file.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "ppkit"
DEFAULT_EXTRAS = ("all",)  # what scripts/install.sh installs
DEV_EXTRAS = ("dev",)  # what scripts/install.sh --dev and CI install

# license kinds, best first; a term's kind is the first family whose pattern it matches
KINDS = ("permissive", "weak copyleft", "unknown", "strong copyleft")
_FAMILIES = (
    ("strong copyleft", re.compile(r"\bA?GPL|GNU (Affero )?General Public|Affero", re.I)),
    ("weak copyleft", re.compile(r"LGPL|Lesser General Public|Library General Public|\bMPL|Mozilla Public", re.I)),
    ("permissive", re.compile(r"\bMIT\b|MIT-|BSD|Apache|\bISC\b|\bPSF|Python Software Foundation|Python-2\.0|"
                              r"CNRI-Python|Unlicense|CC0|Zlib|BSL-1\.0|Boost Software|HPND|Historical Permission|"
                              r"Public Domain|LLVM-exception", re.I)),
)


def own_requirements(extras=DEFAULT_EXTRAS, *, pyproject: Path = ROOT / "pyproject.toml") -> list[Requirement]:
    """The requirements of ``ppkit[extras]``: the core list and each extra's, extras of ppkit expanded.

    >>> [r.name for r in own_requirements(["compare"])][-1]  # doctest: +SKIP
    'scipy'
    """
    project = tomllib.loads(Path(pyproject).read_text())["project"]
    optional = project.get("optional-dependencies", {})
    out = [Requirement(r) for r in project.get("dependencies", [])]
    todo, seen = list(extras), set()
    while todo:
        extra = todo.pop(0)
        if extra in seen:
            continue
        if extra not in optional:
            raise SystemExit(f"{PROJECT} has no extra {extra!r}; its extras: {', '.join(optional)}")
        seen.add(extra)
        for spec in optional[extra]:
            req = Requirement(spec)
            if canonicalize_name(req.name) == PROJECT:
                todo.extend(sorted(req.extras))
            else:
                out.append(req)
    return out


@dataclass(frozen=True)
class Closure:
    """The distributions a set of requirements brings, as installed here.

    Attributes:
        dists: canonical name -> the installed distribution.
        required_by: canonical name -> the first requirer found (``ppkit`` for its own requirements).
        missing: canonical name -> its requirer, for requirements that nothing installed here provides.
    """

    dists: dict
    required_by: dict
    missing: dict

    def __repr__(self) -> str:
        return f"Closure({len(self.dists)} distributions, {len(self.missing)} missing)"


def installed() -> dict:
    """canonical name -> distribution, for every distribution this interpreter sees (the first of a name wins)."""
    out: dict = {}
    for d in md.distributions():
        name = d.metadata["Name"]
        if name:
            out.setdefault(canonicalize_name(name), d)
    return out


def _applies(req: Requirement, extras: frozenset) -> bool:
    """Whether ``req`` holds here, for a distribution asked for with ``extras``."""
    if req.marker is None:
        return True
    return any(req.marker.evaluate({"extra": e}) for e in (extras or {""}))


def closure(requirements: list[Requirement], *, dists: dict | None = None) -> Closure:
    """Every distribution ``requirements`` bring, recursively, from the installed metadata (``dists``:
    :func:`installed` by default)."""
    dists = installed() if dists is None else dists
    got, by, missing = {}, {}, {}
    done = set()  # (name, extras) already followed
    todo = [(r, PROJECT) for r in requirements if _applies(r, frozenset())]
    while todo:
        req, parent = todo.pop(0)
        name, extras = canonicalize_name(req.name), frozenset(req.extras)
        if (name, extras) in done:
            continue
        done.add((name, extras))
        dist = dists.get(name)
        if dist is None:
            missing.setdefault(name, parent)
            continue
        got[name] = dist
        by.setdefault(name, parent)
        for spec in dist.requires or []:
            sub = Requirement(spec)
            if _applies(sub, extras):
                todo.append((sub, name))
    return Closure(dict(sorted(got.items())), by, missing)


# -- licenses -----------------------------------------------------------------------------------------------
def license_of(dist) -> tuple[str, str]:
    """(license, where it was read: ``expression``, ``classifiers``, ``field`` or ``none``)."""
    meta = dist.metadata
    expr = (meta.get("License-Expression") or "").strip()
    if expr:
        return expr, "expression"
    classifiers = [c.split("::")[-1].strip() for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    classifiers = [c for c in classifiers if c != "OSI Approved"] or classifiers
    if classifiers:
        return "; ".join(classifiers), "classifiers"
    field = next((ln.strip() for ln in (meta.get("License") or "").splitlines() if ln.strip()), "")
    if field and field.upper() != "UNKNOWN":
        return field[:120], "field"
    return "", "none"


def _term_kind(term: str) -> str:
    for kind, pattern in _FAMILIES:
        if pattern.search(term):
            return kind
    return "unknown"


def _worst(kinds) -> str:
    return max(kinds, key=KINDS.index, default="unknown")


def license_kind(text: str, source: str) -> str:
    """``permissive``, ``weak copyleft``, ``unknown`` or ``strong copyleft``.

    An SPDX expression is split into its license terms: the alternatives of a top-level ``OR`` are a choice
    (the best counts), ``AND`` and ``WITH`` terms all apply (the worst counts). Each classifier is a term and
    all apply. The free ``License`` field is one term searched for a known name. A term that names no known
    family is ``unknown``.

    >>> license_kind("GPL-2.0-or-later OR MIT", "expression"), license_kind("LGPL-3.0", "expression")
    ('permissive', 'weak copyleft')
    """
    if source == "expression":
        if "(" in text:
            alternatives = [text]
        else:
            alternatives = re.split(r"\s+OR\s+", text)
        kinds = [_worst(_term_kind(t) for t in re.split(r"\s+(?:AND|OR|WITH)\s+|[()]", a) if t.strip())
                 for a in alternatives]
        return min(kinds, key=KINDS.index)
    if source == "classifiers":
        return _worst(_term_kind(t) for t in text.split("; "))
    if source == "field":
        return _term_kind(text)
    return "unknown"


@dataclass(frozen=True)
class License:
    """One distribution's license as its metadata states it."""

    name: str
    version: str
    text: str
    source: str
    kind: str
    required_by: str


def licenses(c: Closure) -> list[License]:
    """The license of every distribution in ``c``, by name."""
    out = []
    for name, dist in c.dists.items():
        text, source = license_of(dist)
        out.append(License(dist.metadata["Name"], dist.version, text, source, license_kind(text, source),
                           c.required_by.get(name, "")))
    return out


# -- the two files ------------------------------------------------------------------------------------------
def _public(version: str) -> str:
    """``2.13.0+cpu`` -> ``2.13.0`` (a local label would match one build only)."""
    return version.split("+", 1)[0]


def constraints_text(c: Closure) -> str:
    head = ("# The versions of ppkit[dev] and of everything it brings, as installed where CI last passed.\n"
            "# scripts/install.sh installs with them (pip -c constraints.txt) unless given --latest.\n"
            "# Regenerate in that environment: python scripts/deps.py constraints\n")
    return head + "".join(f"{d.metadata['Name']}=={_public(d.version)}\n" for name, d in c.dists.items()
                          if name != PROJECT)


def licenses_markdown(rows: list[License], extras=DEFAULT_EXTRAS) -> str:
    counts = {k: sum(r.kind == k for r in rows) for k in KINDS}
    summary = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    lines = [
        "# Licenses of the default install",
        "",
        "Back to [the docs index](README.md).",
        "",
        f"What `bash scripts/install.sh` (`pip install -e '.[{','.join(extras)}]'`) brings: every distribution that "
        "ppkit's requirements need, recursively, as installed where CI passed, with its license as its metadata "
        "states it (`License-Expression`, else the `License ::` classifiers, else the `License` field). Kinds: "
        "permissive; weak copyleft (LGPL, MPL: allowed); strong copyleft (GPL, AGPL of any version: "
        "`tests/test_licenses.py` fails on any); unknown (the test fails unless its allowlist names it, with "
        "a reason). The AGPL layout extractor (`pdf`) and the test tools and peers are in `[dev]` only.",
        "",
        "Regenerate (in the environment CI passed with):",
        "",
        "```bash",
        "python scripts/deps.py licenses",
        "```",
        "",
        f"{len(rows)} distributions: {summary}.",
        "",
        "| distribution | version | license | read from | kind | required by |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        text = r.text.replace("|", "\\|") or "–"
        lines.append(f"| {r.name} | {r.version} | {text} | {r.source} | {r.kind} | {r.required_by} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python scripts/deps.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    con = sub.add_parser("constraints", help="write constraints.txt from this environment (ppkit[dev])")
    con.add_argument("--out", type=Path, default=ROOT / "constraints.txt")
    con.add_argument("--allow-missing", action="store_true",
                     help="pin what is installed and name on stderr what is not (to seed a first install)")
    lic = sub.add_parser("licenses", help="write docs/licenses.md from this environment (ppkit[all])")
    lic.add_argument("--out", type=Path, default=ROOT / "docs" / "licenses.md")
    args = ap.parse_args(argv)
    extras = DEV_EXTRAS if args.what == "constraints" else DEFAULT_EXTRAS
    c = closure(own_requirements(extras))
    if c.missing:
        names = ", ".join(f"{n} (for {p})" for n, p in sorted(c.missing.items()))
        if args.what == "licenses" or not args.allow_missing:
            print(f"not installed here: {names}; run bash scripts/install.sh --dev in this environment first",
                  file=sys.stderr)
            return 1
        print(f"not pinned (not installed here): {names}", file=sys.stderr)
    text = constraints_text(c) if args.what == "constraints" else licenses_markdown(licenses(c), extras)
    args.out.write_text(text)
    print(f"{args.out}: {len(c.dists)} distributions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
