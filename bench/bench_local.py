"""Benchmark: the `local` backend (real etcd + kube-apiserver) against the embedded one.

    python bench/bench_local.py [paths...] [--starts N] [--sample K] [--no-scenarios]

Reports, with the load average before and after (the numbers move with it):
1. control plane ready: N starts, each in a fresh Python process (cold process, warm cache: the
   binaries are built, the page cache is warm after the first), split into etcd /health,
   kube-apiserver /readyz, the profile's CRDs judging, and the whole start as the process saw it;
2. per scenario: every K-th (scenario, profile) pair of the library that runs on `local`, on one
   shared local cluster (as a pytest worker has) and on the embedded backend, in the order the
   pytest plugin runs them (grouped by profile); the overhead is local minus embedded per pair;
3. reset: the time to empty the cluster after each scenario, by one etcd transaction (what
   reset() does without kube-controller-manager) and, for comparison, by the API's deletes.

Timings are measured here, never asserted in tests.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

START_CHILD = """
import json, time
t0 = time.monotonic()
from harness.backends.local import LocalBackend
t_import = time.monotonic() - t0
c = LocalBackend(profile="upstream").start()
ready = time.monotonic() - t0
c.close()
print(json.dumps({"import": t_import, "ready": ready, **c.timings}))
"""


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def ms(values: list[float]) -> str:
    return (f"median {statistics.median(values) * 1000:.0f} ms, p90 {pct(values, 90) * 1000:.0f} ms "
            f"(n={len(values)})")


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def bench_starts(n: int) -> None:
    runs = []
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for _ in range(n):
        t = time.monotonic()
        out = subprocess.run([sys.executable, "-c", START_CHILD], capture_output=True, text=True, env=env, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        r["process"] = time.monotonic() - t          # interpreter start to cluster closed
        runs.append(r)
    print(f"control plane ready, {n} start(s) in fresh processes ({load()}):")
    keys = [("etcd_ready", "etcd /health"), ("apiserver_ready", "kube-apiserver /readyz"),
            ("total", "start() incl. CRDs judging"), ("ready", "import + start()")]
    for key, label in keys:
        vals = [r[key] for r in runs]
        print(f"  {label:28} first {vals[0]:.2f} s; later: " +
              (f"median {statistics.median(vals[1:]):.2f} s, min {min(vals[1:]):.2f} s" if len(vals) > 1 else "-"))
    crd = [v for r in runs for k, v in r.items() if k.startswith("install_profile:")]
    print(f"  {'profile CRDs judging':28} median {statistics.median(crd):.2f} s")


def bench_scenarios(paths: list[str], sample: int) -> None:
    from harness.backends.embedded import EmbeddedBackend
    from harness.backends.local import LocalBackend
    from harness.runner.engines import run
    from harness.scenario.load import find_scenario_files, load_scenarios
    warnings.simplefilter("ignore")
    scenarios = [sc for f in find_scenario_files(paths) for sc in load_scenarios(f)]
    jobs = [(sc, p) for sc in scenarios for p in sc.profiles if "local" in sc.backends][::sample]
    jobs.sort(key=lambda j: j[1])                   # the plugin's order on a real backend (group_by_profile)
    t = time.monotonic()
    local = LocalBackend(profile="upstream").start()
    first_start = time.monotonic() - t
    embedded = EmbeddedBackend().start()
    print(f"\nper scenario: {len(jobs)} (scenario, profile) pairs, every {sample}th of the library "
          f"({load()}); local cluster started in {first_start:.2f} s")
    for sc, p in jobs[:3]:                          # warm-up: imports, CEL, SDK models, watch caches
        run(sc, p, local)
        run(sc, p, embedded)
    loc, emb, over, reset_etcd, reset_api, profile_switch = [], [], [], [], [], []
    switches = 0
    try:
        for i, (sc, p) in enumerate(jobs):
            before = local.profile
            t = time.perf_counter()
            run(sc, p, local)
            loc.append(time.perf_counter() - t)
            if local.profile != before:
                switches += 1
                profile_switch.append(local.timings.get(f"install_profile:{local.profile}", 0.0))
            t = time.perf_counter()
            run(sc, p, embedded)
            emb.append(time.perf_counter() - t)
            over.append(loc[-1] - emb[-1])
            # empty the dirty cluster; every 4th time through the API, for comparison
            by_api = i % 4 == 3
            local.storage_reset = not by_api
            t = time.perf_counter()
            local.reset()
            (reset_api if by_api else reset_etcd).append(time.perf_counter() - t)
            local.storage_reset = True
    finally:
        local.close()
    print(f"  local     {ms(loc)}")
    print(f"  embedded  {ms(emb)}")
    print(f"  overhead  {ms(over)}  (local - embedded, per pair)")
    print(f"  reset after a scenario: etcd transaction {ms(reset_etcd)}; API deletes + wait {ms(reset_api)}")
    if profile_switch:
        print(f"  profile switches: {switches}, CRDs re-applied and judging in {ms(profile_switch)}")
    print(f"  ({load()})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", default=[str(REPO / "scenarios")])
    ap.add_argument("--starts", type=int, default=4, help="control-plane starts to time (0: none)")
    ap.add_argument("--sample", type=int, default=4, help="run every K-th (scenario, profile) pair")
    ap.add_argument("--no-scenarios", action="store_true")
    args = ap.parse_args()
    from harness.backends.local import LocalBackend
    ok, why = LocalBackend(profile="upstream").available()
    if not ok:
        print(f"local backend unavailable: {why}", file=sys.stderr)
        return 2
    print(f"{os.cpu_count()} CPUs; {load()}")
    if args.starts:
        bench_starts(args.starts)
    if not args.no_scenarios:
        bench_scenarios(args.paths, args.sample)
    return 0


if __name__ == "__main__":
    sys.exit(main())
