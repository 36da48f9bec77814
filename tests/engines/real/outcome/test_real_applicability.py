"""Expectations only the simulation can answer are reported, never passed silently."""
from harness.runner.engines.real.outcome.applicability import ignored_given, split


def test_loop_iterations_and_instance_types_are_not_applicable():
    kept, na = split({"loop": {"iterations": 3, "runaway": False}, "instanceTypes": {"Standard_D2s_v3": True},
                      "azure": {"vmCount": 1, "unavailableOfferings": [{"zone": "1"}]}, "nodeCount": 1})
    # the unavailable-offerings cache is read from the controller's debug log (observe.py)
    assert kept == {"loop": {"runaway": False}, "azure": {"vmCount": 1, "unavailableOfferings": [{"zone": "1"}]},
                    "nodeCount": 1}
    assert sorted(n.path for n in na) == ["expect.instanceTypes", "expect.loop.iterations"]
    assert all("not applicable on the real engine" in n.render() for n in na)


def test_an_emptied_section_disappears():
    kept, na = split({"loop": {"iterations": 3}}, "steps[0].expect")
    assert kept == {} and [n.path for n in na] == ["steps[0].expect.loop.iterations"]


def test_given_keys_the_controller_cannot_take_are_reported_and_prices_are_not_among_them():
    """The controller runs as in the public cloud and reads the fake's Retail Prices API, so
    given.prices reaches it (harness/data/real-engine.yaml public_cloud); the loop's bounds and an
    exploration's seeds (the real controller's choices are its own) do not."""
    given = {"prices": {"Standard_D2s_v3": 0.1}, "skus": ["x"], "loop": {"maxIterations": 3, "minValuesPolicy": "BestEffort"},
             "explore": 4}
    assert [n.path for n in ignored_given(given)] == ["given.loop.maxIterations", "given.explore"]


def test_a_consolidations_validation_wait_is_not_applicable_the_rest_of_the_timeline_is_checked():
    """The 15 s validation happens inside the controller's disruption pass and shows nowhere (core
    v1.14.0 pkg/controllers/disruption/validation.go)."""
    timeline = [{"node": 0, "action": "validating"}, {"node": 0, "action": "validated"}, {"node": 0, "action": "tainted"}]
    kept, na = split({"disruption": {"timeline": timeline, "liveNodes": 1}}, "steps[1].expect")
    assert kept == {"disruption": {"timeline": [{"node": 0, "action": "tainted"}], "liveNodes": 1}}
    assert [n.path for n in na] == ["steps[1].expect.disruption.timeline[0]", "steps[1].expect.disruption.timeline[1]"]
