"""harness/loop/kube/kubescheduler.py: kube-scheduler's filter plugins, ported from their own table tests.

Each case is a case of k8s.io/kubernetes v1.36.3 pkg/scheduler/framework/plugins/<plugin>/*_test.go, named by
its test function and `name`; the expected verdict per node is upstream's status code (Success: no reason;
Unschedulable / UnschedulableAndUnresolvable: the plugin's reason). Upstream runs one plugin's PreFilter and
Filter over a snapshot, so these cases call that plugin's part of `Cycle` (`pod_topology_spread`,
`inter_pod_affinity`) or the single-plugin helpers; the whole chain is checked at the end.
"""
from __future__ import annotations

import pytest

from harness.loop.kube import kubescheduler as ks
from harness.loop.kube.kubescheduler import Cycle, Snapshot
from harness.loop.scheduling.pods import PodView

OK, SPREAD, SPREAD_LABEL = None, ks.SPREAD, ks.SPREAD_LABEL
AFF, ANTI, EXIST = ks.AFFINITY, ks.ANTI_AFFINITY, ks.EXISTING_ANTI_AFFINITY
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}      # podtopologyspread fooSelector
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}      # barSelector


def pod(name="p", labels=None, ns="default", node=None, tscs=(), affinity=None, anti=None, selector=None,
        node_affinity=None, terminating=False, tolerations=None, ports=(), requests=None):
    spec: dict = {"containers": [{"name": "c", "image": "pause"}]}
    if tscs:
        spec["topologySpreadConstraints"] = list(tscs)
    aff: dict = {}
    if affinity:
        aff["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": affinity}
    if anti:
        aff["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": anti}
    if node_affinity:
        aff["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": node_affinity}}
    if aff:
        spec["affinity"] = aff
    if selector:
        spec["nodeSelector"] = selector
    if tolerations:
        spec["tolerations"] = tolerations
    if ports:
        spec["containers"][0]["ports"] = [dict(p) for p in ports]
    if requests:
        spec["containers"][0]["resources"] = {"requests": requests}
    meta = {"name": name, "namespace": ns, "labels": dict(labels or {})}
    if terminating:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return PodView({"metadata": meta, "spec": spec}, 0), node


def node(name, labels=None, taints=None, alloc=None, ready=True, unschedulable=False):
    n = {"metadata": {"name": name, "labels": dict(labels or {})},
         "spec": {"taints": taints or [], **({"unschedulable": True} if unschedulable else {})},
         "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
                    "allocatable": alloc or {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    return n


def tsc(skew, key, selector, min_domains=None, affinity_policy=None, taints_policy=None):
    t = {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule"}
    if selector is not None:
        t["labelSelector"] = selector
    if min_domains is not None:
        t["minDomains"] = min_domains
    if affinity_policy:
        t["nodeAffinityPolicy"] = affinity_policy
    if taints_policy:
        t["nodeTaintsPolicy"] = taints_policy
    return t


def zone_nodes(**extra):
    """node-a/node-b in zone1, node-x/node-y in zone2, each labeled node=<name> (upstream's four nodes)."""
    return [node(n, {"zone": z, "node": n, **extra.get(n, {})}) for n, z in
            (("node-a", "zone1"), ("node-b", "zone1"), ("node-x", "zone2"), ("node-y", "zone2"))]


def on(*pairs):
    """existing pods: (name, node, labels...)"""
    return [pod(n, {k: "" for k in ls}, node=nd) for n, nd, *ls in pairs]


SPREAD_232 = on(("p-a1", "node-a", "foo"), ("p-a2", "node-a", "foo"), ("p-b1", "node-b", "foo"),
                ("p-y1", "node-y", "foo"), ("p-y2", "node-y", "foo"), ("p-y3", "node-y", "foo"))
TAINT = [{"key": "taint", "value": "", "effect": "NoSchedule"}]
INCLUSION_NODES = [node("node-a", {"node": "node-a", "foo": ""}), node("node-b", {"node": "node-b", "foo": ""}),
                   node("node-x", {"node": "node-x", "foo": ""}), node("node-y", {"node": "node-y"}, TAINT)]
INCLUSION_PODS = on(("p-b1", "node-a", "foo"), ("p-b2", "node-b", "foo"), ("p-y1", "node-y", "foo"))
FOO_IN = [{"matchExpressions": [{"key": "foo", "operator": "In", "values": [""]}]}]

# (test function, case name, incoming pod, nodes, existing pods, node -> expected reason)
SPREAD_CASES = [
    ("TestSingleConstraint", "no existing pods", pod(labels={"foo": ""}, tscs=[tsc(1, "zone", FOO)]), zone_nodes(), [],
     {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK}),
    ("TestSingleConstraint", "no existing pods, incoming pod doesn't match itself", pod(labels={"foo": ""}, tscs=[tsc(1, "zone", BAR)]),
     zone_nodes(), [], {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK}),
    ("TestSingleConstraint", "existing pods in a different namespace do not count", pod(labels={"foo": ""}, tscs=[tsc(1, "zone", FOO)]),
     zone_nodes(), [pod("p-a1", {"foo": ""}, "ns1", "node-a"), pod("p-b1", {"foo": ""}, "ns2", "node-a"),
                    pod("p-x1", {"foo": ""}, node="node-x"), pod("p-y1", {"foo": ""}, node="node-y")],
     {"node-a": OK, "node-b": OK, "node-x": SPREAD, "node-y": SPREAD}),
    ("TestSingleConstraint", "existing pods do not match null selector", pod(labels={"foo": ""}, tscs=[tsc(1, "zone", None)]),
     zone_nodes(), on(("p-x1", "node-x", "foo"), ("p-y1", "node-y", "foo")),
     {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK}),
    ("TestSingleConstraint", "pods spread across zones as 3/3, all nodes fit", pod(labels={"foo": ""}, tscs=[tsc(1, "zone", FOO)]),
     zone_nodes(), SPREAD_232, {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK}),
    ("TestSingleConstraint", "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
     pod(labels={"foo": ""}, tscs=[tsc(1, "zone", FOO)]),
     [node("node-a", {"zone": "zone1", "node": "node-a"}), node("node-b", {"zon": "zone1", "node": "node-b"}),
      node("node-x", {"zone": "zone2", "node": "node-x"}), node("node-y", {"zone": "zone2", "node": "node-y"})],
     on(("p-a1", "node-a", "foo"), ("p-b1", "node-b", "foo"), ("p-x1", "node-x", "foo"), ("p-y1", "node-y", "foo")),
     {"node-a": OK, "node-b": SPREAD_LABEL, "node-x": SPREAD, "node-y": SPREAD}),
    ("TestSingleConstraint", "pod cannot be scheduled as all nodes don't have label 'rack'",
     pod(labels={"foo": ""}, tscs=[tsc(1, "rack", FOO)]),
     [node("node-a", {"zone": "zone1", "node": "node-a"}), node("node-x", {"zone": "zone2", "node": "node-x"})], [],
     {"node-a": SPREAD_LABEL, "node-x": SPREAD_LABEL}),
    ("TestSingleConstraint", "pods spread across nodes as 2/1/0/3, only node-x fits", pod(labels={"foo": ""}, tscs=[tsc(1, "node", FOO)]),
     zone_nodes(), SPREAD_232, {"node-a": SPREAD, "node-b": SPREAD, "node-x": OK, "node-y": SPREAD}),
    ("TestSingleConstraint", "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
     pod(labels={"foo": ""}, tscs=[tsc(2, "node", FOO)]), zone_nodes(), SPREAD_232,
     {"node-a": SPREAD, "node-b": OK, "node-x": OK, "node-y": SPREAD}),
    ("TestSingleConstraint", "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
     pod(labels={"bar": ""}, tscs=[tsc(1, "node", FOO)]), zone_nodes(), SPREAD_232,
     {"node-a": SPREAD, "node-b": OK, "node-x": OK, "node-y": SPREAD}),
    ("TestSingleConstraint", "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
     pod(labels={"foo": ""}, tscs=[tsc(1, "node", FOO)],
         node_affinity=[{"matchExpressions": [{"key": "node", "operator": "In", "values": ["node-a", "node-y"]}]}]),
     zone_nodes(), SPREAD_232, {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": SPREAD}),
    ("TestSingleConstraint", "terminating Pods should be excluded", pod(labels={"foo": ""}, tscs=[tsc(1, "node", FOO)]),
     [node("node-a", {"node": "node-a"}), node("node-b", {"node": "node-b"})],
     [pod("p-a", {"foo": ""}, node="node-a", terminating=True), pod("p-b", {"foo": ""}, node="node-b")],
     {"node-a": OK, "node-b": SPREAD}),
    ("TestSingleConstraint", "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
     pod(labels={"foo": ""}, tscs=[tsc(1, "zone", FOO)],
         node_affinity=[{"matchExpressions": [{"key": "node", "operator": "NotIn", "values": ["node-b"]}]}]),
     zone_nodes(), on(("p-b1", "node-b", "foo"), ("p-b2", "node-b", "foo"), ("p-y1", "node-y", "foo")),
     {"node-a": OK, "node-b": OK, "node-x": SPREAD, "node-y": SPREAD}),
    ("TestSingleConstraint", "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node fits",
     pod(labels={"foo": ""}, tscs=[tsc(2, "node", FOO, min_domains=4)]),
     [node(n, {"node": n}) for n in ("node-a", "node-b", "node-c")],
     on(("p-a1", "node-a", "foo"), ("p-a2", "node-a", "foo"), ("p-b1", "node-b", "foo"), ("p-b2", "node-b", "foo"),
        ("p-c1", "node-c", "foo")),
     {"node-a": SPREAD, "node-b": SPREAD, "node-c": OK}),
    ("TestSingleConstraint", "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes fit",
     pod(labels={"foo": ""}, tscs=[tsc(2, "node", FOO, min_domains=2)]),
     [node(n, {"node": n}) for n in ("node-a", "node-b", "node-c")],
     on(("p-a1", "node-a", "foo"), ("p-a2", "node-a", "foo"), ("p-b1", "node-b", "foo"), ("p-b2", "node-b", "foo"),
        ("p-c1", "node-c", "foo")),
     {"node-a": OK, "node-b": OK, "node-c": OK}),
    ("TestSingleConstraint", "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth nodes fit",
     pod(labels={"foo": ""}, tscs=[tsc(2, "zone", FOO, min_domains=3)]), zone_nodes(),
     on(("p-b1", "node-a", "foo"), ("p-b2", "node-b", "foo"), ("p-y1", "node-y", "foo")),
     {"node-a": SPREAD, "node-b": SPREAD, "node-x": OK, "node-y": OK}),
    ("TestSingleConstraint", "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
     pod(labels={"foo": ""}, tscs=[tsc(2, "zone", FOO, min_domains=1)]), zone_nodes(),
     on(("p-b1", "node-a", "foo"), ("p-b2", "node-b", "foo"), ("p-y1", "node-y", "foo")),
     {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK}),
    ("TestSingleConstraint", "NodeAffinityPolicy honored with labelSelectors",
     pod(labels={"foo": ""}, selector={"foo": ""}, tscs=[tsc(1, "node", FOO)]), INCLUSION_NODES, INCLUSION_PODS,
     {"node-a": SPREAD, "node-b": SPREAD, "node-x": OK, "node-y": OK}),
    ("TestSingleConstraint", "NodeAffinityPolicy ignored with labelSelectors",
     pod(labels={"foo": ""}, selector={"foo": ""}, tscs=[tsc(1, "node", FOO, affinity_policy="Ignore")]), INCLUSION_NODES,
     INCLUSION_PODS, {"node-a": SPREAD, "node-b": SPREAD, "node-x": OK, "node-y": SPREAD}),
    ("TestSingleConstraint", "NodeAffinityPolicy honored with nodeAffinity",
     pod(labels={"foo": ""}, node_affinity=FOO_IN, tscs=[tsc(1, "node", FOO)]), INCLUSION_NODES, INCLUSION_PODS,
     {"node-a": SPREAD, "node-b": SPREAD, "node-x": OK, "node-y": OK}),
    ("TestSingleConstraint", "NodeAffinityPolicy ignored with labelSelectors (nodeAffinity)",
     pod(labels={"foo": ""}, node_affinity=FOO_IN, tscs=[tsc(1, "node", FOO, affinity_policy="Ignore")]), INCLUSION_NODES,
     INCLUSION_PODS, {"node-a": SPREAD, "node-b": SPREAD, "node-x": OK, "node-y": SPREAD}),
    ("TestSingleConstraint", "NodeTaintsPolicy honored", pod(labels={"foo": ""}, tscs=[tsc(1, "node", FOO, taints_policy="Honor")]),
     INCLUSION_NODES, INCLUSION_PODS, {"node-a": SPREAD, "node-b": SPREAD, "node-x": OK, "node-y": OK}),
    ("TestSingleConstraint", "NodeTaintsPolicy ignored", pod(labels={"foo": ""}, tscs=[tsc(1, "node", FOO)]),
     INCLUSION_NODES, INCLUSION_PODS, {"node-a": SPREAD, "node-b": SPREAD, "node-x": OK, "node-y": SPREAD}),
    ("TestMultipleConstraints", "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
     pod(labels={"foo": ""}, tscs=[tsc(1, "zone", FOO), tsc(1, "node", FOO)]), zone_nodes(), SPREAD_232,
     {"node-a": SPREAD, "node-b": SPREAD, "node-x": OK, "node-y": SPREAD}),
    ("TestMultipleConstraints", "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
     pod(labels={"foo": ""}, tscs=[tsc(1, "zone", FOO), tsc(1, "node", FOO)]), zone_nodes(),
     SPREAD_232 + on(("p-y4", "node-y", "foo")), {"node-a": SPREAD, "node-b": SPREAD, "node-x": SPREAD, "node-y": SPREAD}),
    ("TestMultipleConstraints", "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
     pod(labels={"foo": "", "bar": ""}, tscs=[tsc(1, "zone", FOO), tsc(1, "node", BAR)]), zone_nodes(),
     on(("p-a1", "node-a", "foo"), ("p-y1", "node-y", "bar")),
     {"node-a": SPREAD, "node-b": SPREAD, "node-x": OK, "node-y": SPREAD}),
    ("TestMultipleConstraints", "Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
     pod(labels={"foo": "", "bar": ""}, tscs=[tsc(1, "zone", FOO), tsc(1, "node", BAR)]), zone_nodes(),
     on(("p-a1", "node-a", "foo"), ("p-x1", "node-x", "bar"), ("p-y1", "node-y", "bar")),
     {"node-a": SPREAD, "node-b": SPREAD, "node-x": SPREAD, "node-y": SPREAD}),
    ("TestMultipleConstraints", "Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
     pod(labels={"foo": "", "bar": ""}, tscs=[tsc(1, "zone", FOO), tsc(1, "node", BAR)]), zone_nodes(),
     on(("p-a1", "node-a", "foo"), ("p-a2", "node-a", "foo", "bar"), ("p-y1", "node-y", "foo"),
        ("p-y2", "node-y", "foo", "bar"), ("p-y3", "node-y", "foo")),
     {"node-a": SPREAD, "node-b": OK, "node-x": SPREAD, "node-y": SPREAD}),
    ("TestMultipleConstraints", "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
     pod(labels={"bar": ""}, tscs=[tsc(1, "zone", FOO), tsc(1, "node", BAR)]), zone_nodes(),
     on(("p-a1", "node-a", "foo"), ("p-x1", "node-x", "bar"), ("p-y1", "node-y", "bar")),
     {"node-a": OK, "node-b": OK, "node-x": SPREAD, "node-y": SPREAD}),
    ("TestMultipleConstraints", "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
     pod(labels={"foo": ""}, tscs=[tsc(1, "zone", FOO), tsc(1, "node", FOO)]),
     [node("node-a", {"zone": "zone1", "node": "node-a"}), node("node-b", {"zone": "zone1", "node": "node-b"}),
      node("node-x", {"zone": "zone2"}), node("node-y", {"zone": "zone2", "node": "node-y"})],
     on(("p-a1", "node-a", "foo"), ("p-y3", "node-y", "foo")),
     {"node-a": SPREAD, "node-b": OK, "node-x": SPREAD_LABEL, "node-y": SPREAD}),
]


@pytest.mark.parametrize("fn,name,incoming,nodes,existing,want", SPREAD_CASES, ids=[f"{c[0]}/{c[1]}" for c in SPREAD_CASES])
def test_pod_topology_spread_filter(fn, name, incoming, nodes, existing, want):
    """k8s.io/kubernetes v1.36.3 pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go <fn>, case <name>."""
    pv, _ = incoming
    cycle = Cycle(pv, Snapshot(nodes, existing))
    assert {n["metadata"]["name"]: cycle.pod_topology_spread(n) for n in nodes} == want


def aff_term(key, topology, op="In", values=None, namespaces=None, ns_selector=None):
    e = {"key": key, "operator": op}
    if values is not None:
        e["values"] = values
    t = {"labelSelector": {"matchExpressions": [e]}, "topologyKey": topology}
    if namespaces is not None:
        t["namespaces"] = namespaces
    if ns_selector is not None:
        t["namespaceSelector"] = ns_selector
    return t


SECURITYSCAN = {"service": "securityscan"}
S1 = {"security": "S1"}
NODE1 = node("node1", {"region": "r1", "zone": "z11"})
EXISTING = pod("e", SECURITYSCAN, node="node1")
NAMESPACES = {"subteam1.team1": {"team": "team1"}, "subteam2.team1": {"team": "team1"},
              "subteam1.team2": {"team": "team2"}, "subteam2.team2": {"team": "team2"}}     # scoring_test.go namespaces
TEAM1 = {"matchExpressions": [{"key": "team", "operator": "In", "values": ["team1"]}]}


def scan(topology, ns_selector):
    """the namespace-selector cases' term: service In [securityscan, value2]"""
    return aff_term("service", topology, "In", ["securityscan", "value2"], ns_selector=ns_selector)

AFFINITY_CASES = [
    ("TestRequiredAffinitySingleNode", "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
     pod(), [NODE1], [], {"node1": OK}),
    ("TestRequiredAffinitySingleNode", "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
     pod(labels=S1, affinity=[aff_term("service", "region", "In", ["securityscan", "value2"])]), [NODE1], [EXISTING], {"node1": OK}),
    ("TestRequiredAffinitySingleNode", "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod",
     pod(labels=S1, affinity=[aff_term("service", "region", "NotIn", ["securityscan3", "value3"])]), [NODE1], [EXISTING], {"node1": OK}),
    ("TestRequiredAffinitySingleNode", "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
     pod(labels=S1, affinity=[aff_term("service", "", "In", ["securityscan", "value2"], namespaces=["DiffNameSpace"])]), [NODE1],
     [pod("e", SECURITYSCAN, "ns", "node1")], {"node1": AFF}),
    ("TestRequiredAffinitySingleNode", "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
     pod(labels=SECURITYSCAN, affinity=[aff_term("service", "", "In", ["antivirusscan", "value2"])]), [NODE1], [EXISTING],
     {"node1": AFF}),
    ("TestRequiredAffinitySingleNode", "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
     pod(labels=S1, affinity=[aff_term("service", "region", "In", ["securityscan", "value2"])],
         anti=[aff_term("service", "node", "In", ["antivirusscan", "value2"])]), [NODE1], [EXISTING], {"node1": OK}),
    ("TestRequiredAffinitySingleNode", "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
     pod(labels=S1, affinity=[aff_term("service", "region", "In", ["securityscan", "value2"])],
         anti=[aff_term("service", "node", "In", ["antivirusscan", "value2"])]), [NODE1],
     [pod("e", SECURITYSCAN, node="node1", anti=[aff_term("service", "node", "In", ["antivirusscan", "value2"])])], {"node1": OK}),
    ("TestRequiredAffinitySingleNode", "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
     pod(labels=S1, affinity=[aff_term("service", "region", "In", ["securityscan", "value2"])],
         anti=[aff_term("service", "zone", "In", ["securityscan", "value2"])]), [NODE1], [EXISTING], {"node1": ANTI}),
    ("TestRequiredAffinitySingleNode", "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
     pod(labels=SECURITYSCAN, affinity=[aff_term("service", "region", "In", ["securityscan", "value2"])],
         anti=[aff_term("service", "node", "In", ["antivirusscan", "value2"])]), [NODE1],
     [pod("e", SECURITYSCAN, node="node1", anti=[aff_term("service", "zone", "In", ["securityscan", "value2"])])], {"node1": EXIST}),
    ("TestRequiredAffinitySingleNode", "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
     pod(labels=SECURITYSCAN, affinity=[aff_term("service", "region", "NotIn", ["securityscan", "value2"])]),
     [NODE1, node("node2", {"region": "r2"})], [pod("e", SECURITYSCAN, node="node2")], {"node1": AFF}),
    ("TestRequiredAffinitySingleNode", "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
     pod(labels=SECURITYSCAN), [NODE1],
     [pod("e", SECURITYSCAN, node="node1", anti=[aff_term("service", "zone", "In", ["securityscan", "value2"])])], {"node1": EXIST}),
    ("TestRequiredAffinitySingleNode", "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
     pod(labels=SECURITYSCAN), [NODE1],
     [pod("e", SECURITYSCAN, node="node1", anti=[aff_term("service", "zone", "NotIn", ["securityscan", "value2"])])], {"node1": OK}),
    ("TestRequiredAffinitySingleNode", "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
     pod(labels=SECURITYSCAN, anti=[aff_term("service", "region", "Exists"), aff_term("security", "region", "Exists")]), [NODE1],
     [pod("e", S1, node="node1", anti=[aff_term("security", "zone", "Exists")])], {"node1": ANTI}),
    ("TestRequiredAffinitySingleNode", "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
     pod(labels=SECURITYSCAN, anti=[aff_term("service", "zone", "Exists"), aff_term("security", "zone", "Exists")]), [NODE1],
     [pod("e", S1, node="node1", anti=[aff_term("security", "zone", "Exists")])], {"node1": ANTI}),
    ("TestRequiredAffinitySingleNode", "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
     pod(labels=S1, anti=[aff_term("security", "zone", "Exists")]), [NODE1],
     [pod("e", SECURITYSCAN, node="node1", anti=[aff_term("service", "zone", "Exists"), aff_term("security", "zone", "Exists")])],
     {"node1": EXIST}),
    ("TestRequiredAffinitySingleNode", "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
     pod(labels={"abc": "", "xyz": ""}, anti=[aff_term("abc", "zone", "Exists"), aff_term("def", "zone", "Exists")]), [NODE1],
     [pod("e", {"def": "", "xyz": ""}, node="node1", anti=[aff_term("abc", "zone", "Exists"), aff_term("def", "zone", "Exists")])],
     {"node1": ANTI}),
    ("TestRequiredAffinitySingleNode", "affinity with NamespaceSelector",
     pod(labels=S1, affinity=[scan("region", TEAM1)]),
     [NODE1], [pod("e", SECURITYSCAN, "subteam1.team1", "node1")], {"node1": OK}),
    ("TestRequiredAffinitySingleNode", "affinity with non-matching NamespaceSelector",
     pod(labels=S1, affinity=[scan("region", TEAM1)]),
     [NODE1], [pod("e", SECURITYSCAN, "subteam1.team2", "node1")], {"node1": AFF}),
    ("TestRequiredAffinitySingleNode", "anti-affinity with matching NamespaceSelector",
     pod(labels=S1, ns="subteam1.team1", anti=[scan("zone", TEAM1)]),
     [NODE1], [pod("e", SECURITYSCAN, "subteam2.team1", "node1")], {"node1": ANTI}),
    ("TestRequiredAffinitySingleNode", "anti-affinity with matching all NamespaceSelector",
     pod(labels=S1, ns="subteam1.team1", anti=[scan("zone", {})]),
     [NODE1], [pod("e", SECURITYSCAN, "subteam2.team1", "node1")], {"node1": ANTI}),
    ("TestRequiredAffinitySingleNode", "anti-affinity with non-matching NamespaceSelector",
     pod(labels=S1, ns="subteam1.team1", anti=[scan("zone", TEAM1)]),
     [NODE1], [pod("e", SECURITYSCAN, "subteam1.team2", "node1")], {"node1": OK}),
    ("TestRequiredAffinityMultipleNodes", "A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an existing pod that matches the affinity rules",
     pod(affinity=[aff_term("foo", "region", "In", ["bar"])]),
     [node("node1", {"region": "China"}), node("node2", {"region": "China", "az": "az1"}), node("node3", {"region": "India"})],
     [pod("p1", {"foo": "bar"}, node="node1")], {"node1": OK, "node2": OK, "node3": AFF}),
    ("TestRequiredAffinityMultipleNodes", "The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the collection should not be blocked from being scheduled onto any node, even there's no existing pod that matches the rule anywhere.",
     pod(labels={"foo": "bar", "service": "securityscan"},
         affinity=[aff_term("foo", "zone", "In", ["bar"]), aff_term("service", "zone", "In", ["securityscan"])]),
     [node("nodeA", {"zone": "az1", "hostname": "h1"}), node("nodeB", {"zone": "az2", "hostname": "h2"})],
     [pod("p1", {"foo": "bar"}, node="nodeA")], {"nodeA": OK, "nodeB": OK}),
    ("TestRequiredAffinityMultipleNodes", "The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
     pod(labels={"foo": "bar", "service": "securityscan"},
         affinity=[aff_term("foo", "zone", "In", ["bar"]), aff_term("service", "zone", "In", ["securityscan"])]),
     [node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}), node("nodeB", {"zoneLabel": "az2", "hostname": "h2"})],
     [pod("p1", {"foo": "bar"}, node="nodeA")], {"nodeA": AFF, "nodeB": AFF}),
    ("TestRequiredAffinityMultipleNodes", "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
     pod(anti=[aff_term("foo", "region", "In", ["abc"])]),
     [node("nodeA", {"region": "r1", "hostname": "nodeA"}), node("nodeB", {"region": "r1", "hostname": "nodeB"})],
     [pod("e", {"foo": "abc"}, node="nodeA")], {"nodeA": ANTI, "nodeB": ANTI}),
    ("TestRequiredAffinityMultipleNodes", "This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
     pod(anti=[aff_term("foo", "region", "In", ["abc"]), aff_term("service", "zone", "In", ["securityscan"])]),
     [node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}), node("nodeB", {"region": "r1", "zone": "z2", "hostname": "nodeB"})],
     [pod("e", {"foo": "abc", "service": "securityscan"}, node="nodeA")], {"nodeA": ANTI, "nodeB": ANTI}),
]


@pytest.mark.parametrize("fn,name,incoming,nodes,existing,want", AFFINITY_CASES, ids=[f"{c[0]}/{c[1][:80]}" for c in AFFINITY_CASES])
def test_inter_pod_affinity_filter(fn, name, incoming, nodes, existing, want):
    """k8s.io/kubernetes v1.36.3 pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go <fn>, case <name>."""
    pv, _ = incoming
    cycle = Cycle(pv, Snapshot(nodes, existing, NAMESPACES))
    got = {n["metadata"]["name"]: cycle.inter_pod_affinity(n) for n in nodes if n["metadata"]["name"] in want}
    assert got == want


def ported(*ps):
    """hostPort specs "PROTO/IP/PORT" (nodeports node_ports_test.go newPod)."""
    out = []
    for spec in ps:
        proto, ip, port = spec.split("/")
        out.append({"hostIP": ip, "hostPort": int(port), "protocol": proto, "containerPort": int(port)})
    return out


PORT_CASES = [
    ("other port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/9090"], OK),
    ("same udp port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], ks.NODE_PORTS),
    ("same tcp port", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], ks.NODE_PORTS),
    ("different host ip", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.2/8080"], OK),
    ("different protocol", ["UDP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], OK),
    ("second udp port conflict", ["UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], ks.NODE_PORTS),
    ("first tcp port conflict", ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"], ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"], ks.NODE_PORTS),
    ("first tcp port conflict due to 0.0.0.0 hostIP", ["TCP/0.0.0.0/8001"], ["TCP/127.0.0.1/8001"], ks.NODE_PORTS),
    ("TCP hostPort conflict due to 0.0.0.0 hostIP", ["TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"], ["TCP/127.0.0.1/8001"], ks.NODE_PORTS),
    ("second tcp port conflict to 0.0.0.0 hostIP", ["TCP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], ks.NODE_PORTS),
    ("second different protocol", ["UDP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], OK),
    ("UDP hostPort conflict due to 0.0.0.0 hostIP", ["UDP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"], ks.NODE_PORTS),
]


@pytest.mark.parametrize("name,want_ports,used,want", PORT_CASES, ids=[c[0] for c in PORT_CASES])
def test_node_ports_filter(name, want_ports, used, want):
    """k8s.io/kubernetes v1.36.3 pkg/scheduler/framework/plugins/nodeports/node_ports_test.go TestNodePorts, case <name>."""
    n = node("n1")
    incoming, _ = pod(ports=ported(*want_ports))
    cycle = Cycle(incoming, Snapshot([n], [pod("m1", node="n1", ports=ported(*used))]))
    assert (cycle.filter(n, {}) or [None])[0] == want


@pytest.mark.parametrize("sidecar,want", [(False, OK), (True, ks.NODE_PORTS)],
                         ids=["non-sidecar initContainer using hostPort", "TCP hostPort conflict from sidecar initContainer"])
def test_node_ports_init_containers(sidecar, want):
    """k8s.io/kubernetes v1.36.3 nodeports/node_ports_test.go TestNodePorts, the two initContainer cases: only
    a sidecar (restartPolicy Always) holds its host port for the pod's life (pkg/scheduler/util GetHostPorts)."""
    n = node("n1")
    incoming, _ = pod()
    incoming.obj["spec"]["initContainers"] = [{"name": "i", "image": "pause", **({"restartPolicy": "Always"} if sidecar else {}),
                                               "ports": [{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}]}]
    cycle = Cycle(incoming, Snapshot([n], [pod("m1", node="n1", ports=ported("TCP/0.0.0.0/8001"))]))
    assert (cycle.filter(n, {}) or [None])[0] == want


TAINT_CASES = [
    ("A pod having no tolerations can't be scheduled onto a node with nonempty taints", [],
     [{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}], ks.UNTOLERATED),
    ("A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
     [{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}], [{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}], OK),
    ("A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
     [{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}],
     [{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}], ks.UNTOLERATED),
    ("A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints on the node",
     [{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}], [{"key": "foo", "value": "bar", "effect": "NoSchedule"}], OK),
    ("A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be scheduled onto the node",
     [{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}, {"key": "foo", "operator": "Exists", "effect": "NoSchedule"}],
     [{"key": "dedicated", "value": "user2", "effect": "NoSchedule"}, {"key": "foo", "value": "bar", "effect": "NoSchedule"}], OK),
    ("A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect doesn't match",
     [{"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}], [{"key": "foo", "value": "bar", "effect": "NoSchedule"}],
     ks.UNTOLERATED),
    ("The pod has a toleration that keys and values match the taint on the node, the effect of toleration is empty",
     [{"key": "foo", "operator": "Equal", "value": "bar"}], [{"key": "foo", "value": "bar", "effect": "NoSchedule"}], OK),
    ("The pod has a toleration that key and value don't match the taint on the node, but the effect of taint on node is PreferNoSchedule",
     [{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}],
     [{"key": "dedicated", "value": "user1", "effect": "PreferNoSchedule"}], OK),
    ("The pod has no toleration, but the effect of taint on node is PreferNoSchedule", [],
     [{"key": "dedicated", "value": "user1", "effect": "PreferNoSchedule"}], OK),
]


@pytest.mark.parametrize("name,tolerations,taints,want", TAINT_CASES, ids=[c[0][:90] for c in TAINT_CASES])
def test_taint_toleration_filter(name, tolerations, taints, want):
    """k8s.io/kubernetes v1.36.3 pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go
    TestTaintTolerationFilter, case <name> (the Gt/Lt toleration cases need the TaintTolerationComparisonOperators
    feature gate, off by default in v1.36.3, and are not ported)."""
    n = node("nodeA", taints=taints)
    incoming, _ = pod(tolerations=tolerations)
    assert (Cycle(incoming, Snapshot([n], [])).filter(n, {}) or [None])[0] == want


def expr(key, op, *values):
    e = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


NODE_AFFINITY_CASES = [
    ("missing labels", {"foo": "bar"}, None, {}, ks.NODE_AFFINITY),
    ("same labels", {"foo": "bar"}, None, {"foo": "bar"}, OK),
    ("node labels are superset", {"foo": "bar"}, None, {"foo": "bar", "baz": "blah"}, OK),
    ("node labels are subset", {"foo": "bar", "baz": "blah"}, None, {"foo": "bar"}, ks.NODE_AFFINITY),
    ("Pod with matchExpressions using In operator that matches the existing node", None,
     [{"matchExpressions": [expr("foo", "In", "bar", "value2")]}], {"foo": "bar"}, OK),
    ("Pod with matchExpressions using Gt operator that matches the existing node", None,
     [{"matchExpressions": [expr("kernel-version", "Gt", "0204")]}], {"kernel-version": "0206"}, OK),
    ("Pod with matchExpressions using NotIn operator that matches the existing node", None,
     [{"matchExpressions": [expr("mem-type", "NotIn", "DDR", "DDR2")]}], {"mem-type": "DDR3"}, OK),
    ("Pod with matchExpressions using Exists operator that matches the existing node", None,
     [{"matchExpressions": [expr("GPU", "Exists")]}], {"GPU": "NVIDIA-GRID-K1"}, OK),
    ("Pod with affinity that don't match node's labels won't schedule onto the node", None,
     [{"matchExpressions": [expr("foo", "In", "value1", "value2")]}], {"foo": "bar"}, ks.NODE_AFFINITY),
    ("Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node", None,
     [{"matchExpressions": []}], {"foo": "bar"}, ks.NODE_AFFINITY),
    ("Pod with multiple matchExpressions ANDed that matches the existing node", None,
     [{"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")]}], {"GPU": "NVIDIA-GRID-K1"}, OK),
    ("Pod with multiple matchExpressions ANDed that doesn't match the existing node", None,
     [{"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")]}], {"GPU": "NVIDIA-GRID-K1"}, ks.NODE_AFFINITY),
    ("Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto the node", None,
     [{"matchExpressions": [expr("foo", "In", "bar", "value2")]}, {"matchExpressions": [expr("diffkey", "In", "wrong", "value2")]}],
     {"foo": "bar"}, OK),
    ("Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are satisfied, will schedule onto the node",
     {"foo": "bar"}, [{"matchExpressions": [expr("foo", "Exists")]}], {"foo": "bar"}, OK),
    ("Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are deprecating) is not satisfied, won't schedule onto the node",
     {"foo": "bar"}, [{"matchExpressions": [expr("foo", "Exists")]}], {"foo": "barrrrrr"}, ks.NODE_AFFINITY),
    ("Pod with matchFields using In operator that matches the existing node", None,
     [{"matchFields": [expr("metadata.name", "In", "node1")]}], {}, OK),
    ("Pod with matchFields using In operator that does not match the existing node", None,
     [{"matchFields": [expr("metadata.name", "In", "node2")]}], {}, ks.NODE_AFFINITY),
    ("Pod with two terms: matchFields does not match, but matchExpressions matches", None,
     [{"matchFields": [expr("metadata.name", "In", "node2")]}, {"matchExpressions": [expr("foo", "In", "bar")]}], {"foo": "bar"}, OK),
    ("Pod with one term: matchFields does not match, but matchExpressions matches", None,
     [{"matchFields": [expr("metadata.name", "In", "node2")], "matchExpressions": [expr("foo", "In", "bar")]}], {"foo": "bar"},
     ks.NODE_AFFINITY),
    ("Pod with one term: both matchFields and matchExpressions match", None,
     [{"matchFields": [expr("metadata.name", "In", "node1")], "matchExpressions": [expr("foo", "In", "bar")]}], {"foo": "bar"}, OK),
    ("Pod with two terms: both matchFields and matchExpressions do not match", None,
     [{"matchFields": [expr("metadata.name", "In", "node2")]}, {"matchExpressions": [expr("foo", "In", "not-match-to-bar")]}],
     {"foo": "bar"}, ks.NODE_AFFINITY),
    ("Pod with two terms of node.Name affinity", None,
     [{"matchFields": [expr("metadata.name", "In", "node1")]}, {"matchFields": [expr("metadata.name", "In", "node2")]}], {}, OK),
    ("Pod with two conflicting mach field requirements", None,
     [{"matchFields": [expr("metadata.name", "In", "node1"), expr("metadata.name", "In", "node2")]}], {}, ks.NODE_AFFINITY),
]


@pytest.mark.parametrize("name,selector,terms,labels,want", NODE_AFFINITY_CASES, ids=[c[0][:90] for c in NODE_AFFINITY_CASES])
def test_node_affinity_filter(name, selector, terms, labels, want):
    """k8s.io/kubernetes v1.36.3 pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go TestNodeAffinity,
    case <name> (the node is "node1"; the cases of the plugin's added affinity, a scheduler configuration
    argument, are not ported)."""
    incoming, _ = pod(selector=selector, node_affinity=terms)
    assert ks.node_matches(incoming, labels, "node1") == want


def test_the_chain_stops_at_the_first_failing_plugin_and_fit_reports_every_resource():
    """framework/runtime RunFilterPlugins stops at a node's first failing plugin (TaintToleration before
    NodeAffinity here); noderesources/fit.go fitsRequest reports every insufficient resource, and a full
    node is "Too many pods"."""
    tainted = node("n1", {"zone": "z1"}, taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}])
    incoming, _ = pod(selector={"zone": "z2"}, requests={"cpu": "3", "memory": "9Gi"})
    assert Cycle(incoming, Snapshot([tainted], [])).filter(tainted, {}) == [ks.UNTOLERATED]
    small = node("n2", {"zone": "z2"}, alloc={"cpu": "2", "memory": "8Gi", "pods": "1"})
    assert Cycle(incoming, Snapshot([small], [pod("e", node="n2")])).filter(small, {}) == [
        ks.TOO_MANY_PODS, "Insufficient cpu", "Insufficient memory"]


def test_a_pass_reads_each_node_once_and_a_changed_node_again():
    """Snapshot.facts: a Node's conditions, taints and allocatable are read once per pass; a Node object the
    pass has not seen (a later read of the same name) is read again."""
    n = node("n1", {"zone": "z1"}, alloc={"cpu": "2", "memory": "8Gi", "pods": "10"})
    snap = Snapshot([n], [])
    assert snap.facts(n) is snap.facts(n)
    assert snap.facts(n).cpu_memory == (2000, 8 * 1024 ** 3) and snap.facts(n).ready
    tainted = node("n1", {"zone": "z1"}, taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}])
    assert [str(t) for t in snap.facts(tainted).taints] == ["k=v:NoSchedule"]


def test_a_snapshot_of_each_nodes_pods_is_the_snapshot_of_the_pods_placed_in_creation_order():
    """Snapshot.of_nodes (kube-scheduler's pass, from each Node's kept group) holds what Snapshot(nodes, placed)
    holds when `placed` lists every bound pod in creation order: each Node's pods, the pods with inter-pod terms."""
    zone = {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "db"}}}
    made = [pod("a", node="n1", labels={"app": "db"}, anti=[zone]), pod("b", node="n2", affinity=[zone]),
            pod("c", node="n1"), pod("d", node="gone", anti=[zone]), pod("e", node="n2", anti=[zone])]
    placed = []
    for i, (pv, n) in enumerate(made):
        pv.order = i + 1
        placed.append((pv, n))
    nodes = [node("n1", {"zone": "z1"}), node("n2", {"zone": "z2"})]
    groups = {}
    for n in ("n2", "gone", "n1"):
        groups[n] = Snapshot.group([pv for pv, at in placed if at == n])
    want, got = Snapshot(nodes, placed), Snapshot.of_nodes(nodes, groups, {})
    assert {n: [p.name for p in ps] for n, ps in got.pods.items()} == \
        {n: [p.name for p in ps] for n, ps in want.pods.items()}
    assert [(p.name, n) for p, n in got.with_anti] == [(p.name, n) for p, n in want.with_anti] == \
        [("a", "n1"), ("d", "gone"), ("e", "n2")]
    assert got.with_pod_affinity == want.with_pod_affinity == 4
