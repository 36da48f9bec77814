"""Instance-type build speed (the provider's computeRequirements/offerings over a SKU catalog),
uncached and cached. Printed, not asserted: timings belong here, not in tests/.

    python bench/bench_instancetypes.py [--catalog southcentralus] [--repeat 10]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.model.azure.instancetypes import ClusterParams, NodeClassParams, build_instance_types  # noqa: E402
from harness.scenario.catalogs import catalog  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--catalog", default="southcentralus")
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args(argv)
    skus, _ = catalog(args.catalog)
    cluster = ClusterParams(region=args.catalog)

    def once(use_cache: bool) -> float:
        t = time.perf_counter()
        build_instance_types(skus, NodeClassParams(), cluster, "upstream", use_cache=use_cache)
        return (time.perf_counter() - t) * 1000
    once(False)
    uncached = statistics.median(once(False) for _ in range(args.repeat))
    cached = statistics.median(once(True) for _ in range(args.repeat))
    print(f"{len(skus)} SKUs ({args.catalog}): build {uncached:.1f} ms uncached, {cached:.2f} ms cached (median of "
          f"{args.repeat})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
