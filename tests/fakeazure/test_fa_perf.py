"""Speed budget (numbers are printed; the asserted bounds are loose so a loaded CI
machine does not flake -- see fakeazure/README.md for measured figures)."""
from __future__ import annotations

import statistics
import time

from fakeazure import FakeAzure, mock_azure
from fakeazure.clients import compute_client, network_client

from fa_helpers import RG, SUB, nic_body, vm_body


def _median_ms(fn, n: int) -> float:
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1000)
    return statistics.median(samples)


def test_in_process_speed(record_property, capsys):
    state = FakeAzure()
    with mock_azure(state):
        c, n = compute_client(state), network_client(state)
        nic = n.network_interfaces.begin_create_or_update(RG, "nic", nic_body()).result()
        list(c.resource_skus.list(filter="location eq 'southcentralus'"))  # warm the SDK's model caches
        sku_ms = _median_ms(lambda: list(c.resource_skus.list(filter="location eq 'southcentralus'")), 15)
        handle_ms = _median_ms(lambda: state.handle(
            "GET", f"https://management.azure.com/subscriptions/{SUB}/providers/Microsoft.Compute/skus"
                   "?api-version=2021-07-01&$filter=location%20eq%20%27southcentralus%27"), 30)
        i = iter(range(10 ** 6))

        def create():
            name = f"vm{next(i)}"
            body = vm_body(nic_id=None)
            c.virtual_machines.begin_create_or_update(RG, name, body).result()
        create()
        create_ms = _median_ms(create, 15)
        c.close()
        n.close()
    record_property("sku_list_sdk_ms", round(sku_ms, 2))
    record_property("sku_list_fake_ms", round(handle_ms, 3))
    record_property("vm_create_sdk_ms", round(create_ms, 2))
    with capsys.disabled():
        print(f"\n[fakeazure perf] SKU list via SDK {sku_ms:.1f} ms (fake side {handle_ms:.2f} ms); "
              f"VM create PUT+2 polls+GET via SDK {create_ms:.1f} ms")
    assert handle_ms < 10
    assert create_ms < 100 and sku_ms < 150
