"""`harness run` across releases: the release column, --json's `release` and `outcome`, the per-profile
outcome table, and the loud warning for a version answered by another release (harness/cli.py)."""
from __future__ import annotations

import json
from pathlib import Path

from harness.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
API = str(ROOT / "scenarios" / "releases" / "api-versions-and-crd-rules.scenario.yaml")


def test_json_names_the_release_and_the_outcome(capsys):
    assert cli_main(["run", API, "-k", "v075-zonal", "--json"]) == 0
    runs = {r["profile"]: r for r in json.loads(capsys.readouterr().out)}
    assert runs["v0.7.5"]["release"] == {"profile": "v0.7.5", "release": "v0.7.5", "covers": ["v0.7.5"],
                                         "core": "v1.0.6"}
    assert runs["v1.4.1"]["release"]["covers"] == ["v1.4.0", "v1.4.1"]
    assert runs["v0.7.5"]["outcome"].startswith('NodePool default refused (admission): label domain "kubernetes.io" '
                                                "is restricted; 0 node(s)")
    assert runs["v1.4.1"]["outcome"] == "1 node(s): Standard_D2s_v3 on-demand x1"


def test_a_table_per_scenario_marks_where_the_outcome_changes(capsys):
    assert cli_main(["run", API, "-k", "v075-zonal"]) == 0
    out = capsys.readouterr().out
    assert "v075-zonal-nodepool-refused across 2 profiles: where the outcome changes" in out
    assert "<- changed" in out


def test_a_forced_version_warns_and_runs_under_the_nearest(capsys):
    code = cli_main(["run", API, "-k", "v075-zonal", "--profile", "v0.7.6", "--json"])
    captured = capsys.readouterr()
    assert code == 0                       # v0.7.5's expectations hold for the release that answers
    assert "WARNING: --profile v0.7.6: no profile for provider v0.7.6: it is newer than every release" not in \
        captured.err
    assert "WARNING: --profile v0.7.6: no profile for provider v0.7.6; answering with v0.7.5" in captured.err
    (run,) = [r for r in json.loads(captured.out) if r["profile"] == "v0.7.6"]
    assert run["release"]["answeredBy"] == "v0.7.5" and run["release"]["exact"] is False


def test_unknown_profile_is_bad_input(capsys):
    assert cli_main(["run", API, "--profile", "v1.6.x"]) == 2
    assert "--profile v1.6.x: unknown profile" in capsys.readouterr().err
