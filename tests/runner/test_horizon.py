"""given.loop.horizon: how long a settle watches the cluster, on both engines; and the conformance
report's comparison of a real run that did not settle with the simulation at that run's horizon."""
from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest

from harness.backends.embedded import EmbeddedBackend
from harness.runner import conformance
from harness.runner.engines import get_engine
from harness.runner.engines.base import execute
from harness.runner.scenario import load_scenarios

ROOT = Path(__file__).resolve().parents[2]
# every NIC GET answers 500: the same NodeClaim's launch is retried until core's 5 minute LaunchTimeout
# (liveness.go), then the next NodeClaim's; three of them make the simulation call it runaway
NIC_GET_FAILING = ("scenarios/loop/transient-azure-errors.scenario.yaml", "nic-get-failing-after-create-leaves-the-nic")


@pytest.fixture(scope="module")
def cluster():
    c = EmbeddedBackend().start()
    yield c
    c.close()


def _scenario(horizon=None):
    path, name = NIC_GET_FAILING
    sc = next(s for s in load_scenarios(ROOT / path) if s.name == name)
    if horizon is None:
        return sc
    given = copy.deepcopy(sc.given)
    given.setdefault("loop", {})["horizon"] = horizon
    return dataclasses.replace(sc, given=given)


def test_the_simulation_stops_its_clock_at_the_horizon(cluster):
    sim = get_engine("simulated")
    whole = execute(sim, _scenario(), "upstream", cluster).result
    assert whole.runaway and len(whole.nodeclaims) == 3
    short = execute(sim, _scenario("150s"), "upstream", cluster).result
    assert not short.steady and not short.runaway
    assert len(short.nodeclaims) == 1 and len(short.azure["nics"]) == 1     # the first NodeClaim, still retried


def test_a_real_run_that_did_not_settle_is_compared_at_its_horizon(cluster):
    """The real engine stops watching after 150 s; the simulation had run on to 10+ minutes of its clock.
    Stand-in for the real run: the simulation watched for 150 s, as a real run that timed out reports it."""
    real = execute(get_engine("simulated"), _scenario(150), "upstream", cluster)
    real.result.timings["settle"] = 150.0
    scenario = _scenario()
    assert conformance.compare(conformance.simulate(scenario, "upstream"), real)["status"] == "unexplained"
    entry = conformance.judge(scenario, "upstream", real, explore=1)
    assert entry["status"] == "agree" and entry["horizon"] == 150.0
    assert conformance.status_text(entry) == "agree at the real run's horizon (150.0 s, not settled)"
