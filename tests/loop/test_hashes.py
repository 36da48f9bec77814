"""harness/loop/hashes.py: the NodePool and AKSNodeClass hashes drift compares (the ignore rules of
sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/nodepool.go Hash and github.com/Azure/karpenter-provider-azure
v1.14.0 pkg/apis/v1beta1/aksnodeclass.go Hash)."""
from __future__ import annotations

import copy

from harness.loop.hashes import nodeclass_hash, nodepool_hash, nodepool_hash_annotations, template_lifetime

NP = {"metadata": {"name": "np"}, "spec": {"template": {"metadata": {"labels": {"a": "b"}}, "spec": {
    "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
    "requirements": [{"key": "k", "operator": "In", "values": ["1"]}],
    "taints": [{"key": "t1", "effect": "NoSchedule"}, {"key": "t2", "effect": "NoSchedule"}]}},
    "disruption": {"consolidateAfter": "0s"}}}


def changed(path, value) -> dict:
    np = copy.deepcopy(NP)
    node = np
    for p in path[:-1]:
        node = node.setdefault(p, {})
    node[path[-1]] = value
    return np


def test_requirements_disruption_and_order_do_not_change_the_hash():
    h = nodepool_hash(NP)
    assert nodepool_hash(changed(("spec", "template", "spec", "requirements"), [])) == h
    assert nodepool_hash(changed(("spec", "disruption"), {"consolidateAfter": "Never"})) == h
    assert nodepool_hash(changed(("spec", "template", "spec", "taints"),
                                 list(reversed(NP["spec"]["template"]["spec"]["taints"])))) == h   # SlicesAsSets
    assert nodepool_hash(changed(("spec", "template", "spec", "expireAfter"), "720h")) == h         # the default


def test_template_fields_change_the_hash():
    h = nodepool_hash(NP)
    assert nodepool_hash(changed(("spec", "template", "metadata", "labels"), {"a": "c"})) != h
    assert nodepool_hash(changed(("spec", "template", "spec", "expireAfter"), "1h")) != h
    assert nodepool_hash(changed(("spec", "template", "spec", "terminationGracePeriod"), "1h")) != h


def test_nodeclass_tags_are_ignored():
    nc = {"spec": {"imageFamily": "Ubuntu2204", "tags": {"a": "b"}}}
    assert nodeclass_hash(nc) == nodeclass_hash({"spec": {"imageFamily": "Ubuntu2204"}})
    assert nodeclass_hash(nc) != nodeclass_hash({"spec": {"imageFamily": "AzureLinux"}})


def test_new_nodeclaim_fields():
    ann = nodepool_hash_annotations(changed(("spec", "template", "metadata", "annotations"), {"x": "y"}))
    assert ann["x"] == "y" and ann["karpenter.sh/nodepool-hash-version"] == "v3"
    assert template_lifetime({}) == {"expireAfter": "720h"}
    assert template_lifetime({"expireAfter": "Never", "terminationGracePeriod": "5m"}) == {
        "expireAfter": "Never", "terminationGracePeriod": "5m"}
