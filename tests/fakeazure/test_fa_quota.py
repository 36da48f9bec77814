"""Real quota from usages (no fault rules): family, regional and low-priority limits."""
from __future__ import annotations

import re

import pytest
from azure.core.exceptions import ResourceExistsError

from fa_helpers import RG, SUB, create_vm, usages, vm_body


def test_family_quota_enforced_with_real_numbers(fake):
    fake.state.set_usage("standardDSv3Family", limit=6, current=2)
    create_vm(fake, "a")  # 2 + 2
    with pytest.raises(ResourceExistsError) as ei:
        create_vm(fake, "b", size="Standard_D4s_v3")  # 4 + 4 > 6
    e = ei.value
    assert e.status_code == 409 and e.error.code == "OperationNotAllowed"
    assert e.error.message.startswith(
        "Operation could not be completed as it results in exceeding approved standardDSv3Family Cores quota. "
        "Additional details - Deployment Model: Resource Manager, Location: southcentralus, Current Limit: 6, "
        "Current Usage: 4, Additional Required: 4, (Minimum) New Limit Required: 8. Submit a request for Quota "
        "increase at https://aka.ms/ProdportalCRP/")
    assert f"%22subscriptionId%22:%22{SUB}%22" in e.error.message
    assert "Family Cores quota" in e.error.message
    assert usages(fake.state)["standardDSv3Family"]["currentValue"] == 4
    # Another family is unaffected; deleting frees the family's cores.
    create_vm(fake, "c", size="Standard_D2_v5")
    fake.compute.virtual_machines.begin_delete(RG, "a").result()
    assert usages(fake.state)["standardDSv3Family"]["currentValue"] == 2
    create_vm(fake, "b", size="Standard_D4s_v3")
    assert usages(fake.state)["standardDSv3Family"]["currentValue"] == 6


def test_zero_limit_message(fake):
    fake.state.set_usage("StandardNCADSA100v4Family", 0)
    with pytest.raises(ResourceExistsError) as ei:
        create_vm(fake, "gpu", size="Standard_NC24ads_A100_v4", zones=("1",))
    assert "Current Limit: 0" in ei.value.error.message  # Karpenter: 1h TTL
    # (SubscriptionQuotaReachedTTL, karpenter-provider-azure v1.14.0
    # pkg/providers/instance/offerings/commonerrorhandlers.go; github.com/Azure/karpenter-provider-azure v1.14.0
    # pkg/providers/instance/offerings/resperrorhandlers.go)


def test_regional_quota(fake):
    fake.state.set_regional_quota(5)
    create_vm(fake, "a")
    create_vm(fake, "b", size="Standard_D2_v5")
    with pytest.raises(ResourceExistsError) as ei:
        create_vm(fake, "c")
    msg = ei.value.error.message
    assert "exceeding approved Total Regional Cores quota" in msg
    assert re.search(r"Current Limit: 5, Current Usage: 4, Additional Required: 2", msg)
    assert usages(fake.state)["cores"]["currentValue"] == 4 and usages(fake.state)["cores"]["limit"] == 5


def test_low_priority_quota_is_separate(fake):
    fake.state.set_low_priority_quota(3)
    fake.state.set_regional_quota(2)
    create_vm(fake, "spot1", priority="Spot")  # counts against lowPriorityCores, not cores
    assert usages(fake.state)["lowPriorityCores"]["currentValue"] == 2
    assert usages(fake.state)["cores"]["currentValue"] == 0
    with pytest.raises(ResourceExistsError) as ei:
        create_vm(fake, "spot2", priority="Spot")
    assert "LowPriorityCores" in ei.value.error.message
    create_vm(fake, "regular", priority="Regular")  # on-demand still has its 2 cores
    fake.state.evict(RG, "spot1")
    create_vm(fake, "spot2", priority="Spot")


def test_failed_creation_frees_quota(fake):
    fake.state.set_usage("standardDSv3Family", limit=2)
    fake.state.add_fault({"code": "ZonalAllocationFailed", "times": 1})
    with pytest.raises(Exception):
        create_vm(fake, "a")
    assert usages(fake.state)["standardDSv3Family"]["currentValue"] == 0
    # Retrying the same (Failed) VM re-takes its cores.
    fake.compute.virtual_machines.begin_create_or_update(RG, "a", vm_body(nic_id=fake.nic_id("a"))).result()
    assert usages(fake.state)["standardDSv3Family"]["currentValue"] == 2
    assert fake.state.get_vm(RG, "a")["properties"]["provisioningState"] == "Succeeded"


def test_quota_counts_hardware_vcpus_of_constrained_sizes(fake):
    create_vm(fake, "m", size="Standard_M8-2ms", zones=("2",))
    assert usages(fake.state)["standardMSFamily"]["currentValue"] == 8


def test_usages_via_http(fake):
    fake.state.set_usage("standardDSv3Family", 10, current=3)
    r = fake.http.get(fake.url(f"/subscriptions/{fake.sub}/providers/Microsoft.Compute/locations/southcentralus/usages",
                               **{"api-version": "2026-04-01"}))
    rows = r.json()["value"]
    assert rows[0] == {"unit": "Count", "currentValue": 3, "limit": 100000,
                       "name": {"value": "cores", "localizedValue": "Total Regional vCPUs"}}
    assert {"unit": "Count", "currentValue": 3, "limit": 10,
            "name": {"value": "standardDSv3Family", "localizedValue": "Standard DSv3 Family vCPUs"}} in rows
