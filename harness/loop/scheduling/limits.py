"""NodePool `spec.limits` as Karpenter core's scheduler enforces them, and NodePool weight order.

Upstream (sigs.k8s.io/karpenter v1.14.0):
- `NewScheduler` (pkg/controllers/provisioning/scheduling/scheduler.go) starts each NodePool's
  remaining resources at `spec.limits`; `calculateExistingNodeClaims` -> `updateRemainingResources`
  subtracts the capacity of every node cluster state holds for the NodePool (`StateNode.Capacity`,
  which always counts `nodes: 1`; pkg/controllers/state/statenode.go). A NodeClaim that has not
  launched (no providerID) is not in cluster state yet (`Cluster.UpdateNodeClaim`), so it is not
  counted.
- `addToNewNodeClaim`: when `nodes` is limited and exactly zero remain,
  `node limits have been exhausted for nodepool`; otherwise `filterByRemainingResources` drops
  instance types whose capacity exceeds what remains of any limited resource, and none left gives
  `all available instance types exceed limits for nodepool`. Both render as serrors with
  `(NodePool=<name>)`.
- After a new NodeClaim is accepted, `subtractMax` subtracts the largest capacity across its
  instance-type options. Instance-type capacity has no `nodes` entry (the provider's capacity is
  cpu/memory/pods/storage/gpus), so within one scheduling pass a `nodes` limit is not decremented:
  the same batch can plan more NodeClaims than `limits.nodes` (sigs.k8s.io/karpenter v1.14.0
  pkg/controllers/provisioning/scheduling/nodeclaim.go CanAdd).
- `Provisioner.Create` (pkg/controllers/provisioning/provisioner.go) checks each NodeClaim it is about to
  write with `Limits.ExceededBy` (pkg/apis/v1/nodepool.go) against what cluster state counts for the NodePool
  (`Cluster.NodePoolResourcesFor`: launched nodes not marked for deletion, each with its capacity and
  `nodes: 1`; pkg/controllers/state/cluster.go updateNodePoolResources): a resource used above its limit (equal
  passes) refuses it. Every core since v1.0.0 has it (before v1.4.0 it reads the NodePool's status.resources,
  which the counter controller fills from the same cluster state, with `nodes` too).
- `OrderByWeight` (pkg/utils/nodepool/nodepool.go): heavier weight first; equal weights by name,
  descending.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

from harness.model.values.resources import MILLI_RESOURCES, parse_resource_list

NODES = "nodes"              # core resources.Node (pkg/utils/resources/resources.go)


def nodepool_limits(nodepool: Mapping) -> dict[str, int] | None:
    """`spec.limits` in base units (cpu millicores, memory bytes, nodes a count); None when unset."""
    raw = (nodepool.get("spec") or {}).get("limits")
    if not raw:
        return None
    return parse_resource_list(raw)


def weight_order_key(nodepool: Mapping) -> tuple:
    """Sort key for `OrderByWeight`: heavier first, then name descending for equal weights."""
    weight = int((nodepool.get("spec") or {}).get("weight") or 0)
    name = nodepool["metadata"]["name"]
    return (-weight, _Desc(name))


@dataclass(frozen=True, order=False)
class _Desc:
    """A string that sorts in reverse (names descending inside an ascending sort)."""

    s: str

    def __lt__(self, other: "_Desc") -> bool:
        return self.s > other.s


def exhausted_message(nodepool: str) -> str:
    return f"node limits have been exhausted for nodepool (NodePool={nodepool})"


def exceeded_message(nodepool: str) -> str:
    return f"all available instance types exceed limits for nodepool (NodePool={nodepool})"


def exceeded_by(nodepool: Mapping, usage: Mapping[str, int]) -> tuple[str, int, int] | None:
    """`Limits.ExceededBy`: (resource, usage, limit) of a limited resource used above its limit, or None.
    Core ranges over the usage map in Go's (random) order and reports the first it meets; the harness takes
    the resources by name (harness assumption: which one is named matters only when two are over at once)."""
    limits = nodepool_limits(nodepool)
    if not limits:
        return None
    for name in sorted(usage):
        if name in limits and usage[name] > limits[name]:
            return name, usage[name], limits[name]
    return None


def _dec(resource: str, amount: int) -> str:
    """A quantity as `Quantity.AsDec()` prints it: cpu in cores (`4`, `1.500`), anything else a plain number."""
    if resource in MILLI_RESOURCES and amount % 1000:
        return f"{amount / 1000:.3f}"
    return str(amount // 1000 if resource in MILLI_RESOURCES else amount)


def usage_exceeds_message(resource: str, usage: int, limit: int, key_value: bool) -> str:
    """ExceededBy's error: serrors from core v1.5.0 (#2136, the change core-behaviour.yaml blockedReasonFormat
    reads), `fmt.Errorf("%s resource usage of %v exceeds limit of %v")` before (sigs.k8s.io/karpenter v1.4.0
    pkg/apis/v1/nodepool.go ExceededBy)."""
    if key_value:
        return (f"resource usage exceeds limit (limit={_dec(resource, limit)}, resource-name={resource}, "
                f"usage={_dec(resource, usage)})")
    return f"{resource} resource usage of {_dec(resource, usage)} exceeds limit of {_dec(resource, limit)}"


def create_refused_message(detail: str) -> str:
    """CreateNodeClaims' wrap of a refused Create, the error the provisioner's Reconcile returns (logged as
    controller-runtime's "Reconciler error")."""
    return f"creating node claim, {detail}"


@dataclass
class RemainingResources:
    """What each limited NodePool may still launch during one scheduling pass."""

    remaining: dict[str, dict[str, int]] = field(default_factory=dict)
    exhausted_check: bool = True       # core v1.11.0 on: none left refuses ("node limits have been exhausted")

    @staticmethod
    def build(nodepools: Iterable[Mapping], node_capacities: Iterable[tuple[str, Mapping[str, int], bool]],
              node_limits: bool = True, initialized_counted: bool = False) -> "RemainingResources":
        """Limits minus the capacity (plus one node) of every launched node of the NodePool; each node is
        (NodePool, capacity, whether core v1.4-v1.10 count it: initialized or not registered).
        `node_limits` False: core before v1.11.0 (#2526), where StateNode.Capacity has no `nodes` of its own
        (core-behaviour.yaml nodeLimits). From v1.4.0 (`initialized_counted`, core-behaviour.yaml
        initializedNodesCounted) Cluster.updateNodePoolResources writes `nodes: 1` into the map Capacity
        returns for an initialized node (its Node's status.capacity) or a NodeClaim not registered yet (its
        status.capacity), so those still count; a registered node not initialized returns a copy and does not
        (sigs.k8s.io/karpenter v1.6.2 pkg/controllers/state/statenode.go Capacity). Before v1.4.0 nothing
        counts: the scheduler plans past a `nodes` limit and only Provisioner.Create refuses."""
        out: dict[str, dict[str, int]] = {}
        for np in nodepools:
            limits = nodepool_limits(np)
            if limits is not None and not node_limits and not initialized_counted:
                limits.pop(NODES, None)
            if limits is not None:
                out[np["metadata"]["name"]] = dict(limits)
        for name, capacity, counted in node_capacities:
            rem = out.get(name)
            if rem is None:
                continue
            with_node = {**capacity, NODES: 1 if node_limits or counted else 0}
            for k in rem:                      # resources.Subtract: only the limited keys
                rem[k] -= with_node.get(k, 0)
        return RemainingResources(out, exhausted_check=node_limits)

    def check(self, nodepool: str, instance_types: list) -> tuple[list, str | None]:
        """The instance types a new NodeClaim of `nodepool` may use, or the limit error."""
        rem = self.remaining.get(nodepool)
        if rem is None:
            return instance_types, None
        if self.exhausted_check and NODES in rem and rem[NODES] == 0:
            return [], exhausted_message(nodepool)
        kept = [it for it in instance_types if all(it.capacity.get(k, 0) <= v for k, v in rem.items())]
        if not kept:
            return [], exceeded_message(nodepool)
        return kept, None

    def subtract_max(self, nodepool: str, instance_types: list) -> None:
        rem = self.remaining.get(nodepool)
        if rem is None or not instance_types:
            return
        for k in rem:
            rem[k] -= max(it.capacity.get(k, 0) for it in instance_types)
