"""Network interfaces (https://learn.microsoft.com/rest/api/virtualnetwork/network-interfaces)
through azure-mgmt-network and plain HTTP."""
from __future__ import annotations

import json

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

from fa_helpers import RG, SUB, create_nic, create_vm, nic_body, vm_body


def test_sdk_create_get_delete(fake):
    nic = fake.network.network_interfaces.begin_create_or_update(RG, "aks-n1", nic_body()).result()
    assert nic.provisioning_state == "Succeeded"
    assert nic.ip_configurations[0].private_ip_address == "10.224.0.4"
    assert nic.ip_configurations[0].private_ip_address_version == "IPv4"
    assert nic.enable_accelerated_networking is True and nic.etag.startswith('W/"')
    nic2 = fake.network.network_interfaces.begin_create_or_update(RG, "aks-n2", nic_body()).result()
    assert nic2.ip_configurations[0].private_ip_address == "10.224.0.5"
    got = fake.network.network_interfaces.get(RG, "AKS-N1")
    assert got.id == nic.id and got.virtual_machine is None
    fake.network.network_interfaces.begin_delete(RG, "aks-n1").result()
    with pytest.raises(ResourceNotFoundError):
        fake.network.network_interfaces.get(RG, "aks-n1")
    fake.network.network_interfaces.begin_delete(RG, "aks-n1").result()  # missing: 204, no error
    assert [n["name"] for n in fake.state.nics()] == ["aks-n2"]


def test_update_keeps_ip_and_guid(fake):
    a = fake.network.network_interfaces.begin_create_or_update(RG, "n1", nic_body()).result()
    body = nic_body()
    body["tags"] = {"x": "y"}
    b = fake.network.network_interfaces.begin_create_or_update(RG, "n1", body).result()
    assert b.ip_configurations[0].private_ip_address == a.ip_configurations[0].private_ip_address
    assert b.resource_guid == a.resource_guid and b.tags == {"x": "y"}
    assert len(fake.state.nics()) == 1


def test_wire_shape_and_lro(fake):
    url = fake.url(fake.nic_path("n1"), **{"api-version": "2026-03-01"})
    r = fake.http.put(url, json=nic_body())
    assert r.status_code == 201
    body = r.json()
    assert body["type"] == "Microsoft.Network/networkInterfaces"
    assert body["properties"]["provisioningState"] == "Succeeded"
    ipc = body["properties"]["ipConfigurations"][0]
    assert ipc["id"].endswith("/ipConfigurations/ipconfig0") and ipc["properties"]["privateIPAddress"]
    assert body["properties"]["dnsSettings"] == {"dnsServers": [], "appliedDnsServers": []}
    aao = r.headers["Azure-AsyncOperation"]
    assert "/providers/Microsoft.Network/locations/southcentralus/operations/" in aao
    assert fake.http.get(aao).json() == {"status": "Succeeded"}
    assert fake.http.put(url, json=nic_body()).status_code == 200  # update
    d = fake.http.delete(url)
    assert d.status_code == 202 and "Location" in d.headers
    assert fake.http.get(d.headers["Azure-AsyncOperation"]).json()["status"] == "Succeeded"
    assert fake.http.get(url).status_code == 404
    assert fake.http.delete(url).status_code == 204


def test_attached_nic_cannot_be_deleted_and_detached_nic_survives(fake):
    nic_id = create_nic(fake, "n1")
    body = vm_body(nic_id=nic_id)
    body["properties"]["networkProfile"]["networkInterfaces"][0]["properties"]["deleteOption"] = "Detach"
    fake.compute.virtual_machines.begin_create_or_update(RG, "vm1", body).result()
    with pytest.raises(HttpResponseError) as ei:
        fake.network.network_interfaces.begin_delete(RG, "n1")
    assert ei.value.status_code == 400 and ei.value.error.code == "NicInUse"
    assert "/virtualMachines/vm1" in ei.value.error.message
    nic = fake.network.network_interfaces.get(RG, "n1")
    assert nic.virtual_machine.id.endswith("/virtualMachines/vm1") and nic.primary
    fake.compute.virtual_machines.begin_delete(RG, "vm1").result()
    nic = fake.network.network_interfaces.get(RG, "n1")  # deleteOption Detach: the NIC stays
    assert nic.virtual_machine is None
    fake.network.network_interfaces.begin_delete(RG, "n1").result()
    assert fake.state.nics() == []


def test_reference_checks_are_opt_in(make_env, mode):
    env = make_env(mode)
    good = f"/subscriptions/{env.sub}/resourceGroups/{RG}/providers/Microsoft.Network/virtualNetworks/v/subnets/s"
    env.state.add_subnet(good)
    env.network.network_interfaces.begin_create_or_update(RG, "ok", nic_body(subnet=good)).result()
    bad = good.replace("/subnets/s", "/subnets/missing")
    with pytest.raises(HttpResponseError) as ei:
        env.network.network_interfaces.begin_create_or_update(RG, "bad", nic_body(subnet=bad))
    assert ei.value.status_code == 400 and ei.value.error.code == "InvalidResourceReference"
    assert bad in ei.value.error.message  # Karpenter's lberrors.go looks for the submitted ID
    assert [n["name"] for n in env.state.nics()] == ["ok"]


def test_list_and_tags(fake):
    create_vm(fake, "vm1")
    create_nic(fake, "loose")
    names = sorted(n.name for n in fake.network.network_interfaces.list(RG))
    assert names == ["loose", "vm1"]
    assert sorted(n.name for n in fake.network.network_interfaces.list_all()) == names
    upd = fake.network.network_interfaces.update_tags(RG, "loose", {"tags": {"k": "v"}})
    assert upd.tags == {"k": "v"}


@pytest.mark.parametrize("body", [
    {"location": "southcentralus", "Properties": {"IpConfigurations": [{"name": "c", "Properties": {}}]}},
    {"location": "southcentralus", "ip_configurations": [{"name": "c", "subnet": "s"}]},
    {"location": "southcentralus", "properties": {}},
    {"location": "southcentralus", "properties": {"ipConfigurations": []}},
])
def test_a_nic_without_ip_configurations_is_refused(fake, body):
    """Wrong casing or shape leaves no properties.ipConfigurations: 400 InvalidResource, nothing created."""
    r = fake.http.put(fake.url(fake.nic_path("n1"), **{"api-version": "2022-01-01"}), json=body)
    assert r.status_code == 400, r.text
    assert r.json()["error"] == {"code": "InvalidResource", "message": "The resource definition is invalid."}
    assert fake.state.nics() == []


def test_an_ip_configuration_needs_a_subnet(fake):
    body = {"location": "southcentralus", "properties": {"ipConfigurations": [{"name": "ipc", "properties": {}}]}}
    with pytest.raises(HttpResponseError) as e:
        fake.network.network_interfaces.begin_create_or_update(RG, "n1", body).result()
    assert e.value.status_code == 400 and e.value.error.code == "SubnetIsRequired"
    assert e.value.error.message == (f"Subnet reference is required for ipconfiguration {fake.nic_id('n1')}"
                                     f"/ipConfigurations/ipc.")
    assert fake.state.nics() == []


def test_a_put_while_the_nic_is_being_deleted_is_refused():
    """Found by the ARM invariants machine: a re-created NIC must not be removed by the delete
    that was still running (a VM attaching it would then point at nothing)."""
    from fakeazure import FakeAzure
    state = FakeAzure(seed=1)
    url = (f"https://management.azure.com/subscriptions/{SUB}/resourceGroups/{RG}/providers/"
           f"Microsoft.Network/networkInterfaces/n1?api-version=x")
    assert state.handle("PUT", url, body=json.dumps(nic_body()))[0] == 201
    assert state.handle("DELETE", url)[0] == 202
    status, _, body = state.handle("PUT", url, body=json.dumps(nic_body()))
    assert status == 409 and json.loads(body)["error"]["code"] == "AnotherOperationInProgress"
    state.settle()
    assert state.network.get(RG, "n1") is None
    assert state.handle("PUT", url, body=json.dumps(nic_body()))[0] == 201


def test_a_vm_cannot_attach_a_nic_being_deleted(fake):
    """A VM PUT naming a NIC whose DELETE is in flight is refused until the delete finishes (then
    the NIC is gone: 400 InvalidResourceReference) or fails (then it attaches); otherwise the VM
    would list a NIC that no longer exists once the delete finished."""
    nic_id = create_nic(fake, "n1")
    vm_url = fake.url(fake.vm_path("vm1"), **{"api-version": "2026-04-01"})
    fake.state.add_fault({"code": "InternalServerError", "delivery": "async", "match": {"operation": "nic.delete"},
                          "times": 1})
    d = fake.http.delete(fake.url(fake.nic_path("n1"), **{"api-version": "2024-05-01"}))
    assert d.status_code == 202
    r = fake.http.put(vm_url, json=vm_body(nic_id=nic_id))
    assert r.status_code == 400 and r.json()["error"]["code"] == "ReferencedResourceNotProvisioned"
    assert r.json()["error"]["message"] == (
        f"Cannot proceed with operation because resource {nic_id} used by resource "
        f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Compute/virtualMachines/vm1 is not in "
        f"Succeeded state. Resource is in Deleting state and the last operation that updated/is updating the "
        f"resource is DeleteNicOperation.")
    assert fake.state.vms() == []
    assert fake.http.get(d.headers["Azure-AsyncOperation"]).json()["status"] == "Failed"   # the delete failed
    assert fake.http.put(vm_url, json=vm_body(nic_id=nic_id)).status_code == 201           # the NIC is there


def test_a_vm_naming_a_nic_whose_delete_finished_gets_the_reference_error(fake):
    nic_id = create_nic(fake, "n1")
    d = fake.http.delete(fake.url(fake.nic_path("n1"), **{"api-version": "2024-05-01"}))
    assert d.status_code == 202
    fake.state.settle()
    r = fake.http.put(fake.url(fake.vm_path("vm1"), **{"api-version": "2026-04-01"}), json=vm_body(nic_id=nic_id))
    assert r.status_code == 400 and r.json()["error"]["code"] == "InvalidResourceReference"
    assert fake.state.vms() == [] and fake.state.nics() == []
