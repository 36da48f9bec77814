"""Request-body builders and helpers shared by the fakeazure tests."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from conftest import Env

SUB = "00000000-0000-0000-0000-000000000000"
RG = "rg-test"


def vm_body(size: str = "Standard_D2s_v3", zones=("1",), nic_id: str | None = None, location: str = "southcentralus",
            priority: str | None = None, custom_data: str | None = "IyEvYmluL2Jhc2g=", **props) -> dict:
    """A Karpenter-shaped VM PUT body (newVMObject, karpenter-provider-azure v1.14.0
    pkg/providers/instance/vminstance.go;
    https://learn.microsoft.com/rest/api/compute/virtual-machines/create-or-update)."""
    p = {
        "hardwareProfile": {"vmSize": size},
        "storageProfile": {
            "imageReference": {"communityGalleryImageId": "/CommunityGalleries/aks/images/ubuntu/versions/1.0"},
            "osDisk": {"name": "osdisk", "diskSizeGB": 128, "createOption": "FromImage", "deleteOption": "Delete"},
        },
        "osProfile": {"computerName": "aks-node", "adminUsername": "azureuser",
                      "linuxConfiguration": {"disablePasswordAuthentication": True}},
    }
    if custom_data is not None:
        p["osProfile"]["customData"] = custom_data
    if nic_id:
        p["networkProfile"] = {"networkInterfaces": [{"id": nic_id, "properties": {"primary": True,
                                                                                   "deleteOption": "Delete"}}]}
    if priority:
        p["priority"] = priority
        if priority.lower() == "spot":
            p["evictionPolicy"] = "Delete"
            p["billingProfile"] = {"maxPrice": -1}
    p.update(props)
    body = {"location": location, "tags": {"karpenter.sh_nodepool": "default"}, "properties": p}
    body["zones"] = list(zones) if zones else []
    return body


def nic_body(location: str = "southcentralus", subnet: str | None = None, accel: bool = True) -> dict:
    subnet = subnet or (f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Network/virtualNetworks/"
                        f"aks-vnet/subnets/aks-subnet")
    return {"location": location, "tags": {"karpenter.sh_nodepool": "default"},
            "properties": {"ipConfigurations": [{"name": "ipconfig0", "properties": {
                "primary": True, "privateIPAllocationMethod": "Dynamic", "subnet": {"id": subnet}}}],
                "enableAcceleratedNetworking": accel}}


def usages(state) -> dict[str, dict]:
    """The state's usages rows keyed by ``name.value`` ("cores", "standardDSv3Family", ...)."""
    return {u["name"]["value"]: u for u in state.usages()}


def create_nic(env: Env, name: str, **kw) -> str:
    nic = env.network.network_interfaces.begin_create_or_update(RG, name, nic_body(**kw)).result()
    return nic.id


def create_vm(env: Env, name: str, size: str = "Standard_D2s_v3", zones=("1",), priority=None, **kw):
    nic_id = create_nic(env, name)
    return env.compute.virtual_machines.begin_create_or_update(
        RG, name, vm_body(size=size, zones=zones, nic_id=nic_id, priority=priority, **kw)).result()
