"""`harness run`'s summary does not mislead (issue 63 item 5): the table and the outcome line count live
objects, show the deleted as such, and leave completed Job pods out of "pods pending"."""
from __future__ import annotations

import json

from harness.cli import main as cli

JOBS = "scenarios/workloads/jobs.scenario.yaml"
DRIFT = "scenarios/disruption/drift.scenario.yaml"
# one pod, one node; the expectation (3 nodes) fails under every profile
WRONG = """\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: wrong}
given:
  profiles: [upstream]
  skus: [Standard_D2s_v3]
manifests:
  - apiVersion: karpenter.azure.com/v1beta1
    kind: AKSNodeClass
    metadata: {name: default}
    spec: {imageFamily: Ubuntu2204}
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: default}
    spec:
      template:
        spec:
          nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}
          requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
expect:
  nodeCount: 3
"""


def _row(out: str, name: str) -> list[str]:
    row = next(line for line in out.splitlines() if name in line and "│" in line)
    return [c.strip() for c in row.split("│")[1:-1]]


def test_completed_job_pods_are_not_pending(capsys):
    """The Job's 4 pods completed: 0 pods pending (the table said 4)."""
    assert cli(["run", JOBS, "-k", "job-pods-complete-and-free-their-node"]) == 0
    assert _row(capsys.readouterr().out, "job-pods-complete-and-free-their-node")[5] == "0"


def test_deleted_nodes_are_shown_as_such(capsys):
    """The Job's emptied node was deleted: the nodes column reads `0, 1 deleted` (it said 1)."""
    assert cli(["run", JOBS, "-k", "job-pods-complete-and-free-their-node"]) == 0
    assert _row(capsys.readouterr().out, "job-pods-complete-and-free-their-node")[4] == "0, 1 deleted"
    assert cli(["run", JOBS, "-k", "job-pods-complete-and-free-their-node", "--json"]) == 0
    run, = json.loads(capsys.readouterr().out)
    assert (run["nodes"], run["deletedNodes"], run["outcome"]) == (0, 1, "0 node(s), 1 deleted")


def test_a_nodepool_change_is_a_change_across_releases():
    """Same size, other NodePool: the across-releases table marks the row `<- changed`."""
    from types import SimpleNamespace

    from harness.cli import _console, _print_across_releases
    from harness.loop.result import NodeResult, RunResult
    sc = SimpleNamespace(file="x.scenario.yaml", name="pools", api_versions=())
    runs = []
    for profile, pool in (("v1.6.1", "primary"), ("v1.6.2", "fallback")):
        r = RunResult("pools", profile, "embedded", 1)
        r.nodes = [NodeResult("n", 0, "nc", pool, "Standard_D2s_v3", "z", "on-demand", "n")]
        runs.append(SimpleNamespace(scenario=sc, profile=profile, final=r, error=None))
    con = _console(wide=True)
    with con.capture() as cap:
        _print_across_releases(con, runs, lambda o: "pass")
    rows = [line for line in cap.get().splitlines() if "NodePool" in line]
    assert "(NodePool primary)" in rows[0] and "<- changed" not in rows[0]
    assert "(NodePool fallback)" in rows[1] and "<- changed" in rows[1]


def test_a_profile_asked_on_the_command_line_prints_its_failure_report(tmp_path, capsys):
    """--profile v1.6.2 on a file declaring upstream only: its failure prints its report, as a declared
    profile's does (it said "run one with --profile NAME for its report", which is what was run)."""
    f = tmp_path / "wrong.scenario.yaml"
    f.write_text(WRONG)
    assert cli(["run", str(f), "--profile", "v1.6.2"]) == 1
    out = capsys.readouterr().out
    assert "scenario 'wrong' failed under profile 'v1.6.2'" in out
    assert "expect.nodeCount: expected 3, got 1" in out and "--- what happened ---" in out
    assert "(profile v1.6.2 was asked with --profile; the file declares upstream" in out
    assert "for its report" not in out


def test_releases_that_cannot_serve_the_files_api_versions_are_one_line(capsys):
    """v0.7.x serves AKSNodeClass karpenter.azure.com/v1alpha2 only: the file's v1beta1 manifests are refused
    at each. One grouped line and one across-releases row say so, not a report per release."""
    assert cli(["run", DRIFT, "-k", "nodepool-template-change-drifts-node",
                "--profile", "v0.7.4", "--profile", "v0.7.5", "--profile", "v1.4.1"]) == 1
    out = capsys.readouterr().out
    grouped = [line for line in out.splitlines() if "refuse the file's manifests" in line]
    assert grouped == [(f"{DRIFT}:8: nodepool-template-change-drifts-node: 2 release(s) refuse the file's manifests "
                        "for their API versions: v0.7.4, v0.7.5 do not serve AKSNodeClass karpenter.azure.com/v1beta1 "
                        "(only v1alpha2) (write them at a release's API version to run them there)")]
    row = _row(out, "v0.7.4 .. v0.7.5 (2)")
    assert row[1:4] == ["v0.7.3-v0.7.5", "FAIL", "cannot serve AKSNodeClass karpenter.azure.com/v1beta1 (only v1alpha2)"]
    assert _row(out, "(NodePool default)")[0] == "v1.4.1" and _row(out, "(NodePool default)")[4] == "<- changed"
    assert "failed under profile" not in out


def test_a_run_that_never_settles_is_a_warning(monkeypatch, capsys):
    """`not steady after 60 iterations` passed silently: the result column and a WARNING say it."""
    from harness.judge import explore
    real = explore.run_scenario

    def stopped(*a, **kw):
        o = real(*a, **kw)
        o.final.steady = False
        o.final.trace.append("[settle] not steady after 60 iterations (given.loop.maxIterations)")
        return o
    monkeypatch.setattr(explore, "run_scenario", stopped)
    assert cli(["run", JOBS, "-k", "job-pods-complete-and-free-their-node"]) == 0
    out = capsys.readouterr().out
    assert _row(out, "job-pods-complete-and-free-their-node")[3] == "pass, not steady"
    assert (f"WARNING: {JOBS}:6: job-pods-complete-and-free-their-node [upstream] did not settle: not steady after "
            "60 iterations (given.loop.maxIterations); its outcome is where the run stopped, not a steady state") in out


def test_a_run_says_the_timings_it_assumed_when_its_outcome_may_hang_on_them(capsys):
    """Issue 82: three nodes drained one after another under a budget of one, with no given.loop.vmDelete: one
    line on stderr says Azure was assumed to delete a VM at once, naming the runs; --json carries it per run. A
    scenario that sets the timing (vm-deletion.scenario.yaml) says nothing about it."""
    budgets = "scenarios/disruption/budgets.scenario.yaml"
    assert cli(["run", budgets, "-k", "one-empty-node-at-a-time"]) == 0
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "assumed timings" in line]
    assert said == ["WARNING: assumed timings the scenario does not give: Azure deletes a VM at once (vmDelete 0s). "
                    "The outcome may depend on them: set given.loop.vmDelete, or vary them with `harness run "
                    "--explore N` (budget-of-one-disrupts-one-empty-node-at-a-time [upstream])"]
    assert cli(["run", budgets, "-k", "one-empty-node-at-a-time", "--json"]) == 0
    run, = json.loads(capsys.readouterr().out)
    assert run["assumed"] == [said[0][len("WARNING: "):-len(" (budget-of-one-disrupts-one-empty-node-at-a-time [upstream])")]]
    assert cli(["run", "scenarios/disruption/vm-deletion.scenario.yaml", "--json"]) == 0
    run, = json.loads(capsys.readouterr().out)
    assert run["assumed"] == []
