#!/usr/bin/env bash
# The test command: the pytest suite plus every notebook executed by nbmake, offline.
# Reference indexes are built once into the cache (.ppkit/) and shared by tests and notebooks.
set -euo pipefail
export PPKIT_QUIET=1 PPKIT_OFFLINE=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 MPLBACKEND=Agg
python -m pytest tests --nbmake notebooks -p no:cacheprovider "$@"
