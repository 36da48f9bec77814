"""Times a dump implies rather than states, for `harness new` (harness/dump/new.py).

- Which object and field set the clock: the newest timestamp of the input (`newest_source`), named so a
  clock older than the dump (a Sunday heartbeat in a Monday dump) shows where it came from.
- A NodeClaim's `status.lastPodEventTime` where the dump lacks it (`last_pod_event`): core stamps it when a
  pod binds to the NodeClaim's node, turns terminal or starts terminating, DaemonSet pods aside
  (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodeclaim/podevents/controller.go Reconcile and its
  UpdateFunc predicate), so the newest such moment of the node's pods stands in for it.
"""
from __future__ import annotations

from dataclasses import dataclass

from harness.model.kube.kubetime import parse_rfc3339
from harness.model.kube.kubetime import rfc3339
from harness.scenario.notices import ObjectNote

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


def newest_source(objects: list[tuple[dict, str, int]], fields: tuple[str, ...],
                  parsed: dict[str, float | None] | None = None) -> TimeSource | None:
    """The latest timestamp any object holds in `fields` (at any depth), with the object and field path;
    the first object wins a tie (input order). `parsed` keeps each timestamp text read (Newest)."""
    newest = Newest(fields, parsed)
    for entry in objects:
        newest.see(entry)
    return newest.source()


class Newest:
    """The newest timestamp of the objects seen, one object at a time, so that `harness new`'s one pass over a
    dump's objects reads each object's other facts while it is at hand (dump.split). The objects are scanned
    without paths; only the winning one is walked again to name the field (a dump of 5,000 nodes holds
    millions of values). `parsed`: each timestamp text read -> epoch seconds (None when not a time), kept for
    the passes after this one."""

    def __init__(self, fields: tuple[str, ...], parsed: dict[str, float | None] | None = None) -> None:
        self.fields = fields
        self.keys = frozenset(fields)     # each of the millions of strings' keys looked up, not compared
        self.parsed = {} if parsed is None else parsed
        self.best: float | None = None
        self.winner: tuple[dict, str, int] | None = None

    def at_of(self, text: str) -> float | None:
        parsed = self.parsed
        if text not in parsed:
            try:
                parsed[text] = parse_rfc3339(text)
            except ValueError:
                parsed[text] = None
        return parsed[text]

    def see(self, entry: tuple[dict, str, int]) -> None:
        keys, at_of, best = self.keys, self.at_of, self.best
        winner = None
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
                            if at is not None and k == "deletionTimestamp":
                                at = deleted_at(node, at)
                            if at is not None and (best is None or at > best):
                                best, winner = at, entry
                    elif (type(v) is dict or type(v) is list) and k != "managedFields":
                        stack.append(v)
            else:
                stack.extend(v for v in node if type(v) is dict or type(v) is list)
        if winner is not None:
            self.best, self.winner = best, winner

    def source(self) -> TimeSource | None:
        return _named_source(self.winner, self.fields, self.at_of) if self.winner else None


def deleted_at(meta: dict, deadline: float) -> float:
    """When a delete was asked for: an object's metadata.deletionTimestamp is the end of its grace period (the
    delete's instant plus deletionGracePeriodSeconds, k8s.io/kubernetes v1.36.3 pkg/registry/core/pod/strategy.go
    CheckGracefulDelete), a time still to come when the dump was taken; the instant is what the dump saw."""
    grace = meta.get("deletionGracePeriodSeconds")
    try:
        return deadline - int(grace) if grace else deadline
    except (TypeError, ValueError):
        return deadline


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
                at, text = at_of(v), v
                if at is not None and k == "deletionTimestamp" and isinstance(node, dict) and deleted_at(node, at) != at:
                    at = deleted_at(node, at)
                    text = rfc3339(at)
                    here = f"{here} less {path + '.' if path else ''}deletionGracePeriodSeconds (the delete)"
                if at is not None and (best is None or at > best[0]):
                    best = (at, TimeSource(text, str(obj.get("kind")), str(meta.get("name")), here, file, line))
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


def _reader(times: dict[str, float | None] | None):
    """parse_rfc3339 through `times` (a text -> epoch seconds, or None when not a time: newest_source's), so a
    pass after the newest timestamp's parses no timestamp twice."""
    if times is None:
        return parse_rfc3339

    def parse(text: str) -> float:
        t = times.get(text, _UNREAD)
        if t is _UNREAD:
            try:
                t = parse_rfc3339(text)
            except ValueError:
                t = None
            times[text] = t
        if t is None:
            raise ValueError(f"{text!r} is not an RFC 3339 time")
        return t
    return parse


_UNREAD = object()


def pod_events(pod: dict, times: dict[str, float | None] | None = None) -> list[tuple[str, str]]:
    """(time, what) of each moment core's podevents controller reacts to that the pod's status dates:
    bound (its PodScheduled condition, else status.startTime), terminating (the delete: the
    deletionTimestamp less the grace period the API server added), terminal (its containers' last finish).
    `times`: the timestamps read already (_reader)."""
    parse = _reader(times)
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
            at = deleted_at(meta, parse(str(meta["deletionTimestamp"])))
            out.append((rfc3339(at), "deletion"))      # as the API server writes a metav1.Time
        except ValueError:
            pass
    if status.get("phase") in ("Succeeded", "Failed"):
        done = [str(((cs.get("state") or {}).get("terminated") or {}).get("finishedAt") or "")
                for cs in status.get("containerStatuses") or []]
        done = [d for d in done if d]
        if done:
            out.append((max(done, key=parse), f"{status['phase']} (containers finished)"))
    return out


def last_pod_event(node: str, pods: list[dict], times: dict[str, float | None] | None = None) -> tuple[str, str] | None:
    """(time, which pod and moment) of the newest pod event on `node`, or None."""
    parse = _reader(times)
    best = None
    for pod in pods:
        if (pod.get("spec") or {}).get("nodeName") != node or _owned_by_daemonset(pod):
            continue
        found = _newest_event(pod, times, parse)
        if found is not None and (best is None or found[0] > best[0]):
            best = found
    return (best[1], best[2]) if best else None


def _newest_event(pod: dict, times: dict[str, float | None] | None, parse) -> tuple[float, str, str] | None:
    """(epoch seconds, time, which pod and moment) of the pod's newest event (the first of equal ones)."""
    best = None
    for at, what in pod_events(pod, times):
        try:
            t = parse(at)
        except ValueError:
            continue
        if best is None or t > best[0]:
            best = (t, at, what)
    return (best[0], best[1], f"Pod {pod['metadata'].get('name')}'s {best[2]}") if best else None


class NodePodEvents:
    """Each node's newest pod event (last_pod_event), gathered pod by pod in `harness new`'s one pass over the
    dump's objects (dump.split), while each pod is at hand: the kept pods first, then the finished ones, the
    order infer_last_pod_events reads them in. A node one of whose pods' events cannot be read (raised) is
    left to last_pod_event, which says why as it did."""

    def __init__(self, times: dict[str, float | None]) -> None:
        self.times = times
        self.parse = _reader(times)
        self.kept: dict[str, tuple[float, str, str]] = {}        # node -> (t, time text, which pod and moment)
        self.finished: dict[str, tuple[float, str, str]] = {}
        self.unread: set[str] = set()

    def see(self, pod: dict, node: str, finished: bool) -> None:
        """`pod`, bound to `node` (spec.nodeName)."""
        try:
            if _owned_by_daemonset(pod):
                return
            best = _newest_event(pod, self.times, self.parse)
            if best is None:
                return
        except Exception:  # noqa: BLE001 (last_pod_event reads the node again, and raises as it did)
            self.unread.add(node)
            return
        table = self.finished if finished else self.kept
        now = table.get(node)
        if now is None or best[0] > now[0]:
            table[node] = best

    def last(self, node: str) -> tuple[str, str] | None:
        """last_pod_event(node, the node's pods)."""
        kept, finished = self.kept.get(node), self.finished.get(node)
        best = finished if finished is not None and (kept is None or finished[0] > kept[0]) else kept
        return (best[1], best[2]) if best else None


def _on_node(pods: list[dict]) -> dict[str, list[dict]]:
    """Each node's pods, found once (a dump holds thousands of each)."""
    on_node: dict[str, list[dict]] = {}
    for pod in pods:
        node_name = (pod.get("spec") or {}).get("nodeName")
        if isinstance(node_name, str):
            on_node.setdefault(node_name, []).append(pod)
    return on_node


def infer_last_pod_events(nodeclaims: list[dict], pods: list[dict], entries: list[dict], notes: list[str],
                          times: dict[str, float | None] | None = None, events: NodePodEvents | None = None) -> None:
    """Give each seeded NodeClaim the dump sent without `status.lastPodEventTime` the newest pod event of
    its node (consolidateAfter counts from it), and say so. `times`: the timestamps read already (_reader);
    `events`: each node's, gathered from `pods` as the dump was split."""
    by_name = {e.get("nodeClaim"): e for e in entries if e.get("nodeClaim")}
    on_node = None if events is not None else _on_node(pods)
    for nc in nodeclaims:
        name = (nc.get("metadata") or {}).get("name")
        entry, node = by_name.get(name), (nc.get("status") or {}).get("nodeName")
        if entry is None or not node or entry.get("lastPodEventTime"):
            continue
        if events is not None and isinstance(node, str) and node not in events.unread:
            found = events.last(node)
        else:
            if on_node is None:
                on_node = _on_node(pods)
            found = last_pod_event(node, on_node.get(node, []) if isinstance(node, str) else pods, times)
        if found is None:
            continue
        entry["lastPodEventTime"] = found[0]
        why = "(Karpenter stamps it when a pod binds, ends or starts terminating; consolidateAfter counts from it)"
        notes.append(ObjectNote(f"NodeClaim {name}: no status.lastPodEventTime; taken as {found[0]}, {found[1]} on "
                                f"its node {node} {why}", str(name), ("lastPodEventTime",), "", "NodeClaims",
                                ": no status.lastPodEventTime; each taken as the newest pod event on its node, as "
                                f"given.existingNodes[].lastPodEventTime {why}"))
