"""NodeClass and cluster parameters (harness.model.azure.params)."""
from __future__ import annotations

import pytest

from harness.model.azure.params import ClusterParams, NodeClassParams


def test_nodeclass_from_manifest():
    manifest = {"apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass", "metadata": {"name": "x"},
                "spec": {"imageFamily": "AzureLinux", "osDiskSizeGB": 64, "maxPods": 50, "fipsMode": "FIPS",
                         "security": {"encryptionAtHost": True}, "localDNS": {"mode": "Required"},
                         "gpu": {"mode": "None"}, "artifactStreaming": {"mode": "Enabled"}}}
    nc = NodeClassParams.from_manifest(manifest)
    assert nc == NodeClassParams(image_family="AzureLinux", os_disk_size_gb=64, max_pods=50, encryption_at_host=True,
                                 trusted_launch=False, gpu_mode="None", artifact_streaming=True, fips_mode="FIPS",
                                 local_dns=True)
    assert NodeClassParams.from_manifest({"spec": {}}) == NodeClassParams()
    assert NodeClassParams.from_manifest(None) == NodeClassParams()
    assert NodeClassParams.from_manifest({"spec": {"localDNS": {"mode": "Disabled"}}}).local_dns is False
    assert NodeClassParams.from_manifest({"spec": {"security": {"trustedLaunch": True}}}).trusted_launch
    assert hash(nc) == hash(NodeClassParams.from_manifest(manifest))


def test_cluster_from_dict():
    c = ClusterParams.from_dict({"region": "eastus", "nodeResourceGroup": "MC_x", "networkPlugin": "azure",
                                 "networkPluginMode": "", "networkDataplane": "azure", "kubernetesVersion": "1.34.1",
                                 "kubeletIdentityClientID": "abc", "vnetGUID": "g", "subnetName": "s",
                                 "vmMemoryOverheadPercent": "0.1", "nodeImageVersion": 202509, "useSIG": True})
    assert (c.region, c.node_resource_group, c.network_plugin_mode, c.network_dataplane, c.kubernetes_version) == (
        "eastus", "MC_x", "", "azure", "1.34.1")
    assert (c.kubelet_identity_client_id, c.vnet_guid, c.subnet_name, c.vm_memory_overhead_percent) == (
        "abc", "g", "s", 0.1)
    assert c.node_image_version == "202509" and c.use_sig is True
    assert ClusterParams.from_dict({}) == ClusterParams()
    with pytest.raises(ValueError, match="unknown cluster setting 'nodeResourceGoup'"):
        ClusterParams.from_dict({"nodeResourceGoup": "x"})
