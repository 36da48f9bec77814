"""harness/loop/lifecycle/podevents.py: a controller restart (given.restrict) relists every pod, and core's
podevents stamps each NodeClaim with a pod on its Node anew (sigs.k8s.io/karpenter v1.14.0
pkg/controllers/nodeclaim/podevents/controller.go: its event filter screens updates only)."""
from __future__ import annotations

from harness.loop.clock import EPOCH
from harness.loop.seed import seed_existing_nodes
from tests.loop.loopkit import nodeclass, nodepool, pod, simulation


def test_a_restart_stamps_each_nodeclaim_with_a_pod_unless_within_the_dedupe(embedded):
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        entry = {"nodePool": "default", "instanceType": "Standard_D2s_v3"}
        seed_existing_nodes(sim, [
            {**entry, "lastPodEventTime": "2025-12-31T06:00:00Z", "pods": [pod("old")]},
            {**entry, "lastPodEventTime": "2025-12-31T23:59:55Z", "pods": [pod("recent")]},     # 5 s before
            {**entry, "lastPodEventTime": "2025-12-31T06:00:00Z"},                             # no pod
            {**entry, "lastPodEventTime": "2025-12-31T06:00:00Z", "pods": [_daemonset_pod("ds")]}])
        sim.podevents.relisted()
        assert [c.dis.last_pod_event for c in sim.claims] == [EPOCH, EPOCH - 5, EPOCH - 18 * 3600, EPOCH - 18 * 3600]


def _daemonset_pod(name: str) -> dict:
    p = pod(name)
    p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                                         "uid": "u-ds", "controller": True}]
    return p
