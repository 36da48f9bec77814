"""`harness run`'s summary does not mislead (issue 63 item 5): the table and the outcome line count live
objects, show the deleted as such, and leave completed Job pods out of "pods pending"."""
from __future__ import annotations

from harness.cli import main as cli

JOBS = "scenarios/workloads/jobs.scenario.yaml"


def _row(out: str, name: str) -> list[str]:
    row = next(line for line in out.splitlines() if name in line and "│" in line)
    return [c.strip() for c in row.split("│")[1:-1]]


def test_completed_job_pods_are_not_pending(capsys):
    """The Job's 4 pods completed: 0 pods pending (the table said 4)."""
    assert cli(["run", JOBS, "-k", "job-pods-complete-and-free-their-node"]) == 0
    assert _row(capsys.readouterr().out, "job-pods-complete-and-free-their-node")[5] == "0"
