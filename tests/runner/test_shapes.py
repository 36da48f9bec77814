"""harness/runner/shapes.py: one shape schema per manifest kind, and values checked at load."""
from __future__ import annotations

import pytest

from harness.backends.kinds import API_VERSIONS
from harness.runner.shapes import scenario_value_errors, shape_errors, shape_kinds


def test_every_supported_kind_has_a_shape():
    assert set(API_VERSIONS) <= shape_kinds()


@pytest.mark.parametrize("obj, path, words", [
    ({"kind": "Pod", "spec": {"containers": ["x"]}}, ("spec", "containers", 0), "must be a mapping, got 'x'"),
    ({"kind": "Pod", "spec": {"affinity": {"nodeAffinity": []}}}, ("spec", "affinity", "nodeAffinity"), "a mapping"),
    ({"kind": "Pod", "metadata": {"labels": ["a"]}}, ("metadata", "labels"), "a mapping"),
    ({"kind": "DaemonSet", "spec": {"template": {"spec": {"tolerations": [1]}}}},
     ("spec", "template", "spec", "tolerations", 0), "a mapping"),
    ({"kind": "NodePool", "spec": {"template": {"spec": {"requirements": {"key": "a"}}}}},
     ("spec", "template", "spec", "requirements"), "a list"),
    ({"kind": "AKSNodeClass", "spec": {"maxPods": "many"}}, ("spec", "maxPods"), "an integer"),
])
def test_wrong_shapes_are_named_by_path(obj, path, words):
    errors = shape_errors(obj)
    assert errors and errors[0][0] == path and words in errors[0][1]


def test_value_errors():
    data = {"given": {"faults": [{"code": "TooManyRequests", "bogus": 1}], "knobs": {"provider": {"zones": 5}}},
            "steps": [{"advance": "99999999h"}], "expect": {"pods": {"web": {"messageRegex": "[a"}}}}
    reasons = [r for _, r in scenario_value_errors(data)]
    assert any("invalid regular expression" in r for r in reasons)
    assert any("unknown keys ['bogus']" in r for r in reasons)
    assert any("10-year bound" in r for r in reasons)
    assert any("knob provider.zones must be a mapping" in r for r in reasons)
