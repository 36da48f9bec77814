#!/usr/bin/env bash
# Refresh requirements.lock: the newest versions of every dependency (the `dev` extra included) that
# pyproject.toml allows, resolved once for every platform and Python >= 3.11 (uv's universal mode).
# scripts/install.sh installs with it as constraints, so every machine gets the same versions; the
# nightly `deps` legs test the declared floors and the newest versions instead. Commit the result.
#   bash scripts/lock.sh            uses `uv` from PATH, else installs it into a cache venv (seconds)
set -euo pipefail
cd "$(dirname "$0")/.."
uv=$(command -v uv || true)
if [ -z "$uv" ]; then
  venv=${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-harness/uv-venv
  if ! [ -x "$venv/bin/uv" ]; then
    echo "lock: installing uv into $venv..." >&2
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --disable-pip-version-check -q uv
  fi
  uv=$venv/bin/uv
fi
"$uv" pip compile pyproject.toml --extra dev --universal --python-version 3.11 --upgrade --quiet \
  --custom-compile-command "bash scripts/lock.sh" --output-file requirements.lock
echo "lock: wrote requirements.lock ($(grep -c '==' requirements.lock) pinned packages)" >&2
