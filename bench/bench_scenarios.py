"""Benchmark: scenarios per second and per-scenario latency on the embedded backend.

    python bench/bench_scenarios.py [paths...] [--repeat N] [--profile P]

Loads the scenario library once, runs every (scenario, profile) pair N times in one process on a
single embedded cluster, and prints throughput and latency percentiles, both wall-clock and CPU
(time.process_time, all threads of the process: the figure to compare on a loaded machine; print
`uptime`'s load average beside it). The first round is a warm-up (imports, CEL compilation, SDK
model loading) and is reported separately; it judges each pair as pytest does (an outcome set explored
under its seeds, harness/runner/explore.py), while the measured rounds time one run per pair.
Issue #16's goal: CPU median <= 10 ms, p90 <= 25 ms.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.backends.embedded import EmbeddedBackend  # noqa: E402
from harness.runner.engines import get_engine, run  # noqa: E402
from harness.runner.engines.simulated import prepare_process  # noqa: E402
from harness.runner.explore import run_scenario  # noqa: E402
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
    prepare_process()            # as the pytest plugin and `harness run` do once the library is loaded
    cluster = EmbeddedBackend().start()
    t0 = time.perf_counter()
    failures = 0
    engine = get_engine("simulated")
    for sc, p in jobs:
        # judged as pytest judges it: a scenario with an outcome set explored under its seeds
        out = run_scenario(engine, sc, p, cluster)
        failures += out.passed == (sc.xfail_reason(p) is not None)   # an xfail for this engine is expected to fail
    warm = time.perf_counter() - t0
    lat: list[float] = []
    cpu: list[float] = []
    t0 = time.perf_counter()
    for _ in range(args.repeat):
        for sc, p in jobs:
            t, c = time.perf_counter(), time.process_time()
            run(sc, p, cluster)
            cpu.append(time.process_time() - c)
            lat.append(time.perf_counter() - t)
    total = time.perf_counter() - t0
    print(f"scenario files loaded: {len(scenarios)} scenarios in {load_s * 1000:.0f} ms")
    print(f"runs per round: {len(jobs)} (scenario x profile); unexpected outcomes in warm-up round: {failures}")
    print(f"warm-up round: {warm:.2f} s")
    print(f"measured: {len(lat)} runs in {total:.2f} s = {len(lat) / total:.1f} scenarios/s")
    print(f"latency ms: median {statistics.median(lat) * 1000:.1f}, p90 {pct(lat, 90) * 1000:.1f}, "
          f"p99 {pct(lat, 99) * 1000:.1f}, max {max(lat) * 1000:.1f}")
    print(f"CPU ms: median {statistics.median(cpu) * 1000:.1f}, p90 {pct(cpu, 90) * 1000:.1f}, "
          f"p99 {pct(cpu, 99) * 1000:.1f}, max {max(cpu) * 1000:.1f}")
    print(f"whole library, one round: {sum(lat) / args.repeat:.2f} s wall, {sum(cpu) / args.repeat:.2f} CPU-s "
          f"(serial, one core)")
    if hasattr(os, "getloadavg"):
        print("load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
