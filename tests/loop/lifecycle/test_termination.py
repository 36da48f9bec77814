"""harness/loop/lifecycle/termination.py: deleting a NodeClaim, its VM and its Node."""
from __future__ import annotations

from tests.loop.loopkit import launched, pod, simulation


def test_delete_claim_removes_vm_nodeclaim_node_and_nominations(embedded):
    with simulation(embedded) as sim:
        c = launched(sim, pod("web"))
        sim.registration.kubelet_register(c)
        sim.registration.register(c)
        assert "karpenter.sh/termination" in sim.cluster.get("Node", c.node_name)["metadata"]["finalizers"]
        sim.termination.delete_claim(c, "why")
        assert (c.done, c.result.deleted) == (True, "why")
        assert sim.cluster.get("NodeClaim", c.result.name) is None
        assert sim.cluster.get("Node", c.node_name) is None            # finalizer lifted, delete done
        assert c.launched.vm_name not in {v["name"] for v in sim.fake.snapshot()["vms"]}
        assert sim.state.nominated == {}
        assert sim.result.trace[-1].endswith(f"deleted NodeClaim {c.result.name}: why")


def test_delete_of_an_unlaunched_claim_touches_no_vm(embedded):
    with simulation(embedded) as sim:
        from tests.loop.loopkit import nodeclass, nodepool
        sim.apply([nodeclass(), nodepool(), pod("web")])
        sim.validate_nodepools()
        sim.provisioner.reconcile()
        (c,) = sim.claims
        calls = len(sim.fake.requests)
        sim.termination.delete_claim(c, "gone")
        assert c.done and sim.cluster.get("NodeClaim", c.result.name) is None
        assert len(sim.fake.requests) == calls                     # no Azure call
