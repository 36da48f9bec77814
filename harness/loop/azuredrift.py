"""The Azure provider's drift checks (CloudProvider.IsDrifted), run in the order the profile lists.

github.com/Azure/karpenter-provider-azure v1.14.0 pkg/cloudprovider/drift.go isNodeClassDrifted:
- nodeClassHash -> NodeClassDrift: the AKSNodeClass's hash (annotation) differs from the one stamped
  on the NodeClaim at Create, when both carry the same hash version (areStaticFieldsDrifted);
- kubernetesVersion -> K8sVersionDrift: the Node's kubelet version differs from the AKSNodeClass's
  status.kubernetesVersion, which follows the cluster's version (isK8sVersionDrifted);
- kubeletIdentity -> KubeletIdentityDrift: the Node's kubernetes.azure.com/kubelet-identity-client-id
  label, when set, differs from the operator's kubelet identity (isKubeletIdentityDrifted);
- imageVersion -> ImageDrift: the VM's image is not among the AKSNodeClass's status.images
  (isImageVersionDrifted); the images are the image family's latest node image version, or the
  pinned spec.imageVersion (harness model of the provider's image status controller: one image per
  family, the version from given.cluster.nodeImageVersion);
- subnet -> SubnetDrift (provider v1.6.5 only; removed in v1.8.0 by #1461): the NIC's subnet
  differs from the AKSNodeClass's vnetSubnetID, or the operator's subnet (isSubnetDrifted);
- clusterLabelValues (the design-0006 profile only): a cluster-wide base label whose value the
  provider would write differently now (profile data names the keys and the reason).
"""
from __future__ import annotations

from harness.loop.hashes import NODECLASS_HASH, NODECLASS_HASH_VERSION
from harness.model.writers import base_labels

NODECLASS_DRIFT = "NodeClassDrift"
K8S_VERSION_DRIFT = "K8sVersionDrift"
IMAGE_DRIFT = "ImageDrift"
KUBELET_IDENTITY_DRIFT = "KubeletIdentityDrift"
SUBNET_DRIFT = "SubnetDrift"
KUBELET_IDENTITY_LABEL = "kubernetes.azure.com/kubelet-identity-client-id"
# (harness assumption) the node image version an AKSNodeClass's status lists while the scenario
# names none (given.cluster.nodeImageVersion)
DEFAULT_IMAGE_VERSION = "202601.01.0"


def image_id(nodeclass_spec: dict, cluster) -> str:
    """The image a VM of this AKSNodeClass boots now (the provider's status.images, one per family)."""
    family = nodeclass_spec.get("imageFamily") or "Ubuntu"
    version = nodeclass_spec.get("imageVersion") or cluster.node_image_version or DEFAULT_IMAGE_VERSION
    return f"{family}/{version}"


def expected_subnet(nodeclass_spec: dict, cluster) -> str:
    return nodeclass_spec.get("vnetSubnetID") or cluster.subnet_name or "aks-subnet"


def launch_facts(nodeclass_obj: dict | None, cluster) -> dict:
    """What the provider's Create and the kubelet record for a new VM: the AKSNodeClass hash
    annotations, the image, the subnet and the kubelet's version."""
    spec = (nodeclass_obj or {}).get("spec") or {}
    from harness.loop.hashes import NODECLASS_HASH_VERSION_VALUE, nodeclass_hash
    return {"annotations": {NODECLASS_HASH: nodeclass_hash(nodeclass_obj or {}),
                            NODECLASS_HASH_VERSION: NODECLASS_HASH_VERSION_VALUE},
            "image_id": image_id(spec, cluster), "subnet": expected_subnet(spec, cluster),
            "kubelet_version": str(cluster.kubernetes_version).lstrip("v")}


def is_drifted(profile, provider, cluster, claim_annotations: dict, facts: dict, nodeclass_obj: dict | None,
               node_labels: dict | None, arch: str, claim_labels: dict | None = None) -> str:
    """The first drift reason of the profile's checks, or ""."""
    if nodeclass_obj is None:
        return ""          # resolving the node class failed: IgnoreNotFound, no drift
    spec = nodeclass_obj.get("spec") or {}
    for check in profile.provider_setting("drift", "checks") or ():
        if check == "nodeClassHash":
            from harness.loop.hashes import NODECLASS_HASH_VERSION_VALUE, nodeclass_hash
            have = claim_annotations.get(NODECLASS_HASH)
            if have is not None and claim_annotations.get(NODECLASS_HASH_VERSION) == NODECLASS_HASH_VERSION_VALUE \
                    and have != nodeclass_hash(nodeclass_obj):
                return NODECLASS_DRIFT
        elif check == "kubernetesVersion":
            if node_labels is not None and facts.get("kubelet_version") != str(cluster.kubernetes_version).lstrip("v"):
                return K8S_VERSION_DRIFT
        elif check == "kubeletIdentity":
            have = (node_labels or {}).get(KUBELET_IDENTITY_LABEL) or ""
            if have and have != (cluster.kubelet_identity_client_id or ""):
                return KUBELET_IDENTITY_DRIFT
        elif check == "imageVersion":
            if facts.get("image_id") and facts["image_id"] != image_id(spec, cluster):
                return IMAGE_DRIFT
        elif check == "subnet":
            if facts.get("subnet") and facts["subnet"] != expected_subnet(spec, cluster):
                return SUBNET_DRIFT
        elif check == "clusterLabelValues" and node_labels is not None:
            conf = profile.provider_setting("drift", "clusterLabelValues") or {}
            from harness.model import instancetypes as itmod
            want = base_labels(profile, provider.label_facts(itmod.NodeClassParams.from_manifest(nodeclass_obj), arch))
            for key in conf.get("keys") or ():
                if key in (claim_labels or {}):
                    continue          # the NodePool sets it (template label or requirement): not the provider's value
                if want.get(key) != node_labels.get(key):
                    return str(conf.get("reason") or "ClusterConfigDrift")
    return ""
