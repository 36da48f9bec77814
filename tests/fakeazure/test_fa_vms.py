"""Virtual machines: PUT/GET/DELETE/list, the LRO protocol, ARM invariants."""
from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError

from fakeazure import FakeAzure

from fa_helpers import RG, create_nic, create_vm, nic_body, usages, vm_body


def cores(state: FakeAzure, family: str | None = None) -> int:
    return usages(state)[family or "cores"]["currentValue"]


def test_sdk_create_get_list_delete(fake):
    vm = create_vm(fake, "aks-default-a1")
    assert vm.provisioning_state == "Succeeded"
    assert vm.zones == ["1"] and vm.hardware_profile.vm_size == "Standard_D2s_v3"
    assert vm.os_profile.custom_data is None  # never returned (https://github.com/Azure/azure-cli/issues/20870; https://learn.microsoft.com/rest/api/compute/virtual-machines/create-or-update)
    assert vm.vm_id and vm.time_created
    assert vm.storage_profile.os_disk.os_type == "Linux"
    assert vm.tags == {"karpenter.sh_nodepool": "default"}
    got = fake.compute.virtual_machines.get(RG, "aks-default-a1")
    assert got.id == vm.id and got.provisioning_state == "Succeeded"
    assert [v.name for v in fake.compute.virtual_machines.list(RG)] == ["aks-default-a1"]
    assert [v.name for v in fake.compute.virtual_machines.list_all()] == ["aks-default-a1"]
    assert cores(fake.state) == 2 and cores(fake.state, "standardDSv3Family") == 2
    # the names of a resource group's VMs in one look (the real engine's stand-in kubelets, at size)
    assert fake.state.vm_names(RG.upper()) == {"aks-default-a1"} and fake.state.vm_names("other") == set()
    nic = fake.network.network_interfaces.get(RG, "aks-default-a1")
    assert nic.virtual_machine.id.lower() == vm.id.lower() and nic.mac_address
    fake.compute.virtual_machines.begin_delete(RG, "aks-default-a1", force_deletion=True).result()
    with pytest.raises(ResourceNotFoundError):
        fake.compute.virtual_machines.get(RG, "aks-default-a1")
    assert fake.state.vms() == [] and fake.state.nics() == []  # NIC cascade (deleteOption Delete)
    assert cores(fake.state) == 0


def test_lro_protocol_on_the_wire(fake):
    """201 + Azure-AsyncOperation, InProgress then Succeeded, final GET
    (https://learn.microsoft.com/azure/azure-resource-manager/management/async-operations)."""
    nic_id = create_nic(fake, "n1")
    url = fake.url(fake.vm_path("vm1"), **{"api-version": "2026-04-01"})
    r = fake.http.put(url, json=vm_body(nic_id=nic_id))
    assert r.status_code == 201
    assert r.json()["properties"]["provisioningState"] == "Creating"
    assert "customData" not in r.json()["properties"]["osProfile"]
    aao = r.headers["Azure-AsyncOperation"]
    assert aao.startswith(fake.base + f"/subscriptions/{fake.sub}/providers/Microsoft.Compute/locations/"
                                      "southcentralus/operations/")
    assert parse_qs(urlsplit(aao).query)["api-version"] == ["2026-04-01"]
    assert r.headers["Retry-After"] == "1"  # as ARM: SDK clients poll every second, not every 30 s
    first = fake.http.get(aao)
    assert first.status_code == 200 and first.json()["status"] == "InProgress"
    assert first.headers["Retry-After"] == "1"
    assert set(first.json()) == {"startTime", "status", "name"}
    assert fake.http.get(url).json()["properties"]["provisioningState"] == "Creating"
    done = fake.http.get(aao)
    second = done.json()
    assert second["status"] == "Succeeded" and "endTime" in second and "Retry-After" not in done.headers
    assert fake.http.get(url).json()["properties"]["provisioningState"] == "Succeeded"
    # DELETE: 202 with both headers, Deleting, then gone; Location (monitor) polling semantics.
    d = fake.http.delete(url + "&forceDeletion=true")
    assert d.status_code == 202 and "Azure-AsyncOperation" in d.headers and "monitor=true" in d.headers["Location"]
    assert fake.http.get(url).json()["properties"]["provisioningState"] == "Deleting"
    assert fake.http.get(d.headers["Location"]).status_code == 202
    assert fake.http.get(d.headers["Location"]).status_code == 200
    assert fake.http.get(url).status_code == 404
    assert fake.http.delete(url).status_code == 204  # missing -> 204
    # (https://learn.microsoft.com/rest/api/compute/virtual-machines/delete)


def test_an_accepted_delete_finishes_on_the_clock_unpolled(fake):
    """Azure finishes an accepted operation whether or not its client polls: a delete whose polls
    were all throttled still removes the VM once its time (two polls at Retry-After 1 s) has passed."""
    nic_id = create_nic(fake, "n1")
    fake.compute.virtual_machines.begin_create_or_update(RG, "vm1", vm_body(nic_id=nic_id)).result()
    fake.state.add_fault({"code": "TooManyRequests", "match": {"operation": "operation.get"}})
    url = fake.url(fake.vm_path("vm1"), **{"api-version": "2026-04-01"})
    d = fake.http.delete(url)
    assert d.status_code == 202 and fake.http.get(d.headers["Azure-AsyncOperation"]).status_code == 429
    fake.state.advance(1)
    assert fake.http.get(url).json()["properties"]["provisioningState"] == "Deleting"
    fake.state.advance(1)
    assert fake.http.get(url).status_code == 404
    assert fake.state.vms() == [] and fake.state.snapshot()["pending_operations"] == 0


def test_an_operation_without_retry_after_takes_the_sdk_interval(make_env, mode):
    env = make_env(mode, lro_retry_after=None)
    nic_id = create_nic(env, "n1")
    r = env.http.put(env.url(env.vm_path("vm1"), **{"api-version": "2026-04-01"}), json=vm_body(nic_id=nic_id))
    assert r.status_code == 201
    env.state.advance(59)
    assert env.state.get_vm(RG, "vm1")["properties"]["provisioningState"] == "Creating"
    env.state.advance(1)           # two polls 30 s apart (azure-core's polling_interval without Retry-After)
    assert env.state.get_vm(RG, "vm1")["properties"]["provisioningState"] == "Succeeded"


def test_a_timed_operation_kind_runs_its_seconds_however_often_it_is_polled(make_env, mode):
    """set_operation_seconds("vm.delete", 30): Azure deleting a VM for 30 s (given.loop.vmDelete on the real
    engine); the delete's polls answer InProgress until the state clock reaches it, and a create is untouched."""
    env = make_env(mode, lro="immediate")
    env.state.set_operation_seconds("vm.delete", 30)
    nic_id = create_nic(env, "n1")
    env.compute.virtual_machines.begin_create_or_update(RG, "vm1", vm_body(nic_id=nic_id)).result()
    url = env.url(env.vm_path("vm1"), **{"api-version": "2026-04-01"})
    d = env.http.delete(url)
    for _ in range(5):
        assert env.http.get(d.headers["Azure-AsyncOperation"]).json()["status"] == "InProgress"
    env.state.advance(29)
    assert env.http.get(url).json()["properties"]["provisioningState"] == "Deleting"
    (op,) = env.state.running_operations("vm.delete")
    assert op["kind"] == "vm.delete" and op["due"] - env.state.clock.time() == 1
    assert env.state.running_operations("vm.create") == []
    env.state.advance(1)
    assert env.http.get(d.headers["Azure-AsyncOperation"]).json()["status"] == "Succeeded"
    assert env.http.get(url).status_code == 404
    env.state.set_operation_seconds("vm.delete", None)
    assert env.state.lro.seconds == {}


def test_retry_after_can_be_turned_off(make_env, mode):
    env = make_env(mode, lro_retry_after=None)
    nic_id = create_nic(env, "n1")
    r = env.http.put(env.url(env.vm_path("vm1"), **{"api-version": "2026-04-01"}), json=vm_body(nic_id=nic_id))
    assert r.status_code == 201 and "Retry-After" not in r.headers


def test_sdk_request_sequence(fake):
    nic_id = create_nic(fake, "n1")
    fake.state.requests.clear()
    fake.compute.virtual_machines.begin_create_or_update(RG, "vm1", vm_body(nic_id=nic_id)).result()
    seq = [(m, p.rsplit("/", 2)[-2], s) for m, p, s in fake.state.requests]
    assert seq == [("PUT", "virtualMachines", 201), ("GET", "operations", 200), ("GET", "operations", 200),
                   ("GET", "virtualMachines", 200)]


@pytest.mark.parametrize("lro,polls", [("immediate", 1), ({"after_polls": 4}, 4)])
def test_lro_progression_setting(make_env, mode, lro, polls):
    env = make_env(mode, lro=lro)
    nic_id = create_nic(env, "n1")
    env.state.requests.clear()
    env.compute.virtual_machines.begin_create_or_update(RG, "vm1", vm_body(nic_id=nic_id)).result()
    assert sum(1 for _, p, _ in env.state.requests if "/operations/" in p) == polls


def test_lro_sync_mode(make_env, mode):
    env = make_env(mode, lro="sync")
    nic_id = create_nic(env, "n1")
    env.state.requests.clear()
    vm = env.compute.virtual_machines.begin_create_or_update(RG, "vm1", vm_body(nic_id=nic_id)).result()
    assert vm.provisioning_state == "Succeeded"
    assert [s for _, _, s in env.state.requests] == [200]
    env.compute.virtual_machines.begin_delete(RG, "vm1").result()
    assert env.state.vms() == []


def test_state_settle_and_python_views():
    state = FakeAzure()
    from fakeazure import mock_azure
    with mock_azure(state) as s:
        import requests
        base = f"https://management.azure.com/subscriptions/{s.subscription_id}/resourceGroups/{RG}/providers"
        requests.put(f"{base}/Microsoft.Network/networkInterfaces/n1?api-version=x", json=nic_body())
        r = requests.put(f"{base}/Microsoft.Compute/virtualMachines/vm1?api-version=x",
                         json=vm_body(nic_id=f"/subscriptions/{s.subscription_id}/resourceGroups/{RG}/providers/"
                                             "Microsoft.Network/networkInterfaces/n1"))
        assert r.status_code == 201
    assert state.get_vm(RG, "vm1")["properties"]["provisioningState"] == "Creating"
    assert state.settle() >= 1
    vm = state.get_vm(RG, "VM1")
    assert vm["properties"]["provisioningState"] == "Succeeded"
    assert [s["code"] for s in vm["properties"]["instanceView"]["statuses"]] == [
        "ProvisioningState/succeeded", "PowerState/running"]
    snap = state.snapshot()
    assert snap["vms"][0]["name"] == "vm1" and snap["vms"][0]["holds_quota"]
    assert snap["nics"][0]["virtual_machine"].endswith("/virtualMachines/vm1")
    assert snap["usages"]["southcentralus"][0] == {"name": "cores", "current": 2, "limit": 100000}
    import json
    json.dumps(snap)


def test_names_are_unique_per_resource_group_case_insensitively(fake):
    create_vm(fake, "aks-node")
    again = fake.compute.virtual_machines.begin_create_or_update(
        RG.upper(), "AKS-NODE", vm_body(nic_id=fake.nic_id("aks-node"))).result()
    assert again.name == "aks-node"  # the same resource, updated (200), not a second VM
    assert len(fake.state.vms()) == 1 and cores(fake.state) == 2
    other = fake.compute.virtual_machines.begin_create_or_update(
        "other-rg", "aks-node", vm_body(nic_id=create_nic(fake, "n2"))).result()
    assert other.name == "aks-node" and len(fake.state.vms()) == 2


def test_changing_zones_is_not_allowed(fake):
    create_vm(fake, "vm1", zones=("1",))
    with pytest.raises(ResourceExistsError) as ei:
        fake.compute.virtual_machines.begin_create_or_update(
            RG, "vm1", vm_body(zones=("2",), nic_id=fake.nic_id("vm1")))
    assert ei.value.status_code == 409
    assert ei.value.error.code == "PropertyChangeNotAllowed"
    assert ei.value.error.message == "Changing property 'zones' is not allowed."
    assert ei.value.error.target == "zones"
    assert fake.state.get_vm(RG, "vm1")["zones"] == ["1"]


def test_changing_custom_data_is_not_allowed(fake):
    create_vm(fake, "vm1", custom_data="Zmlyc3Q=")
    with pytest.raises(ResourceExistsError) as ei:
        fake.compute.virtual_machines.begin_create_or_update(
            RG, "vm1", vm_body(nic_id=fake.nic_id("vm1"), custom_data="c2Vjb25k"))
    assert ei.value.error.code == "PropertyChangeNotAllowed"
    assert "customData" in ei.value.error.message
    # Same customData (or none at all) is fine: an idempotent re-PUT.
    fake.compute.virtual_machines.begin_create_or_update(
        RG, "vm1", vm_body(nic_id=fake.nic_id("vm1"), custom_data="Zmlyc3Q=")).result()
    fake.compute.virtual_machines.begin_create_or_update(
        RG, "vm1", vm_body(nic_id=fake.nic_id("vm1"), custom_data=None)).result()


def test_resize_adjusts_quota(fake):
    create_vm(fake, "vm1", size="Standard_D2s_v3")
    fake.compute.virtual_machines.begin_create_or_update(
        RG, "vm1", vm_body(size="Standard_D4s_v3", nic_id=fake.nic_id("vm1"))).result()
    assert cores(fake.state, "standardDSv3Family") == 4


def test_vm_needs_an_existing_nic(fake):
    missing = fake.nic_id("ghost")
    with pytest.raises(HttpResponseError) as ei:
        fake.compute.virtual_machines.begin_create_or_update(RG, "vm1", vm_body(nic_id=missing))
    assert ei.value.status_code == 400 and ei.value.error.code == "InvalidResourceReference"
    assert missing in ei.value.error.message
    assert fake.state.vms() == [] and cores(fake.state) == 0


def test_nic_cannot_be_shared_by_two_vms(fake):
    create_vm(fake, "vm1")
    with pytest.raises(HttpResponseError) as ei:
        fake.compute.virtual_machines.begin_create_or_update(RG, "vm2", vm_body(nic_id=fake.nic_id("vm1")))
    assert ei.value.status_code == 400 and ei.value.error.code == "NicInUse"
    assert len(fake.state.vms()) == 1


def test_size_zone_and_spot_validation(make_env, mode):
    env = make_env(mode)
    nic_id = create_nic(env, "n1")
    cases = [
        (vm_body(size="Standard_Nope_v9", nic_id=nic_id), "SkuNotAvailable"),
        (vm_body(size="Standard_D2as_v6", zones=("1",), nic_id=nic_id), "SkuNotAvailable"),  # zones 2,3 only
        (vm_body(size="Standard_B1s", priority="Spot", nic_id=nic_id), "SkuNotAvailable"),  # not spot capable
    ]
    for body, code in cases:
        with pytest.raises(ResourceExistsError) as ei:
            env.compute.virtual_machines.begin_create_or_update(RG, "vm1", body)
        assert ei.value.status_code == 409 and ei.value.error.code == code
    msg = None
    try:
        env.compute.virtual_machines.begin_create_or_update(
            RG, "vm1", vm_body(size="Standard_D2as_v6", zones=("1",), nic_id=nic_id))
    except ResourceExistsError as e:
        msg = e.error.message
    assert "is currently not available in location 'southcentralus' zones '1' for subscription" in msg
    # Regional placement of a zonal SKU, and a zone-less SKU regionally, are fine.
    env.compute.virtual_machines.begin_create_or_update(
        RG, "vm1", vm_body(size="Standard_NC6s_v3", zones=(), nic_id=nic_id)).result()
    assert env.state.vms()[0].get("zones") is None


def test_zone_restricted_and_location_restricted_skus(make_env, mode):
    env = make_env(mode, region="eastus")
    nic_id = create_nic(env, "n1", location="eastus")
    with pytest.raises(ResourceExistsError):  # every zone restricted for the subscription
        env.compute.virtual_machines.begin_create_or_update(
            RG, "vm1", vm_body(size="Standard_D8s_v3", zones=("2",), nic_id=nic_id, location="eastus"))
    with pytest.raises(ResourceExistsError):  # Location restriction
        env.compute.virtual_machines.begin_create_or_update(
            RG, "vm1", vm_body(size="Standard_D13_v2_Promo", zones=(), nic_id=nic_id, location="eastus"))
    vm = env.compute.virtual_machines.begin_create_or_update(
        RG, "vm1", vm_body(size="Standard_D8s_v3", zones=(), nic_id=nic_id, location="eastus")).result()
    assert vm.provisioning_state == "Succeeded"


def test_non_zonal_region_rejects_zones(make_env, mode):
    env = make_env(mode, region="westcentralus")
    nic_id = create_nic(env, "n1", location="westcentralus")
    with pytest.raises(HttpResponseError) as ei:
        env.compute.virtual_machines.begin_create_or_update(
            RG, "vm1", vm_body(zones=("1",), nic_id=nic_id, location="westcentralus"))
    assert ei.value.status_code == 400 and ei.value.error.code == "InvalidParameter"
    with pytest.raises(ResourceExistsError):
        env.compute.virtual_machines.begin_create_or_update(
            RG, "vm1", vm_body(size="Standard_A0", zones=(), nic_id=nic_id, location="westcentralus"))


def test_bad_bodies(fake):
    url = fake.url(fake.vm_path("vm1"), **{"api-version": "2026-04-01"})
    r = fake.http.put(url, data="{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "InvalidRequestContent"
    r = fake.http.put(url, json={"location": "southcentralus", "properties": {}})
    assert r.status_code == 400 and r.json()["error"]["target"] == "hardwareProfile.vmSize"
    r = fake.http.put(url, json={"properties": {"hardwareProfile": {"vmSize": "Standard_D2s_v3"}}})
    assert r.status_code == 400 and r.json()["error"]["code"] == "LocationRequired"
    assert fake.state.vms() == []


def test_get_missing_vm_and_unknown_route(fake):
    with pytest.raises(ResourceNotFoundError) as ei:
        fake.compute.virtual_machines.get(RG, "nope")
    assert ei.value.error.code == "ResourceNotFound"
    assert ei.value.error.message.startswith(
        "The Resource 'Microsoft.Compute/virtualMachines/nope' under resource group 'rg-test' was not found.")
    r = fake.http.get(fake.url(f"/subscriptions/{fake.sub}/providers/Microsoft.Compute/galleries",
                               **{"api-version": "x"}))
    assert r.status_code == 404 and r.json()["error"]["code"] == "NotImplementedInFakeAzure"


def test_resource_groups_can_be_strict(make_env, mode):
    env = make_env(mode, resource_groups=["rg-known"])
    with pytest.raises(ResourceNotFoundError) as ei:
        env.compute.virtual_machines.begin_create_or_update(RG, "vm1", vm_body())
    assert ei.value.error.code == "ResourceGroupNotFound"
    with pytest.raises(ResourceNotFoundError):
        list(env.compute.virtual_machines.list(RG))
    assert list(env.compute.virtual_machines.list("rg-known")) == []


def test_list_paging(make_env, mode):
    env = make_env(mode, page_size=2)
    for i in range(5):
        create_vm(env, f"vm{i}")
    assert [v.name for v in env.compute.virtual_machines.list(RG)] == [f"vm{i}" for i in range(5)]
    assert len(list(env.network.network_interfaces.list(RG))) == 5


def test_instance_view_and_patch_tags(fake):
    create_vm(fake, "vm1")
    vm = fake.compute.virtual_machines.get(RG, "vm1", expand="instanceView")
    assert [s.code for s in vm.instance_view.statuses] == ["ProvisioningState/succeeded", "PowerState/running"]
    listed = {v.name: v for v in fake.compute.virtual_machines.list(RG)}     # the list's JSON, kept per VM
    upd = fake.compute.virtual_machines.begin_update(RG, "vm1", {"tags": {"a": "b"}}).result()
    assert upd.tags == {"a": "b"}
    assert listed["vm1"].tags != {"a": "b"}
    assert [v.tags for v in fake.compute.virtual_machines.list(RG)] == [{"a": "b"}]     # a list after the change sees it


def test_vm_extensions(fake):
    create_vm(fake, "vm1")
    ext = fake.compute.virtual_machine_extensions.begin_create_or_update(
        RG, "vm1", "cse", {"location": "southcentralus", "properties": {
            "publisher": "Microsoft.Azure.Extensions", "type": "CustomScript", "typeHandlerVersion": "2.0",
            "protectedSettings": {"commandToExecute": "secret"}}}).result()
    assert ext.provisioning_state == "Succeeded" and ext.protected_settings is None
    assert fake.compute.virtual_machine_extensions.get(RG, "vm1", "cse").properties.type == "CustomScript"
    fake.compute.virtual_machine_extensions.begin_delete(RG, "vm1", "cse").result()
    with pytest.raises(ResourceNotFoundError):
        fake.compute.virtual_machine_extensions.get(RG, "vm1", "cse")


def test_delete_while_creating_shows_deleting(fake):
    nic_id = create_nic(fake, "n1")
    url = fake.url(fake.vm_path("vm1"), **{"api-version": "2026-04-01"})
    put = fake.http.put(url, json=vm_body(nic_id=nic_id))
    d = fake.http.delete(url)
    assert d.status_code == 202
    fake.http.get(put.headers["Azure-AsyncOperation"])
    fake.http.get(put.headers["Azure-AsyncOperation"])  # the create finishes meanwhile
    assert fake.http.get(url).json()["properties"]["provisioningState"] == "Deleting"
    fake.state.settle()
    assert fake.http.get(url).status_code == 404 and fake.state.nics() == []
