"""`harness bisect`: the first provider commit whose outcome of a scenario, or of a selection of them,
differs from a good one's.

Why it is built this way: docs/architecture/runner.md."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from harness.backends.binaries.controlplane import BinariesError
from harness.backends.binaries.controller import ENV_GIT, ENV_REF, ENV_TIMING, build_controller, provider_tree, resolve_ref
from harness.runner.engines.base import Outcome, execute, verdict
from harness.judge.outcome import outcome_view
from harness.scenario.load import Scenario, load_scenarios

EXIT_GOOD, EXIT_BAD, EXIT_SKIP = 0, 1, 125
STEP_MARK = "[bisect]"        # the lines of a step that bisect() echoes as they come


@dataclass(frozen=True)
class Job:
    """One run of the selection: a scenario of a file under a profile."""
    file: str
    name: str
    profile: str

    @property
    def key(self) -> str:
        return f"{self.name}[{self.profile}]"

    def scenario(self) -> Scenario:
        found = [sc for sc in load_scenarios(Path(self.file)) if sc.name == self.name]
        if not found:
            raise ValueError(f"{self.file}: no scenario named {self.name!r}")
        return found[0]


def jobs_of(pairs) -> list[Job]:
    """(scenario, profile) pairs (selection.select_jobs) as jobs a step can load again."""
    return [Job(str(Path(sc.file).resolve()), sc.name, p) for sc, p in pairs]


def outcome_of(o: Outcome, on: str) -> object:
    """What a bisect step compares: the verdict, or the noise-free outcome view."""
    found = verdict(o) if on == "verdict" else {"verdict": verdict(o), **outcome_view(o.final)}
    return json.loads(json.dumps(found, default=str))


def run_at(git_dir: Path, ref: str, jobs: list[Job], echo: bool = False) -> tuple[dict[Job, Outcome], str]:
    """Build the controller of `ref` (cached per commit) and run each job on the real engine."""
    from harness.backends.registry import shared_cluster
    from harness.runner.engines.real.engine import RealEngine
    tree, described = provider_tree(git_dir, ref)
    ctl, _ = build_controller(tree, echo=echo)
    engine = RealEngine(controller=ctl, judge_release=False)
    out = {}
    for job in jobs:        # each on the control plane of the Kubernetes version it names (cluster_options_for)
        scenario = job.scenario()
        cluster = shared_cluster("local", **engine.cluster_options_for(scenario, job.profile))
        out[job] = execute(engine, scenario, job.profile, cluster)
    return out, described


def step_main(argv: list[str]) -> int:
    """`python -m harness.judge.bisect step PLAN_JSON`: one `git bisect run` step at the worktree's
    HEAD (its cwd); the plan holds the jobs, what is compared and the good end's outcomes."""
    plan = json.loads(Path(argv[0]).read_text())
    jobs = [Job(**j) for j in plan["jobs"]]
    git_dir = Path(os.environ[ENV_GIT])
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    subject = subprocess.run(["git", "log", "-1", "--format=%s", head], capture_output=True, text=True).stdout.strip()
    try:
        outcomes, described = run_at(git_dir, head, jobs)
    except BinariesError as e:
        print(f"{STEP_MARK} {head[:12]} {subject}: does not build, skipped ({str(e).splitlines()[0][:200]})", flush=True)
        return EXIT_SKIP
    changed = [j.key for j, o in outcomes.items() if outcome_of(o, plan["on"]) != plan["expected"][j.key]]
    seconds = sum(o.seconds for o in outcomes.values())
    verdicts = ", ".join(sorted({verdict(o) for o in outcomes.values()}))
    what = f"changed: {', '.join(changed)}" if changed else "as at good"
    print(f"{STEP_MARK} {described} {subject}: {verdicts}, outcome {what} ({seconds:.0f}s)", flush=True)
    return EXIT_BAD if changed else EXIT_GOOD


def bisect(git_dir: Path, good: str, bad: str, jobs: list[Job], on: str = "outcome", out=sys.stdout) -> dict:
    """Run the bisection; returns {"culprit", "subject", "changed", "steps", ...} or {"error": why}."""
    os.environ.setdefault(ENV_TIMING, "upstream")      # the steps (git bisect run) inherit it
    git_dir = git_dir.resolve()
    good_c, bad_c = resolve_ref(git_dir, good), resolve_ref(git_dir, bad)
    ends: dict[str, dict[str, object]] = {}
    unjudged: dict[Job, str] = {}
    for label, ref in (("good", good), ("bad", bad)):
        outcomes, described = run_at(git_dir, ref, jobs)
        ends[label] = {}
        for job, o in outcomes.items():
            if o.skipped or o.error:
                unjudged.setdefault(job, f"cannot be judged at {label} {ref}: {o.skipped or o.error}")
                continue
            ends[label][job.key] = outcome_of(o, on)
            print(f"{STEP_MARK} {label} {ref} ({described}) {job.key}: {verdict(o)} in {o.seconds:.0f}s",
                  file=out, flush=True)
    for job, why in unjudged.items():
        print(f"{STEP_MARK} left out {job.key}: {why}", file=out, flush=True)
    judged = [j for j in jobs if j not in unjudged]
    if not judged:
        return {"error": "no run of the selection can be judged at both ends: "
                         + "; ".join(f"{j.key} {why}" for j, why in unjudged.items())}
    changed = [j.key for j in judged if ends["good"][j.key] != ends["bad"][j.key]]
    if not changed:
        return {"error": f"the outcome of {', '.join(j.key for j in judged)} is the same at {good} and {bad}: "
                         f"nothing to bisect"}
    with tempfile.TemporaryDirectory(prefix="harness-bisect-") as tmp:
        plan = Path(tmp) / "plan.json"
        plan.write_text(json.dumps({"on": on, "jobs": [j.__dict__ for j in judged],
                                    "expected": {j.key: ends["good"][j.key] for j in judged}}))
        step = [sys.executable, "-m", "harness.judge.bisect", "step", str(plan)]
        # the step imports this harness whatever the worktree (its cwd) holds
        env = {**os.environ, ENV_GIT: str(git_dir),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                                           os.environ.get("PYTHONPATH")]))}
        env.pop(ENV_REF, None)
        res = bisect_run(git_dir, good_c, bad_c, step, env, lambda line: print(line, file=out, flush=True))
    if "culprit" in res:
        res.update(good=good, bad=bad, on=on, changed=changed, runs=[j.key for j in judged],
                   left_out={j.key: why for j, why in unjudged.items()},
                   command=" ".join(shlex.quote(a) for a in step))
    return res


def bisect_run(git_dir: Path, good_c: str, bad_c: str, step: list[str], env: dict[str, str],
               echo: Callable[[str], None]) -> dict:
    """`git bisect run STEP` between two commits in a throwaway worktree of `git_dir` (removed after);
    echoes each step's STEP_MARK lines; {"culprit", "described", "subject", "log"} or {"error", "log"}."""
    with tempfile.TemporaryDirectory(prefix="harness-bisect-wt-") as tmp:
        wt = Path(tmp) / "worktree"
        subprocess.run(["git", "-C", str(git_dir), "worktree", "add", "--detach", "-q", str(wt), bad_c],
                       check=True, capture_output=True)
        git = ["git", "-C", str(wt)]
        try:
            subprocess.run(git + ["bisect", "start", bad_c, good_c], check=True, env=env, capture_output=True)
            lines = []
            with subprocess.Popen(git + ["bisect", "run"] + step, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True) as proc:
                for line in proc.stdout:           # each step as it ends
                    lines.append(line)
                    if line.startswith(STEP_MARK):
                        echo(line.rstrip("\n"))
            output = "".join(lines)
            log = subprocess.run(git + ["bisect", "log"], capture_output=True, text=True).stdout
            subprocess.run(git + ["bisect", "reset"], capture_output=True)
        finally:
            subprocess.run(["git", "-C", str(git_dir), "worktree", "remove", "--force", str(wt)], capture_output=True)
            subprocess.run(["git", "-C", str(git_dir), "worktree", "prune"], capture_output=True)
    m = re.search(r"^([0-9a-f]{40}) is the first bad commit", output, re.M)
    if not m:
        # git: "There are only 'skip'ped commits left to test. The first bad commit could be any of:"
        tail = output.split("could be any of:", 1)
        if len(tail) == 2:
            candidates = re.findall(r"^[0-9a-f]{40}$", tail[1], re.M)
            return {"error": "the first changed commit is among commits that do not build: "
                             + ", ".join(_oneline(git_dir, c) for c in candidates), "candidates": candidates, "log": log}
        return {"error": f"git bisect run ended without a culprit:\n{output[-3000:]}", "log": log}
    culprit = m.group(1)
    subject = subprocess.run(["git", "-C", str(git_dir), "log", "-1", "--format=%s", culprit],
                             capture_output=True, text=True).stdout.strip()
    described = subprocess.run(["git", "-C", str(git_dir), "describe", "--tags", "--always", culprit],
                               capture_output=True, text=True).stdout.strip()
    return {"culprit": culprit, "described": described, "subject": subject, "log": log}


def _oneline(git_dir: Path, commit: str) -> str:
    return subprocess.run(["git", "-C", str(git_dir), "log", "-1", "--format=%h %s", commit],
                          capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "step":
        sys.exit(step_main(sys.argv[2:]))
    print("usage: harness bisect (this module's `step` is run by git bisect run)", file=sys.stderr)
    sys.exit(2)
