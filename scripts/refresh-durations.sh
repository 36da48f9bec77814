#!/usr/bin/env bash
# Measure every scenario item on the embedded backend and write harness/data/scenario-durations.json,
# the data `pytest --harness-shard K/N` balances the nightly shards with. Run serially (-p no:xdist) so one
# item's time is not inflated by another's; takes a few minutes. Commit the refreshed file.
#   bash scripts/refresh-durations.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
out=harness/data/scenario-durations.json
echo "measuring scenario durations on the embedded backend (serial, a few minutes)..." >&2
set +e
python3 -m pytest scenarios/ -q -p no:cacheprovider -p no:xdist --harness-backend embedded \
  --harness-record-durations "$out" "$@" >/dev/null
rc=$?
set -e
# 1: some scenario failed (its duration is still recorded); anything else is an error
if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then echo "pytest exited $rc" >&2; exit "$rc"; fi
python3 - "$out" <<'PY'
import json, sys
from harness.runner.shards import shard_loads
d = json.load(open(sys.argv[1]))
print(f"wrote {sys.argv[1]}: {len(d)} items, {sum(d.values()):.1f} s; 2 shards: "
      + " / ".join(f"{x:.1f} s" for x in shard_loads(list(d), 2, d)))
PY
