"""A run's facts over time, on one axis: each NodeClaim from creation through launch, registration and
initialization to its disruption or deletion (instance type, zone, capacity type, price, and why it
went), each pod from creation to its bind (and its eviction), the events the run emitted, and the
disruption controllers' steps. Times are offsets from the run's start and UTC (ISO 8601).

Read from a finished RunResult (harness/loop/result.py); `harness run --json`, `--details` and the run
report (harness/report/runpage.py) show it. The phases stand for core's NodeClaim status conditions
Launched, Registered, Initialized (sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/nodeclaim_status.go).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from harness.model.kube.kubetime import rfc3339

CLAIM_PHASES = ("created", "launched", "registered", "initialized", "disrupting", "deleted")
# a disruption record's method (core's ConsolidationType: "empty", "single", "multi"; drift and expiration;
# the garbage collector's "garbage-collection", a spot eviction among them: sigs.k8s.io/karpenter v1.14.0
# pkg/controllers/disruption/*.go ConsolidationType, harness/loop/disruption/controller.py
# record_garbage_collected; node repair's "repair", loop/lifecycle/health.py) as the report says how a NodeClaim went
WENT = {"empty": "emptiness", "single": "consolidation", "multi": "consolidation (multi-node)",
        "garbage-collection": "garbage collection", "repair": "node repair"}
_TRACE_TIME = re.compile(r"^\[t=(?P<t>[0-9.]+)s(?:\.\.(?P<u>[0-9.]+)s)?\]")   # fold_trace writes t=A..Bs


def utc(t: float) -> str:
    return rfc3339(t)


def offset_text(seconds: float) -> str:
    """`+0s`, `+45s`, `+2m05s`, `+10m`, `+1h02m`, `+3d04h`, `+30d`: a duration as a person reads it (two
    units at most, a zero second unit left out)."""
    s = int(round(seconds))
    sign, s = ("-", -s) if s < 0 else ("+", s)
    days, rest = divmod(s, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    for big, unit, small, small_unit in ((days, "d", hours, "h"), (hours, "h", minutes, "m"),
                                         (minutes, "m", secs, "s")):
        if big:
            return f"{sign}{big}{unit}" + (f"{small:02d}{small_unit}" if small else "")
    return f"{sign}{secs}s"


@dataclass(frozen=True)
class Moment:
    offset: float           # seconds since the run's start
    utc: str                # ISO 8601

    @staticmethod
    def of(t: float, start: float) -> "Moment":
        return Moment(round(t - start, 3), utc(t))

    @property
    def text(self) -> str:
        return f"{offset_text(self.offset)} ({self.utc})"

    def to_json(self) -> dict:
        return {"offset": self.offset, "offsetText": offset_text(self.offset), "utc": self.utc}


@dataclass
class ClaimSpan:
    nodeclaim: str
    nodepool: str
    node: str | None = None
    instance_type: str | None = None
    zone: str | None = None
    capacity_type: str | None = None
    price: float | None = None
    phases: dict[str, Moment] = field(default_factory=dict)   # CLAIM_PHASES present, in that order
    went: str | None = None            # how it went: drift, consolidation, expiration, emptiness, ... (WENT)
    method: str | None = None          # the disruption record's method, as recorded (single, multi, empty, ...)
    reason: str | None = None          # the disruption reason (Drifted, Underutilized, ...) or why it was deleted
    replaced_by: list[str] = field(default_factory=list)
    failure: str | None = None         # a launch failure or the API server's refusal


@dataclass
class PodSpan:
    pod: str                           # namespace/name
    owner: str | None
    state: str
    node: str | None                   # the node it ran on (also after an eviction)
    created: Moment | None = None
    bound: Moment | None = None
    deleted: Moment | None = None
    reason: str | None = None


@dataclass
class EventMark:
    at: Moment | None
    kind: str
    name: str
    reason: str
    message: str
    namespace: str | None = None


@dataclass
class DisruptionStep:
    at: Moment
    nodeclaim: str
    node: str
    action: str
    detail: str = ""


@dataclass
class History:
    start: str                         # the run's start, UTC
    end: Moment                        # the latest time anything happened
    claims: list[ClaimSpan] = field(default_factory=list)
    pods: list[PodSpan] = field(default_factory=list)
    events: list[EventMark] = field(default_factory=list)
    steps: list[DisruptionStep] = field(default_factory=list)

    def to_json(self) -> dict:
        """camelCase keys, as the rest of `harness run --json`; each moment as offset, offsetText, utc."""
        def conv(v):
            if isinstance(v, Moment):
                return v.to_json()
            if isinstance(v, dict):
                return {k: conv(x) for k, x in v.items()}
            if isinstance(v, list):
                return [conv(x) for x in v]
            if hasattr(v, "__dataclass_fields__"):
                return {_camel(f): conv(getattr(v, f)) for f in v.__dataclass_fields__}
            return v
        return {"start": self.start, "end": conv(self.end), "nodeClaims": conv(self.claims), "pods": conv(self.pods),
                "events": conv(self.events), "steps": conv(self.steps)}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.title() for w in rest)


def price_of(result, instance_type: str, zone: str, capacity_type: str) -> float | None:
    """The offering's price as the provider priced it (the simulation's instance types; None where the
    run has none, e.g. the real engine)."""
    it = (result.instance_types or {}).get(instance_type)
    for o in getattr(it, "offerings", None) or []:
        if o.zone == zone and o.capacity_type == capacity_type:
            return o.price
    return None


def history(result) -> History:
    """The run's timeline. A run without recorded times (the real engine reads its results back)
    gets spans without moments."""
    start = result.started
    if start is None:
        times = [t for c in result.nodeclaims for t in c.at.values()] + [e["t"] for e in result.events if "t" in e]
        start = min(times, default=0.0)
    latest = [start]

    def at(t: float | None) -> Moment | None:
        if t is None:
            return None
        latest.append(t)
        return Moment.of(t, start)

    nodes = {n.nodeclaim: n for n in result.nodes if n.nodeclaim}
    records = {d["nodeClaim"]: d for d in result.disruptions}
    tainted = {}
    for t in result.timeline:
        if t["action"] in ("tainted", "deleting") and t["nodeClaim"] not in tainted:
            tainted[t["nodeClaim"]] = t["t"]
    claims = []
    for c in result.nodeclaims:
        span = ClaimSpan(c.name, c.nodepool, node=c.node)
        n = nodes.get(c.name)
        if n is not None:
            span.instance_type, span.zone, span.capacity_type = n.instance_type, n.zone, n.capacity_type
            span.price = price_of(result, n.instance_type, n.zone, n.capacity_type)
        times = dict(c.at)
        if c.name in tainted:
            times["disrupting"] = tainted[c.name]
        span.phases = {p: at(times[p]) for p in CLAIM_PHASES if p in times}
        rec = records.get(c.name)
        if rec is not None:
            span.method, span.reason = rec.get("method") or None, rec.get("reason") or c.deleted
            span.went = WENT.get(span.method, span.method)
            span.replaced_by = [r["nodeClaim"] for r in rec.get("replacements") or []]
        elif c.deleted:
            span.reason = c.deleted
        if c.rejected:
            span.failure = f"refused by the API server: {c.rejected}"
        elif c.failure and str(c.failure.get("message")).lower() not in (span.reason or "").lower():
            span.failure = f"{c.failure.get('reason')}: {c.failure.get('message')}"      # unless the reason says it
        claims.append(span)
    pods = []
    for key, p in sorted(result.pods.items(), key=lambda kv: (kv[1].at.get("created", 0.0), kv[0])):
        if p.owner_kind == "DaemonSet":
            continue
        node = p.node or next((n.name for n in result.nodes if key in n.pods), None)
        pods.append(PodSpan(key, f"{p.owner_kind}/{p.owner_name}" if p.owner_kind else None, p.state, node,
                            at(p.at.get("created")), at(p.at.get("bound")), at(p.at.get("deleted")),
                            p.reason if p.state != "scheduled" else None))
    events = [EventMark(at(e.get("t")), e["kind"], e["name"], e["reason"], e["message"], e.get("namespace"))
              for e in result.events if e["kind"] != "Log"]
    steps = [DisruptionStep(at(t["t"]), t["nodeClaim"], t["node"], t["action"], t.get("detail") or "")
             for t in result.timeline]
    return History(utc(start), Moment.of(max(latest), start), claims, pods, events, steps)


def human_trace(line: str, start: float | None) -> str:
    """A trace line's `[t=<epoch>s]` as `[+1m30s 2026-01-01T00:01:30Z]` (a folded `t=A..Bs` as both ends)."""
    m = _TRACE_TIME.match(line)
    if m is None or start is None:
        return line
    ends = [float(m["t"])] + ([float(m["u"])] if m["u"] else [])
    return "[" + "..".join(f"{offset_text(t - start)} {utc(t)}" for t in ends) + "]" + line[m.end():]


def timeline_lines(h: History) -> list[str]:
    """The disruption steps and the events, merged in time order, one a line (the console's view)."""
    rows = [(s.at.offset, 0, i, f"{s.at.text}  {s.action} NodeClaim {s.nodeclaim}"
             + (f" (Node {s.node})" if s.node else "") + (f": {s.detail}" if s.detail else ""))
            for i, s in enumerate(h.steps)]
    rows += [(e.at.offset if e.at else 0.0, 1, i,
              f"{e.at.text if e.at else '(no time)'}  event {e.kind}/"
              + (f"{e.namespace}/" if e.namespace else "") + f"{e.name} {e.reason}: {e.message}")
             for i, e in enumerate(h.events)]
    return [text for *_, text in sorted(rows)]


def claim_lines(h: History) -> list[str]:
    """Each NodeClaim's life, one a line."""
    out = []
    for c in h.claims:
        what = " ".join(x for x in (c.instance_type, c.zone, c.capacity_type) if x)
        price = f" ${c.price:.4f}/h" if c.price is not None else ""
        groups: list[tuple[list[str], Moment]] = []        # phases reached at one moment read as one
        for p, m in c.phases.items():
            if groups and groups[-1][1] == m:
                groups[-1][0].append(p)
            else:
                groups.append(([p], m))
        phases = ", ".join(f"{'/'.join(ps)} {m.text}" for ps, m in groups)
        line = f"NodeClaim {c.nodeclaim} ({c.nodepool}{': ' + what if what else ''}{price}): {phases or 'no times'}"
        if c.reason:
            line += f"; went: {c.went + ' ' if c.went else ''}({c.reason})"
        if c.replaced_by:
            line += f"; replaced by {', '.join(c.replaced_by)}"
        if c.failure:
            line += f"; {c.failure}"
        out.append(line)
    return out

