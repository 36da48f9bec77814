"""harness/loop/lifecycle/health.py: core's node repair, with the NodeRepair gate and the provider's policies."""
from __future__ import annotations

from harness.loop.lifecycle.health import BLOCKED, BLOCKED_NODEPOOL, repair_notice
from harness.loop.lifecycle.nodetermination import TERMINATION_ANNOTATION
from harness.loop.seed import _not_ready
from tests.loop.loopkit import deployment, nodeclass, nodepool, simulation


def _gate(sim, on=True):
    sim.state.cfg.feature_gates = {"NodeRepair": on}


def _live(sim):
    return [c for c in sim.claims if not c.done and c.dis.deleting_since is None]


def _sick(sim, status="False"):
    """The first live node's kubelet reports NotReady (or stops posting: Unknown) from now."""
    c = _live(sim)[0]
    _not_ready(sim, c.node_name, status)
    return c


def test_a_node_not_ready_past_the_toleration_is_deleted_and_replaced(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), deployment("web", replicas=1)]) as sim:
        _gate(sim)
        sim.converge()
        sick = _sick(sim)
        sim.advance(599)
        assert sick.dis.deleting_since is None                    # within the provider's 10 minutes
        sim.advance(2)
        assert sick.dis.deleted_by == "Unhealthy"
        # annotateTerminationGracePeriod: the termination time is the deletion's instant, so pods go at once
        assert sick.dis.termination_time == sick.dis.deleting_since
        assert TERMINATION_ANNOTATION in sick.obj["metadata"]["annotations"]
        (rec,) = [d for d in sim.result.disruptions if d["nodeClaim"] == sick.result.name]
        assert (rec["reason"], rec["method"]) == ("Unhealthy", "repair")
        assert any(d.action == "unhealthy-deleted" and d.controller == "node.health" for d in sim.state.decisions.out)
        sim.converge()
        (new,) = _live(sim)
        assert new is not sick and sim.state.pods_on(new.node_name)


def test_unknown_is_repaired_too(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), deployment("web", replicas=1)]) as sim:
        _gate(sim)
        sim.converge()
        sick = _sick(sim, "Unknown")
        sim.advance(601)
        assert sick.dis.deleted_by == "Unhealthy"


def test_the_gate_off_keeps_the_node_and_says_so(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), deployment("web", replicas=1)]) as sim:
        _gate(sim, on=False)
        sim.converge()
        sick = _sick(sim)
        sim.advance(3600)
        sim.converge()
        assert sick.dis.deleting_since is None
        (said,) = repair_notice(sim.state, sim.health)
        assert "NodeRepair feature gate is off" in said and sick.node_name in said


def test_a_core_without_node_repair_keeps_the_node_and_says_so(embedded):
    old = {**nodeclass(), "apiVersion": "karpenter.azure.com/v1alpha2"}     # what provider v0.7.5 serves
    with simulation(embedded, [old, nodepool(), deployment("web", replicas=1)], profile="v0.7.5") as sim:
        _gate(sim)
        sim.converge()
        sick = _sick(sim)
        sim.advance(3600)
        sim.converge()
        assert sick.dis.deleting_since is None
        (said,) = repair_notice(sim.state, sim.health)
        assert "core has no node health controller" in said


def test_more_than_20_percent_of_the_nodepool_unhealthy_blocks_repair(embedded):
    small = nodepool()
    small["spec"]["template"]["spec"]["requirements"].append(
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_D2s_v3"]})
    with simulation(embedded, [nodeclass(), small, deployment("web", replicas=2, cpu="1500m")]) as sim:
        _gate(sim)
        sim.converge()
        assert len(_live(sim)) == 2
        for c in _live(sim):
            _not_ready(sim, c.node_name, "False")
        sim.advance(700)
        # two of two unhealthy, 20% of two rounds up to one: NodeRepairBlocked, both kept
        assert len(_live(sim)) == 2
        blocked = [e for e in sim.result.events if e.get("reason") == BLOCKED]
        assert blocked and all(e["message"] == BLOCKED_NODEPOOL for e in blocked)
        assert any(d.action == "repair-blocked" for d in sim.state.decisions.out)


def test_the_policies_are_the_releases(embedded):
    healthy = {"type": "kubernetes.azure.com/NodeHealthy", "status": "False"}
    for profile, repaired in (("v1.7.2", False), ("v1.10.2", True)):
        with simulation(embedded, [nodeclass(), nodepool(), deployment("web", replicas=1)], profile=profile) as sim:
            _gate(sim)
            sim.converge()
            c = _live(sim)[0]
            node = sim.cluster.get("Node", c.node_name)
            node["status"]["conditions"].append(dict(healthy))
            sim.cluster.update_status(node)
            sim.converge()                       # toleration 0 from provider v1.10.0 (#1512): at once
            assert (c.dis.deleted_by == "Unhealthy") is repaired, profile


def test_a_node_ready_again_starts_its_toleration_anew(embedded):
    from harness.loop.seed import _condition_taints
    with simulation(embedded, [nodeclass(), nodepool(), deployment("web", replicas=1)]) as sim:
        _gate(sim)
        sim.converge()
        sick = _sick(sim)
        sim.advance(500)
        node = sim.cluster.get("Node", sick.node_name)
        node["status"]["conditions"] = [c for c in node["status"]["conditions"] if c["type"] != "Ready"] \
            + [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]
        sim.cluster.update_status(node)
        _condition_taints(sim.state, sim.cluster.get("Node", sick.node_name), "True")
        sim.converge()
        _not_ready(sim, sick.node_name, "False")
        sim.advance(500)                 # 1,000 s since the first, 500 since the second: within 10 minutes
        assert sick.dis.deleting_since is None
        sim.advance(101)
        assert sick.dis.deleted_by == "Unhealthy"
