"""NodePool limits and weight order (harness/loop/scheduling/limits.py)."""
from __future__ import annotations

from dataclasses import dataclass

from harness.loop.scheduling.limits import (RemainingResources, exceeded_by, exceeded_message, exhausted_message,
                                 nodepool_limits, usage_exceeds_message, weight_order_key)


@dataclass
class IT:
    name: str
    capacity: dict


def np(name, weight=None, limits=None):
    spec = {}
    if weight is not None:
        spec["weight"] = weight
    if limits is not None:
        spec["limits"] = limits
    return {"metadata": {"name": name}, "spec": spec}


def test_limits_parse_to_base_units():
    assert nodepool_limits(np("a", limits={"cpu": "2", "memory": "8Gi", "nodes": "3"})) == {
        "cpu": 2000, "memory": 8 * 2**30, "nodes": 3}
    assert nodepool_limits(np("a")) is None


def test_capacity_equal_to_remaining_is_allowed_and_one_more_is_not():
    rem = RemainingResources.build([np("a", limits={"cpu": "2"})], [])
    small, big = IT("s", {"cpu": 2000}), IT("b", {"cpu": 4000})
    assert rem.check("a", [small, big]) == ([small], None)
    rem.subtract_max("a", [small])
    assert rem.check("a", [small]) == ([], exceeded_message("a"))


def test_launched_nodes_count_one_node_each():
    rem = RemainingResources.build([np("a", limits={"nodes": "1"})], [("a", {"cpu": 2000}, True)])
    assert rem.check("a", [IT("s", {"cpu": 2000})]) == ([], exhausted_message("a"))


def test_nodes_are_not_decremented_within_a_pass():
    rem = RemainingResources.build([np("a", limits={"nodes": "1"})], [])
    it = IT("s", {"cpu": 2000})
    rem.subtract_max("a", [it])
    assert rem.check("a", [it]) == ([it], None)


def test_overshot_node_limit_reads_as_instance_types_exceeding():
    # IsZero is false for a negative remainder; filterByRemainingResources then drops every type
    rem = RemainingResources.build([np("a", limits={"nodes": "1"})], [("a", {}, True), ("a", {}, True)])
    assert rem.check("a", [IT("s", {"cpu": 1})]) == ([], exceeded_message("a"))


def test_unlimited_nodepool_is_unconstrained():
    rem = RemainingResources.build([np("a")], [("a", {"cpu": 10**9}, True)])
    its = [IT("s", {"cpu": 2000})]
    assert rem.check("a", its) == (its, None)


def test_weight_order_heavier_first_then_name_descending():
    pools = [np("a", 10), np("b", 10), np("c"), np("d", 50)]
    assert [p["metadata"]["name"] for p in sorted(pools, key=weight_order_key)] == ["d", "b", "a", "c"]


def test_the_scheduler_drops_node_limits_before_core_v1_4():
    """Core before v1.4.0 has no `nodes` resource in the scheduler: limits.nodes is dropped there
    (core-behaviour.yaml nodeLimits, initializedNodesCounted; Provisioner.Create still checks it); the other
    limits stay."""
    np = {"metadata": {"name": "default"}, "spec": {"limits": {"nodes": "1", "cpu": "4"}}}
    old = RemainingResources.build([np], [("default", {"cpu": 2000}, True)], node_limits=False)
    assert old.remaining == {"default": {"cpu": 2000}}
    new = RemainingResources.build([np], [("default", {"cpu": 2000}, True)])
    assert new.remaining == {"default": {"nodes": 0, "cpu": 2000}}


def test_core_v1_4_to_v1_10_count_initialized_nodes_only_and_plan_at_zero():
    """Core v1.4.0-v1.10.x (nodeLimits false, initializedNodesCounted true): cluster state writes `nodes: 1` into
    the capacity map an initialized node's StateNode.Capacity returns (sigs.k8s.io/karpenter v1.6.2
    pkg/controllers/state/cluster.go updateNodePoolResources), so the scheduler subtracts it; a registered node not
    yet initialized returns a copy and is not counted. No "exhausted" check: none left still plans, fewer than none
    excludes every instance type (scheduler.go filterByRemainingResources)."""
    pool = np("a", limits={"nodes": "1"})
    it = IT("s", {"cpu": 2000})
    at_limit = RemainingResources.build([pool], [("a", {"cpu": 2000}, True)], node_limits=False,
                                        initialized_counted=True)
    assert at_limit.check("a", [it]) == ([it], None)
    over = RemainingResources.build([pool], [("a", {}, True), ("a", {}, True)], node_limits=False,
                                    initialized_counted=True)
    assert over.check("a", [it]) == ([], exceeded_message("a"))
    registering = RemainingResources.build([pool], [("a", {}, True), ("a", {}, False)], node_limits=False,
                                           initialized_counted=True)
    assert registering.check("a", [it]) == ([it], None)


def test_create_refuses_only_usage_above_the_limit():
    """Limits.ExceededBy (sigs.k8s.io/karpenter v1.6.2 pkg/apis/v1/nodepool.go): usage equal to the limit passes,
    so a NodePool whose scheduler does not count nodes ends one node past limits.nodes."""
    pool = np("a", limits={"nodes": "3", "cpu": "8"})
    assert exceeded_by(pool, {"nodes": 3, "cpu": 6000}) is None
    assert exceeded_by(pool, {"nodes": 4, "cpu": 6000}) == ("nodes", 4, 3)
    assert exceeded_by(pool, {"memory": 2**40}) is None          # an unlimited resource never refuses
    assert exceeded_by(np("b"), {"nodes": 9}) is None


def test_create_refusal_words_per_core():
    """serrors from core v1.5.0 (#2136; keys sorted as serrors.Error prints them), fmt.Errorf before."""
    assert usage_exceeds_message("nodes", 5, 3, True) == \
        "resource usage exceeds limit (limit=3, resource-name=nodes, usage=5)"
    assert usage_exceeds_message("nodes", 5, 3, False) == "nodes resource usage of 5 exceeds limit of 3"
    assert usage_exceeds_message("cpu", 8500, 8000, False) == "cpu resource usage of 8.500 exceeds limit of 8"
