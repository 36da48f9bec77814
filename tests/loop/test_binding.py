"""harness/loop/controllers/binding.py: kube-scheduler binds pending pods to Nodes."""
from __future__ import annotations

from harness.loop.controllers.binding import scheduler_message
from tests.loop.loopkit import launched, pod, simulation


def _registered(sim, *pods):
    c = launched(sim, *pods)
    sim.registration.kubelet_register(c)
    sim.registration.register(c)
    return c


def test_summary_counts_and_sorts_reasons():
    assert scheduler_message(0, []) == "no nodes available to schedule pods"
    assert scheduler_message(3, ["Insufficient cpu", "node(s) had untolerated taint", "Insufficient cpu"]) == (
        "0/3 nodes are available: 2 Insufficient cpu, 1 node(s) had untolerated taint.")


def test_no_node_leaves_the_pod_pending_with_the_no_nodes_message(embedded):
    with simulation(embedded, [pod("web")]) as sim:
        assert not sim.kube_scheduler.reconcile()
        pr = sim.result.pods["default/web"]
        assert (pr.node, pr.scheduler_error) == (None, "no nodes available to schedule pods")


def test_binds_to_the_nominated_nodeclaims_node_and_counts_requests(embedded):
    with simulation(embedded) as sim:
        c = _registered(sim, pod("web", "500m"))
        assert sim.kube_scheduler.reconcile()
        pr = sim.result.pods["default/web"]
        assert (pr.node, pr.state, pr.scheduler_error) == (c.node_name, "scheduled", None)
        assert sim.cluster.get("Pod", "web", "default")["spec"]["nodeName"] == c.node_name
        assert any(f"kube-scheduler bound default/web to {c.node_name}" in t for t in sim.result.trace)
        assert not sim.kube_scheduler.reconcile()          # nothing left to bind


def test_a_pod_that_fits_no_node_gets_the_fit_error(embedded):
    with simulation(embedded) as sim:
        c = _registered(sim, pod("web"))
        sim.state.create_pod(pod("huge", "64"), "", "")
        sim.kube_scheduler.reconcile()
        pr = sim.result.pods["default/huge"]
        assert pr.node is None
        assert pr.scheduler_error == "0/1 nodes are available: 1 Insufficient cpu."
        assert sim.result.pods["default/web"].node == c.node_name
