"""A scenario step's actions: the one order every engine plays them in (ACTIONS), the actions that act on fake
Azure (`evict`, `restrict`), and steps that cannot apply. What the file alone decides is refused when it loads
(`harness.scenario.shapes.lifecycle_errors`: deleting what is not there, evicting a pod never applied, scaling a
Deployment never applied; `_restrict_errors`: restricting a size given.skus does not list); what depends on the
run (which nodes exist, whether the VM is Spot, the whole catalog's sizes, a kubectl verb's NotFound) fails the
run at the step, as a mismatch that names the step's `file:line` (StepFailed), never a traceback. The order's
reasons: docs/scenario-format.md (Steps).
"""
from __future__ import annotations

import re
from typing import Protocol

from fakeazure.arm import ARMError

from harness.loop.result import NodeResult
from harness.scenario.expect.match import Mismatch


# The order a step's actions are played in, on every engine, and the order the loader checks them in. First
# the step's instant (`advance`), then the controller's own process (`crash`: it is killed there and its pod
# restarts it, so what follows meets the new process), then the environment the controller works in (operator
# settings, Azure's faults and restrictions), then what it reacts to: a Spot eviction of a node as the run stands then, the
# user's kubectl verbs, the objects deleted, the objects applied. The real controller runs while a step plays, so
# what it reacts to lands after the environment it reacts in (a NodePool is marked deleting before the pod
# arrives in sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/suite_test.go "should ignore NodePools
# that are deleting"). The verbs go in a runbook's order: metadata first (a do-not-disrupt annotation or a label
# is in place before anything moves a pod), then a Node's schedulability (cordon, uncordon), then a drain (its
# evicted pods' replacements already see the cordons), then the workloads' new pods (scale, rollout restart),
# then deletes (`kubectl drain X; kubectl delete node X`).
ACTIONS: tuple[str, ...] = ("advance", "crash", "cluster", "faults", "restrict", "evict", "label", "annotate",
                            "cordon", "uncordon", "drain", "scale", "restart", "delete", "apply")
# the kubectl verbs on a Deployment or StatefulSet, and on any object's metadata (harness/loop/kube/kubectl.py)
DEPLOYMENT_VERBS = ("scale", "restart")
METADATA_VERBS = ("label", "annotate")
# the key of a scale or restart entry that names its workload, and the workload's kind
WORKLOAD_KEYS = {"deployment": "Deployment", "statefulset": "StatefulSet"}


def workload_of(entry: dict) -> tuple[str, str]:
    """(kind, name) of the workload a `scale` or `restart` entry names (the schema asks for one key of
    WORKLOAD_KEYS)."""
    key = next((k for k in WORKLOAD_KEYS if k in entry), "deployment")
    return WORKLOAD_KEYS[key], str(entry.get(key))


def actions(step: dict) -> list[str]:
    """The actions `step` holds, in ACTIONS order; an empty list or map is none (`advance: 0` is one)."""
    return [a for a in ACTIONS if step.get(a) is not None and step[a] != [] and step[a] != {}]


class StepActions(Protocol):
    """What an engine's run does for each action (`play` calls them in ACTIONS order)."""

    def step_advance(self, duration: str | float) -> None: ...

    def step_crash(self, what: str) -> None: ...

    def step_cluster(self, settings: dict) -> None: ...

    def step_faults(self, faults: list[dict]) -> None: ...

    def step_restrict(self, entries: list[dict]) -> None: ...

    def step_evict(self, ev: dict) -> None: ...

    def step_label(self, entries: list[dict]) -> None: ...

    def step_annotate(self, entries: list[dict]) -> None: ...

    def step_cordon(self, nodes: list[str]) -> None: ...

    def step_uncordon(self, nodes: list[str]) -> None: ...

    def step_drain(self, nodes: list[str]) -> None: ...

    def step_scale(self, entries: list[dict]) -> None: ...

    def step_restart(self, entries: list[dict]) -> None: ...

    def step_delete(self, refs: list[dict]) -> None: ...

    def step_apply(self, manifests: list[dict]) -> None: ...


def play(run: StepActions, step: dict, manifests: list[dict]) -> None:
    """Play `step`'s actions on `run`, in ACTIONS order; `apply` gets the step's manifests as loaded. A
    StepFailed leaves the step's later actions unplayed."""
    for action in actions(step):
        getattr(run, f"step_{action}")(manifests if action == "apply" else step[action])


def not_played(step: dict, failed: str) -> str:
    """What of `step` a failure at `failed` (an action, or `during`: before any) left unplayed, in words."""
    rest = actions(step)
    if failed in rest:
        rest = rest[rest.index(failed) + 1:]
    return f"this step's {', '.join(rest)} and later steps were not played" if rest else "later steps were not played"


class StepFailed(Exception):
    """A step the run's state does not allow; `key` is the step's field (`evict`, `evict.node`)."""

    def __init__(self, key: str, wanted: str, reason: str):
        super().__init__(reason)
        self.key, self.wanted, self.reason = key, wanted, reason

    def mismatch(self, scenario, i: int) -> Mismatch:
        path = ("steps", i) + tuple(self.key.split("."))
        return Mismatch(f"steps[{i}].{self.key}", self.wanted, self.reason,
                        f"the step cannot apply; {not_played(scenario.steps[i], path[2])}", scenario.doc.line(path))


def _nodes_there(nodes: list[NodeResult]) -> str:
    return "; ".join(f"[{n.index}] {n.name} ({n.capacity_type}, nodePool {n.nodepool})" for n in nodes) or "none"


def eviction_target(result, ev: dict) -> NodeResult:
    """The node an `evict` step names: `node` (launch-order index) or `pod` (the node it is bound to)."""
    nodes = result.nodes
    if "node" in ev:
        if ev["node"] >= len(nodes):
            raise StepFailed("evict.node", f"node {ev['node']}", f"the run has {len(nodes)} node(s): {_nodes_there(nodes)}")
        return nodes[ev["node"]]
    pods = result.pods_of(ev["pod"])
    bound = sorted({p.node for p in pods if p.node})
    if not bound:
        states = ", ".join(f"{p.name} {p.state}" + (f" ({p.reason})" if p.reason else "") for p in pods) or "no such pod"
        raise StepFailed("evict.pod", f"the node of pod {ev['pod']}", f"not bound to a node: {states}")
    if len(bound) > 1:
        raise StepFailed("evict.pod", f"the node of pod {ev['pod']}",
                         f"its pods are on {len(bound)} nodes ({', '.join(bound)}): name one with `node`")
    return next(n for n in nodes if n.name == bound[0])


def _resource_group(sim, node: NodeResult) -> str:
    """The VM's resource group, from its providerID (a `cluster` step may have moved the provider's
    own resource group since it launched)."""
    claim = next((c for c in sim.claims if c.result.name == node.nodeclaim), None)
    provider_id = getattr(claim.launched, "provider_id", "") if claim is not None and claim.launched else ""
    m = re.search(r"/resourceGroups/([^/]+)/", provider_id or "", re.IGNORECASE)
    return m.group(1) if m else sim.provider.rg


def evict(sim, fake, ev: dict) -> None:
    """Simulate the eviction of the node's VM (evict_vm)."""
    node = eviction_target(sim.result, ev)
    evict_vm(fake, _resource_group(sim, node), node)


def evict_vm(fake, resource_group: str, node: NodeResult) -> None:
    """Evict the node's VM, as Azure's POST .../virtualMachines/{vm}/simulateEviction does (fakeazure
    FakeAzure.evict); a VM that is gone or not Spot is the fake's ARM error, and the step fails with it."""
    try:
        fake.evict(resource_group, node.vm_name)
    except ARMError as e:
        raise StepFailed("evict", f"the eviction of VM {node.vm_name} (node {node.index}, {node.capacity_type})",
                         f"simulateEviction refused: ({e.code}) {e.message}") from None


def restrict(fake, entries: list[dict]) -> None:
    """A `restrict` step: each size is taken away from the subscription in the fake (FakeAzure.restrict_sku,
    a NotAvailableForSubscription restriction for the region or the zones named); a size the run's catalog
    does not have fails the step."""
    for r in entries:
        try:
            fake.restrict_sku(r["size"], r.get("zones"))
        except KeyError:
            raise StepFailed("restrict", f"a restriction of {r['size']}",
                             f"{r['size']} is not a SKU of this run's catalog") from None
