"""harness/loop/lifecycle/garbagecollection.py: NodeClaims whose VM is gone, and their pods."""
from __future__ import annotations

from harness.loop.azure.provider import INSTANCE_GC_GRACE
from harness.loop.lifecycle.garbagecollection import GC_INTERVAL
from tests.loop.loopkit import MACHINE_API, deployment, nodeclass, nodepool, pod, simulation


def _running(sim):
    """Provision, launch, register, initialize and bind everything applied so far."""
    for _ in range(2):
        sim.provisioner.reconcile()
        sim.launch.reconcile()
        for c in sim.claims:
            if not c.node_name:
                sim.registration.kubelet_register(c)
            if not c.registered:
                sim.registration.register(c)
            if not c.initialized:
                sim.initialization.initialize(c)
        sim.kube_scheduler.reconcile()


def _vanish(sim, c):
    """The VM is deleted behind Karpenter's back (an operator, or a spot eviction)."""
    sim.provider.compute.virtual_machines.begin_delete(sim.provider.rg, c.launched.vm_name).result()


def test_a_vanished_vm_deletes_its_claim_and_replaces_deployment_pods(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), deployment("web", replicas=1), pod("bare")]) as sim:
        _running(sim)
        (c,) = sim.claims
        assert all(pr.node == c.node_name for pr in sim.result.pods.values())
        (old,) = [k for k, pr in sim.result.pods.items() if pr.owner_kind == "Deployment"]
        assert not sim.gc.reconcile()              # first round: every VM is there
        _vanish(sim, c)
        assert not sim.gc.reconcile()              # within the interval: not yet
        sim.clock.advance(GC_INTERVAL)
        assert sim.gc.reconcile()
        assert (c.done, c.result.deleted) == (True, "instance terminated")
        assert sim.cluster.get("Node", c.node_name) is None
        gone = sim.result.pods[old]
        assert (gone.state, gone.node, gone.reason) == ("deleted", None, f"node {c.node_name} was removed")
        assert sim.result.pods["default/bare"].state == "deleted"
        (new,) = [k for k, pr in sim.result.pods.items() if pr.owner_kind == "Deployment" and pr.state != "deleted"]
        assert new != old and sim.result.pods[new].node is None
        assert sim.pod_views[new].labels == {"app": "web"}
        assert "default/bare" not in sim.pod_views


def test_force_runs_a_round_inside_the_interval(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), pod("web")]) as sim:
        _running(sim)
        (c,) = sim.claims
        sim.gc.reconcile()
        _vanish(sim, c)
        assert sim.gc.reconcile(force=True)
        assert c.done


def test_nothing_launched_is_no_round(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), pod("web")]) as sim:
        calls = len(sim.fake.requests)
        assert not sim.gc.reconcile(force=True)
        assert len(sim.fake.requests) == calls


def test_an_aks_machine_node_goes_with_its_machine_not_its_vm(embedded):
    """cloudprovider.go List lists the AKS machines: the NodeClaim stays while its machine is listed (its VM gone
    or not), and is collected once the machine is gone."""
    with simulation(embedded, [nodeclass(), nodepool(), pod("web")], scenario=MACHINE_API) as sim:
        _running(sim)
        (c,) = sim.claims
        assert c.launched.machine_name
        _vanish(sim, c)                                     # the VM alone
        assert not sim.gc.reconcile(force=True) and not c.done
        sim.provider.aks.begin_delete([c.launched.machine_name]).result()
        assert sim.gc.reconcile(force=True)
        assert (c.done, c.result.deleted) == (True, "instance terminated")


def test_a_machine_a_failed_delete_left_is_collected_after_its_grace(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), pod("web")], scenario=MACHINE_API) as sim:
        _running(sim)
        (c,) = sim.claims
        name = c.launched.machine_name
        sim.fake.add_fault({"code": "InternalServerError", "status": 500, "match": {"operation": "machine.delete"},
                            "times": 4})
        sim.provider.delete_machine(name)                    # fails through the SDK's retries: left behind
        assert sim.provider.list_machine_names() == {name}
        sim.provider.collect_garbage(set())
        assert sim.provider.leftovers == {name}             # younger than the grace
        sim.clock.advance(INSTANCE_GC_GRACE + 1)
        sim.provider.collect_garbage(set())
        assert sim.provider.list_machine_names() == set() and not sim.provider.leftovers
