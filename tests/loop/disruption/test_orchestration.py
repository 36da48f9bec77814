"""harness/loop/disruption/orchestration.py: a replace command whose replacement fails to launch, and the race
of given.loop.replacementFailure (docs/races.md): the queue untaints the candidates first, or Karpenter's
provisioner runs a round while they are still marked for deletion and launches a node for their pods."""
from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest

from harness.backends.embedded import EmbeddedBackend
from harness.runner.engines import get_engine
from harness.runner.engines.base import execute_guarded
from harness.scenario.load import load_scenarios

ROOT = Path(__file__).resolve().parents[3]
NAME = "on-demand-replaced-by-spot-when-cheaper"      # its spot replacement fails once, then launches


@pytest.fixture(scope="module")
def cluster():
    c = EmbeddedBackend().start()
    yield c
    c.close()


def _run(cluster, loop: dict, seed: int):
    sc = next(s for s in load_scenarios(ROOT / "scenarios/disruption/consolidation.scenario.yaml") if s.name == NAME)
    given = copy.deepcopy(sc.given)
    given["loop"] = {**(given.get("loop") or {}), **loop}
    given["seed"] = seed
    return execute_guarded(get_engine("simulated"), dataclasses.replace(sc, given=given), "upstream", cluster)


def _launched(o) -> list:
    return [c for c in o.final.nodeclaims if c.launched]


def test_the_calm_order_untaints_before_the_provisioner_runs(cluster):
    o = _run(cluster, {}, seed=2)
    assert o.passed and len(_launched(o)) == 2          # the on-demand node and its spot replacement


def test_raced_a_round_first_launches_a_node_for_the_candidates_pods_that_goes_empty(cluster):
    # seed 2 draws the round first (the stream replacement-failure-2), seed 1 does not
    o = _run(cluster, {"replacementFailure": "raced"}, seed=2)
    assert o.passed
    assert len(_launched(o)) == 3
    # the extra node came up for the candidate's pod, which stayed put once the candidate was untainted
    assert [d.get("reason") for d in o.final.disruptions] == ["Empty", "Underutilized"]
    assert len(_launched(_run(cluster, {"replacementFailure": "raced"}, seed=1))) == 2
