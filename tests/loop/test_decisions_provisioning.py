"""The provisioner's and launch's decisions (harness/loop/provisioning/provisioner.py, launch.py; texts:
harness/loop/provisioning/reasons.py): which NodePool a NodeClaim came from and why that one."""
from __future__ import annotations

from pathlib import Path

from harness.loop.decisions import about
from tests.loop.loopkit import nodeclass, nodepool, pod, simulation

ROOT = Path(__file__).resolve().parents[2]


def pool(name: str, weight: int | None = None, sku: str = "Standard_D2s_v3", limits: dict | None = None,
         taints: list | None = None) -> dict:
    np = nodepool(name, requirements=[
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [sku]}],
        **({"taints": taints} if taints else {}))
    if weight is not None:
        np["spec"]["weight"] = weight
    if limits is not None:
        np["spec"]["limits"] = limits
    np["spec"]["disruption"] = {"consolidateAfter": "Never"}
    return np


def decisions(result, action: str) -> list:
    return [d for d in result.decisions if d.action == action]


def created(result) -> dict:
    """NodePool name -> the nodeclaim-created decision of its (one) NodeClaim."""
    return {d.data["nodePool"]: d for d in decisions(result, "nodeclaim-created")}


def test_equal_weights_are_resolved_by_name_and_the_record_says_so(embedded):
    with simulation(embedded) as sim:
        result = sim.run([nodeclass(), pool("a", 10), pool("b", 10), pod("web")])
        (d,) = decisions(result, "nodeclaim-created")
        # OrderByWeight: equal weights by name, descending, so `b` is tried before `a`
        assert d.data["nodePool"] == "b" and d.subject.startswith("NodeClaim/b-")
        assert "tied at weight 10 with NodePool a, chosen by name order" in d.reason
        assert "the first NodePool tried in weight order" in d.reason
        assert {"Pod/default/web", "NodePool/b"} <= set(d.related)
        # the pod's own question, "why did this pod land here", finds the same decision
        assert d in about(result.decisions, "default/web")


def test_a_heavier_nodepool_whose_taint_the_pod_does_not_tolerate_is_passed_over(embedded):
    taint = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    with simulation(embedded) as sim:
        result = sim.run([nodeclass(), pool("gpu", 50, "Standard_D4s_v3", taints=taint), pool("general"), pod("web")])
        d = created(result)["general"]
        assert "the first NodePool in weight order that could take pod default/web" in d.reason
        assert "tried before it: NodePool gpu, weight 50: did not tolerate taint (taint=dedicated=gpu:NoSchedule)" \
            in d.reason, d.reason
        assert d.data["passedOver"] == [{"nodePool": "gpu", "weight": 50,
                                         "error": "did not tolerate taint (taint=dedicated=gpu:NoSchedule)"}]
        # "why not NodePool gpu?" finds it too
        assert d in about(result.decisions, "NodePool/gpu")


def test_a_nodepool_whose_limits_cpu_node_capacity_uses_up_sends_the_pod_to_the_fallback(embedded):
    """limits.cpu 8 and two 4-vCPU nodes of `main`: their capacity is the whole limit (8 of 8), however little
    their pods use; the pod gets a NodeClaim from `fallback`, and both decisions show the arithmetic."""
    busy = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"busy-{i}"},
             "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "3"}}}]}}
            for i in (1, 2)]
    existing = [{"nodePool": "main", "instanceType": "Standard_D4s_v3",
                 "capacityType": "on-demand", "pods": [p]} for p in busy]
    with simulation(embedded) as sim:
        result = sim.run([nodeclass(), pool("main", 10, "Standard_D4s_v3", limits={"cpu": "8"}), pool("fallback"),
                          pod("web", "1500m")], existing=existing)
        assert result.pods["default/web"].state == "scheduled"
        d = created(result)["fallback"]
        assert ("tried before it: NodePool main, weight 10: all available instance types exceed limits for nodepool "
                "(NodePool=main): limits.cpu 8, in use 8 (node capacity), this NodeClaim needs 4") in d.reason, d.reason
        (skipped,) = [x for x in decisions(result, "nodepool-skipped") if x.subject == "NodePool/main"]
        assert skipped.reason.endswith("limits.cpu 8, in use 8 (node capacity), a new NodeClaim needs at least 4")
        # the two seeded nodes' launches say they were given, not chosen
        seeded = [x for x in decisions(result, "nodeclaim-launched") if "given.existingNodes" in x.reason]
        assert len(seeded) == 2


def test_the_library_scenario_records_why_the_fallback_took_the_pod(embedded):
    """scenarios/loop/why-this-nodepool.scenario.yaml: 64 of 64."""
    from harness.runner.engines import run as run_scenario
    from harness.scenario.load import load_scenarios
    (sc,) = load_scenarios(ROOT / "scenarios/loop/why-this-nodepool.scenario.yaml")
    out = run_scenario(sc, "upstream", embedded)
    assert out.passed, out.failures if hasattr(out, "failures") else out
    d = created(out.result)["fallback"]
    assert "limits.cpu 64, in use 64 (node capacity), this NodeClaim needs 16" in d.reason, d.reason


def test_pods_provisionable_and_the_launch_name_the_pods_and_the_offering(embedded):
    with simulation(embedded) as sim:
        result = sim.run([nodeclass(), pool("default", sku="Standard_D4s_v3"), pod("a"), pod("b")])
        first = decisions(result, "pods-provisionable")[0]
        assert first.reason == "found 2 provisionable pod(s): default/a, default/b"
        assert set(first.related) == {"Pod/default/a", "Pod/default/b"}
        (launched,) = decisions(result, "nodeclaim-launched")
        assert launched.reason.startswith("Standard_D4s_v3 in ")
        price = launched.data["price"]
        assert f"on-demand, ${price:.4f}/h: the cheapest compatible available offering of the only instance type left" \
            in launched.reason


def test_a_pod_no_nodepool_can_take_gets_karpenters_error_once(embedded):
    with simulation(embedded) as sim:
        result = sim.run([nodeclass(), pool("default"), pod("huge", "64")])
        (d,) = decisions(result, "pod-unschedulable")
        assert d.subject == "Pod/default/huge"
        assert d.reason.startswith("no instance type has enough resources, requirements=")
        assert d.reason == result.pods["default/huge"].karpenter_error


def test_a_nodepool_not_ready_is_skipped_with_its_condition(embedded):
    orphan = pool("orphan", 50)
    orphan["spec"]["template"]["spec"]["nodeClassRef"]["name"] = "missing"
    with simulation(embedded) as sim:
        result = sim.run([nodeclass(), orphan, pool("default"), pod("web")])
        (d,) = [x for x in decisions(result, "nodepool-skipped") if x.subject == "NodePool/orphan"]
        assert d.reason.startswith("not Ready: NodeClassReady=False (NodeClassNotFound"), d.reason
        # the pod's NodeClaim says the heavier NodePool was left out, and why
        assert "left out this round: NodePool orphan (not Ready)" in created(result)["default"].reason


def test_equal_weights_tried_first_by_name_and_passed_over_are_named_so(embedded):
    taint = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    with simulation(embedded) as sim:
        result = sim.run([nodeclass(), pool("a", 10), pool("b", 10, taints=taint), pool("c", 10, taints=taint),
                          pod("web")])
        d = created(result)["a"]
        assert "NodePools c, b of equal weight came first by name order" in d.reason
        assert "tried before it: NodePool c, weight 10: did not tolerate taint" in d.reason


def test_recording_off_records_nothing_and_changes_no_outcome(embedded):
    def run(enabled: bool):
        with simulation(embedded) as sim:
            sim.state.decisions.enabled = enabled
            result = sim.run([nodeclass(), pool("a", 10), pool("b", 10), pod("web"), pod("huge", "64")])
            return result, {k: (p.state, p.node, p.karpenter_error) for k, p in result.pods.items()}
    on, outcome_on = run(True)
    off, outcome_off = run(False)
    assert off.decisions == [] and on.decisions
    assert outcome_on == outcome_off


def test_a_failed_launch_names_azures_error_code_and_what_was_marked_unavailable(embedded):
    """scenarios/loop/create-faults.scenario.yaml zonal-allocation-failure-moves-zone: the first VM fails with
    ZonalAllocationFailed, its zone's offerings are marked unavailable, the next NodeClaim launches elsewhere."""
    from harness.runner.engines import run as run_scenario
    from harness.scenario.load import load_scenarios
    (sc,) = [s for s in load_scenarios(ROOT / "scenarios/loop/create-faults.scenario.yaml")
             if s.name == "zonal-allocation-failure-moves-zone"]
    result = run_scenario(sc, "upstream", embedded).result
    (failed,) = decisions(result, "nodeclaim-launch-failed")
    zone = failed.data["attempted"]["zone"]
    assert "(Azure error code ZonalAllocationFailed)" in failed.reason
    assert (f"Standard_D2s_v3's offerings marked unavailable for 1h (ZonalAllocationFailed): {zone} on-demand, "
            f"{zone} spot") in failed.reason, failed.reason
    (launched,) = decisions(result, "nodeclaim-launched")
    assert launched.data["zone"] != zone


def test_a_launch_with_every_offering_unavailable_lists_them(embedded):
    """The unavailable-offerings cache marked every offering after the NodeClaim was planned (a launch racing
    another's failure): InsufficientCapacity, and the record says which offerings it allowed."""
    with simulation(embedded) as sim:
        sim.apply([nodeclass(), pool("default"), pod("web")])
        sim.validate_nodepools()
        assert sim.provisioner.reconcile()
        it = sim.result.instance_types["Standard_D2s_v3"]
        for o in it.offerings:
            sim.state.provider.unavailable.mark(it.name, it.family, it.vcpus, o.zone, o.capacity_type, 3600)
        sim.launch.reconcile()
        (d,) = decisions(sim.result, "nodeclaim-launch-failed")
        allowed = [o for o in it.offerings if o.capacity_type == "on-demand"]
        assert d.reason.startswith("InsufficientCapacity InsufficientCapacity: all requested instance types were "
                                   f"unavailable during launch; the {len(allowed)} offering(s) it allows are "
                                   "unavailable: Standard_D2s_v3 in "), d.reason
        assert d.reason.endswith("the NodeClaim is deleted as insufficient capacity and the provisioner plans its "
                                 "pods again")


def test_idle_rounds_over_the_same_pods_are_recorded_once(embedded):
    """Pods of a node being deleted whose drain waits: every round plans them again and decides nothing new
    (60 rounds here); the record keeps a round only when something was decided since the one before."""
    from harness.runner.engines import run as run_scenario
    from harness.scenario.load import load_scenarios
    (sc,) = [s for s in load_scenarios(ROOT / "scenarios/upstream-core/provisioning/provisioning.scenario.yaml")
             if s.name == "should-schedule-all-pods-on-one-inflight-node-when-node-is-in-d"]
    result = run_scenario(sc, "upstream", embedded).result
    assert result.iterations > 10
    rounds = decisions(result, "pods-provisionable")
    # 60 rounds, a handful kept: the first two, and one after each decision another controller took between them
    # (the drain's)
    counts = [d.data["pods"] for d in rounds]
    assert counts[:2] == [5, 3] and set(counts[2:]) <= {3} and len(counts) <= 4


def test_create_refuses_a_nodeclaim_past_limits_nodes_before_core_v1_11(embedded):
    """Provider v0.7.5 (core v1.0.x, before initializedNodesCounted): the scheduler plans a node for each pod past
    limits.nodes 1, and Provisioner.Create refuses once two nodes are in use; the pod gets no event, the record
    says why and names the switch."""
    busy = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"busy-{i}"},
             "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1500m"}}}]}}
            for i in (1, 2)]
    existing = [{"nodePool": "main", "instanceType": "Standard_D2s_v3", "capacityType": "on-demand", "pods": [p]}
                for p in busy]
    v1alpha2 = {**nodeclass(), "apiVersion": "karpenter.azure.com/v1alpha2"}     # what provider v0.7.5 serves
    with simulation(embedded, profile="v0.7.5") as sim:
        result = sim.run([v1alpha2, pool("main", limits={"nodes": "1"}), pod("web", "1500m")], existing=existing)
        assert result.pods["default/web"].state == "pending"
        assert not result.pods["default/web"].events
        (d,) = decisions(result, "nodeclaim-refused")
        assert d.subject == "Pod/default/web" and d.data == {"nodePool": "main"}
        assert d.reason.startswith("creating node claim, nodes resource usage of 2 exceeds limit of 1: "
                                   "Provisioner.Create refused"), d.reason
        assert "nodeLimits" in d.switches


def test_core_v1_10_scheduler_refuses_past_limits_nodes_on_initialized_nodes(embedded):
    """Provider v1.10.2 (core v1.10.0, initializedNodesCounted): two initialized nodes of a NodePool limited to
    one leave -1 `nodes` in the scheduler, so the pod gets the FailedScheduling event and Create is not reached."""
    busy = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"busy-{i}"},
             "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1500m"}}}]}}
            for i in (1, 2)]
    existing = [{"nodePool": "main", "instanceType": "Standard_D2s_v3", "capacityType": "on-demand", "pods": [p]}
                for p in busy]
    with simulation(embedded, profile="v1.10.2") as sim:
        result = sim.run([nodeclass(), pool("main", limits={"nodes": "1"}), pod("web", "1500m")], existing=existing)
        assert result.pods["default/web"].state == "pending"
        assert any("all available instance types exceed limits for nodepool" in e
                   for e in result.pods["default/web"].events)
        assert not decisions(result, "nodeclaim-refused")
