"""`--harness-shard K/N` balances measured run time (harness/runner/shards.py), deterministically."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from harness.runner.shards import assign, estimate, load_durations, longest_first, real_seconds, shard_loads

ROOT = Path(__file__).resolve().parents[2]


def test_longest_first_onto_the_least_loaded_shard():
    durations = {"a": 10.0, "b": 6.0, "c": 5.0, "d": 4.0, "e": 1.0}
    shards = assign(list("edcba"), 2, durations)
    assert shards == {"a": 0, "b": 1, "c": 1, "d": 0, "e": 1}
    assert shard_loads(list("abcde"), 2, durations) == [14.0, 12.0]
    assert assign(list("abcde"), 2, durations) == shards             # the order of collection does not matter


def test_unmeasured_items_are_estimated():
    durations = {"f.yaml::s[upstream-embedded]": 3.0, "x": 1.0, "y": 2.0}
    assert estimate("f.yaml::s[upstream-local]", durations, 9.0) == 3.0      # the embedded measurement
    assert estimate("f.yaml::new[upstream-embedded]", durations, 9.0) == 9.0


def test_committed_durations_balance_each_nightly_job():
    """Each nightly job (one profile, one backend) splits its items into two shards of about equal
    measured time; the old item-count split (crc32) left one shard with twice the other's time."""
    durations = load_durations()
    assert len(durations) > 300
    for profile in ("before-0006", "design-0006", "upstream"):
        for backend in ("embedded", "local"):
            ids = [k.replace("-embedded]", f"-{backend}]") for k in durations if k.endswith(f"[{profile}-embedded]")]
            a, b = shard_loads(ids, 2, durations)
            assert abs(a - b) <= max(durations.values()), (profile, backend, a, b)


def test_pytest_shards_partition_the_items():
    def ids(*extra: str) -> set[str]:
        proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                               "scenarios/loop", *extra], capture_output=True, text=True, cwd=ROOT)
        return {line for line in proc.stdout.splitlines() if "::" in line}
    everything, first, second = ids(), ids("--harness-shard", "0/2"), ids("--harness-shard", "1/2")
    assert first and second and not first & second and first | second == everything


def test_real_engine_runs_are_handed_out_longest_first(tmp_path):
    """An unmeasured run sits at the median; equal ones keep their order (stable)."""
    report = tmp_path / "conformance.json"
    report.write_text(json.dumps({"entries": [
        {"file": "f.yaml", "scenario": "long", "profile": "upstream", "seconds": {"simulated": 0.1, "real": 200.0}},
        {"file": "f.yaml", "scenario": "short", "profile": "upstream", "seconds": {"simulated": 0.1, "real": 3.0}},
        {"file": "f.yaml", "scenario": "mid", "profile": "upstream", "seconds": {"simulated": 0.1, "real": 20.0}},
        {"file": "f.yaml", "scenario": "tiny", "profile": "upstream", "seconds": {"simulated": 0.1, "real": 1.0}},
        {"file": "f.yaml", "scenario": "skipped", "profile": "upstream", "seconds": {"simulated": 0.1, "real": None}}]}))
    seconds = real_seconds(report)
    assert set(seconds) == {("f.yaml", s, "upstream") for s in ("long", "short", "mid", "tiny")}
    keys = [("f.yaml", s, "upstream") for s in ("short", "new", "skipped", "mid", "long")]
    assert [keys[i][1] for i in longest_first(keys, seconds)] == ["long", "mid", "new", "skipped", "short"]
    assert real_seconds(tmp_path / "absent.json") == {}


def test_pytest_orders_the_real_engine_library_by_the_conformance_report():
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "scenarios/disruption", "--harness-engine", "real", "--harness-profile", "upstream"],
                          capture_output=True, text=True, cwd=ROOT)
    ids = [line for line in proc.stdout.splitlines() if "::" in line]
    seconds = real_seconds(ROOT / "docs" / "conformance" / "conformance.json")
    measured = [seconds[(i.split("::")[0], i.split("::")[1].split("[")[0], "upstream")] for i in ids
                if (i.split("::")[0], i.split("::")[1].split("[")[0], "upstream") in seconds]
    assert len(measured) > 20 and measured == sorted(measured, reverse=True)


def test_auto_workers_on_the_real_engine(monkeypatch):
    """`-n auto` gives the real engine three workers per core (its runs mostly wait on timers); the simulated
    engine, and an explicit PYTEST_XDIST_AUTO_NUM_WORKERS, are left to xdist."""
    import os

    from harness.runner.plugin import pytest_xdist_auto_num_workers

    class Config:
        def __init__(self, engine):
            self.engine = engine

        def getoption(self, name, default=None):
            return self.engine if name == "harness_engine" else default

    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    cores = len(os.sched_getaffinity(0))
    assert pytest_xdist_auto_num_workers(Config("real")) == 3 * cores
    assert pytest_xdist_auto_num_workers(Config("simulated")) is None
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "3")
    assert pytest_xdist_auto_num_workers(Config("real")) is None
