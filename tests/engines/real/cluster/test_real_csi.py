"""The real engine's CSI provisioner stand-in (harness/runner/engines/real/cluster/csi.py): it serves only the
provisioners the scenario's cluster runs, as the simulation's kube-scheduler waits for the others."""
from __future__ import annotations

import pytest

from harness.backends.embedded import EmbeddedBackend
from harness.runner.engines.real.cluster.csi import SELECTED_NODE, ephemeral_claims, makes_claims, provision


@pytest.fixture()
def cluster():
    c = EmbeddedBackend().start()
    yield c
    c.close()


def _claim_on_node(cluster, provisioner: str) -> None:
    cluster.create({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "s"},
                    "provisioner": provisioner, "volumeBindingMode": "WaitForFirstConsumer"})
    cluster.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {
        "topology.disk.csi.azure.com/zone": "eastus-2"}}})
    cluster.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                    "metadata": {"name": "c", "namespace": "default", "annotations": {SELECTED_NODE: "n1"}},
                    "spec": {"storageClassName": "s", "accessModes": ["ReadWriteOnce"],
                             "resources": {"requests": {"storage": "1Gi"}}}})


@pytest.mark.parametrize("provisioner, made", [("kubernetes.io/azure-disk", True), ("disk.csi.azure.com", True),
                                               ("blob.csi.azure.com", False)])
def test_only_a_running_provisioner_creates_the_volume(cluster, provisioner, made):
    _claim_on_node(cluster, provisioner)
    names = provision(cluster, ["default"], ("disk.csi.azure.com", "file.csi.azure.com"))
    assert bool(names) == made
    if made:
        pv = cluster.get("PersistentVolume", names[0])
        assert pv["spec"]["csi"]["driver"] == "disk.csi.azure.com"     # an in-tree class migrates to its driver
        assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"] == [
            {"key": "topology.disk.csi.azure.com/zone", "operator": "In", "values": ["eastus-2"]}]


def test_claims_in_play_include_ephemeral_volumes_of_pods_and_templates():
    eph = {"volumes": [{"name": "v", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]}
    assert makes_claims({"kind": "PersistentVolumeClaim"})
    assert makes_claims({"kind": "Pod", "spec": eph})
    assert makes_claims({"kind": "Deployment", "spec": {"template": {"spec": eph}}})
    assert not makes_claims({"kind": "Pod", "spec": {"volumes": [{"name": "v", "emptyDir": {}}]}})


def test_a_claim_whose_selected_node_is_gone_goes_back_to_kube_scheduler(cluster):
    _claim_on_node(cluster, "disk.csi.azure.com")
    cluster.delete("Node", "n1")
    assert provision(cluster, ["default"], ("disk.csi.azure.com",)) == []
    claim = cluster.get("PersistentVolumeClaim", "c", "default")
    assert SELECTED_NODE not in (claim["metadata"].get("annotations") or {})


def test_a_manifest_claim_named_for_a_pods_ephemeral_volume_is_owned_by_that_pod():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"volumes": [{"name": "v", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}],
                    "containers": [{"name": "c", "image": "x"}]}}
    assert ephemeral_claims([pod, {"kind": "Pod", "metadata": {"name": "q"}}]) == {("default", "p-v"): "p"}
