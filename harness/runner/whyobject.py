"""`harness run --why NAME` for any object of a run: a pod (pending or placed), a NodeClaim or its Node, a
NodePool, a workload whose pods the API server refused (FailedCreate). The view is read from the finished run: the object's state, then every decision the loop took about
it, in order, with its reason (RunResult.decisions, harness/loop/decisions.py), then what the disruption
controllers left it for (RunResult.protected) and the events on it. A pending pod's eliminations per NodePool
stay harness/loop/why.py's view; this adds the decisions around it. The run report shows the same lines.
"""
from __future__ import annotations

from harness.loop.history import offset_text


def resolve(result, name: str) -> list[tuple[str, str]]:
    """The objects `name` names in the run, as (kind, name): a pod by name, `namespace/name` or its owner; a
    NodeClaim, a Node (or its index as `node 0`), a NodePool. Every match, NodePools last."""
    out: list[tuple[str, str]] = []
    for key, p in sorted(result.pods.items()):
        if name in (key, p.name, p.owner_name) and p.owner_kind != "DaemonSet":
            out.append(("Pod", key))
    for c in result.nodeclaims:
        if name == c.name:
            out.append(("NodeClaim", c.name))
    for n in result.nodes:
        if name in (n.name, f"node {n.index}", f"node{n.index}"):
            out.append(("Node", n.name))
    if name in result.nodepools:
        out.append(("NodePool", name))
    for f in result.failed_creates():
        workload = f["workload"].split("/", 1)[1]
        if name in (workload, f"{f['namespace']}/{workload}", f["object"].split("/", 1)[1]) \
                and ("Workload", f["workload"]) not in out:
            out.append(("Workload", f["workload"]))
    return out


def _when(result, t: float) -> str:
    return offset_text(t - result.started) if result.started is not None else f"t={t:.0f}"


def _decisions(result, *names: str) -> list[str]:
    """The decisions about any of `names` (`Kind/name`), in order, each once."""
    wanted = [n for n in names if n]
    return [d.render(result.started) for d in result.decisions if any(d.names(n) for n in wanted)]


def _events(result, kind: str, *names: str) -> list[str]:
    out, seen = [], set()
    for e in result.events:
        if e.get("kind") == kind and e.get("name") in names:
            text = f"{_when(result, e.get('t', 0.0))} event {e.get('reason')}: {e.get('message')}"
            if (e.get("reason"), e.get("message")) not in seen:
                seen.add((e.get("reason"), e.get("message")))
                out.append(text)
    return out


def pod_lines(result, key: str) -> list[str]:
    p = result.pods[key]
    head = f"Pod {key}: {p.state}"
    if p.node:
        node = next((n for n in result.nodes if n.name == p.node), None)
        if node is not None:
            head += f" on Node {node.name} (NodeClaim {node.nodeclaim or '-'}, NodePool {node.nodepool or '-'}, " \
                    f"{node.instance_type})"
        else:
            head += f" on Node {p.node}"
    if p.reason and p.state != "scheduled":
        head += f": {p.reason}"
    lines = [head]
    lines += ["  " + line for line in _decisions(result, f"Pod/{key}")]
    return lines


def claim_lines(result, claim: str | None, node: str | None) -> list[str]:
    c = next((c for c in result.nodeclaims if c.name == claim), None) if claim else None
    n = next((n for n in result.nodes if n.name == node), None) if node else None
    if c is not None and n is None:
        n = next((x for x in result.nodes if x.nodeclaim == c.name), None)
    if n is not None and c is None and n.nodeclaim:
        c = next((x for x in result.nodeclaims if x.name == n.nodeclaim), None)
    claim, node = (c.name if c else None), (n.name if n else None)
    state = "deleted" if (n and n.deleted) or (c and c.deleted) else ("deleting" if n and n.deleting else "live")
    what = " / ".join(x for x in (f"NodeClaim {claim}" if claim else "", f"Node {node}" if node else "") if x)
    pool = (c.nodepool if c else None) or (n.nodepool if n else None)
    head = f"{what}: {state}" + (f", NodePool {pool}" if pool else "")
    if n is not None:
        head += f", {n.instance_type} {n.zone} {n.capacity_type}".rstrip()
    gone = (n.deleted if n else None) or (c.deleted if c else None)
    if gone:
        head += f"; went: {gone}"
    lines = [head]
    if c is not None and c.at:
        lines.append("  " + ", ".join(f"{k} {_when(result, t)}" for k, t in sorted(c.at.items(), key=lambda kv: kv[1])))
    lines += ["  " + line for line in _decisions(result, f"NodeClaim/{claim}" if claim else "",
                                                  f"Node/{node}" if node else "")]
    for d in result.disruptions:
        if d.get("nodeClaim") == claim and claim:
            lines.append(f"  disrupted {_when(result, d.get('at') or 0.0)}: {d.get('reason')} by {d.get('method')} "
                         f"({d.get('decision')}" + (f", {len(d['replacements'])} replacement(s)" if d.get("replacements") else "")
                         + ")")
    for p in result.protected:
        if (claim and p.get("nodeClaim") == claim) or (node and p.get("node") == node):
            span = _when(result, p["first"]) + (f"..{_when(result, p['last'])}" if p.get("last") != p.get("first") else "")
            lines.append(f"  kept by {p.get('by')} ({p.get('method')} {span}): {p.get('message')}")
    if claim:
        lines += ["  " + e for e in _events(result, "NodeClaim", claim)]
    if node:
        lines += ["  " + e for e in _events(result, "Node", node)]
    if len(lines) == 1:
        lines.append("  no decision, disruption or event names it")
    return lines


def nodepool_lines(result, name: str) -> list[str]:
    np = result.nodepools[name]
    state = f"rejected at {np.stage}: {np.message}" if np.rejected else ("ready" if np.ready else "not ready")
    claims = [c for c in result.nodeclaims if c.nodepool == name]
    live = [n for n in result.nodes if n.nodepool == name and not n.deleted]
    lines = [f"NodePool {name}: {state}; {len(claims)} NodeClaim(s) made, {len(live)} live Node(s)"]
    lines += ["  " + line for line in _decisions(result, f"NodePool/{name}")]
    lines += ["  " + e for e in _events(result, "NodePool", name)]
    return lines


def workload_lines(result, workload: str) -> list[str]:
    """A workload whose controller could not create its pods: how many it has, then each FailedCreate (when
    first recorded, on which object, the API server's refusal)."""
    kind, name = workload.split("/", 1)
    live = [p for p in result.pods.values() if p.owner_kind == kind and p.owner_name == name and p.state != "deleted"]
    lines = [f"{workload}: {len(live)} pod(s); its controller could not create the others (FailedCreate)"]
    for e in result.events:
        if e.get("reason") == "FailedCreate" and (e.get("owner") or f"{e.get('kind')}/{e.get('name')}") == workload:
            lines.append(f"  {_when(result, e.get('t', 0.0))} event FailedCreate on {e.get('kind')}/{e.get('name')}: "
                         f"{e.get('message')}")
    return lines


def why_lines(result, name: str) -> list[str]:
    """The view of every object `name` names, or a line saying there is none."""
    found = resolve(result, name)
    if not found:
        return [f"no pod, NodeClaim, Node, NodePool or workload {name!r} in this run"]
    lines: list[str] = []
    done: set[str] = set()
    for kind, obj in found:
        if kind == "Pod":
            lines += pod_lines(result, obj)
        elif kind in ("NodeClaim", "Node"):
            claim = obj if kind == "NodeClaim" else next((n.nodeclaim for n in result.nodes if n.name == obj), None)
            if claim and claim in done:
                continue
            done.add(claim or obj)
            lines += claim_lines(result, obj if kind == "NodeClaim" else claim, obj if kind == "Node" else None)
        elif kind == "Workload":
            lines += workload_lines(result, obj)
        else:
            lines += nodepool_lines(result, obj)
    return lines
