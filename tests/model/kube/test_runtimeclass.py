"""harness/model/kube/runtimeclass.py: kube-apiserver's RuntimeClass admission (k8s.io/kubernetes v1.36.3
plugin/pkg/admission/runtimeclass/admission.go), and the embedded store applying it to every new pod.
tests/backends/test_conformance_embedded.py compares the same cases with the real API server."""
from __future__ import annotations

import pytest

from harness.backends.embedded import EmbeddedCluster
from harness.model.kube.apistatus import APIRejected
from harness.model.kube.runtimeclass import admit_pod, merge_tolerations

RC = {"kind": "RuntimeClass", "metadata": {"name": "rc"}, "handler": "runc",
      "overhead": {"podFixed": {"cpu": "2"}},
      "scheduling": {"nodeSelector": {"sandbox": "true"},
                     "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]}}
CLASSES = {"rc": RC, "bare": {"kind": "RuntimeClass", "metadata": {"name": "bare"}, "handler": "runc"}}


def pod(**spec) -> dict:
    return {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}], **spec}}


def refusal(p: dict) -> str:
    with pytest.raises(APIRejected) as ei:
        admit_pod(p, CLASSES.get)
    assert (ei.value.status, ei.value.reason) == (403, "Forbidden")
    return ei.value.message


def test_pod_without_runtime_class_is_untouched():
    p = pod(nodeSelector={"a": "b"})
    assert admit_pod(pod(nodeSelector={"a": "b"}), CLASSES.get) == p


def test_class_writes_overhead_node_selector_and_tolerations():
    s = admit_pod(pod(runtimeClassName="rc", nodeSelector={"app": "x"}), CLASSES.get)["spec"]
    assert s["overhead"] == {"cpu": "2"}
    assert s["nodeSelector"] == {"app": "x", "sandbox": "true"}
    assert s["tolerations"] == [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]


def test_equal_overhead_in_another_spelling_is_accepted():
    assert admit_pod(pod(runtimeClassName="rc", overhead={"cpu": "2000m"}), CLASSES.get)["spec"]["overhead"] == {"cpu": "2"}


@pytest.mark.parametrize("spec, message", [
    ({"runtimeClassName": "nope"}, 'pods "p" is forbidden: pod rejected: RuntimeClass "nope" not found'),
    ({"runtimeClassName": "rc", "overhead": {"cpu": "1"}},
     "pods \"p\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"),
    ({"overhead": {"cpu": "2"}},
     'pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead'),
    ({"runtimeClassName": "bare", "overhead": {"cpu": "2"}},
     'pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead'),
    ({"runtimeClassName": "rc", "nodeSelector": {"sandbox": "false"}},
     'pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = true; '
     'pod.spec.nodeSelector[sandbox] = false'),
])
def test_refusals_carry_the_plugins_text(spec, message):
    assert refusal(pod(**spec)) == message


def test_merge_tolerations_keeps_supersets_only():
    exists = {"key": "k", "operator": "Exists"}
    equal = {"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}
    other = {"key": "o", "operator": "Equal", "value": "v"}
    assert merge_tolerations([equal, other], [exists]) == [other, exists]
    assert merge_tolerations([exists], [equal]) == [exists]
    assert merge_tolerations([equal], [dict(equal)]) == [equal]          # equal ones: the first stays
    # an empty operator covers an Equal one, but not the reverse (isSuperset's Equal case asks t for "Equal")
    no_operator = {"key": "k", "value": "v", "effect": "NoSchedule"}
    assert merge_tolerations([no_operator], [equal]) == [no_operator]
    assert merge_tolerations([equal], [no_operator]) == [no_operator]


def test_embedded_store_admits_every_new_pod():
    c = EmbeddedCluster()
    c.create(RC)
    made = c.create(pod(runtimeClassName="rc"))
    assert made["spec"]["overhead"] == {"cpu": "2"} and made["spec"]["nodeSelector"] == {"sandbox": "true"}
    with pytest.raises(APIRejected, match="Pod Overhead set without corresponding RuntimeClass defined Overhead"):
        c.create({**pod(overhead={"cpu": "1"}), "metadata": {"name": "q"}})
    assert c.get("Pod", "q") is None
    # an update is not judged (the plugin handles CREATE only)
    made["metadata"]["labels"] = {"a": "b"}
    assert c.update(made)["spec"]["overhead"] == {"cpu": "2"}
