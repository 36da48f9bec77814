"""VM extensions through azure-mgmt-compute, in both serving modes: the billing extension
Karpenter-on-Azure v1.14.0 installs when the cloud is AzurePublicCloud
(pkg/providers/instance/vminstance.go, ``computeAksLinuxBilling``)."""
from __future__ import annotations

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.mgmt.compute.models import VirtualMachineExtension, VirtualMachineExtensionProperties

from fa_helpers import RG, create_vm

BILLING = "computeAksLinuxBilling"


def billing_extension() -> VirtualMachineExtension:
    return VirtualMachineExtension(location="southcentralus", properties=VirtualMachineExtensionProperties(
        publisher="Microsoft.AKS", type="Compute.AKS.Linux.Billing", type_handler_version="1.0",
        auto_upgrade_minor_version=True, settings={}))


def test_billing_extension_put_poll_get(fake):
    create_vm(fake, "aks-a")
    ext = fake.compute.virtual_machine_extensions.begin_create_or_update(RG, "aks-a", BILLING,
                                                                         billing_extension()).result()
    assert (ext.name, ext.properties.provisioning_state, ext.properties.publisher) == (
        BILLING, "Succeeded", "Microsoft.AKS")
    assert ext.id.endswith(f"/virtualMachines/aks-a/extensions/{BILLING}")
    assert fake.compute.virtual_machine_extensions.get(RG, "aks-a", BILLING).properties.provisioning_state == \
        "Succeeded"
    assert [e.name for e in fake.compute.virtual_machine_extensions.list(RG, "aks-a").value] == [BILLING]
    ops = [d["operation"] for d in fake.state.request_details if "/extensions/" in d["path"]]
    assert ops[0] == "vmext.create" and ops[-1] == "vmext.get"


def test_extension_on_a_missing_vm_is_404(fake):
    with pytest.raises(ResourceNotFoundError):
        fake.compute.virtual_machine_extensions.begin_create_or_update(RG, "nope", BILLING,
                                                                       billing_extension()).result()


def test_extension_put_takes_fault_rules(fake):
    create_vm(fake, "aks-a")
    fake.state.add_fault({"code": "InternalServerError", "match": {"operation": "vmext.create"}, "times": 1})
    with pytest.raises(HttpResponseError) as e:
        fake.compute.virtual_machine_extensions.begin_create_or_update(RG, "aks-a", BILLING,
                                                                       billing_extension()).result()
    assert e.value.status_code == 500
