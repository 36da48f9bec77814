"""Where the pods of a dump without Node objects ran, for `harness new` (harness/dump/new.py).

Without Nodes the run would start every workload from an empty cluster: twelve replicas pending where six
ran, two releases alike where the ticket is about what differs. What the dump still says is used instead:
a NodeClaim's node takes the pods bound to its `status.nodeName` (dump.py existing_nodes); a pod bound to
a node the dump does not hold (`spec.nodeName`) runs on a stand-in Node of that name; a Deployment whose
`status.readyReplicas` (else `availableReplicas`) exceeds the pods the dump shows bound gets the missing
ones from its template, first fit onto the NodeClaims' nodes by their `status.allocatable`, the rest on a
stand-in Node of its own. A stand-in is a Node Karpenter does not manage,
sized to exactly its pods and tainted, so it neither takes the pending pods nor is consolidated: capacity
the dump does not describe, held as it was. The rest of each Deployment starts pending.
Why this model: docs/reproduce-a-ticket.md (A dump without Nodes).
"""
from __future__ import annotations

STANDIN = "harness.karpenter.azure.com/stand-in"       # the stand-in Nodes' label and NoSchedule taint key


def _controller(pod: dict) -> tuple[str, str]:
    ref = next((r for r in (pod.get("metadata") or {}).get("ownerReferences") or [] if r.get("controller", True)), None)
    return (str(ref.get("kind")), str(ref.get("name"))) if ref else ("", "")


def _deployment_of(pod: dict, deployments: set[str]) -> str | None:
    kind, name = _controller(pod)
    return name.rsplit("-", 1)[0] if kind == "ReplicaSet" and name.rsplit("-", 1)[0] in deployments else None


def _kept(pod: dict, strip) -> dict:
    """The pod as existingNodes holds it (as dump.existing_nodes keeps a bound pod; `strip`: dump.py
    strip_server_fields)."""
    kept = strip(pod)
    refs = (pod.get("metadata") or {}).get("ownerReferences")
    if refs:
        kept["metadata"]["ownerReferences"] = [{k: v for k, v in r.items() if k != "uid"} for r in refs]
    if (pod.get("status") or {}).get("startTime"):
        kept["status"] = {"startTime": str(pod["status"]["startTime"])}
    return kept


def standin(name: str, pods: list[dict]) -> dict:
    """An existingNodes entry for a Node the dump does not hold: not Karpenter's, exactly its pods' size."""
    from harness.loop.scheduling.pods import pod_requests
    from harness.model.values.resources import add, format_resource_list
    total: dict[str, int] = {}
    for p in pods:
        total = add(total, pod_requests(p.get("spec") or {}))
    size = format_resource_list({k: v for k, v in total.items() if v})
    return {"name": name, "labels": {STANDIN: "true"}, "taints": [{"key": STANDIN, "effect": "NoSchedule"}],
            "capacity": size, "allocatable": size, "pods": pods}


def _room(nodeclaims: list[dict], entries: list[dict]) -> list[tuple[dict, dict[str, int], dict]]:
    """(entry, what is free on it, its labels) for each seeded running NodeClaim whose status.allocatable
    the dump gives: its allocatable less the requests of the pods already bound there."""
    from harness.loop.scheduling.pods import pod_requests
    from harness.model.values.resources import parse_resource_list
    by_name = {(nc.get("metadata") or {}).get("name"): nc for nc in nodeclaims}
    out = []
    for e in entries:
        alloc = ((by_name.get(e.get("nodeClaim")) or {}).get("status") or {}).get("allocatable")
        if not alloc or not e.get("registered", True) or e.get("deleting"):
            continue
        free = parse_resource_list(alloc)
        for p in e.get("pods") or []:
            for k, v in pod_requests(p.get("spec") or {}).items():
                free[k] = free.get(k, 0) - v
        out.append((e, free, (by_name[e["nodeClaim"]].get("metadata") or {}).get("labels") or {}))
    return out


def _fill(room: list[tuple[dict, dict[str, int], dict]], pods: list[dict]) -> dict[str, str]:
    """Bind each pod to the first NodeClaim whose labels its nodeSelector matches, with room for its
    requests (its entry's pods and free room change); pod name -> NodeClaim name."""
    from harness.loop.scheduling.pods import pod_requests
    out = {}
    for pod in pods:
        want = pod_requests(pod.get("spec") or {})
        select = (pod.get("spec") or {}).get("nodeSelector") or {}
        for entry, free, labels in room:
            if all(str(labels.get(k)) == str(v) for k, v in select.items()) and \
                    all(free.get(k, 0) >= v for k, v in want.items() if v):
                for k, v in want.items():
                    free[k] = free.get(k, 0) - v
                entry.setdefault("pods", []).append(pod)
                out[pod["metadata"]["name"]] = str(entry.get("nodeClaim"))
                break
    return out


def place_without_nodes(dump, objects: list[tuple[dict, str, int]], entries: list[dict], moved: set[str],
                        expect: dict, notes: list[str], strip) -> list[dict]:
    """`entries` with stand-in Nodes added (after the registered entries, before those in flight), `moved`
    and `expect.pods` updated to what the dump says ran. Only for a dump with no Node object. `strip`
    makes a pod of the dump one to apply (dump.py strip_server_fields)."""
    import copy
    deployments = {m["metadata"]["name"]: m for m in dump.manifests if m.get("kind") == "Deployment"}
    seeded = {(nc.get("status") or {}).get("nodeName") for nc in dump.nodeclaims
              if any(e.get("nodeClaim") == (nc.get("metadata") or {}).get("name") for e in entries)}
    added: list[dict] = []
    bound: dict[str, int] = {}
    elsewhere: dict[str, list[dict]] = {}
    for pod in dump.pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if not node or ((pod.get("status") or {}).get("phase") or "Running") not in ("Running", "Pending"):
            continue
        dep = _deployment_of(pod, set(deployments))
        if dep:
            bound[dep] = bound.get(dep, 0) + 1
        if node not in seeded:
            elsewhere.setdefault(node, []).append(pod)
    for node, pods in elsewhere.items():
        added.append(standin(node, [_kept(p, strip) for p in pods]))
        moved.update(p["metadata"]["name"] for p in pods)
        notes.append(f"Node {node} is not in the input, but pod(s) {', '.join(p['metadata']['name'] for p in pods)} "
                     f"run on it (spec.nodeName): seeded on a stand-in Node {node}, not Karpenter's, sized to them "
                     f"and tainted {STANDIN}:NoSchedule")
    free = _room(dump.nodeclaims, entries)
    status = {str(o["metadata"].get("name")): (o.get("status") or {}, o.get("spec") or {}, f"{file}:{line}")
              for o, file, line in objects if o.get("kind") == "Deployment" and o.get("metadata")}
    for name, dep in deployments.items():
        st, spec, where = status.get(name, ({}, {}, ""))
        field = "readyReplicas" if "readyReplicas" in st else "availableReplicas"
        if "replicas" not in st:
            continue                  # no status: nothing says what ran
        running = int(st.get(field) or 0)
        replicas = int(spec.get("replicas", 1))
        missing = running - bound.get(name, 0)
        if missing > 0:
            tmpl = (dep.get("spec") or {}).get("template") or {}
            owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{name}-dump", "controller": True}
            pods = [{"apiVersion": "v1", "kind": "Pod",
                     "metadata": {**copy.deepcopy(tmpl.get("metadata") or {}), "name": f"{name}-dump-{i}",
                                  "namespace": dep["metadata"].get("namespace") or "default",
                                  "ownerReferences": [dict(owner)]},
                     "spec": copy.deepcopy(tmpl.get("spec") or {})} for i in range(missing)]
            where_to = _fill(free, pods)
            rest = [p for p in pods if p["metadata"]["name"] not in where_to]
            if rest:
                added.append(standin(f"standin-{name}", rest))
            on = sorted({where_to[p["metadata"]["name"]] for p in pods if p["metadata"]["name"] in where_to})
            notes.append(f"{where}: Deployment {name}: status.{field} {running} of {replicas}, {bound.get(name, 0)} "
                         f"of them in the input: {missing} pod(s) from its template seeded where they fit, first fit by "
                         "status.allocatable (the input does not say where they ran): "
                         + "; ".join(([f"{len(pods) - len(rest)} on NodeClaim(s) {', '.join(on)}"] if on else [])
                                     + ([f"{len(rest)} on a stand-in Node standin-{name}"] if rest else []))
                         + f"; the other {max(replicas - running, 0)} start pending")
        running = max(running, bound.get(name, 0))
        want = {"scheduled": True} if running >= replicas else \
            {"scheduled": True, "count": running} if running else {"pending": True}
        reason = ((expect.get("pods") or {}).get(name) or {}).get("reason")
        expect.setdefault("pods", {})[name] = {**want, "reason": reason} if reason and "pending" in want else want
    at = next((i for i, e in enumerate(entries) if not e.get("registered", True)), len(entries))
    return entries[:at] + added + entries[at:]
