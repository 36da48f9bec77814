"""`harness run --why NAME` for any object of a run: a pod (pending or placed), a NodeClaim or its Node, a
NodePool, an AKSNodeClass, a workload whose pods the API server refused (FailedCreate), a Node label (its
writers). The view is read from the finished run: the object's state, then every decision the loop took about
it, in order, with its reason (RunResult.decisions, harness/loop/decisions.py), then what the disruption
controllers left it for
(RunResult.protected) and the events on it; what the record does not hold (host ports, budgets and their windows,
an AKSNodeClass's readiness and hash) from RunResult.why_facts, and a seeded node's drift from the scenario's
given.existingNodes. A pending pod's eliminations per NodePool stay harness/loop/scheduling/why.py's view; this adds the
decisions around it. The run report shows the same lines.
"""
from __future__ import annotations

from harness.loop.history import offset_text

# the Node labels whose values an AKSNodeClass gives (what --why lists of them, where its Nodes carry them)
NODECLASS_LABELS = ("karpenter.azure.com/aksnodeclass", "kubernetes.azure.com/os-sku",
                    "kubernetes.azure.com/os-sku-effective", "kubernetes.azure.com/os-sku-requested",
                    "kubernetes.azure.com/fips_enabled", "kubernetes.azure.com/node-image-version",
                    "kubernetes.azure.com/localdns-state", "kubernetes.azure.com/artifactstreaming-enabled")
# the seeded hash annotations a `drifted` entry stands for (harness/loop/seed.py)
SEEDED_HASHES = {"NodePoolDrifted": "karpenter.sh/nodepool-hash",
                 "NodeClassDrifted": "karpenter.azure.com/aksnodeclass-hash"}


def resolve(result, name: str) -> list[tuple[str, str]]:
    """The objects `name` names in the run, as (kind, name): a pod by name, `namespace/name` or its owner; a
    NodeClaim, a Node (or its index as `node 0`), a NodePool, an AKSNodeClass, a workload; else a key with a
    domain is a Node label. Every match, in that order."""
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
    if name in result.nodeclasses:
        out.append(("AKSNodeClass", name))
    for f in result.failed_creates():
        workload = f["workload"].split("/", 1)[1]
        if name in (workload, f"{f['namespace']}/{workload}", f["object"].split("/", 1)[1]) \
                and ("Workload", f["workload"]) not in out:
            out.append(("Workload", f["workload"]))
    if not out and "/" in name and result.nodes:      # a label key (a pod's namespace/name matched above)
        out.append(("Label", name))
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
    lines += ["  " + line for line in host_port_lines(result, [key])]
    lines += ["  " + line for line in _decisions(result, f"Pod/{key}")]
    return lines


def _ports(result) -> dict[str, list[str]]:
    return (result.why_facts or {}).get("hostPorts") or {}


def _port_key(text: str) -> str:
    """`8080/TCP` of `8080/TCP on 10.0.0.1`: the port and protocol a hostIP of 0.0.0.0 matches."""
    return text.split(" on ", 1)[0]


def host_port_lines(result, keys: list[str], why: str = "") -> list[str]:
    """The host ports the pods `keys` ask for, and which other pods ask for the same ones and where they are:
    a pod shares a node with no other pod asking for the same port and protocol (and IP, unless either is
    unspecified; sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/hostportusage.go Conflicts, kube-scheduler's
    NodePorts filter), so such pods take a node each. `why`: what the pods are to the object asked about."""
    ports = _ports(result)
    lines = []
    for k in keys:
        mine = ports.get(k)
        if not mine:
            continue
        wanted = {_port_key(t) for t in mine}
        others = []
        for other, theirs in ports.items():
            if other == k or not wanted & {_port_key(t) for t in theirs}:
                continue
            p = result.pods.get(other)
            if p is None or p.state == "deleted":
                continue
            where = f"on {p.node}" if p.node else "pending"
            if p.nodeclaims:
                where += f", NodeClaim {p.nodeclaims[-1]} launched for it"
            others.append(f"{other} ({where})")
        line = f"host ports {', '.join(mine)} (Pod {k}{why})"
        if others:
            shown = "; ".join(others[:3]) + (f"; and {len(others) - 3} more" if len(others) > 3 else "")
            line += f": also asked for by {shown}: pods asking for one port never share a node, each takes its own"
        else:
            line += ": no other pod asks for them"
        lines.append(line)
    return lines


def seeded_entry(seeded: list | None, claim: str | None, node: str | None) -> tuple[int, dict] | None:
    """The given.existingNodes entry (index, entry) a NodeClaim or Node was seeded from."""
    for i, entry in enumerate(seeded or []):
        if not isinstance(entry, dict):
            continue
        if claim and entry.get("nodeClaim") == claim or node and entry.get("node", entry.get("name")) == node:
            return i, entry
    return None


def seeded_drift_lines(result, seeded: list | None, claim: str | None, node: str | None) -> list[str]:
    """What the scenario seeded about a node's drift (given.existingNodes[].drifted, or hash annotations a
    dump kept), and whether the run found it drifted: a seeded drift the release does not read is said."""
    found = seeded_entry(seeded, claim, node)
    if found is None:
        return []
    i, entry = found
    drifted = entry.get("drifted")
    ann = {str(k): str(v) for k, v in (entry.get("annotations") or {}).items() if "hash" in str(k)}
    if not drifted and not ann:
        return []
    where = f"given.existingNodes[{i}]"
    said = f"{where}.drifted: {drifted}" if drifted else \
        f"{where}.annotations " + ", ".join(f"{k}={v}" for k, v in sorted(ann.items()))
    if drifted:
        hashed = SEEDED_HASHES.get(str(drifted), "its hash annotation")
        source = "AKSNodeClass" if drifted == "NodeClassDrifted" else "NodePool template"
        said += f" (launched from an older {source}: it carries an older {hashed}" + \
            (f" {ann[hashed]}" if hashed in ann else "") + ")"
    found_drift = [d for d in result.decisions if d.action in ("drifted", "drift-cleared")
                   and (claim and d.subject == f"NodeClaim/{claim}")]
    if found_drift:
        last = found_drift[-1]
        return [f"seeded as drifted: {said}; the run found it {last.reason.split(':', 1)[0]} at "
                f"{_when(result, last.t)}"]
    return [f"seeded as drifted: {said}; this release never found it drifted: its drift checks do not read what "
            "the seed changed, or the node went first"]


def claim_lines(result, claim: str | None, node: str | None, seeded: list | None = None) -> list[str]:
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
    lines += ["  " + line for line in seeded_drift_lines(result, seeded, claim, node)]
    drift = n.drifted if n is not None else None
    if drift and not any(d.action == "drifted" and d.subject == f"NodeClaim/{claim}" for d in result.decisions):
        lines.append(f"  Drifted={drift} at the end")
    launched_for = list(c.pods) if c is not None else []
    lines += ["  " + line for line in host_port_lines(result, launched_for, ", launched for it")]
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
    lines += ["  " + line for line in budget_lines(result, name, live)]
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



def budget_lines(result, name: str, live: list) -> list[str]:
    """The NodePool's disruption budgets (GetAllowedDisruptionsByReason), each with its arithmetic over the
    NodePool's initialized Nodes at the end and its window in UTC at the last disruption pass; the default
    budget (nodes: 10%) included where the NodePool names none."""
    from harness.loop.disruption.budgets import MAX_INT32, allowed_disruptions
    from harness.loop.disruption.record import budget_rule, budget_window
    facts = ((result.why_facts or {}).get("nodepools") or {}).get(name)
    if not facts or facts.get("at") is None:
        return []
    budgets = facts.get("budgets") or []
    at = max(facts["at"], (result.why_facts or {}).get("lastPass", facts["at"]))
    num = sum(1 for n in live if n.initialized)
    lines = []
    for b in budgets:
        reasons = b.get("reasons")
        try:
            which = ", ".join(reasons) if reasons else "every reason"
            text = f"{budget_rule(b, num)} for {which}, {budget_window(b, at)}"
        except ValueError as e:            # CronError too: core fails closed
            text = f"{b} is invalid ({e}): no disruptions allowed"
        lines.append(f"budget: {text}")
    np = {"spec": {"disruption": {"budgets": budgets}}}
    allowed = []
    for reason in ("Empty", "Underutilized", "Drifted"):
        value, err = allowed_disruptions(np, at, num, reason)
        allowed.append(f"{reason} {'any' if value >= MAX_INT32 and err is None else 0 if err else value}")
    lines.append(f"allowed at {_when(result, at)} (the last disruption pass) over {num} initialized Node(s): "
                 f"{', '.join(allowed)} (less the Nodes being disrupted then)")
    return lines


def nodeclass_lines(result, name: str) -> list[str]:
    """An AKSNodeClass: stored or refused, Ready or held back, what the run reads of it (the fields that
    shape its instance types, the labels its Nodes carry from it), the NodePools that name it, its hash now
    and at each change, and its NodeClaims' drift."""
    from harness.model.azure.params import NodeClassParams
    nc = result.nodeclasses[name]
    facts = ((result.why_facts or {}).get("nodeclasses") or {}).get(name) or {}
    if not nc.accepted:
        lines = [f"AKSNodeClass {name}: refused by the API server: {nc.message}"]
        lines += [f"  {c}" for c in nc.causes]
        return lines
    if facts.get("ready") is None:
        ready = "no NodePool names it"
    elif facts["ready"]:
        ready = "Ready"
    else:
        cond, reason, message = (list(facts.get("held") or []) + ["", "", ""])[:3]
        ready = f"not Ready ({cond}={reason}: {message}): its NodePools are not Ready and launch nothing"
    spec = facts.get("spec", nc.spec) or {}
    lines = [f"AKSNodeClass {name}: {ready}"]
    lines.append("  spec: " + (", ".join(f"{k}: {v}" for k, v in sorted(spec.items())) or "(empty)"))
    if nc.pruned:
        lines.append(f"  pruned by this release's CRD (never read): {', '.join(nc.pruned)}")
    p = NodeClassParams.from_manifest({"spec": spec})
    read = [f"imageFamily {p.image_family or '(default)'}", f"osDiskSizeGB {p.os_disk_size_gb}",
            f"maxPods {p.max_pods if p.max_pods is not None else '(default)'}", f"GPU mode {p.gpu_mode}"]
    read += [t for t, on in (("FIPS", p.fips), ("trusted launch", p.trusted_launch),
                             ("artifact streaming", p.artifact_streaming), ("LocalDNS", p.local_dns)) if on]
    if p.encryption_at_host is not None:
        read.append(f"encryptionAtHost {str(p.encryption_at_host).lower()}")
    lines.append("  read for its instance types and VMs: " + ", ".join(read))
    pools = sorted(n for n, f in ((result.why_facts or {}).get("nodepools") or {}).items()
                   if f.get("nodeclass") == name)
    if pools:
        claims = [c for c in result.nodeclaims if c.nodepool in pools]
        lines.append(f"  named by NodePool(s) {', '.join(pools)}: {len(claims)} NodeClaim(s) made")
        nodes = [n for n in result.nodes if n.nodepool in pools]
        labels: dict[str, set] = {}
        for n in nodes:
            for k in NODECLASS_LABELS:
                if k in n.labels:
                    labels.setdefault(k, set()).add(n.labels[k])
        if labels:
            lines.append("  labels its Nodes carry from it: " + ", ".join(f"{k}={'|'.join(sorted(v))}"
                                                                          for k, v in labels.items()))
    for t, ann in facts.get("hashes") or []:
        lines.append(f"  {_when(result, t)} hash for a NodeClaim launched now: "
                     + ", ".join(f"{k}={v}" for k, v in sorted(ann.items())))
    drifted = [d for d in result.decisions if d.action == "drifted" and d.data.get("reason") == "NodeClassDrift"
               and any(c.nodepool in pools and d.subject == f"NodeClaim/{c.name}" for c in result.nodeclaims)]
    if drifted:
        names = [d.subject.split("/", 1)[1] for d in drifted]
        lines.append(f"  drift: {len(drifted)} NodeClaim(s) found NodeClassDrift (the hash stamped at launch differs "
                     f"from the hash now), first at {_when(result, drifted[0].t)}: {', '.join(names[:3])}"
                     + (f" and {len(names) - 3} more" if len(names) > 3 else ""))
    elif pools:
        lines.append("  drift: no NodeClaim found NodeClassDrift")
    lines += ["  " + line for line in _decisions(result, f"AKSNodeClass/{name}")]
    lines += ["  " + e for e in _events(result, "AKSNodeClass", name)]
    return lines


def label_lines(result, key: str) -> list[str]:
    """A Node label (a key with a domain) on every Node: its value and the writer whose value it is, every write in
    order (refused ones marked), and why the provider left it out of what it handed the kubelet or AKS."""
    lines = [f"label {key}:"]
    for n in result.nodes:
        writes = n.provenance.get(key, [])
        trail = ", ".join(f"{w.writer}={w.value!r}{'' if w.accepted else ' (refused)'}" for w in writes)
        head = (f"{n.labels[key]!r}, written by {n.writer(key) or 'unknown'}" if key in n.labels else "absent")
        extra = ""
        if key in n.not_sent_to_aks:
            extra = f"; not sent to AKS by the provider: {n.not_sent_to_aks[key]}"
        elif key in n.kubelet_dropped:
            extra = "; dropped from --node-labels by the provider's kubelet filter"
        lines.append(f"  Node {n.name}: {head}" + (f" (writes: {trail})" if trail else "") + extra)
    return lines


def why_lines(result, name: str, seeded: list | None = None) -> list[str]:
    """The view of every object `name` names, or a line saying there is none. `seeded`: the scenario's
    given.existingNodes (what a seeded node was said to be)."""
    found = resolve(result, name)
    if not found:
        return [f"no pod, NodeClaim, Node, NodePool, AKSNodeClass, workload or Node label {name!r} in this run"]
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
            lines += claim_lines(result, obj if kind == "NodeClaim" else claim, obj if kind == "Node" else None,
                                 seeded)
        elif kind == "Workload":
            lines += workload_lines(result, obj)
        elif kind == "NodePool":
            lines += nodepool_lines(result, obj)
        elif kind == "Label":
            lines += label_lines(result, obj)
        else:
            lines += nodeclass_lines(result, obj)
    return lines
