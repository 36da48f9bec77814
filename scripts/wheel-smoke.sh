#!/usr/bin/env bash
# The wheel as a packager ships it: build it from this checkout (setuptools must not warn), install it
# into a fresh venv outside the checkout (dependencies pinned by requirements.lock), and run
# tests/wheel/wheel_smoke.py there: console scripts and --version, the pytest plugin through its entry
# point, every backend's package data (the kind backend's scripts and tables too), a scenario end to end.
#   bash scripts/wheel-smoke.sh            JUnit XML: reports/junit-wheel.xml
set -euo pipefail
cd "$(dirname "$0")/.."
checkout=$(pwd)
python=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/harness-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT
start=$SECONDS
echo "wheel: building the wheel from this checkout..." >&2
# -v: the build backend's own output, to catch its warnings (a deprecated license table warns four times)
"$python" -m pip wheel --disable-pip-version-check -v --no-deps -w "$work/dist" . > "$work/build.log" 2>&1 \
  || { tail -30 "$work/build.log" >&2; exit 1; }
if grep -E "Warning|warning:" "$work/build.log" | grep -v "byte-compiling is disabled" >&2; then
  echo "wheel: the build warned (above); fix pyproject.toml" >&2
  exit 1
fi
wheel=$(ls "$work"/dist/*.whl)
echo "wheel: $(basename "$wheel"); fresh venv in $work (outside the checkout)..." >&2
"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --disable-pip-version-check -q -c requirements.lock "$wheel" pytest
mkdir -p "$work/run" reports
cp tests/wheel/wheel_smoke.py "$work/run/"
echo "wheel: installed in $((SECONDS - start)) s; smoke test..." >&2
set +e
(cd "$work/run" && env -u PYTHONPATH HARNESS_CHECKOUT="$checkout" "$work/venv/bin/python" -m pytest -q \
   -p no:cacheprovider wheel_smoke.py --junitxml="$checkout/reports/junit-wheel.xml")
rc=$?
set -e
echo "wheel: done in $((SECONDS - start)) s (exit $rc)" >&2
exit "$rc"
