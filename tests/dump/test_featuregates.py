"""harness/dump/featuregates.py: the feature gates a dump's objects show, each reading with the evidence that
decided it."""
from __future__ import annotations

from harness.dump.featuregates import node_overlay, node_repair, readings, static_capacity
from harness.model.kube.kubetime import parse_rfc3339

# the provider's policies from v1.4.0 (profile provider.repairPolicies): Ready False or Unknown for 10 minutes
POLICIES = [{"type": "Ready", "status": "False", "tolerationSeconds": 600},
            {"type": "Ready", "status": "Unknown", "tolerationSeconds": 600}]
AT = parse_rfc3339("2026-11-20T08:30:00Z")


def _node(name: str, ready: str, since: str, deleting: bool = False, pool: str | None = "web") -> dict:
    meta: dict = {"name": name, "labels": {"karpenter.sh/nodepool": pool} if pool else {}}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-20T08:29:00Z"
    return {"kind": "Node", "metadata": meta,
            "status": {"conditions": [{"type": "Ready", "status": ready, "lastTransitionTime": since}]}}


def test_a_static_nodepool_reads_static_capacity_on():
    found = static_capacity([{"kind": "NodePool", "metadata": {"name": "fixed"}, "spec": {"replicas": 2}}])
    assert found.gate == "StaticCapacity" and found.on and found.said.startswith("NodePool(s) fixed set spec.replicas")


def test_an_overlay_with_status_reads_the_gate_on_and_one_without_off():
    validated = {"kind": "NodeOverlay", "metadata": {"name": "cheap"},
                 "status": {"conditions": [{"type": "ValidationSucceeded", "status": "True"}]}}
    plain = {"kind": "NodeOverlay", "metadata": {"name": "plain"}, "spec": {"price": "1"}}
    on = node_overlay([plain, validated])
    assert on.on and on.said.startswith("NodeOverlay cheap has status conditions")
    off = node_overlay([plain])
    assert not off.on and "assumed it off" in off.said
    assert node_overlay([]) is None


def test_a_node_repair_blocked_event_reads_the_gate_on():
    ev = {"kind": "Event", "reason": "NodeRepairBlocked", "involvedObject": {"kind": "Node", "name": "aks-web-1"}}
    found = node_repair([], [ev], POLICIES, AT, "profile v1.14.2")
    assert found.on and "Event NodeRepairBlocked on Node aks-web-1" in found.said


def test_a_node_past_its_toleration_and_kept_reads_the_gate_off():
    found = node_repair([_node("aks-web-1", "False", "2026-11-20T08:00:00Z")], [], POLICIES, AT, "profile v1.14.2")
    assert not found.on
    assert found.said.startswith("Node aks-web-1 has Ready=False since 2026-11-20T08:00:00Z (the repair policy of "
                                 "profile v1.14.2 tolerates 10m0s) and is not being deleted: assumed the NodeRepair")


def test_a_node_within_its_toleration_assumes_the_default():
    found = node_repair([_node("aks-web-1", "Unknown", "2026-11-20T08:25:00Z")], [], POLICIES, AT, "profile v1.14.2")
    assert not found.on and "the dump does not show whether node repair was on" in found.said
    assert found.said.endswith("core deletes it when its toleration ends at 2026-11-20T08:35:00Z)")


def test_nothing_to_read():
    healthy = _node("aks-web-1", "True", "2026-11-20T08:00:00Z")
    unmanaged = _node("aks-system-1", "False", "2026-11-20T08:00:00Z", pool=None)
    assert node_repair([healthy, unmanaged], [], POLICIES, AT, "profile v1.14.2") is None
    # a release without repair policies (before provider v1.4.0) has no node health controller to read
    assert node_repair([_node("aks-web-1", "False", "2026-11-20T08:00:00Z")], [], [], AT, "profile v1.2.0") is None
    assert readings([], [], [], [], POLICIES, AT, "profile v1.14.2") == []


def test_a_nodepool_mostly_unhealthy_holds_repair_back_either_way():
    """More than 20% of the NodePool unhealthy: core blocks repair with the gate on too, so a kept node says less."""
    nodes = [_node("aks-web-1", "False", "2026-11-20T08:00:00Z"), _node("aks-web-2", "Unknown", "2026-11-20T08:00:00Z"),
             _node("aks-web-3", "True", "2026-11-20T08:00:00Z")]
    found = node_repair(nodes, [], POLICIES, AT, "profile v1.14.2")
    assert not found.on and "but 2 of NodePool web's 3 nodes are unhealthy, more than 20%" in found.said
    # one of three is within core's allowance (20% of 3, rounded up: 1): repair would have run with the gate on
    assert "is not being deleted: assumed" in node_repair(nodes[::2], [], POLICIES, AT, "profile v1.14.2").said
