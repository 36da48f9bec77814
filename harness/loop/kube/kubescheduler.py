"""kube-scheduler's filter verdict on a pod and a Node's *actual* labels, taints and free resources.

Independent of Karpenter's prediction, so a label Karpenter expected but no writer put on the Node
shows up as a pod that never binds (design 0006 FAQ, runaway provisioning).

The default profile's filter plugins at the server's version, in their order (k8s.io/kubernetes
v1.36.3 pkg/scheduler/apis/config/v1/default_plugins.go getDefaultPlugins), each from
pkg/scheduler/framework/plugins/: NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts,
NodeResourcesFit, (VolumeBinding: harness/loop/scheduling/volumes.py), PodTopologySpread, InterPodAffinity. A
node fails on its first failing plugin (framework/runtime RunFilterPlugins); NodeResourcesFit reports
every insufficient resource. The harness adds one check kube-scheduler gets from the node lifecycle
controller's not-ready taint: a Node that is not Ready takes no pod.

`Cycle` is one pod's scheduling cycle: PreFilter over every node (the snapshot), then Filter per node.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from harness.loop.scheduling.podutil import terminating
from harness.loop.scheduling.pods import PodView, Taint, tolerates
from harness.loop.scheduling.topology import (HONOR, IGNORE, affinity_terms, match_expression, selector_is_empty,
                                   selector_matches, spread_selector, term_namespaces, term_selector)
from harness.model.values.resources import parse_resource, parse_resource_list

# plugin reasons, verbatim (k8s.io/kubernetes v1.36.3 pkg/scheduler/framework/plugins/...)
UNSCHEDULABLE = "node(s) were unschedulable"                                    # nodeunschedulable
NOT_READY = "node(s) were not ready"                                            # harness (see module doc)
UNTOLERATED = "node(s) had untolerated taint(s)"                                # tainttoleration Filter
NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"             # nodeaffinity ErrReasonPod
NODE_PORTS = "node(s) didn't have free ports for the requested pod ports"       # nodeports ErrReason
TOO_MANY_PODS = "Too many pods"                                                 # noderesources fitsRequest
SPREAD = "node(s) didn't match pod topology spread constraints"                 # podtopologyspread
SPREAD_LABEL = SPREAD + " (missing required label)"
AFFINITY = "node(s) didn't match pod affinity rules"                            # interpodaffinity
ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


def _labels(node: dict) -> dict[str, str]:
    return node["metadata"].get("labels") or {}


def untolerated_do_not_schedule(tolerations: list[dict], taints: Sequence[Taint]) -> Taint | None:
    """v1helper.FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc (NoSchedule and
    NoExecute; PreferNoSchedule never filters)."""
    for t in taints:
        if t.effect in ("NoSchedule", "NoExecute") and not tolerates(tolerations, t):
            return t
    return None


def node_matches(pod: PodView, labels: Mapping[str, str], node_name: str) -> str | None:
    """NodeAffinity Filter: None when the node's labels satisfy the pod's nodeSelector and one of its
    required node-affinity terms (k8s.io/component-helpers v0.36.3 scheduling/corev1/nodeaffinity
    GetRequiredNodeAffinity / RequiredNodeAffinity.Match: a term with no expressions and no fields
    matches nothing; matchFields supports metadata.name)."""
    for k, v in pod.node_selector.items():
        if labels.get(k) != v:
            return NODE_AFFINITY
    required = ((pod.spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return None
    for term in required.get("nodeSelectorTerms") or []:
        exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
        if not exprs and not fields:
            continue
        if not all(match_expression(labels, e) for e in exprs):
            continue
        if all(f.get("key") == "metadata.name" and match_expression({"metadata.name": node_name}, f) for f in fields):
            return None
    return NODE_AFFINITY


def host_ports(pod: PodView) -> list[tuple[str, str, int]]:
    """util.GetHostPorts (k8s.io/kubernetes v1.36.3 pkg/scheduler/util/utils.go): (hostIP, protocol,
    hostPort) of every port with a hostPort, of the containers and of the init containers that run
    for the pod's whole life (restartPolicy Always: sidecars); an empty hostIP is 0.0.0.0 and an empty
    protocol TCP (HostPortInfo sanitize)."""
    out = []
    containers = [c for c in pod.spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    for c in containers + list(pod.spec.get("containers") or []):
        for p in c.get("ports") or []:
            if int(p.get("hostPort") or 0) > 0:
                out.append((str(p.get("hostIP") or "0.0.0.0"), str(p.get("protocol") or "TCP"), int(p["hostPort"])))
    return out


def ports_conflict(want: tuple[str, str, int], used: set[tuple[str, str, int]]) -> bool:
    """HostPortInfo.CheckConflict (k8s.io/kube-scheduler v0.36.3 framework/types.go): same protocol
    and port, and the same IP or either side 0.0.0.0."""
    ip, proto, port = want
    if ip == "0.0.0.0":
        return any(p == port and pr == proto for _, pr, p in used)
    return any(p == port and pr == proto and i in (ip, "0.0.0.0") for i, pr, p in used)


@dataclass(frozen=True, slots=True)
class NodeFacts:
    """What the filter and score plugins read of a Node object itself: spec.unschedulable, the Ready
    condition (the last one listed, as a map of them keeps), the taints, the allocatable resources (as
    NodeResourcesFit parses them, and cpu and memory as the scorers do)."""
    unschedulable: bool
    ready: bool
    taints: tuple[Taint, ...]
    allocatable: Mapping[str, int]
    cpu_memory: tuple[int, int]

    @staticmethod
    def of(node: dict) -> NodeFacts:
        spec, status = node.get("spec") or {}, node.get("status") or {}
        conditions = {c["type"]: c.get("status") for c in status.get("conditions") or []}
        alloc_list = status.get("allocatable") or {}
        return NodeFacts(bool(spec.get("unschedulable")), conditions.get("Ready") == "True",
                         tuple(Taint.from_dict(t) for t in spec.get("taints") or []),
                         parse_resource_list(alloc_list),
                         (parse_resource("cpu", alloc_list.get("cpu", 0)),
                          parse_resource("memory", alloc_list.get("memory", 0))))


class Snapshot:
    """The nodes and the pods bound to them, as kube-scheduler's cache holds them for a pass."""

    def __init__(self, nodes: list[dict], placed: list[tuple[PodView, str]],
                 namespaces: Mapping[str, Mapping[str, str]] | None = None):
        self.nodes = nodes
        self.by_name = {n["metadata"]["name"]: n for n in nodes}
        self.pods: dict[str, list[PodView]] = {n: [] for n in self.by_name}
        self.with_anti: list[tuple[PodView, str]] = []     # HavePodsWithRequiredAntiAffinityList
        self.namespaces = dict(namespaces or {})
        self._terms: dict[tuple[int, str], list] = {}
        # each bound pod's scoring terms (kubescore.affinity_scores), built once per pass rather than once
        # per pod placed: a pass placing the pods of a thousand removed nodes reads every bound pod each time
        self._scored: dict[int, list] = {}
        # per Node, (namespace, selector) -> its pods that selector matches (kubescore.spread_scores), until a
        # pod is added there
        self._matching: dict[str, dict[tuple[str, str], int]] = {}
        # what a Node's filter and score read of the Node itself, read once per pass rather than once per
        # pod and Node (a pass binding the pods of a thousand removed Nodes filters every Node for each)
        self._facts: dict[str, tuple[dict, NodeFacts]] = {}
        # (a pod's tolerations, nodeSelector and node affinity, Node) -> (the Node object, the Node-only plugins'
        # first reason: Cycle._node_only, None when it passes them): a Node object does not change within a pass
        self.static: dict[tuple[str, str], tuple[dict, str | None, Mapping[str, int]]] = {}
        # bound pods with any inter-pod (anti-)affinity term: none, and the pod has none, InterPodAffinity
        # scores every Node 0 without a walk over the bound pods (kubescore.affinity_scores)
        self.with_pod_affinity = 0
        for pv, node in placed:
            self.add(pv, node)

    @staticmethod
    def group(pods: Sequence[PodView]) -> tuple[tuple[PodView, ...], int, tuple[PodView, ...]]:
        """A Node's bound pods as of_nodes reads them: the pods in creation order, how many have an inter-pod
        (anti-)affinity term, the ones with a required anti-affinity term. Kept by the caller while the pods
        are the same (a pod's spec does not change)."""
        return tuple(pods), sum(1 for pv in pods if pv.pod_affinity[0]), tuple(pv for pv in pods if pv.pod_affinity[1])

    @classmethod
    def of_nodes(cls, nodes: list[dict], groups: Mapping[str, tuple], namespaces: Mapping[str, Mapping[str, str]]):
        """The snapshot `Snapshot(nodes, placed, namespaces)` builds with every bound pod placed in creation order,
        from each Node's `group`: no walk over the pods without inter-pod terms."""
        snap = cls(nodes, [], namespaces)
        anti = []
        for node, (pods, with_affinity, with_anti) in groups.items():
            snap.pods[node] = list(pods)
            snap.with_pod_affinity += with_affinity
            anti.extend((pv, node) for pv in with_anti)
        anti.sort(key=lambda pn: pn[0].order)
        snap.with_anti = [(pv, node) for pv, node in anti if snap.terms(pv, "podAntiAffinity")]
        return snap

    def add(self, pv: PodView, node: str) -> None:
        self.pods.setdefault(node, []).append(pv)
        self._matching.pop(node, None)
        kinds = pv.pod_affinity
        if kinds[0]:
            self.with_pod_affinity += 1
        if kinds[1] and self.terms(pv, "podAntiAffinity"):
            self.with_anti.append((pv, node))

    def facts(self, node: dict) -> NodeFacts:
        """The Node's NodeFacts, read once per Snapshot (a Node object does not change within a pass)."""
        name = node["metadata"]["name"]
        hit = self._facts.get(name)
        if hit is None or hit[0] is not node:
            hit = self._facts[name] = (node, NodeFacts.of(node))
        return hit[1]

    def terms(self, pod: PodView, kind: str) -> list[tuple[str, dict | None, frozenset[str]]]:
        """The pod's required (anti-)affinity terms as (topologyKey, selector with matchLabelKeys and
        mismatchLabelKeys merged, namespaces with namespaceSelector merged), cached per pod."""
        key = (id(pod), kind)
        hit = self._terms.get(key)
        if hit is None:
            # a term without a topologyKey (the API server refuses one) matches no node's label
            hit = self._terms[key] = [(str(t.get("topologyKey") or ""), term_selector(pod, t),
                                       term_namespaces(pod, t, self.namespaces))
                                      for t in affinity_terms(pod, kind)]
        return hit

    def count_matching(self, node: str, namespace: str, selector: dict, count) -> int:
        """`count(node, selector)`, cached per Node, namespace and selector until a pod is added to the Node."""
        per = self._matching.setdefault(node, {})
        key = (namespace, repr(selector))
        hit = per.get(key)
        if hit is None:
            hit = per[key] = count(node, selector)
        return hit

    def scored_terms(self, pod: PodView, build) -> list:
        """`build(pod, namespaces)`, cached per pod for this snapshot (a pod's spec does not change within a pass)."""
        hit = self._scored.get(id(pod))
        if hit is None:
            hit = self._scored[id(pod)] = build(pod, self.namespaces)
        return hit

    def ns_labels(self, namespace: str) -> Mapping[str, str]:
        return self.namespaces.get(namespace, {"kubernetes.io/metadata.name": namespace})


class Cycle:
    """One pod's scheduling cycle over a Snapshot: PreFilter state, then `filter(node)`."""

    def __init__(self, pod: PodView, snap: Snapshot):
        self.pod, self.snap = pod, snap
        self.ports = host_ports(pod)
        self._spread = self._prefilter_spread()
        self._affinity = self._prefilter_affinity()
        # what the filter reads of the pod, read once per cycle rather than once per Node
        self._tolerations = pod.tolerations
        self._requests = [(k, v) for k, v in pod.scheduler_requests.items() if k != "pods" and v > 0]
        # the Node-only plugins' verdict (NodeUnschedulable, the Ready check, TaintToleration, NodeAffinity)
        # depends on the pod only through its tolerations, nodeSelector and affinity: pods that share them
        # share the verdict on a Node for the pass (Snapshot.static)
        self._static_key = repr((self._tolerations, pod.spec.get("nodeSelector"),
                                 (pod.spec.get("affinity") or {}).get("nodeAffinity")))

    # -- PodTopologySpread ---------------------------------------------------------------------
    def _prefilter_spread(self):
        """podtopologyspread calPreFilterState: DoNotSchedule constraints (matchLabelKeys merged,
        minDomains default 1, nodeAffinityPolicy default Honor, nodeTaintsPolicy default Ignore,
        filtering.go / common.go filterTopologySpreadConstraints); per constraint the matching pods
        of the pod's namespace on each node that has every constraint's key and passes the
        constraint's node inclusion policies, summed by domain. Only existing Nodes are domains here;
        Karpenter also counts the domains its NodePools could create (core v1.14.0 topology.go
        buildDomainGroups), so a later pod can be bound where Karpenter would not have planned it."""
        pod = self.pod
        constraints = []
        for tsc in pod.spec.get("topologySpreadConstraints") or []:
            if tsc.get("whenUnsatisfiable", "DoNotSchedule") != "DoNotSchedule":
                continue
            constraints.append({"key": tsc["topologyKey"], "selector": spread_selector(pod, tsc),
                                "maxSkew": int(tsc.get("maxSkew", 1)), "minDomains": int(tsc.get("minDomains") or 1),
                                "affinity": tsc.get("nodeAffinityPolicy") or HONOR,
                                "taints": tsc.get("nodeTaintsPolicy") or IGNORE, "counts": {}})
        if not constraints:
            return []
        for node in self.snap.nodes:
            labels = _labels(node)
            if any(c["key"] not in labels for c in constraints):     # nodeLabelsMatchSpreadConstraints
                continue
            name = node["metadata"]["name"]
            taints = self.snap.facts(node).taints
            for c in constraints:
                if c["affinity"] == HONOR and node_matches(pod, labels, name) is not None:
                    continue
                if c["taints"] == HONOR and untolerated_do_not_schedule(pod.tolerations, taints) is not None:
                    continue
                count = 0
                if not selector_is_empty(c["selector"]):             # countPodsMatchSelector
                    count = sum(1 for p in self.snap.pods.get(name, ())
                                if not terminating(p) and p.namespace == pod.namespace
                                and selector_matches(c["selector"], p.labels))
                value = labels[c["key"]]
                c["counts"][value] = c["counts"].get(value, 0) + count
        return constraints

    def _filter_spread(self, labels: Mapping[str, str]) -> str | None:
        """podtopologyspread Filter: matchNum + selfMatch - globalMin <= maxSkew, the global
        minimum being 0 while fewer eligible domains than minDomains exist (minMatchNum)."""
        for c in self._spread:
            value = labels.get(c["key"])
            if value is None:
                return SPREAD_LABEL
            counts = c["counts"]
            low = 0 if len(counts) < c["minDomains"] else min(counts.values())
            self_match = 1 if selector_matches(c["selector"], self.pod.labels) else 0
            if counts.get(value, 0) + self_match - low > c["maxSkew"]:
                return SPREAD
        return None

    # -- InterPodAffinity ----------------------------------------------------------------------
    @staticmethod
    def _term_matches(term, pod: PodView) -> bool:
        """AffinityTerm.Matches (namespaceSelector already merged into the namespaces)."""
        _, selector, namespaces = term
        return pod.namespace in namespaces and selector_matches(selector, pod.labels)

    def _prefilter_affinity(self):
        """interpodaffinity PreFilter: counts per (key, value) of existing pods whose required
        anti-affinity matches the pod, of existing pods matching all of the pod's required affinity
        terms, and of existing pods matching one of its anti-affinity terms."""
        pod, snap = self.pod, self.snap
        affinity, anti = snap.terms(pod, "podAffinity"), snap.terms(pod, "podAntiAffinity")
        existing_anti: dict[tuple[str, str], int] = {}
        aff_counts: dict[tuple[str, str], int] = {}
        anti_counts: dict[tuple[str, str], int] = {}
        for p, name in snap.with_anti:
            node = snap.by_name.get(name)
            if node is None:
                continue
            labels = _labels(node)
            for key, _, _ in [t for t in snap.terms(p, "podAntiAffinity") if self._term_matches(t, pod)]:
                if key in labels:
                    existing_anti[(key, labels[key])] = existing_anti.get((key, labels[key]), 0) + 1
        for name, pods in (snap.pods.items() if affinity or anti else ()):
            node = snap.by_name.get(name)
            if node is None:
                continue
            labels = _labels(node)
            for p in pods:
                if affinity and all(self._term_matches(t, p) for t in affinity):
                    for key, _, _ in affinity:
                        if key in labels:
                            aff_counts[(key, labels[key])] = aff_counts.get((key, labels[key]), 0) + 1
                for t in anti:
                    if self._term_matches(t, p) and t[0] in labels:
                        anti_counts[(t[0], labels[t[0]])] = anti_counts.get((t[0], labels[t[0]]), 0) + 1
        if not existing_anti and not affinity and not anti:
            return None                                                        # Skip
        self_match = bool(affinity) and all(self._term_matches(t, pod) for t in affinity)
        return affinity, anti, existing_anti, aff_counts, anti_counts, self_match

    def _filter_affinity(self, labels: Mapping[str, str]) -> str | None:
        """interpodaffinity Filter: satisfyPodAffinity (every term's key on the node and a matching
        pod in its domain, or no matching pod anywhere and the pod matches its own terms),
        satisfyPodAntiAffinity, satisfyExistingPodsAntiAffinity. Karpenter decides the first pod of
        an affinity differently (core v1.14.0 topologygroup.go nextDomainAffinity, anyCompatiblePodDomain:
        no matching pod in a domain the pod may use is enough); see harness/loop/scheduling/topology.py
        TopologyGroup.next_domain_affinity."""
        if self._affinity is None:
            return None
        affinity, anti, existing_anti, aff_counts, anti_counts, self_match = self._affinity
        pods_exist = True
        for key, _, _ in affinity:
            if key not in labels:
                return AFFINITY
            if aff_counts.get((key, labels[key]), 0) <= 0:
                pods_exist = False
        if not pods_exist and not (not aff_counts and self_match):
            return AFFINITY
        for key, _, _ in anti:
            if key in labels and anti_counts.get((key, labels[key]), 0) > 0:
                return ANTI_AFFINITY
        if existing_anti and any(existing_anti.get((k, v), 0) > 0 for k, v in labels.items()):
            return EXISTING_ANTI_AFFINITY
        return None

    # -- one plugin, one node (the plugins' own tests run one plugin) ---------------------------
    def pod_topology_spread(self, node: dict) -> str | None:
        return self._filter_spread(_labels(node))

    def inter_pod_affinity(self, node: dict) -> str | None:
        return self._filter_affinity(_labels(node))

    def verdict_class(self) -> tuple | None:
        """What this pod's filter verdict on a Node depends on besides the Node, its pods' count and its summed
        requests, when that is all: pods of the same class fail on the same Nodes within a pass
        (nodetree.Verdicts). None for a pod with host ports, a spread constraint or an inter-pod term to judge."""
        if self.ports or self._spread or self._affinity is not None:
            return None
        return self._static_key, tuple(self._requests)

    # -- the node ------------------------------------------------------------------------------
    def _node_only(self, node: dict, name: str, labels: Mapping[str, str]) -> str | None:
        """The first failing reason of the plugins that read only the Node and the pod's own spec."""
        facts = self.snap.facts(node)
        if facts.unschedulable and not tolerates(self._tolerations, UNSCHEDULABLE_TAINT):
            return UNSCHEDULABLE
        if not facts.ready:
            return NOT_READY
        if untolerated_do_not_schedule(self._tolerations, facts.taints) is not None:
            return UNTOLERATED
        return node_matches(self.pod, labels, name)

    def filter(self, node: dict, requested: Mapping[str, int]) -> list[str]:
        """The reasons the node fails (empty: it fits): the first failing plugin's, all of
        NodeResourcesFit's."""
        return self.fails({node["metadata"]["name"]: requested}, node)

    def fails(self, used: Mapping[str, Mapping[str, int]], node: dict) -> list[str]:
        """filter() with the Node's summed requests read from `used` (Node name -> requests), in one call: the
        one kube-scheduler's node tree makes for every Node a cycle filters (functools.partial(cycle.fails,
        used))."""
        snap = self.snap
        name = node["metadata"]["name"]
        requested = used.get(name, _EMPTY)
        # (the Node object, the Node-only plugins' first reason, the Node's allocatable): one lookup per call,
        # the hottest line of a customer-sized run (pods moved x Nodes filtered)
        hit = snap.static.get((self._static_key, name))
        if hit is None or hit[0] is not node:
            hit = snap.static[(self._static_key, name)] = (node, self._node_only(node, name, _labels(node)),
                                                          snap.facts(node).allocatable)
        if hit[1] is not None:
            return [hit[1]]
        pods = snap.pods.get(name, ())
        if self.ports:
            held = {hp for p in pods for hp in host_ports(p)}
            if any(ports_conflict(w, held) for w in self.ports):
                return [NODE_PORTS]
        alloc = hit[2]
        fit = []
        if len(pods) + 1 > alloc.get("pods", 0):
            fit.append(TOO_MANY_PODS)
        for k, v in self._requests:
            if requested.get(k, 0) + v > alloc.get(k, 0):
                fit.append(f"Insufficient {k}")
        if fit:
            return fit
        if not self._spread and self._affinity is None:
            return []
        labels = _labels(node)
        why = self._filter_spread(labels)
        if why is None:
            why = self._filter_affinity(labels)
        return [why] if why else []


_EMPTY: Mapping[str, int] = {}


def can_bind(pod: PodView, node: dict, requested: dict[str, int], nodes: list[dict] | None = None,
             placed: list[tuple[PodView, str]] | None = None,
             namespaces: Mapping[str, Mapping[str, str]] | None = None) -> str | None:
    """The first reason `node` fails for `pod` among `nodes` with `placed` pods bound, or None."""
    reasons = Cycle(pod, Snapshot(nodes or [node], placed or [], namespaces)).filter(node, requested)
    return reasons[0] if reasons else None
