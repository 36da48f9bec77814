"""harness/scenario/statefulsetspec.py: what kube-apiserver's StatefulSet validation refuses, as the loader says it
(tests/broken/statefulset-*.yaml pin the file:line of each), and which updates it forbids."""
from __future__ import annotations

import copy

import pytest

from harness.scenario.statefulsetspec import UPDATE_FORBIDDEN, spec_errors, update_forbidden


def spec(**over) -> dict:
    out = {"serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
           "template": {"metadata": {"labels": {"app": "db", "tier": "data"}},
                        "spec": {"containers": [{"name": "c", "image": "x"}]}},
           "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
               "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}
    out.update(over)
    return out


def test_a_valid_spec_has_no_error():
    assert spec_errors(spec()) == []
    assert spec_errors(spec(selector={"matchExpressions": [{"key": "app", "operator": "In", "values": ["db"]}]})) == []


@pytest.mark.parametrize("over, path, text", [
    ({"selector": None}, ("spec",), "spec.selector: Required value"),
    ({"selector": {}}, ("spec", "selector"), "spec.selector: empty selector is invalid for statefulset"),
    ({"selector": {"matchLabels": {"app": "web"}}}, ("spec", "template", "metadata"),
     "spec.template.metadata.labels: `selector` does not match template `labels`"),
    ({"podManagementPolicy": "Burst"}, ("spec", "podManagementPolicy"),
     "spec.podManagementPolicy: must be 'OrderedReady' or 'Parallel'"),
    ({"updateStrategy": {"type": "OnDelete", "rollingUpdate": {"partition": 1}}},
     ("spec", "updateStrategy", "rollingUpdate"), "spec.updateStrategy.rollingUpdate: only allowed for updateStrategy "
                                                  "'RollingUpdate'"),
    ({"persistentVolumeClaimRetentionPolicy": {"whenScaled": "Keep"}},
     ("spec", "persistentVolumeClaimRetentionPolicy", "whenScaled"),
     'spec.persistentVolumeClaimRetentionPolicy.whenScaled: Unsupported value: "Keep": supported values: "Retain", '
     '"Delete"'),
    ({"volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": "1Gi"}}}}]},
     ("spec", "volumeClaimTemplates", 0, "spec"),
     "spec.volumeClaimTemplates[0].spec.accessModes: Required value: at least 1 access mode is required"),
])
def test_each_refusal_names_its_field_in_the_api_servers_words(over, path, text):
    assert (path, text) in spec_errors(spec(**over))


def test_a_restart_policy_other_than_always_is_refused():
    s = spec()
    s["template"]["spec"]["restartPolicy"] = "Never"
    assert spec_errors(s) == [(("spec", "template", "spec", "restartPolicy"),
                               'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"')]


def test_updates_may_change_replicas_template_and_strategy_only():
    old = {"kind": "StatefulSet", "metadata": {"name": "db"}, "spec": spec()}
    new = copy.deepcopy(old)
    new["spec"].update(replicas=5, updateStrategy={"type": "OnDelete"}, minReadySeconds=10,
                       persistentVolumeClaimRetentionPolicy={"whenScaled": "Delete"})
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "y"
    assert not update_forbidden(old, new)
    # the defaults and what the API server writes into a claim template are no change (a dump applied short)
    new["spec"]["podManagementPolicy"] = "OrderedReady"
    new["spec"]["volumeClaimTemplates"][0].update(apiVersion="v1", kind="PersistentVolumeClaim", status={"phase": "Pending"})
    new["spec"]["volumeClaimTemplates"][0]["spec"]["volumeMode"] = "Filesystem"
    assert not update_forbidden(old, new)
    for field, value in (("podManagementPolicy", "Parallel"), ("serviceName", "other"),
                         ("selector", {"matchLabels": {"tier": "data"}})):
        changed = copy.deepcopy(old)
        changed["spec"][field] = value
        assert update_forbidden(old, changed), field
    assert UPDATE_FORBIDDEN.startswith("spec: Forbidden: updates to statefulset spec for fields other than 'replicas'")
