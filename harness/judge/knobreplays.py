"""The library's `given.knobs` scenarios grouped by the provider release whose controller replays them
(harness/model/upstream/knobrelease.py), with the manifests' API versions as the real engine weighs them: what the
nightly release-controllers job runs on each release it builds.

    python -m harness.judge.knobreplays scenarios/                      # release -> scenario [profile]
    python -m harness.judge.knobreplays --release v1.13.1 scenarios/    # pytest arguments, or nothing
"""
from __future__ import annotations

import argparse
import shlex
import sys

from harness.model.upstream.knobrelease import knob_release
from harness.scenario.load import Scenario, load_all

NONE = "none"        # the group of knobs no release replays (the real engine skips them)


def replays(scenarios: list[Scenario]) -> dict[str, list[tuple[Scenario, str]]]:
    """release profile (or NONE) -> the (scenario, profile) runs whose knobs it replays, in library order."""
    out: dict[str, list[tuple[Scenario, str]]] = {}
    for sc in scenarios:
        if not sc.given.get("knobs"):
            continue
        for profile in sc.profiles:
            replay = knob_release(profile, sc.given["knobs"], sc.api_versions)
            out.setdefault(replay.release or NONE, []).append((sc, profile))
    return out


def pytest_args(runs: list[tuple[Scenario, str]]) -> str:
    """The files and a -k expression selecting exactly these scenarios (a shell word list). Each name is
    matched with the `[` that opens its item's parameters (`name[profile-backend]`, plugin.py), since -k
    matches substrings: `termination-grace-period-bounds-a-blocked-drain` alone also selects
    `...-blocked-drain-in-seconds`."""
    files = sorted({str(sc.file) for sc, _ in runs})
    names = sorted({sc.name for sc, _ in runs})
    return " ".join(shlex.quote(f) for f in files) + " -k " + shlex.quote(" or ".join(n + "[" for n in names))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m harness.judge.knobreplays", description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--release", help="print the pytest arguments of the runs this release replays")
    args = ap.parse_args(argv)
    groups = replays(load_all(args.paths))
    if args.release:
        runs = groups.get(args.release)
        if runs:
            print(pytest_args(runs))
        return 0
    for release, runs in sorted(groups.items()):
        for sc, profile in runs:
            print(f"{release}\t{sc.name} [{profile}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
