"""The input fuzzer of tests/judge/test_fuzz_inputs.py at a larger count (issue 12):
python bench/fuzz_inputs.py --count 10000 --seed 1 --run-every 25
and over steps (issue 29: library scenarios with random steps, each loaded and, when it loads, run):
python bench/fuzz_inputs.py --steps --count 10000 --seed 1
Prints the counts; exit 1 with the first failure if any input raised something other than a
SourceError (or crashed a run), or was refused without a line (`file: reason`, not `file:line:
reason`). `--out DIR` keeps each failing input there as a file, to replay with `harness validate`
or `harness run` (the nightly job uploads it). docs/reliability.md has the latest numbers."""
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
    ap.add_argument("--steps", action="store_true", help="fuzz steps: random steps on library scenarios, every "
                                                          "input that loads is run")
    ap.add_argument("--out", type=Path, default=None, help="keep each failing input in this directory")
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("fuzz_inputs", HERE.parent / "tests" / "judge" / "test_fuzz_inputs.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_inputs"] = mod
    spec.loader.exec_module(mod)

    def progress(t):
        if t.tried % 250 == 0:
            print(f"  {t.tried} tried, {t.loaded} loaded, {len(t.tracebacks)} tracebacks", file=sys.stderr, flush=True)

    if args.steps:
        t = mod.fuzz_steps(args.count, args.seed, progress=progress)
    else:
        t = mod.fuzz(args.count, args.seed, run_every=args.run_every, progress=progress)
    print(f"fuzz{' steps' if args.steps else ''}: {t.tried} inputs (seed {args.seed}), {t.loaded} loaded, "
          f"{t.source_errors} SourceErrors ({len(t.no_line)} without a line), {t.ran} run, "
          f"{len(t.tracebacks)} tracebacks")
    if args.out is not None and t.inputs:
        args.out.mkdir(parents=True, exist_ok=True)
        for name, data in t.inputs:
            stem = name.removesuffix(".yaml").removesuffix(".scenario")
            (args.out / f"seed{args.seed}-{stem}.scenario.yaml").write_bytes(data)
        print(f"kept {len(t.inputs)} failing inputs in {args.out}")
    for text in (t.tracebacks[:1] + t.no_line[:3]):
        print(text)
    return 1 if t.tracebacks or t.no_line else 0


if __name__ == "__main__":
    sys.exit(main())
