#!/usr/bin/env bash
# Make a Docker daemon available for the `container` backend (testcontainers-python 4.15.0
# src/testcontainers/core/container.py).
# Idempotent: does nothing when `docker info` already answers.
#
#   harness/backends/docker-up.sh          # install Debian's docker.io if dockerd is missing, start it
#
# Installs only from the distribution's own apt repositories (no registry pulls are needed: the
# container backend builds its image locally from the cached static binaries). dockerd is started
# in the background with its log in $DOCKERD_LOG (default /tmp/dockerd.log); its pid is written to
# $DOCKERD_PIDFILE (default /tmp/dockerd-harness.pid). Exit status 0 means `docker info` works.
set -euo pipefail

log() { echo "[docker-up] $*" >&2; }
DOCKERD_LOG=${DOCKERD_LOG:-/tmp/dockerd.log}
DOCKERD_PIDFILE=${DOCKERD_PIDFILE:-/tmp/dockerd-harness.pid}
TIMEOUT=${DOCKER_UP_TIMEOUT:-60}

# The runc wrapper runtime the kind backend's privileged node containers use (sigs.k8s.io/kind v0.33.0
# images/base/Dockerfile,
# "Recipe" 1): `--privileged` fails where CAP_SYS_RESOURCE is missing from the bounding set. Installed as
# /usr/local/bin/runc-nosysresource and registered in /etc/docker/daemon.json under "runtimes" (merged
# into an existing file); a running dockerd reloads "runtimes" on SIGHUP. Skipped when not root.
RUNTIME_SRC="$(cd "$(dirname "$0")" && pwd)/kind/runc-nosysresource"
ensure_runtime() {
  [ "$(id -u)" = 0 ] && [ -f "$RUNTIME_SRC" ] || return 0
  if ! cmp -s "$RUNTIME_SRC" /usr/local/bin/runc-nosysresource; then
    install -m 0755 "$RUNTIME_SRC" /usr/local/bin/runc-nosysresource
  fi
  mkdir -p /etc/docker
  python3 - <<'PY'
import json, os, sys
path = "/etc/docker/daemon.json"
try:
    with open(path) as f:
        conf = json.load(f)
except FileNotFoundError:
    conf = {}
want = {"path": "/usr/local/bin/runc-nosysresource"}
if conf.get("runtimes", {}).get("runc-nosysresource") == want:
    sys.exit(0)
conf.setdefault("runtimes", {})["runc-nosysresource"] = want
with open(path + ".tmp", "w") as f:
    json.dump(conf, f, indent=2)
os.replace(path + ".tmp", path)
open("/tmp/.harness-daemon-json-changed", "w").close()
PY
  if [ -f /tmp/.harness-daemon-json-changed ]; then
    rm -f /tmp/.harness-daemon-json-changed
    local pid; pid=$(pidof dockerd || true)
    if [ -n "$pid" ]; then log "registered runtime runc-nosysresource; reloading dockerd"; kill -HUP "$pid"; sleep 1; fi
  fi
}
ensure_runtime

if docker info >/dev/null 2>&1; then log "docker daemon already running"; exit 0; fi

if ! command -v dockerd >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then log "dockerd missing and not root: cannot apt-get install docker.io"; exit 1; fi
  log "installing Debian docker.io (apt)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 || log "apt-get update failed (continuing with cached lists)"
  apt-get install -y -qq --no-install-recommends docker.io >&2
  ensure_runtime
fi

# A previous dockerd of ours that died leaves a stale pid file / socket behind.
if [ -f "$DOCKERD_PIDFILE" ] && ! kill -0 "$(cat "$DOCKERD_PIDFILE")" 2>/dev/null; then rm -f "$DOCKERD_PIDFILE"; fi
if ! [ -f "$DOCKERD_PIDFILE" ]; then
  if [ "$(id -u)" != 0 ]; then log "not root: cannot start dockerd"; exit 1; fi
  log "starting dockerd in the background (log: $DOCKERD_LOG)"
  # setsid: own session, so the caller's process group teardown does not take dockerd along.
  # shellcheck disable=SC2086  # DOCKERD_ARGS is a list of flags
  setsid dockerd ${DOCKERD_ARGS:-} >"$DOCKERD_LOG" 2>&1 < /dev/null &
  echo $! > "$DOCKERD_PIDFILE"
fi

for _ in $(seq "$TIMEOUT"); do
  if docker info >/dev/null 2>&1; then log "docker daemon ready"; exit 0; fi
  if ! kill -0 "$(cat "$DOCKERD_PIDFILE")" 2>/dev/null; then
    log "dockerd exited; last log lines:"; tail -20 "$DOCKERD_LOG" >&2; rm -f "$DOCKERD_PIDFILE"; exit 1
  fi
  sleep 1
done
log "docker daemon not ready after ${TIMEOUT}s; last log lines:"; tail -20 "$DOCKERD_LOG" >&2
exit 1
