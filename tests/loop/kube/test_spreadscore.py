"""kubescore.spread_scores: PodTopologySpread's Score and NormalizeScore, cases ported from
k8s.io/kubernetes v1.36.3 pkg/scheduler/framework/plugins/podtopologyspread/scoring_test.go
TestPodTopologySpreadScore (names are the table's; expected scores are its)."""
from __future__ import annotations

from harness.loop.kube.kubescheduler import Snapshot
from harness.loop.kube.kubescore import spread_scores
from harness.loop.scheduling.pods import PodView

HOST, FOO = "kubernetes.io/hostname", {"matchLabels": {"foo": ""}}


def node(name: str, **labels) -> dict:
    labels = {("kubernetes.io/hostname" if k == "hostname" else k): v for k, v in labels.items()}
    return {"metadata": {"name": name, "labels": labels}, "spec": {}, "status": {}}


def pod(name: str, labels=None, spread=(), namespace="default", deleting=False) -> PodView:
    meta = {"name": name, "namespace": namespace, "labels": labels if labels is not None else {"foo": ""}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return PodView({"metadata": meta, "spec": {"containers": [{"name": "c"}], "topologySpreadConstraints": [
        {"maxSkew": s, "topologyKey": k, "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": sel}
        for s, k, sel in spread]}}, 1)


def scores(p: PodView, candidates: list[dict], failed: list[dict], existing: dict[str, int], default=None,
           extra=()) -> list[int]:
    placed = [(pod(f"{n}-{i}"), n) for n, c in existing.items() for i in range(c)] + list(extra)
    return spread_scores(p, candidates, Snapshot(candidates + failed, placed), default)


def test_one_constraint_on_node_all_4_nodes_are_candidates():
    nodes = [node(n, hostname=n) for n in ("node-a", "node-b", "node-c", "node-d")]
    p = pod("p", spread=[(1, HOST, FOO)])
    assert scores(p, nodes, [], {"node-a": 2, "node-b": 1, "node-d": 3}) == [20, 60, 100, 0]


def test_one_constraint_on_node_all_4_nodes_are_candidates_max_skew_2():
    nodes = [node(n, hostname=n) for n in ("node-a", "node-b", "node-c", "node-d")]
    p = pod("p", spread=[(2, HOST, FOO)])
    assert scores(p, nodes, [], {"node-a": 2, "node-b": 1, "node-d": 3}) == [33, 66, 100, 16]


def test_one_constraint_on_node_no_existing_pods_and_a_null_selector():
    nodes = [node(n, hostname=n) for n in ("node-a", "node-b")]
    assert scores(pod("p", spread=[(1, HOST, FOO)]), nodes, [], {}) == [100, 100]
    assert scores(pod("p", spread=[(1, HOST, None)]), nodes, [], {"node-a": 2}) == [100, 100]


def test_system_defaulting_nodes_dont_have_zone_pods_match_service():
    nodes = [node(n, hostname=n) for n in ("node-a", "node-b", "node-c", "node-d")]
    bare = PodView({"metadata": {"name": "p", "namespace": "default", "labels": {"foo": ""}},
                    "spec": {"containers": [{"name": "c"}]}}, 1)
    assert scores(bare, nodes, [], {"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1},
                  default=FOO) == [44, 66, 77, 100]
    assert scores(bare, nodes, [], {"node-a": 4}) == [0, 0, 0, 0]      # nothing selects it: no default


def test_one_constraint_on_node_3_out_of_4_nodes_are_candidates():
    nodes = [node(n, hostname=n) for n in ("node-a", "node-b", "node-x")]
    p = pod("p", spread=[(1, HOST, FOO)])
    assert scores(p, nodes, [node("node-y", hostname="node-y")],
                  {"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}) == [33, 83, 100]


def test_one_node_doesnt_match_topology_key():
    nodes = [node("node-a", hostname="node-a"), node("node-b", n="node-b"), node("node-x", hostname="node-x")]
    p = pod("p", spread=[(1, HOST, FOO)])
    assert scores(p, nodes, [node("node-y", hostname="node-y")],
                  {"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}) == [16, 0, 100]


def test_one_constraint_on_zone_3_out_of_4_nodes_are_candidates():
    nodes = [node("node-a", zone="zone1", hostname="node-a"), node("node-b", zone="zone1", hostname="node-b"),
             node("node-x", zone="zone2", hostname="node-x")]
    p = pod("p", spread=[(1, "zone", FOO)])
    assert scores(p, nodes, [node("node-y", zone="zone2", hostname="node-y")],
                  {"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}) == [75, 75, 100]


def test_two_constraints_on_zone_and_node_2_out_of_4_nodes_are_candidates():
    nodes = [node("node-a", zone="zone1", hostname="node-a"), node("node-x", zone="zone2", hostname="node-x")]
    failed = [node("node-b", zone="zone1", hostname="node-b"), node("node-y", zone="zone2", hostname="node-y")]
    p = pod("p", spread=[(1, "zone", FOO), (1, HOST, FOO)])
    assert scores(p, nodes, failed, {"node-a": 2, "node-b": 1, "node-x": 2, "node-y": 4}) == [100, 63]


def test_existing_pods_in_a_different_namespace_do_not_count():
    nodes = [node(n, hostname=n) for n in ("node-a", "node-b")]
    p = pod("p", spread=[(1, HOST, FOO)])
    assert scores(p, nodes, [], {"node-a": 1, "node-b": 2}, extra=[(pod("p-a1", namespace="ns1"), "node-a")]) == [100, 33]


def test_terminating_pods_should_be_excluded():
    nodes = [node(n, hostname=n) for n in ("node-a", "node-b")]
    p = pod("p", spread=[(1, HOST, FOO)])
    assert scores(p, nodes, [], {"node-b": 1}, extra=[(pod("p-a", deleting=True), "node-a")]) == [100, 0]
