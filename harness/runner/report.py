"""Human-readable renderings of scenario outcomes: failure diffs and summaries."""
from __future__ import annotations

from harness.runner.engine import Outcome

MAX_TRACE = 40


def failure_text(outcome: Outcome, trace: bool = False) -> str:
    sc = outcome.scenario
    r = outcome.result
    if outcome.error is not None:
        return f"ERROR {outcome.error}"
    lines = [f"{sc.file}:{sc.line}: scenario {sc.name!r} failed under profile {outcome.profile!r} "
             f"on backend {outcome.backend!r} (seed {sc.seed})"]
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
        lines += [f"  {t}" for t in r.trace[-MAX_TRACE:]]
    return "\n".join(lines)
