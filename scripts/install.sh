#!/usr/bin/env bash
# Install ppkit into the active Python environment, offline-capable after this step.
#
#   bash scripts/install.sh            ppkit[all]: everything a user runs, no GPL/AGPL code (tests/test_licenses.py)
#   bash scripts/install.sh --dev      ppkit[dev]: [all] + the test tools, the peers of `ppkit bench peers` and the
#                                      AGPL layout extractor (`pdf`): what the tests, CI and `ppkit bench` need
#   bash scripts/install.sh --latest   (alone or with --dev) the newest releases pyproject.toml allows, upgrading
#                                      what is installed, instead of the versions pinned in constraints.txt
#
# constraints.txt holds the versions CI last passed with (python scripts/deps.py constraints regenerates it).
# torch goes first, pinned to the CPU build: an unpinned torch (asked for by sentence-transformers) would pull a
# multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
extra=all
pin=(-c constraints.txt)
for arg in "$@"; do
    case "$arg" in
        --dev) extra=dev ;;
        --latest) pin=(--upgrade --upgrade-strategy eager) ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "scripts/install.sh: unknown option $arg; use --dev and/or --latest (--help says what they do)" >&2
           exit 2 ;;
    esac
done
PY="${PYTHON:-python3}"
"$PY" -m pip install --upgrade pip >/dev/null
"$PY" -m pip install "torch==2.13.0"
"$PY" -m pip install "${pin[@]}" -e ".[$extra]"
