#!/usr/bin/env bash
# Make a Docker daemon available for the `container` backend (reference/cluster-backends.md §5).
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

if docker info >/dev/null 2>&1; then log "docker daemon already running"; exit 0; fi

if ! command -v dockerd >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then log "dockerd missing and not root: cannot apt-get install docker.io"; exit 1; fi
  log "installing Debian docker.io (apt)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 || log "apt-get update failed (continuing with cached lists)"
  apt-get install -y -qq --no-install-recommends docker.io >&2
fi

# A previous dockerd of ours that died leaves a stale pid file / socket behind.
if [ -f "$DOCKERD_PIDFILE" ] && ! kill -0 "$(cat "$DOCKERD_PIDFILE")" 2>/dev/null; then rm -f "$DOCKERD_PIDFILE"; fi
if ! [ -f "$DOCKERD_PIDFILE" ]; then
  if [ "$(id -u)" != 0 ]; then log "not root: cannot start dockerd"; exit 1; fi
  log "starting dockerd in the background (log: $DOCKERD_LOG)"
  # setsid: own session, so the caller's process group teardown does not take dockerd along.
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
