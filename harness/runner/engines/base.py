"""One interface for both engines, and the one phase loop that runs a scenario through either.

An engine starts a `Run` for (scenario, profile, cluster). `execute` then drives every run the same
way: apply the manifests, settle, read back, check `expect`; then for each step play it, settle,
read back, check the step's `expect` - the shape of chainsaw's runner, which takes every test through
one apply -> assert loop per step (https://kyverno.github.io/chainsaw/latest/quick-start/ and
github.com/kyverno/chainsaw pkg/runner at 62507786).
An engine only says how it applies, plays and settles, and which expectations it can answer; the
verdict, the step bookkeeping and the `Outcome` are the loop's.
"""
from __future__ import annotations

import copy
import re
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from harness.model.upstream import releases
from harness.backends.base import Cluster
from harness.backends.kinds import WORKLOAD_KINDS
from harness.loop.result import RunResult
from harness.scenario.expect.match import Mismatch, check
from harness.heap import run_collections
from harness.scenario.load import Scenario
from harness.scenario.steps import StepFailed


@dataclass(frozen=True)
class NotApplicable:
    """An expectation (or given key, or step) an engine cannot answer, and why: reported, never
    passed silently."""
    path: str        # e.g. expect.loop.iterations
    reason: str
    engine: str = "real"

    def render(self) -> str:
        return f"{self.path}: not applicable on the {self.engine} engine ({self.reason})"


@dataclass
class Outcome:
    scenario: Scenario
    profile: str
    backend: str
    result: RunResult
    engine: str = "simulated"
    mismatches: list[Mismatch] = field(default_factory=list)
    step_results: list[RunResult] = field(default_factory=list)
    seconds: float = 0.0
    why: dict = field(default_factory=dict)     # pod key -> harness.loop.scheduling.why.PodWhy (final state)
    notices: list[str] = field(default_factory=list)   # where the real components differed, not failing
    not_applicable: list[NotApplicable] = field(default_factory=list)
    skipped: str | None = None                  # why the run was not made at all
    skipped_steps: list[str] = field(default_factory=list)
    version: str = ""                           # what answered: the real controller's version
    # what reached the fake (filled when the run records it: always on the real engine, on request
    # for the simulation - the conformance report compares both sides' bodies)
    hosts: list[str] = field(default_factory=list)     # Host headers the fake saw + hosts in the controller log
    vm_puts: dict = field(default_factory=dict)        # VM name -> PUT body (with customData)
    nic_puts: dict = field(default_factory=dict)
    vm_bodies: dict = field(default_factory=dict)      # VM name -> the fake's stored view
    nic_bodies: dict = field(default_factory=dict)
    log_tail: str = ""
    # the real controller's whole log of the run, kept when HARNESS_REAL_CONTROLLER_LOG is set (`harness run
    # --karpenter-log`/`--against-log` on the real engine: harness/runner/karpenterlog.py)
    controller_log: str = ""
    error: str | None = None       # the run could not finish: `file:line: ...: ExcType: message` (errored)
    # a run under several seeds (harness/judge/explore.py Exploration): the distinct outcomes, their counts
    exploration: object = None
    # what the release decided (harness/why/deciding.py Deciding), when asked
    deciding: object = None

    @property
    def final(self) -> RunResult:
        """The state where the run ended: after its last step. The simulation updates one result in place;
        the real engine reads a new one back per phase, so `result` alone is its first phase there."""
        return self.step_results[-1] if self.step_results else self.result

    @property
    def passed(self) -> bool:
        return not self.mismatches and self.error is None


def verdict(o: Outcome) -> str:
    """pass / FAIL / skipped; a declared xfail that applies to the engine (Scenario.xfail_reason) is
    xfail or XPASS, as pytest reports it under `xfail_strict`."""
    if o.error is not None:
        return "ERROR"
    if o.skipped:
        return "skipped"
    if o.scenario.xfail_reason(o.profile, real=o.engine == "real") is not None:
        return "xfail" if not o.passed else "XPASS"
    return "pass" if o.passed else "FAIL"


def errored(engine: str, scenario: Scenario, profile: str, backend: str, exc: BaseException,
            seconds: float = 0.0) -> Outcome:
    """The error verdict of a run that raised (a bug of ours included): the scenario's file:line, the
    exception and the innermost frames of the traceback (where in the harness it broke), so a
    multi-scenario run goes on with the others."""
    o = new_outcome(engine, scenario, profile, backend)
    at = _input_line(scenario, exc)
    if at is not None:          # the input's fault, at its line: no frames of ours
        o.error = f"{scenario.file}:{at}: {exc} (scenario {scenario.name!r} [{profile}/{backend}])"
        o.seconds = seconds
        return o
    frames = traceback.extract_tb(exc.__traceback__)[-3:]
    where = "; ".join(f"{Path(f.filename).name}:{f.lineno} in {f.name}" for f in frames)
    try:
        answered = releases.modeled_text(profile)       # `v0.7.5 (provider v0.7.5, core v1.0.6)`
    except Exception:       # noqa: BLE001 - the profile itself may be what failed
        answered = f"{profile} (its profile does not load)"
    o.error = (f"{scenario.file}:{scenario.line}: scenario {scenario.name!r} [{profile}/{backend}]: run raised "
               f"{type(exc).__name__}: {exc}" + (f" (at {where})" if where else "") + f"; release: {answered}")
    o.seconds = seconds
    return o


def _input_line(scenario: Scenario, exc: BaseException) -> int | None:
    """The scenario line of the field a seeding error names (SeedError.field: `given.existingNodes[0].zone`), or
    None for any other exception."""
    from harness.loop.provisioning.nodeclaimobject import SeedError
    if not isinstance(exc, SeedError) or getattr(scenario, "doc", None) is None:
        return None
    path: list = []
    for part in re.findall(r"[A-Za-z]+|\[\d+\]", exc.field):
        path.append(int(part[1:-1]) if part.startswith("[") else part)
    try:
        return scenario.doc.line(tuple(path))
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def new_outcome(engine: str, scenario: Scenario, profile: str, backend: str) -> Outcome:
    """An empty outcome that already names the release answering (provider release, the tags it covers,
    core version), before anything can fail: an ERROR row says whose behaviour it was too."""
    o = Outcome(scenario, profile, backend, RunResult(scenario.name, profile, backend, scenario.seed), engine=engine)
    try:
        o.result.release = releases.modeled(profile)
    except Exception as e:      # noqa: BLE001 - a profile that does not load still gets its row
        o.result.release = {"profile": profile, "release": "", "covers": [], "core": "",
                            "error": f"{type(e).__name__}: {e}"}
    return o


class Run(Protocol):
    """One live run of one scenario under one profile on one cluster."""

    def apply(self, manifests: list[dict]) -> None:
        """Apply manifests as `kubectl apply` would: create, or update what exists."""

    def seed(self, entries: list[dict]) -> None:
        """given.existingNodes: the cluster's existing Nodes, NodeClaims and running pods, before the
        workloads are applied; the scenario's request and create faults do not touch them (they
        existed before its faults began: FakeAzure.faults_held)."""

    def restrict_at_start(self, entries: list[dict]) -> None:
        """given.restrict: the sizes Azure took away after the existing nodes launched and before the
        scenario starts; the controller's SKU list at the first pass has the restrictions."""

    # the NodeClaims the last settle left in flight when it stopped for a `during: launch` step (empty when
    # it settled)
    in_flight: tuple[str, ...]
    # why the last settle's state is not the step's to judge (None: it is): the real engine stops a step's
    # settle before a disruption window that was still open at the step's instant closes, and the state it
    # then holds had not settled (real/windows.py); the simulation's settle fires no such timer
    unjudged: str | None

    def settle(self, until: str | None = None) -> RunResult:
        """Until steady (or runaway, or the engine's bound): the result as it is then. `until="launch"`
        (the next step's `during`): stop as soon as a NodeClaim is launched and its Node has not
        registered, and say which in `in_flight`."""

    def play(self, step: dict, manifests: list[dict]) -> str | None:
        """Play a step's actions in the one order (harness/scenario/steps.py ACTIONS, `steps.play`); returns
        why this engine cannot play it, decided before any action is played (the later steps build on it,
        so the loop stops there). A StepFailed leaves the step's later actions unplayed."""

    def applicable(self, expect: dict, root: str) -> tuple[dict, list[NotApplicable]]:
        """The part of `expect` this engine can answer, and the rest with the reason."""

    def read_back(self, result: RunResult, where: str, outcome: Outcome) -> list[Mismatch]:
        """What the real components did that the engine's own bookkeeping must answer for (e.g. the
        real kube-scheduler's bindings on kind, objects the API server refused): mismatches, and
        notices put into `outcome`."""

    def finish(self, outcome: Outcome, why: list[str] | None) -> None:
        """The engine's own facts into the outcome once every step was checked (why views, what
        reached the fake)."""

    def close(self, outcome: Outcome) -> None:
        """Release everything the run holds (pass, fail or error)."""


class Engine(Protocol):
    name: str
    # what a shared cluster must run for this engine (harness.backends.registry.shared_cluster options)
    cluster_options: dict

    def cluster_options_for(self, scenario: Scenario, profile: str | None = None, backend: str = "local") -> dict:
        """The shared cluster options a run of `scenario` needs (the real engine: the control plane of the
        Kubernetes version it names); may build what that cluster runs."""

    def available(self, backend: str) -> tuple[bool, str]: ...

    def skip_reason(self, scenario: Scenario, cluster: Cluster, profile: str | None = None) -> str | None:
        """Why this engine cannot run the scenario under `profile` faithfully on `cluster`, or None."""

    def start(self, scenario: Scenario, profile: str, cluster: Cluster, outcome: Outcome, **options) -> Run: ...


@dataclass
class Checkpoint:
    """One check the phase loop made: where (`expect`, `steps[i].expect`), the result as it was then
    and the mismatches the check found (read back, applicable expectations)."""
    root: str
    result: RunResult
    mismatches: list[Mismatch]


def execute(engine: Engine, scenario: Scenario, profile: str, cluster: Cluster, *, why: list[str] | None = None,
            checkpoints: list[Checkpoint] | None = None, **options) -> Outcome:
    """Run `scenario` under `profile` on `cluster` with `engine` and check every expectation.
    `why`: pod names whose why view the outcome gets even when the run passes. `checkpoints`: a list
    that gets each check point (a copy of the result where a later step changes it) - what an
    exploration judges `outcomes` over (harness/judge/explore.py)."""
    with run_collections():       # the collector's full walks after the run, not within it (heap.py)
        return _execute(engine, scenario, profile, cluster, why=why, checkpoints=checkpoints, **options)


def _execute(engine: Engine, scenario: Scenario, profile: str, cluster: Cluster, *, why: list[str] | None,
             checkpoints: list[Checkpoint] | None, **options) -> Outcome:
    t0 = time.perf_counter()
    outcome = new_outcome(engine.name, scenario, profile, cluster.backend)   # the loop's result says it too
    outcome.skipped = engine.skip_reason(scenario, cluster, profile)
    if outcome.skipped:
        return outcome
    run = engine.start(scenario, profile, cluster, outcome, **options)
    try:
        manifests = [m.obj for m in scenario.manifests]
        existing = scenario.given.get("existingNodes")
        if existing:        # classes and pools, then the existing nodes, then the workloads on them
            run.apply([m for m in manifests if m.get("kind") not in WORKLOAD_KINDS])
            run.seed(existing)
            manifests = [m for m in manifests if m.get("kind") in WORKLOAD_KINDS]
        judged = True
        try:
            if scenario.given.get("restrict"):     # after the existing nodes launched, before the first pass
                run.restrict_at_start(scenario.given["restrict"])
        except StepFailed as e:            # a size the run's catalog does not have: nothing is judged
            outcome.mismatches.append(Mismatch("given.restrict", e.wanted, e.reason, "the run cannot start from it",
                                               scenario.doc.line(("given", "restrict"))))
            judged = False
        run.apply(manifests)
        outcome.result = run.settle(_during(scenario, 0))
        if judged:
            _check(run, outcome, outcome.result, scenario.expect_for(profile), "", checkpoints, bool(scenario.steps))
        for i, step in enumerate(scenario.steps if judged else []):
            try:
                if step.get("during") == "launch" and not run.in_flight:
                    raise StepFailed("during", "a NodeClaim in flight (launched, its Node not registered)",
                                     "none was: the phase before settled with every launch registered or none made")
                cannot = run.play(step, [m.obj for m in scenario.step_manifests[i]])
            except StepFailed as e:          # the run's state does not allow the step
                outcome.mismatches.append(e.mismatch(scenario, i))
                break
            if cannot:
                outcome.skipped_steps.append(f"steps[{i}]: {cannot}")
                outcome.not_applicable.append(NotApplicable(f"steps[{i}]", cannot, engine.name))
                break               # later steps build on this one
            result = run.settle(_during(scenario, i + 1))
            if run.unjudged:          # neither the step's verdict nor a base for the later steps
                outcome.skipped_steps.append(f"steps[{i}]: {run.unjudged}")
                outcome.not_applicable.append(NotApplicable(f"steps[{i}].expect", run.unjudged, engine.name))
                break
            outcome.step_results.append(result)
            step_expect = scenario.expect_for(profile, step.get("expect") or {}, step.get("expectByProfile") or {})
            _check(run, outcome, result, step_expect, f"steps[{i}].", checkpoints, i < len(scenario.steps) - 1)
        run.finish(outcome, why)
    finally:
        run.close(outcome)
    outcome.seconds = time.perf_counter() - t0
    outcome.result.timings["total"] = outcome.seconds
    return outcome


def _during(scenario: Scenario, i: int) -> str | None:
    """What the settle before steps[i] stops for (its `during`), or None: settle fully."""
    return scenario.steps[i].get("during") if i < len(scenario.steps) else None


def execute_guarded(engine: Engine, scenario: Scenario, profile: str, cluster: Cluster, **options) -> Outcome:
    """`execute`, but whatever goes wrong inside the run becomes that run's error verdict (`errored`)
    instead of ending a multi-scenario run; Ctrl-C and SystemExit still end it."""
    t0 = time.perf_counter()
    try:
        return execute(engine, scenario, profile, cluster, **options)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as e:      # noqa: BLE001 - isolation is the point
        return errored(engine.name, scenario, profile, cluster.backend, e, time.perf_counter() - t0)


def _check(run: Run, outcome: Outcome, result: RunResult, expect: dict, where: str,
           checkpoints: list[Checkpoint] | None = None, later: bool = False) -> None:
    before = len(outcome.mismatches)
    outcome.mismatches += run.read_back(result, where, outcome)
    kept, na = run.applicable(expect, f"{where}expect")
    outcome.not_applicable += na
    outcome.mismatches += check(kept, result, outcome.scenario, f"{where}expect", outcome.profile)
    if checkpoints is not None:        # `later`: a step follows and changes the result in place
        checkpoints.append(Checkpoint(f"{where}expect", copy.deepcopy(result) if later else result,
                                      outcome.mismatches[before:]))
