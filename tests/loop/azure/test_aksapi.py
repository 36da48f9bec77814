"""harness/loop/azure/aksapi.py: the machines API as the provider calls it, against fakeazure through the harness's
ARM pipeline (fakeazure/clients.py ContainerServicePipeline) in-process."""
from __future__ import annotations

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

import fakeazure
from fakeazure.clients import containerservice_client
from fakeazure.transport import InProcessTransport
from harness.loop.azure.aksapi import AKSMachines, MachinesPool, provisioning_error, vm_name_of


@pytest.fixture
def machines():
    fake = fakeazure.FakeAzure()
    fake.add_agent_pool("harness-rg", "harness-cluster", "testmpool", "MC_rg")
    transport = InProcessTransport()
    client = containerservice_client(None, fake.subscription_id, transport=transport, in_process=True)
    with transport.serving(fake, guard=True):
        yield fake, AKSMachines(client, MachinesPool("harness-rg", "harness-cluster", "testmpool"))


def body(size="Standard_D2s_v3"):
    return {"zones": ["1"], "properties": {"hardware": {"vmSize": size}, "priority": "Regular",
                                           "kubernetes": {"nodeLabels": {"example.com/team": "blue"}}}}


def test_a_machine_is_created_read_and_deleted(machines):
    fake, aks = machines
    made = aks.begin_create_or_update("default-a1b2c", body()).result()
    assert made["name"] == "default-a1b2c"
    got = aks.get("default-a1b2c")
    assert got["properties"]["provisioningState"] == "Succeeded"
    assert vm_name_of(got).startswith("aks-testmpool-default-a1b2c-") and vm_name_of(got).endswith("-vm")
    assert provisioning_error(got) is None
    assert len(fake.vms()) == 1 and len(fake.nics()) == 1
    aks.begin_delete(["default-a1b2c"]).result()
    with pytest.raises(ResourceNotFoundError):
        aks.get("default-a1b2c")
    assert fake.vms() == [] and fake.nics() == []


def test_a_size_the_region_lacks_is_refused_on_the_put(machines):
    _, aks = machines
    with pytest.raises(HttpResponseError) as e:
        aks.begin_create_or_update("default-a1b2c", body("Standard_Nope"))
    assert e.value.status_code == 400 and e.value.error.code == "VMSizeNotSupported"
