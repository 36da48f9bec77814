"""VNet, subnet, NSG and load-balancer reads through azure-mgmt-network, in both serving modes
(what Karpenter-on-Azure v1.14.0 reads: fakeazure/network/topology.py)."""
from __future__ import annotations

import re

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

from fa_helpers import SUB

NODE_RG = "MC_rg-karp_karp_southcentralus"
VNET = "aks-vnet-12345678"
SUBNET_ID = (f"/subscriptions/{SUB}/resourceGroups/{NODE_RG}/providers/Microsoft.Network/virtualNetworks/{VNET}"
             f"/subnets/aks-subnet")
# networksecuritygroup managedNSGRegex (karpenter-provider-azure v1.14.0 pkg/providers/networksecuritygroup)
MANAGED_NSG = re.compile(r"(?i)^aks-agentpool-(\d{8})-nsg$")


def test_vnet_get_has_a_stable_resource_guid(fake, make_env):
    v = fake.network.virtual_networks.get(NODE_RG, VNET)
    assert v.name == VNET and v.provisioning_state == "Succeeded"
    assert v.address_space.address_prefixes == ["10.224.0.0/12"]
    again = fake.network.virtual_networks.get(NODE_RG, VNET).resource_guid
    other_state = make_env(fake.mode).network.virtual_networks.get(NODE_RG, VNET).resource_guid
    assert v.resource_guid == again == other_state  # same ID, same GUID, in any fake
    assert fake.network.virtual_networks.get(NODE_RG, "other-vnet").resource_guid != v.resource_guid


def test_subnet_get_answers_implicitly_then_only_registered_ones(fake):
    s = fake.network.subnets.get(NODE_RG, VNET, "aks-subnet")
    assert (s.name, s.address_prefix, s.provisioning_state) == ("aks-subnet", "10.224.0.0/16", "Succeeded")
    assert s.type == "Microsoft.Network/virtualNetworks/subnets"
    fake.state.add_subnet(SUBNET_ID)
    assert fake.network.subnets.get(NODE_RG, VNET, "aks-subnet").id.lower() == SUBNET_ID.lower()
    with pytest.raises(ResourceNotFoundError) as e:
        fake.network.subnets.get(NODE_RG, VNET, "missing")
    assert e.value.status_code == 404 and e.value.error.code == "NotFound"
    with pytest.raises(ResourceNotFoundError):
        fake.network.virtual_networks.get(NODE_RG, "no-such-vnet")


def test_exactly_one_managed_nsg_by_default(fake):
    nsgs = list(fake.network.network_security_groups.list(NODE_RG))
    assert len(nsgs) == 1 and MANAGED_NSG.match(nsgs[0].name)
    assert fake.network.network_security_groups.get(NODE_RG, nsgs[0].name).id == nsgs[0].id
    assert [n.name for n in fake.network.network_security_groups.list(NODE_RG)] == [nsgs[0].name]  # stable


@pytest.mark.parametrize("names", [[], ["aks-agentpool-11111111-nsg", "aks-agentpool-22222222-nsg"]])
def test_zero_or_two_nsgs_can_be_injected(fake, names):
    fake.state.set_network_security_groups(names)
    assert [n.name for n in fake.network.network_security_groups.list(NODE_RG)] == names


def test_nsgs_through_the_control_api(make_env):
    from fakeazure import RemoteFakeAzure
    env = make_env("server")
    remote = RemoteFakeAzure(env.base)
    remote.set_network_security_groups([], resource_group=NODE_RG)
    assert list(env.network.network_security_groups.list(NODE_RG)) == []
    assert len(list(env.network.network_security_groups.list("other-rg"))) == 1
    remote.close()


def test_load_balancers_empty_by_default_then_from_registered_pools(fake):
    assert list(fake.network.load_balancers.list(NODE_RG)) == []
    lb_id = f"/subscriptions/{SUB}/resourceGroups/{NODE_RG}/providers/Microsoft.Network/loadBalancers/kubernetes"
    for pool in ("aksOutboundBackendPool", "kubernetes"):
        fake.state.add_backend_pool(f"{lb_id}/backendAddressPools/{pool}")
    lbs = list(fake.network.load_balancers.list(NODE_RG))
    assert [lb.name for lb in lbs] == ["kubernetes"]
    assert [p.name for p in lbs[0].backend_address_pools] == ["aksOutboundBackendPool", "kubernetes"]
    assert fake.network.load_balancers.get(NODE_RG, "kubernetes").id == lb_id


@pytest.mark.parametrize("call, op", [
    (lambda n: n.virtual_networks.get(NODE_RG, VNET), "vnet.get"),
    (lambda n: n.subnets.get(NODE_RG, VNET, "aks-subnet"), "subnet.get"),
    (lambda n: list(n.network_security_groups.list(NODE_RG)), "nsg.list"),
    (lambda n: list(n.load_balancers.list(NODE_RG)), "lb.list"),
])
def test_each_route_takes_fault_rules_and_is_logged(fake, call, op):
    fake.state.add_fault({"code": "TooManyRequests", "match": {"operation": op}, "times": 1})
    with pytest.raises(HttpResponseError) as e:
        call(fake.network)
    assert e.value.status_code == 429
    call(fake.network)  # the rule fired once
    ops = [d["operation"] for d in fake.state.request_details]
    assert ops[-2:] == [op, op] and [r.status for r in fake.state.requests[-2:]] == [429, 200]
