"""The provisioner's and launch's reasons, as the decision record writes them (harness/loop/decisions.py).

Karpenter core tries NodePools in weight order, equal weights by name descending (sigs.k8s.io/karpenter
v1.14.0 pkg/utils/nodepool/nodepool.go OrderByWeight), and takes the first whose NodeClaimTemplate can
hold the pod (pkg/controllers/provisioning/scheduling/scheduler.go addToNewNodeClaim); the provider launches
the cheapest compatible available offering (github.com/Azure/karpenter-provider-azure v1.14.0
pkg/providers/allocationstrategy/allocation_strategy.go Allocate). Core logs only the outcome; these texts
add what decided it: the weights, a tie broken by name, why each heavier NodePool could not take the pod
(limits with the arithmetic), how many instance types remained and the cheapest. Which decisions, and where
their facts come from: docs/architecture/loop.md, "The decision record: provisioning and launch".
"""
from __future__ import annotations

from typing import Iterable, Mapping

from harness.loop.scheduling.limits import NODES, exceeded_message, exhausted_message, nodepool_limits
from harness.loop.scheduling.nodeclaim import offering_compatible
from harness.model.values.resources import format_resource

SHOWN = 5                 # pods named in a list before "and N more"


def pod_ref(key: str) -> str:
    """`Pod/<namespace>/<name>` for a pod key `namespace/name`."""
    return "Pod/" + key


def names_phrase(keys: list[str], shown: int = SHOWN) -> str:
    """`a, b, c` or `a, b, c and 4 more`."""
    head = ", ".join(keys[:shown])
    return head + (f" and {len(keys) - shown} more" if len(keys) > shown else "")


def price_phrase(price: float | None) -> str:
    return f"${price:.4f}/h" if price is not None else "no price"


def pools(names: list[str]) -> str:
    """`NodePool a` or `NodePools c, b, a`."""
    return ("NodePool " if len(names) == 1 else "NodePools ") + ", ".join(names)


def weight_phrase(w: int) -> str:
    return f"weight {w}" if w else "weight 0 (not set)"


def tie_phrase(chosen, order: list) -> str:
    """How a tie in weight was broken, or ``: `tied at weight 10 with NodePool a, chosen by name order (...)`.
    `order`: the round's templates as the scheduler tries them (OrderByWeight)."""
    names = [t.name for t in order]
    tied = [t.name for t in order if t.weight == chosen.weight and t.name != chosen.name]
    if not tied:
        return ""
    at = names.index(chosen.name) if chosen.name in names else 0
    after = [n for n in tied if names.index(n) > at]
    before = [n for n in tied if names.index(n) < at]
    parts = []
    if after:
        parts.append(f"tied at weight {chosen.weight} with {pools(after)}, chosen by name order "
                     "(equal weights are tried by name, descending)")
    if before:
        parts.append(f"{pools(before)} of equal weight came first by name order")
    return "; ".join(parts)


def limits_arithmetic(nodepool: Mapping, start: Mapping[str, int] | None, now: Mapping[str, int],
                      options: Iterable, needs: str = "this NodeClaim needs") -> str:
    """`limits.cpu 64, in use 64 (node capacity), this NodeClaim needs 4`: for each limit that no option fits
    in, the limit, what is in use (launched nodes' capacity, and what NodeClaims planned earlier in the round
    took: subtractMax), and what the smallest option needs. `start`: what remained at the round's start,
    `now`: what remained when the pod was tried (harness/loop/scheduling/limits.py RemainingResources)."""
    limits = nodepool_limits(nodepool) or {}
    start = start if start is not None else now
    options = list(options)
    parts, everything = [], []
    for k, left in now.items():
        limit = limits.get(k, 0)
        in_use, planned = limit - left, start.get(k, left) - left
        if k == NODES:
            need = 1
            blocks = left <= 0
        else:
            need = min((it.capacity.get(k, 0) for it in options), default=0)
            blocks = need > left
        fmt = (lambda v: str(v)) if k == NODES else (lambda v, k=k: amount(k, v))
        if not in_use:
            use = ""
        elif planned and in_use - planned:
            use = f"{fmt(in_use - planned)} node capacity + {fmt(planned)} planned in this round"
        elif planned:
            use = "planned in this round"
        else:
            use = "launched nodes" if k == NODES else "node capacity"
        text = f"limits.{k} {fmt(limit)}, in use {fmt(in_use)}{f' ({use})' if use else ''}, {needs} {fmt(need)}"
        everything.append(text)
        if blocks:
            parts.append(text)
    if parts:
        return " and ".join(parts)
    return " and ".join(everything) + " (no instance type fits every limit at once)"


def amount(resource: str, value: int) -> str:
    """A quantity as a reader reads it: `4`, `500m`, `8Gi`; a byte count no unit divides as `14.80Gi`."""
    text = format_resource(resource, value)
    if text.isdigit() and value >= 2**20:
        return f"{value / 2**30:.2f}Gi"
    return text


def limit_details(err: str, nodepools: Mapping[str, object], start: Mapping, remaining: Mapping) -> str:
    """The arithmetic behind each limit error in a pod's error (one per NodePool, "; "-joined by the
    scheduler), from what remained of each limit: `nodepools` maps a name to its template."""
    out = []
    for name, t in nodepools.items():
        if name in remaining and (exceeded_message(name) in err or exhausted_message(name) in err):
            options = t.options if t.options is not None else t.instance_types
            out.append(f"NodePool {name}: " + limits_arithmetic(t.nodepool, start.get(name), remaining[name], options,
                                                                "a new NodeClaim needs at least"))
    return "; ".join(out)


def is_limit_error(nodepool: str, err: str) -> bool:
    return err in (exhausted_message(nodepool), exceeded_message(nodepool))


def elimination_summary(why) -> str:
    """A why.py NodePoolWhy in one clause: `0 of 2 instance types fit: resources: cpu 8 (pod) eliminates 2`."""
    if why.blocked:
        return why.blocked
    text = f"{why.fitting} of {why.instance_types} instance types fit"
    if why.eliminations:
        text += ": " + ", ".join(f"{e.what} ({e.source}) eliminates {e.count}" for e in why.eliminations[:2])
    return text


def cheapest(instance_types: list, reqs, well_known: frozenset[str]):
    """(instance type, its cheapest compatible available offering) among `instance_types`, or None."""
    best = None
    for it in instance_types:
        for o in it.offerings:
            if (best is None or o.price < best[1].price) and offering_compatible(o, reqs, well_known):
                best = (it, o)
    return best


def where(zone: str) -> str:
    """`in eastus-1`, or `regional (no zone)` for a regional offering (zone "0", or "" before provider #1615)."""
    return "regional (no zone)" if zone in ("0", "") else f"in {zone}"


def offering(name: str, zone: str, capacity_type: str) -> str:
    """`Standard_D2s_v3 in eastus-1, spot`."""
    return f"{name} {where(zone)}, {capacity_type}"


def offering_phrase(name: str, zone: str, capacity_type: str, price: float | None) -> str:
    return f"{offering(name, zone, capacity_type)}, {price_phrase(price)}"


def offerings_phrase(offers: tuple, shown: int = 3) -> str:
    """(instance type, zone, capacity type) triples: `a in z1, spot, b in z2, on-demand, ...`."""
    return "; ".join(offering(*o) for o in offers[:shown]) + ("; ..." if len(offers) > shown else "")


def marked_phrase(classified, size: str = "") -> str:
    """What an error handler marked unavailable (harness/loop/azure/unavailable.py Classified), or ``."""
    if classified is None or not (classified.marked or classified.all_spot):
        return ""
    ttl = int(classified.ttl)
    ttl_text = (f"{ttl // 3600}h" if ttl and ttl % 3600 == 0 else f"{ttl // 60}m" if ttl and ttl % 60 == 0
                else f"{ttl}s")
    if classified.all_spot:
        return f"every spot offering marked unavailable for {ttl_text} ({classified.handler})"
    # (zone, capacity type) pairs
    shown = ", ".join(f"{'regional' if z in ('0', '') else z} {c}" for z, c in classified.marked)
    whose = f"{size}'s offerings" if size else "offerings"
    return f"{whose} marked unavailable for {ttl_text} ({classified.handler}): {shown}"


def create_refused(nodepool: str, pods: list[str], err: str, scheduler_counts_nodes: bool) -> str:
    """A NodeClaim the scheduler planned and Provisioner.Create refused on the NodePool's limits: core's error,
    what it means, and (before core v1.11.0, core-behaviour.yaml nodeLimits) why the scheduler planned it."""
    text = (f"{err}: Provisioner.Create refused the NodeClaim planned from NodePool {nodepool} for "
            f"{names_phrase(pods)}, as the NodePool already uses more than its limit; no event, the pod stays "
            "pending and is planned again each pass")
    if not scheduler_counts_nodes:
        text += ("; this core's scheduler plans while no `nodes` remain (it counts only initialized nodes, and none "
                 "before core v1.4.0; from core v1.11.0 it counts every node and refuses first)")
    return text


# -- static NodePools (loop/provisioning/staticcapacity.py) ------------------------------------------------------
def static_created(nodepool: str, active: int, replicas: int) -> str:
    """A NodeClaim static provisioning made (core's log: "provisioning nodeclaims to satisfy replica count")."""
    return (f"static NodePool {nodepool}: {active} of {replicas} replicas (\"provisioning nodeclaims to satisfy "
            "replica count\"): a NodeClaim of its template, for no pod; the provider picks its instance type")


def static_limited(active: int, replicas: int, limit) -> str:
    """Static provisioning held by limits.nodes (core's log: "nodepool node limit reached")."""
    return (f"static NodePool with {active} of {replicas} replicas: limits.nodes {limit} leaves no room "
            "(\"nodepool node limit reached\")")


def static_surplus(nodepool: str, active: int, replicas: int) -> str:
    """Why static deprovisioning deletes a NodeClaim (core's log: "deprovisioning nodeclaims to satisfy replica
    count")."""
    return (f"static NodePool {nodepool} has {active} NodeClaims for {replicas} replicas (\"deprovisioning "
            "nodeclaims to satisfy replica count\")")
