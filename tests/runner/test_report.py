"""The run's one-line outcome and its counts (harness/runner/report.py): live objects only, the deleted
shown as such, pending without completed or deleted pods, each node kind with its NodePool."""
from __future__ import annotations

from harness.loop.result import PodResult, RunResult
from harness.runner.report import outcome_summary, pending_pods


def test_succeeded_and_deleted_pods_are_not_pending():
    r = RunResult("x", "upstream", "embedded", 1)
    r.pods["d/job-a"] = PodResult("job-a", "d", owner_kind="Job", owner_name="job", state="succeeded")
    r.pods["d/gone"] = PodResult("gone", "d", state="deleted")
    r.pods["d/ds"] = PodResult("ds", "d", owner_kind="DaemonSet", owner_name="ds")
    r.pods["d/wait"] = PodResult("wait", "d")
    assert [p.name for p in pending_pods(r)] == ["wait"]
    assert outcome_summary(r) == "0 node(s); pending: wait"
