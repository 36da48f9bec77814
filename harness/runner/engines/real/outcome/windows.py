"""The disruption time windows the cluster's objects hold, read from their own timestamps: when each
NodeClaim expires, turns Consolidatable, loses a pod's duration-valued do-not-disrupt protection, or
reaches its terminationGracePeriod. The real engine reads a step's outcome after a settle that runs
in real time (on the run's clock, runclock.py, which an `advance` moves at once); a window that closes
inside that settle, after the step's instant, would put what
the controller did later into the step's verdict (the simulation's settle fires no such timer:
harness/loop/simulation.py advance). The real settle stops at the first such window (engine.py).

Why it is built this way: docs/architecture/real-engine.md."""
from __future__ import annotations

from dataclasses import dataclass

from harness.loop.disruption.budgets import next_allowance_change
from harness.model.kube.kubetime import parse_rfc3339
from harness.model.kube import podtermination
from harness.model.values.durations import scenario_duration

DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"      # core v1.14.0 pkg/apis/v1/labels.go DoNotDisruptAnnotationKey
TERMINATION_AT = "karpenter.sh/nodeclaim-termination-timestamp"   # ... NodeClaimTerminationTimestampAnnotationKey
# an advance's jump stops this long past a clock_stops instant: the controller reads the clock file every 10 ms, and a
# pass that read it a moment before the edge would judge the window as it was (harness assumption: 1 s covers that
# read on a loaded machine, as jobruns.py SCHEDULE_SLACK)
STOP_SLACK = 1.0


@dataclass(frozen=True)
class Window:
    """One window that closes at `at` (seconds since the epoch): what it is, on which object."""
    at: float
    what: str

    def render(self, instant: float) -> str:
        return f"{self.what} closes {self.at - instant:+.1f}s from the step's instant"


def timestamp(text: str | None) -> float | None:
    """An object's RFC 3339 time in seconds since the epoch, or None for none or one that does not parse."""
    if not text:
        return None
    try:
        return parse_rfc3339(text)
    except ValueError:
        return None


def duration(text) -> float | None:
    """A Go duration, or None for Never and an unset one."""
    if text in (None, "", "Never"):
        return None
    try:
        return scenario_duration(text)
    except ValueError:
        return None


def condition(obj: dict, kind: str) -> dict:
    """The object's status condition of that type ({} when it has none)."""
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == kind), {})


def windows(nodeclaims: list[dict], nodepools: list[dict], pods: list[dict]) -> list[Window]:
    """Every window the objects hold, earliest first:
    - expiration: creationTimestamp + spec.expireAfter (core v1.14.0 pkg/controllers/nodeclaim/expiration/
      controller.go Reconcile);
    - consolidateAfter: the last pod event, else the Initialized transition, + the NodePool's
      consolidateAfter, for a NodeClaim not Consolidatable yet (nodeclaim/disruption/consolidation.go);
    - a pod's duration-valued do-not-disrupt: status.startTime + the duration (pkg/utils/pod/scheduling.go
      IsDoNotDisruptActive);
    - terminationGracePeriod: a deleting NodeClaim's termination time (its karpenter.sh/nodeclaim-termination-
      timestamp, else deletionTimestamp + spec.terminationGracePeriod), and for each pod on its Node that
      time less the pod's terminationGracePeriodSeconds, when core deletes the pod whatever blocks it
      (node/termination/terminator/terminator.go DeleteExpiringPods);
    - a terminating pod's containers stopping: its kubelet ends it after its preStop sleep, at the latest at its
      deletionTimestamp (harness/model/kube/podtermination.py stops_at; the simulation's kubelet timer).
    A karpenter.sh/v1beta1 NodeClaim (core v0.36) expires at its creation + its NodePool's
    spec.disruption.expireAfter, and a WhenEmpty NodePool's consolidateAfter counts from its Empty
    condition's transition (sigs.k8s.io/karpenter v0.36.1 pkg/controllers/nodeclaim/disruption/
    expiration.go, emptiness.go; pkg/controllers/disruption/emptiness.go ShouldDisrupt)."""
    after = {np["metadata"]["name"]: duration(((np.get("spec") or {}).get("disruption") or {}).get("consolidateAfter"))
             for np in nodepools}
    pool_expire = {np["metadata"]["name"]: duration(((np.get("spec") or {}).get("disruption") or {}).get("expireAfter"))
                   for np in nodepools}
    out: list[Window] = []
    nodes: dict[str, str] = {}
    ends: dict[str, float] = {}            # a deleting NodeClaim's Node -> its termination time
    for nc in nodeclaims:
        meta, spec, status = nc["metadata"], nc.get("spec") or {}, nc.get("status") or {}
        name = meta["name"]
        if status.get("nodeName"):
            nodes[status["nodeName"]] = name
        deleting = timestamp(meta.get("deletionTimestamp"))
        if deleting is not None:
            grace = duration(spec.get("terminationGracePeriod"))
            end = timestamp((meta.get("annotations") or {}).get(TERMINATION_AT)) or (
                deleting + grace if grace is not None else None)
            if end is not None:
                out.append(Window(end, f"NodeClaim {name}'s terminationGracePeriod"))
                if status.get("nodeName"):
                    ends[status["nodeName"]] = end
            continue
        pool = (meta.get("labels") or {}).get("karpenter.sh/nodepool")
        v1beta1 = str(nc.get("apiVersion") or "").endswith("/v1beta1")
        created = timestamp(meta.get("creationTimestamp"))
        expire = pool_expire.get(pool) if v1beta1 else duration(spec.get("expireAfter"))
        if created is not None and expire is not None:
            out.append(Window(created + expire, f"NodeClaim {name}'s expireAfter"))
        consolidate = after.get(pool)
        initialized = condition(nc, "Initialized")
        if v1beta1:
            empty = condition(nc, "Empty")
            since = timestamp(empty.get("lastTransitionTime")) if empty.get("status") == "True" else None
            if consolidate is not None and since is not None:
                out.append(Window(since + consolidate, f"NodeClaim {name}'s consolidateAfter"))
        elif consolidate is not None and initialized.get("status") == "True" and \
                condition(nc, "Consolidatable").get("status") != "True":
            since = timestamp(status.get("lastPodEventTime")) or timestamp(initialized.get("lastTransitionTime"))
            if since is not None:
                out.append(Window(since + consolidate, f"NodeClaim {name}'s consolidateAfter"))
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        tgps = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
        if node in ends and not pod["metadata"].get("deletionTimestamp"):
            out.append(Window(ends[node] - float(30 if tgps is None else tgps),
                              f"pod {pod['metadata']['name']}'s deletion ahead of its node's terminationGracePeriod"))
        stop = podtermination.stops_at(pod)
        if node and stop is not None and podtermination.prestop_sleep(pod.get("spec") or {}):
            out.append(Window(stop, f"pod {pod['metadata']['name']}'s preStop sleep"))
    out += _do_not_disrupt_ends(nodes, pods)
    return sorted(out, key=lambda w: w.at)


def _do_not_disrupt_ends(nodes, pods: list[dict]) -> list[Window]:
    """When each pod on a NodeClaim's Node stops being protected by a duration-valued do-not-disrupt
    annotation: its status.startTime + the duration (core v1.14.0 pkg/utils/pod/scheduling.go
    IsDoNotDisruptActive)."""
    out = []
    for pod in pods:
        value = ((pod["metadata"].get("annotations") or {}).get(DO_NOT_DISRUPT))
        started = timestamp((pod.get("status") or {}).get("startTime"))
        if value in (None, "true") or started is None or (pod.get("spec") or {}).get("nodeName") not in nodes:
            continue
        grace = duration(value)
        if grace is not None:
            out.append(Window(started + grace, f"pod {pod['metadata']['name']}'s do-not-disrupt: {value}"))
    return out


def clock_stops(nodeclaims: list[dict], nodepools: list[dict], pods: list[dict], after: float,
                until: float) -> float | None:
    """The first instant in (after, until) at which a disruption pass reads something new from the clock alone, where
    an `advance` that moves the run's clock stops and settles, as the simulation's advance does
    (harness/loop/simulation.py _timer_before): a NodePool's budget allowance changing at a schedule window's
    edge (harness/loop/disruption/budgets.py next_allowance_change, over its initialized NodeClaims not InstanceTerminating:
    core v1.14.0 pkg/controllers/disruption/helpers.go BuildDisruptionBudgetMapping), or a pod's duration-valued
    do-not-disrupt ending. STOP_SLACK past it, so the controller reads a clock past the edge."""
    counted: dict[str, int] = {}
    nodes = set()
    for nc in nodeclaims:
        status = nc.get("status") or {}
        if status.get("nodeName"):
            nodes.add(status["nodeName"])
        if condition(nc, "Initialized").get("status") == "True" and \
                condition(nc, "InstanceTerminating").get("status") != "True":
            pool = (nc["metadata"].get("labels") or {}).get("karpenter.sh/nodepool")
            counted[pool] = counted.get(pool, 0) + 1
    times = [w.at for w in _do_not_disrupt_ends(nodes, pods)]
    for np in nodepools:
        name = np["metadata"]["name"]
        if name in counted and (at := next_allowance_change(np, after, until, counted[name])) is not None:
            times.append(at)
    first = min((t for t in times if after < t < until), default=None)
    return None if first is None else min(first + STOP_SLACK, until)


def next_after(all_windows: list[Window], instant: float) -> Window | None:
    """The first window that is still open at `instant` (seconds since the epoch)."""
    return next((w for w in all_windows if w.at > instant), None)
