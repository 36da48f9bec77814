"""Property tests: random operation sequences keep ARM's invariants; synthetic SKUs
round-trip through the real SDK."""
from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from fakeazure import FakeAzure, mock_azure, synthetic_skus
from fakeazure import catalog as cat
from fakeazure.clients import compute_client

from fa_helpers import RG, SUB, usages

SIZES = ["Standard_D2s_v3", "Standard_D4s_v3", "Standard_F16s_v2", "Standard_D2_v5", "Standard_E4d_v5"]
BASE = f"https://management.azure.com/subscriptions/{SUB}/resourceGroups/{RG}/providers"


class ARMInvariants(RuleBasedStateMachine):
    """Drives FakeAzure.handle directly (fast) with creates, deletes, faults, polls, evictions."""

    def __init__(self):
        super().__init__()
        self.state = FakeAzure(seed=3)
        self.state.set_usage("standardDSv3Family", limit=12)
        self.state.set_low_priority_quota(8)

    def _put(self, kind: str, name: str, body: dict) -> int:
        path = "Microsoft.Compute/virtualMachines" if kind == "vm" else "Microsoft.Network/networkInterfaces"
        status, _, _ = self.state.handle("PUT", f"{BASE}/{path}/{name}?api-version=x", body=json.dumps(body))
        return status

    @rule(i=st.integers(0, 5), size=st.sampled_from(SIZES), zone=st.sampled_from(["1", "2", "3", ""]),
          spot=st.booleans(), cascade=st.booleans())
    def create(self, i, size, zone, spot, cascade):
        name = f"vm{i}"
        self._put("nic", name, {"location": "southcentralus", "properties": {"ipConfigurations": [{"name": "c"}]}})
        props = {"hardwareProfile": {"vmSize": size}, "networkProfile": {"networkInterfaces": [
            {"id": f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Network/networkInterfaces/{name}",
             "properties": {"deleteOption": "Delete" if cascade else "Detach"}}]}}
        if spot:
            props.update(priority="Spot", evictionPolicy="Delete")
        self._put("vm", name, {"location": "southcentralus", "zones": [zone] if zone else [], "properties": props})

    @rule(i=st.integers(0, 5))
    def delete(self, i):
        self.state.handle("DELETE", f"{BASE}/Microsoft.Compute/virtualMachines/vm{i}?api-version=x")

    @rule(i=st.integers(0, 5))
    def delete_nic(self, i):
        self.state.handle("DELETE", f"{BASE}/Microsoft.Network/networkInterfaces/vm{i}?api-version=x")

    @rule()
    def settle(self):
        self.state.settle()

    @rule(code=st.sampled_from(["ZonalAllocationFailed", "SkuNotAvailable", "AllocationFailed", "FamilyQuota"]))
    def fault(self, code):
        self.state.add_fault({"code": code, "times": 1})

    @rule(i=st.integers(0, 5))
    def evict(self, i):
        vm = self.state.compute.get(RG, f"vm{i}")
        if vm is not None and vm.spot and vm.provisioning_state == "Succeeded" and not vm.evicted:
            self.state.evict(RG, f"vm{i}")

    @invariant()
    def quota_matches_resources(self):
        c = self.state.compute
        held = [vm for vm in c.vms.values() if vm.holds_quota]
        rows = usages(self.state)
        assert rows["cores"]["currentValue"] == sum(vm.vcpus for vm in held if not vm.spot)
        assert rows["lowPriorityCores"]["currentValue"] == sum(vm.vcpus for vm in held if vm.spot)
        assert rows["standardDSv3Family"]["currentValue"] <= 12
        assert rows["lowPriorityCores"]["currentValue"] <= 8
        for vm in c.vms.values():
            assert not (vm.provisioning_state == "Failed" and vm.holds_quota)
            assert vm.zones == [] or vm.zones[0] in cat.available_zones(c.find_sku("southcentralus", vm.size),
                                                                         "southcentralus")

    @invariant()
    def nics_and_vms_agree(self):
        net = self.state.network
        for vm in self.state.compute.vms.values():
            for nid in vm.nic_ids:
                nic = net.by_id(nid)
                assert nic is not None and nic.vm_id.lower() == vm.id(SUB).lower()
        owners = [n.vm_id for n in net.nics.values() if n.vm_id]
        assert len(owners) == len(set(owners))
        for n in net.nics.values():
            if n.vm_id:
                assert self.state.compute.by_id(n.vm_id) is not None


TestARMInvariants = ARMInvariants.TestCase
TestARMInvariants.settings = settings(max_examples=40, stateful_step_count=25, deadline=None,
                                      suppress_health_check=[HealthCheck.too_slow])


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10 ** 6))
def test_synthetic_skus_round_trip_through_the_sdk(seed):
    skus = synthetic_skus(15, seed=seed, region="eastus")
    state = FakeAzure(region="eastus", skus=skus)
    with mock_azure(state):
        client = compute_client(state)
        got = list(client.resource_skus.list(filter="location eq 'eastus'"))
        client.close()
    assert [s.name for s in got] == [s["name"] for s in skus]
    for model, raw in zip(got, skus):
        assert {c.name: c.value for c in model.capabilities} == cat.capabilities(raw)
        assert model.location_info[0].zones == raw["locationInfo"][0]["zones"]
