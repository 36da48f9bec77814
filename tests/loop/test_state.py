"""harness/loop/state.py: what every controller shares."""
from __future__ import annotations

import random

from harness.loop.result import NodePoolResult, NodeResult, PodResult
from tests.loop.loopkit import pod, simulation


def test_generated_names_come_from_the_seeded_stream(embedded):
    with simulation(embedded, seed=7) as a:
        first = [a.state.name("web-") for _ in range(3)]
    with simulation(embedded, seed=7) as b:
        assert [b.state.name("web-") for _ in range(3)] == first
    rng = random.Random(7)
    assert first[0] == "web-" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(5))


def test_pod_events_are_recorded_once_on_the_pod_and_the_run(embedded):
    with simulation(embedded) as sim:
        s = sim.state
        pr = PodResult("web", "default", "", "")
        s.pod_event(pr, "Failed to schedule pod, x")
        s.pod_event(pr, "Failed to schedule pod, x")
        assert pr.events == ["Failed to schedule pod, x"]
        assert s.result.events == [{"kind": "Pod", "name": "web", "reason": "FailedScheduling",
                                    "message": "Failed to schedule pod, x", "namespace": "default",
                                    "t": s.clock.now()}]


def test_nodepool_events_dedupe_unless_told_not_to(embedded):
    with simulation(embedded) as sim:
        s = sim.state
        res = NodePoolResult("default")
        s.nodepool_event(res, "R", "m")
        s.nodepool_event(res, "R", "m")
        s.nodepool_event(res, "R", "m", dedupe=False)
        assert res.events == [{"reason": "R", "message": "m"}] * 2
        assert [e["kind"] for e in s.result.events] == ["NodePool", "NodePool"]


def test_condition_carries_every_field_the_crds_require(embedded):
    with simulation(embedded) as sim:
        c = sim.state.condition("Ready", False, "NotReady")
        assert c == {"type": "Ready", "status": "False", "reason": "NotReady", "message": "",
                     "lastTransitionTime": "2026-01-01T00:00:00Z"}


def test_label_provenance_appends_per_key():
    from harness.loop.state import LoopState
    nr = NodeResult("n", 0, "c", "default", "Standard_D2s_v3", "1", "on-demand", "n")
    LoopState.write(nr, "kubelet", {"a": "1"})
    LoopState.write(nr, "karpenter-core", {"a": "2"}, False, "refused")
    assert [(w.writer, w.value, w.accepted, w.note) for w in nr.provenance["a"]] == [
        ("kubelet", "1", True, ""), ("karpenter-core", "2", False, "refused")]


def test_create_pod_tracks_order_and_binds_when_given_a_node(embedded):
    with simulation(embedded) as sim:
        s = sim.state
        s.create_pod(pod("a", "250m"), "", "")
        s.create_pod(pod("b", "500m"), "DaemonSet", "ds", node="n1")
        assert [v.order for v in s.pod_views.values()] == [1, 2]
        assert (s.result.pods["default/a"].node, s.result.pods["default/a"].state) == (None, "pending")
        assert (s.result.pods["default/b"].node, s.result.pods["default/b"].state) == ("n1", "scheduled")
        assert s.node_requested({"n1", "n2"}) == {"n1": {"cpu": 500, "pods": 1}}
        assert (s.on_node, s.pods_on("n1"), list(s.unbound)) == ({"n1": {"default/b": None}}, ["default/b"], ["default/a"])


def test_the_pods_on_a_node_follow_binds_deletions_and_recreations_in_the_runs_order(embedded):
    """`on_node` follows place_pod: a bind, a deletion and a pod of an old name created again, which keeps its
    first place in the run's pods (result.pods), so `pods_on` lists it there."""
    with simulation(embedded) as sim:
        s = sim.state
        for name in ("a", "b", "c"):
            s.create_pod(pod(name, "100m"), "", "")
        s.place_pod("default/c", "n1")
        s.place_pod("default/a", "n1")
        assert s.pods_on("n1") == ["default/a", "default/c"] and list(s.unbound) == ["default/b"]
        s.delete_pod("default/a", "gone")
        assert s.pods_on("n1") == ["default/c"] and s.result.pods["default/a"].node is None
        s.create_pod(pod("a", "100m"), "", "", node="n1")
        assert s.pods_on("n1") == ["default/a", "default/c"]
        s.place_pod("default/c", None)
        assert (s.pods_on("n1"), s.pods_on("n2")) == (["default/a"], [])


def test_pods_created_in_one_second_queue_in_a_seeded_uid_order(embedded):
    """Core's queue breaks a tie of CPU and memory by creationTimestamp (whole seconds), then by the
    random UID (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/queue.go
    byCPUAndMemoryDescending): within a second the order is the seed's, across seconds creation's."""
    def order(seed: int) -> list[str]:
        with simulation(embedded, seed=seed) as sim:
            s = sim.state
            for i in range(6):
                s.create_pod(pod(f"p{i}", cpu="1"), "", "")
            s.clock.advance(1)
            s.create_pod(pod("later", cpu="1"), "", "")
            views = sorted(s.pod_views.values(), key=lambda v: v.queue_key)
            return [v.name for v in views]
    orders = {tuple(order(seed)) for seed in range(8)}
    assert len(orders) > 1                                   # the tie is random, under the seed
    assert all(o[-1] == "later" for o in orders)             # a later second always queues after
    assert order(3) == order(3)                              # and a seed replays it
