"""The input fuzzer of tests/runner/test_fuzz_inputs.py at a larger count (issue 12):
python bench/fuzz_inputs.py --count 10000 --seed 1 --run-every 25
Prints the counts; exit 1 with the first traceback if any mutant raised something other than a
SourceError (or crashed a run)."""
from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--run-every", type=int, default=25, help="run every Nth mutant that loads (0: none)")
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("fuzz_inputs", HERE.parent / "tests" / "runner" / "test_fuzz_inputs.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_inputs"] = mod
    spec.loader.exec_module(mod)

    def progress(t):
        if t.tried % 250 == 0:
            print(f"  {t.tried} tried, {t.loaded} loaded, {len(t.tracebacks)} tracebacks", file=sys.stderr, flush=True)

    t = mod.fuzz(args.count, args.seed, run_every=args.run_every, progress=progress)
    print(f"fuzz: {t.tried} mutants (seed {args.seed}), {t.loaded} loaded, {t.source_errors} SourceErrors, "
          f"{t.ran} run, {len(t.tracebacks)} tracebacks")
    if t.tracebacks:
        print(t.tracebacks[0])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
