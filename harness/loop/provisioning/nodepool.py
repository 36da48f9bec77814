"""NodePool status: core's nodepool validation and readiness controllers.

- validation (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodepool/validation/controller.go
  Reconcile): the runtime validation the CRD schema cannot express sets ValidationSucceeded
  (harness/model/crd/validation.py runtime_validation_error).
- readiness (pkg/controllers/nodepool/readiness/controller.go Reconcile): NodeClassReady=False with
  reason NodeClassNotFound when the referenced AKSNodeClass is missing, or with the class's own
  Ready reason when the provider's status controllers hold it back (harness/model/crd/aksnodeclass.py
  not_ready: FIPS without SIG images).
Only Ready NodePools without spec.replicas take part in provisioning (core
pkg/controllers/provisioning/provisioner.go NewScheduler: static NodePools (`nodepoolutils.IsStatic`)
and NodePools not Ready are filtered out; sigs.k8s.io/karpenter v1.14.0
pkg/controllers/provisioning/scheduling/scheduler.go NewScheduler).
"""
from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING

from harness.backends.base import KARPENTER, APIRejected
from harness.loop.azure.drift import launch_facts
from harness.loop.disruption.budgets import disruption_spec
from harness.loop.result import NodePoolResult
from harness.model.crd import aksnodeclass
from harness.model.azure import instancetypes as itmod
from harness.model.crd.apiversions import FOREIGN_NODECLASS, foreign_nodeclass
from harness.model.crd.validation import runtime_validation_error
from harness.model.labels.requirements import Requirements

if TYPE_CHECKING:
    from harness.loop.state import LoopState

# core readiness/controller.go Reconcile: SetFalse(NodeClassReady, "NodeClassNotFound", ...)
NODECLASS_NOT_FOUND = "NodeClass not found on cluster"


class NodePoolStatus:
    """Writes each NodePool's ValidationSucceeded, NodeClassReady and Ready conditions and mirrors
    them on its NodePoolResult."""

    def __init__(self, state: LoopState):
        self.state = state

    def reconcile(self) -> None:
        s = self.state
        for np in s.cluster.list("NodePool"):
            name = np["metadata"]["name"]
            res = s.result.nodepools.setdefault(name, NodePoolResult(name))
            foreign, known = foreign_nodeclass(np), res.unmanaged
            res.unmanaged = foreign
            if foreign:                     # not this provider's: core writes none of its conditions
                if foreign != known:
                    s.trace(f"NodePool {name}: not managed (its nodeClassRef names {foreign}): {FOREIGN_NODECLASS}")
                res.ready = False
                continue
            err = runtime_validation_error(np, s.profile)
            take_sizes(s, np)
            ref = ((np.get("spec") or {}).get("template") or {}).get("spec", {}).get("nodeClassRef") or {}
            nodeclass = s.cluster.get("AKSNodeClass", ref.get("name", ""), shared=True) if ref.get("name") else None
            # NodeClassReady as readiness/controller.go sets it: NodeClassNotFound, or (setReadyCondition)
            # the AKSNodeClass's own Ready reason/message when its status controllers hold it back
            class_ok, class_reason, class_message = True, "NodeClassReady", ""
            held = None
            if nodeclass is None:
                class_ok, class_reason, class_message = False, "NodeClassNotFound", NODECLASS_NOT_FOUND
            else:
                held = aksnodeclass.not_ready(nodeclass.get("spec") or {}, s.cfg.cluster.use_sig,
                                              bool(s.profile.provider.get("fipsRequiresSIG")))
                if held is not None:
                    class_ok, class_reason, class_message = False, "UnhealthyDependents", f"{held[0]}=False"
            if s.decisions.enabled:
                why_facts(s, np, ref.get("name", ""), nodeclass, held)
            if err:
                res.stage, res.message, res.ready = "runtime", err, False
            else:
                res.ready = class_ok
                if not class_ok:
                    # the harness records the condition change as an event on the NodePool
                    s.nodepool_event(res, class_reason, class_message, dedupe=nodeclass is not None)
                    why = (f'AKSNodeClass "{ref.get("name")}" not found' if held is None else
                           f'AKSNodeClass "{ref.get("name")}" not ready ({held[0]}={held[1]}: {held[2]})')
                    s.trace(f"NodePool {name}: {why} ({class_reason})")
            conditions = [
                s.condition("ValidationSucceeded", not err, "NodePoolValidationFailed" if err else
                            "ValidationSucceeded", err or ""),
                s.condition("NodeClassReady", class_ok, class_reason, class_message),
                s.condition("Ready", res.ready, "Ready" if res.ready else "NotReady"),
            ]
            np["status"] = {"conditions": conditions}
            try:
                s.cluster.update_status(np, KARPENTER)
            except APIRejected:
                pass


def take_sizes(s: LoopState, np: dict) -> None:
    """The NodePool's requirements, as what may take a size (harness/model/upstream/factreads.py
    ProviderReads.take): every NodePool of the run, as each of its specs was."""
    take_terms(s, ((np.get("spec") or {}).get("template") or {}).get("spec", {}).get("requirements") or [])


def take_terms(s: LoopState, terms: list) -> None:
    """Requirements as node selector terms (a NodePool's, a NodeClaim's), as what may take a size; each text once."""
    text = json.dumps(terms, sort_keys=True)
    if text not in s.provider.fact_reads.takers:
        s.provider.fact_reads.take(text, Requirements.from_node_selector_terms(terms, s.sem))


def why_facts(s: LoopState, np: dict, ref: str, nodeclass: dict | None, held) -> None:
    """What `--why` says of a NodePool and its AKSNodeClass beside the decision record (RunResult.why_facts):
    the AKSNodeClass it names, its budgets as read now, and of the AKSNodeClass its readiness and, at each
    change of its spec, the hash annotations a NodeClaim launched from it gets (azuredrift.launch_facts)."""
    facts = s.result.why_facts
    facts.setdefault("nodepools", {})[np["metadata"]["name"]] = {
        "nodeclass": ref, "budgets": [dict(b) for b in disruption_spec(np).budgets], "at": s.clock.now()}
    if nodeclass is None:
        return
    entry = facts.setdefault("nodeclasses", {}).setdefault(ref, {"hashes": []})
    entry["ready"] = held is None
    entry["held"] = list(held) if held is not None else None
    spec = nodeclass.get("spec") or {}
    if entry.get("spec") != spec:         # (not its resourceVersion: the store's counter outlives a run)
        entry["spec"] = copy.deepcopy(spec)
        entry["hashes"].append([s.clock.now(), launch_facts(nodeclass, s.cfg.cluster, s.profile)["annotations"]])


def is_static(np: dict) -> bool:
    """nodepoolutils.IsStatic (sigs.k8s.io/karpenter v1.14.0 pkg/utils/nodepool/nodepool.go): spec.replicas is
    set, 0 too (the provisioner leaves such a NodePool out whether or not the StaticCapacity gate is on)."""
    return (np.get("spec") or {}).get("replicas") is not None


def ready_nodepools(state: LoopState, shared: bool = False) -> list[dict]:
    """The NodePools a provisioning pass uses: Ready ones; static ones (spec.replicas) are skipped.
    `shared`: the stored objects themselves, for a caller that only reads them (EmbeddedCluster.list)."""
    out = []
    for np in state.cluster.list("NodePool", shared=shared):
        res = state.result.nodepools.get(np["metadata"]["name"])
        # a NodePool being deleted is ignored (core v1.14.0 provisioner.go NewScheduler)
        if (res and res.ready and not is_static(np)
                and not np["metadata"].get("deletionTimestamp")):
            out.append(np)
    return out


def nodeclass_params(state: LoopState, name: str) -> "itmod.NodeClassParams | None":
    """The named AKSNodeClass's parameters, or None when it does not exist."""
    obj = state.cluster.get("AKSNodeClass", name, shared=True) if name else None     # read only
    return itmod.NodeClassParams.from_manifest(obj) if obj else None
