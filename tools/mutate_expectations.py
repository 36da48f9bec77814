"""Mutation test of the scenario library's expectations (issue 29), the whole run (nightly):

    python tools/mutate_expectations.py [paths...] [--sample N --seed S]

Every scalar an expectation states (and each list element where a change cannot only weaken the
check) is changed, one at a time; the scenario must then fail or be refused by validation (or be an
equivalent mutant: a disruption command renumbered onto one that did the same). Runs
each scenario document once per profile on the embedded backend and re-checks only the recorded
results per mutant (harness/judge/mutation.py says why that is the same verdict as a full run).
Prints the counts and every survivor as `file:line: path: old -> new`; exit 1 if any survived or
a mutant raised a traceback.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.backends.embedded import EmbeddedBackend  # noqa: E402
from harness.judge.mutation import library, run_mutation  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", default=[str(ROOT / "scenarios")])
    ap.add_argument("--sample", type=int, default=None, help="judge only N mutants, chosen with --seed")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show-skipped", action="store_true", help="list the documents not run in-process")
    args = ap.parse_args()
    t0, c0 = time.perf_counter(), time.process_time()
    scenarios = library(args.paths)
    cluster = EmbeddedBackend().start()
    try:
        t = run_mutation(scenarios, cluster, sample=args.sample, seed=args.seed)
    finally:
        cluster.close()
    for m in t.survivors:
        print(f"{m.describe()}: survived (every run still passes)")
    for e in t.errors:
        print(e)
    if args.show_skipped:
        for s in t.skipped:
            print(f"skipped: {s}")
    print(f"mutation: {t.documents} documents ({t.runs} runs, {len(t.skipped)} skipped), {t.mutants} mutants: "
          f"{t.killed} killed, {t.refused} refused by validation, {t.equivalent} equivalent, {len(t.survivors)} survived, "
          f"{len(t.errors)} tracebacks; recording {t.record_seconds:.1f} s, mutants {t.mutate_seconds:.1f} s, "
          f"total {time.perf_counter() - t0:.1f} s wall, {time.process_time() - c0:.1f} CPU-s")
    return 1 if t.survivors or t.errors else 0


if __name__ == "__main__":
    sys.exit(main())
