"""Which API versions a release serves, and how an object in one of them is judged and read
(harness.model.crd.apiversions)."""
from __future__ import annotations

import copy

from harness.model.crd import apiversions
from harness.model.upstream.profile import load_profile
from harness.model.crd.validation import admission_rejection

V1BETA1_POOL = {"apiVersion": "karpenter.sh/v1beta1", "kind": "NodePool", "metadata": {"name": "default"},
                "spec": {"disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s",
                                        "expireAfter": "720h"},
                         "template": {"spec": {"nodeClassRef": {"name": "default"},
                                               "kubelet": {"maxPods": 50},
                                               "requirements": [{"key": "karpenter.sh/capacity-type",
                                                                 "operator": "In", "values": ["spot"]}]}}}}


def test_unserved_versions_are_refused_as_kubectl_says():
    assert apiversions.served_rejection(V1BETA1_POOL, load_profile("v0.7.5")) is None
    r = apiversions.served_rejection(V1BETA1_POOL, load_profile("v1.4.1"))
    assert (r.status, r.message) == (404, 'no matches for kind "NodePool" in version "karpenter.sh/v1beta1"')
    nc = {"apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass", "metadata": {"name": "x"}}
    assert apiversions.served_rejection(nc, load_profile("v0.7.5")).message == \
        'no matches for kind "AKSNodeClass" in version "karpenter.azure.com/v1beta1"'
    assert apiversions.served_rejection(dict(nc, apiVersion="karpenter.azure.com/v1alpha2"), load_profile("v1.14.2")) is None
    assert apiversions.served_rejection({"apiVersion": "v1", "kind": "Pod"}, load_profile("v0.5.4")) is None


def test_a_served_older_version_is_judged_by_its_own_rules():
    """v0.7's NodePool CRD serves v1beta1 with its own required fields (no nodeClassRef group/kind) and rules."""
    p = load_profile("v0.7.5")
    assert admission_rejection(V1BETA1_POOL, apiversions.admission_profile(V1BETA1_POOL, p)) is None
    as_v1 = admission_rejection(V1BETA1_POOL, p)            # judged by v1's schema it would be refused
    assert "spec.template.spec.nodeClassRef.group: Required value" in as_v1.message


def test_a_served_older_version_is_judged_by_its_own_schema():
    """The v1beta1 view judges with v1beta1's whole spec schema (provider v0.7.5 pkg/apis/crds/karpenter.sh_nodepools.yaml,
    version v1beta1: consolidationPolicy WhenEmpty|WhenUnderutilized, kubelet.maxPods minimum 0), not v1's."""
    p = load_profile("v0.7.5")
    pool = copy.deepcopy(V1BETA1_POOL)
    pool["spec"]["disruption"] = {"consolidationPolicy": "WhenUnderutilized", "expireAfter": "720h"}
    view = apiversions.admission_profile(pool, p)
    assert view.crd_spec_schema("NodePool") == p.raw["nodePool"]["versions"]["v1beta1"]["spec"]
    assert view.crd_spec_schema("NodeClaim") == p.raw["nodeClaim"]["versions"]["v1beta1"]["spec"]
    assert admission_rejection(pool, view) is None
    assert 'spec.disruption.consolidationPolicy: Unsupported value: "WhenUnderutilized"' in admission_rejection(pool, p).message
    pool["spec"]["template"]["spec"]["kubelet"]["maxPods"] = -1
    assert admission_rejection(pool, view).message.endswith(
        "spec.template.spec.kubelet.maxPods: Invalid value: -1: spec.template.spec.kubelet.maxPods in body should be "
        "greater than or equal to 0")
    v05 = load_profile("v0.5.4")             # core v0.36 stores v1beta1 itself: its schema is the profile's own
    assert v05.raw["nodePool"]["version"] == "v1beta1" and apiversions.admission_profile(pool, v05) is v05
    assert admission_rejection(pool, v05).message == admission_rejection(pool, view).message


def test_v1beta1_nodepool_is_read_as_v1_the_way_the_conversion_webhook_stores_it():
    """sigs.k8s.io/karpenter v1.0.6 pkg/apis/v1/nodepool_conversion.go NodePool.ConvertFrom."""
    got = apiversions.to_model_version(V1BETA1_POOL)
    assert got["apiVersion"] == "karpenter.sh/v1"
    assert got["spec"]["disruption"] == {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s"}
    tspec = got["spec"]["template"]["spec"]
    assert tspec["expireAfter"] == "720h" and "kubelet" not in tspec
    assert tspec["nodeClassRef"] == {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"}
    ann = got["metadata"]["annotations"]
    assert ann[apiversions.KUBELET_COMPATIBILITY_ANNOTATION] == '{"maxPods":50}'
    assert ann[apiversions.NODECLASS_REFERENCE_ANNOTATION] == '{"name":"default"}'
    under = apiversions.to_model_version({**V1BETA1_POOL, "spec": {"template": {"spec": {"nodeClassRef": {"name": "d"}}}}})
    assert under["spec"]["disruption"] == {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s"}
    assert V1BETA1_POOL["apiVersion"] == "karpenter.sh/v1beta1"          # the input is left alone


def test_aksnodeclass_schema_per_version():
    p = load_profile("v1.4.1")
    old = {"apiVersion": "karpenter.azure.com/v1alpha2", "kind": "AKSNodeClass"}
    assert apiversions.nodeclass_schema(old, p) == p.raw["aksNodeClass"]["versions"]["v1alpha2"]["spec"]
    assert apiversions.nodeclass_schema({**old, "apiVersion": "karpenter.azure.com/v1beta1"}, p) == p.aks_nodeclass_schema
    v0 = load_profile("v0.7.5")
    assert apiversions.nodeclass_schema(old, v0) == v0.aks_nodeclass_schema      # v1alpha2 is v0.7's storage
