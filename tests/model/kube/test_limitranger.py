"""harness/model/kube/limitranger.py: the LimitRanger admission plugin (k8s.io/kubernetes v1.36.3
plugin/pkg/admission/limitranger/admission.go) on a pod's create, and a LimitRange's defaults and validation;
the same cases against the real API server: tests/backends/test_conformance_embedded.py."""
from __future__ import annotations

import pytest

from harness.backends.embedded import EmbeddedCluster
from harness.model.kube.apistatus import APIRejected
from harness.model.kube.limitranger import ANNOTATION, admit_limitrange, default_pod, pod_refusal


def lr(*items, name: str = "lr") -> dict:
    return admit_limitrange({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": name},
                             "spec": {"limits": list(items)}})


def pod(*containers, init=(), **spec) -> dict:
    return {"kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": list(containers), "initContainers": list(init), **spec}}


def c(name="app", **resources) -> dict:
    return {"name": name, "resources": resources}


def test_container_item_defaults_follow_set_defaults_limit_range_item():
    item = lr({"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}})["spec"]["limits"][0]
    assert item["default"] == {"cpu": "2"}                      # max -> default
    assert item["defaultRequest"] == {"cpu": "2", "memory": "64Mi"}   # default -> request, then min -> request


def test_defaults_fill_what_a_container_leaves_out_and_say_so():
    p = default_pod(pod(c(requests={"memory": "1Gi"}), init=[c("init")]),
                    [lr({"type": "Container", "default": {"cpu": "500m", "memory": "512Mi"},
                         "defaultRequest": {"cpu": "100m", "memory": "256Mi"}})])
    app, init = p["spec"]["containers"][0]["resources"], p["spec"]["initContainers"][0]["resources"]
    assert app == {"limits": {"cpu": "500m", "memory": "512Mi"}, "requests": {"memory": "1Gi", "cpu": "100m"}}
    assert init["requests"] == {"cpu": "100m", "memory": "256Mi"}
    assert p["metadata"]["annotations"][ANNOTATION] == (
        "LimitRanger plugin set: cpu request for container app; cpu, memory limit for container app; "
        "cpu, memory request for init container init; cpu, memory limit for init container init")


@pytest.mark.parametrize("item, container, message", [
    ({"type": "Container", "max": {"cpu": "1"}}, c(limits={"cpu": "2"}),
     "maximum cpu usage per Container is 1, but limit is 2"),
    ({"type": "Container", "max": {"cpu": "1"}}, c(requests={"cpu": "500m"}),
     "maximum cpu usage per Container is 1.  No limit is specified"),
    ({"type": "Container", "min": {"memory": "128Mi"}}, c(requests={"memory": "64Mi"}),
     "minimum memory usage per Container is 128Mi, but request is 64Mi"),
    ({"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}}, c(requests={"cpu": "100m"}, limits={"cpu": "500m"}),
     "cpu max limit to request ratio per Container is 2, but provided ratio is 5.000000"),
])
def test_bounds_refuse_with_the_plugins_words(item, container, message):
    got = pod_refusal(pod(container), [{"spec": {"limits": [item]}}])
    assert got is not None and got.message == f'pods "p" is forbidden: {message}'


def test_pod_item_sums_the_containers():
    got = pod_refusal(pod(c(limits={"cpu": "600m"}), c("b", limits={"cpu": "600m"})),
                      [{"spec": {"limits": [{"type": "Pod", "max": {"cpu": "1"}}]}}])
    assert got.message == 'pods "p" is forbidden: maximum cpu usage per Pod is 1, but limit is 1200m'


def test_a_pod_within_bounds_passes():
    assert pod_refusal(pod(c(requests={"cpu": "500m"}, limits={"cpu": "1"})),
                       [{"spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]}}]) is None


@pytest.mark.parametrize("item, cause", [
    # the max is also the default limit and request (SetDefaults_LimitRangeItem): three errors
    ({"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}},
     '[spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1, '
     'spec.limits[0].defaultRequest[cpu]: Invalid value: "1": min value 2 is greater than default request value 1, '
     'spec.limits[0].default[cpu]: Invalid value: "2": min value 2 is greater than default value 1]'),
    ({"type": "Pod", "default": {"cpu": "1"}}, "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"),
    ({"type": "Container", "maxLimitRequestRatio": {"cpu": "500m"}},
     'spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "500m": ratio 500m is less than 1'),
])
def test_an_invalid_limit_range_is_refused(item, cause):
    with pytest.raises(APIRejected) as ei:
        lr(item)
    assert ei.value.message == f'LimitRange "lr" is invalid: {cause}'


def test_the_embedded_store_defaults_and_refuses_pods_by_their_namespace():
    cl = EmbeddedCluster()
    cl.create({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr", "namespace": "team"},
               "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "3"}, "max": {"cpu": "4"}}]}})
    made = cl.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "team"},
                      "spec": {"containers": [{"name": "c", "image": "x"}]}})
    assert made["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "4"}, "requests": {"cpu": "3"}}
    other = cl.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                       "spec": {"containers": [{"name": "c", "image": "x"}]}})
    assert not other["spec"]["containers"][0].get("resources")
    with pytest.raises(APIRejected, match="maximum cpu usage per Container is 4, but limit is 5"):
        cl.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q", "namespace": "team"},
                   "spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": {"cpu": "5"}}}]}})
