"""harness/loop/azure.py: the Azure SDK retry policy the provider keeps (issue 12), its events, its own
instance-type cache."""
from __future__ import annotations

import random
from types import SimpleNamespace

import pytest
from azure.core.exceptions import HttpResponseError
from azure.core.paging import ItemPaged

from harness.loop.azure import AzureProvider
from harness.loop.azuresdk import MAX_RETRIES, MAX_RETRY_DELAY
from harness.loop.clock import SimClock


def provider():
    clock = SimClock()
    p = AzureProvider(fake=SimpleNamespace(clock=clock), compute=None, network=None, profile=None,
                      cluster=SimpleNamespace(node_resource_group="rg"), unavailable=None,
                      rng=random.Random(1), subscription_id="sub")
    p.events = []
    p.on_event = lambda *ev: p.events.append(ev)
    return p, clock


def failing(statuses, retry_after=None):
    calls = []

    def fn():
        calls.append(1)
        if len(calls) <= len(statuses):
            e = HttpResponseError(message=f"status {statuses[len(calls) - 1]}")
            e.status_code = statuses[len(calls) - 1]
            if retry_after is not None:
                e.response = SimpleNamespace(headers={"Retry-After": str(retry_after)})
            raise e
        return "ok"
    return fn, calls


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504])
def test_transient_statuses_are_retried_with_backoff_on_the_clock(status):
    p, clock = provider()
    fn, calls = failing([status] * MAX_RETRIES)
    t0 = clock.now()
    assert p.call("vm.get", fn) == "ok"
    assert len(calls) == MAX_RETRIES + 1
    assert clock.now() > t0                       # backoff is simulated time, not a sleep
    assert sum(1 for kind, _, reason, _ in p.events if (kind, reason) == ("Log", "Retry")) == MAX_RETRIES


def test_gives_up_after_max_retries():
    p, _ = provider()
    fn, calls = failing([429] * (MAX_RETRIES + 1))
    with pytest.raises(HttpResponseError):
        p.call("skus.list", fn)
    assert len(calls) == MAX_RETRIES + 1


def test_other_statuses_are_not_retried():
    p, _ = provider()
    fn, calls = failing([409])
    with pytest.raises(HttpResponseError):
        p.call("vm.create", fn)
    assert len(calls) == 1


def test_retry_after_is_honoured_and_one_beyond_the_cap_ends_retries():
    p, clock = provider()
    fn, _ = failing([429], retry_after=7)
    t0 = clock.now()
    p.call("vm.get", fn)
    assert clock.now() - t0 == 7
    fn, calls = failing([429], retry_after=MAX_RETRY_DELAY + 1)
    with pytest.raises(HttpResponseError):
        p.call("vm.get", fn)
    assert len(calls) == 1


def test_events_go_to_the_recorder_only():
    """The provider keeps no log of its own: an event goes to `on_event` (the run's recorder), or
    nowhere when none is set."""
    p, _ = provider()
    p.event("quota", "updating quota usages", "boom")
    assert p.events == [("Log", "quota", "updating quota usages", "boom")]
    assert not hasattr(p, "log")
    p.on_event = None
    p.event("quota", "updating quota usages", "boom")          # no recorder: dropped, no error


def test_the_provider_owns_its_instance_type_cache():
    """Instance types are built with the provider's own InstanceTypeCache, not the module default:
    two providers never share built static parts, and the default stays untouched."""
    from harness.model import itcache
    from harness.model.instancetypes import ClusterParams, NodeClassParams
    from harness.model.profile import load_profile
    from harness.loop.unavailable import UnavailableOfferings

    from tests.model.test_instancetypes import SCUS, make_sku
    sku = make_sku("Standard_D2s_v3")

    def make():
        clock = SimClock()
        page = [SimpleNamespace(as_dict=lambda: dict(sku), resource_type="virtualMachines")]
        compute = SimpleNamespace(resource_skus=SimpleNamespace(list=lambda filter, **kw: ItemPaged(
            lambda token: page, lambda resp: (None, iter(resp)))),
            usage=SimpleNamespace(list=lambda region, **kw: ItemPaged(lambda token: [], lambda resp: (None, iter(resp)))))
        return AzureProvider(fake=SimpleNamespace(clock=clock), compute=compute, network=None,
                             profile=load_profile("upstream"), cluster=ClusterParams(region=SCUS),
                             unavailable=UnavailableOfferings(clock), rng=random.Random(1), subscription_id="sub")
    before = itcache.DEFAULT_CACHE.info()
    a, b = make(), make()
    assert a.it_cache is not b.it_cache
    its = a.instance_types(NodeClassParams())
    assert [it.name for it in its.instance_types] == ["Standard_D2s_v3"], its.dropped
    assert a.it_cache.info()["misses"] == 1 and b.it_cache.info()["misses"] == 0
    assert itcache.DEFAULT_CACHE.info() == before
