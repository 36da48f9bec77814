"""harness/loop/kube/binding.py: kube-scheduler binds pending pods to Nodes."""
from __future__ import annotations

from harness.loop.kube.binding import scheduler_message
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


def _labeled(name, labels, **spec):
    p = pod(name, **spec)
    p["metadata"]["labels"] = labels
    return p


def test_the_first_pod_of_a_pass_is_filtered_by_affinity_too(embedded):
    """issue 22: the stand-in skipped InterPodAffinity for the first pod it bound in a pass. A required
    affinity that no pod anywhere matches, on a pod that does not match its own term, keeps it pending
    (k8s.io/kubernetes v1.36.3 pkg/scheduler/framework/plugins/interpodaffinity/filtering.go
    satisfyPodAffinity allows the first pod only when it matches its own terms)."""
    term = {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "db"}}}
    with simulation(embedded) as sim:
        c = _registered(sim, pod("web"))
        sim.state.create_pod(_labeled("lonely", {"app": "web"},
                                      affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}),
                             "", "")
        sim.state.create_pod(_labeled("self", {"app": "db"},
                                      affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}),
                             "", "")
        sim.kube_scheduler.reconcile()
        assert sim.result.pods["default/lonely"].node is None
        assert sim.result.pods["default/lonely"].scheduler_error == (
            "0/1 nodes are available: 1 node(s) didn't match pod affinity rules.")
        assert sim.result.pods["default/self"].node == c.node_name


def test_min_domains_keeps_the_global_minimum_at_zero(embedded):
    """issue 22: minDomains was ignored by the stand-in. With one zone known and minDomains 2 the global
    minimum is 0, so a second matching pod in that zone exceeds maxSkew 1 (podtopologyspread/filtering.go
    minMatchNum)."""
    tsc = {"maxSkew": 1, "minDomains": 2, "topologyKey": "topology.kubernetes.io/zone",
           "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}
    with simulation(embedded) as sim:
        c = _registered(sim, pod("filler"))
        for name in ("first", "second"):
            sim.state.create_pod(_labeled(name, {"app": "web"}, topologySpreadConstraints=[tsc]), "", "")
        sim.kube_scheduler.reconcile()
        assert sim.result.pods["default/first"].node == c.node_name
        assert sim.result.pods["default/second"].node is None
        assert "didn't match pod topology spread constraints" in sim.result.pods["default/second"].scheduler_error


def _first_bound(embedded, seed: int, nodes_ready: str) -> str:
    """Two pods pending where one fits: which one kube-scheduler binds."""
    with simulation(embedded, seed=seed) as sim:
        sim.cfg.nodes_ready = nodes_ready
        c = _registered(sim, pod("web", "100m"))
        sim.kube_scheduler.reconcile()
        sim.apply([pod("p1", "1200m"), pod("p2", "1200m")])
        sim.kube_scheduler.reconcile()
        (bound,) = [k for k in ("default/p1", "default/p2") if sim.result.pods[k].node == c.node_name]
        return bound


def test_the_queue_is_in_creation_order_unless_nodes_turn_ready_one_at_a_time(embedded):
    """kube-scheduler takes pods of equal priority by when each was last queued (its retries' timing,
    which the loop does not have): creation order by default, a seeded order in the staggered race
    (fuzz-62d93f468d: a pod Karpenter planned nowhere took the room it planned for another)."""
    assert {_first_bound(embedded, seed, "together") for seed in range(1, 7)} == {"default/p1"}
    assert {_first_bound(embedded, seed, "staggered") for seed in range(1, 7)} == {"default/p1", "default/p2"}
