"""fakeazure speed through the real Azure SDK, in process (numbers are printed, not asserted:
timings depend on the machine and its load, so they live here and not in tests/).

    python bench/bench_fakeazure.py [--repeat 15]

Measures the median of: a Resource SKUs list via the SDK and on the fake's side alone, and a VM
create (PUT, two LRO polls, GET) via the SDK. fakeazure/README.md quotes typical figures.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "fakeazure"))

from fa_helpers import RG, SUB, nic_body, vm_body  # noqa: E402

from fakeazure import FakeAzure, mock_azure  # noqa: E402
from fakeazure.clients import compute_client, network_client  # noqa: E402


def _median_ms(fn, n: int) -> float:
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1000)
    return statistics.median(samples)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args(argv)
    state = FakeAzure()
    with mock_azure(state):
        c, n = compute_client(state), network_client(state)
        n.network_interfaces.begin_create_or_update(RG, "nic", nic_body()).result()
        list(c.resource_skus.list(filter="location eq 'southcentralus'"))  # warm the SDK's model caches
        sku_ms = _median_ms(lambda: list(c.resource_skus.list(filter="location eq 'southcentralus'")), args.repeat)
        handle_ms = _median_ms(lambda: state.handle(
            "GET", f"https://management.azure.com/subscriptions/{SUB}/providers/Microsoft.Compute/skus"
                   "?api-version=2021-07-01&$filter=location%20eq%20%27southcentralus%27"), args.repeat * 2)
        names = iter(range(10 ** 6))

        def create():
            c.virtual_machines.begin_create_or_update(RG, f"vm{next(names)}", vm_body(nic_id=None)).result()
        create()
        create_ms = _median_ms(create, args.repeat)
        c.close()
        n.close()
    print(f"SKU list via SDK: {sku_ms:.1f} ms (fake side {handle_ms:.2f} ms); "
          f"VM create PUT+2 polls+GET via SDK: {create_ms:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
