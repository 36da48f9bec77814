"""Benchmark: scenarios per second and per-scenario latency on the embedded backend.

    python bench/bench_scenarios.py [paths...] [--repeat N] [--profile P] [--base REV] [--json FILE]

Loads the scenario library once, runs every (scenario, profile) pair N times in one process on a
single embedded cluster, and prints throughput and latency percentiles, both wall-clock and CPU
(time.process_time, all threads of the process: the figure to compare on a loaded machine; print
`uptime`'s load average beside it). The first round is a warm-up (imports, CEL compilation, SDK
model loading) and is reported separately; it judges each pair as pytest does (an outcome set explored
under its seeds, harness/judge/explore.py), while the measured rounds time one run per pair.
Issue #16's goal: CPU median <= 10 ms, p90 <= 25 ms; issue #65's: median below 11.9 ms (goal 5 ms).

`--base REV` measures REV in the same invocation: REV is checked out into a temporary `git worktree`, and
each tree runs in a child process of its own (PYTHONPATH at that tree) over the same scenario files, the
base's (paths are taken inside the base tree), which both trees must read. The two children load and warm up,
then take the measured rounds in turn (base round 1, this tree's round 1, base round 2, ...), one at a time,
so both see the same machine load; the table sets them side by side: CPU p50 and p90 per run, CPU-s per
round over the library, runs. `--max-ratio R` (e.g. 1.03) also exits 1 when this tree's CPU p50 is above R
times the base's: how a change shows it kept issue #65's p50, never asserted in CI (timings there are not).
Numbers: docs/benchmarks/simulation.md.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


class Bench:
    """One tree's library on one embedded cluster: loaded, warmed up, then timed a round at a time.

    Imports the harness lazily so a child can point sys.path at another tree first."""

    def __init__(self, paths: list[str], profiles: list[str]):
        from harness.backends.embedded import EmbeddedBackend
        from harness.runner.engines import get_engine, run
        from harness.runner.engines.simulated import prepare_process
        from harness.judge.explore import run_scenario
        from harness.scenario.load import find_scenario_files, load_scenarios

        self._run = run
        t0 = time.perf_counter()
        scenarios = [sc for f in find_scenario_files(paths) for sc in load_scenarios(f)]
        self.load_s = time.perf_counter() - t0
        self.scenarios = len(scenarios)
        self.jobs = [(sc, p) for sc in scenarios for p in sc.profiles if not profiles or p in profiles]
        prepare_process()            # as the pytest plugin and `harness run` do once the library is loaded
        self.cluster = EmbeddedBackend().start()
        t0 = time.perf_counter()
        self.failures = 0
        engine = get_engine("simulated")
        for sc, p in self.jobs:
            # judged as pytest judges it: a scenario with an outcome set explored under its seeds
            out = run_scenario(engine, sc, p, self.cluster)
            self.failures += out.passed == (sc.xfail_reason(p) is not None)   # an xfail is expected to fail
        self.warm_s = time.perf_counter() - t0

    def round(self) -> tuple[list[float], list[float]]:
        """One run of every pair: (wall seconds, CPU seconds) per run."""
        lat: list[float] = []
        cpu: list[float] = []
        for sc, p in self.jobs:
            t, c = time.perf_counter(), time.process_time()
            self._run(sc, p, self.cluster)
            cpu.append(time.process_time() - c)
            lat.append(time.perf_counter() - t)
        return lat, cpu


def child(tree: str, paths: list[str], profiles: list[str]) -> int:
    """A tree's side of --base: set up, say so on stdout, then one round per 'round' line on stdin."""
    sys.path.insert(0, tree)
    bench = Bench(paths, profiles)
    print(json.dumps({"ready": True, "runs": len(bench.jobs), "scenarios": bench.scenarios,
                      "failures": bench.failures, "load_s": bench.load_s, "warm_s": bench.warm_s}), flush=True)
    for line in sys.stdin:
        if line.strip() != "round":
            break
        lat, cpu = bench.round()
        print(json.dumps({"lat": lat, "cpu": cpu}), flush=True)
    return 0


def summary(lat: list[float], cpu: list[float], rounds: int) -> dict:
    return {"runs": len(cpu), "p50_ms": statistics.median(cpu) * 1000, "p90_ms": pct(cpu, 90) * 1000,
            "p99_ms": pct(cpu, 99) * 1000, "cpu_s_round": sum(cpu) / rounds, "wall_s_round": sum(lat) / rounds,
            "wall_p50_ms": statistics.median(lat) * 1000}


def side_by_side(args) -> int:
    """--base: both trees in child processes, rounds alternated, one table. A SIGTERM (a `timeout`)
    ends it through the cleanup: the children stop and the temporary worktree is removed."""
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    base_dir = Path(tempfile.mkdtemp(prefix="bench-scenarios-base-")) / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--quiet", "--detach", str(base_dir), args.base],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    paths = [str(base_dir / p) if not os.path.isabs(p) else p for p in args.paths]
    trees = [(f"base {args.base}", base_dir), ("this tree", ROOT)]
    procs = []
    try:
        for tag, tree in trees:
            env = {**os.environ, "PYTHONPATH": str(tree)}
            cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(tree), *paths]
            for p in args.profile:
                cmd += ["--profile", p]
            procs.append((tag, subprocess.Popen(cmd, env=env, cwd=tree, stdin=subprocess.PIPE,
                                                stdout=subprocess.PIPE, text=True)))
        heads = {}
        for tag, p in procs:             # the warm-ups overlap (nothing is timed there); the rounds never do
            line = p.stdout.readline()
            if not line:
                raise SystemExit(f"{tag}: the child ended before its warm-up finished (its stderr is above)")
            heads[tag] = json.loads(line)
            print(f"{tag}: {heads[tag]['runs']} runs per round, warm-up {heads[tag]['warm_s']:.1f} s, "
                  f"unexpected outcomes {heads[tag]['failures']}", file=sys.stderr, flush=True)
        samples: dict[str, tuple[list[float], list[float]]] = {tag: ([], []) for tag, _ in procs}
        for r in range(args.repeat):
            for tag, p in procs:
                p.stdin.write("round\n")
                p.stdin.flush()
                got = json.loads(p.stdout.readline())
                samples[tag][0].extend(got["lat"])
                samples[tag][1].extend(got["cpu"])
                print(f"round {r + 1}, {tag}: {sum(got['cpu']):.2f} CPU-s, CPU p50 "
                      f"{statistics.median(got['cpu']) * 1000:.1f} ms", file=sys.stderr, flush=True)
    finally:
        for _, p in procs:
            if p.stdin:
                p.stdin.close()
            p.wait()
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base_dir)], check=False)
    rows = {tag: summary(*samples[tag], args.repeat) for tag, _ in procs}
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"# {args.repeat} rounds alternated, the base's library, load average {load}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("| tree | runs | CPU p50 ms | CPU p90 ms | CPU p99 ms | CPU-s per round | wall s per round |")
    print("|---|---|---|---|---|---|---|")
    for tag, s in rows.items():
        print(f"| {tag} | {s['runs']:,} | {s['p50_ms']:.1f} | {s['p90_ms']:.1f} | {s['p99_ms']:.1f} | "
              f"{s['cpu_s_round']:.2f} | {s['wall_s_round']:.2f} |")
    (b, bs), (_, cs) = rows.items()
    print(f"this tree / base: p50 {cs['p50_ms'] / bs['p50_ms']:.2f}x, p90 {cs['p90_ms'] / bs['p90_ms']:.2f}x, "
          f"CPU per round {cs['cpu_s_round'] / bs['cpu_s_round']:.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "heads": heads, "load": os.getloadavg()}, indent=1))
    slower = args.max_ratio is not None and cs["p50_ms"] / bs["p50_ms"] > args.max_ratio
    if slower:
        print(f"this tree's CPU p50 is above {args.max_ratio:.2f}x the base's")
    return 1 if any(h["failures"] for h in heads.values()) or slower else 0


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        ap = argparse.ArgumentParser()
        ap.add_argument("paths", nargs="*")
        ap.add_argument("--profile", action="append", default=[])
        a = ap.parse_args(sys.argv[3:])
        return child(sys.argv[2], a.paths, a.profile)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", default=["scenarios"])
    ap.add_argument("--repeat", type=int, default=3, help="measured rounds (default 3)")
    ap.add_argument("--profile", action="append", default=[], help="only these profiles")
    ap.add_argument("--base", default=None, metavar="REV",
                    help="also measure this git revision, side by side in one invocation")
    ap.add_argument("--json", default=None, metavar="FILE", help="with --base: write the summaries here")
    ap.add_argument("--max-ratio", type=float, default=None, metavar="R",
                    help="with --base: exit 1 when this tree's CPU p50 is above R times the base's (a review's "
                         "check that a change kept the p50; both trees measured in turn under the same load)")
    args = ap.parse_args()
    if args.base:
        return side_by_side(args)
    sys.path.insert(0, str(ROOT))
    bench = Bench(args.paths, args.profile)
    lat: list[float] = []
    cpu: list[float] = []
    t0 = time.perf_counter()
    for _ in range(args.repeat):
        w, c = bench.round()
        lat += w
        cpu += c
    total = time.perf_counter() - t0
    print(f"scenario files loaded: {bench.scenarios} scenarios in {bench.load_s * 1000:.0f} ms")
    print(f"runs per round: {len(bench.jobs)} (scenario x profile); unexpected outcomes in warm-up round: "
          f"{bench.failures}")
    print(f"warm-up round: {bench.warm_s:.2f} s")
    print(f"measured: {len(lat)} runs in {total:.2f} s = {len(lat) / total:.1f} scenarios/s")
    print(f"latency ms: median {statistics.median(lat) * 1000:.1f}, p90 {pct(lat, 90) * 1000:.1f}, "
          f"p99 {pct(lat, 99) * 1000:.1f}, max {max(lat) * 1000:.1f}")
    print(f"CPU ms: median {statistics.median(cpu) * 1000:.1f}, p90 {pct(cpu, 90) * 1000:.1f}, "
          f"p99 {pct(cpu, 99) * 1000:.1f}, max {max(cpu) * 1000:.1f}")
    print(f"whole library, one round: {sum(lat) / args.repeat:.2f} s wall, {sum(cpu) / args.repeat:.2f} CPU-s "
          f"(serial, one core)")
    if hasattr(os, "getloadavg"):
        print("load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 1 if bench.failures else 0


if __name__ == "__main__":
    sys.exit(main())
