"""harness/loop/provisioning/nodepool.py: core nodepool validation and readiness."""
from __future__ import annotations

from harness.loop.provisioning import nodepool as npmod
from harness.loop.provisioning.nodepool import NODECLASS_NOT_FOUND, nodeclass_params, ready_nodepools
from tests.loop.loopkit import nodeclass, nodepool, simulation


def _conditions(sim, name="default"):
    return {c["type"]: (c["status"], c["reason"], c["message"])
            for c in sim.cluster.get("NodePool", name)["status"]["conditions"]}


def test_a_nodepool_with_its_nodeclass_is_ready(embedded):
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        assert sim.result.nodepools["default"].ready
        assert _conditions(sim) == {"ValidationSucceeded": ("True", "ValidationSucceeded", ""),
                                    "NodeClassReady": ("True", "NodeClassReady", ""),
                                    "Ready": ("True", "Ready", "")}
        assert [np["metadata"]["name"] for np in ready_nodepools(sim.state)] == ["default"]


def test_a_missing_nodeclass_is_nodeclass_not_found_with_an_event_each_time(embedded):
    with simulation(embedded, [nodepool()]) as sim:
        res = sim.result.nodepools["default"]
        assert not res.ready
        assert _conditions(sim)["NodeClassReady"] == ("False", "NodeClassNotFound", NODECLASS_NOT_FOUND)
        assert _conditions(sim)["Ready"] == ("False", "NotReady", "")
        sim.validate_nodepools()                    # every reconcile records the condition again
        assert res.events == [{"reason": "NodeClassNotFound", "message": NODECLASS_NOT_FOUND}] * 2
        assert ready_nodepools(sim.state) == []
        sim.apply([nodeclass()])
        sim.validate_nodepools()
        assert res.ready


def test_a_runtime_validation_error_fails_validation(embedded, monkeypatch):
    monkeypatch.setattr(npmod, "runtime_validation_error", lambda np, profile: "invalid key name \"x\"")
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        res = sim.result.nodepools["default"]
        assert (res.ready, res.stage, res.message) == (False, "runtime", 'invalid key name "x"')
        assert _conditions(sim)["ValidationSucceeded"] == ("False", "NodePoolValidationFailed", 'invalid key name "x"')


def test_static_nodepools_take_no_part_in_provisioning(embedded):
    static = nodepool("static")
    static["spec"]["replicas"] = 1
    with simulation(embedded, [nodeclass(), nodepool(), static]) as sim:
        assert sim.result.nodepools["static"].ready
        assert [np["metadata"]["name"] for np in ready_nodepools(sim.state)] == ["default"]


def test_nodeclass_params_reads_the_named_nodeclass(embedded):
    with simulation(embedded, [nodeclass()]) as sim:
        assert nodeclass_params(sim.state, "default").image_family == "Ubuntu2204"
        assert nodeclass_params(sim.state, "missing") is None
        assert nodeclass_params(sim.state, "") is None
