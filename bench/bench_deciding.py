"""What `harness run --deciding` costs against the plain run, on a customer-sized dump's scenario.

    python bench/bench_deciding.py [--nodes 1000,1300] [--shape mixed] [--seed 1] [--profile v1.12.0]
                                   [--base REV] [--work DIR] [--repeat N]

Per size: the seeded dump (bench/gen_cluster_dump.py), its scenario (`harness new`, this tree's), then
`harness run SCENARIO --profile P --no-deciding` and `--deciding --json`, each in its own process under
`/usr/bin/time -v` with HARNESS_SCENARIO_CACHE=0, one after the other; CPU-s is user + sys of the process.
`--base REV` runs the same pair on REV too (`git archive` into a temporary directory), alternating the
trees, and says whether the two trees' `--deciding` answers are the same (the JSON `deciding` blocks, the
run count and CPU seconds left out). Numbers only: nothing here is asserted (issue 82's bound, `--deciding`
at most twice the plain run, is read off the table). The load average is printed beside each pair.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable


def timed(cmd: list[str], cwd: Path, out: Path) -> dict:
    """cmd under /usr/bin/time -v, stdout to `out`: CPU-s (user + sys), wall, peak RSS in MB."""
    env = {**os.environ, "HARNESS_SCENARIO_CACHE": "0"}
    with out.open("w") as fh:
        p = subprocess.run(["/usr/bin/time", "-v", *cmd], cwd=cwd, env=env, stdout=fh, stderr=subprocess.PIPE,
                           text=True)
    err = p.stderr

    def field(name: str) -> str:
        m = re.search(rf"^\s*{re.escape(name)}: (.+)$", err, re.M)
        return m.group(1).strip() if m else "0"
    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)")
    parts = [float(x) for x in wall.split(":")]
    seconds = sum(x * 60 ** i for i, x in enumerate(reversed(parts)))
    return {"cpu": float(field("User time (seconds)")) + float(field("System time (seconds)")), "wall": seconds,
            "rss_mb": int(field("Maximum resident set size (kbytes)")) / 1024, "rc": p.returncode}


def deciding_blocks(path: Path) -> list[dict]:
    """The `deciding` blocks of a `--json` run."""
    try:
        data = json.loads(path.read_text())
    except ValueError:
        return [{"unreadable": str(path)}]
    found: list[dict] = []

    def walk(x):
        if isinstance(x, dict):
            if "deciders" in x and "suspects" in x:
                found.append(x)
                return
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(data)
    return found


def answers(blocks: list[dict]) -> list[dict]:
    """The blocks without what they cost."""
    return [{k: v for k, v in b.items() if k not in ("runs", "cpuSeconds")} for b in blocks]


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", default="1000", help="comma-separated sizes")
    ap.add_argument("--shape", default="mixed", choices=("mixed", "ticket"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profile", default="v1.12.0")
    ap.add_argument("--base", help="a git revision measured beside this tree")
    ap.add_argument("--work", type=Path, help="where dumps, scenarios and outputs go (default: a temporary dir)")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-deciding-"))
    work.mkdir(parents=True, exist_ok=True)
    trees = [("now", ROOT)]
    base_dir = None
    if args.base:
        base_dir = Path(tempfile.mkdtemp(prefix="bench-deciding-base-"))
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.base], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(base_dir)], input=archive.stdout, check=True)
        trees.insert(0, ("base", base_dir))
    rows = []
    try:
        for n in [int(x) for x in args.nodes.split(",")]:
            dump = work / f"d{n}-{args.shape}-{args.seed}.yaml"
            scenario = work / f"s{n}-{args.shape}-{args.seed}.scenario.yaml"
            if not dump.exists():
                subprocess.run([PYTHON, "bench/gen_cluster_dump.py", "--nodes", str(n), "--shape", args.shape,
                                "--seed", str(args.seed), "--out", str(dump)], cwd=ROOT, check=True)
            if not scenario.exists():
                subprocess.run([PYTHON, "-m", "harness", "new", str(dump), "--name", f"scale-{n}", "-o", str(scenario)],
                               cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for r in range(args.repeat):
                for tag, tree in trees:
                    run = [PYTHON, "-m", "harness", "run", str(scenario), "--profile", args.profile]
                    before = load()
                    plain = timed(run + ["--no-deciding"], tree, work / f"{tag}-{n}-{r}-plain.txt")
                    out = work / f"{tag}-{n}-{r}-deciding.json"
                    deciding = timed(run + ["--deciding", "--json"], tree, out)
                    blocks = deciding_blocks(out)
                    deciding["runs"] = sum(b.get("runs") or 0 for b in blocks)
                    deciding["counterfactual_cpu"] = sum(b.get("cpuSeconds") or 0 for b in blocks)
                    row = {"tree": tag, "nodes": n, "plain": plain, "deciding": deciding, "load": f"{before} / {load()}",
                           "answers": answers(blocks)}
                    rows.append(row)
                    print(f"{tag} {n} nodes: plain {plain['cpu']:.1f} CPU-s {plain['rss_mb']:.0f} MB {plain['wall']:.0f}s"
                          f" | --deciding {deciding['cpu']:.1f} CPU-s {deciding['rss_mb']:.0f} MB {deciding['wall']:.0f}s"
                          f" ({deciding['runs']} runs, {deciding['counterfactual_cpu']:.1f} CPU-s) | ratio {deciding['cpu'] / plain['cpu']:.2f} | load {row['load']}",
                          flush=True)
    finally:
        if base_dir is not None:
            shutil.rmtree(base_dir, ignore_errors=True)
    print("\n| tree | nodes | plain run | `--deciding` | ratio | peak RSS plain / deciding | wall plain / deciding |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        p, d = row["plain"], row["deciding"]
        print(f"| {row['tree']} | {row['nodes']:,} | {p['cpu']:.1f} CPU-s | {d['cpu']:.1f} CPU-s ({d['runs']} runs again: {d['counterfactual_cpu']:.1f}) | "
              f"{d['cpu'] / p['cpu']:.1f} | {p['rss_mb']:.0f} MB / {d['rss_mb']:.0f} MB | {p['wall']:.0f} s / {d['wall']:.0f} s |")
    if args.base:
        for n in sorted({row["nodes"] for row in rows}):
            got = {row["tree"]: row["answers"] for row in rows if row["nodes"] == n}
            print(f"{n} nodes: the two trees' --deciding answers are "
                  + ("the same" if got.get("base") == got.get("now") else "DIFFERENT"))
    print(f"outputs in {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
