"""harness/loop/controllers/launch.py: core's NodeClaim launch through the Azure provider."""
from __future__ import annotations

from harness.loop.controllers.liveness import LAUNCH_TIMEOUT
from tests.loop.loopkit import nodeclass, nodepool, pod, simulation


def _provisioned(sim):
    sim.apply([nodeclass(), nodepool(), pod("web")])
    sim.validate_nodepools()
    sim.provisioner.reconcile()
    (c,) = sim.claims
    return c


def test_a_launch_populates_the_nodeclaim(embedded):
    with simulation(embedded) as sim:
        c = _provisioned(sim)
        assert sim.launch.reconcile()
        assert c.launched is not None and c.launched_at == sim.clock.now()
        obj = sim.cluster.get("NodeClaim", c.result.name)
        assert obj["status"]["providerID"] == c.launched.provider_id
        assert [(x["type"], x["status"]) for x in obj["status"]["conditions"]] == [("Launched", "True")]
        assert obj["status"]["capacity"]["cpu"]
        labels = obj["metadata"]["labels"]
        assert labels["node.kubernetes.io/instance-type"] == c.launched.instance_type.name
        assert labels["karpenter.sh/nodepool"] == "default"          # the NodeClaim's own label kept
        assert c.result.launched and c.result.labels == labels and c.result.failure is None
        assert c.launched.vm_name in {v["name"] for v in sim.fake.snapshot()["vms"]}
        assert not sim.launch.reconcile()                             # launched claims are left alone


def test_a_missing_nodeclass_is_insufficient_capacity_and_deletes_the_claim(embedded):
    with simulation(embedded) as sim:
        c = _provisioned(sim)
        c.nodeclass = None
        assert sim.launch.reconcile()
        assert c.result.failure["kind"] == "InsufficientCapacity"
        assert c.result.failure["reason"] == "NodeClassNotFound"
        assert c.done and c.result.deleted.startswith("insufficient capacity, resolving node class")
        assert sim.cluster.get("NodeClaim", c.result.name) is None
        assert sim.state.nominated == {}


def test_a_claim_not_launched_within_the_launch_timeout_is_deleted(embedded):
    with simulation(embedded) as sim:
        c = _provisioned(sim)
        sim.clock.advance(LAUNCH_TIMEOUT + 1)
        assert sim.launch.reconcile()
        assert (c.done, c.result.deleted, c.launched) == (True, "launch_timeout", None)
        assert sim.fake.snapshot()["vms"] == []


def test_a_claim_whose_requests_no_type_holds_is_insufficient_capacity(embedded):
    """resolveInstanceTypes keeps only a type whose allocatable holds the NodeClaim's requests
    (provider v1.14.0 pkg/cloudprovider/cloudprovider.go resources.Fits): a replacement that asks for more
    than its one cheaper type holds is never launched."""
    with simulation(embedded) as sim:
        c = _provisioned(sim)
        c.obj["spec"]["resources"]["requests"]["cpu"] = "3"       # more than Standard_D2s_v3 holds
        assert sim.launch.reconcile()
        assert c.launched.instance_type.name == "Standard_D4s_v3"
    with simulation(embedded) as sim:
        c = _provisioned(sim)
        c.obj["spec"]["resources"]["requests"]["cpu"] = "8"       # more than either holds
        assert sim.launch.reconcile()
        assert c.result.failure["kind"] == "InsufficientCapacity"
        assert c.result.deleted == "insufficient capacity, all requested instance types were unavailable during launch"
