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
    assert runs["v1.4.1"]["outcome"] == "1 node(s): Standard_D2s_v3 on-demand x1 (NodePool default)"


def test_a_table_per_scenario_marks_where_the_outcome_changes(capsys):
    assert cli_main(["run", API, "-k", "v075-zonal"]) == 0
    out = capsys.readouterr().out
    assert "v075-zonal-nodepool-refused across 2 profiles: where the outcome changes" in out
    assert "<- changed" in out


def test_a_forced_version_warns_and_runs_under_the_nearest(capsys):
    code = cli_main(["run", API, "-k", "v075-zonal", "--profile", "v0.7.6", "--json"])
    captured = capsys.readouterr()
    # the file's expectations are judged as written: none names v0.7.6, so v0.7.5's refusal of the NodePool
    # (the answering release's) is one nothing expects, and the run fails on it
    assert code == 1
    (run,) = [r for r in json.loads(captured.out) if r["profile"] == "v0.7.6"]
    assert any(m.startswith('expect.nodePools["default"]: ') for m in run["mismatches"]), run["mismatches"]
    assert "WARNING: --profile v0.7.6: no profile for provider v0.7.6: it is newer than every release" not in \
        captured.err
    assert "WARNING: --profile v0.7.6: no profile for provider v0.7.6; answering with v0.7.5" in captured.err
    assert run["release"]["answeredBy"] == "v0.7.5" and run["release"]["exact"] is False


def test_unknown_profile_is_bad_input(capsys):
    assert cli_main(["run", API, "--profile", "v1.6.x"]) == 2
    assert "--profile v1.6.x: unknown profile" in capsys.readouterr().err


SCENARIO = """\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: by-version}
given:
  profiles: [PROFILES]
  skus: [Standard_D2s_v3]
manifests: []
expect:
  nodeCount: 0
"""


def test_given_profiles_take_versions_and_all_releases(tmp_path):
    from harness.model.upstream import releases
    from harness.scenario.load import load_scenarios_text
    (sc,) = load_scenarios_text(SCENARIO.replace("PROFILES", "upstream, all-releases"), "a.scenario.yaml", tmp_path)
    assert sc.profiles == ["upstream"] + releases.release_profiles() and not sc.warnings
    (sc,) = load_scenarios_text(SCENARIO.replace("PROFILES", "v1.6.3, v1.8.1"), "b.scenario.yaml", tmp_path)
    assert sc.profiles == ["v1.6.3", "v1.8.1"]
    (notice,) = [n for n in sc.warnings if n.kind == "version"]      # v1.6.3 is covered by v1.6.4: no notice
    assert notice.line == 5 and notice.message.startswith(
        "given.profiles v1.8.1: no profile for provider v1.8.1; answering with v1.7.2")


def test_given_profiles_refuse_a_name_that_is_no_profile_or_version(tmp_path):
    import pytest

    from harness.scenario.load import load_scenarios_text
    from harness.scenario.yamlsource import SourceError
    with pytest.raises(SourceError, match=r"c.scenario.yaml:5: unknown profile 'v1.x'; available: before-0006, "
                                          r"design-0006, upstream; or a provider version"):
        load_scenarios_text(SCENARIO.replace("PROFILES", "v1.x"), "c.scenario.yaml", tmp_path)


def test_an_error_row_names_its_release(capsys, monkeypatch):
    """A run that raises still says whose behaviour it was: the table's release column, --json's `release`
    and the error text name the provider release and the core version it pins (engines/base.new_outcome)."""
    from harness.runner.engines.simulated import SimulatedEngine

    def broken(self, *a, **kw):
        raise RuntimeError("boom")
    monkeypatch.setattr(SimulatedEngine, "start", broken)
    assert cli_main(["run", API, "-k", "v075-zonal", "--json"]) == 1
    runs = {r["profile"]: r for r in json.loads(capsys.readouterr().out)}
    assert runs["v0.7.5"]["verdict"] == "ERROR"
    assert runs["v0.7.5"]["release"] == {"profile": "v0.7.5", "release": "v0.7.5", "covers": ["v0.7.5"],
                                         "core": "v1.0.6"}
    error = runs["v0.7.5"]["error"]
    assert "[v0.7.5/embedded]: run raised RuntimeError: boom" in error
    assert error.endswith("; release: v0.7.5 (provider v0.7.5, core v1.0.6)")
    assert runs["v1.4.1"]["release"]["core"] == "v1.4.0"
    assert cli_main(["run", API, "-k", "v075-zonal"]) == 1
    out = capsys.readouterr().out
    assert "v0.7.5 (core v1.0.6)" in out and "v1.4.0-v1.4.1 (core v1.4.0)" in out and "ERROR" in out


def test_a_policy_the_releases_core_lacks_is_a_notice(capsys):
    """given.loop.minValuesPolicy BestEffort under provider v1.4 (core v1.4.0, before MIN_VALUES_POLICY): a
    warning at the line, and the run's --json `notices` say minValues is strict there."""
    path = str(ROOT / "scenarios" / "releases" / "min-values-best-effort.scenario.yaml")
    assert cli_main(["run", path, "--json"]) == 0
    captured = capsys.readouterr()
    assert "min-values-best-effort.scenario.yaml:22: warning: given.loop.minValuesPolicy BestEffort: profile v1.4.1 " \
           "(core v1.4.0) has no MIN_VALUES_POLICY" in captured.err
    runs = {r["profile"]: r for r in json.loads(captured.out)}
    assert runs["v1.4.1"]["notices"] == ["given.loop.minValuesPolicy BestEffort: core v1.4.0 has no MIN_VALUES_POLICY "
                                         "(from v1.6.0); minValues is enforced strictly"]
    assert runs["v1.6.2"]["notices"] == [] and runs["v1.6.2"]["nodes"] == 1


def test_a_seeded_nodeclass_drift_under_a_release_without_the_hash_is_a_notice(capsys):
    """existingNodes drifted NodeClassDrifted under provider v0.5.5 (no AKSNodeClass hash, provider.nodeClassHash):
    a warning at the entry; the node stays there, while v0.7.5 replaces it."""
    path = str(ROOT / "scenarios" / "releases" / "nodeclass-hash.scenario.yaml")
    assert cli_main(["run", path, "-k", "seeded-nodeclass-drift", "--json"]) == 0
    captured = capsys.readouterr()
    assert "nodeclass-hash.scenario.yaml:185: warning: given.existingNodes drifted NodeClassDrifted (1 entry): " \
           "profile v0.5.5 has no AKSNodeClass drift hash (provider v0.7.0+)" in captured.err
    assert "profile v0.7.5 has no" not in captured.err
    runs = {r["profile"]: r for r in json.loads(captured.out)}
    assert (runs["v0.5.5"]["nodes"], runs["v0.7.5"]["nodes"]) == (1, 0)
