"""The network around the nodes that Karpenter reads but never writes: virtual networks,
subnets, network security groups and load balancers (Microsoft.Network, read-only here).

What Karpenter-on-Azure v1.14.0 reads (github.com/Azure/karpenter-provider-azure):

* the VNet's ``properties.resourceGuid`` at start-up in overlay mode without ``VNET_GUID``
  (pkg/operator/operator.go ``NewOperator``, "getting VNET GUID");
* the subnet (pkg/controllers/nodeclass/status/subnet.go; 404 -> ``SubnetNotFound``);
* the managed NSG: exactly one name matching ``(?i)^aks-agentpool-(\\d{8})-nsg$``
  (pkg/providers/networksecuritygroup ``ManagedNetworkSecurityGroup``);
* the ``kubernetes`` / ``kubernetes-internal`` load balancers' backend pools
  (pkg/providers/loadbalancer ``LoadBalancerBackendPools``).

Everything exists implicitly, AKS-style, unless configured: any VNet, one AKS-named NSG per
resource group, no load balancers.  Registering subnets (``FakeAzure.add_subnet``) makes other
subnets 404; registering backend pools (``add_backend_pool``) makes their load balancers appear.
"""
from __future__ import annotations

import hashlib
import uuid
import zlib

from ..arm import ARMError, parse_resource_id, resource_id

NS = "Microsoft.Network"
VNET_ADDRESS_SPACE = "10.224.0.0/12"  # AKS's default node VNet address space (harness assumption)
SUBNET_PREFIX = "10.224.0.0/16"  # AKS's default node subnet; NICs get IPs from .4 (models.py)


def stable_guid(*parts: str) -> str:
    """A GUID that depends only on ``parts`` (lowercased): stable across runs and restarts."""
    h = hashlib.sha1("/".join(p.lower() for p in parts).encode()).digest()[:16]
    return str(uuid.UUID(bytes=h, version=4))


def default_nsg_name(rg: str) -> str:
    """``aks-agentpool-<8 digits>-nsg``, the digits derived from the resource group name."""
    return f"aks-agentpool-{zlib.crc32(rg.lower().encode()) % 10 ** 8:08d}-nsg"


def child_not_found(child_id: str) -> ARMError:
    # NRP's answer for a missing child resource such as a subnet (wording unverified).
    return ARMError("NotFound", f"Resource {child_id} not found.", 404)


class Topology:
    """Read-only network resources.  ``known_refs`` is the NIC model's registry of referenced IDs
    (``{"subnet": set, "pool": set, "nsg": set}``, lowercased)."""

    def __init__(self, known_refs: dict[str, set[str]], location: str):
        self.known_refs = known_refs
        self.location = location
        # rg (lowercased) or "*" -> NSG names; "*" applies to every group without its own entry
        self.nsg_names: dict[str, list[str]] = {}
        self.pool_ids: list[str] = []  # backend pools as registered (original casing)

    def clear(self) -> None:
        self.nsg_names.clear()

    # ------------------------------------------------------------------ VNets and subnets
    def _registered_subnets(self) -> set[str]:
        return self.known_refs["subnet"]

    def vnet(self, sub: str, rg: str, name: str) -> dict:
        vid = resource_id(sub, rg, NS, "virtualNetworks", name)
        registered = self._registered_subnets()
        subnets = sorted(s for s in registered if s.startswith(vid.lower() + "/subnets/"))
        if registered and not subnets:
            raise ARMError("ResourceNotFound",
                           f"The Resource '{NS}/virtualNetworks/{name}' under resource group '{rg}' was not "
                           f"found. For more details please go to https://aka.ms/ARMResourceNotFoundFix", 404)
        return {"name": name, "id": vid, "type": f"{NS}/virtualNetworks", "location": self.location,
                "etag": f'W/"{stable_guid(vid, "etag")}"',
                "properties": {"provisioningState": "Succeeded", "resourceGuid": stable_guid(vid),
                               "addressSpace": {"addressPrefixes": [VNET_ADDRESS_SPACE]},
                               "subnets": [self._subnet_view(s, parse_resource_id(s).get("subnets", ""))
                                           for s in subnets],
                               "virtualNetworkPeerings": [], "enableDdosProtection": False}}

    def subnet(self, sub: str, rg: str, vnet: str, name: str) -> dict:
        sid = resource_id(sub, rg, NS, "virtualNetworks", vnet) + f"/subnets/{name}"
        registered = self._registered_subnets()
        if registered and sid.lower() not in registered:
            raise child_not_found(sid)
        return self._subnet_view(sid, name)

    @staticmethod
    def _subnet_view(sid: str, name: str) -> dict:
        return {"name": name, "id": sid, "type": f"{NS}/virtualNetworks/subnets",
                "etag": f'W/"{stable_guid(sid, "etag")}"',
                "properties": {"provisioningState": "Succeeded", "addressPrefix": SUBNET_PREFIX,
                               "privateEndpointNetworkPolicies": "Disabled",
                               "privateLinkServiceNetworkPolicies": "Enabled"}}

    # ------------------------------------------------------------------ NSGs
    def set_nsgs(self, names: list[str], rg: str | None = None) -> None:
        self.nsg_names[(rg or "*").lower()] = list(names)

    def nsgs(self, sub: str, rg: str) -> list[dict]:
        names = self.nsg_names.get(rg.lower(), self.nsg_names.get("*"))
        if names is None:
            names = [default_nsg_name(rg)]
        out = []
        for name in names:
            nid = resource_id(sub, rg, NS, "networkSecurityGroups", name)
            out.append({"name": name, "id": nid, "type": f"{NS}/networkSecurityGroups", "location": self.location,
                        "etag": f'W/"{stable_guid(nid, "etag")}"',
                        "properties": {"provisioningState": "Succeeded", "resourceGuid": stable_guid(nid),
                                       "securityRules": [], "defaultSecurityRules": []}})
        return out

    # ------------------------------------------------------------------ load balancers
    def add_pool(self, pool_id: str) -> None:
        if pool_id.lower() not in {p.lower() for p in self.pool_ids}:
            self.pool_ids.append(pool_id)

    def load_balancers(self, sub: str, rg: str) -> list[dict]:
        """One load balancer per registered backend pool's parent, in this resource group."""
        lbs: dict[str, dict] = {}
        for pid in self.pool_ids:
            parts = parse_resource_id(pid)
            if parts.get("resourcegroups", "").lower() != rg.lower() or "backendaddresspools" not in parts:
                continue
            lb_name = parts.get("name", "")
            lid = resource_id(sub, rg, NS, "loadBalancers", lb_name)
            lb = lbs.setdefault(lb_name.lower(), {
                "name": lb_name, "id": lid, "type": f"{NS}/loadBalancers", "location": self.location,
                "etag": f'W/"{stable_guid(lid, "etag")}"', "sku": {"name": "Standard", "tier": "Regional"},
                "properties": {"provisioningState": "Succeeded", "resourceGuid": stable_guid(lid),
                               "frontendIPConfigurations": [], "backendAddressPools": [],
                               "loadBalancingRules": [], "probes": [], "inboundNatRules": [],
                               "outboundRules": []}})
            pool = parts["backendaddresspools"]
            lb["properties"]["backendAddressPools"].append(
                {"name": pool, "id": f"{lid}/backendAddressPools/{pool}",
                 "type": f"{NS}/loadBalancers/backendAddressPools",
                 "properties": {"provisioningState": "Succeeded", "loadBalancerBackendAddresses": []}})
        return [lbs[k] for k in sorted(lbs)]
