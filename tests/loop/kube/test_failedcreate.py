"""harness/loop/kube/failedcreate.py: the object and message of a workload controller's FailedCreate
(k8s.io/kubernetes v1.36.3 pkg/controller/controller_utils.go RealPodControl.createPods, getPodsPrefix)."""
from __future__ import annotations

from harness.loop.kube.failedcreate import controller_object, failed_create_message, replicaset_name
from tests.loop.loopkit import deployment


def test_a_deployments_replicaset_is_named_for_its_stored_template():
    dep = deployment("web")
    name = replicaset_name(dep)
    assert name.startswith("web-") and set(name[4:]) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert replicaset_name(deployment("web")) == name                    # the same template, the same name
    other = deployment("web")
    other["spec"]["template"]["spec"]["containers"][0]["image"] = "y"
    assert replicaset_name(other) != name


def test_the_object_is_the_replicaset_of_a_deployment_and_else_the_owner():
    dep = deployment("web")
    assert controller_object("Deployment", "web", dep) == ("ReplicaSet", replicaset_name(dep))
    assert controller_object("Job", "nightly", None) == ("Job", "nightly")


def test_the_message_names_the_pod_by_its_generate_name():
    refusal = 'pods "web-abcde" is forbidden: no PriorityClass with name high was found'
    assert failed_create_message("web-abcde", "web-5f7c9", refusal) == (
        'Error creating: pods "web-5f7c9-" is forbidden: no PriorityClass with name high was found')


def test_a_validating_plugin_names_the_generated_name():
    refusal = 'pods "web-abcde" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1'
    assert failed_create_message("web-abcde", "web-5f7c9", refusal, validating=True) == (
        'Error creating: pods "web-5f7c9-abcde" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, '
        "limited: pods=1")
