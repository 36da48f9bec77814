"""Pod predicates Karpenter's disruption and termination read (sigs.k8s.io/karpenter v1.14.0
pkg/utils/pod/scheduling.go: IsReschedulable, IsEvictable, IsDrainable, IsDisruptable,
IsDoNotDisruptActive, ToleratesDisruptedNoScheduleTaint, IsOwnedByDaemonSet, IsOwnedByNode;
pkg/utils/disruption/disruption.go EvictionCost; pkg/utils/pod/events.go).

Harness pods are never terminal, and a deleted pod is gone at once, with two exceptions: a pod whose
containers' preStop sleep still runs (loop/kube/kubelet.py), and a seeded pod (given.existingNodes) that a
dump shows terminating (metadata.deletionTimestamp) and a finalizer holds.
A pod is owned by a DaemonSet when the loop made it for one; by a Node (a mirror pod) or a StatefulSet
when its manifest says so in metadata.ownerReferences.
"""
from __future__ import annotations

import math
from typing import NamedTuple

from harness.loop.scheduling.pods import PodView, Taint, tolerates
from harness.model.kube.kubetime import parse_rfc3339
from harness.model.values.durations import go_duration

DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"             # core pkg/apis/v1 DoNotDisruptAnnotationKey
DISRUPTED_TAINT = Taint("karpenter.sh/disrupted", "", "NoSchedule")   # core pkg/apis/v1 DisruptedNoScheduleTaint
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"     # k8s.io/api core/v1 PodDeletionCost
CRITICAL_PRIORITY_CLASSES = ("system-cluster-critical", "system-node-critical")


def owned_by_daemonset(pv: PodView) -> bool:
    return pv.owner_kind == "DaemonSet" or _owner(pv, "apps/v1", "DaemonSet")


def owned_by_node(pv: PodView) -> bool:
    return _owner(pv, "v1", "Node")


def _owner(pv: PodView, api_version: str, kind: str) -> bool:
    # a loop, not any() over a generator: asked of every pod of every candidate and drained Node each pass
    for o in pv.obj["metadata"].get("ownerReferences") or ():
        if o.get("kind") == kind and o.get("apiVersion") == api_version:
            return True
    return False


def controller_of(pv: PodView) -> str | None:
    """metav1.GetControllerOf: the loop's owner, or a controller ownerReference in the manifest."""
    if pv.owner_kind:
        return f"{pv.owner_kind}/{pv.owner_name}"
    for o in pv.obj["metadata"].get("ownerReferences") or ():
        if o.get("controller"):
            return f"{o.get('kind')}/{o.get('name')}"
    return None


def terminating(pv: PodView) -> bool:
    """IsTerminating: the pod has a deletionTimestamp."""
    return bool(pv.obj["metadata"].get("deletionTimestamp"))


STUCK_AFTER = 60.0     # core v1.14.0 pkg/utils/pod/scheduling.go IsStuckTerminating: a minute past deletionTimestamp


def stuck_at(pv: PodView) -> float | None:
    """When a terminating pod counts as stuck (IsStuckTerminating holds once now is past this); None when
    it is not terminating."""
    stamp = pv.obj["metadata"].get("deletionTimestamp")
    if not stamp:
        return None
    return parse_rfc3339(stamp) + STUCK_AFTER


def stuck_terminating(pv: PodView, now: float) -> bool:
    """IsStuckTerminating: terminating, its deletionTimestamp (deletion time + grace period) more than a
    minute past."""
    at = stuck_at(pv)
    return at is not None and now > at


def is_active(pv: PodView) -> bool:
    """IsActive: neither terminal (not modeled) nor terminating."""
    return not terminating(pv)


def is_reschedulable(pv: PodView) -> bool:
    """IsReschedulable: active, or a terminating StatefulSet pod (its replacement cannot start until
    it is gone, so core counts it), and neither a DaemonSet's nor a mirror pod."""
    return (is_active(pv) or (_owner(pv, "apps/v1", "StatefulSet") and terminating(pv))) and \
        not owned_by_daemonset(pv) and not owned_by_node(pv)


def tolerates_disrupted_taint(pv: PodView) -> bool:
    return tolerates(pv.tolerations, DISRUPTED_TAINT)


class DisruptionFacts(NamedTuple):
    """What the disruption controller reads of every pod of every node each pass that only a new object of the
    pod changes (its labels and annotations are replaced, never edited: workloads.py _update_pod), kept on the
    pod's view for that object."""

    obj: dict
    do_not_disrupt: str | None      # the do-not-disrupt annotation's value, None without one
    never_evictable: bool           # IsEvictable's fixed part: it tolerates the disrupted taint, or a mirror pod
    pdb_key: tuple                  # (namespace, its labels): what PDBIndex looks its PDBs up by


def disruption_facts(pv: PodView) -> DisruptionFacts:
    f = pv.disruption_facts
    if f is None or f.obj is not pv.obj:
        value = (pv.obj["metadata"].get("annotations") or {}).get(DO_NOT_DISRUPT)
        f = pv.disruption_facts = DisruptionFacts(pv.obj, None if value is None else str(value),
                                                  tolerates_disrupted_taint(pv) or owned_by_node(pv),
                                                  (pv.namespace, frozenset(pv.labels.items())))
    return f


def do_not_disrupt(pv: PodView, started: float | None, now: float, publish=None, durations: bool = True) -> bool:
    """IsDoNotDisruptActive: "true", or a positive duration the pod has not yet run for (no start
    time: active). An invalid value is ignored, with an InvalidDoNotDisruptAnnotation event.
    `durations` False: core before v1.12.0 (HasDoNotDisrupt, pkg/utils/pod/scheduling.go), where only
    "true" protects and any other value is no annotation at all, without an event
    (harness/data/core-behaviour.yaml doNotDisruptDurations)."""
    value = (pv.obj["metadata"].get("annotations") or {}).get(DO_NOT_DISRUPT)
    if value is None:
        return False
    value = str(value)
    if value == "true":
        return True
    if not durations:
        return False
    try:
        d = go_duration(value)
        if d <= 0:
            raise ValueError(f'duration "{value}" must be positive')
        err = None
    except ValueError as e:
        err = str(e) if str(e).startswith("duration") else f'failed to parse "{value}" as a duration: {e}'
    if err is not None:
        if publish is not None:
            publish("Pod", pv.name, "InvalidDoNotDisruptAnnotation",
                    f"Invalid karpenter.sh/do-not-disrupt annotation: {err}, ignoring annotation",
                    (pv.uid, err), namespace=pv.namespace)
        return False
    if started is None:
        return True
    return now - started < d


def do_not_disrupt_until(pv: PodView, started: float | None, durations: bool = True) -> float | None:
    """When a duration-valued do-not-disrupt annotation stops protecting the pod (its start plus the
    duration: do_not_disrupt is false from that instant); None for "true", an invalid value, a pod not
    started yet, or a core that reads no durations (core-behaviour.yaml doNotDisruptDurations)."""
    value = (pv.obj["metadata"].get("annotations") or {}).get(DO_NOT_DISRUPT)
    if value is None or started is None or not durations or str(value) == "true":
        return None
    try:
        d = go_duration(str(value))
    except ValueError:
        return None
    return started + d if d > 0 else None


def eviction_cost(pv: PodView) -> float:
    """disruption.go EvictionCost: 1 + deletion cost / 2^27 + priority / 2^25, clamped to [-10, 10]."""
    cost = 1.0
    raw = (pv.obj["metadata"].get("annotations") or {}).get(POD_DELETION_COST)
    if raw is not None:
        try:
            cost += float(raw) / math.pow(2, 27)
        except ValueError:
            pass
    prio = pv.spec.get("priority")
    if isinstance(prio, int):
        cost += prio / math.pow(2, 25)
    return min(max(cost, -10.0), 10.0)


def is_critical(pv: PodView) -> bool:
    return pv.spec.get("priorityClassName") in CRITICAL_PRIORITY_CLASSES
