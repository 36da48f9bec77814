"""harness/loop/azure.py: the Azure SDK retry policy the provider keeps (issue 12)."""
from __future__ import annotations

import random
from types import SimpleNamespace

import pytest
from azure.core.exceptions import HttpResponseError

from harness.loop.azure import MAX_RETRIES, MAX_RETRY_DELAY, AzureProvider
from harness.loop.clock import SimClock


def provider():
    clock = SimClock()
    p = AzureProvider(fake=SimpleNamespace(clock=clock), compute=None, network=None, profile=None,
                      cluster=SimpleNamespace(node_resource_group="rg"), unavailable=None,
                      rng=random.Random(1), subscription_id="sub")
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
    assert sum(1 for e in p.log if e["reason"] == "Retry") == MAX_RETRIES


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
