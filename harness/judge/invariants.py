"""What must hold after any run, whatever the scenario (issue 28 item 5, the fuzzer's fast variant).

Why it is built this way: docs/architecture/runner.md."""
from __future__ import annotations

import contextlib
import copy

from harness.model.values.resources import parse_resource, parse_resource_list

EFFECTS = ("NoSchedule", "NoExecute")


# -- label and taint semantics (k8s.io/apimachinery labels, component-helpers nodeaffinity) --------------
def requirement_holds(req: dict, labels: dict[str, str]) -> bool:
    """One NodeSelectorRequirement against a Node's labels (k8s.io/component-helpers v0.36
    scheduling/corev1/nodeaffinity: In/NotIn/Exists/DoesNotExist/Gt/Lt; NotIn and DoesNotExist hold on
    a missing label)."""
    key, op, values = req["key"], req["operator"], [str(v) for v in req.get("values") or []]
    have = labels.get(key)
    if op == "In":
        return have is not None and have in values
    if op == "NotIn":
        return have is None or have not in values
    if op == "Exists":
        return have is not None
    if op == "DoesNotExist":
        return have is None
    if op in ("Gt", "Lt"):
        try:
            a, b = int(have), int(values[0])
        except (TypeError, ValueError, IndexError):
            return False
        return a > b if op == "Gt" else a < b
    return False


def node_matches_pod(pod_spec: dict, labels: dict[str, str]) -> bool:
    """nodeSelector and required node affinity (any term; each term's expressions all hold)."""
    if any(labels.get(k) != str(v) for k, v in (pod_spec.get("nodeSelector") or {}).items()):
        return False
    required = (((pod_spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms") or []
    if terms and not any(all(requirement_holds(r, labels) for r in t.get("matchExpressions") or [])
                         for t in terms):
        return False
    return True


def tolerated(taint: dict, tolerations: list[dict]) -> bool:
    """core/v1 Toleration.ToleratesTaint (k8s.io/api v0.36 core/v1/toleration.go)."""
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("key") and t["key"] != taint.get("key"):
            continue
        if not t.get("key") and t.get("operator") != "Exists":
            continue
        if t.get("operator") == "Exists" or t.get("value", "") == taint.get("value", ""):
            return True
    return False


def selector_matches(selector: dict | None, labels: dict[str, str]) -> bool:
    if selector is None:
        return False
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for e in selector.get("matchExpressions") or []:
        if not requirement_holds({"key": e["key"], "operator": e["operator"], "values": e.get("values")}, labels):
            return False
    return True


def pod_requests(pod: dict) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in (pod.get("spec") or {}).get("containers") or []:
        for k, v in parse_resource_list((c.get("resources") or {}).get("requests")).items():
            out[k] = out.get(k, 0) + v
    return out


# -- bindings as they happened ------------------------------------------------------------------------
class BindingWatch:
    """Wraps a cluster's `bind` to keep, for each bind, the pod, the node and the cluster's Nodes and
    bound Pods just before it."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.binds: list[tuple[dict, str, list[dict], list[dict]]] = []

    @contextlib.contextmanager
    def watching(self):
        real = self.cluster.bind

        def bind(pod, node_name, *args, **kwargs):
            nodes = copy.deepcopy(self.cluster.list("Node"))
            pods = [p for p in copy.deepcopy(self.cluster.list("Pod")) if (p.get("spec") or {}).get("nodeName")]
            live = self.cluster.get("Pod", pod["metadata"]["name"], pod["metadata"].get("namespace")) or pod
            self.binds.append((copy.deepcopy(live), node_name, nodes, pods))
            return real(pod, node_name, *args, **kwargs)
        self.cluster.bind = bind
        try:
            yield self
        finally:
            del self.cluster.bind             # the instance attribute; the class's method again


def _daemon(pod: dict) -> bool:
    return any(o.get("kind") == "DaemonSet" for o in (pod.get("metadata") or {}).get("ownerReferences") or [])


def binding_violations(pod: dict, node_name: str, nodes: list[dict], pods: list[dict]) -> list[str]:
    """Why binding `pod` to `node_name` broke one of its constraints, judged on `nodes` and the
    bound `pods` as they were then."""
    name = f"{pod['metadata'].get('namespace', 'default')}/{pod['metadata']['name']}"
    spec = pod.get("spec") or {}
    ns = pod["metadata"].get("namespace") or "default"
    own = pod["metadata"].get("labels") or {}
    node = next((n for n in nodes if n["metadata"]["name"] == node_name), None)
    if node is None:
        return [f"{name} bound to {node_name}, which does not exist"]
    labels = node["metadata"].get("labels") or {}
    out = []
    if not node_matches_pod(spec, labels):
        out.append(f"{name} bound to {node_name} against its node selector or required node affinity")
    for t in (node.get("spec") or {}).get("taints") or []:
        if t.get("effect") in EFFECTS and not tolerated(t, spec.get("tolerations") or []):
            out.append(f"{name} bound to {node_name} with the untolerated taint {t.get('key')}={t.get('value', '')}:{t['effect']}")
    used: dict[str, int] = {}
    on_node = [p for p in pods if p["spec"].get("nodeName") == node_name]
    for p in on_node + [pod]:
        for k, v in pod_requests(p).items():
            used[k] = used.get(k, 0) + v
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    for k, v in used.items():
        if k in allocatable and v > parse_resource(k, allocatable[k]):
            out.append(f"{name} bound to {node_name}: {k} requests {v} exceed allocatable {allocatable[k]}")
    if "pods" in allocatable and len(on_node) + 1 > int(allocatable["pods"]):
        out.append(f"{name} bound to {node_name}: more pods than allocatable {allocatable['pods']}")
    node_of = {n["metadata"]["name"]: n["metadata"].get("labels") or {} for n in nodes}

    def same_domain(other_node: str, key: str) -> bool:
        return key in labels and node_of.get(other_node, {}).get(key) == labels[key]
    anti = ((spec.get("affinity") or {}).get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []
    for term in anti:
        for p in pods:
            if (p["metadata"].get("namespace") or "default") == ns and \
                    selector_matches(term.get("labelSelector"), p["metadata"].get("labels") or {}) and \
                    same_domain(p["spec"]["nodeName"], term["topologyKey"]):
                out.append(f"{name} bound to {node_name} against its pod anti-affinity ({term['topologyKey']}: "
                           f"{p['metadata']['name']} is there)")
    for p in pods:              # the pods already there, whose anti-affinity the new pod must not break
        pspec = p.get("spec") or {}
        for term in ((pspec.get("affinity") or {}).get("podAntiAffinity") or {}).get(
                "requiredDuringSchedulingIgnoredDuringExecution") or []:
            if (p["metadata"].get("namespace") or "default") == ns and selector_matches(term.get("labelSelector"), own) \
                    and same_domain(pspec["nodeName"], term["topologyKey"]):
                out.append(f"{name} bound to {node_name} against {p['metadata']['name']}'s pod anti-affinity")
    for c in spec.get("topologySpreadConstraints") or []:
        if c.get("whenUnsatisfiable") != "DoNotSchedule":
            continue
        key = c["topologyKey"]
        if key not in labels:
            out.append(f"{name} bound to {node_name}, which has no {key} label its spread needs")
            continue
        eligible = {n["metadata"]["name"]: (n["metadata"].get("labels") or {})[key] for n in nodes
                    if key in (n["metadata"].get("labels") or {}) and node_matches_pod(spec, n["metadata"].get("labels") or {})}
        counts = {d: 0 for d in eligible.values()}
        for p in pods:
            if (p["metadata"].get("namespace") or "default") == ns and p["spec"]["nodeName"] in eligible and \
                    selector_matches(c.get("labelSelector"), p["metadata"].get("labels") or {}):
                counts[eligible[p["spec"]["nodeName"]]] += 1
        if not counts:
            continue
        self_match = 1 if selector_matches(c.get("labelSelector"), own) else 0
        min_match = 0 if c.get("minDomains", 1) > len(counts) else min(counts.values())
        skew = counts.get(labels[key], 0) + self_match - min_match
        if skew > int(c["maxSkew"]):
            out.append(f"{name} bound to {node_name} with {key} skew {skew} > maxSkew {c['maxSkew']} "
                       f"(pods per domain then: {dict(sorted(counts.items()))})")
    return out


# -- after the run ----------------------------------------------------------------------------------------
def result_violations(result, manifests: list[dict]) -> list[str]:
    """Invariants 1 and 3 on the final RunResult and the scenario's manifests."""
    pools = {m["metadata"]["name"]: m for m in manifests if m.get("kind") == "NodePool"}
    templates = {m["metadata"]["name"]: m["spec"]["template"]["spec"] for m in manifests if m.get("kind") == "Deployment"}
    templates.update({m["metadata"]["name"]: m.get("spec") or {} for m in manifests if m.get("kind") == "Pod"})
    out = []
    for n in result.nodes:
        if n.deleted is not None:
            continue                     # disrupted or collected: its labels are gone with it
        pool = pools.get(n.nodepool)
        if pool is None:
            out.append(f"node {n.name}: NodePool {n.nodepool} is not in the scenario")
            continue
        for req in pool["spec"]["template"]["spec"].get("requirements") or []:
            if not requirement_holds(req, n.labels):
                out.append(f"node {n.name} ({n.instance_type}, NodePool {n.nodepool}) breaks the NodePool's requirement "
                           f"{req['key']} {req['operator']} {req.get('values', '')}: label {n.labels.get(req['key'])!r}")
        for p in result.pods.values():
            if n.nodeclaim in p.nodeclaims:
                spec = templates.get(p.owner_name if p.owner_kind == "Deployment" else p.name)
                if spec is not None and not node_matches_pod(spec, n.labels):
                    out.append(f"node {n.name} ({n.instance_type}) was launched for pod {p.name} but breaks its node "
                               "selector or required node affinity")
    for name, pool in pools.items():
        limits = pool["spec"].get("limits") or {}
        live = {n.nodeclaim: n for n in result.nodes if n.deleted is None}
        # limits cap what exists at once: a disrupted NodeClaim's replacement is not over the limit
        launched = [c for c in result.nodeclaims if c.launched and c.nodepool == name and
                    (c.name in live or not any(n.nodeclaim == c.name for n in result.nodes))]
        used: dict[str, int] = {}
        for c in launched:
            node = live.get(c.name)
            it = result.instance_types.get(node.instance_type) if node else None
            for k, v in (it.capacity if it is not None else {}).items():
                used[k] = used.get(k, 0) + v
        for k, v in limits.items():
            if k == "nodes":
                if len(launched) > int(v):
                    out.append(f"NodePool {name}: {len(launched)} NodeClaims exceed its limit of {v} nodes")
            elif used.get(k, 0) > parse_resource(k, v):
                out.append(f"NodePool {name}: launched {k} {used[k]} exceeds its limit {v}")
    return out
