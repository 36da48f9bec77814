"""harness/loop/lifecycle/launch.py: core's NodeClaim launch through the Azure provider."""
from __future__ import annotations

from harness.loop.lifecycle.liveness import LAUNCH_TIMEOUT
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


def test_a_vm_failing_after_the_create_returned_is_deleted_by_the_provider_from_v1_4(embedded):
    """release-probes.yaml provider.asyncProvisioning: from provider v1.4 Create returns once the VM PUT is
    accepted and the provider deletes the NodeClaim when the VM fails later (async_provisioning); v0.7.5 waits
    for the VM and core retries the error."""
    for profile, deleted in (("v1.4.1", True), ("v0.7.5", False)):
        with simulation(embedded, profile=profile) as sim:
            sim.fake.add_fault({"code": "InternalServerError", "delivery": "async", "match": {"operation": "vm.create"}})
            sim.apply([{**nodeclass(), "apiVersion": "karpenter.azure.com/v1alpha2"}, nodepool(), pod("web")])
            sim.validate_nodepools()
            sim.provisioner.reconcile()
            (c,) = sim.claims
            assert sim.launch.reconcile()
            assert c.result.failure and c.launched is None
            assert (c.done, c.result.deleted) == ((True, "async_provisioning") if deleted else (False, None)), profile
            assert sim.fake.snapshot()["vms"] == []


def test_a_retry_that_fails_as_before_is_no_change(embedded):
    """Core retries a Create that failed with an unclassified error; one that fails with the same reason and
    message (whatever zone the provider tried) changes nothing observable, so it is no progress and the claim
    is named as repeating; a different error is a change again."""
    with simulation(embedded) as sim:
        c = _provisioned(sim)
        sim.fake.add_fault({"code": "RequestDisallowedByPolicy", "match": {"operation": "vm.create"}})
        assert sim.launch.reconcile()                                  # the first failure: a change
        assert not sim.launch.reconcile() and not sim.launch.reconcile()
        assert [x.result.name for x in sim.launch.repeating()] == [c.result.name]
        assert sim.launch.retried[c.result.name] == 2 and len(c.result.failures) == 3
        assert c.result.failures[0]["reason"] == "CreateInstanceFailed" and not c.done
        sim.fake.clear_faults()
        sim.fake.add_fault({"code": "InternalServerError", "match": {"operation": "vm.create"}})
        assert sim.launch.reconcile() and sim.launch.retried[c.result.name] == 2    # another error: a change
        sim.fake.clear_faults()
        assert sim.launch.reconcile() and c.launched is not None and not sim.launch.repeating()


def test_a_header_batch_round_creates_its_machines_with_one_put(embedded):
    """aksmachineapiheaderbatch: the round's creates wait for their batch (PendingMachine), one PUT sends them all,
    then each NodeClaim launches with its own machine."""
    from harness.loop.azure.provider import request_log
    from tests.loop.loopkit import MACHINE_API
    batch = MACHINE_API.replace("provisionMode: aksmachineapi", "provisionMode: aksmachineapiheaderbatch")
    with simulation(embedded, scenario=batch) as sim:
        sim.apply([nodeclass(), nodepool(), pod("a", cpu="3"), pod("b", cpu="3")])
        sim.validate_nodepools()
        sim.provisioner.reconcile()
        assert len(sim.claims) == 2 and sim.launch.reconcile()
        assert all(c.launched is not None and c.launched.machine_name for c in sim.claims)
        puts = [q for q in request_log(sim.fake) if q["operation"] == "machine.create"]
        assert len(puts) == 1 and "tags" not in puts[0]["body"]["properties"]
