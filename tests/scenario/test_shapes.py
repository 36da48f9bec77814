"""harness/scenario/shapes.py: one shape schema per manifest kind, and values checked at load."""
from __future__ import annotations

import pytest

from harness.backends.kinds import API_VERSIONS
from harness.scenario.shapes import _pod_spec_changed, scenario_value_errors, shape_errors, shape_kinds


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


SHORT_POD = {"kind": "Pod", "metadata": {"name": "web"},
             "spec": {"containers": [{"name": "app", "image": "nginx:1.27", "resources": {"requests": {"cpu": "1"}}}]}}
# the same Pod as `kubectl get pod -o yaml` prints it once stored (defaults and admission's fields)
STORED_POD = {"kind": "Pod", "metadata": {"name": "web"}, "spec": {
    "containers": [{"name": "app", "image": "nginx:1.27", "imagePullPolicy": "IfNotPresent",
                    "resources": {"requests": {"cpu": "1"}}, "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File"}],
    "dnsPolicy": "ClusterFirst", "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority", "priority": 0,
    "restartPolicy": "Always", "schedulerName": "default-scheduler", "securityContext": {},
    "terminationGracePeriodSeconds": 30,
    "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                     "tolerationSeconds": 300},
                    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                     "tolerationSeconds": 300}]}}


def test_a_stored_pod_applied_again_in_short_form_is_the_same_pod():
    """What the API server defaults and admission adds is not a change of the immutable spec; another value is."""
    assert not _pod_spec_changed(STORED_POD, SHORT_POD)
    assert not _pod_spec_changed(SHORT_POD, STORED_POD)
    other = {**SHORT_POD, "spec": {**SHORT_POD["spec"], "dnsPolicy": "Default"}}
    assert _pod_spec_changed(STORED_POD, other)
    image = {**SHORT_POD, "spec": {"containers": [{**SHORT_POD["spec"]["containers"][0], "image": "nginx:1.28"}]}}
    assert not _pod_spec_changed(STORED_POD, image)          # an image may change
