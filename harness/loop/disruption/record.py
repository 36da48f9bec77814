"""The disruption side's decision record (harness/loop/decisions.py): what a disruption pass, the
orchestration queue and termination say about a NodeClaim, pass by pass, and the words they say it in.

A pass looks at every candidate again, so a candidate's status is recorded only when it changes from the
previous pass for that (candidate, method), as `Cluster.protect` keeps one entry per protection: a
1,000-node cluster's hundreds of passes record what changed, not every pass. Budget arithmetic follows core's
BuildDisruptionBudgetMapping (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/disruption/helpers.go) and
GetAllowedDisruptionsByReason (pkg/apis/v1/nodepool.go). The actions recorded: docs/architecture/loop.md.
"""
from __future__ import annotations

from datetime import datetime, timezone

from harness.loop.scheduling import podutil
from harness.loop.disruption.budgets import MAX_INT32, budget_active, disruption_spec, nodes_value
from harness.loop.lifecycle.podevents import NOMINATION_WINDOW
from harness.loop.history import offset_text
from harness.model.values.cron import CronError, parse_schedule
from harness.model.values.durations import crd_duration, go_duration

CONTROLLER = "disruption"
# the method names the record uses, by the loop's method key (core's Method.Type / ConsolidationType)
METHODS = {"empty": "Emptiness", "drift": "Drift", "multi": "multi-node consolidation",
           "single": "single-node consolidation"}
CLASSES = {"graceful": "Emptiness and consolidation", "eventual": "Drift"}
SCOPES = (*METHODS, *CLASSES)


def when(s, t: float) -> str:
    """A moment of the run as the record words it: its offset from the run's start."""
    return offset_text(t - s.clock.start)


def subject(claim) -> str:
    return f"NodeClaim/{claim.result.name}"


def related(claim) -> tuple[str, ...]:
    return (f"Node/{claim.node_name}",) if claim.node_name else ()


def note(s, claim, scope: str, key, action: str, reason, extra=(), data: dict | None = None,
         controller: str = CONTROLLER) -> None:
    """Record `reason` (a string, or a callable building it) about `claim` unless the last record for
    (claim, scope) had the same `key`. `scope`: a method key, a disruption class or a termination stage."""
    if not s.decisions.enabled:
        return
    said = s.disruption.said
    k = (claim.result.name, scope)
    if said.get(k) == key:
        return
    said[k] = key
    s.decide(controller, action, subject(claim), reason() if callable(reason) else reason,
             related(claim) + tuple(extra), data)


def forget(s, claim, scope: str | None = None) -> None:
    """The claim's status for `scope` (None: every scope) ended; the next one is recorded even if it
    repeats an earlier one."""
    said = s.disruption.said
    for sc in (scope,) if scope is not None else SCOPES:
        said.pop((claim.result.name, sc), None)


def _utc(t: float, day_of: float | None = None) -> str:
    """`04:00` on the UTC day of `day_of`, else `2026-11-21 04:00`."""
    at = datetime.fromtimestamp(t, tz=timezone.utc)
    if day_of is not None and datetime.fromtimestamp(day_of, tz=timezone.utc).date() == at.date():
        return at.strftime("%H:%M")
    return at.strftime("%Y-%m-%d %H:%M")


def budget_window(budget: dict, now: float) -> str:
    """When a budget is active, in UTC (Budget.IsActive: a cron in UTC, active for `duration` after each hit):
    `active always`; `window 04:00-05:00 UTC ("0 4 * * *" for 1h), active now`; `window 2026-11-21
    04:00-05:00 UTC (...), not active now`. Raises CronError or ValueError for an invalid one."""
    schedule, duration = budget.get("schedule"), budget.get("duration")
    if schedule is None and duration is None:
        return "active always"
    active = budget_active(budget, now)
    sched = parse_schedule(str(schedule or ""))
    length = crd_duration(str(duration)) if duration is not None else 0.0
    start = sched.next(now - length) if active else sched.next(now)
    said = f'("{schedule}" for {duration})'
    if start is None:
        return f"no window within five years {said}, not active now"
    end = start + length
    return f"window {_utc(start, now)}-{_utc(end, start)} UTC {said}, {'active' if active else 'not active'} now"


def budget_rule(budget: dict, num_nodes: int) -> str:
    """`nodes 10% of 12 = 2`, `nodes 1`: a budget's allowance and its arithmetic (GetScaledValueFromIntOrPercent
    rounds a percentage up)."""
    nodes = str(budget.get("nodes", "10%"))
    if nodes.endswith("%"):
        return f"nodes {nodes} of {num_nodes} = {nodes_value(nodes, num_nodes)}"
    return f"nodes {nodes}"


def deciding_budget(nodepool: dict, now: float, num_nodes: int, reason: str) -> str:
    """Which budget of the NodePool sets its allowance for `reason` now, its arithmetic and its window in UTC:
    `nodes 10% of 7 = 1, active always`, `nodes 0 for Drifted, window 09:00-11:00 UTC ("0 9 * * *" for 2h),
    active now`; or that none limits it, with the budgets that would and when they are active (`no budget
    limits Drifted (nodes 0, window 04:00-05:00 UTC (...), not active now)`); or why it allows none."""
    best, text, idle = MAX_INT32, "", []
    for b in disruption_spec(nodepool).budgets:
        reasons = b.get("reasons")
        if reasons is not None and reason not in reasons:
            continue
        try:
            window = budget_window(b, now)
            rule = budget_rule(b, num_nodes) + (f" for {', '.join(reasons)}" if reasons is not None else "")
            if not budget_active(b, now):
                idle.append(f"{rule}, {window}")
                continue
            value = nodes_value(str(b.get("nodes", "10%")), num_nodes)
        except (CronError, ValueError) as e:
            return f"a budget is invalid ({e}), which allows none"
        if value < best:
            best, text = value, f"{rule}, {window}"
    if text:
        return text
    return f"no budget limits {reason}" + (f" ({'; '.join(idle)})" if idle else "")


def budget_text(view, nodepool_name: str, reason: str, reserved: bool = True) -> str:
    """`budget for Drifted on NodePool default: 1 allowed (nodes 10% of 7 = 1, active always), 1 in use by
    NodeClaim x being deleted`, from the facts Cluster.budget_mapping kept, and the candidates this pass already
    reserved; `any number allowed (no budget limits Drifted (...))` where no active budget applies."""
    num, busy = view.budget_facts.get((nodepool_name, reason), (0, ()))
    allowed = view.budget_allowed(nodepool_name, reason)
    np = view.nodepools.get(nodepool_name) or {"metadata": {"name": nodepool_name}}
    out = f"budget for {reason} on NodePool {nodepool_name}: " \
          f"{'any number' if allowed >= MAX_INT32 else allowed} allowed ({deciding_budget(np, view.now, num, reason)})"
    if busy:
        groups: dict[str, list[str]] = {}
        for name, state in busy:
            groups.setdefault(state, []).append(name)
        out += f", {len(busy)} in use by " + "; ".join(
            f"NodeClaim{'s' if len(names) > 1 else ''} {shortlist(names)} {state}" for state, names in groups.items())
    else:
        out += ", 0 in use"
    taken = view.taken.get((nodepool_name, reason)) if reserved else None
    if taken:
        out += f", {len(taken)} reserved this pass by NodeClaim{'s' if len(taken) > 1 else ''} {shortlist(taken)}"
    return out


def command_budgets(view, p) -> str:
    """The budget each NodePool of a command's candidates allowed it under, as the pass that computed it saw
    it (budget_text, without the candidates the command itself reserved)."""
    pools = sorted({c.nodepool_name for c in p.candidates})
    return "; ".join(budget_text(view, name, p.reason, reserved=False) for name in pools)


def shortlist(names, n: int = 3) -> str:
    names = list(names)
    return ", ".join(names[:n]) + (f" and {len(names) - n} more" if len(names) > n else "")


def busy_text(sn) -> tuple[str, str]:
    """A node that counts against its NodePool's budget and why (BuildDisruptionBudgetMapping: not Ready, or
    marked for deletion)."""
    c = sn.claim
    if c.dis.deleting_since is not None:
        return c.result.name, "being deleted"
    if c.dis.marked_for_deletion:
        return c.result.name, "marked for deletion by a disruption command"
    if not sn.ready:
        return c.result.name, "not Ready"
    return c.result.name, "being deleted"


def do_not_disrupt_hold(pv, started: float | None, s) -> str:
    """How long a pod's do-not-disrupt annotation holds: `"true": no end`, `"3h": until +3h0m10s`."""
    value = str((pv.obj["metadata"].get("annotations") or {}).get(podutil.DO_NOT_DISRUPT))
    if value == "true":
        return '"true": no end'
    try:
        d = go_duration(value)
    except ValueError:
        return f'"{value}"'
    if started is None:
        return f'"{value}": from when the pod starts'
    return f'"{value}": until {when(s, started + d)}'


def nomination_text(s, claim) -> str:
    """Who nominated the node: the pending pods the provisioner put on it, or a command's pods."""
    now = s.clock.now()
    times = getattr(s.nominated, "times", {})
    pods = sorted(k for k, n in s.nominated.items()
                  if n == claim.result.name and times.get(k, float("-inf")) + NOMINATION_WINDOW > now)
    until = when(s, claim.dis.nominated_until)
    if pods:
        shown = ", ".join(pods[:3]) + (f" and {len(pods) - 3} more" if len(pods) > 3 else "")
        return f"nominated for pod(s) {shown} (provisioning planned them on it) until {until} (a nomination " \
               "holds 20 s after each provisioning pass that renews it)"
    return f"nominated as the destination of a disruption command's pods until {until}"


def command_text(p) -> str:
    """`Underutilized/replace [a, b] -> [Standard_D2s_v3, Standard_D2as_v5 and 4 more] (savings $0.1000/h)`."""
    out = f"{p.reason}/{p.decision} [{', '.join(c.claim.result.name for c in p.candidates)}]"
    if p.replacements:
        reps = []
        for r in p.replacements:
            names = [it.name for it in r.instance_types[:3]]
            more = len(r.instance_types) - len(names)
            reps.append(", ".join(names) + (f" and {more} more" if more > 0 else ""))
        out += " -> [" + "; ".join(reps) + "]"
    return out + f" (savings ${p.savings():.4f}/h)"


def command_related(p) -> tuple[str, ...]:
    out = [f"NodeClaim/{c.claim.result.name}" for c in p.candidates[1:]]
    out += [f"Node/{c.claim.node_name}" for c in p.candidates if c.claim.node_name]
    return tuple(out)


def command_data(p) -> dict:
    return {"method": p.method, "reason": p.reason, "decision": p.decision,
            "candidates": [c.claim.result.name for c in p.candidates],
            "replacements": [[it.name for it in r.instance_types] for r in p.replacements],
            "savings": round(p.savings(), 6)}
