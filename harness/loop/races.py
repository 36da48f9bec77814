"""The races the loop models: each `given.loop` option that makes one timing of a real cluster a seeded
choice, with the value that races and the value a scenario runs with when it says nothing.

A scenario's own run keeps its options as written (the default is the calm order: one draw, replayed
exactly). An exploration that covers the races (`harness run --explore N`, the conformance judge:
harness/judge/explore.py) turns the ones the scenario does not set on and off per seed (`draw`), so
its outcome set holds what the real cluster's timings reach. Each race's behaviour is in the module
named beside it; why each is a race of the real cluster: docs/races.md.

`harness run --explore` also draws the timings a scenario does not give (harness/loop/assumed.py TIMINGS: how
long a VM boots, how long Azure takes to delete one) from a range, per run in a stream of their own, so a user
sees whether the outcome hangs on them (assumed.py also says when a plain run assumed them)."""
from __future__ import annotations

import random
from dataclasses import dataclass

from harness.loop.assumed import TIMINGS


@dataclass(frozen=True)
class Race:
    key: str        # given.loop key
    calm: object    # the value a scenario runs with when it does not set the key
    racing: object  # the value that makes the race a seeded choice
    # a value the conformance judge also explores on its own, every other race calm (`alone`), for outcomes
    # the mixed draws reach only rarely; None: none
    alone: object = None


RACES = (
    # a launch's Nodes turn Ready one at a time, kube-scheduler binding after each, and Karpenter's
    # provisioner may run a round between two of them (simulation.py _lifecycle_staggered, _round_mid_launch)
    # alone, staggered: past its first runs an exploration turns each race on in half its runs, so
    # nodesReady with every other race calm is one run in 32, and a spread run adds its seeded rounds
    # (scenarios/fuzz/fuzz-aa6b692c6f.scenario.yaml: its binding, met in no raced run of 1200; docs/races.md)
    Race("nodesReady", "together", "spread", alone="staggered"),
    # each workload of an apply after the first reaches the provisioner before or after its first round
    # (loop/kube/workloads.py Workloads.late, simulation.py _arrive_late)
    Race("podsArrive", "together", "staggered"),
    # a Deployment's pods are created before or after the bare Pods applied with it (loop/kube/workloads.py)
    Race("controllerPods", "first", "raced"),
    # a launch starts before or after the launches ahead of it in its pass finished, and meets what a failure
    # marked unavailable (loop/lifecycle/launch.py)
    Race("launches", "together", "staggered"),
    # a launched VM registers after Karpenter's next provisioning round, not in the same pass: any boot
    # shorter than one loop iteration (simulation.py ITERATION_SECONDS, _boot_deadline) puts one round between
    Race("nodeBoot", 0, "1s"),
    # a rollout's replacement pod is pending before or after the old pod it replaces left its node
    # (loop/kube/rollout.py)
    Race("rolloutPods", "after", "raced"),
    # the disruption controller's next pass runs once the last command's nodes are gone, or while they terminate
    # (one by one) and before kube-scheduler placed the pods their drain evicted: commands in pairs
    # (simulation.py Simulation._terminating, loop/lifecycle/nodetermination.py NodeTermination._spread); and a delete
    # command's nodes gone while the nominations its start set hold (Simulation._hold_nominations). Last, so the
    # draws of the races above stay as they were
    Race("nextCommand", "afterDrain", "raced"),
    # a failed replacement's candidates are still marked for deletion when Karpenter's provisioner runs a round,
    # which launches a node for their pods (loop/disruption/orchestration.py Orchestration._fail). After
    # nextCommand, so the draws of the races above stay as they were
    Race("replacementFailure", "untaintFirst", "raced"),
)


def open_races(loop: dict) -> list[Race]:
    """The races a scenario's given.loop leaves to the exploration (the keys it does not set)."""
    return [r for r in RACES if r.key not in loop]


def alone(loop: dict) -> list[dict]:
    """The given.loop options an exploration of the races runs on their own as well (a race's `alone`
    value), for the races the scenario leaves open."""
    return [{r.key: r.alone} for r in open_races(loop) if r.alone is not None]


def draw(loop: dict, seed: int, k: int) -> dict:
    """The given.loop options run k of an exploration adds under `seed`: none for run 0 (the scenario's
    own run), every open race for run 1, each open race alone for the runs after it (so a race whose
    outcome another race would hide is met on its own), then each open race in a seeded choice (its own
    stream, so the loop's draws under the seed do not move)."""
    races = open_races(loop)
    if k == 0:
        return {}
    if k == 1:
        return {r.key: r.racing for r in races}
    if k - 2 < len(races):
        r = races[k - 2]
        return {r.key: r.racing}
    rng = random.Random(f"races-{seed}")
    return {r.key: r.racing for r in races if rng.random() < 0.5}


def draw_timings(loop: dict, seed: int, k: int) -> dict:
    """The timings run k of an exploration sets under `seed`, for the keys of assumed.TIMINGS `loop` leaves out:
    none for run 0 (the scenario as written), then one value per key from its `explored` values, drawn from a stream
    of its own (`timings-<seed>`), so the races' draws and the loop's do not move."""
    if k == 0:
        return {}
    rng = random.Random(f"timings-{seed}")
    return {t.key: rng.choice(t.explored) for t in TIMINGS if t.key not in loop}
