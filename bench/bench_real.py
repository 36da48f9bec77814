"""Real-engine speed: seconds per scenario on the real Karpenter-on-Azure controller, by phase.

    python bench/bench_real.py [paths...] [-k TEXT] [--profile upstream] [--limit N] [--repeat N] [--json FILE]

Runs each (scenario, profile) once on `--engine real` (the local backend's API server, kube-scheduler
and kube-controller-manager shared by every run, as under pytest) and prints, per run, the verdict,
the wall seconds, the run's start (the cluster's reset, the fake, the controller kept from the previous
run or started: keeper.py), whether the controller was kept, the time the initial settle took and why it
ended; then median and p90. Needs the control plane and the
controller built (`python -m harness.backends build`, `build --controller`). Timings are printed,
never asserted.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.backends.registry import close_shared, shared_cluster  # noqa: E402
from harness.runner.engines import get_engine  # noqa: E402
from harness.runner.engines.base import execute, verdict  # noqa: E402
from harness.scenario.load import find_scenario_files, load_scenarios  # noqa: E402


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", default=["scenarios"])
    ap.add_argument("-k", default=None, help="only scenarios whose name contains this text")
    ap.add_argument("--profile", default="upstream")
    ap.add_argument("--limit", type=int, default=0, help="at most this many runs")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run the selection this many times over (a scenario's spread, not one sample)")
    ap.add_argument("--json", default=None, help="write the per-run rows here")
    args = ap.parse_args()
    engine = get_engine("real")
    ok, why = engine.available("local")
    if not ok:
        print(f"real engine unavailable: {why}", file=sys.stderr)
        return 2
    jobs = [sc for f in find_scenario_files(args.paths) for sc in load_scenarios(f)
            if args.profile in sc.profiles and (not args.k or args.k in sc.name)]
    if args.limit:
        jobs = jobs[:args.limit]
    jobs = jobs * max(args.repeat, 1)
    rows = []
    t0 = time.monotonic()
    try:
        cluster = shared_cluster("local", **engine.cluster_options)
        print(f"cluster ready in {time.monotonic() - t0:.1f}s; {len(jobs)} run(s); load {os.getloadavg()[0]:.1f}",
              flush=True)
        for sc in jobs:
            o = execute(engine, sc, args.profile, cluster)
            t = o.result.timings
            row = {"scenario": sc.name, "verdict": verdict(o), "seconds": round(o.seconds, 2),
                   "start": round(t.get("start", 0.0), 2), "settle": round(t.get("settle", 0.0), 2),
                   "settled": next((x[len("[settle] "):] for x in reversed(o.result.trace) if x.startswith("[settle]")), ""),
                   "controller": "kept" if any(x.startswith("[controller] run ") and not x.startswith("[controller] run 1 ")
                                               for x in o.result.trace) else "started"}
            rows.append(row)
            print(f"{row['verdict']:8} {row['seconds']:6.1f}s  start {row['start']:4.1f}s ({row['controller']:7})  "
                  f"settle {row['settle']:5.1f}s  "
                  f"{sc.name}  ({row['settled'] or o.skipped or ''})", flush=True)
    finally:
        close_shared()
    ran = [r["seconds"] for r in rows if r["verdict"] != "skipped"]
    if ran:
        print(f"{len(ran)} run(s): median {statistics.median(ran):.1f}s, p90 {_pct(ran, 0.9):.1f}s, "
              f"total {sum(ran):.0f}s; wall {time.monotonic() - t0:.0f}s; load {os.getloadavg()[0]:.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
