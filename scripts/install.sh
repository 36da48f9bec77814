#!/usr/bin/env bash
# Install the harness and its Python dependencies (idempotent; quiet when already installed).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --disable-pip-version-check -q -e '.[dev]'
