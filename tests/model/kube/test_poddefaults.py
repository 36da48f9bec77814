"""harness.model.kube.poddefaults: the Pod the API server stores (tests/backends/test_conformance_embedded.py
compares it with a real kube-apiserver's)."""
from __future__ import annotations

import copy

import pytest

from harness.model.kube.apistatus import APIRejected
from harness.model.kube.poddefaults import PodDefaults, admit_pod, default_template, made_from, same_template

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


# -- a workload's pod template as stored, and the Deployment controller's comparison --
SHORT = {"metadata": {"labels": {"app": "web"}},
         "spec": {"containers": [{"name": "app", "image": "nginx:1.27", "ports": [{"containerPort": 80}],
                                  "resources": {"requests": {"cpu": "0.5", "memory": "256Mi"}},
                                  "readinessProbe": {"httpGet": {"port": 80}},
                                  "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]}],
                  "volumes": [{"name": "cfg", "configMap": {"name": "cfg"}}, {"name": "scratch"}]}}
# what `kubectl get deployment -o yaml` shows of SHORT's template once stored (k8s.io/kubernetes v1.36.3)
STORED = {"metadata": {"creationTimestamp": None, "labels": {"app": "web"}},
          "spec": {"containers": [{"name": "app", "image": "nginx:1.27", "imagePullPolicy": "IfNotPresent",
                                   "ports": [{"containerPort": 80, "protocol": "TCP"}],
                                   "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}},
                                   "readinessProbe": {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
                                                      "timeoutSeconds": 1, "periodSeconds": 10,
                                                      "successThreshold": 1, "failureThreshold": 3},
                                   "env": [{"name": "N", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                                                                                    "fieldPath": "spec.nodeName"}}}],
                                   "terminationMessagePath": "/dev/termination-log",
                                   "terminationMessagePolicy": "File"}],
                   "volumes": [{"name": "cfg", "configMap": {"name": "cfg", "defaultMode": 420}},
                               {"name": "scratch", "emptyDir": {}}],
                   "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                   "securityContext": {}, "terminationGracePeriodSeconds": 30}}


def test_a_template_is_defaulted_as_every_pod_spec_not_as_a_pod():
    spec = default_template(SHORT)["spec"]
    assert "enableServiceLinks" not in spec and "priority" not in spec and "tolerations" not in spec
    assert (spec["dnsPolicy"], spec["schedulerName"], spec["terminationGracePeriodSeconds"]) == (
        "ClusterFirst", "default-scheduler", 30)
    assert spec["volumes"][1] == {"name": "scratch", "emptyDir": {}}
    assert "imagePullPolicy" not in SHORT["spec"]["containers"][0]            # the manifest is left as it was


def test_the_short_form_of_a_stored_template_is_the_same_template():
    assert same_template(STORED, SHORT) and same_template(SHORT, STORED)
    with_hash = copy.deepcopy(STORED)
    with_hash["metadata"]["labels"]["pod-template-hash"] = "5d4f8b6c9"
    assert same_template(with_hash, SHORT)


@pytest.mark.parametrize("path,value", [
    (("spec", "containers", 0, "image"), "nginx:1.28"),
    (("spec", "containers", 0, "resources", "requests", "cpu"), "600m"),
    (("spec", "dnsPolicy"), "Default"),
    (("spec", "terminationGracePeriodSeconds"), 0),                 # a pointer: 0 is a value, not unset
    (("spec", "containers", 0, "imagePullPolicy"), "Always"),
    (("metadata", "annotations"), {"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"}),
])
def test_a_changed_field_is_another_template(path, value):
    changed = copy.deepcopy(SHORT)
    node = changed
    for p in path[:-1]:
        node = node.setdefault(p, {}) if isinstance(p, str) else node[p]
    node[path[-1]] = value
    assert not same_template(STORED, changed)


def test_a_zero_probe_counter_is_unset_and_gets_the_default():
    zero = copy.deepcopy(SHORT)
    zero["spec"]["containers"][0]["readinessProbe"]["periodSeconds"] = 0
    assert same_template(STORED, zero)


@pytest.mark.parametrize("image,policy", [
    ("nginx", "Always"), ("nginx:latest", "Always"), ("nginx:1.27", "IfNotPresent"),
    ("localhost:5000/app", "Always"), ("localhost:5000/app:v1", "IfNotPresent"),
    ("nginx@sha256:" + "a" * 64, "IfNotPresent"), ("nginx:latest@sha256:" + "a" * 64, "Always"),
])
def test_image_pull_policy_by_tag(image, policy):
    spec = default_template({"spec": {"containers": [{"name": "c", "image": image}]}})["spec"]
    assert spec["containers"][0]["imagePullPolicy"] == policy


def _running(image="nginx:1.27", cpu="1", **labels):
    """A pod as a dump shows it: what admission and the scheduler added, a shortened container."""
    return {"metadata": {"name": "web-5d8f7c9b4-x2k9p", "labels": {"app": "web", "pod-template-hash": "5d8f7c9b4", **labels}},
            "spec": {"nodeName": "n1", "serviceAccountName": "default", "priority": 0, "enableServiceLinks": True,
                     "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                      "effect": "NoExecute", "tolerationSeconds": 300}],
                     "volumes": [{"name": "kube-api-access-abcde", "projected": {"sources": []}}],
                     "containers": [{"name": "app", "image": image, "resources": {"requests": {"cpu": cpu}},
                                     "volumeMounts": [{"name": "kube-api-access-abcde",
                                                       "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]}]}}


TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27", "ports": [{"containerPort": 80}],
                                     "resources": {"requests": {"cpu": "1000m"}}}]}}


def test_a_running_pod_is_made_from_the_template_it_agrees_with_where_both_say():
    """Admission's additions, the binding and a field only one side gives say nothing; cpu 1 is 1000m."""
    assert made_from(_running(), TEMPLATE)


@pytest.mark.parametrize("pod, why", [
    (_running(image="nginx:1.26"), "another image: an old revision"),
    (_running(cpu="2"), "other requests"),
    ({**_running(), "metadata": {"labels": {"app": "api"}}}, "the template's labels are not the pod's"),
    ({**_running(), "spec": {"containers": [{"name": "other", "image": "nginx:1.27"}]}}, "other containers"),
])
def test_a_pod_that_differs_where_both_say_is_of_another_revision(pod, why):
    assert not made_from(pod, TEMPLATE), why


def test_a_template_toleration_the_pod_lacks_is_another_revision():
    tmpl = copy.deepcopy(TEMPLATE)
    tmpl["spec"]["tolerations"] = [{"key": "team", "operator": "Exists"}]
    assert not made_from(_running(), tmpl)
    pod = _running()
    pod["spec"]["tolerations"].append({"key": "team", "operator": "Exists"})
    assert made_from(pod, tmpl)
