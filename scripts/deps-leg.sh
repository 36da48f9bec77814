#!/usr/bin/env bash
# A CI leg on one end of the declared dependency ranges: a fresh venv with the LOWEST versions
# pyproject.toml allows for every direct dependency (uv's `--resolution lowest-direct`), or the NEWEST
# ones, then the unit tests and the scenario library (embedded backend; the local-backend tests run too
# when the control plane is built). Proves the floors in pyproject.toml are true, and that nothing newer
# broke us.
#   bash scripts/deps-leg.sh lowest|newest [pytest args...]      PYTHON=python3.13 picks the interpreter
# Prints the resolved versions (also written to reports/deps-<leg>.txt); exit status: pytest's.
set -euo pipefail
cd "$(dirname "$0")/.."
leg=${1:?usage: deps-leg.sh lowest|newest [pytest args...]}; shift
case $leg in
  lowest) resolution=lowest-direct ;;
  newest) resolution=highest ;;
  *) echo "usage: deps-leg.sh lowest|newest [pytest args...]" >&2; exit 2 ;;
esac
python=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/harness-deps-$leg.XXXXXX")
trap 'rm -rf "$work"' EXIT
start=$SECONDS
echo "deps ($leg): fresh venv with $("$python" --version) in $work, $resolution versions of the direct dependencies..." >&2
"$python" -m venv "$work/venv"
venv_python="$work/venv/bin/python"
"$venv_python" -m pip install --disable-pip-version-check -q uv
uv=("$work/venv/bin/uv" pip)
mkdir -p reports
"${uv[@]}" compile -q pyproject.toml --extra dev --resolution "$resolution" --python "$venv_python" \
  --no-header --output-file "reports/deps-$leg.txt"
if [ "$leg" = lowest ]; then
  # a declared floor nothing can install beside the others (another dependency needs more) is not true
  "$venv_python" - "reports/deps-$leg.txt" <<'PY'
import re, sys, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
declared = project["dependencies"] + [d for ds in project["optional-dependencies"].values() for d in ds]
pinned = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", open(sys.argv[1]).read(), re.M))
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
release = lambda v: re.sub(r"(\.0+)+$", "", v)          # 8.0 == 8.0.0
pinned = {norm(k): release(v) for k, v in pinned.items()}
wrong = []
for d in declared:
    m = re.match(r"([A-Za-z0-9_.-]+)\s*>=\s*([^,;\s]+)", d)
    if m and pinned.get(norm(m[1])) not in (None, release(m[2])):
        wrong.append(f"{m[1]}>={m[2]} resolves to {pinned[norm(m[1])]} (another dependency needs more)")
if wrong:
    sys.exit("deps (lowest): declared floors that cannot be installed together; raise them in pyproject.toml:\n  "
             + "\n  ".join(wrong))
PY
fi
"${uv[@]}" install -q --python "$venv_python" -r "reports/deps-$leg.txt"
"${uv[@]}" install -q --python "$venv_python" --no-deps -e .
echo "deps ($leg): installed in $((SECONDS - start)) s:" \
  "$(grep -E '^(azure-mgmt-compute|azure-mgmt-network|azure-core|cryptography|jsonschema|cel-python|pytest|testcontainers)==' \
      "reports/deps-$leg.txt" | tr '\n' ' ')" >&2
set +e
"$venv_python" -m pytest tests/ scenarios/ -p no:cacheprovider -q "$@" --junitxml="reports/junit-deps-$leg.xml"
rc=$?
set -e
echo "deps ($leg): pytest exited $rc after $((SECONDS - start)) s" >&2
exit "$rc"
