#!/usr/bin/env bash
# Regenerate docs/parity/ from behavior (each file's first line names its command), in one process:
# each profile's probes run once (about a minute on a 2-CPU machine). Progress goes to stderr.
# tests/parity/test_docs_current.py fails when the committed files differ from a regeneration.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m harness.parity.docs docs/parity
