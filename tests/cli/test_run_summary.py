"""`harness run`'s summary does not mislead (issue 63 item 5): the table and the outcome line count live
objects, show the deleted as such, and leave completed Job pods out of "pods pending"."""
from __future__ import annotations

import json

from harness.cli import main as cli

JOBS = "scenarios/workloads/jobs.scenario.yaml"


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
    sc = SimpleNamespace(file="x.scenario.yaml", name="pools")
    runs = []
    for profile, pool in (("v1.6.1", "primary"), ("v1.6.2", "fallback")):
        r = RunResult("pools", profile, "embedded", 1)
        r.nodes = [NodeResult("n", 0, "nc", pool, "Standard_D2s_v3", "z", "on-demand", "n")]
        runs.append(SimpleNamespace(scenario=sc, profile=profile, final=r))
    con = _console(wide=True)
    with con.capture() as cap:
        _print_across_releases(con, runs, lambda o: "pass")
    rows = [line for line in cap.get().splitlines() if "NodePool" in line]
    assert "(NodePool primary)" in rows[0] and "<- changed" not in rows[0]
    assert "(NodePool fallback)" in rows[1] and "<- changed" in rows[1]
