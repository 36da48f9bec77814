"""What core's pod-event bookkeeping has yet to do on the cluster as it is: a NodeClaim whose Node saw a pod go
terminating or terminal that its `status.lastPodEventTime` does not show yet, or that is still Consolidatable
inside its consolidateAfter window. The real engine holds a settle on these before its clock jumps on, and its
kubelet stand-in holds a terminating pod until podevents has stamped it (`unstamped`).

Why: core's emptiness command waits 15 s before it executes and then checks its candidates again
(sigs.k8s.io/karpenter v1.14.0 pkg/controllers/disruption/validation.go EmptinessValidator.Validate), so that a
pod event the podevents controller was still writing (it stamps at most every 10 s: nodeclaim/podevents
controller.go dedupeTimeout) clears Consolidatable first (nodeclaim/disruption/consolidation.go). A jump of the
run's clock fires that 15 s wait at once: on a loaded machine the check then read a stale Consolidatable and the
node whose last pod had just gone was deleted as Empty minutes early (scenarios/workloads/dumped-jobs). And
podevents reads the pod from its cache when its turn comes: the stand-in kubelet, which ends a pod's graceful
delete at its next poll, had removed it by then, so no stamp came at all - a real kubelet takes its time.
"""
from __future__ import annotations

from harness.runner.engines.real.outcome.windows import condition, duration, timestamp

DEDUPE_SECONDS = 10.0      # core v1.14.0 nodeclaim/podevents/controller.go dedupeTimeout
# how far a stamp may lag the event it answers and still be its stamp (podevents stamps its own clock's now,
# read a moment after the event): harness assumption, the clock file's 10 ms reads and a loaded machine
STAMP_SLACK = 0.5
DAEMONSET = "DaemonSet"


def _event_time(pod: dict) -> float | None:
    """When a bound pod last did what podevents stamps for (core v1.14.0 podevents Register: went terminating
    or terminal; a bind is stamped as it happens, by the scheduler's write): the delete (its deletionTimestamp
    less its grace period, which the API server added), else the latest finishedAt of its containers once the
    pod is Succeeded or Failed. None: neither."""
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    deleted = timestamp(meta.get("deletionTimestamp"))
    times = [None if deleted is None else deleted - float(meta.get("deletionGracePeriodSeconds") or 0)]
    if status.get("phase") in ("Succeeded", "Failed"):
        times += [timestamp(((c.get("state") or {}).get("terminated") or {}).get("finishedAt"))
                  for c in status.get("containerStatuses") or []]
    return max((t for t in times if t is not None), default=None)


def _managed(nodeclaims: list[dict]) -> dict[str, dict]:
    """Node name -> its live NodeClaim, of those podevents stamps (initialized, not deleting, v1)."""
    return {nc["status"]["nodeName"]: nc for nc in nodeclaims
            if (nc.get("status") or {}).get("nodeName") and not nc["metadata"].get("deletionTimestamp")
            and condition(nc, "Initialized").get("status") == "True"
            and not str(nc.get("apiVersion") or "").endswith("/v1beta1")}      # no podevents before core v1.0


def _owned_by_daemonset(pod: dict) -> bool:
    return any(o.get("kind") == DAEMONSET for o in (pod.get("metadata") or {}).get("ownerReferences") or ())


def _unstamped(nc: dict, event: float) -> bool:
    stamped = timestamp((nc.get("status") or {}).get("lastPodEventTime"))
    return stamped is None or stamped + DEDUPE_SECONDS + STAMP_SLACK < event


def unstamped(nodeclaims: list[dict], pods: list[dict], since: float) -> list[tuple[str, str]]:
    """(namespace, name) of the pods deleted after `since` (the run's clock) whose delete their Node's
    NodeClaim has not stamped yet: the kubelet stand-in ends their graceful delete only after it has (or after
    a while: engine.py)."""
    managed = _managed(nodeclaims)
    out = []
    for pod in pods:
        meta, node = pod.get("metadata") or {}, (pod.get("spec") or {}).get("nodeName")
        if not meta.get("deletionTimestamp") or node not in managed or _owned_by_daemonset(pod):
            continue
        event = _event_time(pod)
        if event is not None and event > since and _unstamped(managed[node], event):
            out.append((meta.get("namespace") or "default", meta["name"]))
    return out


def behind(nodeclaims: list[dict], nodepools: list[dict], pods: list[dict], now: float,
           since: float) -> list[str]:
    """Why core's bookkeeping is behind, one line per NodeClaim, for the live, not deleting NodeClaims of
    `nodeclaims`: a pod event on its Node after `since` (the run's clock: what this run did, not a dump's
    history) and more than DEDUPE_SECONDS after its lastPodEventTime, or Consolidatable True while
    lastPodEventTime (else its initialization) plus its NodePool's consolidateAfter is still ahead of `now`."""
    after = {np["metadata"]["name"]: duration(((np.get("spec") or {}).get("disruption") or {}).get("consolidateAfter"))
             for np in nodepools}
    on_node: dict[str, float] = {}
    for pod in pods:
        spec = pod.get("spec") or {}
        if not spec.get("nodeName") or _owned_by_daemonset(pod):
            continue
        t = _event_time(pod)
        if t is not None and since < t <= now:
            on_node[spec["nodeName"]] = max(t, on_node.get(spec["nodeName"], t))
    out = []
    for node, nc in _managed(nodeclaims).items():
        meta, status = nc["metadata"], nc.get("status") or {}
        name, stamped = meta["name"], timestamp(status.get("lastPodEventTime"))
        event = on_node.get(node)
        if event is not None and _unstamped(nc, event):
            out.append(f"NodeClaim {name}: a pod event on its Node {now - event:.1f}s ago that core's podevents has "
                       "not stamped as lastPodEventTime yet")
            continue
        window = after.get((meta.get("labels") or {}).get("karpenter.sh/nodepool"))
        start = stamped if stamped is not None else timestamp(condition(nc, "Initialized").get("lastTransitionTime"))
        if window is not None and start is not None and condition(nc, "Consolidatable").get("status") == "True" \
                and start + window > now + STAMP_SLACK:
            out.append(f"NodeClaim {name}: Consolidatable inside its consolidateAfter window (for "
                       f"{start + window - now:.1f}s more); core's nodeclaim disruption has not cleared it yet")
    return out
