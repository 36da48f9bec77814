"""Benchmark the scheduling simulation in the shape of Karpenter core's scheduling benchmark
(sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/scheduling_benchmark_test.go): one NodePool,
400 instance types, 100..5000 pods, pods per second.

    python bench/bench_scheduling.py [--sizes 100,500,1000,2000,5000] [--instance-types 400] [--repeat 3]
                                     [--mix diverse] [--memory] [--cprofile 25] [--no-gc]

CPU seconds (time.process_time) are the figure to compare on a loaded machine; "exp" is the
growth exponent log(cpu ratio)/log(size ratio) against the previous size (1.0 = linear).
`--memory` re-runs each size once under tracemalloc for the peak Python heap of one solve.
`--cprofile N` profiles the last size and prints the top N functions by cumulative time.

Growth: a pod visits only the planned claims with enough CPU left (harness/loop/nodeclaim.py
ClaimOrder.park) and, with a zonal affinity, only those in its zones (Scheduler._scan's domain
gates); Go's sort.Slice order costs a claim move per pod, not a replay (gosort.keeps_ties); so the
scheduler's work per pod stays about constant on both mixes (docs/benchmarks/scheduling.md). What still
grows faster than linear past ~10k pods is CPython's cyclic garbage collector: each full
(generation 2) collection walks every live object, and a 100k-pod solve keeps ~0.5 GB of pods,
claims and requirements alive. `--no-gc` turns the collector off for the run to separate the two
(generic mix, 10k -> 100k pods: exponent 1.07 with the collector, 1.03 without).

The Go side (core's own benchmark, makeDiversePods; sigs.k8s.io/karpenter v1.14.0
pkg/controllers/provisioning/scheduling/scheduling_benchmark_test.go, build tag test_performance).
Build the test binary once from a writable copy of the module (the module cache is read-only; the
dependencies come from the Go module proxy; ~25 min on 2 busy cores), then time one size per process
so each gets its own CPU figure (user + sys; Go's wall time includes its parallel GC and waits):
    cp -r $(go env GOMODCACHE)/sigs.k8s.io/karpenter@v1.14.0 /tmp/karpenter && chmod -R u+w /tmp/karpenter
    cd /tmp/karpenter && nice -n 10 go test -tags test_performance -c -o /tmp/sched.test \
        ./pkg/controllers/provisioning/scheduling
    cd pkg/controllers/provisioning/scheduling && for n in 100 1000 5000 10000; do
        /usr/bin/time -f "$n pods: %U s user %S s sys %M KB" nice -n 10 /tmp/sched.test \
            -test.run '^$' -test.bench "BenchmarkScheduling$n\$" -test.benchtime 1x; done
Measured results, side by side, are in docs/benchmarks/scheduling.md.

Instance types are built by the model from 400 Azure SKUs (fakeazure's seeded synthetic
generator, topped up from the eastus catalog), so each carries the full Azure requirement set (~30 keys) and 8 offerings. Pods are
generic (requests drawn from core's lists with seed 42), or with `--mix diverse` core's mix of
zonal and hostname spreads, zonal self-affinity and hostname anti-affinity.
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import math
import pstats
import random
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fakeazure.catalog import synthetic_prices, synthetic_skus  # noqa: E402
from harness.loop.pods import PodView  # noqa: E402
from harness.loop.scheduling import Scheduler, Template  # noqa: E402
from harness.loop.topology import Topology, topology_keys, universe_for  # noqa: E402
from harness.model.instancetypes import ClusterParams, NodeClassParams, build_instance_types  # noqa: E402
from harness.model.profile import load_profile  # noqa: E402
from harness.model.semantics import semantics_for  # noqa: E402
from harness.runner.catalogs import catalog  # noqa: E402

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


def solve_once(n: int, its, profile, sem, mix: str) -> tuple[float, float, int]:
    """One Solve of n pods: (wall s, CPU s, NodeClaims planned)."""
    batch = pods(n, random.Random(42), mix)
    # the batch's own allocations are setup: collect now, so the collections they are owed do not
    # land inside the timed solve (the collector stays on during it)
    gc.collect()
    t, c = time.perf_counter(), time.process_time()
    template = Template.from_nodepool(NODEPOOL, list(its), profile, sem)
    keys = set().union(*(topology_keys(p) for p in batch))
    # as the provisioner builds it (harness/loop/controllers/provisioner.py): the profile's well-known
    # labels let a claim's requirements leave a zone undefined
    topo = Topology(universe_for(keys, [template]), {}, [], sem=sem, well_known=profile.well_known_labels) if keys else None
    result = Scheduler([template], [], profile, sem, topology=topo).solve(batch)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    assert not result.errors, next(iter(result.errors.values()))
    return wall, cpu, len(result.new_claims)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="100,500,1000,2000,5000")
    ap.add_argument("--instance-types", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", default="upstream")
    ap.add_argument("--mix", default="generic", choices=["generic", "diverse"],
                    help="generic pods, or core's diverse mix (spreads, affinity, anti-affinity)")
    ap.add_argument("--memory", action="store_true", help="peak traced memory of one solve per size")
    ap.add_argument("--cprofile", type=int, default=0, metavar="N", help="profile the last size, top N functions")
    ap.add_argument("--no-gc", action="store_true",
                    help="run with CPython's cyclic garbage collector off, to tell the scheduler's own growth "
                         "from the collector's (see the module docstring)")
    args = ap.parse_args()
    if args.no_gc:
        gc.disable()
    profile = load_profile(args.profile)
    sem = semantics_for(profile)
    skus = synthetic_skus(min(args.instance_types, 288), seed=42, region="eastus")
    # real catalog SKUs top up the synthetic generator (it has 288 distinct sizes)
    skus += [s for s in catalog("eastus")[0] if s["name"] not in {x["name"] for x in skus}][:max(0, args.instance_types - len(skus))]
    t0 = time.perf_counter()
    its = build_instance_types(skus, NodeClassParams(image_family="Ubuntu2204"), ClusterParams(region="eastus"),
                               profile, prices=synthetic_prices(skus, seed=42))
    build_ms = (time.perf_counter() - t0) * 1000
    print(f"instance types: {len(its)} kept of {len(skus)} synthetic SKUs ({len(its.dropped)} dropped), "
          f"built in {build_ms:.0f} ms")
    print(f"{'pods':>6} {'nodes':>6} {'wall s':>8} {'cpu s':>8} {'pods/cpu-s':>10} {'exp':>5}"
          + (f" {'peak MB':>8}" if args.memory else ""))
    sizes = [int(x) for x in args.sizes.split(",")]
    prev = None
    for n in sizes:
        walls, cpus = [], []
        nodes = 0
        for r in range(args.repeat):
            w, c, nodes = solve_once(n, its, profile, sem, args.mix)
            walls.append(w)
            cpus.append(c)
        wall, cpu = statistics.median(walls), statistics.median(cpus)
        exp = f"{math.log(cpu / prev[1]) / math.log(n / prev[0]):5.2f}" if prev and prev[1] > 0 and cpu > 0 and n != prev[0] else "    -"
        line = f"{n:>6} {nodes:>6} {wall:>8.3f} {cpu:>8.3f} {n / max(cpu, 1e-9):>10.0f} {exp}"
        if args.memory:
            tracemalloc.start()
            solve_once(n, its, profile, sem, args.mix)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            line += f" {peak / 2**20:>8.1f}"
        print(line, flush=True)
        prev = (n, cpu)
    if args.cprofile:
        prof = cProfile.Profile()
        prof.runcall(solve_once, sizes[-1], its, profile, sem, args.mix)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(args.cprofile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
