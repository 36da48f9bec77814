#!/usr/bin/env bash
# Build the small programs a kind node needs besides Kubernetes, from the Go module proxy only
# (k8s.io/kubernetes v1.36.3 cmd/kubeadm/app/constants/constants.go): the pause program (written here, a stand-in for
# the registry's
# pause image), the CNI plugins kind's base image ships (ptp, host-local, loopback, portmap), and,
# with COREDNS_VERSION set, CoreDNS. Run by `python -m harness.backends build --kind`
# (harness/backends/kind/image.py), which owns the versions:
#
#   CNI_VERSION=... [COREDNS_VERSION=...] build-node-extras.sh <bin dir> <work dir>
#
# Idempotent: binaries already in <bin dir> are reused.
set -euo pipefail

if [ $# -ne 2 ] || [ -z "${CNI_VERSION:-}" ]; then
  echo "usage: CNI_VERSION=... [COREDNS_VERSION=...] $0 <bin dir> <work dir>" >&2
  exit 2
fi
OUT=$1
WORK=$2
export GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
log() { echo "[build-node-extras] $*" >&2; }
mkdir -p "$OUT/cni" "$WORK"

# --- pause: sleep until SIGINT/SIGTERM and reap orphaned children (the job of a pod's sandbox) ---
if ! [ -x "$OUT/pause" ]; then
  d="$WORK/pause"; mkdir -p "$d"; cd "$d"
  printf 'module harness.local/pause\n\ngo 1.22\n' > go.mod
  cat > main.go <<'GO'
// A pod sandbox's placeholder process: holds the pod's namespaces, reaps orphans, exits on SIGINT/SIGTERM.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
GO
  log "building pause"
  go build -trimpath -ldflags "-s -w" -o "$OUT/pause" .
  log "pause built"
fi

# --- CNI plugins: `go install` works (no replace directives in the plugins module) ---
cni_pkgs=()
for p in main/ptp main/loopback ipam/host-local meta/portmap; do
  [ -x "$OUT/cni/${p#*/}" ] || cni_pkgs+=("github.com/containernetworking/plugins/plugins/$p@$CNI_VERSION")
done
if [ ${#cni_pkgs[@]} -gt 0 ]; then
  t0=$(date +%s)
  log "building the CNI plugins $CNI_VERSION"
  (cd "$WORK" && GOBIN="$OUT/cni" go install -trimpath -ldflags "-s -w" "${cni_pkgs[@]}")
  log "CNI plugins $CNI_VERSION built in $(( $(date +%s) - t0 ))s"
fi

# --- CoreDNS (optional: the largest build, ~25 min under load; kubeadm's addon phase is skipped without it) ---
if [ -n "${COREDNS_VERSION:-}" ] && ! [ -x "$OUT/coredns" ]; then
  t0=$(date +%s)
  log "building CoreDNS $COREDNS_VERSION"
  (cd "$WORK" && GOBIN="$OUT" go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@$COREDNS_VERSION")
  log "CoreDNS $COREDNS_VERSION built in $(( $(date +%s) - t0 ))s"
fi
ls -l "$OUT" "$OUT/cni" >&2
