"""harness/loop/lifecycle/hashes.py: the NodePool and AKSNodeClass hashes drift compares (the ignore rules of
sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/nodepool.go Hash and github.com/Azure/karpenter-provider-azure
v1.14.0 pkg/apis/v1beta1/aksnodeclass.go Hash)."""
from __future__ import annotations

import copy

from harness.loop.lifecycle.hashes import nodeclass_hash, nodeclass_hash_annotations, nodepool_hash as _nodepool_hash, \
    nodepool_hash_annotations, stored_template, template_lifetime
from harness.model.upstream.profile import load_profile

UPSTREAM = load_profile("upstream")


def nodepool_hash(np: dict) -> str:
    return _nodepool_hash(np, UPSTREAM)

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


def test_durations_hash_by_value():
    """metav1.Duration and NillableDuration hash their value, not their text; Never is the nil duration
    and a zero terminationGracePeriod a zero value, both left out like an unset field."""
    tgp = ("spec", "template", "spec", "terminationGracePeriod")
    assert nodepool_hash(changed(tgp, "60m")) == nodepool_hash(changed(tgp, "1h")) == nodepool_hash(changed(tgp, "3600s"))
    assert nodepool_hash(changed(tgp, "1h30m")) == nodepool_hash(changed(tgp, "90m")) != nodepool_hash(changed(tgp, "1h"))
    assert nodepool_hash(changed(tgp, "0s")) == nodepool_hash(NP)
    expire = ("spec", "template", "spec", "expireAfter")
    assert nodepool_hash(changed(expire, "Never")) != nodepool_hash(NP)
    assert nodepool_hash(changed(expire, "43200m")) == nodepool_hash(NP)


def test_the_template_is_hashed_with_the_releases_crd_defaults():
    """The release's NodePool CRD defaults expireAfter in the template (v1 storage) or under
    spec.disruption (v1beta1 storage, moved into the template by the model's v1 view)."""
    for name in ("upstream", "v1.0.0", "v0.5.4"):
        assert stored_template(NP, load_profile(name))["spec"]["expireAfter"] == "720h", name
    assert "expireAfter" not in NP["spec"]["template"]["spec"]           # the object read is left as it was


def test_template_fields_change_the_hash():
    h = nodepool_hash(NP)
    assert nodepool_hash(changed(("spec", "template", "metadata", "labels"), {"a": "c"})) != h
    assert nodepool_hash(changed(("spec", "template", "spec", "expireAfter"), "1h")) != h
    assert nodepool_hash(changed(("spec", "template", "spec", "terminationGracePeriod"), "1h")) != h


def test_nodeclass_tags_are_ignored():
    nc = {"spec": {"imageFamily": "Ubuntu2204", "tags": {"a": "b"}}}
    assert nodeclass_hash(nc, UPSTREAM) == nodeclass_hash({"spec": {"imageFamily": "Ubuntu2204"}}, UPSTREAM)
    assert nodeclass_hash(nc, UPSTREAM) != nodeclass_hash({"spec": {"imageFamily": "AzureLinux"}}, UPSTREAM)


def test_nodeclass_hash_ignores_what_each_release_ignores():
    """provider.nodeClassHash per release: tags hashed before v1.6.2 (#1072), kubelet left out at v0.7.0-v0.7.4."""
    plain = {"spec": {"imageFamily": "Ubuntu2204"}}
    tagged = {"spec": {"imageFamily": "Ubuntu2204", "tags": {"team": "a"}}}
    kubelet = {"spec": {"imageFamily": "Ubuntu2204", "kubelet": {"cpuManagerPolicy": "static"}}}
    v141, v162, v074, v075 = (load_profile(p) for p in ("v1.4.1", "v1.6.2", "v0.7.4", "v0.7.5"))
    assert nodeclass_hash(tagged, v141) != nodeclass_hash(plain, v141)
    assert nodeclass_hash(tagged, v162) == nodeclass_hash(plain, v162)
    assert nodeclass_hash(kubelet, v074) == nodeclass_hash(plain, v074)
    assert nodeclass_hash(kubelet, v075) != nodeclass_hash(plain, v075)
    assert "tags" in v141.nodeclass_hashed_fields and "tags" not in v162.nodeclass_hashed_fields


def test_nodeclass_hash_annotations_carry_the_releases_version_or_none():
    nc = {"spec": {"imageFamily": "Ubuntu2204"}}
    versions = {p: nodeclass_hash_annotations(nc, load_profile(p)).get("karpenter.azure.com/aksnodeclass-hash-version")
                for p in ("v0.5.5", "v0.6.3", "v0.7.4", "v0.7.5", "v1.6.1", "v1.6.2", "upstream")}
    assert versions == {"v0.5.5": None, "v0.6.3": None, "v0.7.4": "v1", "v0.7.5": "v2", "v1.6.1": "v2", "v1.6.2": "v3",
                        "upstream": "v3"}
    assert nodeclass_hash_annotations(nc, load_profile("v0.5.5")) == {}


def test_new_nodeclaim_fields():
    ann = nodepool_hash_annotations(changed(("spec", "template", "metadata", "annotations"), {"x": "y"}), UPSTREAM)
    assert ann["x"] == "y" and ann["karpenter.sh/nodepool-hash-version"] == "v3"
    assert template_lifetime(NP, UPSTREAM) == {"expireAfter": "720h"}
    np = changed(("spec", "template", "spec"), {"expireAfter": "Never", "terminationGracePeriod": "5m"})
    assert template_lifetime(np, UPSTREAM) == {"expireAfter": "Never", "terminationGracePeriod": "5m"}


def test_the_hash_is_kept_per_template_not_per_object():
    reordered = {"spec": {"template": dict(reversed(list(copy.deepcopy(NP)["spec"]["template"].items())))}}
    assert nodepool_hash(copy.deepcopy(NP)) == nodepool_hash(NP) == nodepool_hash(reordered)
    assert nodepool_hash(changed(("spec", "template", "metadata", "labels"), {"a": "c"})) != nodepool_hash(NP)
    assert template_lifetime(NP, UPSTREAM) is not template_lifetime(NP, UPSTREAM)      # each caller's own copy


def test_nodepool_hash_reads_what_each_release_hashes():
    """core-behaviour.yaml nodePoolHashedFields: core v0.36 (provider v0.5-v0.6) hashes the v1beta1 NodeClaimSpec
    (kubelet, no expireAfter: that is spec.disruption's there), v1.0+ the v1 NodeClaimTemplateSpec (expireAfter,
    terminationGracePeriod); requirements drift through RequirementsDrifted at every release, never the hash."""
    v055, v075 = load_profile("v0.5.5"), load_profile("v0.7.5")
    expire = ("spec", "template", "spec", "expireAfter")
    assert _nodepool_hash(changed(expire, "1h"), v055) == _nodepool_hash(NP, v055)
    assert _nodepool_hash(changed(expire, "1h"), v075) != _nodepool_hash(NP, v075)
    kubelet = ("spec", "template", "spec", "kubelet")
    assert _nodepool_hash(changed(kubelet, {"maxPods": 50}), v055) != _nodepool_hash(NP, v055)
    for prof in (v055, v075, UPSTREAM):
        assert _nodepool_hash(changed(("spec", "template", "spec", "requirements"), []), prof) == \
            _nodepool_hash(NP, prof)
        assert _nodepool_hash(changed(("spec", "template", "spec", "taints"), []), prof) != _nodepool_hash(NP, prof)
        assert "requirements" in prof.nodepool_hash_ignored and "requirements" not in prof.nodepool_hashed_fields
    assert "resources" in v055.nodepool_hash_ignored and "resources" not in v075.nodepool_hash_ignored


def test_nodepool_hash_version_is_the_releases():
    versions = {p: nodepool_hash_annotations(NP, load_profile(p))["karpenter.sh/nodepool-hash-version"]
                for p in ("v0.5.5", "v0.6.3", "v0.7.0", "v1.4.1", "upstream")}
    assert versions == {"v0.5.5": "v2", "v0.6.3": "v2", "v0.7.0": "v3", "v1.4.1": "v3", "upstream": "v3"}
