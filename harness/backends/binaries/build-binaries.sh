#!/usr/bin/env bash
# Build pinned Kubernetes control-plane binaries, etcd and kwok from the Go module proxy
# (k8s.io/kubernetes v1.36.3 go.mod, go.etcd.io/etcd/server/v3 v3.6.4 go.mod, sigs.k8s.io/kwok v0.8.0
# pkg/kwok/cmd/root.go). Run through `python -m harness.backends build`, which owns
# the pinned versions, the cache layout and kwok's stage config (harness/backends/binaries/controlplane.py):
#
#   K8S_VERSION=... ETCD_VERSION=... KWOK_VERSION=... build-binaries.sh <bin dir> <work dir>
#
#   K8S_VERSION=... build-binaries.sh --node <bin dir> <work dir>
#
# The second form builds the node binaries (kubelet, kubeadm, kubectl, kube-proxy) of the same
# version from the same kind of wrapper module, in its own module dir and bin dir (the
# control-plane bin dir and its cache key are unchanged); k8s.io/kubernetes v1.36.3
# cmd/kubeadm/app/constants/constants.go.
#
#   K8S_VERSION=... K8S_EDITS=<edits.json> K8S_EDITS_NAME=fast build-binaries.sh --kcm <bin dir> <work dir>
#
# The third builds kube-controller-manager alone from a copy of k8s.io/kubernetes with a timing's edits
# (harness/data/controller-timing.yaml `kube-controller-manager-source`; the real engine's cluster runs
# it). After the control plane's build it reuses that Go build cache: ~30 s.
#
#   K8S_VERSION=... K8S_EDITS=<edits.json> K8S_EDITS_NAME=fast build-binaries.sh --apiserver <bin dir> <work dir>
#
# The fourth builds kube-apiserver alone the same way (`kube-apiserver-source`). An edit's `module` names a
# staging module (k8s.io/apiserver) to copy and edit instead of k8s.io/kubernetes.
#
# K8S_BINARIES="kube-apiserver etcd ..." builds only those of the control-plane set (another Kubernetes
# version's cluster for the real engine needs no kwok; binaries.ensure_binaries with k8s=).
#
# Idempotent: binaries already in <bin dir> are reused.
set -euo pipefail

NODE=0
KCM=0
HERE=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = "--node" ]; then NODE=1; shift; fi
TIMED=""
if [ "${1:-}" = "--kcm" ]; then KCM=1; NODE=1; TIMED=kube-controller-manager; shift; fi     # NODE: not the control plane's set either
if [ "${1:-}" = "--apiserver" ]; then KCM=1; NODE=1; TIMED=kube-apiserver; shift; fi

if [ "$KCM" = 1 ] && { [ $# -ne 2 ] || [ -z "${K8S_VERSION:-}" ] || [ -z "${K8S_EDITS:-}" ]; }; then
  echo "usage: K8S_VERSION=... K8S_EDITS=<edits.json> [K8S_EDITS_NAME=...] $0 --kcm|--apiserver <bin dir> <work dir>" >&2
  exit 2
fi
if [ "$NODE" = 1 ] && { [ $# -ne 2 ] || [ -z "${K8S_VERSION:-}" ]; }; then
  echo "usage: K8S_VERSION=... $0 --node <bin dir> <work dir>" >&2
  exit 2
fi
if [ "$NODE" = 0 ] && { [ $# -ne 2 ] || [ -z "${K8S_VERSION:-}" ] || [ -z "${ETCD_VERSION:-}" ] || [ -z "${KWOK_VERSION:-}" ]; }; then
  echo "usage: K8S_VERSION=... ETCD_VERSION=... KWOK_VERSION=... $0 <bin dir> <work dir>" >&2
  echo "build the pinned versions into the harness cache with: python -m harness.backends build" >&2
  exit 2
fi
OUT=$1
WORK=$2

export GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
log() { echo "[build-binaries] $*" >&2; }

if [ "$KCM" = 1 ]; then
  want=("$TIMED")
elif [ "$NODE" = 1 ]; then
  want=(kubelet kubeadm kubectl kube-proxy)
elif [ -n "${K8S_BINARIES:-}" ]; then
  read -r -a want <<< "$K8S_BINARIES"
else
  want=(kube-apiserver kube-scheduler kube-controller-manager etcd kwok)
fi
wants() { [[ " ${want[*]} " == *" $1 "* ]]; }
complete=1
for b in "${want[@]}"; do [ -x "$OUT/$b" ] || complete=0; done
if [ "$complete" = 1 ]; then log "reusing $OUT"; exit 0; fi
mkdir -p "$OUT" "$WORK"

minor=${K8S_VERSION#v1.}            # e.g. 36.3
staging_version="v0.$minor"          # staging modules are published as v0.<minor>.<patch>

# --- Kubernetes: a wrapper main module replacing every staging module (k8s.io/kubernetes v1.36.3 go.mod) ---
# k8s_build <module dir> <cmd>...: generate the wrapper module in <module dir>, build k8s.io/kubernetes/cmd/<cmd>
# for each <cmd> into $OUT with the version ldflags.
k8s_build() {
  local d=$1; shift
  local t0; t0=$(date +%s)
  mkdir -p "$d"; cd "$d"
  modinfo=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION")
  gomod=$(printf '%s' "$modinfo" | python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')
  # buildDate = the tag's commit time from the proxy's .info, so rebuilds are bit-identical.
  date=$(printf '%s' "$modinfo" | python3 -c 'import json,sys; print(json.load(open(json.load(sys.stdin)["Info"]))["Time"].replace("+00:00","Z"))')
  goline=$(grep -m1 '^go ' "$gomod")
  {
    echo "module harness.local/k8sbins"
    echo "$goline"
    grep -m1 '^godebug ' "$gomod" || true
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo "replace ("
    # Robust rule: derive the staging list from the tag's own go.mod (k8s.io/kubernetes v1.36.3 go.mod)
    grep -oE '^\s*k8s.io/[^ ]+ => ./staging/src/k8s.io/[^ ]+' "$gomod" | awk -v v="$staging_version" '{print "\t" $1 " => " $1 " " v}'
    echo ")"
  } > go.mod
  { printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for c in "$@"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$c"; done
    printf ')\n'; } > tools.go
  log "resolving k8s.io/kubernetes $K8S_VERSION module graph"
  go mod tidy -e >&2 2>&1 | tail -5 >&2 || true
  if [ -n "${K8S_EDITS:-}" ]; then
    # each module the edits name (k8s.io/kubernetes when an edit names none) as the graph resolved it,
    # copied and edited (each find exactly once: apply-edits.py)
    local m mdir mver copy
    for m in $(python3 -c 'import json,sys; print(" ".join(sorted({p.get("module", "k8s.io/kubernetes") for p in json.load(open(sys.argv[1]))})))' "$K8S_EDITS"); do
      mdir=$(go list -m -f '{{if .Replace}}{{.Replace.Dir}}{{else}}{{.Dir}}{{end}}' "$m")
      mver=$(go list -m -f '{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}' "$m")
      [ -d "$mdir" ] || { echo "cannot find $m's module directory to edit" >&2; exit 2; }
      copy="edited-$(echo "$m" | tr '/' '_')"
      rm -rf "$copy" && cp -r "$mdir" "$copy" && chmod -R u+w "$copy"
      python3 "$HERE/apply-edits.py" "$K8S_EDITS" "$copy" "${K8S_EDITS_NAME:-edited}" \
        "$m $mver" build-binaries k8s.io/kubernetes
      go mod edit -replace "$m=./$copy"
    done
  fi
  vpkg=k8s.io/component-base/version
  cpkg=k8s.io/client-go/pkg/version
  major=1; kminor=${minor%%.*}
  ld="-s -w"
  for p in $vpkg $cpkg; do
    ld="$ld -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=$major -X $p.gitMinor=$kminor -X $p.gitTreeState=clean -X $p.buildDate=$date"
  done
  log "building $* (slow: ~GBs of RAM, many minutes on 2 cores)"
  local pkgs=()
  for c in "$@"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  go build -trimpath -pgo=off -tags tools -ldflags "$ld" -o "$OUT/" "${pkgs[@]}"
  log "kubernetes $* built in $(( $(date +%s) - t0 ))s"
}

if [ "$KCM" = 1 ]; then
  k8s_build "$WORK/k8s-$TIMED-${K8S_EDITS_NAME:-edited}-$K8S_VERSION" "$TIMED"
  "$OUT/$TIMED" --version >&2
  exit 0
fi
if [ "$NODE" = 1 ]; then
  k8s_build "$WORK/k8s-node-$K8S_VERSION" kubelet kubeadm kubectl kube-proxy
  "$OUT/kubelet" --version >&2
  exit 0
fi

k8s_cmds=()
for c in kube-apiserver kube-controller-manager kube-scheduler; do
  if wants "$c" && ! [ -x "$OUT/$c" ]; then k8s_cmds+=("$c"); fi
done
if [ "${#k8s_cmds[@]}" -gt 0 ]; then
  k8s_build "$WORK/k8s-$K8S_VERSION" "${k8s_cmds[@]}"
fi

# --- etcd: its own wrapper module (go.etcd.io/etcd/server/v3 v3.6.4 go.mod) ---
if wants etcd && ! [ -x "$OUT/etcd" ]; then
  t0=$(date +%s)
  d="$WORK/etcd-$ETCD_VERSION"; mkdir -p "$d"; cd "$d"
  cat > go.mod <<MOD
module harness.local/etcdbin
go 1.24
require go.etcd.io/etcd/server/v3 $ETCD_VERSION
MOD
  printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' > tools.go
  log "resolving the etcd $ETCD_VERSION module graph"
  go mod tidy -e >&2 2>&1 | tail -5 >&2 || true
  log "building etcd $ETCD_VERSION"
  go build -trimpath -ldflags "-s -w" -o "$OUT/etcd" go.etcd.io/etcd/server/v3
  log "etcd built in $(( $(date +%s) - t0 ))s"
fi

# --- kwok: no replace directives, go install works (sigs.k8s.io/kwok v0.8.0 cmd/kwok/main.go) ---
if wants kwok && ! [ -x "$OUT/kwok" ]; then
  t0=$(date +%s)
  log "building kwok $KWOK_VERSION"
  GOBIN="$OUT" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  log "kwok built in $(( $(date +%s) - t0 ))s"
fi

if wants kube-apiserver; then "$OUT/kube-apiserver" --version >&2; fi
if wants etcd; then "$OUT/etcd" --version | sed -n 1p >&2; fi          # sed reads it all: head would SIGPIPE etcd (exit 141 under pipefail)
