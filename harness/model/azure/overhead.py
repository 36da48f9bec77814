"""What a node's kubelet reports: capacity after the VM's own overhead, kube/system reserved and the
eviction threshold, and the pod limit.

Provider v1.14.0 pkg/providers/instancetype/instancetype.go (computeCapacity, memoryMiB,
CalculateMemoryWithoutOverhead, KubeReservedResources, SystemReservedResources, EvictionThreshold)
and pkg/utils/utils.go GetMaxPods. Karpenter core subtracts the total from
capacity for `Allocatable` (sigs.k8s.io/karpenter v1.14.0 pkg/cloudprovider/types.go).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from harness.model.values.gostrconv import MAX_INT64, float_to_int64, wrap_int64
from harness.model.values.resources import add

GIB = 1 << 30
MIB = 1 << 20
# instancetype.go EvictionThreshold: memory.available=750Mi (DefaultMemoryAvailable)
EVICTION_MEMORY_AVAILABLE = 750 * MIB

# instancetype.go kubeReserved tax brackets (TaxBrackets): (upper bound, rate); memory in GiB, CPU in cores.
_MEMORY_TAX = ((4.0, 0.25), (8.0, 0.20), (16.0, 0.10), (128.0, 0.06), (math.inf, 0.02))
_CPU_TAX = ((1.0, 0.06), (2.0, 0.04), (4.0, 0.02), (math.inf, 0.01))


def max_pods(nodeclass_max_pods: int | None, network_plugin: str, network_plugin_mode: str) -> int:
    """Pods capacity (karpenter-provider-azure v1.14.0 pkg/utils/utils.go GetMaxPods;
    github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetype.go computeRequirements):
    the NodeClass value, else
    none -> 250, azure+overlay -> 250, azure -> 30, else 110."""
    if nodeclass_max_pods is not None:
        return int(nodeclass_max_pods)
    plugin = (network_plugin or "").lower()
    if plugin == "none":
        return 250
    if plugin == "azure":
        return 250 if (network_plugin_mode or "").lower() == "overlay" else 30
    return 110


def _tax(brackets, amount: float) -> float:
    """`TaxBrackets.Calculate` (instancetype.go; same float operations as upstream)."""
    tax = 0.0
    lower = 0.0
    for upper_bound, rate in brackets:
        if lower > amount:
            continue
        upper = amount if upper_bound > amount else upper_bound
        tax += (upper - lower) * rate
        lower = upper_bound
    return tax


def kube_reserved(vcpus: int, memory_gib: float) -> dict[str, int]:
    """kubeReserved {cpu: millicores, memory: bytes} (karpenter-provider-azure v1.14.0
    pkg/providers/instancetype/instancetype.go KubeReservedResources). 2/8 -> 100m/1843Mi;
    4/7 -> 140m/1638Mi; 3/64 -> 120m/5611Mi.
    Float-to-int64 conversions as Go's."""
    mem_mi = float_to_int64(1024 * _tax(_MEMORY_TAX, memory_gib))
    cpu_milli = float_to_int64(1000 * _tax(_CPU_TAX, float(vcpus)))
    return {"cpu": cpu_milli, "memory": wrap_int64(mem_mi * MIB)}    # reservedMemoryMi*1024*1024 in int64


def memory_capacity(memory_gib: float, overhead_percent: float) -> int:
    """Memory capacity (karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetype.go
    CalculateMemoryWithoutOverhead):
    floor(MemoryGB) Gi minus ceil(bytes x VMMemoryOverheadPercent), in bytes."""
    # The quantity "<int64(skuMemoryGiB)>Gi"; resource.ParseQuantity caps a binary-suffixed amount at
    # MaxInt64 in magnitude (k8s.io/apimachinery pkg/api/resource/quantity.go), absurd sizes included.
    base = float_to_int64(memory_gib) * GIB
    if abs(base) > MAX_INT64:
        base = MAX_INT64 if base > 0 else -MAX_INT64
    return base - float_to_int64(math.ceil(float(base) * overhead_percent))


@dataclass(frozen=True)
class Overhead:
    """core cloudprovider.InstanceTypeOverhead (pkg/cloudprovider/types.go): what `Allocatable`
    subtracts from capacity."""

    kube_reserved: dict[str, int]
    system_reserved: dict[str, int]
    eviction_threshold: dict[str, int]

    def total(self) -> dict[str, int]:
        return add(add(self.kube_reserved, self.system_reserved), self.eviction_threshold)


def node_overhead(vcpus: int, memory_gib: float) -> Overhead:
    """The overhead of one instance type: kubeReserved from the tax brackets, systemReserved zero
    (instancetype.go SystemReservedResources), eviction memory.available=750Mi."""
    return Overhead(kube_reserved(vcpus, memory_gib), {"cpu": 0, "memory": 0},
                    {"memory": EVICTION_MEMORY_AVAILABLE})
