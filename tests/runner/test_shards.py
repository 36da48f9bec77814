"""`--harness-shard K/N` balances measured run time (harness/runner/shards.py), deterministically."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harness.runner.shards import assign, estimate, load_durations, shard_loads

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
