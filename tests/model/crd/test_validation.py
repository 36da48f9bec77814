"""NodePool validation in its two stages, re-expressing the provider's crd_validation_cel_test.go
cases (karpenter-provider-azure v1.14.0 pkg/apis/v1beta1/crd_validation_cel_test.go;
github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instancetype/suite_test.go) and core's
RuntimeValidate (sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/nodepool_validation.go)."""
from __future__ import annotations

import pytest

from harness.model.crd import cel, rules as crdrules
from harness.model.upstream.profile import load_profile
from harness.model.crd.validation import admission_errors, admission_rejection, runtime_validation_error

UP = load_profile("upstream")
DESIGN = load_profile("design-0006")
OLD = load_profile("before-0006")


def nodepool(labels=None, reqs=None):
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "np"},
            "spec": {"template": {"metadata": {"labels": labels or {}},
                                  "spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass",
                                                            "name": "default"},
                                           "requirements": reqs or []}}}}


def rule_messages(obj, profile):
    return [e.message for e in admission_errors(obj, profile)]


def test_well_known_label_exceptions_allowed():
    keys = [k for k in UP.well_known_labels if k not in UP.well_known_values and k != "karpenter.sh/nodepool"]
    for key in keys:
        assert rule_messages(nodepool(reqs=[{"key": key, "operator": "In", "values": ["test"]}]), UP) == [], key


@pytest.mark.parametrize("values, valid", [(["xspot"], False), (["reserved"], False), (["spot", "on-demand"], True),
                                           (["spot", "xspot"], True)])
def test_capacity_type_known_values(values, valid):
    err = runtime_validation_error(nodepool(reqs=[{"key": "karpenter.sh/capacity-type", "operator": "In",
                                                   "values": values}]), UP)
    assert (err is None) == valid
    if not valid:
        assert f"no valid values found in [{' '.join(values)}] for karpenter.sh/capacity-type, expected one of: " \
               f"map[on-demand:{{}} spot:{{}}], got: [{' '.join(values)}]" in err


@pytest.mark.parametrize("key, bad, good", [
    ("karpenter.azure.com/sku-networking-accelerated", "maybe", "true"),
    ("karpenter.azure.com/sku-storage-premium-capable", "yes", "false"),
    ("karpenter.azure.com/sku-gpu-manufacturer", "intel", "nvidia"),
    ("karpenter.azure.com/placement-scope", "global", "zonal"),
    ("kubernetes.azure.com/mode", "control-plane", "system"),
    ("kubernetes.azure.com/scalesetpriority", "low", "spot"),
    ("kubernetes.azure.com/priority", "low", "regular"),
    ("kubernetes.azure.com/os-sku", "Ubuntu2204", "Ubuntu"),
    ("kubernetes.azure.com/os-sku", "AzureLinux3", "AzureLinux"),
    ("kubernetes.azure.com/fips_enabled", "false", "true"),
    ("karpenter.azure.com/sku-storage-ultra-ssd", "maybe", "true"),
])
def test_azure_known_values(key, bad, good):
    def err(values):
        return runtime_validation_error(nodepool(reqs=[{"key": key, "operator": "In", "values": values}]), UP)
    assert err([bad]) is not None                     # only invalid: rejected
    assert err([good]) is None                        # valid: accepted
    assert err([good, bad]) is None                   # mixed: fails open
    assert err([good.upper()]) is not None or good.upper() == good  # case-sensitive


def test_internal_label_rejected_by_cel():
    msgs = rule_messages(nodepool(reqs=[{"key": "karpenter.azure.com/sku-hyperv-generation", "operator": "In",
                                         "values": ["2"]}]), UP)
    assert msgs == ['label domain "karpenter.azure.com" is restricted']


@pytest.mark.parametrize("key", ["kubernetes.azure.com/some-random-label", "kubernetes.azure.com/agentpool",
                                 "kubernetes.azure.com/custom",
                                 "kubernetes.azure.com/cluster-health-monitor-checker-synthetic",
                                 "foo.kubernetes.azure.com/x"])
def test_restricted_kubernetes_azure_com(key):
    for obj in (nodepool(labels={key: "x"}), nodepool(reqs=[{"key": key, "operator": "Exists"}])):
        assert 'label domain "kubernetes.azure.com" is restricted' in rule_messages(obj, UP)


@pytest.mark.parametrize("key", ["kubernetes.azure.com/ebpf-dataplane", "kubernetes.azure.com/ebpf-host-routing",
                                 "kubernetes.azure.com/network-policy", "kubernetes.azure.com/hostedvm"])
def test_special_kubernetes_azure_com_allowed(key):
    assert rule_messages(nodepool(labels={key: "x"}), UP) == []
    assert rule_messages(nodepool(reqs=[{"key": key, "operator": "NotIn", "values": ["none"]}]), UP) == []


@pytest.mark.parametrize("key", ["agentpool", "storageprofile", "storagetier", "accelerator"])
def test_legacy_bare_labels(key):
    assert rule_messages(nodepool(labels={key: "x"}), UP) == [f'label "{key}" is restricted']
    assert rule_messages(nodepool(labels={key: "x"}), OLD) == []          # no such rule before #1444


def test_design_allows_checker_synthetic_upstream_does_not():
    key = "kubernetes.azure.com/cluster-health-monitor-checker-synthetic"
    assert rule_messages(nodepool(labels={key: "true"}), DESIGN) == []
    assert rule_messages(nodepool(labels={key: "true"}), UP) == ['label domain "kubernetes.azure.com" is restricted']
    assert rule_messages(nodepool(labels={key: "true"}), OLD) == []


def test_kubernetes_io_domains_per_core_version():
    obj = nodepool(labels={"app.kubernetes.io/managed-by": "Helm"})
    assert rule_messages(obj, OLD) == ['label domain "kubernetes.io" is restricted']
    assert rule_messages(obj, UP) == []
    assert rule_messages(nodepool(labels={"example.k8s.io/x": "y"}), OLD) == ['label domain "k8s.io" is restricted']
    assert rule_messages(nodepool(labels={"node-restriction.kubernetes.io/x": "y"}), OLD) == []


def test_api_server_message_format():
    rej = admission_rejection(nodepool(labels={"kubernetes.azure.com/agentpool": "x"}), UP)
    assert rej.status == 422 and rej.reason == "Invalid"
    assert rej.message == ('NodePool.karpenter.sh "np" is invalid: spec.template.metadata.labels: Invalid value: '
                           'label domain "kubernetes.azure.com" is restricted')
    rej = admission_rejection(nodepool(reqs=[{"key": "kubernetes.azure.com/agentpool", "operator": "Exists"}]), UP)
    assert rej.message == ('NodePool.karpenter.sh "np" is invalid: spec.template.spec.requirements[0].key: '
                           'Invalid value: "kubernetes.azure.com/agentpool": label domain "kubernetes.azure.com" is '
                           'restricted')


def test_requirement_list_rules():
    msgs = rule_messages(nodepool(reqs=[{"key": "a", "operator": "In", "values": []},
                                        {"key": "b", "operator": "Gt", "values": ["x"]}]), UP)
    assert "requirements with operator 'In' must have a value defined" in msgs
    # int("x") is a CEL evaluation error, reported as such (a real v1.36.3 API server gives exactly this
    # cause; k8s.io/apiextensions-apiserver v0.36.3 pkg/apiserver/schema/cel/validation.go validateExpressions)
    assert ("type conversion error from 'string' to 'int' evaluating rule: requirements operator 'Gt', 'Lt', "
            "'Gte', or 'Lte' must have a single positive integer value") in msgs
    assert rule_messages(nodepool(reqs=[{"key": "b", "operator": "Gt", "values": ["-1"]}]), UP) == [
        "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value"]
    old = rule_messages(nodepool(reqs=[{"key": "b", "operator": "Gt", "values": ["-1"]}]), OLD)
    assert old == ["requirements operator 'Gt' or 'Lt' must have a single positive integer value"]
    assert rule_messages(nodepool(reqs=[{"key": "b", "operator": "Gte", "values": ["1"]}]), OLD)[0].startswith(
        "supported values:")


def test_blocking_error_stops_cel_rules():
    """An unsupported operator (an enum error) stops the CEL rules: the restricted hostname key is not
    reported, the API server's "not checked" cause is (seen on a real v1.36.3 API server;
    k8s.io/apiextensions-apiserver v0.36.3 pkg/registry/customresource/strategy.go hasBlockingErr)."""
    msgs = rule_messages(nodepool(reqs=[{"key": "a", "operator": "Bogus"},
                                        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["x"]}]), UP)
    assert msgs == ['supported values: "Gte", "Lte", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
                    "some validation rules were not checked because the object was invalid; correct the existing "
                    "errors to complete validation"]


def test_runtime_aksnodeclass_label_passes_cel_fails_go():
    obj = nodepool(reqs=[{"key": "karpenter.azure.com/aksnodeclass", "operator": "In", "values": ["x"]}])
    assert rule_messages(obj, UP) == []
    assert "using label karpenter.azure.com/aksnodeclass is not allowed" in runtime_validation_error(obj, UP)


def test_invalid_label_key_only_caught_at_runtime():
    obj = nodepool(labels={"spaces are not allowed": "x"})
    assert rule_messages(obj, UP) == []
    assert runtime_validation_error(obj, UP).startswith('invalid key name "spaces are not allowed" in labels, ')


def test_rendered_cel_matches_upstream_text():
    rules = {r.message: r.rule for r in crdrules.label_map_rules(UP)}
    assert rules['label domain "karpenter.sh" is restricted'] == (
        'self.all(x, x in ["karpenter.sh/capacity-type", "karpenter.sh/nodepool"] || '
        '!x.find("^([^/]+)").endswith("karpenter.sh"))'.replace("endswith", "endsWith"))
    key_rules = {r.message: r.rule for r in crdrules.requirement_key_rules(UP, crdrules.NODECLAIM_REQUIREMENTS)}
    assert 'label "karpenter.sh/nodepool" is restricted' not in key_rules   # NodeClaims may carry it
    assert cel.evaluate(key_rules['label domain "karpenter.sh" is restricted'], "karpenter.sh/nodepool")


def test_missing_required_field_stops_cel_with_the_api_servers_whole_cause():
    """The cause after a blocking error carries the whole text, as a real v1.36.3 server answers
    (k8s.io/apiextensions-apiserver v0.36.3 pkg/registry/customresource/strategy.go hasBlockingErr)."""
    np = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "x"},
          "spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass",
                                                          "name": "d"}}}}}
    rej = admission_rejection(np, load_profile("upstream"))
    assert [(c.field, c.message) for c in rej.causes] == [
        ("spec.template.spec.requirements", "Required value"),
        ("<nil>", "some validation rules were not checked because the object was invalid; correct the existing "
                  "errors to complete validation")]
