"""harness/model/kube/quota.py: the ResourceQuota admission of pods (k8s.io/kubernetes v1.36.3
pkg/quota/v1/evaluator/core/pods.go; k8s.io/apiserver v0.36.3 pkg/admission/plugin/resourcequota/controller.go)
and the usage the quota controller keeps; the embedded store applying both as pods come and go."""
from __future__ import annotations

import pytest

from harness.backends.embedded import EmbeddedCluster
from harness.model.kube.apistatus import APIRejected
from harness.model.kube.quota import admission_refusal, matches, pod_usage, refused_probe, status_of


def quota(name="q", hard=None, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name, "namespace": "default"},
            "spec": {"hard": hard or {"pods": "2"}, **spec}}


def pod(name="p", requests=None, limits=None, **spec) -> dict:
    res = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "x", "resources": res}], **spec}}


def texts(usage) -> dict[str, str]:
    return {k: usage.text(k) for k in usage}


def test_usage_counts_requests_limits_and_the_pod():
    u = pod_usage(pod(requests={"cpu": "250m", "memory": "1Gi", "nvidia.com/gpu": "1"}, limits={"cpu": "1"},
                      overhead={"cpu": "250m"}))
    assert texts(u) == {"count/pods": "1", "pods": "1", "cpu": "500m", "requests.cpu": "500m", "memory": "1Gi",
                        "requests.memory": "1Gi", "limits.cpu": "1250m", "requests.nvidia.com/gpu": "1"}


def test_a_terminal_pod_uses_only_its_count():
    done = {**pod(requests={"cpu": "1"}), "status": {"phase": "Succeeded"}}
    assert texts(pod_usage(done)) == {"count/pods": "1"}


@pytest.mark.parametrize("spec, p, hit", [
    ({"scopes": ["BestEffort"]}, pod(), True),
    ({"scopes": ["BestEffort"]}, pod(requests={"cpu": "1"}), False),
    ({"scopes": ["NotTerminating"]}, pod(activeDeadlineSeconds=10), False),
    ({"scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}},
     pod(priorityClassName="high"), True),
    ({"scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}},
     pod(), False),
    ({"scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "Exists"}]}},
     pod(priorityClassName="low"), True),
])
def test_scopes_select_the_pods_a_quota_counts(spec, p, hit):
    assert matches(quota(**spec), p) is hit


def test_a_quota_on_storage_alone_does_not_match_pods():
    assert not matches(quota(hard={"requests.storage": "10Gi"}), pod())


def test_exceeded_quota_names_the_arithmetic():
    q = quota(hard={"requests.cpu": "1", "pods": "10"})
    running = [pod("a", requests={"cpu": "400m"}), pod("b", requests={"cpu": "400m"})]
    got = admission_refusal(pod("c", requests={"cpu": "400m"}), [(q, status_of(q, running))])
    assert got.message == ('pods "c" is forbidden: exceeded quota: q, requested: requests.cpu=400m, '
                           "used: requests.cpu=800m, limited: requests.cpu=1")


def test_a_container_must_state_what_a_quota_limits():
    q = quota(hard={"limits.memory": "2Gi", "requests.cpu": "2"})
    p = pod(requests={"cpu": "100m"})
    p["spec"]["initContainers"] = [{"name": "init", "image": "x"}]
    got = admission_refusal(p, [(q, status_of(q, []))])
    assert got.message == ('pods "p" is forbidden: failed quota: q: must specify limits.memory for: app,init; '
                           "requests.cpu for: init")


def test_the_embedded_store_keeps_the_usage_as_pods_come_and_go():
    c = EmbeddedCluster()
    c.create(quota(hard={"pods": "2"}))
    c.create(pod("a"))
    c.create(pod("b"))
    assert c.get("ResourceQuota", "q", "default")["status"] == {"hard": {"pods": "2"}, "used": {"pods": "2"}}
    with pytest.raises(APIRejected, match=r"exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2"):
        c.create(pod("c"))
    c.delete("Pod", "a", "default")
    c.create(pod("c"))
    assert c.get("ResourceQuota", "q", "default")["status"]["used"] == {"pods": "2"}


def test_a_quota_made_after_the_pods_counts_them():
    c = EmbeddedCluster()
    c.create(pod("a", requests={"cpu": "1"}))
    c.create(quota(hard={"requests.cpu": "1500m"}))
    assert c.get("ResourceQuota", "q", "default")["status"]["used"] == {"requests.cpu": "1"}
    with pytest.raises(APIRejected, match="exceeded quota"):
        c.create(pod("b", requests={"cpu": "1"}))


@pytest.mark.parametrize("spec, refusal", [
    ({"hard": {"limits.memory": "2Gi"}}, "must specify limits.memory"),
    ({"hard": {"requests.cpu": "1"}, "scopes": ["Terminating"]}, "must specify requests.cpu"),
    ({"hard": {"pods": "1", "requests.nvidia.com/gpu": "1"},
      "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}},
     None),
    ({"hard": {"count/pods": "0"}}, "exceeded quota"),
])
def test_the_probe_is_a_pod_the_quota_refuses(spec, refusal):
    """What a real backend dry-runs until its API server's quota admission has seen a new quota: a pod the
    model refuses under that quota, or None when neither probe form is refused (a quota with room for any pod)."""
    q = quota(hard=spec.pop("hard"), **spec)
    probe = refused_probe(q, status_of(q, ()))
    if refusal is None:
        assert probe is None
        return
    why = admission_refusal(probe, [(q, status_of(q, ()))])
    assert why is not None and refusal in why.message
