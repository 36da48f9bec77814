"""Compute (CRP) errors with the wording Karpenter and the SDK match on.

Sources: https://learn.microsoft.com/rest/api/compute/virtual-machines/create-or-update,
https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors (real message
templates) and the CRP wording
used by Karpenter's fake (karpenter-provider-azure v1.14.0 ``pkg/fake/aksmachinesapi.go``).  Karpenter
matches the *code* plus substrings of the whole error text (github.com/Azure/azure-sdk-for-go-extensions
v0.6.0 pkg/errors/common.go;
https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors):
``LowPriorityCores``, ``Family Cores quota``, ``exceeding approved Total Regional
Cores quota``, ``Current Limit: 0``.
"""
from __future__ import annotations

from ..arm import ARMError, invalid_resource_reference, resource_group_not_found, resource_not_found

__all__ = [
    "ARMError", "sku_not_available", "sku_not_available_capacity", "family_quota", "regional_quota",
    "low_priority_quota", "zonal_allocation_failed", "allocation_failed", "overconstrained_zonal",
    "overconstrained", "property_change_not_allowed", "vm_not_found", "extension_not_found",
    "resource_group_not_found",
    "disk_controller_mismatch", "nic_reference_not_found", "nic_in_use_by_other_vm", "nic_not_provisioned", "invalid_parameter",
    "internal_execution_error", "eviction_not_spot",
]

_QUOTA_PORTAL = ("https://aka.ms/ProdportalCRP/#blade/Microsoft_Azure_Capacity/UsageAndQuota.ReactView/"
                 "Parameters/%7B%22subscriptionId%22:%22{sub}%22,%22command%22:%22openQuotaApprovalBlade%22,"
                 "%22quotas%22:[%7B%22location%22:%22{region}%22,%22providerId%22:%22Microsoft.Compute%22,"
                 "%22resourceName%22:%22{resource}%22,%22quotaRequest%22:%7B%22properties%22:%7B%22limit%22:"
                 "{new},%22unit%22:%22Count%22,%22name%22:%7B%22value%22:%22{resource}%22%7D%7D%7D%7D]%7D")


def _quota_message(what: str, sub: str, region: str, limit: int, usage: int, required: int, resource: str,
                   docs: str) -> str:
    # https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors (real text
    # quoted from https://github.com/Azure/karpenter-provider-azure/issues/192
    # and https://github.com/cloud-barista/cb-spider/issues/1558).
    new = usage + required
    portal = _QUOTA_PORTAL.format(sub=sub, region=region, resource=resource, new=new)
    return (f"Operation could not be completed as it results in exceeding approved {what} quota. "
            f"Additional details - Deployment Model: Resource Manager, Location: {region}, "
            f"Current Limit: {limit}, Current Usage: {usage}, Additional Required: {required}, "
            f"(Minimum) New Limit Required: {new}. Submit a request for Quota increase at {portal} "
            f"by specifying parameters listed in the \u2018Details\u2019 section for deployment to succeed. "
            f"Please read more about quota limits at {docs}")


def family_quota(sub: str, region: str, family: str, limit: int, usage: int, required: int) -> ARMError:
    """409 OperationNotAllowed; the text contains "<family> Cores quota" -> "Family Cores quota"."""
    return ARMError("OperationNotAllowed", _quota_message(
        f"{family} Cores", sub, region, limit, usage, required, family,
        "https://docs.microsoft.com/en-us/azure/azure-supportability/per-vm-quota-requests"), 409)


def regional_quota(sub: str, region: str, limit: int, usage: int, required: int) -> ARMError:
    return ARMError("OperationNotAllowed", _quota_message(
        "Total Regional Cores", sub, region, limit, usage, required, "cores",
        "https://docs.microsoft.com/en-us/azure/azure-supportability/regional-quota-requests"), 409)


def low_priority_quota(sub: str, region: str, limit: int, usage: int, required: int) -> ARMError:
    # The readable part says "Low Priority Cores"; the literal `LowPriorityCores` that
    # Karpenter matches is in the quota URL (github.com/Azure/azure-sdk-for-go-extensions v0.6.0
    # pkg/errors/common.go isLowPriorityQuotaExceeded;
    # https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors).
    return ARMError("OperationNotAllowed", _quota_message(
        "Low Priority Cores", sub, region, limit, usage, required, "LowPriorityCores",
        "https://docs.microsoft.com/en-us/azure/azure-supportability/low-priority-quota"), 409)


def sku_not_available(sub: str, vm_id: str, region: str, zones: list[str]) -> ARMError:
    # https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors, real template
    # (https://github.com/Azure-Samples/azuresandbox/issues/70).
    if zones:
        where = f"in location '{region}' zones '{','.join(zones)}'"
        alt = "deploy to a different location or zones"
    else:  # regional variant: same template without the zone clause (wording inferred)
        where = f"in location '{region}'"
        alt = "deploy to a different location"
    return ARMError("SkuNotAvailable",
                    f"The requested size for resource '{vm_id}' is currently not available {where} for "
                    f"subscription '{sub}'. Please try another size or {alt}. "
                    f"See https://aka.ms/azureskunotavailable for details.", 409)


def sku_not_available_capacity(size: str, region: str) -> ARMError:
    # The newer capacity-restriction variant
    # (https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors;
    # karpenter-provider-azure v1.14.0
    # pkg/fake/aksmachinesapi.go AKSMachineAPIProvisioningErrorSkuNotAvailable), used for Spot.
    return ARMError("SkuNotAvailable",
                    f"The requested VM size for resource 'Following SKUs have failed for Capacity "
                    f"Restrictions: {size}' is currently not available in location '{region}'. Please try "
                    f"another size or deploy to a different location or different zone. "
                    f"See https://aka.ms/azureskunotavailable for details.", 409, target="sku.name")


def zonal_allocation_failed(size: str, zone: str) -> ARMError:
    # Async: the status poll itself is HTTP 200
    # (https://learn.microsoft.com/azure/azure-resource-manager/management/async-operations).
    if not zone:
        # https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors: the real
        # text without size and zone
        # (https://github.com/cloudfoundry/bosh-azure-cpi-release/issues/443).
        return ARMError("ZonalAllocationFailed",
                        "Allocation failed. We do not have sufficient capacity for the requested VM size in "
                        "this zone. Read more about improving likelihood of allocation success at "
                        "http://aka.ms/allocation-guidance", 200)
    # Newer text with size and zone
    # (https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors;
    # karpenter-provider-azure v1.14.0
    # pkg/fake/aksmachinesapi.go AKSMachineAPIProvisioningErrorZoneAllocationFailed).
    return ARMError("ZonalAllocationFailed",
                    f"Allocation failed. We do not have sufficient capacity for the requested VM size {size} "
                    f"in zone {zone}. Read more about improving likelihood of allocation success at "
                    f"http://aka.ms/allocation-guidance", 200)


def allocation_failed() -> ARMError:
    return ARMError("AllocationFailed",
                    "Allocation failed. We do not have sufficient capacity for the requested VM size in this "
                    "region. Read more about improving likelihood of allocation success at "
                    "http://aka.ms/allocation-guidance", 200)


def _constraints(items: list[str]) -> str:
    return ("Allocation failed. VM(s) with the following constraints cannot be allocated, because the "
            "condition is too restrictive. Please remove some constraints and try again. Constraints applied "
            "are:\n" + "".join(f"  - {c}\n" for c in items))


def overconstrained_zonal(spot: bool) -> ARMError:
    items = ["Availability Zone"]
    if spot:
        items += ["Low Priority VMs"]
    items += ["Networking Constraints (such as Accelerated Networking or IPv6)"]
    if spot:
        # the item's text is the one karpenter-provider-azure v1.14.0 pkg/fake/aksmachinesapi.go
        # AKSMachineAPIProvisioningErrorOverconstrainedZonalAllocation lists; that it appears for spot
        # only is a harness assumption
        # (https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors names
        # only e.g. Low Priority VMs and
        # Networking Constraints as items of the varying list)
        items += ["Preemptible VMs (VM might be preempted by another VM with a higher priority)"]
    items += ["VM Size"]
    return ARMError("OverconstrainedZonalAllocationRequest", _constraints(items), 200)


def overconstrained(ephemeral: bool, spot: bool) -> ARMError:
    items = []
    if ephemeral:
        items.append("Differencing (Ephemeral) Disks")
    if spot:
        items.append("Low Priority VMs")
    items += ["Networking Constraints (such as Accelerated Networking or IPv6)", "VM Size"]
    return ARMError("OverconstrainedAllocationRequest", _constraints(items), 200)


def property_change_not_allowed(prop: str) -> ARMError:
    # https://learn.microsoft.com/rest/api/compute/virtual-machines/create-or-update (quoted as a real error in
    # Karpenter's fake: karpenter-provider-azure v1.14.0
    # pkg/fake/virtualmachinesapi.go).
    return ARMError("PropertyChangeNotAllowed", f"Changing property '{prop}' is not allowed.", 409, target=prop)


def vm_not_found(rg: str, name: str) -> ARMError:
    return resource_not_found(f"Microsoft.Compute/virtualMachines/{name}", rg)


def extension_not_found(rg: str, vm_name: str, ext: str) -> ARMError:
    return resource_not_found(f"Microsoft.Compute/virtualMachines/{vm_name}/extensions/{ext}", rg)


def disk_controller_mismatch(size: str) -> ARMError:
    # Azure/karpenter-provider-azure#616 (exact message; the status code and error code are not shown in
    # the report -- 400 BadRequest is our assumption, a rule may override `status`).
    return ARMError("BadRequest",
                    f"The VM size '{size}' cannot boot with OS image or disk. Please check that disk controller "
                    f"types supported by the OS image or disk is one of the supported disk controller types for "
                    f"the VM size '{size}'. Please query sku api at https://aka.ms/azure-compute-skus to "
                    f"determine supported disk controller types for the VM size.", 400)


def nic_reference_not_found(nic_id: str, vm_id: str) -> ARMError:
    return invalid_resource_reference(nic_id, vm_id, target="networkProfile.networkInterfaces")


def nic_in_use_by_other_vm(nic_id: str, other_vm_id: str) -> ARMError:
    # (unverified wording)
    return ARMError("NicInUse",
                    f"Network interface {nic_id} is already used by virtual machine {other_vm_id}.", 400)


def nic_not_provisioned(nic_id: str, vm_id: str) -> ARMError:
    # A VM PUT naming a NIC whose DELETE is still running. ReferencedResourceNotProvisioned is the
    # code and this the wording NRP answers (400) when an operation references a NIC that is not in
    # Succeeded state (quoted for a load balancer and a NIC in Failed state after PutNicOperation,
    # Azure/aks-engine#336). (harness assumption: that a VM PUT gets the same answer for a NIC in
    # Deleting state, and the operation name DeleteNicOperation.)
    return ARMError("ReferencedResourceNotProvisioned",
                    f"Cannot proceed with operation because resource {nic_id} used by resource {vm_id} is not "
                    f"in Succeeded state. Resource is in Deleting state and the last operation that "
                    f"updated/is updating the resource is DeleteNicOperation.", 400)


def invalid_parameter(message: str, target: str) -> ARMError:
    return ARMError("InvalidParameter", message, 400, target=target)


def internal_execution_error() -> ARMError:
    # What an asynchronously delivered 5xx looks like in the operation status.
    return ARMError("InternalExecutionError", "An internal execution error occurred. Please retry later.", 500)


def eviction_not_spot(rg: str, name: str, priority: str) -> ARMError:
    """POST .../virtualMachines/{vm}/simulateEviction on a VM that is not Spot. The operation is only
    for Spot VMs ("The operation to simulate the eviction of spot virtual machine", REST API
    VirtualMachines_SimulateEviction, https://learn.microsoft.com/rest/api/compute/virtual-machines/simulate-eviction),
    and Azure refuses it for a Regular VM (azure-cli's test_vm_simulate_eviction expects the
    command to fail, https://github.com/Azure/azure-cli/pull/14133). The code is Compute's usual
    one for an operation the VM's state does not allow; the wording is a harness assumption (no
    recorded response is in reference)."""
    return ARMError("OperationNotAllowed",
                    f"Simulate eviction is only supported for Spot virtual machines; virtual machine '{name}' "
                    f"in resource group '{rg}' has priority '{priority}'.", 409)
