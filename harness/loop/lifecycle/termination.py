"""Deleting a NodeClaim: its instance, the NodeClaim object, and its Node.

Karpenter's termination (sigs.k8s.io/karpenter v1.14.0
pkg/controllers/nodeclaim/lifecycle/controller.go finalize: cloudProvider.Delete, then the finalizer;
pkg/controllers/node/termination/controller.go: the Node's karpenter.sh/termination finalizer goes
once the instance is gone;
sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodeclaim/lifecycle/registration.go). The harness runs it at once: drain
and the termination grace period are not
modeled. Pods nominated to the NodeClaim lose their nomination.
"""
from __future__ import annotations

from harness.backends.base import KARPENTER, APIRejected
from harness.loop.state import Claim, LoopState

TERMINATION_FINALIZER = "karpenter.sh/termination"     # core pkg/apis/v1 TerminationFinalizer


class Termination:
    def __init__(self, state: LoopState):
        self.state = state

    def delete_claim(self, c: Claim, why: str) -> None:
        """Delete `c` for reason `why` (launch_timeout, registration_timeout, an ICE message, ...)."""
        s = self.state
        c.done, c.result.deleted = True, why
        c.result.at["deleted"] = s.clock.now()
        if c.launched is not None:
            s.provider.delete(c.launched.vm_name)
        try:
            s.cluster.delete("NodeClaim", c.result.name, identity=KARPENTER)
        except APIRejected:
            pass
        if c.node_name:
            self.terminate_node(c.node_name)
        for k, n in list(s.nominated.items()):
            if n == c.result.name:
                del s.nominated[k]
        s.trace(f"deleted NodeClaim {c.result.name}: {why}")

    def terminate_node(self, name: str) -> None:
        """The Node carries the termination finalizer, so the delete only marks it; the finalizer
        is removed once the instance is gone."""
        s = self.state
        node, nr = s.cluster.get("Node", name), s.nodes.get(name)
        if node is not None and nr is not None:
            # the Node's last labels and taints stay in the result (a Node deleted within one settle
            # would otherwise keep none: Simulation._finish reads the Nodes that still exist)
            nr.labels = dict(node["metadata"].get("labels") or {})
            nr.taints = list((node.get("spec") or {}).get("taints") or [])
        try:
            s.cluster.delete("Node", name, identity=KARPENTER)
            node = s.cluster.get("Node", name)
            if node is not None and node["metadata"].get("finalizers"):
                node["metadata"]["finalizers"] = [f for f in node["metadata"]["finalizers"]
                                                  if f != TERMINATION_FINALIZER]
                s.cluster.update(node, KARPENTER)
        except APIRejected as e:
            s.trace(f"terminating Node {name}: {e.message}")
