#!/usr/bin/env bash
# The tests: install, build (or reuse) what every leg needs, run every leg, and sum them in one line:
#   0. docs: the generated reference pages are current and `mkdocs build --strict` passes (tests/test_docs.py;
#      needs no build, so it runs first: seconds);
#   1. embedded+local: the unit/integration tests and the scenario library on the embedded and local backends;
#   2. real controller: a representative subset on the real Karpenter-on-Azure controller (`--harness-engine real`);
#   3. kind: the design 0006 label-path scenarios with real kubelets (`--harness-backend kind`);
#   4. wheel: the wheel built from this checkout, installed into a fresh venv outside it (scripts/wheel-smoke.sh).
# The builds, all cached under ~/.cache/karpenter-harness (seconds once cached), run side by side, each
# saying what it builds and how long so far every 15 s:
#   chain A: control plane and node binaries (one Go build cache), then the kind node image;
#   chain B: the Karpenter-on-Azure controller, then tools/difftest on the controller's Go build cache
#            (provider v1.14.0 pins other Kubernetes libraries than v1.36.3: A and B share few packages);
#   beside them: the node image's Debian root filesystem (debootstrap: network and disk, needs root) and
#   the wheel leg (pip: network).
# An item whose prerequisite could not be built skips with the reason. With HARNESS_STRICT=1 (.ci/run sets
# it) every such skip fails the run, and the closing line names them; only skips by design pass (a
# scenario written for other backends; xfails).
# A dockerd this script started is stopped again at the end.
#   bash scripts/test.sh [pytest args for leg 1...]
set -euo pipefail
cd "$(dirname "$0")/.."
t_start=$SECONDS
# Bytecode goes to a cache outside the repository even where PYTHONDONTWRITEBYTECODE is set: without it
# every pytest process re-parses and re-rewrites the harness and its plugins (~1 CPU-s per xdist worker;
# docs/benchmarks/simulation.md).
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-$HOME/.cache/karpenter-harness/pycache}"
unset PYTHONDONTWRITEBYTECODE
# CI builds the default Kubernetes version only: a real-engine scenario naming another one runs where that
# version is built already and skips by design otherwise (the nightly `k8s-versions` job runs them)
export HARNESS_BUILD_K8S_VERSIONS=0
bash scripts/install.sh

# root for docker-up.sh and debootstrap: ourselves, or passwordless sudo
if [ "$(id -u)" = 0 ]; then as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then as_root=(sudo -n -E env "PATH=$PATH")
else as_root=(false); echo "note: not root and no passwordless sudo: no Docker start, no kind root filesystem" >&2
fi

# docker-up.sh writes the pid of a dockerd it starts to this file (and leaves a running daemon alone).
pidfile=${DOCKERD_PIDFILE:-/tmp/dockerd-harness.pid}
before=$(cat "$pidfile" 2>/dev/null || true)
echo "docker: starting it if it is not running (container and kind backends)..." >&2
"${as_root[@]}" bash harness/backends/docker-up.sh >/dev/null 2>&1 \
  || echo "note: docker unavailable; container/kind tests will skip" >&2
after=$(cat "$pidfile" 2>/dev/null || true)
jobs_pids=()
# shellcheck disable=SC2317  # (called by the trap)
cleanup() {
  for p in "${jobs_pids[@]}"; do kill "$p" 2>/dev/null || true; done     # interrupted: no build left behind
  if [ -n "$after" ] && [ "$after" != "$before" ]; then
    kill "$after" 2>/dev/null || return 0
    for _ in $(seq 30); do kill -0 "$after" 2>/dev/null || break; sleep 1; done
    rm -f "$pidfile"
  fi
}
trap cleanup EXIT

mkdir -p reports
rm -f reports/junit*.xml        # the closing line below sums this run's legs only

rc=0
leg() {     # leg NAME PYTEST-ARGS...: run one pytest leg; exit code 5 (no tests) is not a failure
  local name=$1; shift
  local t0=$SECONDS
  echo "tests ($name): pytest $*" >&2
  set +e
  python3 -m pytest -p no:cacheprovider "$@"
  local r=$?
  set -e
  echo "tests ($name): exit $r after $((SECONDS - t0)) s" >&2
  if [ "$r" -ne 0 ] && [ "$r" -ne 5 ]; then rc=$r; fi
}

# 0. the docs (scripts/gen-docs.py's pages current, mkdocs build --strict): before the builds, which it does not need
leg docs tests/test_docs.py --junitxml=reports/junit-docs.xml
# 0b. bench: the scheduler's scaling on core's diverse pod mix, 1k to 8k pods (~10 CPU-s; reported in
#     reports/bench-scheduling.txt, docs/benchmarks/scheduling.md). No timing is checked; only a growth
#     exponent above 1.5 from 1k to 8k fails it (the quadratic sort of issue 57 measured ~2).
echo "bench: scheduler scaling (bench/bench_scheduling.py)" >&2
if ! python3 bench/bench_scheduling.py --mix diverse --sizes 1000,2000,4000,8000 --repeat 1 --max-exponent 1.5 \
     | tee reports/bench-scheduling.txt >&2; then
  echo "bench: the scheduler's growth exponent is above 1.5 (reports/bench-scheduling.txt)" >&2; rc=1
fi

# CPU seconds of everything this script ran and waited for (the Go compilers too): the measure that does
# not depend on how busy the machine is; sets CPU_NOW
cpu_now() {
  local f; f=$(mktemp)
  times > "$f"
  CPU_NOW=$(awk 'NR == 2 { sub(/s$/, "", $1); sub(/s$/, "", $2); split($1, u, "m"); split($2, s, "m");
                           printf "%.0f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$f")
  rm -f "$f"
}

# step NAME CMD...: run a step, say how long it took; its failure is reported, not fatal (the items that
# need it skip with the reason)
step() {
  local name=$1; shift
  local t0=$SECONDS
  if "$@"; then echo "$name: ready after $((SECONDS - t0)) s" >&2
  else echo "warning: $name failed after $((SECONDS - t0)) s; what needs it will skip with the reason" >&2; fi
}

# the wheel leg needs no build: pip's downloads overlap the Go builds
(bash scripts/wheel-smoke.sh > reports/wheel.log 2>&1; echo "wheel leg: exit $? (log: reports/wheel.log)" >&2) &
jobs_pids+=($!)
if command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ]; then
  if command -v debootstrap >/dev/null 2>&1; then
    step "kind root filesystem" "${as_root[@]}" python3 -m harness.backends build --kind-rootfs >/dev/null &
    jobs_pids+=($!)
  else
    echo "note: debootstrap is not installed: no kind node image (apt-get install debootstrap)" >&2
  fi
  # chain B: ~10-20 min cold alone
  {
    step controller python3 -m harness.backends build --controller >/dev/null
    step difftest python3 -c 'from tests.model.azure.godifftest import build; build(echo=True)' >/dev/null
  } &
  jobs_pids+=($!)
  # chain A: kube-apiserver, kube-scheduler, kube-controller-manager, etcd, kwok, and the node binaries
  # kubelet (the kubelet judge on the local backend), kubeadm, kubectl, kube-proxy: ~13 + ~6 min cold alone
  CONTROL_PLANE_BUILD="python3 -m harness.backends build --node" bash scripts/control-plane.sh \
    || echo "warning: the control-plane build failed; what needs it will skip with the reason" >&2
  if docker info >/dev/null 2>&1; then
    step "kind node image" "${as_root[@]}" python3 -m harness.backends build --kind >/dev/null
  fi
else
  echo "note: no Go toolchain: nothing real is built; the real-backend items will skip" >&2
fi
for p in "${jobs_pids[@]}"; do wait "$p" || true; done
jobs_pids=()
cpu_now
echo "builds: done after $((SECONDS - t_start)) s (${CPU_NOW} CPU-s so far)" >&2

# 1. everything, with the scenario library on both backends: a conformance run
leg "embedded+local" tests/ scenarios/ -n auto --harness-backend embedded --harness-backend local \
  --ignore=tests/test_docs.py --junitxml=reports/junit.xml "$@"
# 2. the real controller on its CI subset (scenarios named in harness/data/real-engine.yaml ci_subset)
leg "real controller subset" scenarios/ --harness-engine real --harness-real-subset --harness-profile upstream \
  --junitxml=reports/junit-real.xml
# 3. real kubelets: the design 0006 label-path scenarios (kubelet --node-labels, karpenter-core sync,
#    refused labels, NodeRestriction) on kind
leg "kind subset" \
  scenarios/design-0006/decision-allowed-labels.scenario.yaml \
  scenarios/design-0006/decision-custom-domains.scenario.yaml \
  scenarios/design-0006/faq-non-schedulable-labels.scenario.yaml \
  --harness-profile upstream --harness-backend kind --junitxml=reports/junit-kind.xml
# 4. the wheel (run above, beside the builds)
if ! [ -s reports/junit-wheel.xml ]; then
  echo "tests (wheel): no report; reports/wheel.log says why:" >&2; tail -20 reports/wheel.log >&2 || true; rc=1
elif grep -q 'failures="[1-9]\|errors="[1-9]' reports/junit-wheel.xml; then
  rc=1
fi
# one closing line over the legs (from their JUnit XML)
cpu_now
if ! python3 scripts/junit-summary.py --strict "${HARNESS_STRICT:-0}" --seconds $((SECONDS - t_start)) \
     --cpu "$CPU_NOW" reports/junit*.xml
then
  [ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
