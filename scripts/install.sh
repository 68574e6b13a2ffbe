#!/usr/bin/env bash
# Install ppkit with everything it needs, offline-capable after this step.
# torch goes first, pinned to the CPU build: an unpinned torch (asked for by
# sentence-transformers) would pull a multi-GB CUDA build.
set -euo pipefail
PY="${PYTHON:-python3}"
"$PY" -m pip install --upgrade pip >/dev/null
"$PY" -m pip install "torch==2.13.0"
"$PY" -m pip install -e ".[all]"
