"""The label writers: who puts which label on a Node, with which value, in which order.

Four writers reach a Karpenter-on-Azure Node (design 0006 FAQ "How do Karpenter labels get onto
the Node?", sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodeclaim/lifecycle/controller.go, k8s.io/kubernetes v1.36.3
pkg/kubelet/kubelet_node_status.go, plugin/pkg/admission/noderestriction/admission.go;
github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/labels/labels.go), each cited below:

  kubelet                the kubelet's own labels at registration (k8s.io/kubernetes v1.36.3
                         pkg/kubelet/kubelet_node_status.go initialNode)
  kubelet-node-labels    the provider's `--node-labels` (provider v1.14.0
                         pkg/providers/launchtemplate/launchtemplate.go getStaticParameters,
                         pkg/providers/labels/labels.go Get), applied by the kubelet
  cloud-node-controller  the cloud node controller's instance-type/zone/region labels (k8s.io/cloud-provider
                         v0.36.3 controllers/node/node_controller.go getNodeModifiersFromCloudProvider;
                         k8s.io/cloud-provider v0.36.3 controllers/node/node_controller.go)
  karpenter-core         Karpenter core's syncNode copying all NodeClaim labels (sigs.k8s.io/karpenter
                         v1.14.0 pkg/controllers/nodeclaim/lifecycle/registration.go)

Each function here is pure: the loop calls them in order and the backend judges the writes.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Mapping

from harness.model.labels.policy import can_kubelet_set_label, is_restricted_node_label
from harness.model.upstream.profile import Profile
from harness.model.labels.requirements import Requirements
from harness.model.labels.wellknown import (CAPACITY_TYPE, INSTANCE_TYPE, NODEPOOL, PLACEMENT_SCOPE, PRIORITY, REGION,
                                     SCALE_SET_PRIORITY, ULTRA_SSD, ZONE)

KUBELET = "kubelet"
KUBELET_NODE_LABELS = "kubelet-node-labels"
CLOUD_NODE_CONTROLLER = "cloud-node-controller"
KARPENTER_CORE = "karpenter-core"

# The 22 Azure well-known keys (provider pkg/providers/labels/labels.go
# GetWellKnownSingleValuedRequirementLabels, karpenter-provider-azure v1.14.0;
# github.com/Azure/karpenter-provider-azure v1.14.0 pkg/apis/v1beta1/labels.go init)
AZURE_DOMAINS = ("karpenter.azure.com/", "kubernetes.azure.com/")


@dataclass(frozen=True)
class LabelFacts:
    """Named facts the profile's base-label table refers to (`from:` and `when:` in the YAML)."""

    values: Mapping[str, str]
    conditions: frozenset[str]


def base_labels(profile: Profile, facts: LabelFacts, forced: bool | None = None) -> dict[str, str]:
    """The provider's always-generated labels (karpenter-provider-azure v1.14.0 pkg/providers/labels/labels.go
    Get), from the profile's table.
    `forced` selects the entries applied last (True), the others (False), or all (None)."""
    out: dict[str, str] = {}
    for b in profile.base_labels:
        if forced is not None and b.force != forced:
            continue
        if b.when and b.when not in facts.conditions:
            continue
        value = b.value if b.value is not None else facts.values.get(b.source or "")
        if value is None:
            continue
        out[b.key] = str(value)
    return out


@dataclass
class KubeletLabels:
    """The `--node-labels` the provider hands the kubelet, and the keys its filter dropped."""

    labels: dict[str, str]
    dropped: dict[str, str] = field(default_factory=dict)   # key -> value removed by CanKubeletSetLabel
    sources: dict[str, str] = field(default_factory=dict)   # key -> which input supplied the value


def kubelet_node_labels(profile: Profile, facts: LabelFacts, nodeclaim_labels: Mapping[str, str],
                        claim_requirements: Requirements, instance_type_requirements: Requirements,
                        chosen: Mapping[str, str]) -> KubeletLabels:
    """getStaticParameters (karpenter-provider-azure v1.14.0 pkg/providers/launchtemplate/launchtemplate.go;
    github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/launchtemplate/launchtemplate.go
    getStaticParameters; docs/research/before-0006.md section 5.2 for the older order):
    the profile lists the inputs, later ones win; then the kubelet filter, if the profile has one."""
    inputs = {
        "base": lambda: base_labels(profile, facts, forced=False),
        "nodeClaimLabels": lambda: nodeclaim_labels,
        "claimRequirements": claim_requirements.single_valued_labels,
        "instanceTypeRequirements": instance_type_requirements.single_valued_labels,
        "offering": lambda: chosen,
        "forcedBase": lambda: base_labels(profile, facts, forced=True),
    }
    merged: dict[str, str] = {}
    sources: dict[str, str] = {}
    for source in profile.provider_setting("kubeletLabelSources"):
        for k, v in inputs[source]().items():
            merged[k] = v
            sources[k] = source
    dropped: dict[str, str] = {}
    if profile.provider_setting("kubeletLabelFilter") == "drop":
        for k in sorted(merged):
            if not can_kubelet_set_label(k, profile):
                dropped[k] = merged.pop(k)
                sources.pop(k)
    return KubeletLabels(merged, dropped, sources)


def kubelet_self_labels(hostname: str, arch: str, os_name: str = "linux") -> dict[str, str]:
    """kubelet Kubelet.initialNode (k8s.io/kubernetes v1.36.3 pkg/kubelet/kubelet_node_status.go;
    k8s.io/kubernetes v1.36.3 pkg/kubelet/kubelet_node_status.go initialNode): hostname, os, arch (GA and beta)."""
    return {
        "kubernetes.io/hostname": hostname,
        "kubernetes.io/os": os_name,
        "kubernetes.io/arch": arch,
        "beta.kubernetes.io/os": os_name,
        "beta.kubernetes.io/arch": arch,
    }


def cloud_node_controller_labels(instance_type: str, zone: str, region: str) -> dict[str, str]:
    """Cloud node controller getNodeModifiersFromCloudProvider (k8s.io/cloud-provider v0.36.3
    controllers/node/node_controller.go): instance type, zone and region, each
    under the GA and beta keys. Azure reports a regional VM's zone as "0" (karpenter-provider-azure v1.14.0
    pkg/utils/zones/zones.go MakeAKSLabelZoneFromVM, since PR #1615; github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetypes.go instanceTypeZones)."""
    return {
        INSTANCE_TYPE: instance_type,
        "beta.kubernetes.io/instance-type": instance_type,
        ZONE: zone,
        "failure-domain.beta.kubernetes.io/zone": zone,
        REGION: region,
        "failure-domain.beta.kubernetes.io/region": region,
    }


def vm_nodeclaim_labels(profile: Profile, instance_type_requirements: Requirements, zone: str,
                        capacity_type: str, ultra_ssd: bool, nodepool: str,
                        claim_requirements: Requirements) -> dict[str, str]:
    """provider vmInstanceToNodeClaim + Create's merge of Azure well-known claim labels
    (karpenter-provider-azure v1.14.0 pkg/cloudprovider/cloudprovider.go)."""
    keys = set(profile.provider_setting("vmLabels"))
    labels = dict(instance_type_requirements.single_valued_labels())
    if "zone" in keys:
        labels[ZONE] = zone
    if "placementScope" in keys:
        labels[PLACEMENT_SCOPE] = "regional" if zone in ("0", "") else "zonal"
    if "capacityType" in keys:
        labels[CAPACITY_TYPE] = capacity_type
    priority = "spot" if capacity_type == "spot" else "regular"
    if "scaleSetPriority" in keys:
        labels[SCALE_SET_PRIORITY] = priority
    if "priority" in keys:
        labels[PRIORITY] = priority
    if "ultraSSD" in keys:
        labels[ULTRA_SSD] = "true" if ultra_ssd else "false"
    if "nodePool" in keys:
        labels[NODEPOOL] = nodepool
    merge = profile.provider_setting("mergeWellKnownClaimLabels")
    if merge:
        # true: every Azure well-known key; a list: just those keys
        keys = ({k for k in profile.well_known_labels if k.startswith(AZURE_DOMAINS)} if merge is True
                else set(merge))
        for k, v in claim_requirements.single_valued_labels().items():
            if k in keys:
                labels[k] = v
    return labels


def resolved_requirement_labels(profile: Profile, requirements: Requirements, rng: random.Random) -> dict[str, str]:
    """Custom requirement keys turned into labels (core NodeClaimTemplate.resolveCustomLabelsFromRequirements,
    pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go, at v1.9+; or
    Requirements.Labels() before v1.9, sigs.k8s.io/karpenter v1.6.2 pkg/scheduling/requirements.go,
    sigs.k8s.io/karpenter v1.6.2 pkg/apis/v1/labels.go, pkg/scheduling/requirement.go): In -> a member,
    NotIn/Exists/bounds -> a random integer."""
    out: dict[str, str] = {}
    skip_sim = set(profile.scheduling_simulation_keys)
    for key in sorted(requirements):
        if key in skip_sim:
            continue
        if profile.uses_restricted_node_label:
            if is_restricted_node_label(key, profile):
                continue
        else:
            if key in profile.well_known_labels or key in profile.restricted_labels:
                continue
        value = requirements[key].any(rng)
        if value:
            out[key] = value
    return out


def nodeclaim_template_labels(nodepool: dict, profile: Profile) -> dict[str, str]:
    """core NewNodeClaimTemplate (sigs.k8s.io/karpenter v1.14.0
    pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go): template labels, the nodepool label
    and, where the release's core adds it (Profile.node_class_label: v1.1.0+), the nodeclass label."""
    tmpl = (nodepool.get("spec") or {}).get("template") or {}
    labels = {str(k): str(v) for k, v in ((tmpl.get("metadata") or {}).get("labels") or {}).items()}
    labels[NODEPOOL] = nodepool["metadata"]["name"]
    ref = (tmpl.get("spec") or {}).get("nodeClassRef") or {}
    if ref.get("name") and profile.node_class_label:
        # core NodeClassLabelKey `<group>/<lowercased kind>` (sigs.k8s.io/karpenter v1.14.0
        # pkg/apis/v1/labels.go). The v1 CRD requires both; a v1beta1 NodePool converted without them reads
        # as the Azure NodeClass's, karpenter.azure.com/aksnodeclass.
        group = ref.get("group") or "karpenter.azure.com"
        kind = (ref.get("kind") or "AKSNodeClass").lower()
        labels[f"{group}/{kind}"] = ref["name"]
    return labels
