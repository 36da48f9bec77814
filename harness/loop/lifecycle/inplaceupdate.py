"""The provider's in-place update of AKS machines: when a NodeClaim's in-place update hash is not the one its
AKSNodeClass's tags give now (a spec.tags change, which drifts no node from v1.6.2), the machine's tags are made
current with a PUT of the machine, and the hash annotation moved.

Upstream: github.com/Azure/karpenter-provider-azure v1.14.0 pkg/controllers/nodeclaim/inplaceupdate/controller.go
Reconcile (registered, not deleting NodeClaims; processAKSMachineInstance), patch.go patchAKSMachineTags, the same
from v1.7.0. The VM path's update (its identities and tags, a VM PATCH) is not simulated: the VM carries no
AKSNodeClass tags here.
"""
from __future__ import annotations

from harness.backends.base import KARPENTER, APIRejected
from harness.loop.azure.machinetags import INPLACE_UPDATE_HASH, inplace_update_hash, machine_tags
from harness.loop.state import LoopState

NODEPOOL = "karpenter.sh/nodepool"


class InPlaceUpdate:
    def __init__(self, state: LoopState):
        self.state = state

    def reconcile(self) -> bool:
        """One pass over the AKS machines' NodeClaims; True when a machine or a NodeClaim changed."""
        s = self.state
        progress = False
        for c in s.claims:
            if c.done or c.launched is None or not c.launched.machine_name or not c.registered \
                    or c.dis.deleting_since is not None:
                continue
            nodeclass = s.cluster.get("AKSNodeClass", c.nodeclass_name) if c.nodeclass_name else None
            if nodeclass is None:
                continue          # resolving AKSNodeClass failed: the reconcile's error
            meta = c.obj["metadata"]
            tags = (nodeclass.get("spec") or {}).get("tags")
            nodepool = (meta.get("labels") or {}).get(NODEPOOL)
            goal = inplace_update_hash(s.cfg.cluster.cluster_name, tags, nodepool)
            have = (meta.get("annotations") or {}).get(INPLACE_UPDATE_HASH)
            if goal == have:
                continue
            want = machine_tags(s.cfg.cluster.cluster_name, tags, nodepool, c.result.name)
            if not s.provider.update_machine_tags(c.launched.machine_name, want):
                continue
            meta["annotations"] = {**(meta.get("annotations") or {}), INPLACE_UPDATE_HASH: goal}
            try:
                c.obj = s.cluster.update(c.obj, KARPENTER)
            except APIRejected as e:
                s.trace(f"NodeClaim {c.result.name} update refused: {e.message}")
            s.trace(f"in-place update of AKS machine {c.launched.machine_name}: tags {want}")
            s.decide("nodeclaim.inplaceupdate", "machine-updated", f"NodeClaim/{c.result.name}",
                     f"its AKSNodeClass's tags changed (in-place update hash {have} -> {goal}): AKS machine "
                     f"{c.launched.machine_name} updated in place with them, no drift",
                     (f"AKSNodeClass/{c.nodeclass_name}",), {"tags": want})
            progress = True
        return progress
