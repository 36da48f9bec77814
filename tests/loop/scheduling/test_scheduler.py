"""Scheduler.solve's queue (harness/loop/scheduling/scheduler.py): how a pod that fails is relaxed and requeued, per
core release (core-behaviour.yaml relaxPreferencesPerPod)."""
from __future__ import annotations

import pytest

from harness.loop.scheduling.pods import PodView
from harness.loop.scheduling.scheduler import Scheduler, Template
from harness.loop.scheduling.topology import Topology, topology_keys, universe_for
from tests.loop.loopkit import synthetic_world

RACK = "example.com/rack"


@pytest.fixture(scope="module")
def world():
    profile, sem, its = synthetic_world()
    # one 2-vCPU size: a 1500m pod shares its node with no 600m pod, two 600m pods share one
    two = min((it for it in its if it.capacity.get("cpu") == 2000), key=lambda it: it.name)
    nodepool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default", "uid": "default"},
                "spec": {"template": {"spec": {
                    "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
                    "requirements": [{"key": RACK, "operator": "In", "values": ["rack-a", "rack-b"]},
                                     {"key": "node.kubernetes.io/instance-type", "operator": "In",
                                      "values": [two.name]}]}}}}
    return profile, sem, Template.from_nodepool(nodepool, list(its), profile, sem)


def pod(i: int, name: str, cpu: str, spec: dict) -> PodView:
    spec = {**spec, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    return PodView({"metadata": {"name": name, "namespace": "default", "uid": name, "labels": {"app": "web"}},
                    "spec": spec}, i)


def solve(world, relax_per_pod: bool):
    profile, sem, template = world
    big = pod(0, "big", "1500m", {"nodeSelector": {RACK: "rack-a"}, "affinity": {"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [{"key": RACK, "operator": "In", "values": ["rack-c"]}]}}]}}})
    spread = {"topologySpreadConstraints": [{"topologyKey": RACK, "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule",
                                             "labelSelector": {"matchLabels": {"app": "web"}}}]}
    pods = [big, pod(1, "small-1", "600m", spread), pod(2, "small-2", "600m", spread)]
    keys = set().union(*(topology_keys(p) for p in pods))
    topo = Topology(universe_for(keys, [template]), {}, [], sem=sem, well_known=profile.well_known_labels)
    result = Scheduler([template], [], profile, sem, topology=topo, relax_per_pod=relax_per_pod).solve(pods)
    assert not result.errors
    return [[p.name for p in c.pods] for c in result.new_claims]


def test_from_core_v1_4_a_pod_is_relaxed_all_the_way_before_the_queue_moves_on(world):
    """sigs.k8s.io/karpenter v1.4.0 scheduling/scheduler.go Solve, trySchedule: big (most CPU, first in the
    queue) drops its unmet preference and lands in rack-a first; the spread then keeps both small pods in rack-b."""
    assert solve(world, True) == [["big"], ["small-1", "small-2"]]


def test_before_core_v1_4_a_relaxed_pod_goes_to_the_back_of_the_queue(world):
    """sigs.k8s.io/karpenter v1.0.6 scheduling/scheduler.go Solve, queue.go Push: big is relaxed one step and
    requeued behind the small pods, which take one rack each; big then needs a NodeClaim of its own."""
    claims = solve(world, False)
    assert sorted(claims) == [["big"], ["small-1"], ["small-2"]]
    assert claims[-1] == ["big"]



@pytest.mark.parametrize("seed", range(6))
def test_existing_nodes_by_blocks_take_the_pods_the_walk_gives(world, seed, monkeypatch):
    """Scheduler._place skips a block of existing nodes none of which has the free cpu, memory or pod slots a pod
    asks (Scheduler._free): each pod still lands on the first node in order that takes it, as when every node is
    tried (ROOM_BLOCK above the node count), as the nodes fill up."""
    import random

    import harness.loop.scheduling.scheduler as scheduling
    from harness.loop.scheduling.existingnode import ExistingNode
    profile, sem, template = world
    rng = random.Random(seed)

    def nodes():
        out = []
        for i in range(rng.randint(40, 200)):
            alloc = {"cpu": rng.choice((2000, 4000, 8000)), "memory": rng.choice((4, 8, 16)) << 30, "pods": 30}
            if rng.random() < 0.1:
                del alloc["memory"]            # a node that allocates no memory refuses every pod that asks some
            used = {k: rng.randint(0, v) for k, v in alloc.items()}
            out.append(ExistingNode(f"n{i:03d}", {}, [], alloc, used))
        return out

    existing = nodes()
    pods = [PodView({"metadata": {"name": f"p{i}", "namespace": "default", "uid": f"p{i}"},
                     "spec": {"containers": [{"name": "c", "resources": {"requests": {
                         "cpu": f"{rng.choice((50, 250, 500, 1000, 3000))}m", "memory": f"{rng.choice((64, 512, 2048))}Mi"}}}]}},
                    i) for i in range(300)]
    placed = Scheduler([template], existing, profile, sem).solve(pods).existing
    monkeypatch.setattr(scheduling, "ROOM_BLOCK", 10_000)
    walked = Scheduler([template], existing, profile, sem).solve(pods).existing
    assert placed == walked and len(placed) > 50


@pytest.mark.parametrize("cap", [60, 600])
def test_a_nodeclaim_keeps_max_instance_types_cheapest(cap):
    """core-behaviour.yaml maxInstanceTypes: Results.TruncateInstanceTypes keeps a NodeClaim's `cap` cheapest
    types (sigs.k8s.io/karpenter v1.6.2 nodeclaimtemplate.go MaxInstanceTypes = 60, v1.7.0 600, #2430); the
    switch is read only for a NodeClaim with more types than 60."""
    from fakeazure.catalog import synthetic_prices, synthetic_skus
    from harness.model.azure.instancetypes import ClusterParams, NodeClassParams, build_instance_types
    profile, sem, _ = synthetic_world()
    skus = synthetic_skus(90, seed=42, region="eastus")
    its = list(build_instance_types(skus, NodeClassParams(image_family="Ubuntu2204"), ClusterParams(region="eastus"),
                                    profile, prices=synthetic_prices(skus, seed=42)))
    nodepool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default", "uid": "default"},
                "spec": {"template": {"spec": {
                    "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"}}}}}
    template = Template.from_nodepool(nodepool, its, profile, sem)
    reads = []

    def max_instance_types() -> int:
        reads.append(cap)
        return cap
    claims = Scheduler([template], [], profile, sem, max_instance_types=max_instance_types).solve(
        [pod(0, "p", "100m", {})]).new_claims
    assert len(claims) == 1 and reads == [cap]
    kept = len(claims[0].instance_types)
    assert kept == 60 if cap == 60 else kept > 60


def test_max_instance_types_is_not_read_for_60_types_or_fewer(world):
    profile, sem, template = world
    reads = []
    Scheduler([template], [], profile, sem, max_instance_types=lambda: reads.append(1) or 60).solve(
        [pod(0, "p", "100m", {})])
    assert reads == []
