#!/usr/bin/env bash
# Install the harness and its Python dependencies at the versions requirements.lock pins (refresh it with
# scripts/lock.sh) - idempotent; quiet when already installed.
# Says what it is doing and how long it took: the first install downloads the Azure SDK, cel-python,
# pytest and friends (usually 1-3 minutes); later runs take a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${VIRTUAL_ENV:-}" ] && [ -z "${CI:-}" ]; then
  echo "note: no virtualenv is active; installing into $(python3 -c 'import sys; print(sys.prefix)')" \
       "(python3 -m venv .venv && . .venv/bin/activate first keeps it separate)" >&2
fi
start=$SECONDS
echo "install: pip install -c requirements.lock -e '.[dev]' (the harness, fakeazure and their dependencies at" \
     "the locked versions; first time usually 1-3 min)..." >&2
python3 -m pip install --disable-pip-version-check --progress-bar off -q -c requirements.lock -e '.[dev]'
echo "install: done in $((SECONDS - start)) s" >&2
