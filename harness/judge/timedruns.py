"""The library's documents that judge time on the controller's clock, per provider release: what the nightly
release-controllers job runs on each release's own controller besides the core pairs, the knob replays and
the smoke set (docs/real-controller-releases.md "The controller's clock at older releases").

A document is taken for a release when it judges time - its `advance` steps add up to an hour or more, a
NodePool budget has a cron `schedule`, or `given` seeds a dump's history (history.names) - or it is a
ticket written for that release (its given.profiles names it), and when it holds there: its manifests are
in API versions the release's CRDs serve (knobrelease.unserved) and it passes on the simulated engine
under that release's profile. Documents written for another release (a ticket naming another customer's
release) and knob scenarios (harness/judge/knobreplays.py) are left to their own selection.

    python -m harness.judge.timedruns --release v1.13.1 scenarios/disruption scenarios/tickets   # pytest args
    python -m harness.judge.timedruns --release v1.13.1 --list scenarios/disruption scenarios/tickets
"""
from __future__ import annotations

import argparse
import sys

from harness.model.values.durations import go_duration_text, scenario_duration
from harness.model.upstream.knobrelease import unserved
from harness.model.upstream.releases import release_profiles
from harness.judge.knobreplays import pytest_args
from harness.scenario.load import Scenario, load_all

HOUR = 3600.0


def advanced(scenario: Scenario) -> float:
    """The seconds the scenario's `advance` steps add up to."""
    return sum(scenario_duration(s["advance"]) for s in scenario.steps if s.get("advance"))


def scheduled_budget(scenario: Scenario) -> bool:
    """Whether a NodePool the scenario applies (at its start or in a step) has a budget with a schedule."""
    objs = [m.obj for ms in [scenario.manifests, *scenario.step_manifests] for m in ms]
    return any(b.get("schedule") for o in objs if o.get("kind") == "NodePool"
               for b in ((o.get("spec") or {}).get("disruption") or {}).get("budgets") or [])


def why_timed(scenario: Scenario, release: str) -> str | None:
    """Why the scenario is one of `release`'s timed documents (before the simulation is asked), or None."""
    from harness.runner.engines.real.cluster.history import names
    reasons = []
    if release in scenario.profiles:
        reasons.append(f"written for {release}")
    seconds = advanced(scenario)
    if seconds >= HOUR:
        reasons.append(f"advances {go_duration_text(seconds)}")
    if scheduled_budget(scenario):
        reasons.append("a budget schedule")
    dated = names(scenario.given)
    if dated:
        reasons.append("a dump's history (" + ", ".join(dated) + ")")
    return "; ".join(reasons) or None


def written_for_another(scenario: Scenario, release: str) -> bool:
    """Whether the scenario's given.profiles names a release profile, but not `release` (a ticket at another
    customer's release, a core pair of other releases)."""
    releases = set(release_profiles())
    declared = [p for p in scenario.profiles if p in releases]
    return bool(declared) and release not in declared


def candidates(scenarios: list[Scenario], release: str) -> list[tuple[Scenario, str]]:
    """(scenario, why_timed) of the documents `release` may run, before the simulation is asked."""
    from harness.model.upstream.profile import raw_profile
    raw = raw_profile(release)
    out = []
    for sc in scenarios:
        if sc.given.get("knobs") or written_for_another(sc, release) or unserved(raw, sc.api_versions):
            continue
        why = why_timed(sc, release)
        if why:
            out.append((sc, why))
    return out


def timed_runs(scenarios: list[Scenario], release: str) -> list[tuple[Scenario, str, str]]:
    """(scenario, why_timed, verdict on the simulated engine under `release`) of every candidate; the
    release runs those whose verdict is `pass`."""
    from harness.backends.registry import close_shared, shared_cluster
    from harness.runner.engines import get_engine
    from harness.runner.engines.base import verdict
    from harness.judge.explore import run_scenario
    engine = get_engine("simulated")
    out = []
    try:
        cluster = shared_cluster("embedded")
        for sc, why in candidates(scenarios, release):
            out.append((sc, why, verdict(run_scenario(engine, sc, release, cluster))))
    finally:
        close_shared()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m harness.judge.timedruns", description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--release", required=True, help="a release profile (vX.Y.Z)")
    ap.add_argument("--list", action="store_true",
                    help="print every candidate with why it judges time and its simulated verdict")
    args = ap.parse_args(argv)
    if args.release not in release_profiles():
        print(f"--release {args.release}: no release profile of that name", file=sys.stderr)
        return 2
    runs = timed_runs(load_all(args.paths), args.release)
    if args.list:
        for sc, why, v in runs:
            print(f"{v}\t{sc.name}\t{why}")
        return 0
    kept = [(sc, args.release) for sc, _why, v in runs if v == "pass"]
    if kept:
        print(pytest_args(kept))
    return 0


if __name__ == "__main__":
    sys.exit(main())
