#!/usr/bin/env bash
# Build (or reuse) the pinned control plane for the local/container backends, saying what it does:
# kube-apiserver, kube-scheduler, kube-controller-manager, etcd and kwok are built once from the Go
# module proxy into ~/.cache/karpenter-harness (~13 min cold, seconds when cached). Another build
# (another checkout, a pytest run) holds a file lock meanwhile: say so, and keep saying how long we
# have waited (harness/backends/binaries/controlplane.py BuildLock), instead of waiting silently. Exit status: the build's.
#   bash scripts/control-plane.sh          (CONTROL_PLANE_BUILD overrides the build command)
set -euo pipefail
cd "$(dirname "$0")/.."
lock=$(python3 -c 'from harness.backends.binaries.controlplane import cache_dir; print(cache_dir() / "build.lock")')
holder=$(python3 - "$lock" <<'PY'
import sys
from pathlib import Path
from filelock import FileLock, Timeout
Path(sys.argv[1]).parent.mkdir(parents=True, exist_ok=True)
lock = FileLock(sys.argv[1])
try:
  lock.acquire(timeout=0)
  lock.release()
except Timeout:
  print("held")
PY
)
if [ "$holder" = "held" ]; then
  echo "control plane: another build holds $lock; waiting for it to finish (a cold build takes ~13 min)" >&2
else
  echo "control plane: building or reusing the pinned binaries in $(dirname "$lock")" \
       "(~13 min the first time, seconds when cached)..." >&2
fi
start=$SECONDS
# the build itself says every 15 s what it builds (or waits for) and how long so far
${CONTROL_PLANE_BUILD:-python3 -m harness.backends build} >/dev/null
echo "control plane: ready after $((SECONDS - start)) s" >&2
