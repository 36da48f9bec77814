"""Times a dump implies rather than states, for `harness new` (harness/runner/dump.py).

- Which object and field set the clock: the newest timestamp of the input (`newest_source`), named so a
  clock older than the dump (a Sunday heartbeat in a Monday dump) shows where it came from.
- A NodeClaim's `status.lastPodEventTime` where the dump lacks it (`last_pod_event`): core stamps it when a
  pod binds to the NodeClaim's node, turns terminal or starts terminating, DaemonSet pods aside
  (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodeclaim/podevents/controller.go Reconcile and its
  UpdateFunc predicate), so the newest such moment of the node's pods stands in for it.
"""
from __future__ import annotations

from dataclasses import dataclass

from harness.runner.notices import ObjectNote

# an object's top-level fields that hold no timestamp of its own (newest_source skips them)
UNTIMED = frozenset({"spec", "managedFields"})
# the fields a timestamp of the input may sit in (dump.py TIME_FIELDS reads the same set)
HEARTBEATS = ("lastHeartbeatTime", "lastTimestamp", "eventTime", "firstTimestamp")


@dataclass(frozen=True)
class TimeSource:
    """The newest timestamp of the input and where it sits."""

    value: str
    kind: str
    name: str
    path: str           # e.g. status.conditions[Ready].lastHeartbeatTime
    file: str
    line: int

    def describe(self) -> str:
        return f"{self.kind} {self.name}'s {self.path}, {self.file}:{self.line}"

    @property
    def is_heartbeat(self) -> bool:
        return self.path.rsplit(".", 1)[-1] in HEARTBEATS


def newest_source(objects: list[tuple[dict, str, int]], fields: tuple[str, ...]) -> TimeSource | None:
    """The latest timestamp any object holds in `fields` (at any depth), with the object and field path;
    the first object wins a tie (input order). The objects are scanned without paths; only the winning one is
    walked again to name the field (a dump of 5,000 nodes holds millions of values)."""
    from harness.loop.clock import parse_rfc3339
    keys = frozenset(fields)              # each of the millions of strings' keys looked up, not compared
    parsed: dict[str, float | None] = {}

    def at_of(text: str) -> float | None:
        if text not in parsed:
            try:
                parsed[text] = parse_rfc3339(text)
            except ValueError:
                parsed[text] = None
        return parsed[text]

    best: float | None = None
    winner: tuple[dict, str, int] | None = None
    for entry in objects:
        # not an object's spec (most of a pod; a template's creationTimestamp there is null) nor its
        # managedFields (whose keys are "f:..."): no timestamp sits there
        stack: list[object] = [v for k, v in entry[0].items() if k not in UNTIMED and (type(v) is dict or type(v) is list)]
        for k, v in entry[0].items():
            if type(v) is str and k in keys:
                at = at_of(v)
                if at is not None and (best is None or at > best):
                    best, winner = at, entry
        while stack:
            node = stack.pop()
            if type(node) is dict:
                for k, v in node.items():
                    if type(v) is str:
                        if k in keys:
                            at = at_of(v)
                            if at is not None and (best is None or at > best):
                                best, winner = at, entry
                    elif (type(v) is dict or type(v) is list) and k != "managedFields":
                        stack.append(v)
            else:
                stack.extend(v for v in node if type(v) is dict or type(v) is list)
    return _named_source(winner, fields, at_of) if winner else None


def _named_source(entry: tuple[dict, str, int], fields: tuple[str, ...], at_of) -> TimeSource | None:
    """The newest of `fields` in one object, with its path (a condition by its type, anything else by its
    index), the first in walking order on a tie."""
    obj, file, line = entry
    meta = obj.get("metadata") or {}
    best: tuple[float, TimeSource] | None = None
    stack: list[tuple[object, str]] = [(obj, "")]
    while stack:
        node, path = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in items:
            if isinstance(node, dict):
                here = f"{path}.{k}" if path else str(k)
            else:
                here = f"{path}[{v['type'] if isinstance(v, dict) and isinstance(v.get('type'), str) else k}]"
            if isinstance(k, str) and k in fields and isinstance(v, str):
                at = at_of(v)
                if at is not None and (best is None or at > best[0]):
                    best = (at, TimeSource(v, str(obj.get("kind")), str(meta.get("name")), here, file, line))
            elif isinstance(v, (dict, list)):
                stack.append((v, here))
    return best[1] if best else None


def clock_note(src: TimeSource | None) -> str:
    """Which object set the clock, and (when no heartbeat or event did) that the dump may be newer."""
    if src is None:
        return "the newest timestamp in the input"
    out = f"the newest timestamp in the input: {src.describe()}"
    if not src.is_heartbeat:
        out += "; no Node heartbeat or Event is newer, so if the dump was taken later give its time with --at"
    return out


def _owned_by_daemonset(pod: dict) -> bool:
    return any(r.get("kind") == "DaemonSet" and r.get("controller", True)
               for r in (pod.get("metadata") or {}).get("ownerReferences") or [])


def pod_events(pod: dict) -> list[tuple[str, str]]:
    """(time, what) of each moment core's podevents controller reacts to that the pod's status dates:
    bound (its PodScheduled condition, else status.startTime), terminating (the delete: the
    deletionTimestamp less the grace period the API server added), terminal (its containers' last finish)."""
    from harness.loop.clock import parse_rfc3339
    # the API server's metav1.Time (not through the loop's termination controller: 0.2 s of imports)
    from harness.model.podtermination import timestamp as rfc3339
    status, meta = pod.get("status") or {}, pod.get("metadata") or {}
    out = []
    scheduled = next((c for c in status.get("conditions") or []
                      if c.get("type") == "PodScheduled" and c.get("status") == "True" and c.get("lastTransitionTime")), None)
    if scheduled:
        out.append((str(scheduled["lastTransitionTime"]), "PodScheduled condition"))
    elif status.get("startTime"):
        out.append((str(status["startTime"]), "status.startTime"))
    if meta.get("deletionTimestamp"):
        try:
            at = parse_rfc3339(str(meta["deletionTimestamp"])) - int(meta.get("deletionGracePeriodSeconds") or 0)
            out.append((rfc3339(at), "deletion"))
        except ValueError:
            pass
    if status.get("phase") in ("Succeeded", "Failed"):
        done = [str(((cs.get("state") or {}).get("terminated") or {}).get("finishedAt") or "")
                for cs in status.get("containerStatuses") or []]
        done = [d for d in done if d]
        if done:
            out.append((max(done, key=parse_rfc3339), f"{status['phase']} (containers finished)"))
    return out


def last_pod_event(node: str, pods: list[dict]) -> tuple[str, str] | None:
    """(time, which pod and moment) of the newest pod event on `node`, or None."""
    from harness.loop.clock import parse_rfc3339
    best = None
    for pod in pods:
        if (pod.get("spec") or {}).get("nodeName") != node or _owned_by_daemonset(pod):
            continue
        for at, what in pod_events(pod):
            try:
                t = parse_rfc3339(at)
            except ValueError:
                continue
            if best is None or t > best[0]:
                best = (t, at, f"Pod {pod['metadata'].get('name')}'s {what}")
    return (best[1], best[2]) if best else None


def infer_last_pod_events(nodeclaims: list[dict], pods: list[dict], entries: list[dict], notes: list[str]) -> None:
    """Give each seeded NodeClaim the dump sent without `status.lastPodEventTime` the newest pod event of
    its node (consolidateAfter counts from it), and say so."""
    by_name = {e.get("nodeClaim"): e for e in entries if e.get("nodeClaim")}
    on_node: dict[str, list[dict]] = {}      # each node's pods, found once (a dump holds thousands of each)
    for pod in pods:
        node_name = (pod.get("spec") or {}).get("nodeName")
        if isinstance(node_name, str):
            on_node.setdefault(node_name, []).append(pod)
    for nc in nodeclaims:
        name = (nc.get("metadata") or {}).get("name")
        entry, node = by_name.get(name), (nc.get("status") or {}).get("nodeName")
        if entry is None or not node or entry.get("lastPodEventTime"):
            continue
        found = last_pod_event(node, on_node.get(node, []) if isinstance(node, str) else pods)
        if found is None:
            continue
        entry["lastPodEventTime"] = found[0]
        why = "(Karpenter stamps it when a pod binds, ends or starts terminating; consolidateAfter counts from it)"
        notes.append(ObjectNote(f"NodeClaim {name}: no status.lastPodEventTime; taken as {found[0]}, {found[1]} on "
                                f"its node {node} {why}", str(name), ("lastPodEventTime",), "", "NodeClaims",
                                ": no status.lastPodEventTime; each taken as the newest pod event on its node, as "
                                f"given.existingNodes[].lastPodEventTime {why}"))
