"""Network interface model (https://learn.microsoft.com/rest/api/virtualnetwork/network-interfaces;
https://learn.microsoft.com/rest/api/virtualnetwork/network-interfaces).  No HTTP here.

A NIC gets private IPs from a per-subnet counter (AKS's default node subnet
10.224.0.0/16 starts at .4), an etag, and, once a VM references it, a
``virtualMachine`` back-reference and a MAC address.  A NIC attached to a VM
cannot be deleted (400 NicInUse).  Subnet / backend-pool / NSG references are
checked only for IDs registered with ``FakeAzure.add_subnet`` etc. (opt-in).
"""
from __future__ import annotations

import ipaddress
from collections import deque
from dataclasses import dataclass
from typing import Any

from ..arm import ARMError, clone_json, new_guid, resource_id, rg_and_name
from . import exceptions as exc

NIC_TYPE = "Microsoft.Network/networkInterfaces"


@dataclass
class NetworkInterface:
    rg: str
    name: str
    location: str
    body: dict
    etag: str
    resource_guid: str
    created: float = 0.0
    vm_id: str | None = None
    mac: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.rg.lower(), self.name.lower()

    def id(self, sub: str) -> str:
        return resource_id(sub, self.rg, "Microsoft.Network", "networkInterfaces", self.name)

    @property
    def deleting(self) -> bool:
        """A DELETE of this NIC was accepted and has not finished (or failed) yet."""
        return self.body["properties"].get("provisioningState") == "Deleting"


class NetworkModel:
    """NICs.  A NIC is in use while ``vm_id`` is set: compute sets it when a VM attaches the
    NIC and clears it (or deletes the NIC) when the VM lets go, so this model never looks
    into compute."""

    def __init__(self, rng, clock):
        self.rng = rng
        self.clock = clock
        # (created, removed, last view) of deleted NICs, for lagging readers (Resource Graph)
        self.removed: deque[tuple[float, float, dict]] = deque(maxlen=10000)
        self.nics: dict[tuple[str, str], NetworkInterface] = {}
        self._next_host: dict[str, int] = {}
        self._macs = 0
        self.known_refs: dict[str, set[str]] = {"subnet": set(), "pool": set(), "nsg": set()}

    def clear(self) -> None:
        self.nics.clear()
        self.removed.clear()
        self._next_host.clear()
        self._macs = 0

    def get(self, rg: str, name: str) -> NetworkInterface | None:
        return self.nics.get((rg.lower(), name.lower()))

    def require(self, rg: str, name: str) -> NetworkInterface:
        nic = self.get(rg, name)
        if nic is None:
            raise exc.nic_not_found(rg, name)
        return nic

    def list(self, rg: str | None = None) -> list[NetworkInterface]:
        nics = sorted(self.nics.values(), key=lambda n: (n.rg.lower(), n.name.lower()))
        return [n for n in nics if rg is None or n.rg.lower() == rg.lower()]

    # ------------------------------------------------------------------ IPs
    def _allocate_ip(self, subnet_id: str) -> str:
        key = subnet_id.lower()
        host = self._next_host.get(key, 4)
        self._next_host[key] = host + 1
        return str(ipaddress.IPv4Address("10.224.0.0") + host)

    @staticmethod
    def _check_shape(nic_id: str, props: Any) -> None:
        """A NIC needs at least one IP configuration, each with a subnet (NRP); keys are read as the
        REST API spells them (properties.ipConfigurations[].properties.subnet.id)."""
        configs = props.get("ipConfigurations") if isinstance(props, dict) else None
        if not isinstance(configs, list) or not configs or not all(isinstance(c, dict) for c in configs):
            raise exc.invalid_resource()
        for i, cfg in enumerate(configs):
            cp = cfg.get("properties")
            subnet = cp.get("subnet") if isinstance(cp, dict) else None
            if not isinstance(subnet, dict) or not isinstance(subnet.get("id"), str) or not subnet["id"]:
                raise exc.subnet_is_required(f"{nic_id}/ipConfigurations/{cfg.get('name') or f'ipconfig{i + 1}'}")

    def _check_refs(self, nic_id: str, props: dict) -> None:
        def check(kind: str, rid: str | None) -> None:
            if rid and self.known_refs[kind] and rid.lower() not in self.known_refs[kind]:
                raise exc.invalid_reference(rid, nic_id)
        for cfg in props.get("ipConfigurations") or []:
            cp = (cfg or {}).get("properties") or {}
            check("subnet", (cp.get("subnet") or {}).get("id"))
            for pool in cp.get("loadBalancerBackendAddressPools") or []:
                check("pool", (pool or {}).get("id"))
        check("nsg", (props.get("networkSecurityGroup") or {}).get("id"))

    # ------------------------------------------------------------------ CRUD
    def create_or_update(self, sub: str, rg: str, name: str, body: Any) -> tuple[NetworkInterface, bool]:
        if not isinstance(body, dict):
            # (harness assumption, not in reference: NRP's code and wording for a non-object body)
            raise ARMError("InvalidRequestFormat", "Cannot parse the request.", 400)
        location = body.get("location")
        if not location:
            # (harness assumption, not in reference: ARM's code and wording for a missing location)
            raise ARMError("LocationRequired", "The location property is required for this definition.", 400)
        nic_id = resource_id(sub, rg, "Microsoft.Network", "networkInterfaces", name)
        props = clone_json(body.get("properties") or {})  # the ipConfigurations below are this copy's
        self._check_shape(nic_id, props)
        self._check_refs(nic_id, props)
        existing = self.get(rg, name)
        if existing is not None and existing.deleting:
            # the pending delete would otherwise remove the NIC this PUT re-creates, under a VM
            # that attached it meanwhile
            raise exc.another_operation_in_progress(nic_id)
        old_ips = {}
        if existing is not None:
            for cfg in existing.body["properties"].get("ipConfigurations", []):
                old_ips[cfg["name"].lower()] = cfg["properties"].get("privateIPAddress")
        configs = []
        for i, cfg in enumerate(props.get("ipConfigurations") or []):
            cfg = cfg or {}
            cname = cfg.get("name") or f"ipconfig{i + 1}"
            cp = cfg.setdefault("properties", {})
            subnet = (cp.get("subnet") or {}).get("id") or "default"
            ip = cp.get("privateIPAddress") if (cp.get("privateIPAllocationMethod") == "Static") else None
            ip = ip or old_ips.get(cname.lower()) or self._allocate_ip(subnet)
            cp["privateIPAddress"] = ip
            cp.setdefault("privateIPAllocationMethod", "Dynamic")
            cp["privateIPAddressVersion"] = cp.get("privateIPAddressVersion") or "IPv4"
            cp["provisioningState"] = "Succeeded"
            cp.setdefault("primary", i == 0)
            configs.append({"name": cname, "id": f"{nic_id}/ipConfigurations/{cname}",
                            "etag": None, "type": f"{NIC_TYPE}/ipConfigurations", "properties": cp})
        etag = f'W/"{new_guid(self.rng)}"'
        for c in configs:
            c["etag"] = etag
        props["ipConfigurations"] = configs
        props["provisioningState"] = "Succeeded"
        props.setdefault("dnsSettings", {"dnsServers": [], "appliedDnsServers": []})
        props.setdefault("enableAcceleratedNetworking", False)
        props.setdefault("enableIPForwarding", False)
        # read-only field of the NIC resource (azure-mgmt-network 33.1.0 azure/mgmt/network/models/_models.py
        # NetworkInterface; https://learn.microsoft.com/rest/api/virtualnetwork/network-interfaces)
        props["vnetEncryptionSupported"] = False
        # (harness assumption, not in reference: the further defaults NRP fills in)
        props.setdefault("nicType", "Standard")
        props.setdefault("disableTcpStateTracking", False)
        props.setdefault("auxiliaryMode", "None")
        out = {"name": name, "id": nic_id, "etag": etag, "type": NIC_TYPE, "location": location}
        for k, v in body.items():
            if k not in ("name", "id", "etag", "type", "location", "properties"):
                out[k] = clone_json(v)
        out["properties"] = props
        if existing is not None:
            props["resourceGuid"] = existing.resource_guid
            existing.body = out
            existing.etag = etag
            existing.location = location
            return existing, False
        guid = new_guid(self.rng)
        props["resourceGuid"] = guid
        nic = NetworkInterface(rg=rg, name=name, location=location, body=out, etag=etag, resource_guid=guid,
                               created=self.clock.time())
        self.nics[nic.key] = nic
        return nic, True

    def delete_check(self, sub: str, nic: NetworkInterface) -> None:
        if nic.vm_id:
            raise exc.nic_in_use(nic.id(sub), nic.vm_id)

    def remove(self, nic: NetworkInterface) -> None:
        if self.nics.pop(nic.key, None) is not None:
            self.removed.append((nic.created, self.clock.time(), self.view(nic)))

    def remove_by_id(self, nic_id: str) -> None:
        nic = self.by_id(nic_id)
        if nic is not None:
            self.remove(nic)

    def by_id(self, nic_id: str) -> NetworkInterface | None:
        return self.get(*rg_and_name(nic_id))

    def attach(self, nic_id: str, vm_id: str) -> None:
        nic = self.by_id(nic_id)
        if nic is None:
            return
        nic.vm_id = vm_id
        if nic.mac is None:
            self._macs += 1
            n = self._macs
            nic.mac = "00-0D-3A-{:02X}-{:02X}-{:02X}".format((n >> 16) & 255, (n >> 8) & 255, n & 255)

    def detach(self, nic_id: str) -> None:
        nic = self.by_id(nic_id)
        if nic is not None:
            nic.vm_id = None

    # ------------------------------------------------------------------ views
    def view(self, nic: NetworkInterface, shared: bool = False) -> dict:
        """The NIC as GET returns it. `shared`: its nested values are the stored body's own, for a reply serialized
        at once under the dispatcher's lock (json_bytes), never kept or changed."""
        if shared:
            out = dict(nic.body)
            props = out["properties"] = dict(out["properties"])
        else:
            out = clone_json(nic.body)
            props = out["properties"]
        if nic.vm_id:
            # after a VM attaches, GET shows virtualMachine.id, macAddress, primary
            # (https://learn.microsoft.com/rest/api/virtualnetwork/network-interfaces/get).
            props["virtualMachine"] = {"id": nic.vm_id}
            props["macAddress"] = nic.mac
            props["primary"] = True
            props["hostedWorkloads"] = []  # (harness assumption, not in reference)
        return out

    def snapshot_nic(self, sub: str, nic: NetworkInterface) -> dict:
        ips = [c["properties"].get("privateIPAddress") for c in nic.body["properties"].get("ipConfigurations", [])]
        return {"resource_group": nic.rg, "name": nic.name, "id": nic.id(sub), "location": nic.location,
                "virtual_machine": nic.vm_id, "private_ips": ips, "tags": dict(nic.body.get("tags") or {})}
