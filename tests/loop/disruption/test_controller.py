"""The disruption controllers of the loop, driven through Simulation.converge on the embedded API
server: harness/loop/disruption/{controller,consolidation,drift,candidates,simulate,orchestration}.py,
lifecycle/{nodetermination,expiration,conditions,podevents}.py and kube/pdbstatus.py (sigs.k8s.io/karpenter v1.14.0
pkg/controllers/disruption, nodeclaim/disruption, nodeclaim/expiration, node/termination)."""
from __future__ import annotations

import copy

from tests.loop.loopkit import deployment, nodeclass, nodepool, pod, simulation


def np(disruption=None, **spec) -> dict:
    p = nodepool(**spec)
    p["spec"]["template"]["spec"]["requirements"] = [
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}]
    if disruption is not None:
        p["spec"]["disruption"] = disruption
    return p


def scaled(dep: dict, replicas: int) -> dict:
    d = copy.deepcopy(dep)
    d["spec"]["replicas"] = replicas
    return d


def test_empty_node_waits_for_consolidate_after_then_goes(embedded):
    web = deployment("web", replicas=1, cpu="1")
    with simulation(embedded, [nodeclass(), np({"consolidateAfter": "30s"}), web]) as sim:
        sim.converge()
        (c,) = sim.claims
        assert c.initialized and c.dis.consolidatable_since is None or sim.result.disruptions == []
        sim.apply([scaled(web, 0)])
        sim.converge()
        assert sim.result.disruptions == [] and not c.done          # consolidateAfter counts from the pods leaving
        sim.clock.advance(31)
        sim.converge()
        (d,) = sim.result.disruptions
        assert (d["reason"], d["method"], d["decision"], d["replacements"]) == ("Empty", "empty", "delete", [])
        assert c.done and c.result.deleted == "Empty"
        assert sim.cluster.get("Node", c.node_name) is None and sim.cluster.get("NodeClaim", c.result.name) is None
        actions = [t["action"] for t in sim.result.timeline]
        assert actions == ["validating", "validated", "tainted", "deleting", "draining", "drained",
                           "instance terminating", "terminated"]


def test_validation_waits_fifteen_seconds(embedded):
    web = deployment("web", replicas=1, cpu="1")
    with simulation(embedded, [nodeclass(), np({"consolidateAfter": "0s"}), web]) as sim:
        sim.converge()
        sim.apply([scaled(web, 0)])
        t0 = sim.clock.now()
        sim.converge()
        tainted = next(t for t in sim.result.timeline if t["action"] == "tainted")
        assert tainted["t"] - t0 >= 15                             # commandValidationDelay
        validating, validated = (next(t for t in sim.result.timeline if t["action"] == a) for a in ("validating", "validated"))
        assert validated["t"] - validating["t"] >= 15


def replaced_after_scale_down(sim, web: dict) -> dict:
    """Three 1-CPU replicas on a D4s_v3, scaled to one: the one disruption, an Underutilized replace
    with a D2s_v3."""
    sim.converge()
    assert sim.nodes[sim.claims[0].node_name].instance_type == "Standard_D4s_v3"
    sim.apply([scaled(web, 1)])
    sim.converge()
    (d,) = sim.result.disruptions
    assert (d["reason"], d["decision"], [r["instanceType"] for r in d["replacements"]]) == (
        "Underutilized", "replace", ["Standard_D2s_v3"])
    return d


def test_replacement_is_initialized_before_the_candidate_is_deleted(embedded):
    web = deployment("web", replicas=3, cpu="1")
    with simulation(embedded, [nodeclass(), np({"consolidateAfter": "0s"}), web]) as sim:
        d = replaced_after_scale_down(sim, web)
        t = {(e["nodeClaim"], e["action"]): e["t"] for e in sim.result.timeline}
        old, new = d["nodeClaim"], d["replacements"][0]["nodeClaim"]
        assert t[(old, "tainted")] <= t[(new, "replacement created")] <= t[(new, "replacement initialized")] \
            <= t[(old, "deleting")] <= t[(old, "terminated")]
        reasons = [(e["kind"], e["reason"]) for e in sim.result.events]
        assert ("NodeClaim", "DisruptionLaunching") in reasons and ("Pod", "Evicted") in reasons


def test_replace_with_a_zonal_anti_affinity_on_a_nodepool_without_zones(embedded):
    """The disruption simulation builds its Topology as the provisioner does (core v1.14.0
    disruption/helpers.go SimulateScheduling -> NewScheduler): the zone a pod's anti-affinity adds to a
    replacement's requirements is a well-known label (AllowUndefinedWellKnownLabels), not a conflict
    that made every candidate Unconsolidatable."""
    web = deployment("web", replicas=3, cpu="1")
    web["spec"]["template"]["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "topology.kubernetes.io/zone", "labelSelector": {"matchLabels": {"app": "batch"}}}]}}
    with simulation(embedded, [nodeclass(), np({"consolidateAfter": "0s"}), web]) as sim:
        replaced_after_scale_down(sim, web)


def test_drift_from_a_nodepool_change(embedded):
    web = deployment("web", replicas=1, cpu="1")
    base = np({"consolidateAfter": "Never"})
    with simulation(embedded, [nodeclass(), base, web]) as sim:
        sim.converge()
        (c,) = sim.claims
        changed = copy.deepcopy(base)
        changed["spec"]["template"]["metadata"] = {"labels": {"team": "blue"}}
        sim.apply([changed])
        sim.converge()
        (d,) = sim.result.disruptions
        assert (d["reason"], d["driftReason"], d["method"]) == ("Drifted", "NodePoolDrifted", "drift")
        assert c.done and len([x for x in sim.claims if not x.done]) == 1


def test_expiration_deletes_without_a_replacement_first(embedded):
    with simulation(embedded, [nodeclass(), np({"consolidateAfter": "Never"}, expireAfter="1h"),
                               deployment("web", replicas=1, cpu="1")]) as sim:
        sim.converge()
        (c,) = sim.claims
        assert c.obj["spec"]["expireAfter"] == "1h"
        sim.clock.advance(3601)
        sim.converge()
        (d,) = sim.result.disruptions
        assert (d["reason"], d["method"], d["replacements"]) == ("Expired", "expiration", [])
        evicted = [e for e in sim.result.events if e["reason"] == "Evicted"]
        assert evicted and evicted[0]["message"] == "Evicted pod: Forceful Termination"


def test_a_timer_inside_an_advance_fires_at_its_time(embedded):
    """Simulation.advance steps to each long timer inside the window: expireAfter 1h, advanced by 2h,
    deletes the node at 1h after its creation, not at the window's end."""
    with simulation(embedded, [nodeclass(), np({"consolidateAfter": "Never"}, expireAfter="1h"),
                               deployment("web", replicas=1, cpu="1")]) as sim:
        sim.converge()
        (c,) = sim.claims
        sim.advance(7200)
        assert sim.clock.now() >= c.created_at + 7200
        sim.converge()
        deleting = next(t for t in sim.result.timeline if t["action"] == "deleting" and t["nodeClaim"] == c.result.name)
        assert deleting["t"] == c.created_at + 3600


def test_consolidate_after_inside_an_advance_fires_at_its_time(embedded):
    web = deployment("web", replicas=1, cpu="1")
    with simulation(embedded, [nodeclass(), np({"consolidateAfter": "30s"}), web]) as sim:
        sim.converge()
        sim.apply([scaled(web, 0)])
        sim.converge()
        (c,) = sim.claims
        since = c.dis.last_pod_event
        sim.advance(600)
        validating = next(t for t in sim.result.timeline if t["action"] == "validating")
        assert validating["t"] == since + 30


def test_pdb_blocks_the_candidate(embedded):
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}
    with simulation(embedded, [nodeclass(), np({"consolidateAfter": "Never"}), deployment("web", 1, "1"), pdb]) as sim:
        sim.converge()
        sim.set_cluster(type(sim.cfg.cluster)(**{**sim.cfg.cluster.__dict__, "kubernetes_version": "1.34.1"}))
        sim.converge()
        assert sim.result.disruptions == []
        assert sim.state.disruption.pdb_status[("default", "web")].disruptions_allowed == 0
        assert {"by": "pdb", "message": "Pdb prevents pod evictions (PodDisruptionBudget=[default/web])"}.items() <= \
            sim.result.protected[0].items()


def test_a_node_is_not_disrupted_while_nominated(embedded):
    """A pod the provisioner put on an existing node nominates it for 20 s (statenode.go Nominate)."""
    with simulation(embedded, [nodeclass(), np({"consolidateAfter": "0s"}), pod("a", "500m")]) as sim:
        sim.converge()
        (c,) = sim.claims
        sim.apply([pod("b", "100m", nodeSelector={"not-there": "x"})])      # pending, not for this node
        sim.state.nominated["default/b"] = c.result.name                   # as Results.Record would
        assert sim.state.nominated.times["default/b"] == sim.clock.now()
        sim.podevents.reconcile()
        assert c.dis.nominated_until == sim.clock.now() + 20
        from harness.loop.disruption.candidates import GRACEFUL, Cluster
        view = Cluster(sim.state)
        assert view.candidates(lambda x: True, GRACEFUL, lambda n: False, "empty") == []
        assert view.s.result.protected[-1]["by"] == "nominated"


def test_a_nomination_changes_the_pass_fingerprint_only_where_unnominated_drops_it(embedded):
    """A nomination starting or ending is no change to cluster state's consolidation state (sigs.k8s.io/karpenter
    v1.14.0 pkg/controllers/state/cluster.go MarkUnconsolidated is never called for NominateNodeForPod):
    disruption.unnominated drops exactly the NodeClaims' nominations from the pass's fingerprint."""
    from harness.loop.disruption.controller import unnominated
    with simulation(embedded, [nodeclass(), np({"consolidateAfter": "0s"}), pod("a", "500m")]) as sim:
        sim.converge()
        (c,) = sim.claims
        nodepools = sim.cluster.list("NodePool")
        before = sim.disruption._fingerprint(nodepools)
        c.dis.nominated_until = sim.clock.now() + 20
        nominated = sim.disruption._fingerprint(nodepools)
        assert nominated != before and unnominated(nominated) == unnominated(before)
        c.dis.marked_for_deletion = True
        assert unnominated(sim.disruption._fingerprint(nodepools)) != unnominated(before)


def test_garbage_collected_spot_vm_is_recorded_as_interrupted(embedded):
    spot = np({"consolidateAfter": "Never"})
    spot["spec"]["template"]["spec"]["requirements"] = [
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]
    with simulation(embedded, [nodeclass(), spot, deployment("web", 1, "1")]) as sim:
        sim.converge()
        (c,) = sim.claims
        sim.fake.evict(sim.provider.rg, c.launched.vm_name)
        sim.converge()
        (d,) = sim.result.disruptions
        assert (d["reason"], d["method"]) == ("Interrupted", "garbage-collection")
        assert sim.nodes[c.node_name].deleted == "Interrupted"


def _two_empty_nodes_validating(sim):
    """Two 1500m pods on two D2s_v3, scaled to zero: one Emptiness command for both, pending its 15 s
    validation; returns (method, proposal)."""
    web = deployment("web", replicas=2, cpu="1500m")
    pool = np({"consolidateAfter": "0s", "budgets": [{"nodes": "100%"}]})
    pool["spec"]["template"]["spec"]["requirements"].append(
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_D2s_v3"]})
    sim.apply([nodeclass(), pool, web])
    sim.validate_nodepools()
    sim.converge()
    assert len([c for c in sim.claims if not c.done]) == 2
    sim.disruption.reconcile()                  # nothing empty yet
    sim.apply([scaled(web, 0)])
    for _ in range(5):
        sim.podevents.reconcile()
        sim.disruption.reconcile()
        if sim.disruption.pending is not None:
            break
    method, proposal, _ = sim.disruption.pending
    assert method.method == "empty" and len(proposal.candidates) == 2
    return method, proposal


def test_emptiness_validation_keeps_the_still_valid_subset_from_core_v1_5(embedded):
    """core v1.5.0 (#2206) EmptinessValidator.validateCandidates: a candidate nominated during the wait drops
    out, the other is still deleted; core v1.4.0 Validation.ValidateCandidates abandons the whole command
    (core-behaviour.yaml emptinessValidation)."""
    from harness.loop.disruption.candidates import Cluster
    for profile, expect in (("v1.5.1", 1), ("v1.4.1", None)):
        with simulation(embedded, profile=profile) as sim:
            method, proposal = _two_empty_nodes_validating(sim)
            proposal.candidates[0].claim.dis.nominated_until = sim.clock.now() + 20
            valid, why = method.validate(Cluster(sim.state), proposal)
            if expect is None:
                assert valid is None and why == "churn"        # "1 candidates are no longer valid"
            else:
                assert [c.name for c in valid.candidates] == [proposal.candidates[1].name]


def _type_taken_away(embedded, profile: str, age: float):
    """A Standard_D2s_v3 node `age` seconds old when the provider reads SKUs again after Azure took the size away:
    (the simulation, the node's claim)."""
    nc = {**nodeclass(), "apiVersion": "karpenter.azure.com/v1alpha2"}     # served by every release here
    sim_cm = simulation(embedded, [nc, np({"consolidateAfter": "Never"}), deployment("web", replicas=1, cpu="1")],
                        profile=profile)
    sim = sim_cm.__enter__()
    refresh = float(sim.profile.provider["skuRefresh"])
    sim.clock.advance(refresh - age)
    sim.converge()
    (c,) = sim.claims
    assert c.launched.instance_type.name == "Standard_D2s_v3"
    sim.fake.restrict_sku("Standard_D2s_v3")
    sim.clock.advance(age - (sim.clock.now() - c.created_at) + 1)
    sim.converge()
    return sim_cm, sim, c


def test_instance_type_drift_per_core_release(embedded):
    """core-behaviour.yaml instanceTypeDrift: the size gone 30 minutes after the node's creation drifts it at
    once from core v1.1.0 (v1.4.1), from an hour after creation from v1.6.0 (v1.6.1), never at v1.0.x (v0.7.5),
    where the node is no disruption candidate either."""
    for profile, drifted in (("v1.4.1", True), ("v1.6.1", False), ("v0.7.5", False)):
        cm, sim, c = _type_taken_away(embedded, profile, 1800)
        try:
            reasons = [(d["reason"], d.get("driftReason")) for d in sim.result.disruptions]
            assert reasons == ([("Drifted", "InstanceTypeNotFound")] if drifted else []), profile
            # core v1.0.x words the event "Cannot disrupt NodeClaim: <reason>" (disruptionBlockedMessage)
            blocked = [e for e in sim.result.events if e["reason"] == "DisruptionBlocked"
                       and e["message"].endswith('Instance Type "Standard_D2s_v3" not found')]
            assert bool(blocked) == (profile == "v0.7.5"), profile
            if profile != "v1.4.1":
                sim.clock.advance(1800)
                sim.converge()
                reasons = [(d["reason"], d.get("driftReason")) for d in sim.result.disruptions]
                assert reasons == ([("Drifted", "InstanceTypeNotFound")] if profile == "v1.6.1" else []), profile
        finally:
            cm.__exit__(None, None, None)


def test_single_node_interleave_draws_the_nodepool_order_only_where_there_is_one():
    """shuffleCandidates (core v1.14.0 singlenodeconsolidation.go) reads its NodePools in Go map order:
    with two NodePools, either goes first under some seed; each keeps its candidates' sorted order; one
    NodePool draws nothing from the stream (consolidation.interleave)."""
    import random
    from types import SimpleNamespace

    from harness.loop.disruption.consolidation import interleave

    a1, a2, b1 = (SimpleNamespace(nodepool_name=n, name=f"{n}{i}") for n, i in (("a", 1), ("a", 2), ("b", 1)))
    assert interleave([a1, a2, b1], None) == [a1, b1, a2]
    orders = {tuple(c.name for c in interleave([a1, a2, b1], random.Random(f"nodepool-order-{seed}")))
              for seed in range(8)}
    assert orders == {("a1", "b1", "a2"), ("b1", "a1", "a2")}
    rng = random.Random("nodepool-order-1")
    before = rng.getstate()
    assert interleave([a1, a2], rng) == [a1, a2] and rng.getstate() == before


def test_tied_candidates_come_in_a_seeded_order_and_no_tie_draws_nothing():
    """GetCandidates lists candidates in Go map order and sortCandidates keeps ties in it
    (consolidation.ties_in_map_order): two candidates of one ratio come either way round under some
    seed; distinct ratios keep the list as it is and leave the stream untouched."""
    import random
    from types import SimpleNamespace

    from harness.loop.disruption.consolidation import ties_in_map_order

    x, y, z = (SimpleNamespace(name=n, ratio=r) for n, r in (("x", 1.0), ("y", 1.0), ("z", 2.0)))
    def key(c):
        return -c.ratio

    firsts = {sorted(ties_in_map_order([x, y, z], key, random.Random(f"candidates-{seed}")), key=key)[1].name
              for seed in range(8)}
    assert firsts == {"x", "y"}
    rng = random.Random("candidates-1")
    before = rng.getstate()
    assert ties_in_map_order([x, z], key, rng) == [x, z] and rng.getstate() == before
