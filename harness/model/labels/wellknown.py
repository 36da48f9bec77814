"""Well-known label keys and values the model writes and reads.

One home for every key string, so instance types, the label writers and the loop name the same key
the same way. Upstream defines them in three places: Kubernetes' `k8s.io/api/core/v1`
well_known_labels.go (instance-type, arch, os, zone, region), karpenter core
(sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/labels.go: capacity-type, nodepool) and the provider
(github.com/Azure/karpenter-provider-azure v1.14.0 pkg/apis/v1beta1/labels.go: the `karpenter.azure.com/`
and `kubernetes.azure.com/` keys; github.com/Azure/karpenter-provider-azure v1.14.0
pkg/providers/instancetype/instancetype.go computeRequirements).
"""
from __future__ import annotations

# Kubernetes (k8s.io/api core/v1 well_known_labels.go)
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"

# karpenter core (pkg/apis/v1/labels.go CapacityTypeLabelKey, NodePoolLabelKey, CapacityTypeOnDemand/Spot)
CAPACITY_TYPE = "karpenter.sh/capacity-type"
NODEPOOL = "karpenter.sh/nodepool"
ON_DEMAND, SPOT = "on-demand", "spot"
CAPACITY_TYPES = (ON_DEMAND, SPOT)

# provider (pkg/apis/v1beta1/labels.go LabelSKU*, LabelPlacementScope, LabelUltraSSD, AKSLabel*)
PLACEMENT_SCOPE = "karpenter.azure.com/placement-scope"
ULTRA_SSD = "karpenter.azure.com/sku-storage-ultra-ssd"
SKU_CPU = "karpenter.azure.com/sku-cpu"
SKU_MEMORY = "karpenter.azure.com/sku-memory"
AKS_SKU_CPU = "kubernetes.azure.com/sku-cpu"
AKS_SKU_MEMORY = "kubernetes.azure.com/sku-memory"
GPU_COUNT = "karpenter.azure.com/sku-gpu-count"
GPU_MANUFACTURER = "karpenter.azure.com/sku-gpu-manufacturer"
GPU_NAME = "karpenter.azure.com/sku-gpu-name"
CLUSTER = "kubernetes.azure.com/cluster"
MODE = "kubernetes.azure.com/mode"
SCALE_SET_PRIORITY = "kubernetes.azure.com/scalesetpriority"
PRIORITY = "kubernetes.azure.com/priority"
OS_SKU = "kubernetes.azure.com/os-sku"
FIPS_ENABLED = "kubernetes.azure.com/fips_enabled"
# (harness assumption) not written by the provider v1.14.0 (absent from its pkg/providers/labels/labels.go;
# github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetype.go computeRequirements,
# designs/0006-requirements-and-labels.md); profiles with `nodeImageVersion: true` model AKS's own label
# (https://learn.microsoft.com/azure/aks/use-labels).
NODE_IMAGE_VERSION = "kubernetes.azure.com/node-image-version"
SKU_NAME = "karpenter.azure.com/sku-name"
SKU_FAMILY = "karpenter.azure.com/sku-family"
SKU_SERIES = "karpenter.azure.com/sku-series"
SKU_VERSION = "karpenter.azure.com/sku-version"
EPHEMERAL_MAX = "karpenter.azure.com/sku-storage-ephemeralos-maxsize"
PREMIUM = "karpenter.azure.com/sku-storage-premium-capable"
ACCELERATED = "karpenter.azure.com/sku-networking-accelerated"
# before provider v1.4.0 (#872) only (release-probes.yaml provider.requirements.encryptionAtHostSupported)
ENCRYPTION_AT_HOST = "karpenter.azure.com/sku-encryptionathost-capable"
HYPERV = "karpenter.azure.com/sku-hyperv-generation"


def normalize_cluster_label(node_resource_group: str) -> str:
    """The CLUSTER label's value (provider v1.14.0 pkg/utils/labels.go
    NormalizeClusterResourceGroupNameForLabel; github.com/Azure/karpenter-provider-azure v1.14.0
    pkg/providers/instancetype/instancetype.go computeRequirements): replace `(` and `)` with `-`,
    truncate to 63, and if the result ends in `-`, `_` or `.` append `z` (or replace the last
    character with `z` when the length is over 62)."""
    s = (node_resource_group or "").replace("(", "-").replace(")", "-")[:63]
    if s and s[-1] in "-_.":
        s = s[:-1] + "z" if len(s) > 62 else s + "z"
    return s
