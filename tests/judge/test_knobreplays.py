"""The library's knob scenarios by the release replaying them (harness/judge/knobreplays.py), as the
nightly release-controllers job selects them."""
from __future__ import annotations

import shlex
from pathlib import Path

from harness.judge.knobreplays import NONE, main, pytest_args, replays
from harness.scenario.load import load_all

BUGS = Path(__file__).resolve().parents[2] / "scenarios" / "bugs"


def test_runs_group_by_the_release_replaying_them_and_the_rest_by_none():
    groups = replays(load_all([BUGS]))
    names = {release: sorted(sc.name for sc, _ in runs) for release, runs in groups.items()}
    assert names["v1.13.1"] == ["r07-unzoned-disk-pv-pending-before-v1-14", "r17-before-v1-14-reported-dsv7-excluded",
                                "r17-before-v1-14-unknown-sku-excluded", "r20-core-before-v1-14-runaway"]
    assert names["v0.7.5"] == ["r03-v0-5-to-v1-3-zone-requirement-rejected", "r13-before-v1-4-eastus2euap-non-zonal",
                               "r15-before-v1-4-spot-overconstrained-retried"]
    assert "r15-issue-91-spot-quota-before-v0-3" in names[NONE]
    words = shlex.split(pytest_args(groups["v1.4.1"]))
    assert words == [str(BUGS / "r25-boolean-sku-labels.scenario.yaml"), "-k", "r25-before-v1-5-0-false-matches-nothing["]


def test_a_release_without_knob_scenarios_prints_nothing(capsys):
    assert main(["--release", "v1.14.2", str(BUGS)]) == 0
    assert capsys.readouterr().out == ""
