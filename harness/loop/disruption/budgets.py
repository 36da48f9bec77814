"""A NodePool's disruption settings with the CRD's defaults, and its disruption budgets.

- Defaults (sigs.k8s.io/karpenter v1.14.0 pkg/apis/crds/karpenter.sh_nodepools.yaml): spec.disruption
  defaults to {consolidateAfter: 0s}, consolidationPolicy to WhenEmptyOrUnderutilized, budgets to
  [{nodes: 10%}]; spec.template.spec.expireAfter to 720h. The embedded API server stores a NodePool
  as written, so the loop applies them when it reads one (a real API server has already).
- Budgets (pkg/apis/v1/nodepool.go GetAllowedDisruptionsByReason, Budget.GetAllowedDisruptions,
  Budget.IsActive, GetIntStrFromValue): the smallest allowance of the active budgets that apply to
  the reason (a budget without reasons applies to all); a percentage rounds up; a schedule is a cron
  in UTC active for `duration` after each hit; an invalid budget fails closed (0).
- Window edges: when an allowance changes with the clock alone (a window opening or closing), the instant a
  step's `advance` fires a pass at (harness/loop/simulation.py Simulation._timer_before).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from harness.model.values.cron import CronError, parse_nillable, parse_schedule
from harness.model.values.durations import crd_duration

MAX_INT32 = 2 ** 31 - 1
# the reasons a budget names (sigs.k8s.io/karpenter v1.0.6 pkg/apis/v1/nodepool.go WellKnownDisruptionReasons, the
# same three at v1.14.0)
DISRUPTION_REASONS = ("Underutilized", "Empty", "Drifted")
# window edges next_allowance_change walks past that change no allowance before it hands back an edge anyway
# (harness bound: a per-minute window under a smaller budget would otherwise be walked for a whole advance)
MAX_QUIET_EDGES = 500
DEFAULT_EXPIRE_AFTER = "720h"
WHEN_EMPTY = "WhenEmpty"
WHEN_EMPTY_OR_UNDERUTILIZED = "WhenEmptyOrUnderutilized"
BALANCED = "Balanced"


@dataclass(frozen=True)
class DisruptionSpec:
    consolidation_policy: str
    consolidate_after: float | None          # None: Never (consolidation disabled)
    budgets: tuple[dict, ...]


def disruption_spec(nodepool: dict) -> DisruptionSpec:
    d = (nodepool.get("spec") or {}).get("disruption")
    if d is None:
        d = {"consolidateAfter": "0s"}
    after = d.get("consolidateAfter", "0s")
    try:
        after_s = parse_nillable(after)
    except ValueError:
        after_s = 0.0
    budgets = d.get("budgets")
    if budgets is None:
        budgets = [{"nodes": "10%"}]
    return DisruptionSpec(str(d.get("consolidationPolicy") or WHEN_EMPTY_OR_UNDERUTILIZED), after_s,
                          tuple({"nodes": "10%", **b} for b in budgets))


def template_spec(nodepool: dict) -> dict:
    return ((nodepool.get("spec") or {}).get("template") or {}).get("spec") or {}


def expire_after(nodepool_or_claim_spec: dict) -> float | None:
    """A NodeClaim (template) spec's expireAfter in seconds; None for Never."""
    value = nodepool_or_claim_spec.get("expireAfter", DEFAULT_EXPIRE_AFTER)
    try:
        return parse_nillable(value)
    except ValueError:
        return None


def lifetime_remaining(claim_spec: dict, created_at: float, now: float) -> float:
    """The share of a NodeClaim's expireAfter still ahead of it, 0..1 (1 without expiry): core v1.14.0
    pkg/utils/disruption/disruption.go LifetimeRemaining, the factor on a candidate's eviction cost."""
    ttl = expire_after(claim_spec)
    if ttl is None or ttl <= 0:
        return 1.0
    return min(max((ttl - (now - created_at)) / ttl, 0.0), 1.0)


def termination_grace_period(spec: dict) -> float | None:
    value = spec.get("terminationGracePeriod")
    if value is None:
        return None
    try:
        return crd_duration(str(value))
    except ValueError:
        return None


def nodes_value(nodes: str, num_nodes: int) -> int:
    """GetIntStrFromValue + intstr.GetScaledValueFromIntOrPercent(roundUp=true)."""
    text = str(nodes)
    if text.lstrip("-").isdigit():
        return int(text)
    if text.endswith("%") and text[:-1].isdigit():
        return math.ceil(int(text[:-1]) * num_nodes / 100)
    raise ValueError("invalid value for IntOrString: invalid type: string is not a percentage")


def budget_active(budget: dict, now: float) -> bool:
    """Budget.IsActive: raises CronError for an invalid schedule."""
    schedule, duration = budget.get("schedule"), budget.get("duration")
    if schedule is None and duration is None:
        return True
    sched = parse_schedule(str(schedule or ""))
    dur = crd_duration(str(duration)) if duration is not None else 0.0
    hit = sched.next(now - dur)
    return hit is None or not hit > now


def window_edge(budget: dict, after: float) -> float | None:
    """The first instant after `after` at which Budget.IsActive turns: a hit of the schedule (the window opens)
    or a hit plus the duration (it closes). None without a schedule, for an invalid one, or none within the
    cron's five years."""
    schedule, duration = budget.get("schedule"), budget.get("duration")
    if schedule is None:
        return None
    try:
        sched = parse_schedule(str(schedule))
        dur = crd_duration(str(duration)) if duration is not None else 0.0
    except (CronError, ValueError):
        return None
    edges = [sched.next(after)]
    hit = sched.next(after - dur)            # the window that is open now, or the next one
    if hit is not None:
        edges.append(hit + dur)
    return min((e for e in edges if e is not None and e > after), default=None)


def next_allowance_change(nodepool: dict, now: float, end: float, num_nodes: int) -> float | None:
    """The first window edge in (now, end) at which the NodePool's allowance for some reason differs from the
    one before it (an edge another, smaller budget hides changes nothing a pass reads); None when none does."""
    budgets = [b for b in disruption_spec(nodepool).budgets if b.get("schedule") is not None]
    if not budgets:
        return None

    def allowances(t: float) -> tuple:
        return tuple(allowed_disruptions(nodepool, t, num_nodes, r) for r in DISRUPTION_REASONS)

    before, t = allowances(now), now
    for _ in range(MAX_QUIET_EDGES):
        t = min((e for b in budgets if (e := window_edge(b, t)) is not None), default=end)
        if t >= end:
            return None
        at = allowances(t)
        if at != before:
            return t
        before = at
    return t


def allowed_disruptions(nodepool: dict, now: float, num_nodes: int, reason: str) -> tuple[int, str | None]:
    """GetAllowedDisruptionsByReason: (allowed, error text) - a misconfigured budget allows 0."""
    allowed, err = MAX_INT32, None
    for b in disruption_spec(nodepool).budgets:
        try:
            value = nodes_value(b.get("nodes", "10%"), num_nodes) if budget_active(b, now) else MAX_INT32
        except (CronError, ValueError) as e:
            value, err = 0, str(e)
        reasons = b.get("reasons")
        if reasons is None or reason in reasons:
            allowed = min(allowed, value)
    return allowed, err


def must_allowed_disruptions(nodepool: dict, now: float, num_nodes: int, reason: str) -> int:
    """NodePool.MustGetAllowedDisruptions: any budget error makes it 0."""
    allowed, err = allowed_disruptions(nodepool, now, num_nodes, reason)
    return 0 if err is not None else allowed
