#!/usr/bin/env bash
# The tests: install, build (or reuse) what the real parts need, start Docker when it can, then run
#   1. the unit/integration tests and the scenario library on the embedded and local backends;
#   2. a representative subset on the real Karpenter-on-Azure controller (`--harness-engine real`);
#   3. a small subset with real kubelets (`--harness-backend kind`) when the kind node image is cached
#      (its cold build, ~20+ min, belongs to the nightly matrix: `python -m harness.backends build --kind`).
# Each real-part leg skips with the reason when its piece could not be built; nothing is faked.
# A dockerd this script started is stopped again at the end.
#   bash scripts/test.sh [pytest args for leg 1...]
set -euo pipefail
cd "$(dirname "$0")/.."
# Bytecode goes to a cache outside the repository even where PYTHONDONTWRITEBYTECODE is set: without it
# every pytest process re-parses and re-rewrites the harness and its plugins (~1 CPU-s per xdist worker;
# bench/README.md).
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-$HOME/.cache/karpenter-harness/pycache}"
unset PYTHONDONTWRITEBYTECODE
bash scripts/install.sh
if command -v go >/dev/null 2>&1; then
  # kube-apiserver, kube-scheduler, kube-controller-manager, etcd, kwok, and (--node) the kubelet that
  # judges --node-labels on the real backends: ~13 + ~6 min cold, seconds when cached
  CONTROL_PLANE_BUILD="python3 -m harness.backends build --node" bash scripts/control-plane.sh \
    || echo "warning: control-plane build failed; local backend tests will skip" >&2
  echo "controller: building or reusing Karpenter-on-Azure v1.14.0 from the Go module proxy" \
       "(~10-20 min the first time, seconds when cached)..." >&2
  start=$SECONDS
  if python3 -m harness.backends build --controller >/dev/null; then
    echo "controller: ready after $((SECONDS - start)) s" >&2
  else
    echo "warning: controller build failed; the real-engine leg will skip" >&2
  fi
  # the differential test's Go program against the same provider module (tools/difftest; mostly the
  # controller's Go build cache: ~1-3 min after it, ~15 min alone); a failed build fails its test
  echo "difftest: building or reusing tools/difftest against provider v1.14.0..." >&2
  start=$SECONDS
  python3 -c 'from tests.model.godifftest import build; build()' >/dev/null \
    && echo "difftest: ready after $((SECONDS - start)) s" >&2 \
    || echo "warning: difftest build failed; tests/model/test_difftest.py will say why" >&2
fi

# docker-up.sh writes the pid of a dockerd it starts to this file (and leaves a running daemon alone).
pidfile=${DOCKERD_PIDFILE:-/tmp/dockerd-harness.pid}
before=$(cat "$pidfile" 2>/dev/null || true)
echo "docker: starting it if it is not running (container and kind backends)..." >&2
bash harness/backends/docker-up.sh >/dev/null 2>&1 || echo "note: docker unavailable; container/kind tests will skip" >&2
after=$(cat "$pidfile" 2>/dev/null || true)
if [ -n "$after" ] && [ "$after" != "$before" ]; then
  stop_dockerd() {
    kill "$after" 2>/dev/null || return 0
    for _ in $(seq 30); do kill -0 "$after" 2>/dev/null || break; sleep 1; done
    rm -f "$pidfile"
  }
  trap stop_dockerd EXIT
fi

mkdir -p reports
rm -f reports/junit*.xml        # the closing line below sums this run's legs only
rc=0
leg() {     # leg NAME PYTEST-ARGS...: run one pytest leg; exit code 5 (no tests) is not a failure
  local name=$1; shift
  echo "tests ($name): pytest $*" >&2
  set +e
  python3 -m pytest -p no:cacheprovider "$@"
  local r=$?
  set -e
  if [ "$r" -ne 0 ] && [ "$r" -ne 5 ]; then rc=$r; fi
}

# 1. everything, with the scenario library on both backends: a conformance run (local items skip,
#    with the reason, when no control plane could be built)
leg "embedded+local, 3-8 min" tests/ scenarios/ -n auto --harness-backend embedded --harness-backend local \
  --junitxml=reports/junit.xml "$@"
# 2. the real controller on its CI subset (scenarios named in harness/data/real-subset.txt)
leg "real controller subset, ~20 s a scenario" scenarios/ --harness-engine real --harness-real-subset --harness-profile upstream \
  --junitxml=reports/junit-real.xml
# 3. real kubelets: the design 0006 label-path scenarios (kubelet --node-labels, karpenter-core sync,
#    refused labels, NodeRestriction) on kind; skipped with the reason when the node image is not built
leg "kind subset, ~1-2 min when the image is cached" \
  scenarios/design-0006/decision-allowed-labels.scenario.yaml \
  scenarios/design-0006/decision-custom-domains.scenario.yaml \
  scenarios/design-0006/faq-non-schedulable-labels.scenario.yaml \
  --harness-profile upstream --harness-backend kind --junitxml=reports/junit-kind.xml
# one closing line over the three legs (from their JUnit XML; xfails count as skipped there)
python3 - <<'PY'
import glob
import xml.etree.ElementTree as ET
n = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
for f in sorted(glob.glob("reports/junit*.xml")):
    for suite in ET.parse(f).getroot().iter("testsuite"):
        for k in n:
            n[k] += int(suite.get(k, 0))
failed = n["failures"] + n["errors"]
print(f"total: {n['tests'] - failed - n['skipped']} passed, {failed} failed, {n['skipped']} skipped")
PY
exit "$rc"
