#!/usr/bin/env bash
# The main job: install, then run the scenario library on the embedded backend.
#   bash scripts/scenarios.sh [pytest args...]      e.g. -k faq, --profile upstream, -n auto
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec python3 -m pytest scenarios/ "$@"
