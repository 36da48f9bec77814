"""kube-scheduler's side of the loop: bind each pending pod to the first Node that fits.

The filters are harness/loop/kubescheduler.py (NodeResourcesFit, TaintToleration, NodeAffinity,
InterPodAffinity, PodTopologySpread; kubernetes v1.36.3 pkg/scheduler/framework/plugins) and the
VolumeBinding filter of harness/loop/volumes.py. A pod nominated for a NodeClaim tries that
NodeClaim's Node first (harness simplification of the scheduler's nominatedNodeName preference,
kubernetes pkg/scheduler/schedule_one.go evaluateNominatedNode). After a bind the CSI
external-provisioner provisions the pod's WaitForFirstConsumer volumes.
"""
from __future__ import annotations

from harness.backends.base import ADMIN
from harness.loop.controllers.state import LoopState
from harness.loop.kubescheduler import can_bind
from harness.model.resources import add


class KubeScheduler:
    """One scheduling pass over the pending pods, in creation order."""

    def __init__(self, state: LoopState):
        self.state = state

    def reconcile(self) -> bool:
        s = self.state
        progress = False
        nodes = sorted(s.cluster.list("Node"), key=lambda n: n["metadata"]["name"])
        used = s.node_requested()
        placed = [(pv, s.result.pods[k].node) for k, pv in s.pod_views.items() if s.result.pods[k].node]
        for key, pv in sorted(s.pod_views.items(), key=lambda kv: kv[1].order):
            pr = s.result.pods[key]
            if pr.node or pr.state == "ignored" and not nodes:
                continue
            nominated = s.nominated.get(key)
            claim = s.claim_by_name(nominated) if nominated else None
            preferred = [n for n in nodes if claim is not None and claim.node_name == n["metadata"]["name"]]
            reasons = []
            for node in preferred + [n for n in nodes if n not in preferred]:
                why = can_bind(pv, node, used.get(node["metadata"]["name"], {}), nodes, placed)
                if why is None and (s.volumes or pv.spec.get("volumes")):
                    why = s.volumes.bind_error(pv.obj, node["metadata"].get("labels") or {})
                if why is None:
                    name = node["metadata"]["name"]
                    s.cluster.bind(pv.obj, name, ADMIN)
                    placed.append((pv, name))
                    pr.node, pr.state, pr.scheduler_error = name, "scheduled", None
                    used[name] = add(used.get(name, {}), pv.requests)
                    s.trace(f"kube-scheduler bound {key} to {name}")
                    for made in s.volumes.provision_for(pv.obj, node["metadata"].get("labels") or {}):
                        s.trace(f"CSI provisioner created PersistentVolume {made} for {key} on {name}")
                    progress = True
                    break
                reasons.append(why)
            else:
                pr.scheduler_error = scheduler_message(len(nodes), reasons)
        return progress


def scheduler_message(n_nodes: int, reasons: list[str]) -> str:
    """kube-scheduler's FailedScheduling summary, e.g. '0/2 nodes are available: 2 Insufficient cpu.'
    (kubernetes v1.36.3 pkg/scheduler/framework/types.go FitError.Error; with no Node,
    pkg/scheduler/scheduler.go ErrNoNodesAvailable)."""
    if n_nodes == 0:
        return "no nodes available to schedule pods"
    counts: dict[str, int] = {}
    for r in reasons:
        counts[r] = counts.get(r, 0) + 1
    parts = ", ".join(f"{n} {r}" for r, n in sorted(counts.items()))
    return f"0/{n_nodes} nodes are available: {parts}."
