"""Human-readable renderings of scenario outcomes: failure diffs and summaries."""
from __future__ import annotations

from harness.runner.engines.base import Outcome, verdict
from harness.runner.fold import fold_trace

MAX_TRACE = 40


def failure_text(outcome: Outcome, trace: bool = False) -> str:
    sc = outcome.scenario
    r = outcome.result
    on = (f"on the real engine (controller {outcome.version})" if outcome.engine == "real"
          else f"on backend {outcome.backend!r}")
    lines = [f"{sc.file}:{sc.line}: scenario {sc.name!r} failed under profile {outcome.profile!r} "
             f"{on} (seed {sc.seed})"]
    for m in outcome.mismatches:
        where = f"{sc.file}:{m.line}: " if m.line else ""
        lines.append(f"  {where}{m.render()}")
    lines.append("  --- what happened ---")
    for name, np in sorted(r.nodepools.items()):
        state = f"rejected at {np.stage}: {np.message}" if np.rejected else ("ready" if np.ready else "not ready")
        lines.append(f"  NodePool {name}: {state}")
    for n in r.nodes:
        extra = " kubelet refused to start" if n.kubelet_refused else ""
        extra += f" registration refused: {n.node_restriction_denied}" if n.node_restriction_denied else ""
        lines.append(f"  Node[{n.index}] {n.name}: {n.instance_type} zone={n.zone!r} {n.capacity_type} "
                     f"(NodePool {n.nodepool}){extra}")
    for key, p in sorted(r.pods.items()):
        if p.owner_kind == "DaemonSet":
            continue
        where = f"on {p.node}" if p.node else (p.reason or "")
        lines.append(f"  Pod {key}: {p.state} {where}".rstrip())
    if r.runaway:
        lines.append(f"  runaway provisioning: {r.runaway_reason}")
    if outcome.why:
        lines.append("  --- why (instance types each NodePool's filter eliminated) ---")
        for w in outcome.why.values():
            lines += w.render("  ")
    if trace and r.trace:
        lines.append("  --- loop trace ---")
        lines += [f"  {t}" for t in fold_trace(r.trace)[-MAX_TRACE:]]
    lines += [f"  {n.render()}" for n in outcome.not_applicable]
    if trace and outcome.log_tail:
        lines += ["  --- controller log (tail) ---"] + [f"  {line}" for line in outcome.log_tail.splitlines()]
    return "\n".join(lines)


def outcome_summary(result) -> str:
    """One line a support engineer compares across releases: refusals, then the nodes launched (instance
    type x count, capacity type), then the pods left pending."""
    from collections import Counter
    parts = []
    for name, np in sorted(result.nodepools.items()):
        if np.rejected:
            parts.append(f"NodePool {name} refused ({np.stage}): {(np.causes[0] if np.causes else np.message or '')[:100]}")
    for name, nc in sorted(result.nodeclasses.items()):
        if not nc.accepted:
            parts.append(f"AKSNodeClass {name} refused: {(nc.causes[0] if nc.causes else nc.message or '')[:100]}")
    kinds = Counter(f"{n.instance_type} {n.capacity_type}" for n in result.nodes)
    parts.append(f"{len(result.nodes)} node(s)" + (": " + ", ".join(f"{k} x{c}" for k, c in sorted(kinds.items()))
                                                    if kinds else ""))
    pending = sorted(p.name for p in result.pods.values() if p.state != "scheduled" and p.owner_kind != "DaemonSet")
    if pending:
        shown = ", ".join(pending[:3]) + (f" +{len(pending) - 3}" if len(pending) > 3 else "")
        parts.append(f"pending: {shown}")
    if result.runaway:
        parts.append("runaway")
    return "; ".join(parts)


def outcome_json(o: Outcome) -> dict:
    """One run for `harness run --json`: the verdict, the failures and what the engine could not answer."""
    out = {"file": str(o.scenario.file), "scenario": o.scenario.name, "profile": o.profile, "backend": o.backend,
           "engine": o.engine, "verdict": verdict(o), "passed": o.passed and not o.skipped, "skipped": o.skipped,
           "seconds": round(o.seconds, 4), "nodes": len(o.result.nodes), "runaway": o.result.runaway,
           "steady": o.result.steady, "mismatches": [m.render() for m in o.mismatches],
           "notApplicable": [n.render() for n in o.not_applicable],
           "why": {k: w.to_json() for k, w in o.why.items()},
           "release": o.result.release, "outcome": outcome_summary(o.result)}
    if o.engine == "real":
        out.update(controller=o.version, hosts=o.hosts)
    return out
