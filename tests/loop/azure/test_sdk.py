"""harness/loop/azure/sdk.py: custom data, error text, provider IDs, Retry-After."""
from __future__ import annotations

import base64
from types import SimpleNamespace

from azure.core.exceptions import HttpResponseError

from harness.loop.azure.sdk import bootstrap_custom_data, error_code, error_text, lower_rg, parse_bootstrap, retry_after


def test_custom_data_carries_the_node_labels_and_reads_back():
    labels = {"b": "2", "a": "x=y", "kubernetes.azure.com/mode": "user"}
    data = bootstrap_custom_data(labels)
    assert base64.b64decode(data).decode() == "KUBELET_NODE_LABELS=a=x=y,b=2,kubernetes.azure.com/mode=user\n"
    assert parse_bootstrap(data) == labels
    assert parse_bootstrap(base64.b64encode(b"#!/bin/bash\necho hi\n").decode()) == {}
    assert parse_bootstrap(bootstrap_custom_data({})) == {}


def _error(code=None, message="boom", headers=None):
    e = HttpResponseError(message=message)
    e.error = SimpleNamespace(code=code, message=message) if code else None
    if headers is not None:
        e.response = SimpleNamespace(headers=headers)
    return e


def test_error_text_prefixes_the_arm_code_when_there_is_one():
    assert (error_code(_error("OperationNotAllowed", "quota")), error_text(_error("OperationNotAllowed", "quota"))) == (
        "OperationNotAllowed", "OperationNotAllowed: quota")
    assert (error_code(_error()), error_text(_error())) == ("", "boom")


def test_retry_after_is_seconds_or_none():
    assert retry_after(_error(headers={"Retry-After": "7"})) == 7.0
    assert retry_after(_error(headers={"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})) is None
    assert retry_after(_error(headers={})) is None
    assert retry_after(_error()) is None


def test_provider_id_lowercases_only_the_resource_group():
    vm_id = "/subscriptions/S/resourceGroups/MC_RG/providers/Microsoft.Compute/virtualMachines/aks-X"
    assert lower_rg(vm_id) == "/subscriptions/S/resourceGroups/mc_rg/providers/Microsoft.Compute/virtualMachines/aks-X"


def test_a_sku_list_whose_pages_were_all_seen_is_the_same_list_object():
    """_read_pages answers a list read again from the same page bodies with the same list object, so
    the static parts cached by its identity (harness/model/azure/itcache.py) are found by the next run."""
    import fakeazure
    from fakeazure.clients import compute_client
    from harness.loop.azure.sdk import list_vm_skus

    def read(fake):
        with fakeazure.mock_azure(fake):
            return list_vm_skus(compute_client(fake), "eastus")

    first, second, third = (read(fakeazure.FakeAzure(region="eastus")) for _ in range(3))
    assert first == second == third and second is third
    assert [s["name"] for s in third] == [s["name"] for s in fakeazure.FakeAzure(region="eastus").skus()
                                          if s.get("resourceType") == "virtualMachines"]
    one = read(fakeazure.FakeAzure(region="eastus", skus=[third[0]]))
    assert [s["name"] for s in one] == [third[0]["name"]] and one is not third
