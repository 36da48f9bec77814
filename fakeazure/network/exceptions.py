"""Network (NRP) errors (https://learn.microsoft.com/rest/api/virtualnetwork/network-interfaces;
https://learn.microsoft.com/rest/api/virtualnetwork/network-interfaces; message wording unverified there)."""
from __future__ import annotations

from ..arm import ARMError, invalid_resource_reference, resource_not_found

__all__ = ["ARMError", "nic_not_found", "nic_in_use", "invalid_reference", "invalid_resource", "subnet_is_required",
           "another_operation_in_progress"]


def nic_not_found(rg: str, name: str) -> ARMError:
    return resource_not_found(f"Microsoft.Network/networkInterfaces/{name}", rg)


def nic_in_use(nic_id: str, vm_id: str) -> ARMError:
    # Deleting a NIC still attached to a VM (NicInUse; wording unverified;
    # https://learn.microsoft.com/rest/api/virtualnetwork/network-interfaces/delete).
    return ARMError("NicInUse",
                    f"Network Interface {nic_id} is used by existing resource {vm_id}. In order to delete the "
                    f"network interface, it must be dissociated from the resource. To learn more, see "
                    f"aka.ms/deletenic.", 400)


def invalid_reference(ref_id: str, nic_id: str) -> ARMError:
    # a referenced subnet, backend pool or NSG does not exist (karpenter-provider-azure v1.14.0
    # pkg/providers/instance/lberrors.go reads this error;
    # https://learn.microsoft.com/rest/api/virtualnetwork/network-interfaces).
    return invalid_resource_reference(ref_id, nic_id)


def invalid_resource() -> ARMError:
    # A NIC PUT whose body has no ``properties.ipConfigurations`` (e.g. snake_case or top-level keys):
    # ARM's answer as reported in Azure/azure-rest-api-specs#22603 (a body with ``ip_configurations``
    # at the top level).  That this is the answer for every NIC body without IP configurations is
    # a harness assumption.
    return ARMError("InvalidResource", "The resource definition is invalid.", 400)


def subnet_is_required(ipconfig_id: str) -> ARMError:
    # NRP's text for an IP configuration without a subnet (quoted in Azure/azure-sdk-for-python#536
    # for a NIC; code SubnetIsRequired quoted with the same text for an application gateway in
    # Azure/azure-powershell generation notes).
    return ARMError("SubnetIsRequired", f"Subnet reference is required for ipconfiguration {ipconfig_id}.", 400)


def another_operation_in_progress(nic_id: str) -> ARMError:
    # A write to a NIC whose delete is still running: NRP refuses it with AnotherOperationInProgress
    # (the code as NRP names it; the 409 status and this wording are a harness assumption).
    return ARMError("AnotherOperationInProgress",
                    f"Another operation on this or dependent resource is in progress. Resource: {nic_id}.", 409)
