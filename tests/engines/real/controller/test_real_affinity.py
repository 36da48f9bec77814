"""Which real-engine run a worker gets next (harness/runner/engines/real/controller/affinity.py): one its kept
controller serves, unless a long run is still waiting to start."""
from pathlib import Path

from harness.runner.engines.real.controller.affinity import LONG_SECONDS, AffinityScheduling, pick, run_keys, run_seconds

ROOT = Path(__file__).resolve().parents[4]
LABELS = "scenarios/design-0006/labels-karpenter-sku.scenario.yaml"
FAULTS = "scenarios/loop/transient-azure-errors.scenario.yaml"


def test_a_worker_gets_the_first_run_its_controller_serves():
    keys = ["a", "b", "a", "b"]
    assert pick([1, 2, 3], "b", keys, [5.0] * 4) == 0        # run 1 has the key
    assert pick([0, 1, 2, 3], "b", keys, [5.0] * 4) == 1
    assert pick([0, 2], "b", keys, [5.0] * 4) == 0           # none has it: the longest


def test_a_long_run_waiting_goes_first_whatever_the_key():
    keys = ["a", "b"]
    assert pick([0, 1], "b", keys, [LONG_SECONDS, 5.0]) == 0
    assert pick([0, 1], "b", keys, [LONG_SECONDS - 1, 5.0]) == 1


def test_a_run_with_a_controller_of_its_own_has_no_affinity():
    keys = [None, None]
    assert pick([0, 1], None, keys, [1.0, 1.0]) == 0


def test_keys_come_from_the_scenario_files():
    """Two runs of one scenario file share a key when they ask the same of the controller; a run whose
    faults need a controller of its own has none; what is not a real-engine scenario run has none."""
    from harness.scenario.load import load_scenarios
    labels = [f"{LABELS}::{sc.name}[upstream-real]" for sc in load_scenarios(ROOT / LABELS)]
    faulted = next(f"{FAULTS}::{sc.name}[upstream-real]" for sc in load_scenarios(ROOT / FAULTS) if sc.given.get("faults"))
    keys = run_keys(ROOT, labels + [faulted, "tests/test_x.py::test_y", f"{LABELS}::nope[upstream-real]"])
    assert keys[labels[0]] is not None and len(keys[labels[0]]) == 16
    assert keys[faulted] is None
    assert keys["tests/test_x.py::test_y"] is None and keys[f"{LABELS}::nope[upstream-real]"] is None
    assert run_seconds(ROOT, ["tests/test_x.py::test_y"]) == {}


def test_the_scheduler_sends_one_run_at_a_time_by_pick():
    sent = []

    class Node:
        send_runtest_some = staticmethod(sent.extend)
    node = Node()
    sched = AffinityScheduling.__new__(AffinityScheduling)
    sched.collection, sched.pending, sched.node2pending = ["r0", "r1", "r2"], [0, 1, 2], {node: []}
    sched.keys, sched.seconds, sched.last = ["a", "b", "b"], [5.0, 5.0, 5.0], {node: "b"}
    sched._send_tests(node, 2)
    assert sent == [1, 2] and sched.pending == [0] and sched.node2pending[node] == [1, 2]
    assert sched.last[node] == "b"
