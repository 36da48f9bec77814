"""kube-scheduler's side of the loop: bind each pending pod to the first Node that fits.

The filters are harness/loop/kubescheduler.py (the default profile's filter plugins at kubernetes
v1.36.3, each pod's PreFilter state over all Nodes and the pods bound so far, including the ones
bound earlier in this pass) and the VolumeBinding filter of harness/loop/volumes.py. A pod nominated for a NodeClaim tries that
NodeClaim's Node first (harness simplification of the scheduler's nominatedNodeName preference,
kubernetes pkg/scheduler/schedule_one.go evaluateNominatedNode). After a bind the CSI
external-provisioner provisions the pod's WaitForFirstConsumer volumes.

With `given.loop.binding: nominated` a pod binds only to the Node of the NodeClaim Karpenter planned it
on, without filters, as Karpenter core's own tests bind (sigs.k8s.io/karpenter v1.14.0
pkg/test/expectations/expectations.go ExpectProvisioned sets pod.spec.nodeName from the scheduling
results): the ported core cases whose assertions are about Karpenter's plan, where a real
kube-scheduler would bind a later batch to the nodes that already exist.
"""
from __future__ import annotations

from harness.backends.base import ADMIN
from harness.loop.controllers.state import LoopState
from harness.loop.kubescheduler import Cycle, Snapshot
from harness.loop.topology import namespace_labels
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
        snap: Snapshot | None = None          # built for the first pod that needs it
        for key, pv in sorted(s.pod_views.items(), key=lambda kv: kv[1].order):
            pr = s.result.pods[key]
            if pr.node or pr.state == "ignored" and not nodes:
                continue
            if snap is None:
                placed = [(p, s.result.pods[k].node) for k, p in s.pod_views.items() if s.result.pods[k].node]
                snap = Snapshot(nodes, placed, namespace_labels(
                    s.cluster.list("Namespace"), ["default", *{p.namespace for p in s.pod_views.values()}]))
            nominated = s.nominated.get(key)
            claim = s.claim_by_name(nominated) if nominated else None
            # nominated to a NodeClaim (its Node), or to a Node Karpenter does not manage (by name)
            target = claim.node_name if claim is not None else nominated
            preferred = [n for n in nodes if target and n["metadata"]["name"] == target]
            if s.cfg.binding == "nominated":
                ready = [n for n in preferred if any(c.get("type") == "Ready" and c.get("status") == "True"
                                                     for c in (n.get("status") or {}).get("conditions") or [])]
                if ready:
                    self._bind(key, pv, ready[0], snap, used)
                    progress = True
                continue
            reasons: list[str] = []
            cycle = Cycle(pv, snap)
            for node in preferred + [n for n in nodes if n not in preferred]:
                why = cycle.filter(node, used.get(node["metadata"]["name"], {}))
                if not why and (s.volumes or pv.spec.get("volumes")):
                    v = s.volumes.bind_error(pv.obj, node["metadata"].get("labels") or {})
                    why = [v] if v else []
                if not why:
                    self._bind(key, pv, node, snap, used)
                    progress = True
                    break
                reasons.extend(why)
            else:
                pr.scheduler_error = scheduler_message(len(nodes), reasons)
        return progress

    def _bind(self, key: str, pv, node: dict, snap: Snapshot, used: dict) -> None:
        s = self.state
        name = node["metadata"]["name"]
        s.cluster.bind(pv.obj, name, ADMIN)
        snap.add(pv, name)
        pr = s.result.pods[key]
        pr.node, pr.state, pr.scheduler_error = name, "scheduled", None
        used[name] = add(used.get(name, {}), pv.requests)
        s.trace(f"kube-scheduler bound {key} to {name}")
        for made in s.volumes.provision_for(pv.obj, node["metadata"].get("labels") or {}):
            s.trace(f"CSI provisioner created PersistentVolume {made} for {key} on {name}")


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
