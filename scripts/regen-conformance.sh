#!/usr/bin/env bash
# Regenerate docs/conformance/: every upstream-profile scenario of the library on the real
# Karpenter-on-Azure controller and on the simulated engine, side by side (harness/runner/conformance.py),
# then fail on a difference no strict xfail explains (which side is wrong, from the upstream source).
# Needs the control plane and the controller (built here when missing: ~15 + ~5-20 min cold).
# About 10-15 min warm on 2 cores with JOBS=2 (each worker runs its own API server and controller).
#   bash scripts/regen-conformance.sh [OUT_DIR] [pytest selection...]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/conformance}
shift || true
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-$HOME/.cache/karpenter-harness/pycache}"
python3 -m harness.backends build >/dev/null
python3 -m harness.backends build --controller >/dev/null
rm -rf "$out/entries"
set +e
python3 -m pytest "${@:-scenarios/}" --harness-engine real --harness-profile upstream -n "${JOBS:-2}" -p no:cacheprovider -q \
  --harness-conformance "$out"
rc=$?
set -e
# 1: some real runs failed their expectations; the report holds them and `check` judges them.
# Anything else (an interrupted or broken session) is a failure of this script.
if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
  echo "regen-conformance: pytest ended with $rc" >&2
  exit "$rc"
fi
python3 -m harness.runner.conformance check "$out"
