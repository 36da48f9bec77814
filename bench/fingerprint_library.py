"""Behavior fingerprint of the whole scenario library on the embedded backend.

    python bench/fingerprint_library.py [paths...] [--out FILE] [--against FILE]

Runs every (scenario, profile) pair once and writes, per pair, a digest of everything the run
produced (node labels with their writers, NodeClaims, pods, events, dropped SKUs, the fake's
snapshot, the loop trace, mismatches; wall-clock timings excluded: harness/judge/fingerprint.py).
A refactor that claims "no behavior change" runs this before and after and compares: `--against`
prints the pairs whose digest moved and exits 1 if any did.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.backends.embedded import EmbeddedBackend  # noqa: E402
from harness.runner.engines import run  # noqa: E402
from harness.judge.fingerprint import fingerprint as run_fingerprint  # noqa: E402
from harness.scenario.load import find_scenario_files, load_scenarios  # noqa: E402


def fingerprint(paths: list[str]) -> dict[str, str]:
    cluster = EmbeddedBackend().start()
    out: dict[str, str] = {}
    try:
        for f in find_scenario_files(paths):
            for sc in load_scenarios(f):
                for profile in sc.profiles:
                    out[f"{f}::{sc.name}[{profile}]"] = run_fingerprint(run(sc, profile, cluster))
    finally:
        cluster.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", default=["scenarios"])
    ap.add_argument("--out", help="write the fingerprint (JSON) here")
    ap.add_argument("--against", help="compare with a fingerprint written earlier")
    args = ap.parse_args()
    fp = fingerprint(args.paths)
    if args.out:
        Path(args.out).write_text(json.dumps(fp, indent=1, sort_keys=True) + "\n")
    print(f"{len(fp)} runs fingerprinted")
    if args.against:
        old = json.loads(Path(args.against).read_text())
        moved = sorted(k for k in old.keys() | fp.keys() if old.get(k) != fp.get(k))
        for k in moved:
            print(f"moved: {k}  {old.get(k)} -> {fp.get(k)}")
        print(f"{len(moved)} of {len(old.keys() | fp.keys())} runs differ")
        return 1 if moved else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
