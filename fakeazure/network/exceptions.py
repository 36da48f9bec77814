"""Network (NRP) errors (fake-azure.md §3; message wording unverified there)."""
from __future__ import annotations

from ..arm import ARMError, invalid_resource_reference, resource_not_found

__all__ = ["ARMError", "nic_not_found", "nic_in_use", "invalid_reference"]


def nic_not_found(rg: str, name: str) -> ARMError:
    return resource_not_found(f"Microsoft.Network/networkInterfaces/{name}", rg)


def nic_in_use(nic_id: str, vm_id: str) -> ARMError:
    # Deleting a NIC still attached to a VM (fake-azure.md §3, NicInUse; wording unverified).
    return ARMError("NicInUse",
                    f"Network Interface {nic_id} is used by existing resource {vm_id}. In order to delete the "
                    f"network interface, it must be dissociated from the resource. To learn more, see "
                    f"aka.ms/deletenic.", 400)


def invalid_reference(ref_id: str, nic_id: str) -> ARMError:
    # fake-azure.md §3: a referenced subnet, backend pool or NSG does not exist.
    return invalid_resource_reference(ref_id, nic_id)
