"""Benchmark: a support engineer's path on a customer-sized dump, `harness new` then `harness run`.

    python bench/bench_dump_scale.py [--nodes 100,500,1000] [--shape mixed|ticket] [--profile upstream]
                                     [--base REV] [--phases/--no-phases] [--keep DIR]
                                     [--formats yaml,json] [--run/--no-run]

Per size: a seeded dump (bench/gen_cluster_dump.py, written once per size and shape), then `python -m harness
new DUMP --name ...` and `python -m harness run SCENARIO --profile P` (provisioning and the disruption passes
that follow, to steady state), each in its own process (`--formats yaml,json`: `harness new` on either form of the dump, and whether
the two scenarios are the same bytes): CPU seconds (user + sys of the child, the figure to
compare on a loaded machine), wall seconds and peak RSS. `--phases` runs the scenario a second time in a child
that times the run's phases by wrapping them (seed, provisioning, kube-scheduler, lifecycle, garbage
collection, each disruption method, orchestration, termination, the checks, the report): CPU seconds per
phase, inclusive (a phase inside another counts in both). The growth exponent between sizes is
log(cpu2/cpu1)/log(n2/n1).

`--base REV` measures REV too, in the same run: `git worktree add` into a temporary directory, the same dumps
and commands with PYTHONPATH at that tree, the two side by side. The numbers: docs/benchmarks/customer-scale.md.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (label, module, attribute path): what --phases times; a name the measured tree lacks is left out
PHASES = [
    ("load scenario", "harness.scenario.load", "load_scenarios"),
    ("prepare process", "harness.runner.engines.simulated", "prepare_process"),
    ("apply", "harness.loop.simulation", "Simulation.apply"),
    ("seed", "harness.loop.simulation", "Simulation.seed"),
    ("converge", "harness.loop.simulation", "Simulation.converge"),
    ("  provisioning", "harness.loop.provisioning.provisioner", "Provisioner.reconcile"),
    ("  kube-scheduler", "harness.loop.kube.binding", "KubeScheduler.reconcile"),
    ("  launch", "harness.loop.lifecycle.launch", "Launch.reconcile"),
    ("  lifecycle", "harness.loop.simulation", "Simulation._lifecycle"),
    ("  liveness", "harness.loop.lifecycle.liveness", "Liveness.reconcile"),
    ("  garbage collection", "harness.loop.lifecycle.garbagecollection", "GarbageCollection.reconcile"),
    ("  disruption", "harness.loop.simulation", "Simulation._disrupt"),
    ("    pod events", "harness.loop.lifecycle.podevents", "PodEvents.reconcile"),
    ("    pdb status", "harness.loop.kube.pdbstatus", "PDBStatus.reconcile"),
    ("    expiration", "harness.loop.lifecycle.expiration", "Expiration.reconcile"),
    ("    nodeclaim conditions", "harness.loop.lifecycle.conditions", "NodeClaimDisruption.reconcile"),
    ("    disruption controller", "harness.loop.disruption.controller", "DisruptionController.reconcile"),
    ("      candidates", "harness.loop.disruption.candidates", "Cluster.candidates"),
    ("      method emptiness", "harness.loop.disruption.consolidation", "Emptiness.compute_commands"),
    ("      method drift", "harness.loop.disruption.drift", "Drift.compute_commands"),
    ("      method multi-node", "harness.loop.disruption.consolidation", "MultiNode.compute_commands"),
    ("      method single-node", "harness.loop.disruption.consolidation", "SingleNode.compute_commands"),
    ("      consolidation compute", "harness.loop.disruption.consolidation", "Consolidation.compute"),
    ("      validation", "harness.loop.disruption.consolidation", "Consolidation.validate"),
    ("      validation emptiness", "harness.loop.disruption.consolidation", "Emptiness.validate"),
    ("      scheduling simulation", "harness.loop.disruption.simulate", "Simulator.simulate"),
    ("    orchestration", "harness.loop.disruption.orchestration", "Orchestration.reconcile"),
    ("    termination", "harness.loop.lifecycle.nodetermination", "NodeTermination.reconcile"),
    ("finish (why views)", "harness.runner.engines.simulated", "SimulatedRun.finish"),
    ("checks", "harness.runner.engines.base", "_check"),
    ("run_scenario", "harness.judge.explore", "run_scenario"),
    ("cmd_run", "harness.cli", "cmd_run"),
]


def child_phases(argv: list[str]) -> int:
    """In the measured tree's interpreter: wrap PHASES, run `harness run ARGV`, print the times as JSON."""
    import functools
    import importlib
    times: dict[str, list[float]] = {}
    extra: dict = {}

    def wrap(label: str, fn):
        active = [0]

        @functools.wraps(fn)
        def timed(*a, **kw):
            if active[0]:
                return fn(*a, **kw)
            active[0] += 1
            t = time.process_time()
            try:
                out = fn(*a, **kw)
            finally:
                active[0] -= 1
                slot = times.setdefault(label, [0.0, 0])
                slot[0] += time.process_time() - t
                slot[1] += 1
            if label == "run_scenario" and getattr(out, "result", None) is not None:
                r = out.result
                extra["iterations"] = r.iterations
                extra["nodes"] = len(r.nodes)
                extra["nodes deleted"] = sum(1 for n in r.nodes if getattr(n, "deleted", None))
            return out
        return timed

    for label, mod_name, path in PHASES:
        try:
            mod = importlib.import_module(mod_name)
        except ImportError:
            continue
        owner, parts = mod, path.split(".")
        for p in parts[:-1]:
            owner = getattr(owner, p, None)
        fn = getattr(owner, parts[-1], None) if owner is not None else None
        if fn is None or (isinstance(owner, type) and parts[-1] not in owner.__dict__):
            continue
        wrapped = wrap(label, fn)
        setattr(owner, parts[-1], wrapped)
        if owner is mod:           # a function other modules imported by name: theirs too
            for m in list(sys.modules.values()):
                if getattr(m, parts[-1], None) is fn:
                    setattr(m, parts[-1], wrapped)
    from harness.cli import main
    t0 = time.process_time()
    sys.argv = ["harness", "run", *argv]
    with open(os.devnull, "w") as null:
        old = sys.stdout
        sys.stdout = null
        try:
            rc = main()
        except SystemExit as e:
            rc = e.code
        finally:
            sys.stdout = old
    total = time.process_time() - t0
    print(json.dumps({"total": total, "rc": rc, "phases": times, "extra": extra}))
    return 0


def measure(cmd: list[str], env: dict, cwd: Path) -> dict:
    """A child's CPU (user + sys), wall and peak RSS (os.wait4's rusage)."""
    t0 = time.perf_counter()
    with open(cwd / "child.out", "w") as out, open(cwd / "child.err", "w") as err:
        p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    return {"cpu": ru.ru_utime + ru.ru_stime, "wall": wall, "rss_mb": ru.ru_maxrss / 1024,
            "rc": os.waitstatus_to_exitcode(status), "stdout": (cwd / "child.out").read_text()}


def dump_for(work: Path, nodes: int, shape: str, seed: int, fmt: str = "yaml") -> Path:
    path = work / f"dump-{shape}-{nodes}-s{seed}.{fmt}"
    if not path.exists():
        subprocess.run([sys.executable, str(ROOT / "bench" / "gen_cluster_dump.py"), "--nodes", str(nodes),
                        "--shape", shape, "--seed", str(seed), "--out", str(path), "--format", fmt], check=True)
    return path


def measure_tree(tree: Path, tag: str, dump: Path, work: Path, args) -> dict:
    # the loaded-scenario cache off (harness/scenario/loadcache.py): a tree whose code just changed misses it and
    # writes it, the other may hit it, which skews a side-by-side run (~190 MB peak RSS at 1,000 nodes)
    env = {**os.environ, "PYTHONPATH": str(tree), "HARNESS_SCENARIO_CACHE": "0"}
    d = work / f"{tag}-{dump.stem}"
    d.mkdir(exist_ok=True)
    name = f"scale-{dump.stem.split('-', 1)[1].replace('_', '-')}".lower()
    out = {"new": measure([sys.executable, "-m", "harness", "new", str(dump), "--name", name, "-o",
                           str(d / "s.scenario.yaml"), "--force"], env, d)}
    for fmt in args.formats[1:]:            # the same dump in another form: its own time, the same scenario
        other = dump.with_suffix(f".{fmt}")
        out[f"new {fmt}"] = r = measure([sys.executable, "-m", "harness", "new", str(other), "--name", name, "-o",
                                         str(d / f"s-{fmt}.scenario.yaml"), "--force"], env, d)
        r["same scenario"] = r["rc"] == 0 and (d / f"s-{fmt}.scenario.yaml").read_bytes() == \
            (d / "s.scenario.yaml").read_bytes()
    if not args.run:
        return out
    if out["new"]["rc"] != 0:
        print(f"  {tag}: harness new failed: {(d / 'child.err').read_text()[-2000:]}", file=sys.stderr)
        made = work / f"current-{dump.stem}" / "s.scenario.yaml"
        if tag == "current" or not made.exists():
            return out
        # the base cannot read the dump (a 4 MiB bound before): its run is timed on the current tree's scenario
        print(f"  {tag}: running the current tree's scenario", file=sys.stderr)
        (d / "s.scenario.yaml").write_text(made.read_text().replace(str(ROOT), str(tree)))
    out["run"] = measure([sys.executable, "-m", "harness", "run", "s.scenario.yaml", "--profile", args.profile],
                         env, d)
    if args.phases:
        ph = measure([sys.executable, str(Path(__file__).resolve()), "--child-phases", "s.scenario.yaml",
                      "--profile", args.profile], env, d)
        try:
            out["phases"] = json.loads(ph["stdout"].strip().splitlines()[-1])
        except (ValueError, IndexError):
            print(f"  {tag}: phases failed: {(d / 'child.err').read_text()[-2000:]}", file=sys.stderr)
    return out


def exponent(points: list[tuple[int, float]]) -> str:
    if len(points) < 2 or points[0][1] <= 0:
        return "-"
    (n1, c1), (n2, c2) = points[0], points[-1]
    return f"{math.log(c2 / c1) / math.log(n2 / n1):.2f}"


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child-phases":
        return child_phases(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", default="100,500,1000", help="sizes, comma-separated")
    ap.add_argument("--shape", default="mixed", choices=["mixed", "ticket"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profile", default="upstream")
    ap.add_argument("--base", default=None, metavar="REV", help="also measure this git revision, side by side")
    ap.add_argument("--phases", action=argparse.BooleanOptionalAction, default=True,
                    help="time the run's phases in a second child (default: on)")
    ap.add_argument("--keep", default=None, metavar="DIR", help="dumps and scenarios here (default: a temp dir)")
    ap.add_argument("--json", default=None, metavar="FILE", help="write every measurement here")
    ap.add_argument("--formats", default="yaml", help="dump forms to time `harness new` on, comma-separated: "
                    "yaml, json (`kubectl get -o json`); the first is the one run")
    ap.add_argument("--run", action=argparse.BooleanOptionalAction, default=True,
                    help="time `harness run` too (default: on)")
    args = ap.parse_args()
    args.formats = args.formats.split(",")
    args.phases = args.phases and args.run
    sizes = [int(x) for x in args.nodes.split(",")]
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="dump-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    trees = [("current", ROOT)]
    base_dir = None
    if args.base:
        base_dir = Path(tempfile.mkdtemp(prefix="dump-scale-base-")) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--quiet", "--detach", str(base_dir), args.base],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        trees.append((f"base {args.base}", base_dir))
    results: dict = {}
    try:
        for n in sizes:
            dump = [dump_for(work, n, args.shape, args.seed, fmt) for fmt in args.formats][0]
            for tag, tree in trees:
                print(f"{n} nodes, {tag} ...", file=sys.stderr, flush=True)
                results.setdefault(tag, {})[n] = r = measure_tree(tree, tag.split()[0], dump, work, args)
                line = f"  new {r['new']['cpu']:.1f} CPU-s {r['new']['wall']:.1f} s {r['new']['rss_mb']:.0f} MB"
                for fmt in args.formats[1:]:
                    o = r[f"new {fmt}"]
                    line += (f"; new ({fmt}) {o['cpu']:.1f} CPU-s {o['wall']:.1f} s {o['rss_mb']:.0f} MB, "
                             f"{'the same scenario' if o['same scenario'] else 'ANOTHER SCENARIO'}")
                if "run" in r:
                    line += (f"; run {r['run']['cpu']:.1f} CPU-s {r['run']['wall']:.1f} s {r['run']['rss_mb']:.0f} MB"
                             f" (rc {r['run']['rc']})")
                print(line, file=sys.stderr, flush=True)
    finally:
        if base_dir is not None:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base_dir)], check=False)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"# {args.shape} dumps, profile {args.profile}, load average {load}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    others = "".join(f" new ({fmt}) CPU-s | wall s | MB |" for fmt in args.formats[1:])
    print(f"| tree | nodes | pods | new CPU-s | new wall s | new MB |{others} run CPU-s | run wall s | run MB "
          "| nodes deleted |")
    print("|---|---|---|---|---|---|" + "---|---|---|" * len(args.formats[1:]) + "---|---|---|---|")
    for tag, per in results.items():
        for n, r in per.items():
            run = r.get("run", {})
            extra = (r.get("phases") or {}).get("extra", {})
            new = (f"{r['new']['cpu']:.1f} | {r['new']['wall']:.1f} | {r['new']['rss_mb']:.0f}" if r["new"]["rc"] == 0
                   else "refused | | ")
            for fmt in args.formats[1:]:
                o = r[f"new {fmt}"]
                new += (f" | {o['cpu']:.1f} | {o['wall']:.1f} | {o['rss_mb']:.0f}" if o["rc"] == 0 else " | refused | | ")
            print(f"| {tag} | {n:,} | {pods_in(work, n, args)} | {new} | "
                  f"{run.get('cpu', float('nan')):.1f} | {run.get('wall', float('nan')):.1f} | "
                  f"{run.get('rss_mb', float('nan')):.0f} | {extra.get('nodes deleted', '-')} |")
        runs = [(n, r["run"]["cpu"]) for n, r in per.items() if "run" in r]
        news = [(n, r["new"]["cpu"]) for n, r in per.items() if r["new"]["rc"] == 0]
        print(f"\n{tag}: growth exponent {sizes[0]}->{sizes[-1]} nodes: new {exponent(news)}, run {exponent(runs)}\n")
    if args.phases:
        for tag, per in results.items():
            labels = [lab for lab, *_ in PHASES]
            print(f"\n## phases, {tag} (CPU-s, inclusive; calls)\n")
            print("| phase | " + " | ".join(f"{n:,}" for n in per) + " |")
            print("|---|" + "---|" * len(per))
            for lab in labels:
                cells = []
                for n, r in per.items():
                    t = ((r.get("phases") or {}).get("phases") or {}).get(lab)
                    cells.append(f"{t[0]:.2f} ({t[1]})" if t else "-")
                if any(c != "-" for c in cells):
                    print(f"| {lab} | " + " | ".join(cells) + " |")
            print("| iterations | " + " | ".join(str(((r.get("phases") or {}).get("extra") or {}).get("iterations", "-"))
                                                 for r in per.values()) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))
    print(f"(dumps and scenarios in {work})", file=sys.stderr)
    return 0


def pods_in(work: Path, n: int, args) -> str:
    path = work / f"dump-{args.shape}-{n}-s{args.seed}.yaml"
    if not path.exists():
        return "-"
    with open(path) as f:
        head = f.readline()
    return head.split(", ")[-1].split(" pods")[0] if "pods" in head else "-"


if __name__ == "__main__":
    raise SystemExit(main())
