"""Speed of the fake through the real SDK, in-process: a measurement, not a test (timings are
never asserted; docs/fakeazure.md "Speed" holds measured figures).

    python -m fakeazure.tools.perf

Prints the median of the SKU list through ``ComputeManagementClient``, the fake's own share of
it (``FakeAzure.handle``), and a VM create (PUT + 2 status polls + final GET).
"""
from __future__ import annotations

import statistics
import time

from fakeazure import WELL_KNOWN_SUBSCRIPTION, FakeAzure, mock_azure
from fakeazure.clients import compute_client

SUB = WELL_KNOWN_SUBSCRIPTION


def _median_ms(fn, n: int) -> float:
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1000)
    return statistics.median(samples)


def _vm_body() -> dict:
    return {"location": "southcentralus", "zones": ["1"], "properties": {
        "hardwareProfile": {"vmSize": "Standard_D2s_v3"},
        "storageProfile": {"osDisk": {"createOption": "FromImage", "deleteOption": "Delete"}},
        "osProfile": {"computerName": "n", "adminUsername": "azureuser"}}}


def measure() -> dict[str, float]:
    state = FakeAzure()
    with mock_azure(state):
        c = compute_client(state)
        list(c.resource_skus.list(filter="location eq 'southcentralus'"))  # warm the SDK's model caches
        sku_ms = _median_ms(lambda: list(c.resource_skus.list(filter="location eq 'southcentralus'")), 15)
        handle_ms = _median_ms(lambda: state.handle(
            "GET", f"https://management.azure.com/subscriptions/{SUB}/providers/Microsoft.Compute/skus"
                   "?api-version=2021-07-01&$filter=location%20eq%20%27southcentralus%27"), 30)
        names = iter(range(10 ** 6))

        def create():
            c.virtual_machines.begin_create_or_update("rg", f"vm{next(names)}", _vm_body()).result()
        create()
        create_ms = _median_ms(create, 15)
        c.close()
    return {"sku_list_sdk_ms": sku_ms, "sku_list_fake_ms": handle_ms, "vm_create_sdk_ms": create_ms}


def main() -> int:
    m = measure()
    print(f"SKU list via SDK {m['sku_list_sdk_ms']:.1f} ms (fake side {m['sku_list_fake_ms']:.2f} ms); "
          f"VM create PUT+2 polls+GET via SDK {m['vm_create_sdk_ms']:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
