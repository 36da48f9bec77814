"""`harness new --at T` with T before the dump: the cluster as it stood at T, rebuilt from the dump's own
times, and what came after T as steps, so the run replays the event the ticket describes.

At T: objects created after T are left out (a NodeClaim and its Node are Karpenter's to make again), deletions
after T are undone, conditions that changed after T are taken back, a pod bound after T is pending. After T:
a bare pod or a manifest created then is applied at its creationTimestamp; a Deployment's pods are its own,
its replicas stepped where the dump's ScalingReplicaSet events say it scaled. One step at the dump's time
checks the dump's state there. Why these rules: docs/reproduce-a-ticket.md (Replaying from before the event).
"""
from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from harness.model.kube.kubetime import parse_rfc3339
from harness.model.values.durations import go_duration_text
from harness.model.kube.kubetime import rfc3339 as timestamp
from harness.dump.times import deleted_at
from harness.scenario.yamlsource import SourceError

# the description that marks the step at the dump's time: its `expect` is the dump's state, so a mismatch
# there is the cluster moving on from the snapshot (harness/report/console.py moved_on)
DUMP_STEP = "the dump's time"
LOG_STEP = "the log's end"            # harness/dump/logscenario.py: the step that checks a customer's log
# the Deployment controller's event when it scales a ReplicaSet (k8s.io/kubernetes
# pkg/controller/deployment/sync.go scaleReplicaSet, getNewReplicaSet: "Scaled %s replica set %s from %d to
# %d"; older releases write "Scaled %s replica set %s to %d"; harness assumption: the release that changed
# the wording is not checked, both are read)
SCALED = re.compile(r"^Scaled (?:up|down) replica set (\S+) (?:from (\d+) )?to (\d+)$")
# conditions whose time says when the object reached them; taken back when that is after T
CLAIM_TIMES = ("Launched", "Registered", "Initialized", "Drifted")


@dataclass
class Arrival:
    """A manifest applied by a step at `at` (epoch seconds): a bare pod, an object created after T, or a
    Deployment's replicas where an event says it scaled. Or, with `delete`, an object someone other than
    Karpenter deleted after T (a step's `delete`: the replay cannot make that deletion itself)."""
    at: float
    manifest: dict
    what: str
    delete: dict | None = None


@dataclass
class Moment:
    """The dump rewound to `start`, before its clock `clock`."""
    start: float
    clock: float
    objects: list[tuple[dict, str, int]] = field(default_factory=list)   # as they stood at start
    arrivals: list[Arrival] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    undone: list[str] = field(default_factory=list)
    assumed: list[str] = field(default_factory=list)
    new_nodes: list[dict] = field(default_factory=list)   # NodeClaims (or Karpenter Nodes) made after start


def controller_owner(obj: dict) -> tuple[str, str] | None:
    """(kind, name) of an object's controller (metav1.GetControllerOf; a reference without `controller`
    counts, as a hand-written dump may leave it out)."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller", True):
            return str(ref.get("kind")), str(ref.get("name"))
    return None



def _t(value) -> float | None:
    try:
        return parse_rfc3339(value) if isinstance(value, str) else None
    except ValueError:
        return None


def created(obj: dict) -> float | None:
    return _t((obj.get("metadata") or {}).get("creationTimestamp"))


def event_time(ev: dict) -> float | None:
    """When an Event last happened (core/v1 lastTimestamp, events.k8s.io eventTime, firstTimestamp)."""
    series = (ev.get("series") or {}).get("lastObservedTime")
    for v in (ev.get("lastTimestamp"), series, ev.get("eventTime"), ev.get("firstTimestamp"),
              ev.get("deprecatedLastTimestamp")):
        t = _t(v)
        if t is not None:
            return t
    return None


def check_times(at: str | None, until: str | None, clock: str | None) -> None:
    """--at and --until against the dump's clock: an unparseable time and --until before the dump are
    refused, naming the clock. --at after the dump's newest timestamp is when the dump was taken (its newest
    time may be a pod's start, not a heartbeat): the dump as it is, at that clock."""
    for flag, text in (("--at", at), ("--until", until)):
        if text is not None and _t(text) is None:
            raise SourceError(flag, None, f"{text!r} is not an RFC 3339 time (e.g. 2026-11-20T14:05:00Z)")
    if clock is None:
        return
    end = parse_rfc3339(clock)
    if until is not None and parse_rfc3339(until) <= end:
        raise SourceError("--until", None, f"{until} is not after the dump's clock {clock}: --until carries the run "
                                           "on past the dump; to start before it pass --at TIME")


def rewind(objects: list[tuple[dict, str, int]], at: str, clock: str, manifest_kinds: tuple[str, ...],
           finished: tuple[str, ...], strip: Callable[[dict], dict]) -> Moment | None:
    """The objects as they stood at `at` (before the dump's `clock`), what came after as arrivals, and
    what was left out or undone, named. None when `at` is the dump's own second. The dump's own rules
    come from harness/dump/new.py: which kinds are manifests, which pod phases are finished, and how an
    object is stripped to what a user applies."""
    start, end = parse_rfc3339(at), parse_rfc3339(clock)
    if round(end - start) <= 0:
        return None
    m = Moment(start=start, clock=end)
    kinds = {k: {(o.get("metadata") or {}).get("name") for o, _, _ in objects if o.get("kind") == k}
             for k in ("Deployment", "StatefulSet", "DaemonSet", "Job")}
    late_nodes: set[str] = set()        # NodeClaims made after T take their Node with them
    late_init: set[str] = set()         # ... initialized after T: their Node's label came then too
    for obj, _, _ in objects:
        node_name = str((obj.get("status") or {}).get("nodeName") or "")
        if obj.get("kind") == "NodeClaim" and _after(created(obj), start):
            late_nodes.add(node_name)
        elif obj.get("kind") == "NodeClaim" and any(
                c.get("type") == "Initialized" and _after(_t(c.get("lastTransitionTime")), start)
                for c in (obj.get("status") or {}).get("conditions") or []):
            late_init.add(node_name)
    claimed = {(o.get("status") or {}).get("nodeName") for o, _, _ in objects if o.get("kind") == "NodeClaim"}
    for obj, file, line in objects:
        kind, meta = obj.get("kind"), obj.get("metadata") or {}
        name, born = meta.get("name"), created(obj)
        if kind == "Event":
            if not _after(event_time(obj), start):
                m.objects.append((obj, file, line))
            continue
        if kind == "NodeClaim":
            if _after(born, start):
                m.left_out.append(f"NodeClaim {name} (created {timestamp(born)}): Karpenter makes its own in the "
                                  "replay")
                m.new_nodes.append(obj)
                if _user_delete(obj, start, m, play=False):
                    m.assumed.append(f"NodeClaim {name} was made after the start and deleted by someone other than "
                                     f"Karpenter at {timestamp(_t(meta.get('deletionTimestamp')))}: the replay cannot "
                                     "name the NodeClaim it makes instead, so that delete is not played (an --at "
                                     f"after {timestamp(born)} plays it)")
                continue
            _user_delete(obj, start, m)
            obj = _claim_at(obj, start, m)
        elif kind == "Node":
            if _after(born, start) or name in late_nodes:
                managed = "karpenter.sh/nodepool" in (meta.get("labels") or {})
                m.left_out.append(f"Node {name} (created {timestamp(born) if born else 'with its NodeClaim'})"
                                  + ("" if managed else ": not Karpenter's, the replay does not make it"))
                if managed and name not in claimed:
                    m.new_nodes.append(obj)
                continue
            obj = _node_at(obj, start, m, name in late_init)
        elif kind == "Pod":
            phase = (obj.get("status") or {}).get("phase")
            if _after(born, start):
                owner = controller_owner(obj) or ("", "")
                made_by = {"ReplicaSet": "Deployment", "StatefulSet": "StatefulSet", "DaemonSet": "DaemonSet",
                           "Job": "Job"}.get(owner[0])
                whose = owner[1].rsplit("-", 1)[0] if owner[0] == "ReplicaSet" else owner[1]
                if made_by and whose in kinds[made_by]:
                    m.left_out.append(f"Pod {name} (created {timestamp(born)}): {made_by} {whose} makes it")
                elif phase not in finished:
                    m.arrivals.append(Arrival(born, strip(obj), f"Pod {name}"))
                continue
            obj = _pod_at(obj, start, m)
        elif kind in manifest_kinds:
            if _after(born, start):
                m.arrivals.append(Arrival(born, strip(obj), f"{kind} {name}"))
                continue
            obj = _manifest_at(obj, start, m)
        elif _after(born, start):
            m.left_out.append(f"{kind} {name} (created {timestamp(born)})")
            continue
        m.objects.append((obj, file, line))
    _deployment_replicas(m, objects, strip)
    m.new_nodes.sort(key=lambda o: created(o) or 0.0)
    return m


def _after(t: float | None, start: float) -> bool:
    return t is not None and t > start


def _user_delete(nc: dict, start: float, m: Moment, play: bool = True) -> bool:
    """A NodeClaim deleted after T by someone other than Karpenter becomes a `delete` step at its
    deletionTimestamp, so the replay deletes it too. Karpenter's own deletions leave a mark the replay
    remakes: disruption sets the DisruptionReason condition before it deletes (sigs.k8s.io/karpenter v1.6.2
    pkg/controllers/disruption/queue.go), expiration deletes once expireAfter has passed
    (pkg/controllers/nodeclaim/expiration/controller.go), liveness deletes what never registered. Without one
    of those, the deletion is taken as a user's (`kubectl delete nodeclaim`) and said so. True when it is
    one; `play=False` only answers."""
    meta, status = nc.get("metadata") or {}, nc.get("status") or {}
    deleted = _t(meta.get("deletionTimestamp"))
    if not _after(deleted, start):
        return False
    conds = {c.get("type"): c for c in status.get("conditions") or []}
    expire = (nc.get("spec") or {}).get("expireAfter")
    from harness.model.values.durations import go_duration
    try:
        lifetime = go_duration(expire) if expire and expire != "Never" else None
    except ValueError:
        lifetime = None
    born = created(nc)
    if "DisruptionReason" in conds or (conds.get("Registered") or {}).get("status") != "True" or (
            lifetime is not None and born is not None and born + lifetime <= deleted + 1):
        return False
    if not play:
        return True
    name = meta.get("name")
    m.arrivals.append(Arrival(deleted, {}, f"delete NodeClaim {name}", {"kind": "NodeClaim", "name": name}))
    m.assumed.append(f"NodeClaim {name} deleted at {timestamp(deleted)} with no disruption reason and before its "
                     "expiry: a user's delete, played as a step (drop the step if Karpenter deleted it)")
    return True


def _undo_deletion(obj: dict, start: float, m: Moment) -> dict:
    meta = obj.get("metadata") or {}
    t = _t(meta.get("deletionTimestamp"))
    t = deleted_at(meta, t) if t is not None else None     # the delete's instant, not its grace period's end
    if _after(t, start):
        obj = copy.deepcopy(obj)
        obj["metadata"].pop("deletionTimestamp", None)
        obj["metadata"].pop("deletionGracePeriodSeconds", None)
        m.undone.append(f"{obj.get('kind')} {meta.get('name')} deleted at {timestamp(t)}: not deleting at the start")
    return obj


def _claim_at(nc: dict, start: float, m: Moment) -> dict:
    """A NodeClaim at T: its deletion and the conditions it reached after T taken back (Launched after T:
    no providerID yet), lastPodEventTime after T dropped."""
    nc = _undo_deletion(nc, start, m)
    status = nc.get("status") or {}
    later = [c for c in status.get("conditions") or []
             if c.get("type") in CLAIM_TIMES and c.get("status") == "True"
             and _after(_t(c.get("lastTransitionTime")), start)]
    if not later and not _after(_t(status.get("lastPodEventTime")), start):
        return nc
    nc = copy.deepcopy(nc)
    status = nc["status"]
    gone = {c["type"] for c in later}
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") not in gone]
    if "Launched" in gone:
        status.pop("providerID", None)
    if _after(_t(status.get("lastPodEventTime")), start):
        status.pop("lastPodEventTime")
    for c in sorted(later, key=lambda c: _t(c["lastTransitionTime"]) or 0.0):
        m.undone.append(f"NodeClaim {nc['metadata'].get('name')} {c['type']} at {c['lastTransitionTime']}: not yet at "
                        "the start")
    return nc


def _node_at(node: dict, start: float, m: Moment, initialized_later: bool) -> dict:
    """A Node at T: its deletion after T undone with the disrupted taint that came with it; its
    karpenter.sh/initialized label gone when its NodeClaim was initialized after T."""
    undone = _undo_deletion(node, start, m)
    if undone is not node:
        taints = [t for t in (undone.get("spec") or {}).get("taints") or []
                  if t.get("key") != "karpenter.sh/disrupted"]
        undone.setdefault("spec", {})["taints"] = taints
    if initialized_later and "karpenter.sh/initialized" in ((undone.get("metadata") or {}).get("labels") or {}):
        undone = copy.deepcopy(undone)
        undone["metadata"]["labels"].pop("karpenter.sh/initialized")
    return undone


def _pod_at(pod: dict, start: float, m: Moment) -> dict:
    """A pod at T: its deletion after T undone; bound after T (its PodScheduled condition, else its start):
    pending at T, so the replay schedules it."""
    pod = _undo_deletion(pod, start, m)
    status = pod.get("status") or {}
    scheduled = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"
                      and c.get("status") == "True"), None)
    bound = _t((scheduled or {}).get("lastTransitionTime")) or _t(status.get("startTime"))
    if (pod.get("spec") or {}).get("nodeName") and _after(bound, start):
        pod = copy.deepcopy(pod)
        pod["spec"].pop("nodeName")
        pod["status"] = {"phase": "Pending"}
        m.undone.append(f"Pod {pod['metadata'].get('name')} bound at {timestamp(bound)}: pending at the start")
    elif _after(_t(status.get("startTime")), start):
        pod = copy.deepcopy(pod)
        pod["status"].pop("startTime")
    return pod


def _manifest_at(obj: dict, start: float, m: Moment) -> dict:
    """A workload at T: a Job's or CronJob's kept status time after T dropped (harness/dump/new.py
    KEPT_STATUS), with what it counted."""
    status = obj.get("status") or {}
    late = [k for k in ("startTime", "lastScheduleTime") if _after(_t(status.get(k)), start)]
    if not late:
        return obj
    obj = copy.deepcopy(obj)
    for k in late:
        obj["status"].pop(k)
    if "startTime" in late:
        obj["status"].pop("succeeded", None)
    m.undone.append(f"{obj.get('kind')} {obj['metadata'].get('name')} status.{', status.'.join(late)} after the start: "
                    "dropped")
    return obj


def _deployment_replicas(m: Moment, objects: list[tuple[dict, str, int]], strip: Callable[[dict], dict]) -> None:
    """A Deployment's replicas at T and after: its spec's, unless the dump's ScalingReplicaSet events say it
    scaled after T; then the replicas before the first of them at T, and a step at each. A rollout after T
    (several ReplicaSets scaled) is not replayed: the pods are the dump's template."""
    scaled: dict[str, list[tuple[float, str, int | None, int]]] = {}
    for obj, _, _ in objects:
        inv = obj.get("involvedObject") or obj.get("regarding") or {}
        if obj.get("kind") != "Event" or obj.get("reason") != "ScalingReplicaSet" or inv.get("kind") != "Deployment":
            continue
        hit = SCALED.match(str(obj.get("message") or obj.get("note") or ""))
        t = event_time(obj)
        if hit and _after(t, m.start) and t <= m.clock:
            scaled.setdefault(str(inv.get("name")), []).append(
                (t, hit.group(1), int(hit.group(2)) if hit.group(2) else None, int(hit.group(3))))
    for i, (obj, file, line) in enumerate(m.objects):
        name = (obj.get("metadata") or {}).get("name")
        if obj.get("kind") != "Deployment" or name not in scaled:
            continue
        events = sorted(scaled[name])
        if len({rs for _, rs, _, _ in events}) > 1:
            m.assumed.append(f"Deployment {name}: rolled out after the start (ReplicaSets "
                             f"{', '.join(sorted({rs for _, rs, _, _ in events}))}): not replayed, its pods are the "
                             "dump's template")
            continue
        first = events[0]
        alive = sum(1 for o, _, _ in m.objects if o.get("kind") == "Pod"
                    and (controller_owner(o) or ("", ""))[1] == first[1])
        before = first[2] if first[2] is not None else alive
        at_start = copy.deepcopy(obj)
        at_start.setdefault("spec", {})["replicas"] = before
        m.objects[i] = (at_start, file, line)
        for t, _, _, to in events:
            scaled_obj = strip(obj)
            scaled_obj["spec"]["replicas"] = to
            m.arrivals.append(Arrival(t, scaled_obj, f"Deployment {name} replicas {to}"))
        m.undone.append(f"Deployment {name}: {before} replicas at the start (ScalingReplicaSet events after it)")


def node_expectations(m: Moment, entries: list[dict], nodeclaims: list[dict], nodes: list[dict]) -> list[dict]:
    """The dump's Karpenter nodes at its time, by index in launch order: the nodes seeded at T first (as
    harness/dump/new.py dumped_node_expectations counts them), then those made after T by creation.
    A node made in the replay is not held to the dump's zone (Karpenter picks among the offerings)."""
    claims = {(nc.get("metadata") or {}).get("name"): nc for nc in nodeclaims}
    nodes = {(n.get("metadata") or {}).get("name"): n for n in nodes}
    seeded = [e for e in entries if e.get("registered", True)] + [e for e in entries if not e.get("registered", True)]
    out = []
    for i, entry in enumerate(seeded):
        if not entry.get("nodePool") or not entry.get("registered", True):
            continue
        nc = claims.get(entry.get("nodeClaim"))
        node = nodes.get(((nc or {}).get("status") or {}).get("nodeName"))
        want = {"index": i, "nodePool": entry["nodePool"], "instanceType": entry["instanceType"]}
        if entry.get("zone"):
            want["zone"] = entry["zone"]
        out.append(want | _state(nc, node, entry))
    for k, obj in enumerate(m.new_nodes):
        labels = (obj.get("metadata") or {}).get("labels") or {}
        node = nodes.get((obj.get("status") or {}).get("nodeName")) if obj.get("kind") == "NodeClaim" else obj
        want = {"index": len(seeded) + k, "nodePool": labels.get("karpenter.sh/nodepool"),
                "instanceType": labels.get("node.kubernetes.io/instance-type")}
        if want["nodePool"] and want["instanceType"]:
            out.append(want | _state(obj if obj.get("kind") == "NodeClaim" else None, node, {}))
    return out


def _state(nc: dict | None, node: dict | None, entry: dict) -> dict:
    """There at the dump's time, deleting or not, drifted or not, as the dump shows it (the entry's own
    state for a Node without a NodeClaim)."""
    if nc is None and node is None:
        return {"deleted": False, "deleting": bool(entry.get("deleting")), "drifted": bool(entry.get("drifted"))}
    deleting = any((o or {}).get("metadata", {}).get("deletionTimestamp") for o in (nc, node))
    drifted = any(c.get("type") == "Drifted" and c.get("status") == "True"
                  for c in ((nc or {}).get("status") or {}).get("conditions") or [])
    return {"deleted": False, "deleting": bool(deleting), "drifted": drifted}


def pods_on_new_nodes(m: Moment, expect: dict, pods: list[dict], first_new: int) -> None:
    """A bare pod the dump shows on a node made after T is expected on that node (its index)."""
    index = {str((o.get("status") or {}).get("nodeName") if o.get("kind") == "NodeClaim"
                 else o["metadata"].get("name")): first_new + k for k, o in enumerate(m.new_nodes)}
    for pod in pods:
        name, node = pod["metadata"]["name"], (pod.get("spec") or {}).get("nodeName")
        if node in index and not controller_owner(pod) and (expect.get("pods") or {}).get(name) == {"scheduled": True}:
            expect["pods"][name] = {"scheduled": True, "node": index[node]}


def steps(start: float, arrivals: list[Arrival], dump_check: tuple[float, dict] | None,
          marks: list[tuple[float, str]]) -> tuple[list[dict], list[str]]:
    """The steps from `start`: arrivals grouped by second, each an `advance` from the step before and an
    `apply`; the dump's check at its time (`expect`); each mark (the log's last decision, --until) an
    `advance`. And a note per step with its offset and UTC time."""
    from harness.loop.history import offset_text
    at: dict[int, dict] = {}
    for a in sorted(arrivals, key=lambda a: a.at):
        slot = at.setdefault(max(1, round(a.at - start)), {"apply": [], "delete": [], "what": []})
        if a.delete:
            slot["delete"].append(a.delete)
        else:
            slot["apply"].append(a.manifest)
        slot["what"].append(a.what)
    if dump_check:
        at.setdefault(round(dump_check[0] - start), {})["expect"] = dump_check[1]
    for t, why in marks:
        at.setdefault(round(t - start), {}).setdefault("marks", []).append(why)
    out, notes, prev = [], [], 0
    for offset in sorted(at):
        slot = at[offset]
        when = timestamp(start + offset)
        words = ([f"apply {', '.join(w for w in slot['what'] if not w.startswith('delete '))}"]
                 if slot.get("apply") else []) + [w for w in slot.get("what", []) if w.startswith("delete ")] \
            + slot.get("marks", [])
        check = [f"{DUMP_STEP}: what the dump shows is checked here"] if "expect" in slot else []
        said = ([f"{DUMP_STEP} ({when}): what the dump shows is checked here"] if check else []) + words
        step: dict = {"description": "; ".join(said), "advance": go_duration_text(offset - prev)}
        if slot.get("delete"):
            step["delete"] = slot["delete"]
        if slot.get("apply"):
            step["apply"] = slot["apply"]
        if "expect" in slot:
            step["expect"] = slot["expect"]
        out.append(step)
        notes.append(f"steps: {offset_text(offset)} ({when}) " + "; ".join(check + words))
        prev = offset
    return out, notes


def notes(m: Moment) -> list[str]:
    """What the rewind did, counted and named."""
    from harness.loop.history import offset_text
    out = [(f"replaying from {timestamp(m.start)}, {offset_text(m.clock - m.start)[1:]} before the dump's clock "
            f"{timestamp(m.clock)}: the start is the dump as it stood then")]
    for title, items in (("left out (created after the start)", m.left_out),
                         ("undone (after the start)", m.undone),
                         ("moved to steps (after the start)", [a.what + f" at {timestamp(a.at)}"
                                                               for a in m.arrivals]),
                         ("assumed", m.assumed)):
        if items:
            out.append(f"{title}: {len(items)}: " + "; ".join(items))
    return out


def start_expect(expect: dict, manifests: list[dict]) -> dict:
    """What is checked at the start of a replay: the NodePools there then are accepted (the rest is the
    dump's, at its time)."""
    there = {m["metadata"]["name"] for m in manifests if m.get("kind") == "NodePool"}
    pools = {n: {"accepted": True} for n in (expect.get("nodePools") or {}) if n in there}
    return {"nodePools": pools} if pools else {}


def dump_roots(scenario) -> tuple[str, ...]:
    """Where a scenario made from a dump states the dump: `expect`, and the step at the dump's time when
    `harness new --at` replays from before it (from a log: the step at the log's end)."""
    return ("expect.",) + tuple(f"steps[{i}].expect." for i, step in enumerate(scenario.steps)
                                if str(step.get("description") or "").startswith((DUMP_STEP, LOG_STEP)))


__all__ = [
    "DUMP_STEP",
    "LOG_STEP",
    "Arrival",
    "Moment",
    "check_times",
    "controller_owner",
    "dump_roots",
    "node_expectations",
    "notes",
    "pods_on_new_nodes",
    "rewind",
    "start_expect",
    "steps",
]
