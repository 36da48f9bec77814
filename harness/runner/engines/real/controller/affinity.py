"""Which worker runs which real-engine scenario next, under pytest-xdist: longest first, and a worker's
next short run one its kept controller can serve.

A worker keeps its controller for the next run when that run asks the same of it (keeper.py
scenario_key: settings, feature gates, the fake's catalog) and the last one left nothing in its memory.
Starting one instead costs ~2-3 s of a run's ~5 (its caches, the SKUs and prices it reads, its first
NodePool readiness). In plain longest-first order a worker's next run shares its last run's key about
one time in five; this scheduler, handing a worker its next run, takes the first pending run with the
same key as the run it just sent there, unless the longest run still pending is long (`LONG_SECONDS`):
those are still started first, so that none is left to run alone at the end (plugin.py
real_longest_first).
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from xdist.scheduler import LoadScheduling

LONG_SECONDS = 60.0
_BRACKET = re.compile(r"^(?P<name>[^\[]+)\[(?P<profile>.+?)-real(?:-[a-z0-9]+)?\]$")


def run_keys(rootpath: Path, nodeids: list[str]) -> dict[str, str | None]:
    """nodeid -> a digest of what its scenario asks of the controller (keeper.scenario_key), None for a
    run that starts a controller of its own (keeper.needs_its_own) or that is not a real-engine scenario run."""
    from harness.loop.clock import SimClock
    from harness.runner.engines.azureside import cluster_settings, fake_azure
    from harness.runner.engines.real.controller import keeper
    from harness.scenario.load import load_scenarios
    files: dict[str, dict] = {}
    keys: dict[str, str | None] = {}
    for nodeid in nodeids:
        keys[nodeid] = None
        path, _, name = nodeid.partition("::")
        m = _BRACKET.match(name)
        if not m or not path.endswith(".scenario.yaml"):
            continue
        try:
            if path not in files:
                files[path] = {sc.name: sc for sc in load_scenarios(rootpath / path)}
            sc = files[path].get(m["name"])
            if sc is None or keeper.needs_its_own(sc):
                continue
            key = keeper.scenario_key(sc, cluster_settings(sc), fake_azure(sc, SimClock()))
        except Exception:       # noqa: BLE001 - a file the workers could not collect either fails there, not here
            continue
        keys[nodeid] = hashlib.sha256(repr(key).encode()).hexdigest()[:16]
    return keys


def run_seconds(rootpath: Path, nodeids: list[str]) -> dict[str, float]:
    """nodeid -> the real engine's seconds for it in the checked-in conformance report (shards.real_seconds)."""
    from harness.runner.shards import real_seconds
    seconds = real_seconds(rootpath / "docs" / "conformance" / "conformance.json")
    out = {}
    for nodeid in nodeids:
        path, _, name = nodeid.partition("::")
        if (m := _BRACKET.match(name)) and (s := seconds.get((path, m["name"], m["profile"]))):
            out[nodeid] = s
    return out


def pick(pending: list[int], last_key: str | None, keys: list[str | None], seconds: list[float]) -> int:
    """The position in `pending` (collection indices, longest first) of the run to send next to a worker
    whose last run had `last_key`: the first with that key, unless the first pending run is long."""
    if last_key is None or not pending or seconds[pending[0]] >= LONG_SECONDS:
        return 0
    return next((pos for pos, i in enumerate(pending) if keys[i] == last_key), 0)


class AffinityScheduling(LoadScheduling):
    """xdist's load scheduling (one run at a time, plugin.py maxschedchunk) with `pick` choosing each run."""

    def __init__(self, config, log=None):
        super().__init__(config, log)
        self.rootpath = Path(config.rootpath)
        self.keys: list[str | None] = []
        self.seconds: list[float] = []
        self.last: dict = {}         # node -> the key of the run last sent to it

    def _send_tests(self, node, num: int) -> None:
        if not self.keys and self.collection:
            keys, secs = run_keys(self.rootpath, list(self.collection)), run_seconds(self.rootpath, list(self.collection))
            self.keys = [keys.get(n) for n in self.collection]
            self.seconds = [secs.get(n, 0.0) for n in self.collection]
        for _ in range(num):
            if not self.pending:
                return
            i = self.pending.pop(pick(self.pending, self.last.get(node), self.keys, self.seconds))
            self.last[node] = self.keys[i]
            self.node2pending[node].append(i)
            node.send_runtest_some([i])
