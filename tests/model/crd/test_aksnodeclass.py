"""AKSNodeClass admission on the embedded backend (harness.model.crd.aksnodeclass).

The messages are what a real kube-apiserver v1.36.3 answered with provider v1.14.0's CRD installed
(tests/backends/test_conformance_embedded.py re-checks them live when the local backend is built).
"""
from __future__ import annotations

import pytest

from harness.backends.base import APIRejected
from harness.backends.embedded import EmbeddedBackend
from harness.model.crd import aksnodeclass, schema as crdschema
from harness.model.upstream.profile import load_profile

NOT_CHECKED = ("<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; "
               "correct the existing errors to complete validation")


def _nodeclass(name: str, spec) -> dict:
    return {"apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass", "metadata": {"name": name},
            "spec": spec}


@pytest.fixture
def cluster():
    c = EmbeddedBackend().start()
    c.install_profile("upstream")
    try:
        yield c
    finally:
        c.close()


def test_defaults_are_stored(cluster):
    got = cluster.create(_nodeclass("a", {"gpu": {}}))
    assert got["spec"] == {"imageFamily": "Ubuntu", "osDiskSizeGB": 128, "gpu": {"mode": "Driver"}}
    assert cluster.get("AKSNodeClass", "a")["spec"]["imageFamily"] == "Ubuntu"


def test_unknown_fields_are_pruned(cluster):
    got = cluster.create(_nodeclass("a", {"imageFamily": "AzureLinux", "artifactStreaming": {"mode": "Enabled"},
                                          "foo": 1}))
    assert got["spec"] == {"imageFamily": "AzureLinux", "osDiskSizeGB": 128, "artifactStreaming": {}}


@pytest.mark.parametrize("spec, body", [
    ({"imageFamily": "Ubuntu2204", "fipsMode": "FIPS"},
     "spec: Invalid value: FIPS is not yet supported for Ubuntu2204 or Ubuntu2404"),
    ({"imageFamily": "Ubunt"},
     '[spec.imageFamily: Unsupported value: "Ubunt": supported values: "Ubuntu", "Ubuntu2204", "Ubuntu2404", '
     f'"AzureLinux", {NOT_CHECKED}]'),
    ({"osDiskSizeGB": "abc"},
     f'[spec.osDiskSizeGB: Invalid value: "string": spec.osDiskSizeGB in body must be of type integer: "string", '
     f'{NOT_CHECKED}]'),
    ({"osDiskSizeGB": 10, "maxPods": 5},
     "[spec.maxPods: Invalid value: 5: spec.maxPods in body should be greater than or equal to 10, "
     "spec.osDiskSizeGB: Invalid value: 10: spec.osDiskSizeGB in body should be greater than or equal to 30]"),
    ({"kubelet": {"imageGCHighThresholdPercent": 10, "imageGCLowThresholdPercent": 20, "containerLogMaxSize": "x"}},
     "[spec.kubelet.containerLogMaxSize: Invalid value: \"x\": spec.kubelet.containerLogMaxSize in body should match "
     "'^\\d+(E|P|T|G|M|K|Ei|Pi|Ti|Gi|Mi|Ki)$', spec.kubelet: Invalid value: imageGCHighThresholdPercent must be "
     "greater than imageGCLowThresholdPercent]"),
    ({"localDNS": {"mode": "Preferred"}},
     "[spec.localDNS.kubeDNSOverrides: Required value, spec.localDNS.vnetDNSOverrides: Required value, "
     f"{NOT_CHECKED}]"),
    ({"osDiskSizeGB": 1.5},
     '[spec.osDiskSizeGB: Invalid value: "float64": spec.osDiskSizeGB in body must be of type int32: "float64", '
     '<nil>: Invalid value: "": Checked value must be of type integer with format int32 in spec.osDiskSizeGB, '
     "spec.osDiskSizeGB: Invalid value: 1.5: spec.osDiskSizeGB in body should be greater than or equal to 30, "
     f"{NOT_CHECKED}]"),
    ({"linuxOSConfig": {"sysctls": {"netIPv4IPLocalPortRange": "32768"}}},
     "[spec.linuxOSConfig.sysctls.netIPv4IPLocalPortRange: Invalid value: \"32768\": "
     "spec.linuxOSConfig.sysctls.netIPv4IPLocalPortRange in body should match '^\\d+ \\d+$', "
     "spec.linuxOSConfig.sysctls: Invalid value: \"object\": index out of bounds: 1 evaluating rule: "
     "netIPv4IPLocalPortRange last port must be in [32768, 65535], "
     "spec.linuxOSConfig.sysctls: Invalid value: \"object\": index out of bounds: 1 evaluating rule: "
     "netIPv4IPLocalPortRange first port must be <= last port]"),
], ids=["fips-ubuntu2204", "enum", "type", "bounds", "pattern-and-cel", "required", "float-int32", "port-range-error"])
def test_refusals_match_kube_apiserver(cluster, spec, body):
    with pytest.raises(APIRejected) as e:
        cluster.create(_nodeclass("x", spec))
    assert e.value.status == 422
    assert e.value.message == f'AKSNodeClass.karpenter.azure.com "x" is invalid: {body}'


def test_valid_port_range_is_admitted(cluster):
    """"32768 60999" passes the three rules that split netIPv4IPLocalPortRange (the strings extension;
    a real v1.36.3 API server admits it)."""
    stored = cluster.create(_nodeclass("x", {"linuxOSConfig": {"sysctls": {"netIPv4IPLocalPortRange": "32768 60999"}}}))
    assert stored["spec"]["linuxOSConfig"]["sysctls"]["netIPv4IPLocalPortRange"] == "32768 60999"


def test_cel_value_format_follows_the_server_version():
    schema = load_profile("upstream").aks_nodeclass_schema
    old = aksnodeclass.admit(_nodeclass("x", {"imageFamily": "Ubuntu2204", "fipsMode": "FIPS"}), schema, (1, 34))
    assert [e.text for e in old.errors] == ['spec: Invalid value: "object": FIPS is not yet supported for Ubuntu2204 '
                                            'or Ubuntu2404']


def test_profiles_without_the_schema_store_as_written():
    c = EmbeddedBackend().start()
    c.install_profile("before-0006")
    try:
        got = c.create(_nodeclass("a", {"imageFamily": "Ubuntu2204", "fipsMode": "FIPS", "foo": 1}))
        assert got["spec"] == {"imageFamily": "Ubuntu2204", "fipsMode": "FIPS", "foo": 1}
    finally:
        c.close()


def test_missing_fields_compares_sent_and_stored():
    sent = {"a": 1, "b": {"c": 2, "d": 3}, "e": {"f": 1}}
    stored = {"a": 1, "b": {"c": 2}, "g": 5}
    assert crdschema.missing_fields(sent, stored, "spec") == ["spec.b.d", "spec.e"]


def test_update_is_admitted_too(cluster):
    got = cluster.create(_nodeclass("a", {"imageFamily": "AzureLinux", "fipsMode": "FIPS"}))
    got["spec"]["imageFamily"] = "Ubuntu2404"
    with pytest.raises(APIRejected, match="FIPS is not yet supported"):
        cluster.update(got)


def test_synced_schema_matches_the_provider_crd():
    """provider-facts.yaml's aksNodeClass is what the sync derives from the module (when it is cached)."""
    from harness.model import sync
    try:
        src = sync.module_dir(sync.PROVIDER_MODULE, "v1.14.0", download=False)
    except Exception as e:  # noqa: BLE001 - no Go module cache on this machine
        pytest.skip(f"provider module not cached: {e}")
    if src is None or not (src / "pkg/apis/crds/karpenter.azure.com_aksnodeclasses.yaml").exists():
        pytest.skip("provider module v1.14.0 not in the Go module cache")
    assert sync.aksnodeclass_facts(src)["spec"] == load_profile("upstream").aks_nodeclass_schema
