"""harness/model/kube/priorityclass.py and the Priority admission of harness/model/kube/poddefaults.py: a scenario's
PriorityClasses defaulted and validated as kube-apiserver does (k8s.io/kubernetes v1.36.3
pkg/apis/scheduling/validation/validation.go, plugin/pkg/admission/priority/admission.go); the same cases
against the real API server: tests/backends/test_conformance_embedded.py."""
from __future__ import annotations

import pytest

from harness.backends.embedded import EmbeddedCluster
from harness.model.kube.apistatus import APIRejected
from harness.model.kube.poddefaults import admit_pod
from harness.model.kube.priorityclass import PriorityClass, admit, classes_of, default_class, system_classes


def pc(name: str, value: int, **fields) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, **fields}


def pod(**spec) -> dict:
    return {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}], **spec}}


def refused(call) -> str:
    with pytest.raises(APIRejected) as ei:
        call()
    return ei.value.message


def test_the_system_classes_are_the_api_servers():
    assert system_classes() == {"system-node-critical": PriorityClass("system-node-critical", 2000001000),
                                "system-cluster-critical": PriorityClass("system-cluster-critical", 2000000000)}


def test_preemption_policy_is_defaulted():
    assert admit(pc("high", 10), [])["preemptionPolicy"] == "PreemptLowerPriority"
    assert admit(pc("high", 10, preemptionPolicy="Never"), [])["preemptionPolicy"] == "Never"


@pytest.mark.parametrize("obj, message", [
    (pc("huge", 1000000001), 'PriorityClass.scheduling.k8s.io "huge" is invalid: value: Forbidden: maximum allowed '
                             "value of a user defined priority is 1000000000"),
    (pc("system-mine", 5), "PriorityClass.scheduling.k8s.io \"system-mine\" is invalid: metadata.name: Forbidden: "
                           "priority class names with 'system-' prefix are reserved for system use only. error: "
                           "system-mine is not a known system priority class"),
    (pc("system-node-critical", 5), "PriorityClass.scheduling.k8s.io \"system-node-critical\" is invalid: "
                                    "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved "
                                    "for system use only. error: value of system-node-critical PriorityClass must be "
                                    "2000001000"),
    (pc("odd", 5, preemptionPolicy="Sometimes"), 'PriorityClass.scheduling.k8s.io "odd" is invalid: preemptionPolicy: '
                                                 'Unsupported value: "Sometimes": supported values: '
                                                 '"PreemptLowerPriority", "Never"'),
])
def test_invalid_classes_are_refused_with_the_api_servers_words(obj, message):
    assert refused(lambda: admit(obj, [])) == message


def test_only_one_default_can_exist():
    first = admit(pc("a", 1, globalDefault=True), [])
    assert refused(lambda: admit(pc("b", 2, globalDefault=True), [first])) == (
        'priorityclasses.scheduling.k8s.io "b" is forbidden: PriorityClass a is already marked as default. '
        "Only one default can exist")
    assert admit(pc("a", 1, globalDefault=True, description="again"), [first], old=first)["description"] == "again"


def test_value_and_policy_are_immutable():
    old = admit(pc("a", 1), [])
    assert "value: Forbidden: may not be changed in an update." in refused(lambda: admit(pc("a", 2), [old], old=old))


def test_default_class_is_the_lowest_of_the_defaults():
    classes = {c.name: c for c in (PriorityClass("a", 5, True), PriorityClass("b", 3, True), PriorityClass("c", 1))}
    assert default_class(classes).name == "b"
    assert default_class({"c": PriorityClass("c", 1)}) is None


def test_a_pod_gets_its_class_value_and_policy():
    classes = classes_of([admit(pc("high", 1000, preemptionPolicy="Never"), [])])
    spec = admit_pod(pod(priorityClassName="high"), classes=classes)["spec"]
    assert (spec["priority"], spec["preemptionPolicy"]) == (1000, "Never")


def test_a_pod_without_a_class_gets_the_global_default_with_its_name():
    classes = classes_of([admit(pc("normal", 10, globalDefault=True), [])])
    spec = admit_pod(pod(), classes=classes)["spec"]
    assert (spec["priorityClassName"], spec["priority"], spec["preemptionPolicy"]) == ("normal", 10, "PreemptLowerPriority")


def test_a_missing_class_is_refused_with_the_plugins_words():
    assert refused(lambda: admit_pod(pod(priorityClassName="high"), classes=classes_of([]))) == (
        'pods "p" is forbidden: no PriorityClass with name high was found')


def test_the_embedded_store_applies_its_classes_to_new_pods():
    c = EmbeddedCluster()
    c.create(pc("high", 1000))
    made = c.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                     "spec": {"containers": [{"name": "c", "image": "x"}], "priorityClassName": "high"}})
    assert made["spec"]["priority"] == 1000
    c.delete("PriorityClass", "high")
    assert "no PriorityClass with name high was found" in refused(lambda: c.create(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q"},
         "spec": {"containers": [{"name": "c", "image": "x"}], "priorityClassName": "high"}}))
