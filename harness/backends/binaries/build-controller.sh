#!/usr/bin/env bash
# Build the Karpenter-on-Azure controller (./cmd/controller of github.com/Azure/karpenter-provider-azure)
# from the Go module proxy, as a dependency of a generated wrapper module (the pattern of
# build-binaries.sh; github.com/Azure/karpenter-provider-azure v1.14.0 cmd/controller/main.go). Run through
# `python -m harness.backends build --controller [--provider-src DIR]`, which owns the pinned version,
# the cache layout and the lock (harness/backends/binaries/controller.py):
#
#   PROVIDER_VERSION=v1.14.0 build-controller.sh <out dir> <work dir>
#   PROVIDER_SRC=<checkout> build-controller.sh <out dir> <work dir>     # a maintainer's working copy
#   CORE_VERSION=v1.13.0 ...     # the same provider with another sigs.k8s.io/karpenter (where it compiles)
#   CORE_PATCHES=<json> CORE_PATCHES_NAME=fast ...   # core's module (and others an edit names) copied and edited
#   CORE_DIR=<core tree> ...     # core from its git history: a commit the Go module proxy does not serve
#   MODULE_REPLACES="mod@v1=mod@v2 ..."   # module versions the proxy refuses, built with others (substitutes.py)
#
# Idempotent: <out dir>/controller is reused when present.
set -euo pipefail

if [ $# -ne 2 ] || { [ -z "${PROVIDER_VERSION:-}" ] && [ -z "${PROVIDER_SRC:-}" ]; }; then
  echo "usage: PROVIDER_VERSION=vX.Y.Z | PROVIDER_SRC=DIR $0 <out dir> <work dir>" >&2
  echo "build into the harness cache with: python -m harness.backends build --controller" >&2
  exit 2
fi
OUT=$1
WORK=$2
MOD=github.com/Azure/karpenter-provider-azure
HERE=$(cd "$(dirname "$0")" && pwd)

export GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
log() { echo "[build-controller] $*" >&2; }

if [ -x "$OUT/controller" ]; then log "reusing $OUT/controller"; exit 0; fi
mkdir -p "$OUT" "$WORK"
t0=$(date +%s)
cd "$WORK"

if [ -n "${PROVIDER_SRC:-}" ]; then
  src=$(cd "$PROVIDER_SRC" && pwd)
  gomod="$src/go.mod"
  [ -f "$gomod" ] || { echo "$PROVIDER_SRC: no go.mod (not a karpenter-provider-azure checkout)" >&2; exit 2; }
  grep -q "^module $MOD\$" "$gomod" || { echo "$gomod: module is not $MOD" >&2; exit 2; }
  version=${PROVIDER_DESCRIBE:-$( (cd "$src" && git describe --tags --always 2>/dev/null) || echo "v0.0.0-src")}
  require="$MOD v0.0.0-00010101000000-000000000000"
else
  log "downloading $MOD@$PROVIDER_VERSION"
  modinfo=$(go mod download -json "$MOD@$PROVIDER_VERSION")
  gomod=$(printf '%s' "$modinfo" | python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')
  version=$PROVIDER_VERSION
  require="$MOD $PROVIDER_VERSION"
fi

{
  echo "module harness.local/karpenterctl"
  grep -m1 '^go ' "$gomod"
  grep -m1 '^godebug ' "$gomod" || true
  echo "require $require"
  if [ -n "${PROVIDER_SRC:-}" ]; then
    echo "replace $MOD => $src"
    # replace directives only apply in the main module: carry the checkout's own, with its relative
    # paths made absolute (k8s.io/kubernetes v1.36.3 go.mod)
    python3 - "$gomod" "$src" <<'PY'
import os, re, sys
text = open(sys.argv[1]).read()
lines = []
for block in re.findall(r'^replace\s*\(\n(.*?)^\)', text, re.S | re.M):
    lines += block.splitlines()
lines += re.findall(r'^replace\s+([^(].*)$', text, re.M)
for l in lines:
    l = l.split("//")[0].strip()
    if "=>" not in l:
        continue
    left, right = (s.strip() for s in l.split("=>", 1))
    if (os.environ.get("CORE_VERSION") or os.environ.get("CORE_DIR")) and left.split()[0] == "sigs.k8s.io/karpenter":
        continue            # CORE_VERSION's replace below wins
    parts = right.split()
    if parts and parts[0].startswith((".", "/")) and len(parts) == 1:
        right = os.path.normpath(os.path.join(sys.argv[2], parts[0]))
    print(f"replace {left} => {right}")
PY
  fi
  if [ -n "${CORE_VERSION:-}" ]; then
    echo "replace sigs.k8s.io/karpenter => sigs.k8s.io/karpenter $CORE_VERSION"
  elif [ -n "${CORE_DIR:-}" ]; then
    echo "replace sigs.k8s.io/karpenter => $CORE_DIR"
  fi
} > go.mod
if [ -n "${PROVIDER_SRC:-}" ] && [ -f "$src/go.sum" ]; then
  # the release's own checksums: a module version the checksum database does not list (provider v1.6.8's
  # armcontainerservice/v8 v8.2.0-beta.1: "verifying module: ... 404 Not Found") is verified against them
  cp "$src/go.sum" go.sum
fi
for r in ${MODULE_REPLACES:-}; do
  # substitutes.py chose these because the proxy refused the pinned version during this build
  log "substitute: ${r%%=*} -> ${r#*=}"
  go mod edit -replace "$r"
done
cat > tools.go <<GO
//go:build tools

package tools

import _ "$MOD/cmd/controller"
GO

log "resolving the module graph"
go mod tidy -e >&2 2>&1 | tail -5 >&2 || true
if [ -n "${CORE_PATCHES:-}" ]; then
  # each module the edits name (sigs.k8s.io/karpenter when an edit names none), as the graph resolved it,
  # copied and edited: each find must occur exactly once
  mods=$(python3 -c 'import json,sys; print(" ".join(sorted({p.get("module", "sigs.k8s.io/karpenter") for p in json.load(open(sys.argv[1]))})))' "$CORE_PATCHES")
  for m in $mods; do
    mdir=$(go list -m -f '{{if .Replace}}{{.Replace.Dir}}{{else}}{{.Dir}}{{end}}' "$m")
    # the version the edits' `since`/`until` are read against: a directory replace (CORE_DIR) has none, so
    # the one the graph requires
    mver=$(go list -m -f '{{if and .Replace .Replace.Version}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}' "$m")
    [ -d "$mdir" ] || { echo "cannot find $m's module directory to patch" >&2; exit 2; }
    copy="patched-$(echo "$m" | tr '/' '_')"
    rm -rf "$copy" && cp -r "$mdir" "$copy" && chmod -R u+w "$copy"
    # a module from before Go modules (github.com/patrickmn/go-cache v2.1.0+incompatible) has no go.mod,
    # which a directory replace needs
    [ -f "$copy/go.mod" ] || echo "module $m" > "$copy/go.mod"
    python3 "$HERE/apply-edits.py" "$CORE_PATCHES" "$copy" "${CORE_PATCHES_NAME:-patched}" \
      "$m $mver" build-controller sigs.k8s.io/karpenter
    go mod edit -replace "$m=./$copy"
  done
fi
log "building $MOD/cmd/controller ($version; slow: ~10 min cold on 2 cores)"
# the provider's Makefile stamps sigs.k8s.io/karpenter/pkg/operator.Version the same way
if [ -n "${CORE_VERSION:-}" ]; then version="$version+core-$CORE_VERSION"; fi
stamp=$version${CORE_PATCHES_NAME:++$CORE_PATCHES_NAME}
go build -trimpath -pgo=off -ldflags "-s -w -X sigs.k8s.io/karpenter/pkg/operator.Version=${stamp#v}" \
  -o "$OUT/controller.tmp" "$MOD/cmd/controller"
mv "$OUT/controller.tmp" "$OUT/controller"
echo "$version" > "$OUT/VERSION"
log "controller built in $(( $(date +%s) - t0 ))s"
