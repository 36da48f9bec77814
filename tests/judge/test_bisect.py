"""harness bisect's git side (bisect_run) on a toy history, and its selection of runs; the real
engine's side is shown in docs/benchmarks/real-engine.md (a bisection between two provider releases)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harness.judge.bisect import STEP_MARK, Job, bisect_run, jobs_of
from harness.scenario.load import load_all
from harness.scenario.selection import select_jobs

ROOT = Path(__file__).resolve().parents[2]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout.strip()


def _history(tmp_path: Path, values: list[str]) -> tuple[Path, list[str]]:
    """A repository whose commit i holds `value` = values[i]; its commits, oldest first."""
    repo = tmp_path / "provider"
    repo.mkdir()
    _git(repo, "init", "-q")
    commits = []
    for i, v in enumerate(values):
        (repo / "value").write_text(v)
        (repo / "builds").write_text("no" if v == "broken" else "yes")
        (repo / "n").write_text(str(i))
        _git(repo, "add", ".")
        _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", f"commit {i}: {v}")
        commits.append(_git(repo, "rev-parse", "HEAD"))
    return repo, commits


# a step as harness.judge.bisect step_main behaves: skip what does not build, good while value is "old"
STEP = ("import pathlib, sys\n"
        "if pathlib.Path('builds').read_text() == 'no': print('[bisect] skipped', flush=True); sys.exit(125)\n"
        "v = pathlib.Path('value').read_text()\n"
        "print(f'[bisect] step: {v}', flush=True)\n"
        "sys.exit(0 if v == 'old' else 1)\n")


def test_bisect_run_names_the_first_changed_commit_and_leaves_the_clone_as_it_was(tmp_path):
    repo, commits = _history(tmp_path, ["old", "old", "old", "new", "new", "new"])
    head_before = _git(repo, "rev-parse", "HEAD")
    lines: list[str] = []
    res = bisect_run(repo, commits[0], commits[-1], [sys.executable, "-c", STEP], {}, lines.append)
    assert res["culprit"] == commits[3]
    assert res["subject"] == "commit 3: new"
    assert lines and all(ln.startswith(STEP_MARK) for ln in lines)
    # the clone: same HEAD, no bisect under way, no worktree left
    assert _git(repo, "rev-parse", "HEAD") == head_before
    assert not (repo / ".git" / "BISECT_LOG").exists()
    assert _git(repo, "worktree", "list").count("\n") == 0


def test_a_culprit_among_commits_that_do_not_build_is_not_guessed(tmp_path):
    repo, commits = _history(tmp_path, ["old", "old", "broken", "new"])
    res = bisect_run(repo, commits[0], commits[-1], [sys.executable, "-c", STEP], {}, lambda line: None)
    assert "culprit" not in res
    assert "do not build" in res["error"]
    assert set(res["candidates"]) == {commits[2], commits[3]}


def test_the_selection_is_the_runs_harness_run_would_make():
    """Files or directories, exact names, -k and profiles select as `harness run` does; a job loads
    its scenario again by file and name (a step runs in another process)."""
    paths = [str(ROOT / "scenarios/bugs/r17-unknown-skus.scenario.yaml")]
    scenarios = load_all(paths)
    pairs, why = select_jobs(scenarios, ["upstream"], None, paths, ["r17-v1-14-unknown-sku-priced-999"])
    assert why == "" and [(sc.name, p) for sc, p in pairs] == [("r17-v1-14-unknown-sku-priced-999", "upstream")]
    jobs = jobs_of(pairs)
    assert jobs[0].key == "r17-v1-14-unknown-sku-priced-999[upstream]"
    assert jobs[0].scenario().name == jobs[0].name
    pairs, _ = select_jobs(scenarios, ["upstream"], "r17-", paths)
    assert len(pairs) == len({sc.name for sc in scenarios if "upstream" in sc.profiles})
    none, why = select_jobs(scenarios, ["upstream"], None, paths, ["no-such-scenario"])
    assert none == [] and "no scenario named no-such-scenario" in why
    assert Job("f", "n", "p") == Job("f", "n", "p")
