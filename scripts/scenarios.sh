#!/usr/bin/env bash
# The main job: install, then run the scenario library on the embedded backend.
#   bash scripts/scenarios.sh [pytest args...]      e.g. -k faq, --harness-profile upstream, -n auto
set -euo pipefail
cd "$(dirname "$0")/.."
# Bytecode goes to a cache outside the repository even where PYTHONDONTWRITEBYTECODE is set: without it
# every pytest process re-parses and re-rewrites the harness and its plugins (~1 CPU-s per xdist worker;
# docs/benchmarks/simulation.md).
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-$HOME/.cache/karpenter-harness/pycache}"
unset PYTHONDONTWRITEBYTECODE
bash scripts/install.sh
exec python3 -m pytest scenarios/ "$@"
