"""harness/loop/kube/nodetree.py: kube-scheduler's node tree and how many Nodes a cycle filters, with the cases of
k8s.io/kubernetes v1.36.3 pkg/scheduler/backend/cache/node_tree_test.go and schedule_one_test.go."""
from __future__ import annotations

import random

import pytest

from harness.loop.kube.nodetree import (
    NodeTree,
    Verdicts,
    num_feasible_nodes_to_find,
    zone_key,
)

R, Z = "topology.kubernetes.io/region", "topology.kubernetes.io/zone"
BR, BZ = "failure-domain.beta.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone"

# node_tree_test.go allNodes
LABELS = [{}, {R: "region-1"}, {Z: "zone-2"}, {R: "region-1", Z: "zone-2"}, {R: "region-1", Z: "zone-2"},
          {R: "region-1", Z: "zone-3"}, {R: "region-2", Z: "zone-2"}, {R: "region-2", Z: "zone-2"},
          {R: "region-2", Z: "zone-2"}, {R: "region-2", Z: "zone-2", BR: "region-2", BZ: "zone-2"},
          {BR: "region-2", BZ: "zone-3"}]


def node(i: int) -> dict:
    return {"metadata": {"name": f"node-{i}", "labels": LABELS[i]}}


@pytest.mark.parametrize("total, want", [(10, 10), (99, 99), (100, 100), (200, 100), (250, 120), (1000, 420),
                                         (5000, 500), (6000, 300)])
def test_num_feasible_nodes_to_find(total, want):
    """TestNumFeasibleNodesToFind (percentageOfNodesToScore not set), and the adaptive share around it."""
    assert num_feasible_nodes_to_find(total) == want


def test_num_feasible_nodes_with_a_percentage():
    assert num_feasible_nodes_to_find(10, 40) == 10
    assert num_feasible_nodes_to_find(1000, 40) == 400
    assert num_feasible_nodes_to_find(6000, 40) == 2400


def test_zone_key_reads_the_ga_labels_then_the_beta_ones():
    assert zone_key({}) == ""
    assert zone_key(LABELS[1]) == "region-1:\x00:"
    assert zone_key(LABELS[9]) == zone_key(LABELS[8])
    assert zone_key(LABELS[10]) == "region-2:\x00:zone-3"


@pytest.mark.parametrize("added, want", [
    ([], []),
    ([0], ["node-0"]),
    ([0, 1, 2, 3], ["node-0", "node-1", "node-2", "node-3"]),
    (list(range(9)), ["node-0", "node-1", "node-2", "node-3", "node-5", "node-6", "node-4", "node-7", "node-8"]),
])
def test_list_takes_the_zones_in_turn(added, want):
    """TestNodeTree_List."""
    tree = NodeTree()
    assert tree.update([node(i) for i in added]) == want


def test_a_node_added_later_goes_to_the_end_of_its_zone():
    """TestNodeTreeMultiOperations 'add more nodes to an exhausted zone'."""
    tree = NodeTree()
    tree.update([node(i) for i in range(4, 9)])
    assert tree.update([node(i) for i in range(3, 9)]) == ["node-4", "node-5", "node-6", "node-3", "node-7", "node-8"]


def test_removing_the_last_node_of_a_zone_removes_the_zone():
    """TestNodeTreeMultiOperations 'remove zone and add new'."""
    tree = NodeTree()
    tree.update([node(3), node(4)])
    tree.update([node(4), node(6)])
    assert tree.zones == [zone_key(LABELS[4]), zone_key(LABELS[6])]
    assert tree.update([node(6), node(7)]) == ["node-6", "node-7"]
    assert tree.zones == [zone_key(LABELS[6])]


def test_a_node_whose_zone_changes_moves_to_its_new_zone():
    """updateNode: removed from the old zone, added to the new one."""
    tree = NodeTree()
    tree.update([node(3), node(4), node(5)])
    moved = {"metadata": {"name": "node-3", "labels": LABELS[5]}}
    assert tree.update([moved, node(4), node(5)]) == ["node-4", "node-5", "node-3"]


def nodes(n: int) -> list[dict]:
    return [{"metadata": {"name": f"n{i:04d}", "labels": {R: "r", Z: f"z{i % 3}"}}} for i in range(n)]


def test_a_small_cluster_filters_every_node():
    tree = NodeTree()
    order = nodes(50)
    seen = []
    feasible, reasons = tree.find(order, lambda n: seen.append(n) or ([] if n is not order[7] else ["Insufficient cpu"]))
    assert len(seen) == 50 and len(feasible) == 49 and reasons == ["Insufficient cpu"]
    assert tree.next_start == 0                      # (0 + 49 + 1) % 50


def test_a_large_cluster_stops_at_enough_feasible_nodes_and_goes_on_from_there():
    """findNodesThatPassFilters: 420 of 1,000 feasible Nodes are enough; the next cycle starts after the
    Nodes processed (feasible and failed)."""
    tree = NodeTree()
    order = nodes(1000)
    failing = {id(order[i]) for i in range(0, 1000, 10)}          # every tenth Node is full
    feasible, reasons = tree.find(order, lambda n: ["Insufficient cpu"] if id(n) in failing else [])
    assert len(feasible) == 420
    assert len(reasons) == 47 and tree.next_start == 467
    feasible2, _ = tree.find(order, lambda n: [])
    assert feasible2[0] is order[467] and len(feasible2) == 420 and tree.next_start == 887
    feasible3, _ = tree.find(order, lambda n: [])
    assert feasible3[0] is order[887] and feasible3[113] is order[0]     # wraps around


def test_no_feasible_node_processes_every_node():
    tree = NodeTree()
    tree.next_start = 5
    feasible, reasons = tree.find(nodes(300), lambda n: ["node(s) were unschedulable"])
    assert feasible == [] and len(reasons) == 300 and tree.next_start == 5


@pytest.mark.parametrize("total, share", [(50, 0.5), (300, 0.1), (300, 0.9), (1200, 0.02), (1200, 0.6)])
def test_verdicts_give_what_filtering_every_node_gives(total, share):
    """find_in over a pod class's kept verdicts takes the Nodes, and leaves nextStartNodeIndex, where find()
    filtering Node by Node does, as Nodes take pods and stop fitting (or fit again) between cycles; the
    reasons it gives when nothing fits are find()'s."""
    rng = random.Random(f"{total}-{share}")
    nodes = [{"metadata": {"name": f"n-{i:04d}"}} for i in range(total)]
    full = {n["metadata"]["name"] for n in nodes if rng.random() > share}

    def fails(node: dict) -> list[str]:
        return ["Insufficient cpu", "Insufficient memory"] if node["metadata"]["name"] in full else []

    by_filter, by_verdicts = NodeTree(), NodeTree()
    verdicts = Verdicts(nodes, fails)
    for _ in range(60):
        want = by_filter.find(nodes, fails)
        got = by_verdicts.find_in(nodes, verdicts)
        assert got[0] == want[0]
        assert by_verdicts.next_start == by_filter.next_start
        if not want[0]:
            assert sorted(got[1]) == sorted(want[1])
        for _ in range(rng.randrange(1, 20)):     # a pod bound there, or a pod gone
            i = rng.randrange(total)
            full.symmetric_difference_update({nodes[i]["metadata"]["name"]})
            verdicts.changed(i, nodes[i])
    full.update(n["metadata"]["name"] for n in nodes)
    for i, n in enumerate(nodes):
        verdicts.changed(i, n)
    got, want = by_verdicts.find_in(nodes, verdicts), by_filter.find(nodes, fails)
    assert got[0] == want[0] == [] and sorted(got[1]) == sorted(want[1]) and len(want[1]) == 2 * total
