"""Which of core's feature gates a dumped cluster's controller ran with, read by `harness new` (harness/dump/new.py)
from what only a gate makes or leaves (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/controllers.go NewControllers
starts the static, nodeoverlay and node health controllers only with their gate on; every release's chart has
each gate off):

- StaticCapacity: a NodePool with spec.replicas has nodes only with the gate on;
- NodeOverlay: a NodeOverlay with status conditions was validated by the nodeoverlay controller (on); one without
  any was never read (off);
- NodeRepair: a NodeRepairBlocked event (on); a Node whose condition a repair policy of the release names, past
  its toleration and not deleting (off); such a Node within its toleration shows neither, so the chart's default
  (off) is assumed, and said with the instant its toleration ends, where the gate would decide.

Each reading is a line of given.assumed: the run rests on it, and says so beside its verdict.
"""
from __future__ import annotations

from dataclasses import dataclass

from harness.model.kube.kubetime import parse_rfc3339, rfc3339
from harness.loop.lifecycle.health import ALLOWED_UNHEALTHY_PERCENT, BLOCKED as REPAIR_BLOCKED, GATE as REPAIR
from harness.loop.provisioning.nodeoverlay import GATE as OVERLAY
from harness.loop.provisioning.staticcapacity import GATE as STATIC
from harness.model.labels.wellknown import NODEPOOL
from harness.model.values.durations import go_duration_text


@dataclass(frozen=True)
class GateReading:
    gate: str
    on: bool
    said: str            # the note and given.assumed line: the value and the evidence that decided it


def static_capacity(manifests: list[dict]) -> GateReading | None:
    """The dump's NodePools as `harness new` keeps them."""
    from harness.loop.provisioning.nodepool import is_static
    static = sorted(m["metadata"]["name"] for m in manifests if m.get("kind") == "NodePool" and is_static(m))
    if not static:
        return None
    return GateReading(STATIC, True, f"NodePool(s) {', '.join(static)} set spec.replicas: assumed the {STATIC} "
                                     "feature gate on (given.featureGates; every release's chart has it off, and "
                                     "then no controller makes their nodes)")


def node_overlay(overlays: list[dict]) -> GateReading | None:
    """The dump's NodeOverlays as they were listed (with their status)."""
    if not overlays:
        return None
    names = [str((o.get("metadata") or {}).get("name")) for o in overlays]
    validated = [n for n, o in zip(names, overlays) if ((o.get("status") or {}).get("conditions"))]
    if validated:
        return GateReading(OVERLAY, True, f"NodeOverlay {validated[0]} has status conditions, which only core's "
                                          f"nodeoverlay controller writes: assumed the {OVERLAY} feature gate on "
                                          "(given.featureGates; off in every release's chart)")
    return GateReading(OVERLAY, False, f"NodeOverlay(s) {', '.join(sorted(names))} have no status conditions, which "
                                       f"core's nodeoverlay controller writes with the {OVERLAY} feature gate on: "
                                       "assumed it off (every release's chart default), so no overlay changes a "
                                       "price or capacity")


def _matching(node: dict, policies: list[dict]) -> tuple[dict, dict, float | None] | None:
    """The node's condition a repair policy names (core health/controller.go findUnhealthyConditions): the policy,
    the condition and when its toleration ends (None: no lastTransitionTime), the one that ends first."""
    conds = {c.get("type"): c for c in (node.get("status") or {}).get("conditions") or [] if isinstance(c, dict)}
    found = None
    for p in policies:
        c = conds.get(p["type"])
        if c is None or c.get("status") != p["status"]:
            continue
        try:
            ends = parse_rfc3339(c["lastTransitionTime"]) + float(p["tolerationSeconds"])
        except (KeyError, TypeError, ValueError):
            ends = None
        if found is None or (ends is not None and (found[2] is None or ends < found[2])):
            found = (p, c, ends)
    return found


def node_repair(nodes: list[dict], events: list[dict], policies: list[dict], at: float | None,
                release: str) -> GateReading | None:
    """`policies`: the release's repair policies (profile provider.repairPolicies); `at`: the dump's time."""
    blocked = next((e for e in events if e.get("reason") == REPAIR_BLOCKED), None)
    if blocked is not None:
        obj = (blocked.get("involvedObject") or {}).get("name")
        return GateReading(REPAIR, True, f"Event {REPAIR_BLOCKED} on Node {obj}, which only core's node health "
                                         f"controller publishes: assumed the {REPAIR} feature gate on "
                                         "(given.featureGates; off in every release's chart)")
    if not policies:
        return None
    unhealthy = [(n, m) for n in nodes if ((n.get("metadata") or {}).get("labels") or {}).get(NODEPOOL)
                 and (m := _matching(n, policies)) is not None]
    if not unhealthy:
        return None

    def what(node: dict, match) -> str:
        p, c, _ = match
        return (f"Node {node['metadata'].get('name')} has {p['type']}={p['status']} since "
                f"{c.get('lastTransitionTime', '?')} (the repair policy of {release} tolerates "
                f"{go_duration_text(float(p['tolerationSeconds']))})")
    past = [(n, m) for n, m in unhealthy if at is not None and m[2] is not None and m[2] <= at
            and not (n.get("metadata") or {}).get("deletionTimestamp")]
    if past:
        node, match = past[0]
        pool = node["metadata"]["labels"][NODEPOOL]
        members = [n for n in nodes if ((n.get("metadata") or {}).get("labels") or {}).get(NODEPOOL) == pool]
        sick = sum(1 for n in members if _matching(n, policies) is not None)
        if sick > -(-len(members) * ALLOWED_UNHEALTHY_PERCENT // 100):     # core rounds the allowance up
            return GateReading(REPAIR, False, f"{what(node, match)} and is not being deleted, but {sick} of NodePool "
                                              f"{pool}'s {len(members)} nodes are unhealthy, more than "
                                              f"{ALLOWED_UNHEALTHY_PERCENT}%, which holds node repair back with the "
                                              f"gate on too (its NodeRepairBlocked event is not in the dump): assumed "
                                              f"the {REPAIR} feature gate off (every release's chart default)")
        return GateReading(REPAIR, False, f"{what(node, match)} and is not being deleted: assumed the {REPAIR} "
                                          "feature gate off (every release's chart default; with it on, core's "
                                          f"node health controller deletes such a node while at most "
                                          f"{ALLOWED_UNHEALTHY_PERCENT}% of its NodePool is unhealthy)")
    node, match = unhealthy[0]
    ends = f" at {rfc3339(match[2])}" if match[2] is not None else ""
    return GateReading(REPAIR, False, f"{what(node, match)}: the dump does not show whether node repair was on; "
                                      f"assumed the {REPAIR} feature gate off (every release's chart default: the "
                                      "node stays; with given.featureGates.NodeRepair true core deletes it when "
                                      f"its toleration ends{ends})")


def readings(manifests: list[dict], overlays: list[dict], nodes: list[dict], events: list[dict],
             policies: list[dict], at: float | None, release: str) -> list[GateReading]:
    """Every gate the dump says something of, in StaticCapacity, NodeOverlay, NodeRepair order."""
    return [r for r in (static_capacity(manifests), node_overlay(overlays),
                        node_repair(nodes, events, policies, at, release)) if r is not None]
