"""`harness bisect`: the first provider commit whose outcome of a scenario differs from a good one's.

Given a clone of karpenter-provider-azure, a good and a bad ref (release tags or commits) and one
scenario, it runs the scenario on the real engine at both ends (the controller built from each commit,
with that commit's own CRDs), then lets `git bisect run` walk the commits between them in a throwaway
worktree of the clone (https://git-scm.com/docs/git-bisect#_bisect_run): each step builds the
commit's controller (cached per commit), runs the scenario and compares its outcome with the good
one's - the same is "good" (exit 0), a different one "bad" (exit 1), a commit that does not build is
skipped (exit 125). The clone's own work tree, HEAD and bisect state are never touched.

The outcome compared is what the conformance report compares between engines, with the noise left
out (runner/outcome.py outcome_view: node names, unpinned zones), or with `--on verdict` only
the scenario's verdict.

Each commit is built as released (timing `upstream`) unless KARPENTER_CONTROLLER_TIMING says
otherwise: a `fast` edit that does not apply to an old core would make its commit "not build" and be
skipped, which would move the culprit.
"""
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

from harness.backends.binaries import BinariesError
from harness.backends.controller import ENV_GIT, ENV_REF, ENV_TIMING, build_controller, provider_tree, resolve_ref
from harness.runner.outcome import outcome_view
from harness.runner.engines.base import Outcome, execute, verdict
from harness.runner.scenario import Scenario, load_scenarios

EXIT_GOOD, EXIT_BAD, EXIT_SKIP = 0, 1, 125


@dataclass
class Step:
    commit: str
    described: str
    verdict: str
    same: bool | None          # None: the commit did not build or run


def outcome_of(o: Outcome, on: str) -> object:
    """What a bisect step compares: the verdict, or the noise-free outcome view."""
    return verdict(o) if on == "verdict" else {"verdict": verdict(o), **outcome_view(o.final)}


def pick(path: Path, name: str | None) -> Scenario:
    scenarios = load_scenarios(path)
    if name is None and len(scenarios) == 1:
        return scenarios[0]
    found = [sc for sc in scenarios if sc.name == name]
    if not found:
        raise ValueError(f"{path}: no scenario named {name!r}; it has: {', '.join(sc.name for sc in scenarios)}")
    return found[0]


def run_at(git_dir: Path, ref: str, scenario: Scenario, profile: str, echo: bool = False) -> tuple[Outcome, str]:
    """Build the controller of `ref` (cached per commit) and run `scenario` on the real engine."""
    from harness.backends.registry import shared_cluster
    from harness.runner.engines.real.engine import RealEngine
    tree, described = provider_tree(git_dir, ref)
    ctl, _ = build_controller(tree, echo=echo)
    engine = RealEngine(controller=ctl, judge_release=False)
    cluster = shared_cluster("local", **engine.cluster_options)
    return execute(engine, scenario, profile, cluster), described


def step_main(argv: list[str]) -> int:
    """`python -m harness.runner.bisect step FILE NAME PROFILE ON EXPECTED_JSON`: one `git bisect run`
    step at the worktree's HEAD (its cwd)."""
    path, name, profile, on, expected_file = argv
    git_dir = Path(os.environ[ENV_GIT])
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    subject = subprocess.run(["git", "log", "-1", "--format=%s", head], capture_output=True, text=True).stdout.strip()
    try:
        o, described = run_at(git_dir, head, pick(Path(path), name), profile)
    except BinariesError as e:
        print(f"[bisect] {head[:12]} {subject}: does not build, skipped ({str(e).splitlines()[0][:200]})", flush=True)
        return EXIT_SKIP
    expected = json.loads(Path(expected_file).read_text())
    same = json.loads(json.dumps(outcome_of(o, on), default=str)) == expected
    print(f"[bisect] {described} {subject}: {verdict(o)}, outcome "
          f"{'as at good' if same else 'changed'} ({o.seconds:.0f}s)", flush=True)
    return EXIT_GOOD if same else EXIT_BAD


def bisect(git_dir: Path, good: str, bad: str, scenario: Scenario, profile: str, on: str = "outcome",
           out=sys.stdout) -> dict:
    """Run the bisection; returns {"culprit", "subject", "steps", ...} or {"error": why}."""
    os.environ.setdefault(ENV_TIMING, "upstream")      # the steps (git bisect run) inherit it
    git_dir = git_dir.resolve()
    good_c, bad_c = resolve_ref(git_dir, good), resolve_ref(git_dir, bad)
    ends = {}
    for label, ref in (("good", good), ("bad", bad)):
        o, described = run_at(git_dir, ref, scenario, profile, echo=False)
        if o.skipped or o.error:
            return {"error": f"the scenario cannot be judged at {label} {ref}: {o.skipped or o.error}"}
        ends[label] = json.loads(json.dumps(outcome_of(o, on), default=str))
        print(f"[bisect] {label} {ref} ({described}): {verdict(o)} in {o.seconds:.0f}s", file=out, flush=True)
    if ends["good"] == ends["bad"]:
        return {"error": f"the outcome of {scenario.name} is the same at {good} and {bad}: nothing to bisect"}
    with tempfile.TemporaryDirectory(prefix="harness-bisect-") as tmp:
        wt = Path(tmp) / "worktree"
        expected = Path(tmp) / "expected.json"
        expected.write_text(json.dumps(ends["good"]))
        subprocess.run(["git", "-C", str(git_dir), "worktree", "add", "--detach", "-q", str(wt), bad_c], check=True)
        try:
            # the step imports this harness whatever the worktree (its cwd) holds
            env = {**os.environ, ENV_GIT: str(git_dir),
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                                               os.environ.get("PYTHONPATH")]))}
            env.pop(ENV_REF, None)
            git = ["git", "-C", str(wt)]
            subprocess.run(git + ["bisect", "start", bad_c, good_c], check=True, env=env, capture_output=True)
            step = [sys.executable, "-m", "harness.runner.bisect", "step", str(Path(scenario.file).resolve()),
                    scenario.name, profile, on, str(expected)]
            lines = []
            with subprocess.Popen(git + ["bisect", "run"] + step, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True) as proc:
                for line in proc.stdout:           # each step as it ends
                    lines.append(line)
                    if line.startswith("[bisect]"):
                        print(line.rstrip("\n"), file=out, flush=True)
            output = "".join(lines)
            log = subprocess.run(git + ["bisect", "log"], capture_output=True, text=True).stdout
            subprocess.run(git + ["bisect", "reset"], capture_output=True)
        finally:
            subprocess.run(["git", "-C", str(git_dir), "worktree", "remove", "--force", str(wt)], capture_output=True)
    m = re.search(r"^([0-9a-f]{40}) is the first bad commit", output, re.M)
    if not m:
        skipped = "only skipped commits" in output
        return {"error": ("the first changed commit is among commits that do not build" if skipped
                          else f"git bisect run ended without a culprit:\n{output[-3000:]}"),
                "log": log}
    culprit = m.group(1)
    subject = subprocess.run(["git", "-C", str(git_dir), "log", "-1", "--format=%s", culprit],
                             capture_output=True, text=True).stdout.strip()
    described = subprocess.run(["git", "-C", str(git_dir), "describe", "--tags", "--always", culprit],
                               capture_output=True, text=True).stdout.strip()
    return {"culprit": culprit, "described": described, "subject": subject, "good": good, "bad": bad,
            "scenario": scenario.name, "on": on, "log": log,
            "command": " ".join(shlex.quote(a) for a in step)}


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "step":
        sys.exit(step_main(sys.argv[2:]))
    print("usage: harness bisect (this module's `step` is run by git bisect run)", file=sys.stderr)
    sys.exit(2)
