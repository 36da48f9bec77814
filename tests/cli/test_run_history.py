"""`harness run --json` and `--details` show what happened when: disruption records, events and the
timeline, with times as offsets from the run's start and UTC (harness/loop/history.py)."""
from __future__ import annotations

import json
import re

from harness.cli import main as cli

DRIFT = ["scenarios/disruption/drift.scenario.yaml", "-k", "nodepool-template-change-drifts-node",
         "--profile", "upstream"]


def test_json_has_disruptions_events_and_timeline(capsys):
    assert cli(["run", *DRIFT, "--json"]) == 0
    run, = json.loads(capsys.readouterr().out)
    rec, = run["disruptions"]
    assert rec["method"] == "drift" and rec["at"]["utc"].startswith("2026-01-01T00:00")
    assert rec["at"]["offsetText"].startswith("+")
    assert any(e["reason"] == "DisruptionTerminating" and e["at"]["offsetText"] for e in run["events"])
    tl = run["timeline"]
    assert tl["start"] == "2026-01-01T00:00:00Z"
    old, new = tl["nodeClaims"]
    assert (old["went"], old["reason"], old["replacedBy"]) == ("drift", "Drifted", [new["nodeclaim"]])
    assert set(old["phases"]) == {"created", "launched", "registered", "initialized", "disrupting", "deleted"}
    assert [s["action"] for s in tl["steps"]][:2] == ["tainted", "replacement created"]
    assert all(p["created"] for p in tl["pods"])
    assert "t=17" not in json.dumps(run["timeline"])          # no epoch seconds


def test_details_print_the_claims_lives_and_the_steps_in_time_order(capsys):
    assert cli(["run", *DRIFT, "--details"]) == 0
    out = capsys.readouterr().out
    assert "--- over time (from 2026-01-01T00:00:00Z) ---" in out
    assert re.search(r"NodeClaim \S+ \(default: Standard_D2s_v3 \S+ on-demand \$0\.\d+/h\): created/launched/"
                     r"registered/initialized \+0s \(2026-01-01T00:00:00Z\), disrupting \+10s .*went: drift \(Drifted\)", out)
    assert re.search(r"\+\d+s \(2026-01-01T00:00:\d\dZ\)  terminated NodeClaim", out)
    assert re.search(r"\+\d+s \(2026-01-01T00:00:\d\dZ\)  event Pod/default/\S+ Evicted: Evicted pod: Drifted", out)
