"""harness/loop/controllers/nodetermination.py: the parts that differ per core release (the end-to-end pins are
scenarios/releases/core/eviction-priority-groups and drain-conditions)."""
from __future__ import annotations

from types import SimpleNamespace

from harness.loop.controllers.nodetermination import termination_conditions
from harness.loop.disruptionstate import ClaimDisruption


def _claim(**dis) -> SimpleNamespace:
    return SimpleNamespace(dis=ClaimDisruption(**dis))


def test_drain_conditions_from_core_v1_6():
    """core v1.6.0 (#1876): Drained is Unknown from the drain's start and True once drained, VolumesDetached True
    once drained (no VolumeAttachment is modeled); InstanceTerminating at every core; before v1.6.0 no drain
    condition (core-behaviour.yaml drainConditions)."""
    assert termination_conditions(_claim(), True) == {}
    assert termination_conditions(_claim(drain_started=1.0), True) == {"Drained": "Unknown"}
    done = _claim(drain_started=1.0, drained=True, instance_terminating=True)
    assert termination_conditions(done, True) == {"Drained": "True", "VolumesDetached": "True",
                                                  "InstanceTerminating": "True"}
    assert termination_conditions(_claim(drain_started=1.0), False) == {}
    assert termination_conditions(done, False) == {"InstanceTerminating": "True"}


def test_a_pod_terminating_past_the_nodes_deadline_is_deleted_again_from_core_v1_6():
    """core v1.6.0 (#2316): Drain hands DeleteExpiringPods a pod not yet terminating, and one terminating with a
    deletionTimestamp after the node's deadline (IsPodEligibleForForcedEviction); before, only the former
    (core-behaviour.yaml forcedEvictionAfterNodeDeadline)."""
    from harness.loop.controllers.nodetermination import NodeTermination, rfc3339
    from harness.loop.pods import PodView
    deadline = 1_800_000_000.0

    def pv(deleted=None):
        meta = {"name": "p", **({"deletionTimestamp": rfc3339(deleted)} if deleted is not None else {})}
        return PodView({"metadata": meta, "spec": {"containers": []}}, 0)
    claim = _claim(termination_time=deadline)
    for forced in (True, False):
        nt = NodeTermination(SimpleNamespace(core=SimpleNamespace(forced_eviction_after_node_deadline=forced)), None)
        assert nt._expiring(claim, pv())
        assert nt._expiring(claim, pv(deadline + 1)) is forced
        assert not nt._expiring(claim, pv(deadline))
