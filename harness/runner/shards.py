"""`--harness-shard K/N`: split the collected items into N shards of about equal measured run time.

Durations are data (`harness/data/scenario-durations.json`, item id -> seconds on the embedded
backend), refreshed by `scripts/refresh-durations.sh`. An item measured on another backend, or not
measured at all, is estimated (the same scenario on the embedded backend, else the median).
Assignment is longest-first onto the least-loaded shard (LPT), ties by item id, so every machine
(and every xdist worker) computes the same split from the same collection.
"""
from __future__ import annotations

import json
import re
import statistics
from importlib import resources
from pathlib import Path

DURATIONS_FILE = Path(str(resources.files("harness") / "data" / "scenario-durations.json"))
_BACKEND_RE = re.compile(r"-(local|container)\]$")


def load_durations(path: str | Path | None = None) -> dict[str, float]:
    p = Path(path or DURATIONS_FILE)
    if not p.exists():
        return {}
    return {str(k): float(v) for k, v in json.loads(p.read_text()).items()}


def write_durations(path: str | Path, durations: dict[str, float]) -> None:
    """Sorted and rounded, so a refresh diffs readably."""
    data = {k: round(v, 3) for k, v in sorted(durations.items())}
    Path(path).write_text(json.dumps(data, indent=1) + "\n")


def estimate(nodeid: str, durations: dict[str, float], default: float) -> float:
    if nodeid in durations:
        return durations[nodeid]
    embedded = _BACKEND_RE.sub("-embedded]", nodeid)
    return durations.get(embedded, default)


def assign(nodeids: list[str], n: int, durations: dict[str, float]) -> dict[str, int]:
    """Item id -> shard index in 0..n-1, balancing the estimated total time per shard."""
    default = statistics.median(durations.values()) if durations else 1.0
    loads = [0.0] * n
    out: dict[str, int] = {}
    for nodeid in sorted(nodeids, key=lambda i: (-estimate(i, durations, default), i)):
        k = min(range(n), key=lambda s: (loads[s], s))
        out[nodeid] = k
        loads[k] += estimate(nodeid, durations, default)
    return out


def real_seconds(report: Path) -> dict[tuple[str, str, str], float]:
    """(file relative to the repository, scenario, profile) -> the real engine's seconds, as the checked-in
    conformance report measured them (docs/conformance/conformance.json); empty without the report."""
    if not report.is_file():
        return {}
    entries = json.loads(report.read_text()).get("entries") or []
    return {(e["file"], e["scenario"], e["profile"]): float((e.get("seconds") or {}).get("real") or 0.0)
            for e in entries if (e.get("seconds") or {}).get("real")}


def longest_first(keys: list, seconds: dict) -> list[int]:
    """The indices of `keys` in descending measured seconds (unmeasured ones at the median), ties in the
    given order. Handed out in this order, pytest-xdist's load scheduling starts the long real-engine
    runs (the ones waiting out a real timer) first and fills the workers' ends with short ones (LPT),
    instead of leaving one worker alone with a 3-minute run at the end."""
    default = statistics.median(seconds.values()) if seconds else 0.0
    return sorted(range(len(keys)), key=lambda i: -seconds.get(keys[i], default))


def shard_loads(nodeids: list[str], n: int, durations: dict[str, float]) -> list[float]:
    """The estimated seconds per shard (for the refresh script's report and the tests)."""
    default = statistics.median(durations.values()) if durations else 1.0
    loads = [0.0] * n
    for nodeid, k in assign(nodeids, n, durations).items():
        loads[k] += estimate(nodeid, durations, default)
    return loads
