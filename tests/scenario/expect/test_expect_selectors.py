"""Selectors and checks in expectations (issue 29): every selector an entry gives is ANDed, every
other key is checked, and a selector that matches nothing fails naming what it looked for and what
there is, unless the entry says `count: 0`."""
from __future__ import annotations

from harness.loop.result import NodePoolResult, NodeResult, PodResult, RunResult
from harness.scenario.expect.match import check


def _result(refused: bool = False) -> RunResult:
    r = RunResult(scenario="s", profile="upstream", backend="embedded", seed=1)
    r.nodes = [
        NodeResult("n-od", 0, "nc-od", "on-demand", "Standard_D2s_v3", "eastus-1", "on-demand", "vm-od",
                   pods=["default/pricing-engine"]),
        NodeResult("n-spot", 1, "nc-spot", "spot", "Standard_D2s_v3", "eastus-2", "spot", "vm-spot",
                   pods=["default/batch"]),
    ]
    r.pods = {
        "default/pricing-engine": PodResult("pricing-engine", "default", node="n-od", state="scheduled"),
        "default/batch": PodResult("batch", "default", node="n-spot", state="scheduled"),
        "default/web-1": PodResult("web-1", "default", owner_kind="Deployment", owner_name="web", state="pending",
                                   reason="no instance type fits"),
        "default/web-2": PodResult("web-2", "default", owner_kind="Deployment", owner_name="web", node="n-od",
                                   state="scheduled"),
    }
    if refused:           # refused at admission: a failure wherever the expectations do not name it
        r.nodepools = {"bad": NodePoolResult("bad", accepted=False, stage="admission", message="m",
                                             events=[{"reason": "Rejected", "message": "m"}])}
    return r


def _paths(expect: dict, refused: bool = False) -> list[str]:
    return [m.path for m in check(expect, _result(refused))]


def test_pod_and_nodepool_are_both_selectors():
    # the case: the pod landed on the on-demand NodePool's node
    got = check({"nodes": [{"pod": "pricing-engine", "nodePool": "spot"}]}, _result())
    assert [m.path for m in got] == ["expect.nodes[0]"]
    assert "'pod': 'pricing-engine', 'nodePool': 'spot'" in str(got[0].expected)
    assert "nodePool on-demand" in got[0].detail and "pricing-engine scheduled on n-od" in got[0].detail
    assert _paths({"nodes": [{"pod": "pricing-engine", "nodePool": "on-demand", "capacityType": "on-demand"}]}) == []


def test_index_is_anded_with_the_other_selectors():
    assert _paths({"nodes": [{"pod": "batch", "index": 0}]}) == ["expect.nodes[0]"]
    assert _paths({"nodes": [{"pod": "batch", "index": 1, "zone": "eastus-2"}]}) == []
    assert _paths({"nodes": [{"nodePool": "spot", "index": 0}]}) == ["expect.nodes[0]"]


def test_without_selector_the_entry_is_the_node_at_its_position():
    assert _paths({"nodes": [{"nodePool": "on-demand"}, {"capacityType": "spot"}]}) == []
    assert _paths({"nodes": [{}, {}, {"capacityType": "spot"}]}) == ["expect.nodes[2]"]


def test_non_selector_keys_are_checked_on_every_selected_node():
    assert _paths({"nodes": [{"pod": "pricing-engine", "zone": "eastus-2"}]}) == ["expect.nodes[0].zone"]


def test_node_count_says_how_many_match_and_zero_is_absence():
    assert _paths({"nodes": [{"nodePool": "gpu", "count": 0}]}) == []
    assert _paths({"nodes": [{"nodePool": "spot", "count": 0}]}) == ["expect.nodes[0].count"]
    assert _paths({"nodes": [{"pod": "batch", "count": 1, "capacityType": "spot"}]}) == []
    assert _paths({"nodes": [{"pod": "batch", "count": 1, "capacityType": "on-demand"}]}) == \
        ["expect.nodes[0].capacityType"]


def test_pod_count_without_a_state_counts_all_and_other_keys_are_checked():
    assert _paths({"pods": {"web": {"count": 2}}}) == []
    assert _paths({"pods": {"web": {"count": 3}}}) == ['expect.pods["web"].count']
    # the state set true selects the pods counted; reason is checked on each of them
    assert _paths({"pods": {"web": {"pending": True, "count": 1, "reasonContains": "fits"}}}) == []
    assert _paths({"pods": {"web": {"pending": True, "count": 1, "reasonContains": "quota"}}}) == \
        ['expect.pods["web"].reasonContains']
    assert _paths({"pods": {"web": {"scheduled": True, "count": 1, "node": 1}}}) == ['expect.pods["web"].node']


def test_pod_count_zero_is_the_way_to_say_none():
    assert _paths({"pods": {"api": {"count": 0}}}) == []
    assert _paths({"pods": {"api": {"pending": True}}}) == ['expect.pods["api"]']
    assert _paths({"pods": {"web": {"ignored": True, "count": 0}}}) == []


def test_nodepool_events_are_checked_beside_a_boolean_rejected():
    assert _paths({"nodePools": {"bad": {"rejected": True, "events": [{"reason": "Rejected"}]}}}, True) == []
    assert _paths({"nodePools": {"bad": {"rejected": True, "events": [{"reason": "Other"}]}}}, True) == \
        ['expect.nodePools["bad"].events[0]']
    assert _paths({}, True) == ['expect.nodePools["bad"]']


def test_dropped_instance_type_fails_allocatable_and_offerings_exactly():
    r = _result()
    r.dropped_skus["Standard_X"] = "no such thing"
    assert [m.path for m in check({"instanceTypes": {"Standard_X": {"allocatable": {"cpu": "1"}}}}, r)] == \
        ['expect.instanceTypes["Standard_X"]']
    assert [m.path for m in check({"instanceTypes": {"Standard_X": {"offeringsExactly": True}}}, r)] == \
        ['expect.instanceTypes["Standard_X"]']
