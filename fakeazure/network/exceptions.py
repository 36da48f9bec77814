"""Network (NRP) errors (fake-azure.md §3; message wording unverified there)."""
from __future__ import annotations

from ..arm import ARMError

__all__ = ["ARMError", "nic_not_found", "nic_in_use", "invalid_reference"]


def nic_not_found(rg: str, name: str) -> ARMError:
    return ARMError("ResourceNotFound",
                    f"The Resource 'Microsoft.Network/networkInterfaces/{name}' under resource group '{rg}' was "
                    f"not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix", 404)


def nic_in_use(nic_id: str, vm_id: str) -> ARMError:
    # Deleting a NIC still attached to a VM (fake-azure.md §3, NicInUse; wording unverified).
    return ARMError("NicInUse",
                    f"Network Interface {nic_id} is used by existing resource {vm_id}. In order to delete the "
                    f"network interface, it must be dissociated from the resource. To learn more, see "
                    f"aka.ms/deletenic.", 400)


def invalid_reference(ref_id: str, nic_id: str) -> ARMError:
    # fake-azure.md §3: InvalidResourceReference names the missing resource ID (Karpenter's
    # lberrors.go looks for the submitted backend pool ID in the message).
    return ARMError("InvalidResourceReference",
                    f"Resource {ref_id} referenced by resource {nic_id} was not found. Please make sure that the "
                    f"referenced resource exists, and that both resources are in the same region.", 400)
