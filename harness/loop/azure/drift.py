"""The Azure provider's drift checks (CloudProvider.IsDrifted), run in the order the release runs them.

The checks, their order and the image reason's name are derived per release (release-probes.yaml
provider.drift.checks, provider.drift.imageReason; a node the Machine API created runs the AKS machine branch,
provider.drift.machineChecks, from v1.7). github.com/Azure/karpenter-provider-azure v1.14.0
pkg/cloudprovider/drift.go isNodeClassDrifted (v0.5-v0.6: cloudprovider.go IsDrifted):
- nodeClassHash -> NodeClassDrift (v0.7+): the AKSNodeClass's hash differs from the one stamped on the
  NodeClaim at Create, when both carry the release's hash version (areStaticFieldsDrifted); the hash
  leaves out the release's `hash:"ignore"` fields (provider.nodeClassHash: kubelet at v0.7.0-v0.7.4,
  tags from v1.6.2, so a tags-only change drifts every node before v1.6.2);
- kubernetesVersion -> K8sVersionDrift: the Node's kubelet version differs from the cluster's
  (the AKSNodeClass's status.kubernetesVersion; isK8sVersionDrifted);
- kubeletIdentity -> KubeletIdentityDrift (v1.4+): the Node's kubernetes.azure.com/kubelet-identity-client-id
  label, when set, differs from the operator's kubelet identity (isKubeletIdentityDrifted);
- imageVersion -> ImageDrift (ImageVersionDrift before v1.4): the VM's image is not among the
  AKSNodeClass's status.images (isImageVersionDrifted); the images are the image family's latest node
  image version, or the pinned spec.imageVersion (harness model of the provider's image status
  controller: one image per family, the version from given.cluster.nodeImageVersion);
- subnet -> SubnetDrift (v0.6.0-v1.7.2; removed in v1.8.0 by #1461): the NIC's subnet differs from the
  AKSNodeClass's vnetSubnetID, or the operator's subnet (isSubnetDrifted);
- machineDriftAction -> ClusterConfigDrift (AKS machine nodes only; no kubelet identity check there): AKS set the
  machine's status.driftAction to anything but Synced (isMachineDrifted: Recreate, or an action it does not know);
- clusterLabelValues (the design-0006 profile only): a cluster-wide base label whose value the
  provider would write differently now (profile data names the keys and the reason).
"""
from __future__ import annotations

from harness.loop.lifecycle.hashes import NODECLASS_HASH, NODECLASS_HASH_VERSION, nodeclass_hash, nodeclass_hash_annotations
from harness.model.labels.writers import base_labels

NODECLASS_DRIFT = "NodeClassDrift"
K8S_VERSION_DRIFT = "K8sVersionDrift"
IMAGE_DRIFT = "ImageDrift"                  # the newest release's name (provider.drift.imageReason)
KUBELET_IDENTITY_DRIFT = "KubeletIdentityDrift"
SUBNET_DRIFT = "SubnetDrift"
CLUSTER_CONFIG_DRIFT = "ClusterConfigDrift"
# isMachineDrifted: the drift actions that are no drift (armcontainerservice DriftActionSynced, or none)
NO_DRIFT_ACTIONS = ("", "Synced")
# what each reason means, for the decision record (the image reason's: IMAGE_WHY, under the release's name)
WHY = {NODECLASS_DRIFT: "the AKSNodeClass's hash differs from the one stamped on the NodeClaim",
       K8S_VERSION_DRIFT: "its kubelet's version differs from the AKSNodeClass's status.kubernetesVersion",
       KUBELET_IDENTITY_DRIFT: "its kubelet identity label differs from the cluster's kubelet identity",
       SUBNET_DRIFT: "its NIC's subnet differs from the AKSNodeClass's (or the cluster's) subnet",
       CLUSTER_CONFIG_DRIFT: "AKS set its machine's status.driftAction (Recreate)"}
IMAGE_WHY = "its VM's image is not among the AKSNodeClass's status.images"
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


def image_reason(profile) -> str:
    """The release's name for image drift (provider.drift.imageReason: ImageVersionDrift before v1.4)."""
    return str(profile.provider_setting("drift", "imageReason") or IMAGE_DRIFT)


def why(reason: str, profile) -> str | None:
    """What a provider drift reason of the profile's release means, or None for a reason no check here names."""
    return IMAGE_WHY if reason == image_reason(profile) else WHY.get(reason)


def launch_facts(nodeclass_obj: dict | None, cluster, profile) -> dict:
    """What the provider's Create and the kubelet record for a new VM: the AKSNodeClass hash
    annotations (none where the release has no AKSNodeClass hash), the image, the subnet and the
    kubelet's version."""
    spec = (nodeclass_obj or {}).get("spec") or {}
    return {"annotations": nodeclass_hash_annotations(nodeclass_obj, profile),
            "image_id": image_id(spec, cluster), "subnet": expected_subnet(spec, cluster),
            "kubelet_version": str(cluster.kubernetes_version).lstrip("v")}


def is_drifted(profile, provider, cluster, claim_annotations: dict, facts: dict, nodeclass_obj: dict | None,
               node_labels: dict | None, arch: str, claim_labels: dict | None = None, machine_name: str = "") -> str:
    """The first drift reason of the profile's checks, or "": a VM node's (drift.checks), or an AKS machine
    node's (drift.machineChecks) when `machine_name` names its machine (GetAKSMachineNameFromNodeClaim)."""
    if nodeclass_obj is None:
        return ""          # resolving the node class failed: IgnoreNotFound, no drift
    spec = nodeclass_obj.get("spec") or {}
    for check in profile.provider_setting("drift", "machineChecks" if machine_name else "checks") or ():
        if check == "nodeClassHash":
            # areStaticFieldsDrifted: the AKSNodeClass carries the release's hash and version (its hash controller
            # stamps them); no drift where either side lacks one or the versions differ
            version = profile.nodeclass_hash_version
            have = claim_annotations.get(NODECLASS_HASH)
            if version is not None and have is not None and claim_annotations.get(NODECLASS_HASH_VERSION) == version \
                    and have != nodeclass_hash(nodeclass_obj, profile):
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
                return image_reason(profile)
        elif check == "subnet":
            if facts.get("subnet") and facts["subnet"] != expected_subnet(spec, cluster):
                return SUBNET_DRIFT
        elif check == "machineDriftAction":
            # isMachineDrifted: a failed read is an error, and core records no drift this time
            if (provider.machine_drift_action(machine_name) or "") not in NO_DRIFT_ACTIONS:
                return CLUSTER_CONFIG_DRIFT
        elif check == "clusterLabelValues" and node_labels is not None:
            conf = profile.provider_setting("drift", "clusterLabelValues") or {}
            from harness.model.azure import instancetypes as itmod
            want = base_labels(profile, provider.label_facts(itmod.NodeClassParams.from_manifest(nodeclass_obj), arch))
            for key in conf.get("keys") or ():
                if key in (claim_labels or {}):
                    continue          # the NodePool sets it (template label or requirement): not the provider's value
                if want.get(key) != node_labels.get(key):
                    return str(conf.get("reason") or CLUSTER_CONFIG_DRIFT)
    return ""
