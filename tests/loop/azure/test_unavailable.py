"""The unavailable-offerings cache and the create-error handler table (karpenter-provider-azure v1.14.0
pkg/cache/unavailableofferings.go, pkg/providers/instance/offerings/resperrorhandlers.go;
github.com/Azure/karpenter-provider-azure v1.14.0 pkg/cache/unavailableofferings.go,
pkg/providers/instance/offerings/resperrorhandlers.go)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from harness.loop.clock import SimClock
from harness.loop.azure.unavailable import UnavailableOfferings, classify_and_mark
from harness.model.values.durations import scenario_duration

IT = SimpleNamespace(name="Standard_D16s_v3", family="standardDSv3Family", vcpus=16)
ZONES = ["southcentralus-1", "southcentralus-2", "southcentralus-3", "0"]


def cache():
    return UnavailableOfferings(SimClock())


def test_family_block_covers_larger_sizes_and_keeps_the_lower_threshold():
    c = cache()
    c.mark("Standard_D16s_v3", "standardDSv3Family", 16, "southcentralus-1", "on-demand", 3600)
    assert c.is_unavailable("Standard_D32s_v3", "standardDSv3Family", 32, "southcentralus-1", "on-demand")
    assert not c.is_unavailable("Standard_D8s_v3", "standardDSv3Family", 8, "southcentralus-1", "on-demand")
    assert not c.is_unavailable("Standard_D32s_v3", "standardDSv3Family", 32, "southcentralus-2", "on-demand")
    assert not c.is_unavailable("Standard_D32s_v3", "standardDSv3Family", 32, "southcentralus-1", "spot")
    c.mark("Standard_D4s_v3", "standardDSv3Family", 4, "southcentralus-1", "on-demand", 3600)
    assert c.is_unavailable("Standard_D8s_v3", "standardDSv3Family", 8, "southcentralus-1", "on-demand")


def test_concurrent_launches_see_the_cache_as_it_was_when_they_started():
    c = cache()
    with c.concurrent():
        c.mark_spot(3600)
        c.mark("Standard_D16s_v3", "standardDSv3Family", 16, "southcentralus-1", "on-demand", 3600)
        assert not c.is_unavailable("Standard_D16s_v3", "standardDSv3Family", 16, "southcentralus-2", "spot")
        assert not c.is_unavailable("Standard_D16s_v3", "standardDSv3Family", 16, "southcentralus-1", "on-demand")
    assert c.is_unavailable("Standard_D16s_v3", "standardDSv3Family", 16, "southcentralus-2", "spot")
    assert c.is_unavailable("Standard_D32s_v3", "standardDSv3Family", 32, "southcentralus-1", "on-demand")


def test_a_launch_that_starts_after_the_ones_ahead_sees_their_marks():
    """given.loop.launches: staggered (loop/lifecycle/launch.py): a worker that starts once the ones ahead
    of it are done finds what their failures marked; the ones after it too, and its own marks wait as
    concurrent ones do."""
    c = cache()
    with c.concurrent() as batch:
        c.mark_spot(3600)
        assert batch.held() and not c.is_unavailable("Standard_D2s_v3", "standardDSv3Family", 2, "southcentralus-2", "spot")
        batch.release()
        assert not batch.held() and c.is_unavailable("Standard_D2s_v3", "standardDSv3Family", 2, "southcentralus-2", "spot")
        c.mark("Standard_D16s_v3", "standardDSv3Family", 16, "southcentralus-1", "on-demand", 3600)
        assert not c.is_unavailable("Standard_D16s_v3", "standardDSv3Family", 16, "southcentralus-1", "on-demand")
    assert c.is_unavailable("Standard_D16s_v3", "standardDSv3Family", 16, "southcentralus-1", "on-demand")


def test_entries_expire_on_the_simulated_clock():
    c = cache()
    c.mark("Standard_D16s_v3", "standardDSv3Family", 16, "0", "spot", 60)
    assert c.is_unavailable("Standard_D16s_v3", "standardDSv3Family", 16, "0", "spot")
    c.clock.advance(61)
    assert not c.is_unavailable("Standard_D16s_v3", "standardDSv3Family", 16, "0", "spot")
    assert c.snapshot() == []


def test_next_expiry_is_the_first_entry_to_expire():
    c = cache()
    assert c.next_expiry() is None
    t0 = c.clock.now()
    c.mark("Standard_D16s_v3", "standardDSv3Family", 16, "0", "spot", 60)
    c.mark_spot(30)
    assert c.next_expiry() == t0 + 30
    c.clock.advance(30)
    assert c.next_expiry() == t0 + 60
    c.clock.advance(30)
    assert c.next_expiry() is None


@pytest.mark.parametrize("code, text, zone, ct, marked, reason, kind", [
    ("OperationNotAllowed", "... approved Low Priority Cores quota ... %22LowPriorityCores%22 ...", "southcentralus-1",
     "spot", {("spot::", None)}, "SubscriptionQuotaReached", "CreateError"),
    ("ZonalAllocationFailed", "Allocation failed.", "southcentralus-2", "on-demand",
     {("southcentralus-2", "on-demand"), ("southcentralus-2", "spot")}, "ZonalAllocationFailure", "CreateError"),
    ("AllocationFailed", "Allocation failed.", "0", "spot",
     {("0", "on-demand"), ("0", "spot")}, "AllocationFailure", "CreateError"),
    ("SkuNotAvailable", "not available", "southcentralus-1", "on-demand",
     {(z, "on-demand") for z in ZONES[:3]}, "SKUNotAvailable", "CreateError"),
    ("OperationNotAllowed", "exceeding approved standardDSv3Family Cores quota ... Current Limit: 0, ...",
     "southcentralus-1", "on-demand", {(z, "on-demand") for z in ZONES}, "SubscriptionQuotaReached", "CreateError"),
    ("OperationNotAllowed", "exceeding approved Total Regional Cores quota", "southcentralus-1", "on-demand",
     set(), "InsufficientCapacity", "InsufficientCapacity"),
    ("BadRequest", "something else", "southcentralus-1", "on-demand", set(), "CreateInstanceFailed", "Unhandled"),
])
def test_handler_table(code, text, zone, ct, marked, reason, kind):
    c = cache()
    out = classify_and_mark(code, text, cache=c, instance_type=IT, zone=zone, capacity_type=ct, all_zones=ZONES)
    assert (out.reason, out.error_kind) == (reason, kind)
    got = {(e["key"], None) if e["key"] == "spot::" else (e["zone"], e["capacityType"])
           for e in c.snapshot() if "size" in e or e["key"] == "spot::"}
    assert got == marked


def test_ttls_and_messages():
    c = cache()
    out = classify_and_mark("OperationNotAllowed", "Family Cores quota, Current Limit: 8", cache=c, instance_type=IT,
                            zone="southcentralus-1", capacity_type="on-demand", all_zones=ZONES)
    assert {e["ttl"] for e in c.snapshot()} == {600.0}        # 10 min unless the limit is 0
    assert out.message == ("subscription level on-demand vCPU quota for Standard_D16s_v3 has been reached "
                           "(may try provision an alternative instance type)")
    c = cache()
    classify_and_mark("SkuNotAvailable", "", cache=c, instance_type=IT, zone="southcentralus-1",
                      capacity_type="spot", all_zones=ZONES)
    assert {e["ttl"] for e in c.snapshot()} == {3600.0}       # spot 1 h, on-demand 23 h


def test_a_version_without_a_handler_leaves_the_error_unhandled():
    out = classify_and_mark("ZonalAllocationFailed", "x", cache=cache(), instance_type=IT, zone="southcentralus-1",
                            capacity_type="spot", all_zones=ZONES, enabled=["LowPriorityQuota"])
    assert out.error_kind == "Unhandled" and out.reason == "CreateInstanceFailed"


def test_scenario_duration():
    assert [scenario_duration(x) for x in ("90s", "10m", "23h", "250ms", 5)] == [90, 600, 82800, 0.25, 5]
    with pytest.raises(ValueError):
        scenario_duration("soon")


def test_the_machine_api_begin_create_handlers_are_their_own_table():
    # aksmachinebegincreateerrorhandlers.go: every zone, both capacity types, 23 h; never on the VM path
    text = "VMSizeNotSupported: Virtual Machine size: 'Standard_D16s_v3' is not supported for subscription s"
    assert classify_and_mark("VMSizeNotSupported", text, cache=cache(), instance_type=IT, zone="southcentralus-1",
                             capacity_type="on-demand", all_zones=ZONES).handler == ""
    c = cache()
    out = classify_and_mark("BadRequest", text, cache=c, instance_type=IT, zone="southcentralus-1",
                            capacity_type="on-demand", all_zones=ZONES, path="machineBeginCreate")
    assert (out.handler, out.reason, out.ttl) == ("VMSizeNotSupportedBadRequest", "SKUNotAvailable", 23 * 3600)
    assert set(out.marked) == {(z, ct) for z in ZONES for ct in ("on-demand", "spot")}
    assert out.message.startswith("VM size Standard_D16s_v3 is not supported for this subscription")
    assert classify_and_mark("BadRequest", "BadRequest: other", cache=cache(), instance_type=IT, zone="0",
                             capacity_type="spot", all_zones=ZONES, path="machineBeginCreate").handler == ""
