"""Benchmark: scenarios per second and per-scenario latency on the embedded backend.

    python bench/bench_scenarios.py [paths...] [--repeat N] [--profile P]

Loads the scenario library once, runs every (scenario, profile) pair N times in one process on a
single embedded cluster, and prints throughput and latency percentiles. The first round is a
warm-up (imports, CEL compilation, SDK model loading) and is reported separately.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.backends.embedded import EmbeddedBackend  # noqa: E402
from harness.runner.engine import run  # noqa: E402
from harness.runner.scenario import find_scenario_files, load_scenarios  # noqa: E402


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("paths", nargs="*", default=["scenarios"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", action="append", default=[])
    args = ap.parse_args()
    t0 = time.perf_counter()
    scenarios = [sc for f in find_scenario_files(args.paths) for sc in load_scenarios(f)]
    load_s = time.perf_counter() - t0
    jobs = [(sc, p) for sc in scenarios for p in sc.profiles if not args.profile or p in args.profile]
    cluster = EmbeddedBackend().start()
    t0 = time.perf_counter()
    failures = 0
    for sc, p in jobs:
        out = run(sc, p, cluster)
        failures += out.passed == (p in sc.xfail)       # a declared xfail is expected to fail
    warm = time.perf_counter() - t0
    lat: list[float] = []
    t0 = time.perf_counter()
    for _ in range(args.repeat):
        for sc, p in jobs:
            t = time.perf_counter()
            run(sc, p, cluster)
            lat.append(time.perf_counter() - t)
    total = time.perf_counter() - t0
    print(f"scenario files loaded: {len(scenarios)} scenarios in {load_s * 1000:.0f} ms")
    print(f"runs per round: {len(jobs)} (scenario x profile); unexpected outcomes in warm-up round: {failures}")
    print(f"warm-up round: {warm:.2f} s")
    print(f"measured: {len(lat)} runs in {total:.2f} s = {len(lat) / total:.1f} scenarios/s")
    print(f"latency ms: median {statistics.median(lat) * 1000:.1f}, p90 {pct(lat, 90) * 1000:.1f}, "
          f"p99 {pct(lat, 99) * 1000:.1f}, max {max(lat) * 1000:.1f}")
    print(f"whole library, one round: {sum(lat) / args.repeat:.2f} s (serial, one core)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
