"""harness/loop/provisioning/nodeoverlay.py: core's NodeOverlay store (weight order, conflicts) and its decorator."""
from __future__ import annotations

import pytest

from harness.loop.provisioning.nodeoverlay import adjusted_price, evaluate, order_by_weight
from harness.model.labels.semantics import semantics_for
from harness.model.upstream.profile import load_profile
from harness.model.azure.instancetypes import NodeClassParams
from tests.loop.loopkit import nodepool, pod
from tests.model.azure.test_instancetypes import build

PROFILE = load_profile("upstream")
SEM = semantics_for(PROFILE)
D2, D4 = "Standard_D2s_v3", "Standard_D4s_v3"


def _overlay(name, types=(D4,), weight=None, **spec):
    spec = {"requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(types)}],
            **spec}
    if weight is not None:
        spec["weight"] = weight
    return {"apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay", "metadata": {"name": name}, "spec": spec}


def _store(*overlays):
    its = build()
    np = nodepool()
    return evaluate(list(overlays), [(np, its)], SEM, PROFILE.well_known_labels), its


@pytest.mark.parametrize("price,change,want", [
    (0.2, "", 0.2), (0.2, "0.05", 0.05), (0.2, "+0.1", 0.3), (0.2, "-0.5", 0.0), (0.2, "+10%", 0.22),
    (0.2, "-50%", 0.1), (0.2, "-100%", 0.0)])
def test_adjusted_price_as_core(price, change, want):
    assert adjusted_price(price, change) == pytest.approx(want)


def test_order_by_weight_highest_first_then_name_from_z():
    names = [o["metadata"]["name"] for o in order_by_weight(
        [_overlay("a", weight=1), _overlay("b"), _overlay("c", weight=5), _overlay("d", weight=1)])]
    assert names == ["c", "d", "a", "b"]


def test_price_applies_to_the_selected_type_only():
    store, its = _store(_overlay("cheap", price="0.01"))
    out = store.apply("default", its)
    assert {o.price for o in out[D4].offerings} == {0.01}
    assert out[D2] is its[D2]
    assert store.verdicts["cheap"][0]


def test_higher_weight_wins_and_equal_weight_conflicts():
    store, its = _store(_overlay("low", price="5", weight=1), _overlay("high", price="0.5", weight=2))
    assert {o.price for o in store.apply("default", its)[D4].offerings} == {0.5}
    store, its = _store(_overlay("x", price="5", weight=3), _overlay("y", price="0.5", weight=3))
    assert store.verdicts["y"] == (True, "ValidationSucceeded", "")       # y sorts first (Z to A)
    assert store.verdicts["x"] == (False, "Conflict", "conflict with another overlay")
    assert {o.price for o in store.apply("default", its)[D4].offerings} == {0.5}


def test_capacity_adds_an_extended_resource():
    store, its = _store(_overlay("dev", capacity={"example.com/device": "2"}))
    out = store.apply("default", its)
    assert out[D4].allocatable()["example.com/device"] == 2
    assert "example.com/device" not in its[D4].allocatable()


def test_an_overlay_for_another_nodepool_selects_nothing():
    o = _overlay("other", price="0.01")
    o["spec"]["requirements"].append({"key": "karpenter.sh/nodepool", "operator": "In", "values": ["gpu"]})
    store, its = _store(o)
    assert store.apply("default", its) is its


def _conditions(sim, name):
    conditions = sim.state.cluster.get("NodeOverlay", name)["status"]["conditions"]
    return {c["type"]: (c["status"], c["reason"]) for c in conditions}


def test_the_gate_on_a_conflict_is_written_and_the_winner_applies(embedded):
    from tests.loop.loopkit import launched, simulation
    with simulation(embedded, [_overlay("x", price="5", weight=3), _overlay("y", types=(D2, D4), price="0.001",
                                                                               weight=3)]) as sim:
        sim.state.cfg.feature_gates = {"NodeOverlay": True}
        claim = launched(sim, pod("a", cpu="500m"))
        assert claim.launched is not None
        assert _conditions(sim, "y")["ValidationSucceeded"] == ("True", "ValidationSucceeded")
        assert _conditions(sim, "x") == {"ValidationSucceeded": ("False", "Conflict"),
                                         "Ready": ("False", "UnhealthyDependents")}


def test_the_gate_off_leaves_the_types_alone(embedded):
    from tests.loop.loopkit import simulation
    with simulation(embedded, [_overlay("cheap", price="0.01")]) as sim:
        its = sim.state.provider.instance_types(NodeClassParams())
        assert sim.state.overlays.instance_types(sim.state, "default", its) is its
        assert "status" not in sim.state.cluster.get("NodeOverlay", "cheap")
