#!/usr/bin/env bash
# Regenerate docs/parity/ from behavior (each file's first line names its command).
set -euo pipefail
cd "$(dirname "$0")/.."
harness parity --profile before-0006 -o docs/parity/before-0006.md
harness parity --profile design-0006 -o docs/parity/design-0006.md
harness parity --profile upstream -o docs/parity/upstream.md
harness parity --profile before-0006 --diff design-0006 -o docs/parity/diff-before-0006-design-0006.md
harness parity --profile before-0006 --check-doc -o docs/parity/check-doc-before-0006.md
harness parity --profile before-0006 --format svg -o docs/parity/before-0006.svg
