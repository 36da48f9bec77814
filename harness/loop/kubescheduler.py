"""kube-scheduler's verdict on a pod and a Node's *actual* labels, taints and free resources.

Independent of Karpenter's prediction, so a label Karpenter expected but no writer put on the Node
shows up as a pod that never binds (design 0006 FAQ, runaway provisioning).
"""
from __future__ import annotations

from harness.loop.hostports import NODE_PORTS_REASON, conflict
from harness.loop.pods import PodView, Taint, untolerated
from harness.loop.topology import affinity_terms, match_expression, selector_matches
from harness.model.resources import parse_resource_list


def node_matches(pod: PodView, labels: dict[str, str], node_name: str) -> str | None:
    """None when the node's labels satisfy the pod's nodeSelector and required node affinity."""
    for k, v in pod.node_selector.items():
        if labels.get(k) != v:
            return f"node(s) didn't match Pod's node affinity/selector ({k}={v})"
    terms = pod.required_terms()
    if terms:
        for term in terms:
            exprs_ok = all(match_expression(labels, e) for e in term.get("matchExpressions") or [])
            fields_ok = all(
                (f.get("key") == "metadata.name" and (
                    (f.get("operator") == "In" and node_name in (f.get("values") or [])) or
                    (f.get("operator") == "NotIn" and node_name not in (f.get("values") or []))))
                for f in term.get("matchFields") or [])
            if exprs_ok and fields_ok and (term.get("matchExpressions") or term.get("matchFields")):
                return None
        return "node(s) didn't match Pod's node affinity/selector"
    return None


def _topology_filter(pod: PodView, node: dict, nodes: list[dict], placed: list[tuple[PodView, str]]) -> str | None:
    """InterPodAffinity (required terms, both directions) and PodTopologySpread (DoNotSchedule)."""
    labels_of = {n["metadata"]["name"]: n["metadata"].get("labels") or {} for n in nodes}
    here = node["metadata"].get("labels") or {}

    def matching(term, ns_default):
        namespaces = set(term.get("namespaces") or [ns_default])
        return [(p, n) for p, n in placed if p.namespace in namespaces and selector_matches(term.get("labelSelector"), p.labels)]

    for term in affinity_terms(pod, "podAntiAffinity"):
        key = term["topologyKey"]
        if key in here and any(labels_of.get(n, {}).get(key) == here[key] for _, n in matching(term, pod.namespace)):
            return "node(s) didn't match pod anti-affinity rules"
    for other, n in placed:
        for term in affinity_terms(other, "podAntiAffinity"):
            key = term["topologyKey"]
            if (pod.namespace in set(term.get("namespaces") or [other.namespace]) and
                    selector_matches(term.get("labelSelector"), pod.labels) and key in here and
                    labels_of.get(n, {}).get(key) == here[key]):
                return "node(s) didn't satisfy existing pods anti-affinity rules"
    for term in affinity_terms(pod, "podAffinity"):
        key = term["topologyKey"]
        peers = matching(term, pod.namespace)
        if peers and not any(labels_of.get(n, {}).get(key) == here.get(key) for _, n in peers):
            return "node(s) didn't match pod affinity rules"
    for tsc in pod.spec.get("topologySpreadConstraints") or []:
        if tsc.get("whenUnsatisfiable") == "ScheduleAnyway":
            continue
        key = tsc["topologyKey"]
        if key not in here:
            return "node(s) didn't match pod topology spread constraints (missing required label)"
        eligible = {labels_of[n["metadata"]["name"]][key] for n in nodes
                    if key in labels_of[n["metadata"]["name"]] and node_matches(pod, labels_of[n["metadata"]["name"]], n["metadata"]["name"]) is None}
        counts = {d: 0 for d in eligible}
        for p, n in matching(tsc, pod.namespace):
            d = labels_of.get(n, {}).get(key)
            if d in counts:
                counts[d] += 1
        low = min(counts.values()) if counts else 0
        self_match = 1 if selector_matches(tsc.get("labelSelector"), pod.labels) else 0
        if counts.get(here[key], 0) + self_match - low > int(tsc.get("maxSkew", 1)):
            return "node(s) didn't match pod topology spread constraints"
    return None


def can_bind(pod: PodView, node: dict, requested: dict[str, int], nodes: list[dict] | None = None,
             placed: list[tuple[PodView, str]] | None = None) -> str | None:
    """The filter plugins that matter here: NodeUnschedulable, TaintToleration (NoSchedule and
    NoExecute), NodeAffinity, NodePorts, NodeResourcesFit, InterPodAffinity, PodTopologySpread and Ready."""
    meta, spec = node["metadata"], node.get("spec") or {}
    if spec.get("unschedulable"):
        return "node(s) were unschedulable"
    conditions = {c["type"]: c.get("status") for c in (node.get("status") or {}).get("conditions") or []}
    if conditions.get("Ready") != "True":
        return "node(s) were not ready"
    taints = [Taint.from_dict(t) for t in spec.get("taints") or []]
    bad = untolerated(pod.tolerations, taints)
    if bad:
        return f"node(s) had untolerated taint {{{bad[0].key}: {bad[0].value}}}"
    why = node_matches(pod, meta.get("labels") or {}, meta["name"])
    if why:
        return why
    if pod.host_ports and placed and conflict(pod.host_ports, [hp for p, n in placed if n == meta["name"]
                                                               for hp in p.host_ports]):
        return NODE_PORTS_REASON          # NodePorts (harness/loop/hostports.py)
    alloc = parse_resource_list((node.get("status") or {}).get("allocatable") or {})
    for k, v in pod.requests.items():
        if v > 0 and requested.get(k, 0) + v > alloc.get(k, 0):
            return f"Insufficient {k}"
    if placed and (pod.spec.get("topologySpreadConstraints") or pod.spec.get("affinity") or
                   any((p.spec.get("affinity") or {}).get("podAntiAffinity") for p, _ in placed)):
        return _topology_filter(pod, node, nodes or [node], placed)
    return None
