"""Fault rules: every code arrives with the status, code and wording upstream matches
on (matchers: github.com/Azure/azure-sdk-for-go-extensions@v0.6.0 pkg/errors/armerrors.go;
handlers: karpenter-provider-azure v1.14.0 pkg/providers/instance/offerings/resperrorhandlers.go;
https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors), synchronously or
through the LRO, and
the state stays consistent afterwards."""
from __future__ import annotations

import time

import pytest
from azure.core.exceptions import HttpResponseError, ResourceExistsError

from fakeazure import FakeAzure, Fault, make_fault
from fakeazure.clients import compute_client

from fa_helpers import RG, SUB, create_nic, nic_body, usages, vm_body


def cores(state) -> dict:
    return {name: u["currentValue"] for name, u in usages(state).items()}


def attempt(env, name="vm1", **kw):
    """Create NIC + VM; return the SDK exception (or None)."""
    nic_id = env.state.get_nic(RG, name) and env.nic_id(name) or create_nic(env, name)
    try:
        env.compute.virtual_machines.begin_create_or_update(RG, name, vm_body(nic_id=nic_id, **kw)).result()
    except HttpResponseError as e:
        return e
    return None


def cleanup(env, name="vm1"):
    env.compute.virtual_machines.begin_delete(RG, name).result()
    env.network.network_interfaces.begin_delete(RG, name).result()
    assert env.state.vms() == [] and env.state.nics() == []
    assert cores(env.state)["cores"] == 0 and cores(env.state)["lowPriorityCores"] == 0


# ------------------------------------------------------------------------- synchronous (409)


def test_sku_not_available_is_sync_409(fake):
    fake.state.add_fault({"code": "SkuNotAvailable", "match": {"size": "Standard_D2s_v3", "zone": "1"}})
    e = attempt(fake)
    assert isinstance(e, ResourceExistsError) and e.status_code == 409
    assert e.error.code == "SkuNotAvailable"
    assert e.error.message == (
        f"The requested size for resource '/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Compute/"
        f"virtualMachines/vm1' is currently not available in location 'southcentralus' zones '1' for subscription "
        f"'{SUB}'. Please try another size or deploy to a different location or zones. "
        f"See https://aka.ms/azureskunotavailable for details.")
    assert fake.state.vms() == [] and cores(fake.state)["cores"] == 0
    assert attempt(fake, zones=("2",)) is None  # other zones still work
    cleanup(fake)


@pytest.mark.parametrize("code,phrase", [
    ("FamilyQuota", "standardDSv3Family Cores quota"),
    ("RegionalQuota", "exceeding approved Total Regional Cores quota"),
])
def test_quota_faults(fake, code, phrase):
    fake.state.add_fault({"code": code, "limit": 0, "times": 1})
    e = attempt(fake)
    assert isinstance(e, ResourceExistsError) and e.status_code == 409
    assert e.error.code == "OperationNotAllowed"
    assert phrase in e.error.message and "Current Limit: 0" in e.error.message
    assert "Family Cores quota" in e.error.message or code != "FamilyQuota"
    assert "Submit a request for Quota increase" in e.error.message
    assert fake.state.vms() == []
    assert attempt(fake) is None  # times: 1
    cleanup(fake)


def test_low_priority_quota_fault_carries_literal(fake):
    fake.state.add_fault({"code": "OperationNotAllowed", "quota": "lowpriority",
                          "match": {"priority": "Spot"}})
    assert attempt(fake, priority="Regular") is None
    cleanup(fake)
    e = attempt(fake, priority="Spot")
    assert e.status_code == 409 and e.error.code == "OperationNotAllowed"
    assert "LowPriorityCores" in e.error.message  # the literal Karpenter matches
    # (github.com/Azure/azure-sdk-for-go-extensions@v0.6.0 pkg/errors/consts.go;
    # https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors)
    assert "Low Priority Cores quota" in e.error.message
    assert fake.state.vms() == []


# ------------------------------------------------------------------------- asynchronous (LRO Failed)


@pytest.mark.parametrize("code,expect", [
    ("ZonalAllocationFailed", "Allocation failed. We do not have sufficient capacity for the requested VM size "
                              "Standard_D2s_v3 in zone 1. Read more about improving likelihood of allocation "
                              "success at http://aka.ms/allocation-guidance"),
    ("AllocationFailed", "Allocation failed. We do not have sufficient capacity for the requested VM size in this "
                         "region. Read more about improving likelihood of allocation success at "
                         "http://aka.ms/allocation-guidance"),
    ("OverconstrainedZonalAllocationRequest", "Constraints applied are:\n  - Availability Zone\n"),
    ("OverconstrainedAllocationRequest", "  - Networking Constraints (such as Accelerated Networking or IPv6)\n"
                                         "  - VM Size\n"),
])
def test_allocation_faults_arrive_through_the_operation(fake, code, expect):
    fake.state.add_fault({"code": code, "match": {"size": "Standard_D2s_v3"}, "times": 1})
    fake.state.requests.clear()
    e = attempt(fake)
    assert type(e) is HttpResponseError and e.status_code == 200  # the status poll's code
    # (azure-core 1.41.0 azure/core/polling/base_polling.py LROBasePolling.run;
    # https://learn.microsoft.com/azure/azure-resource-manager/management/async-operations)
    assert e.error.code == code and expect in e.error.message
    statuses = [(m, p.rsplit("/", 2)[-2], s) for m, p, s in fake.state.requests if "virtualMachines" in p
                or "/operations/" in p and "Compute" in p]
    assert statuses[0] == ("PUT", "virtualMachines", 201)
    vm = fake.state.get_vm(RG, "vm1")
    assert vm["properties"]["provisioningState"] == "Failed"  # kept, as ARM does, holding no cores
    assert cores(fake.state)["cores"] == 0
    cleanup(fake)
    assert attempt(fake) is None
    cleanup(fake)


def test_failed_operation_status_body(fake):
    fake.state.add_fault({"code": "ZonalAllocationFailed"})
    nic_id = create_nic(fake, "vm1")
    r = fake.http.put(fake.url(fake.vm_path("vm1"), **{"api-version": "2026-04-01"}), json=vm_body(nic_id=nic_id))
    assert r.status_code == 201
    aao = r.headers["Azure-AsyncOperation"]
    assert fake.http.get(aao).json()["status"] == "InProgress"
    body = fake.http.get(aao).json()
    assert body["status"] == "Failed" and body["error"]["code"] == "ZonalAllocationFailed"
    assert set(body) == {"startTime", "endTime", "status", "error", "name"}


def test_spot_overconstrained_lists_low_priority(fake):
    fake.state.add_fault({"code": "OverconstrainedZonalAllocationRequest", "match": {"priority": "spot"}})
    e = attempt(fake, priority="Spot")
    assert "  - Low Priority VMs\n" in e.error.message and "  - Availability Zone\n" in e.error.message


def test_delivery_override(fake):
    fake.state.add_fault({"code": "ZonalAllocationFailed", "delivery": "sync", "times": 1})
    e = attempt(fake)
    assert isinstance(e, ResourceExistsError) and e.status_code == 409 and e.error.code == "ZonalAllocationFailed"
    assert fake.state.vms() == []
    fake.state.add_fault({"code": "SkuNotAvailable", "delivery": "async", "times": 1})
    e = attempt(fake)
    assert e.status_code == 200 and e.error.code == "SkuNotAvailable"
    cleanup(fake)


def test_async_fault_in_sync_lro_mode(make_env, mode):
    env = make_env(mode, lro="sync")
    env.state.add_fault({"code": "AllocationFailed"})
    e = attempt(env)
    assert e.status_code == 409 and e.error.code == "AllocationFailed"
    assert env.state.vms() == []


def test_async_fault_on_delete_in_sync_lro_mode(make_env, mode):
    """lro="sync": a would-be-async fault on a delete is a 409 like on a create (it used to come
    back as HTTP 200 with an error envelope), and the resources stay as they were."""
    env = make_env(mode, lro="sync")
    assert attempt(env) is None
    env.state.add_fault({"code": "AllocationFailed", "match": {"operation": "vm.delete"}, "times": 1})
    with pytest.raises(ResourceExistsError) as ei:
        env.compute.virtual_machines.begin_delete(RG, "vm1").result()
    assert ei.value.status_code == 409 and ei.value.error.code == "AllocationFailed"
    assert env.state.get_vm(RG, "vm1")["properties"]["provisioningState"] == "Succeeded"
    assert env.state.requests[-1] == ("DELETE", env.vm_path("vm1"), 409)
    env.state.add_fault({"code": "AllocationFailed", "match": {"operation": "nic.delete"}, "times": 1})
    env.compute.virtual_machines.begin_delete(RG, "vm1").result()
    assert env.state.get_nic(RG, "vm1") is None  # cascaded (deleteOption Delete): make a detached one
    create_nic(env, "n2")
    r = env.http.delete(env.url(env.nic_path("n2"), **{"api-version": "2026-03-01"}))
    assert r.status_code == 409 and r.json()["error"]["code"] == "AllocationFailed"
    assert env.state.get_nic(RG, "n2")["properties"]["provisioningState"] == "Succeeded"
    env.network.network_interfaces.begin_delete(RG, "n2").result()
    assert env.state.nics() == [] and cores(env.state)["cores"] == 0


def test_async_fault_on_nic_put_in_sync_lro_mode_leaves_nothing(make_env, mode):
    env = make_env(mode, lro="sync")
    env.state.add_fault({"code": "AllocationFailed", "match": {"operation": "nic.create"}, "times": 1})
    with pytest.raises(ResourceExistsError) as ei:
        create_nic(env, "n1")
    assert ei.value.status_code == 409 and ei.value.error.code == "AllocationFailed"
    assert env.state.nics() == []  # like a VM create: nothing stored (it used to keep a Failed NIC)


def test_failed_operation_on_the_location_monitor_url(fake):
    """Location (monitor) polling of a failed operation answers 409 with the error body."""
    assert attempt(fake) is None
    fake.state.add_fault({"code": "AllocationFailed", "match": {"operation": "vm.delete"}, "times": 1})
    d = fake.http.delete(fake.url(fake.vm_path("vm1"), **{"api-version": "2026-04-01"}))
    assert d.status_code == 202
    assert fake.http.get(d.headers["Location"]).status_code == 202
    r = fake.http.get(d.headers["Location"])
    assert r.status_code == 409 and r.json()["error"]["code"] == "AllocationFailed"
    assert fake.state.get_vm(RG, "vm1")["properties"]["provisioningState"] == "Succeeded"
    assert fake.state.internal_errors == []
    cleanup(fake)


def test_sync_fault_on_extension_update_keeps_the_extension(fake):
    assert attempt(fake) is None
    exts = fake.compute.virtual_machine_extensions
    body = {"location": "southcentralus", "properties": {"publisher": "p", "type": "t", "typeHandlerVersion": "1"}}
    exts.begin_create_or_update(RG, "vm1", "cse", body).result()
    fake.state.add_fault({"code": "AllocationFailed", "delivery": "sync", "match": {"operation": "vmext.create"},
                          "times": 1})
    with pytest.raises(ResourceExistsError):
        exts.begin_create_or_update(RG, "vm1", "cse", body).result()
    assert exts.get(RG, "vm1", "cse").provisioning_state == "Succeeded"


def test_async_server_error_in_operation(fake):
    fake.state.add_fault({"code": "InternalServerError", "delivery": "async", "match": {"operation": "vm.create"}})
    e = attempt(fake)
    assert e.status_code == 200 and e.error.code == "InternalExecutionError"


# ------------------------------------------------------------------------- request-level faults


def test_throttling_429_with_retry_after(fake):
    fake.state.add_fault({"code": "TooManyRequests", "retry_after": 7, "match": {"operation": "skus.list"}})
    r = fake.http.get(fake.url(f"/subscriptions/{fake.sub}/providers/Microsoft.Compute/skus",
                               **{"api-version": "2021-07-01"}))
    assert r.status_code == 429 and r.headers["Retry-After"] == "7"
    assert r.json()["error"]["code"] == "TooManyRequests"
    with pytest.raises(HttpResponseError) as ei:
        list(fake.compute.resource_skus.list())
    assert ei.value.status_code == 429
    # Other operations are not throttled.
    assert list(fake.compute.usage.list("southcentralus"))


def test_throttled_then_retried_transparently(fake):
    fake.state.add_fault({"code": "TooManyRequests", "retry_after": 0, "times": 1})
    client = compute_client(fake.server or fake.state, retry_total=2)
    try:
        assert len(list(client.resource_skus.list())) == 20
    finally:
        client.close()
    assert [s for _, _, s in fake.state.requests] == [429, 200]


@pytest.mark.parametrize("code,status", [("InternalServerError", 500), ("ServiceUnavailable", 503),
                                         ("BadGateway", 502)])
def test_server_errors(fake, code, status):
    assert attempt(fake) is None
    fake.state.add_fault({"code": code, "match": {"operation": "vm.get"}, "times": 1})
    with pytest.raises(HttpResponseError) as ei:
        fake.compute.virtual_machines.get(RG, "vm1")
    assert ei.value.status_code == status and ei.value.error.code == code
    assert fake.compute.virtual_machines.get(RG, "vm1").name == "vm1"
    cleanup(fake)


def test_5xx_on_put_leaves_nothing(fake):
    fake.state.add_fault({"code": "ServerError", "status": 500, "match": {"operation": "vm.create"}, "times": 1})
    e = attempt(fake)
    assert e.status_code == 500 and fake.state.vms() == []
    assert attempt(fake) is None
    cleanup(fake)


def test_latency_is_simulated_without_sleeping(fake, monkeypatch):
    fake.state.add_fault({"code": "Latency", "latency": 120.0, "match": {"operation": "vm.create"}})
    t0_fake = fake.state.clock.time()
    long_sleeps = []
    real_sleep = time.sleep
    monkeypatch.setattr(time, "sleep", lambda s: long_sleeps.append(s) if s >= 1 else real_sleep(s))
    assert attempt(fake) is None
    assert long_sleeps == []  # the FakeClock advanced instead
    assert fake.state.clock.time() - t0_fake == pytest.approx(120.0) == fake.state.clock.slept
    put = [d for d in fake.state.request_details if d["method"] == "PUT" and "virtualMachines" in d["path"]]
    assert put[0]["simulated_latency"] == 120.0
    cleanup(fake)


def test_latency_hook_uses_the_clock():
    class RecordingClock:
        def __init__(self):
            self.t, self.slept = 0.0, []

        def time(self):
            return self.t

        def advance(self, s):
            self.t += s
            return self.t

        def sleep(self, s):
            self.slept.append(s)
            self.t += s
    clock = RecordingClock()
    state = FakeAzure(clock=clock, faults=[{"code": "Latency", "latency": 2.5}])
    state.handle("GET", f"https://management.azure.com/subscriptions/{SUB}/providers/Microsoft.Compute/skus"
                        "?api-version=2021-07-01")
    assert clock.slept == [2.5]


# ------------------------------------------------------------------------- matching and firing


def test_zone_size_priority_and_group_matching(fake):
    fake.state.add_fault({"code": "ZonalAllocationFailed", "match": {
        "size": "standard_d2s_*", "zone": ["1", "southcentralus-2"], "priority": "on-demand",
        "resource_group": "RG-TEST", "name": "aks-*"}})
    assert attempt(fake, "aks-a", zones=("1",)).error.code == "ZonalAllocationFailed"
    assert attempt(fake, "aks-b", zones=("2",)).error.code == "ZonalAllocationFailed"
    assert attempt(fake, "aks-c", zones=("3",)) is None
    assert attempt(fake, "aks-d", zones=("1",), size="Standard_D4s_v3") is None
    assert attempt(fake, "aks-e", zones=("1",), priority="Spot") is None
    assert attempt(fake, "other", zones=("1",)) is None
    assert attempt(fake, "aks-f", zones=()) is None  # regional: zone "" does not match "1"
    fake.state.add_fault({"code": "AllocationFailed", "match": {"zone": "0"}})
    assert attempt(fake, "aks-g", zones=()).error.code == "AllocationFailed"


def test_times_and_skip(fake):
    fake.state.add_fault({"code": "AllocationFailed", "skip": 1, "times": 2})
    results = []
    for i in range(5):
        e = attempt(fake, f"vm{i}")
        results.append(e.error.code if e else None)
    assert results == [None, "AllocationFailed", "AllocationFailed", None, None]
    rule = fake.state.faults.rules[0]
    assert rule.seen == 3 and rule.fired == 2 and rule.exhausted


def _probability_run(seed: int) -> list[bool]:
    state = FakeAzure(seed=seed, lro="sync", faults=[{"code": "SkuNotAvailable", "probability": 0.5}])
    out = []
    for i in range(20):
        state.handle("PUT", f"https://management.azure.com/subscriptions/{SUB}/resourceGroups/{RG}/providers/"
                            f"Microsoft.Network/networkInterfaces/n{i}?api-version=x",
                     body=__import__("json").dumps(nic_body()))
        status, _, _ = state.handle(
            "PUT", f"https://management.azure.com/subscriptions/{SUB}/resourceGroups/{RG}/providers/"
                   f"Microsoft.Compute/virtualMachines/vm{i}?api-version=x",
            body=__import__("json").dumps(vm_body(nic_id=f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/"
                                                          f"Microsoft.Network/networkInterfaces/n{i}")))
        out.append(status == 409)
    return out


def test_probability_is_seeded():
    a, b, c = _probability_run(1), _probability_run(1), _probability_run(2)
    assert a == b and a != c
    assert 3 <= sum(a) <= 17


def test_fault_rules_are_plain_data():
    f = make_fault({"code": "zonal_allocation_failed", "match": {"sku": "Standard_D2s_v3", "rg": "x"}, "times": 1})
    assert f.code == "ZonalAllocationFailed" and f.match == {"size": "Standard_D2s_v3", "resource_group": "x"}
    assert f.effective_delivery() == "async" and f.kind == "provision"
    assert make_fault({"code": "OperationNotAllowed", "quota": "family"}).code == "FamilyQuota"
    assert make_fault({"code": "429"}).kind == "request"
    assert make_fault(Fault("Latency", latency=1)).kind == "request"
    d = f.to_dict()
    assert d["code"] == "ZonalAllocationFailed" and d["times"] == 1
    for bad in ({"match": {}}, {"code": "X", "bogus": 1}, {"code": "X", "match": {"colour": "red"}},
                {"code": "X", "delivery": "later"}, {"code": "X", "probability": 2}):
        with pytest.raises((ValueError, TypeError)):
            make_fault(bad)


def test_custom_code_and_nic_faults(fake):
    fake.state.add_fault({"code": "NicReservedForAnotherVm", "status": 400, "message": "reserved",
                          "match": {"operation": "vm.create"}, "times": 1})
    e = attempt(fake)
    assert e.status_code == 400 and e.error.code == "NicReservedForAnotherVm" and e.error.message == "reserved"
    fake.state.add_fault({"code": "InsufficientSubnetSize", "status": 400, "match": {"operation": "nic.create"}})
    with pytest.raises(HttpResponseError) as ei:
        create_nic(fake, "n2")
    assert ei.value.error.code == "InsufficientSubnetSize"
    assert [n["name"] for n in fake.state.nics()] == ["vm1"]


# ------------------------------------------------------------------------- R09 and Spot eviction


def test_v6_disk_controller_fault(fake):
    fake.state.add_fault({"code": "DiskControllerTypeMismatch"})
    e = attempt(fake, size="Standard_D2as_v6", zones=("2",))
    assert e.status_code == 400
    assert e.error.message.startswith("The VM size 'Standard_D2as_v6' cannot boot with OS image or disk.")
    assert "Please query sku api at https://aka.ms/azure-compute-skus" in e.error.message
    # An NVMe-capable image (diskControllerType NVMe) boots; SCSI sizes are unaffected.
    body_ok = attempt(fake, "vm2", size="Standard_D2as_v6", zones=("2",))
    assert body_ok is not None  # still failing without the NVMe controller
    nic = create_nic(fake, "vm3")
    b = vm_body(size="Standard_D2as_v6", zones=("2",), nic_id=nic)
    b["properties"]["storageProfile"]["diskControllerType"] = "NVMe"
    fake.compute.virtual_machines.begin_create_or_update(RG, "vm3", b).result()
    assert attempt(fake, "vm4", size="Standard_D2s_v3") is None
    assert fake.state.faults.rules[0].fired == 2


def test_manual_spot_eviction(fake):
    assert attempt(fake, priority="Spot") is None
    assert cores(fake.state)["lowPriorityCores"] == 2 and cores(fake.state)["cores"] == 0
    rec = fake.state.evict(RG, "vm1")
    assert rec["eviction_policy"] == "Delete" and rec["name"] == "vm1"
    assert fake.state.get_vm(RG, "vm1") is None and fake.state.nics() == []  # NIC deleteOption Delete
    assert cores(fake.state)["lowPriorityCores"] == 0
    assert fake.state.evictions[0]["name"] == "vm1"
    with pytest.raises(Exception):
        fake.compute.virtual_machines.get(RG, "vm1")


def test_simulated_eviction_refuses_a_regular_vm_and_a_missing_one(fake):
    from fakeazure.arm import ARMError
    assert attempt(fake) is None                      # priority Regular
    with pytest.raises(ARMError) as e:
        fake.state.evict(RG, "vm1")
    assert (e.value.code, e.value.status) == ("OperationNotAllowed", 409)
    assert "only supported for Spot virtual machines" in e.value.message
    assert fake.state.get_vm(RG, "vm1") is not None   # nothing happened to it
    with pytest.raises(ARMError) as e:
        fake.state.evict(RG, "nope")
    assert (e.value.code, e.value.status) == ("ResourceNotFound", 404)


def test_eviction_rule_and_deallocate_policy(fake):
    fake.state.add_fault({"code": "SpotEviction", "match": {"size": "Standard_D2s_v3"}, "after_seconds": 60})
    nic = create_nic(fake, "keep")
    body = vm_body(nic_id=nic, priority="Spot")
    body["properties"]["evictionPolicy"] = "Deallocate"
    fake.compute.virtual_machines.begin_create_or_update(RG, "keep", body).result()
    regular = create_nic(fake, "reg")
    fake.compute.virtual_machines.begin_create_or_update(RG, "reg", vm_body(nic_id=regular)).result()
    fake.state.advance(30)
    assert fake.state.evictions == []
    fake.state.advance(31)
    ev = fake.state.evictions
    assert [e["name"] for e in ev] == ["keep"] and ev[0]["eviction_policy"] == "Deallocate"
    vm = fake.compute.virtual_machines.get(RG, "keep", expand="instanceView")
    assert vm.instance_view.statuses[1].code == "PowerState/deallocated"
    assert cores(fake.state)["lowPriorityCores"] == 0 and cores(fake.state)["cores"] == 2


def test_next_eviction_is_when_a_rule_comes_due_and_only_looks(fake):
    """What a simulation moving the shared clock stops at (Simulation._timer_before): the first running Spot
    VM a rule matches, its `after_seconds` past success; asking stamps and evicts nothing."""
    assert fake.state.next_eviction() is None
    fake.state.add_fault({"code": "SpotEviction", "match": {"size": "Standard_D2s_v3"}, "after_seconds": 60})
    assert fake.state.next_eviction() is None                      # no Spot VM yet
    assert attempt(fake, priority="Spot") is None
    start = fake.state.clock.time()
    assert fake.state.next_eviction() == start + 60
    fake.state.clock.advance(30)
    assert fake.state.next_eviction() == start + 60 and fake.state.get_vm(RG, "vm1") is not None
    fake.state.advance(31)
    assert fake.state.get_vm(RG, "vm1") is None and fake.state.next_eviction() is None


def test_eviction_rule_needs_time_to_pass(make_env, mode):
    env = make_env(mode)
    env.state.add_fault({"code": "SpotEviction", "times": 1})
    assert attempt(env, priority="Spot") is None  # the create's final GET still sees the VM
    assert env.state.get_vm(RG, "vm1") is not None
    env.state.advance(1)
    assert env.state.get_vm(RG, "vm1") is None
    assert env.state.evictions[0]["reason"].startswith("fault")


def test_faults_held_neither_fire_nor_count(fake):
    """What exists before a scenario (its existing nodes) is created with the faults held: a bounded
    rule is left whole for the requests after."""
    fake.state.add_fault({"code": "ZonalAllocationFailed", "match": {"size": "Standard_D2s_v3"}, "times": 1})
    with fake.state.faults_held():
        assert attempt(fake, "seeded") is None
    assert fake.state.snapshot()["fault_log"] == []
    e = attempt(fake, "later")
    assert isinstance(e, HttpResponseError) and e.error.code == "ZonalAllocationFailed"
    assert attempt(fake, "later") is None


def test_faults_held_for_names_hold_only_their_requests(fake):
    """Held for named resources (an existing node a live controller launches): a request on any
    other resource meets the faults meanwhile - the controller's own launches and lists go on."""
    fake.state.add_fault({"code": "ZonalAllocationFailed", "match": {"size": "Standard_D2s_v3"}, "times": 1})
    with fake.state.faults_held(names=["SEEDED"]):
        assert attempt(fake, "seeded") is None
        e = attempt(fake, "other")
        assert isinstance(e, HttpResponseError) and e.error.code == "ZonalAllocationFailed"
    assert [f["name"] for f in fake.state.snapshot()["fault_log"]] == ["other"]
