"""harness.model.poddefaults: the Pod the API server stores (tests/backends/test_conformance_embedded.py
compares it with a real kube-apiserver's)."""
from __future__ import annotations

import pytest

from harness.model.apistatus import APIRejected
from harness.model.poddefaults import PodDefaults, admit_pod

NOT_READY, UNREACHABLE = "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"


def _pod(**spec) -> dict:
    return {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}], **spec}}


def _added(tolerations: list[dict]) -> list[str]:
    have = len(tolerations)
    return [t["key"] for t in admit_pod(_pod(tolerations=list(tolerations)))["spec"]["tolerations"][have:]]


@pytest.mark.parametrize("given,added", [
    ([], [NOT_READY, UNREACHABLE]),
    ([{"operator": "Exists"}], []),                                       # an empty key and effect tolerate both
    ([{"operator": "Exists", "effect": "NoExecute"}], []),
    ([{"operator": "Exists", "effect": "NoSchedule"}], [NOT_READY, UNREACHABLE]),
    ([{"key": NOT_READY, "operator": "Exists"}], [UNREACHABLE]),
    ([{"key": UNREACHABLE, "effect": "NoExecute", "tolerationSeconds": 5}], [NOT_READY]),
    ([{"key": NOT_READY, "effect": "NoSchedule"}], [NOT_READY, UNREACHABLE]),
])
def test_default_tolerations_are_added_unless_the_pod_has_one(given, added):
    assert _added(given) == added


def test_default_tolerations_are_the_data_files():
    spec = admit_pod(_pod())["spec"]
    assert spec["tolerations"] == [dict(t) for t in PodDefaults.load().tolerations]
    assert all(t["tolerationSeconds"] == 300 for t in spec["tolerations"])


def test_priority_from_the_class_or_the_default():
    assert admit_pod(_pod())["spec"]["priority"] == 0
    spec = admit_pod(_pod(priorityClassName="system-node-critical"))["spec"]
    assert (spec["priority"], spec["preemptionPolicy"]) == (2000001000, "PreemptLowerPriority")


@pytest.mark.parametrize("spec,message", [
    ({"priorityClassName": "high"}, 'pods "p" is forbidden: no PriorityClass with name high was found'),
    ({"priority": 7}, 'pods "p" is forbidden: the integer value of priority (7) must not be provided in pod spec; '
                      "priority admission controller computed 0 from the given PriorityClass name"),
    ({"preemptionPolicy": "Never"}, 'pods "p" is forbidden: the string value of PreemptionPolicy (Never) must not be '
                                    "provided in pod spec; priority admission controller computed PreemptLowerPriority "
                                    "from the given PriorityClass name"),
])
def test_priority_refusals(spec, message):
    with pytest.raises(APIRejected) as e:
        admit_pod(_pod(**spec))
    assert (e.value.status, e.value.reason, e.value.message) == (403, "Forbidden", message)


def test_update_keeps_the_stored_priority_and_adds_the_tolerations_again():
    old = admit_pod(_pod(priorityClassName="system-cluster-critical"))
    new = _pod(priorityClassName="system-cluster-critical")
    spec = admit_pod(new, old)["spec"]
    assert (spec["priority"], spec["preemptionPolicy"]) == (2000000000, "PreemptLowerPriority")
    assert [t["key"] for t in spec["tolerations"]] == [NOT_READY, UNREACHABLE]


def test_spec_defaults_fill_only_what_is_missing():
    spec = admit_pod(_pod(terminationGracePeriodSeconds=0, hostNetwork=True, containers=[
        {"name": "c", "ports": [{"containerPort": 80}, {"containerPort": 53, "hostPort": 5353, "protocol": "UDP"}],
         "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "100m"}}}]))["spec"]
    assert spec["terminationGracePeriodSeconds"] == 0
    assert (spec["schedulerName"], spec["restartPolicy"]) == ("default-scheduler", "Always")
    assert spec["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP", "hostPort": 80},
                                              {"containerPort": 53, "hostPort": 5353, "protocol": "UDP"}]
    assert spec["containers"][0]["resources"]["requests"] == {"cpu": "100m"}


def test_no_host_port_without_host_network():
    spec = admit_pod(_pod(containers=[{"name": "c", "ports": [{"containerPort": 80}]}]))["spec"]
    assert spec["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
