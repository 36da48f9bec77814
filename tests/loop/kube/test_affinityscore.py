"""kubescore.affinity_scores: InterPodAffinity's Score and NormalizeScore, cases ported from
k8s.io/kubernetes v1.36.3 pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go
TestPreferredAffinity (names are the table's; expected scores are its)."""
from __future__ import annotations

from harness.loop.kube.kubescheduler import Snapshot
from harness.loop.kube.kubescore import affinity_scores
from harness.loop.scheduling.pods import PodView

S1, S2 = {"security": "S1"}, {"security": "S2"}
CHINA, INDIA, AZ1, AZ2 = {"region": "China"}, {"region": "India"}, {"az": "az1"}, {"az": "az2"}


def _sel(values, op="In"):
    return {"matchExpressions": [{"key": "security", "operator": op, "values": values}]}


def preferred(kind: str, weight: int, values: list[str], key: str) -> dict:
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": weight, "podAffinityTerm": {"labelSelector": _sel(values), "topologyKey": key}}]}}


STAY_WITH_S1_IN_REGION = preferred("podAffinity", 5, ["S1"], "region")
STAY_WITH_S2_IN_REGION = preferred("podAffinity", 6, ["S2"], "region")
AWAY_FROM_S1_IN_AZ = preferred("podAntiAffinity", 5, ["S1"], "az")
AWAY_FROM_S2_IN_AZ = preferred("podAntiAffinity", 5, ["S2"], "az")
HARD_AFFINITY = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": _sel(["S1", "value2"]), "topologyKey": "region"},
    {"labelSelector": {"matchExpressions": [{"key": "security", "operator": "Exists"},
                                            {"key": "wrongkey", "operator": "DoesNotExist"}]},
     "topologyKey": "region"}]}}


def pod(labels=None, affinity=None, name="p") -> PodView:
    spec = {"containers": [{"name": "c"}]}
    if affinity:
        spec["affinity"] = affinity
    return PodView({"metadata": {"name": name, "namespace": "default", "labels": labels or {}}, "spec": spec}, 1)


def scores(incoming: PodView, nodes: dict[str, dict], placed: list[tuple[dict, dict | None, str]]) -> list[int]:
    objs = [{"metadata": {"name": n, "labels": labels}} for n, labels in nodes.items()]
    bound = [(pod(labels, affinity, f"e{i}"), node) for i, (labels, affinity, node) in enumerate(placed)]
    return affinity_scores(incoming, objs, Snapshot(objs, bound))


def test_all_nodes_are_same_priority_as_affinity_is_nil():
    assert scores(pod(S1), {"node1": CHINA, "node2": INDIA, "node3": AZ1}, [(S1, None, "node1")]) == [0, 0, 0]


def test_affinity_pod_that_matches_topology_key_and_pods_in_nodes_gets_high_score():
    assert scores(pod(S1, STAY_WITH_S1_IN_REGION), {"node1": CHINA, "node2": INDIA, "node3": AZ1},
                  [(S1, None, "node1"), (S2, None, "node2"), (S1, None, "node3")]) == [100, 0, 0]


def test_all_nodes_with_the_same_topology_value_have_the_same_score():
    assert scores(pod(None, STAY_WITH_S1_IN_REGION), {"node1": CHINA, "node2": {**CHINA, **AZ1}, "node3": INDIA},
                  [(S1, None, "node1")]) == [100, 100, 0]


def test_the_region_with_more_matching_pods_scores_higher():
    nodes = {"node1": CHINA, "node2": INDIA, "node3": CHINA, "node4": CHINA, "node5": INDIA}
    placed = [(S2, None, n) for n in ("node1", "node1", "node2", "node3", "node4", "node5")]
    assert scores(pod(S1, STAY_WITH_S2_IN_REGION), nodes, placed) == [100, 0, 100, 100, 0]


def test_affinity_symmetry_considers_required_terms_of_existing_pods():
    assert scores(pod(S1), {"node1": CHINA, "node2": INDIA, "node3": AZ1},
                  [(S1, HARD_AFFINITY, "node1"), (S2, HARD_AFFINITY, "node2")]) == [100, 100, 0]


def test_anti_affinity_pod_that_does_not_match_existing_pods_gets_high_score():
    assert scores(pod(S1, AWAY_FROM_S1_IN_AZ), {"node1": AZ1, "node2": CHINA},
                  [(S1, None, "node1"), (S2, None, "node2")]) == [0, 100]


def test_anti_affinity_the_node_with_more_unmatches_gets_high_score():
    assert scores(pod(S1, AWAY_FROM_S1_IN_AZ), {"node1": AZ1, "node2": INDIA},
                  [(S1, None, "node1"), (S1, None, "node1"), (S2, None, "node2")]) == [0, 100]


def test_anti_affinity_symmetry_existing_pods_anti_affinity_match_gets_high_score():
    assert scores(pod(S2), {"node1": AZ1, "node2": AZ2},
                  [(S1, AWAY_FROM_S2_IN_AZ, "node1"), (S2, AWAY_FROM_S1_IN_AZ, "node2")]) == [0, 100]
