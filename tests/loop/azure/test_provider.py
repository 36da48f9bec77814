"""harness/loop/azure/provider.py: the Azure SDK retry policy the provider keeps (issue 12), its events, its own
instance-type cache."""
from __future__ import annotations

import random
from types import SimpleNamespace

import pytest
from azure.core.exceptions import HttpResponseError
from azure.core.paging import ItemPaged

from harness.loop.azure.provider import AzureProvider
from harness.loop.azure.sdk import MAX_RETRIES, MAX_RETRY_DELAY
from harness.loop.clock import SimClock
from harness.model.azure.instancetypes import ClusterParams
from harness.model.upstream.profile import load_profile


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
    # silent, as in the controller (provider v1.14.0 sets no azcore log listener)
    assert not [e for e in p.events if e[0] == "Log"]


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
    from harness.model.azure import itcache
    from harness.model.azure.instancetypes import ClusterParams, NodeClassParams
    from harness.model.upstream.profile import load_profile
    from harness.loop.azure.unavailable import UnavailableOfferings

    from tests.model.azure.test_instancetypes import SCUS, make_sku
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


def _priced(pricing: str, region: str, fake_prices: dict | None = None):
    fake = SimpleNamespace(clock=SimClock(), region_prices=lambda r: (fake_prices or {}).get(r, {}))
    return AzureProvider(fake=fake, compute=None, network=None, profile=load_profile("upstream"),
                         cluster=ClusterParams(region=region), unavailable=None, rng=random.Random(1),
                         subscription_id="sub", pricing=pricing)


def test_compiled_in_pricing_prices_spot_as_on_demand_from_the_release_table():
    """provider v1.14.0 pkg/providers/pricing/pricing.go NewProvider outside the public cloud:
    onDemandPrices and spotPrices are both initialOnDemandPrices[region]; the fake's retail prices
    are never read. eastus Standard_D2as_v5 is 0.178 in v1.14.0's zz_generated.pricing.go (retail: 0.086)."""
    retail = {"eastus": {"Standard_D2as_v5": {"on-demand": 0.086, "spot": 0.0172}}}
    assert _priced("retail", "eastus", retail).prices() == retail["eastus"]
    table = _priced("compiled-in", "eastus", retail).prices()
    assert table["Standard_D2as_v5"] == {"on-demand": 0.178, "spot": 0.178}
    assert all(p["spot"] == p["on-demand"] for p in table.values()) and len(table) > 1000
    # a size the table lacks: MissingPrice 999 for both capacity types (Provider.OnDemandPrice / SpotPrice)
    from harness.model.azure.instancetypes import MISSING_PRICE, build_instance_types
    from tests.model.azure.test_instancetypes import make_sku
    its = build_instance_types([make_sku("Standard_D2s_v3"), make_sku("Standard_D2s_v9")], profile="upstream",
                               prices=table, known_skus=["Standard_D2s_v3", "Standard_D2s_v9"])
    prices = {(it.name, o.capacity_type): o.price for it in its.instance_types for o in it.offerings}
    assert prices[("Standard_D2s_v3", "spot")] == prices[("Standard_D2s_v3", "on-demand")] == 0.096
    assert prices[("Standard_D2s_v9", "spot")] == prices[("Standard_D2s_v9", "on-demand")] == MISSING_PRICE


def test_compiled_in_pricing_falls_back_to_eastus_for_a_region_without_a_table():
    """NewProvider: `initialOnDemandPrices[region]`, else `initialOnDemandPrices[defaultRegion]` (eastus)."""
    assert _priced("compiled-in", "nowhere").prices() == _priced("compiled-in", "eastus").prices()
    assert _priced("compiled-in", "westeurope").prices() != _priced("compiled-in", "eastus").prices()
