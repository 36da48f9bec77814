"""Benchmark the scheduling simulation in the shape of Karpenter core's scheduling benchmark
(sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/scheduling_benchmark_test.go): one NodePool,
400 instance types, 100..100,000 pods, side by side with core's own benchmark binary.

    python bench/bench_scheduling.py [--sizes 100,500,1000,2000,5000] [--instance-types 400] [--repeat 3]
                                     [--mix diverse] [--memory] [--cprofile 25] [--no-gc] [--no-freeze]
                                     [--max-exponent E] [--go BINARY --go-dir DIR] [--child N]

What is timed is what core's benchmark times: Scheduler.solve. The instance types, the pods, the
NodeClaimTemplate, the Topology and the Scheduler (its instance-type prefilter) are built first, as
core's setupScheduler builds them before b.ResetTimer(); their CPU is reported apart (`--child`).
CPU seconds (time.process_time) are the figure to compare on a loaded machine; "exp" is the growth
exponent log(cpu ratio)/log(size ratio) against the previous size (1.0 = linear).
`--memory` re-runs each size once under tracemalloc for the peak Python heap of set-up and solve.
`--cprofile N` profiles the last size. `--max-exponent E` exits 1 when the exponent from the first
size to the last exceeds E (CI's loose check; no timing is ever checked).

The collector: the instance types and the batch are frozen before the solve (harness/heap.py,
as the harness freezes its long-lived objects), so CPython's full collections during the solve walk
what the solve made; `--no-freeze` leaves them unfrozen, `--no-gc` turns the collector off.

The Go side: `--go BINARY --go-dir DIR` runs core's BenchmarkScheduling<n> (`-benchtime=1x
-benchmem`, in DIR, core's scheduling package) and this script's `--child n`, each in its own
process, interleaved `--repeat` times per size, and prints the medians: Go's solve CPU, ns/op,
process CPU, B/op and peak RSS beside the simulation's. Go's solve CPU comes from a metric added to
core's benchmark (user + sys of the process over the timed loop, so its parallel collector and
workers count); docs/benchmarks/scheduling.md has the build and the edit. Measured results are
there too.

Instance types are built by the model from 400 Azure SKUs (fakeazure's seeded synthetic
generator, topped up from the eastus catalog), so each carries the full Azure requirement set (~30 keys) and 8 offerings. Pods are
generic (requests drawn from core's lists with seed 42), or with `--mix diverse` core's mix of
zonal and hostname spreads, zonal self-affinity and hostname anti-affinity.
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import json
import math
import os
import pstats
import random
import re
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fakeazure.catalog import synthetic_prices, synthetic_skus  # noqa: E402
from harness.loop.scheduling.pods import PodView  # noqa: E402
from harness.loop.scheduling.scheduler import Scheduler, Template  # noqa: E402
from harness.loop.scheduling.topology import Topology, topology_keys, universe_for  # noqa: E402
from harness.model.azure.instancetypes import ClusterParams, NodeClassParams, build_instance_types  # noqa: E402
from harness.model.upstream.profile import load_profile  # noqa: E402
from harness.model.labels.semantics import semantics_for  # noqa: E402
from harness.heap import freeze_long_lived  # noqa: E402
from harness.scenario.catalogs import catalog  # noqa: E402

CPU = ["100m", "250m", "500m", "1000m", "1500m"]
MEM = ["100Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi"]
NODEPOOL = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "bench", "uid": "u"},
            "spec": {"limits": {"cpu": "10000000"},
                     "template": {"spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass",
                                                            "name": "default"}, "requirements": []}}}}


def pods(n: int, rng: random.Random, mix: str = "generic") -> list[PodView]:
    """Generic pods, or core's makeDiversePods fifths: generic, zonal spread, hostname spread,
    zonal self-affinity, hostname anti-affinity (all app=nginx, so one node each)."""
    out = []
    for i in range(n):
        spec: dict = {"containers": [{"name": "c", "resources": {"requests": {"cpu": rng.choice(CPU),
                                                                           "memory": rng.choice(MEM)}}}]}
        labels = {"my-label": rng.choice("abcde")}
        kind = (i * 5 // n) if mix == "diverse" else 0
        if kind in (1, 2):
            key = "topology.kubernetes.io/zone" if kind == 1 else "kubernetes.io/hostname"
            spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
                                                  "labelSelector": {"matchLabels": {"my-label": labels["my-label"]}}}]
        elif kind == 3:
            labels["my-affinity"] = rng.choice("abcde")
            spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "topology.kubernetes.io/zone",
                 "labelSelector": {"matchLabels": {"my-affinity": labels["my-affinity"]}}}]}}
        elif kind == 4:
            labels = {"app": "nginx"}
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "nginx"}}}]}}
        obj = {"metadata": {"name": f"p{i}", "namespace": "default", "uid": f"uid-{i}", "labels": labels},
               "spec": spec}
        out.append(PodView(obj, i))
    return out


def solve_once(n: int, its, profile, sem, mix: str, freeze: bool = True, trace: bool = False) -> dict:
    """One Solve of n pods: wall and CPU seconds of Scheduler.solve (what core's benchmark times),
    CPU seconds of the set-up before it, NodeClaims planned, and with `trace` the peak of the Python
    heap set-up and solve allocated (tracemalloc, started once the batch is built)."""
    batch = pods(n, random.Random(42), mix)
    # the batch and the instance types are the solve's input, long-lived as the scenario library is
    # when the harness runs (harness/heap.py): frozen, so the collector's full collections
    # during the solve walk what the solve made (the collector stays on); --no-freeze walks all
    if freeze:
        freeze_long_lived()
    if trace:
        tracemalloc.start()
    # set-up, as core's setupScheduler does it outside the benchmark's timer (NewTopology,
    # NewScheduler with its NodeClaimTemplate and instance-type prefilter), timed apart
    c0 = time.process_time()
    template = Template.from_nodepool(NODEPOOL, list(its), profile, sem)
    keys = set().union(*(topology_keys(p) for p in batch))
    # as the provisioner builds it (harness/loop/provisioning/provisioner.py): the profile's well-known
    # labels let a claim's requirements leave a zone undefined
    topo = Topology(universe_for(keys, [template]), {}, [], sem=sem, well_known=profile.well_known_labels) if keys else None
    scheduler = Scheduler([template], [], profile, sem, topology=topo)
    t, c = time.perf_counter(), time.process_time()
    result = scheduler.solve(batch)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    setup_cpu = c - c0
    peak = tracemalloc.get_traced_memory()[1] if trace else None
    if trace:
        tracemalloc.stop()
    if freeze:
        gc.unfreeze()
    assert not result.errors, next(iter(result.errors.values()))
    return {"wall": wall, "cpu": cpu, "setup_cpu": setup_cpu, "nodes": len(result.new_claims), "heap": peak}


def setup(n_types: int, profile_name: str):
    profile = load_profile(profile_name)
    sem = semantics_for(profile)
    skus = synthetic_skus(min(n_types, 288), seed=42, region="eastus")
    # real catalog SKUs top up the synthetic generator (it has 288 distinct sizes)
    skus += [s for s in catalog("eastus")[0] if s["name"] not in {x["name"] for x in skus}][:max(0, n_types - len(skus))]
    its = build_instance_types(skus, NodeClassParams(image_family="Ubuntu2204"), ClusterParams(region="eastus"),
                               profile, prices=synthetic_prices(skus, seed=42))
    return its, profile, sem, len(skus)


def exponent(a: tuple[int, float], b: tuple[int, float]) -> float | None:
    """log(CPU ratio) / log(size ratio) between two (size, CPU) points."""
    if a[0] == b[0] or a[1] <= 0 or b[1] <= 0:
        return None
    return math.log(b[1] / a[1]) / math.log(b[0] / a[0])


def child(args) -> int:
    """One size in this process (--child N): the solve's figures and the process's, as JSON."""
    if args.no_gc:
        gc.disable()
    its, profile, sem, _ = setup(args.instance_types, args.profile)
    out = solve_once(args.child, its, profile, sem, args.mix, freeze=not args.no_freeze)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    out.update(process_cpu=ru.ru_utime + ru.ru_stime, rss_mb=ru.ru_maxrss / 1024)
    print(json.dumps(out))
    return 0


def run_child(argv: list[str], cwd: str | None = None) -> tuple[str, float, float]:
    """Run a process to its end: (stdout, its user+sys CPU seconds, its peak RSS in MB)."""
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = proc.stdout.read()
    _, status, ru = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv[0]} exited {os.waitstatus_to_exitcode(status)}")
    return out, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


GO_METRIC = re.compile(r"BenchmarkScheduling(\d+)\S*\s+\d+\s+(.*)")


def go_once(binary: str, cwd: str, n: int) -> dict:
    """One run of core's BenchmarkScheduling<n> at -benchtime=1x: its own metrics (ns/op: the solve's
    wall time; cpu-ns/op: user+sys of the process during the timed loop, from the patch below; B/op),
    and the whole process's CPU and peak RSS."""
    out, cpu, rss = run_child([binary, "-test.run", "^$", "-test.bench", f"^BenchmarkScheduling{n}$",
                               "-test.benchtime", "1x", "-test.benchmem"], cwd)
    m = next((GO_METRIC.match(line.strip()) for line in out.splitlines() if GO_METRIC.match(line.strip())), None)
    if m is None:
        raise SystemExit(f"no BenchmarkScheduling{n} line in:\n{out}")
    fields = m.group(2).split()
    metrics = {unit: float(v) for v, unit in zip(fields[::2], fields[1::2])}
    return {"wall": metrics["ns/op"] / 1e9, "cpu": metrics.get("cpu-ns/op", float("nan")) / 1e9,
            "bytes": metrics.get("B/op", float("nan")), "nodes": int(metrics.get("nodes", 0)),
            "process_cpu": cpu, "rss_mb": rss}


def side_by_side(args, sizes: list[int]) -> int:
    """Go and the simulation at each size, `--repeat` rounds interleaved (Go, then Python, per size
    and round, each in its own process), medians."""
    me = [sys.executable, str(Path(__file__).resolve()), "--mix", args.mix, "--profile", args.profile,
          "--instance-types", str(args.instance_types)] + (["--no-freeze"] if args.no_freeze else [])
    print(f"{'pods':>6} | {'Go solve':>9} {'Go wall':>8} {'Go proc':>8} {'Go alloc':>9} {'Go RSS':>7} "
          f"| {'sim solve':>9} {'sim proc':>8} {'sim heap':>8} {'sim RSS':>7} | {'Go/sim':>6}")
    print(f"{'':>6} | {'CPU-s':>9} {'s':>8} {'CPU-s':>8} {'MB':>9} {'MB':>7} | {'CPU-s':>9} {'CPU-s':>8} "
          f"{'MB':>8} {'MB':>7} | {'CPU':>6}")
    for n in sizes:
        gos, sims = [], []
        for _ in range(args.repeat):
            gos.append(go_once(args.go, args.go_dir, n))
            out, _, _ = run_child(me + ["--child", str(n)])
            sims.append(json.loads(out))
        heap = solve_heap(n, args) if args.memory else float("nan")
        g = {k: statistics.median(r[k] for r in gos) for k in ("cpu", "wall", "process_cpu", "bytes", "rss_mb")}
        p = {k: statistics.median(r[k] for r in sims) for k in ("cpu", "process_cpu", "rss_mb")}
        print(f"{n:>6} | {g['cpu']:>9.3f} {g['wall']:>8.3f} {g['process_cpu']:>8.2f} {g['bytes'] / 2**20:>9.1f} "
              f"{g['rss_mb']:>7.0f} | {p['cpu']:>9.3f} {p['process_cpu']:>8.2f} {heap:>8.1f} {p['rss_mb']:>7.0f} "
              f"| {g['cpu'] / p['cpu']:>5.1f}x", flush=True)
    return 0


def solve_heap(n: int, args) -> float:
    """The peak Python heap of one solve, in MB (in this process; tracemalloc slows the solve)."""
    global _SETUP
    if _SETUP is None:
        _SETUP = setup(args.instance_types, args.profile)
    its, profile, sem, _ = _SETUP
    return solve_once(n, its, profile, sem, args.mix, freeze=not args.no_freeze, trace=True)["heap"] / 2**20


_SETUP = None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100,500,1000,2000,5000")
    ap.add_argument("--instance-types", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", default="upstream")
    ap.add_argument("--mix", default="generic", choices=["generic", "diverse"],
                    help="generic pods, or core's diverse mix (spreads, affinity, anti-affinity)")
    ap.add_argument("--memory", action="store_true", help="peak Python heap of one solve per size (tracemalloc)")
    ap.add_argument("--cprofile", type=int, default=0, metavar="N", help="profile the last size, top N functions")
    ap.add_argument("--no-gc", action="store_true",
                    help="run with CPython's cyclic garbage collector off, to tell the scheduler's own growth "
                         "from the collector's (see the module docstring)")
    ap.add_argument("--no-freeze", action="store_true",
                    help="leave the batch and instance types unfrozen: the collector's full collections during "
                         "the solve walk them too")
    ap.add_argument("--max-exponent", type=float, default=None, metavar="E",
                    help="exit 1 if the growth exponent from the first size to the last exceeds E (a loose "
                         "check against quadratic growth, for CI; timings themselves are never checked)")
    ap.add_argument("--go", metavar="BINARY", help="side by side with core's benchmark test binary (see above)")
    ap.add_argument("--go-dir", metavar="DIR", default=None,
                    help="the directory to run the Go binary in (core's scheduling package)")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        return child(args)
    sizes = [int(x) for x in args.sizes.split(",")]
    if args.go:
        return side_by_side(args, sizes)
    if args.no_gc:
        gc.disable()
    t0 = time.perf_counter()
    its, profile, sem, n_skus = setup(args.instance_types, args.profile)
    build_ms = (time.perf_counter() - t0) * 1000
    print(f"instance types: {len(its)} kept of {n_skus} synthetic SKUs ({len(its.dropped)} dropped), "
          f"built in {build_ms:.0f} ms")
    print(f"{'pods':>6} {'nodes':>6} {'wall s':>8} {'cpu s':>8} {'pods/cpu-s':>10} {'exp':>5}"
          + (f" {'heap MB':>8}" if args.memory else ""))
    prev = first = None
    for n in sizes:
        runs = [solve_once(n, its, profile, sem, args.mix, freeze=not args.no_freeze) for _ in range(args.repeat)]
        wall, cpu = statistics.median(r["wall"] for r in runs), statistics.median(r["cpu"] for r in runs)
        e = exponent(prev, (n, cpu)) if prev else None
        line = (f"{n:>6} {runs[0]['nodes']:>6} {wall:>8.3f} {cpu:>8.3f} {n / max(cpu, 1e-9):>10.0f} "
                + (f"{e:5.2f}" if e is not None else "    -"))
        if args.memory:
            line += f" {solve_once(n, its, profile, sem, args.mix, not args.no_freeze, trace=True)['heap'] / 2**20:>8.1f}"
        print(line, flush=True)
        prev = (n, cpu)
        first = first or prev
    if args.cprofile:
        prof = cProfile.Profile()
        prof.runcall(solve_once, sizes[-1], its, profile, sem, args.mix, not args.no_freeze)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(args.cprofile)
    if args.max_exponent is not None and len(sizes) > 1:
        e = exponent(first, prev)
        print(f"growth exponent {sizes[0]} -> {sizes[-1]} pods: {e:.2f} (allowed up to {args.max_exponent})")
        if e is not None and e > args.max_exponent:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
