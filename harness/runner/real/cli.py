"""`harness run --engine real [--json] [--conformance DIR]`: per-run verdicts from the real
controller, and optionally the conformance report against the simulation."""
from __future__ import annotations

import json
import sys
import time

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def verdict(o) -> str:
    """pass / FAIL / skipped; a declared xfail that applies to the real engine
    (Scenario.xfail_reason) is xfail or XPASS, as pytest reports it."""
    if o.skipped:
        return "skipped"
    if o.scenario.xfail_reason(o.profile, real=True) is not None:
        return "xfail" if not o.passed else "XPASS"
    return "pass" if o.passed else "FAIL"


def outcome_json(o) -> dict:
    return {"file": str(o.scenario.file), "scenario": o.scenario.name, "profile": o.profile, "engine": "real",
            "controller": o.controller_version, "verdict": verdict(o), "passed": o.passed and not o.skipped,
            "skipped": o.skipped, "seconds": round(o.seconds, 2), "nodes": len(o.result.nodes),
            "runaway": o.result.runaway, "steady": o.result.steady,
            "mismatches": [m.render() for m in o.mismatches],
            "notApplicable": [n.render() for n in o.not_applicable], "hosts": o.hosts}


def errored(sc, profile: str, e: Exception):
    """An outcome for a run the engine itself could not finish (reported as FAIL with the error)."""
    from harness.loop.result import RunResult
    from harness.runner.expect import Mismatch
    from harness.runner.real.engine import RealOutcome
    o = RealOutcome(sc, profile, "local", RunResult(sc.name, profile, "local", sc.seed))
    o.mismatches = [Mismatch("engine", "a finished run", f"{type(e).__name__}: {e}")]
    return o


def run_real(jobs, args) -> int:
    from harness.runner.real import session
    ok, why = session.available()
    if not ok:
        print(f"real engine unavailable: {why}", file=sys.stderr)
        return EXIT_BAD_INPUT
    from harness.backends.registry import close_shared
    outcomes, pairs = [], []
    t0 = time.monotonic()
    try:
        for sc, profile in jobs:
            try:
                o = session.run(sc, profile)
            except Exception as e:      # noqa: BLE001 - one broken run must not end the library run
                o = errored(sc, profile, e)
            outcomes.append(o)
            if args.conformance:
                from harness.runner.real.conformance import simulate
                version = getattr(session.cluster(), "_server_version", None)
                pairs.append((simulate(sc, profile, version), o))
            print(f"{verdict(o):8} {o.seconds:6.1f}s  {sc.name} [{profile}]"
                  + (f"  ({o.skipped})" if o.skipped else ""), file=sys.stderr if args.json else sys.stdout, flush=True)
    except KeyboardInterrupt:
        print("interrupted: controller, fake and cluster are being torn down", file=sys.stderr)
        raise
    finally:
        close_shared()
    failed = [o for o in outcomes if verdict(o) in ("FAIL", "XPASS")]
    if args.conformance:
        from pathlib import Path

        from harness.runner.real.conformance import write_report
        md, js = write_report(pairs, Path(args.conformance), seconds=time.monotonic() - t0)
        print(f"conformance report: {md} {js}", file=sys.stderr)
    if args.json:
        print(json.dumps([outcome_json(o) for o in outcomes], indent=2))
    else:
        from harness.runner.real.session import failure_text
        for o in failed:
            print(failure_text(o, trace=args.trace))
        counts = {v: sum(1 for o in outcomes if verdict(o) == v) for v in ("pass", "FAIL", "xfail", "XPASS", "skipped")}
        print(f"{len(outcomes)} run(s) on the real engine: " + ", ".join(f"{n} {v}" for v, n in counts.items() if n)
              + f" in {time.monotonic() - t0:.0f}s")
    return EXIT_FAILED if failed else EXIT_OK
