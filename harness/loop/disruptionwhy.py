"""The disruption side's decision record (harness/loop/decisions.py): what a disruption pass, the
orchestration queue and termination say about a NodeClaim, pass by pass, and the words they say it in.

A pass looks at every candidate again, so a candidate's status is recorded only when it changes from the
previous pass for that (candidate, method), as `Cluster.protect` keeps one entry per protection: a
1,000-node cluster's hundreds of passes record what changed, not every pass. Budget arithmetic follows core's
BuildDisruptionBudgetMapping (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/disruption/helpers.go) and
GetAllowedDisruptionsByReason (pkg/apis/v1/nodepool.go). The actions recorded: docs/architecture/loop.md.
"""
from __future__ import annotations

from harness.loop import podutil
from harness.loop.budgets import MAX_INT32, budget_active, disruption_spec, nodes_value
from harness.loop.controllers.podevents import NOMINATION_WINDOW
from harness.loop.history import offset_text
from harness.model.cron import CronError
from harness.model.durations import go_duration

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


def deciding_budget(nodepool: dict, now: float, num_nodes: int, reason: str) -> str:
    """Which budget of the NodePool sets its allowance for `reason` now, and how: `10% of 7 nodes`,
    `nodes: 0 while its schedule "0 9 * * *" (8h) is active`, or why it allows none."""
    best, text = MAX_INT32, "no budget limits it"
    for b in disruption_spec(nodepool).budgets:
        reasons = b.get("reasons")
        if reasons is not None and reason not in reasons:
            continue
        nodes = str(b.get("nodes", "10%"))
        try:
            if not budget_active(b, now):
                continue
            value = nodes_value(nodes, num_nodes)
        except (CronError, ValueError) as e:
            return f"a budget is invalid ({e}), which allows none"
        if value < best:
            best = value
            text = f"{nodes} of {num_nodes} node{'s' if num_nodes != 1 else ''}" if nodes.endswith("%") \
                else f"nodes: {nodes}"
            if b.get("schedule") is not None:
                text += f' while its schedule "{b["schedule"]}" ({b.get("duration")}) is active'
            if reasons is not None:
                text += f" (for {', '.join(reasons)})"
    return text


def budget_text(view, nodepool_name: str, reason: str) -> str:
    """`budget for Drifted on NodePool default: 1 allowed (10% of 7 nodes), 1 in use by NodeClaim x being
    deleted`, from the facts Cluster.budget_mapping kept, and the candidates this pass already reserved."""
    num, busy = view.budget_facts.get((nodepool_name, reason), (0, ()))
    allowed = view.budget_allowed(nodepool_name, reason)
    np = view.nodepools.get(nodepool_name) or {"metadata": {"name": nodepool_name}}
    out = f"budget for {reason} on NodePool {nodepool_name}: {allowed} allowed " \
          f"({deciding_budget(np, view.now, num, reason)})"
    if busy:
        groups: dict[str, list[str]] = {}
        for name, state in busy:
            groups.setdefault(state, []).append(name)
        out += f", {len(busy)} in use by " + "; ".join(
            f"NodeClaim{'s' if len(names) > 1 else ''} {shortlist(names)} {state}" for state, names in groups.items())
    else:
        out += ", 0 in use"
    taken = view.taken.get((nodepool_name, reason))
    if taken:
        out += f", {len(taken)} reserved this pass by NodeClaim{'s' if len(taken) > 1 else ''} {shortlist(taken)}"
    return out


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
