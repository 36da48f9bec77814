"""What a node's kubelet reports as its capacity and allocatable: the machine the VM is (its SKU's
vCPUs and memory, its OS disk) minus what the kubelet was told to reserve.

One rule for both engines: the simulated kubelet (loop/lifecycle/registration.py) and the real engine's
stand-in (runner/engines/real/cluster/kubelet.py, which reads the reservations from the bootstrap flags). It is
not Karpenter's own estimate: the provider subtracts `VMMemoryOverheadPercent` (0.075) from the SKU's
memory for its instance types (karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetype.go
`CalculateMemoryWithoutOverhead`, `--vm-memory-overhead-percent`), a margin for what the guest does not
see, while the Node reports the memory its kubelet finds. So a Node holds more than Karpenter planned
for it: kube-scheduler (which reads the Node) can put pods there that Karpenter planned elsewhere, and
the disruption controller's simulation (which reads an initialized Node's allocatable: core v1.14.0
pkg/controllers/state/statenode.go `Allocatable`) can move pods onto it.
"""
from __future__ import annotations

from dataclasses import dataclass

from fakeazure.catalog import capability
from harness.model.values.resources import format_resource_list

BASE_RESOURCES = ("cpu", "memory", "pods", "ephemeral-storage")


@dataclass
class MachineFacts:
    """What a kubelet learns from the machine itself."""
    hostname: str
    arch: str
    vcpus: int
    memory_mib: int
    os_disk_gib: int


def machine_facts(vm_put: dict, sku: dict | None) -> MachineFacts:
    """The machine of a VM body (its computerName and OS disk) of a SKU (ARM resourceSku shape)."""
    props = vm_put.get("properties") or {}
    name = (props.get("osProfile") or {}).get("computerName") or ""
    arch = (capability(sku, "CpuArchitectureType", "x64") if sku else "x64")
    disk = ((props.get("storageProfile") or {}).get("osDisk") or {}).get("diskSizeGB") or 128
    vcpus = int(capability(sku, "vCPUs", "2") if sku else 2)
    mem = float(capability(sku, "MemoryGB", "8") if sku else 8)
    return MachineFacts(name.lower(), "arm64" if arch.lower() == "arm64" else "amd64", vcpus,
                        int(mem * 1024), int(disk))


def node_status(facts: MachineFacts, max_pods: int, reserved: dict[str, int],
                extended: dict[str, int] | None = None) -> dict:
    """capacity from the machine (plus device plugins' extended resources), allocatable = capacity -
    reserved (kubelet node allocatable, https://kubernetes.io/docs/tasks/administer-cluster/reserve-compute-resources/)."""
    capacity = {"cpu": facts.vcpus * 1000, "memory": facts.memory_mib * 1024 * 1024,
                "pods": max_pods, "ephemeral-storage": facts.os_disk_gib * 1024 ** 3, **(extended or {})}
    allocatable = {k: max(v - reserved.get(k, 0), 0) for k, v in capacity.items()}
    return {"capacity": format_resource_list(capacity), "allocatable": format_resource_list(allocatable)}
