"""given.loop.horizon: how long a settle watches the cluster, on both engines; what the simulation says
when it stops there, or settles while a launch fails again as before; and the conformance report's
comparison of a real run that did not settle with the simulation at that run's horizon."""
from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest

from harness.backends.embedded import EmbeddedBackend
from harness.judge import conformance
from harness.runner.engines import get_engine
from harness.runner.engines.base import execute
from harness.scenario.load import load_scenarios, load_scenarios_text

ROOT = Path(__file__).resolve().parents[2]
# every NIC GET answers 500: each launch of the NodeClaim fails the same way until core's 5 minute
# LaunchTimeout (liveness.go)
NIC_GET_FAILING = ("scenarios/loop/transient-azure-errors.scenario.yaml", "nic-get-failing-after-create-leaves-the-nic")
# a VM's kubelet registers three minutes after its create: the pod binds then
BOOTING = """
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: slow-boot}
given:
  skus: [Standard_D2s_v3]
  loop: {nodeBoot: 3m}
manifests:
  - file: ../manifests/default-nodepool.yaml
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      containers: [{name: app, image: nginx, resources: {requests: {cpu: 500m}}}]
expect:
  pods: {web: {scheduled: true}}
"""


@pytest.fixture(scope="module")
def cluster():
    c = EmbeddedBackend().start()
    yield c
    c.close()


def _scenario(which, horizon=None):
    if isinstance(which, tuple):
        path, name = which
        sc = next(s for s in load_scenarios(ROOT / path) if s.name == name)
    else:
        (sc,) = load_scenarios_text(which, "slow-boot.scenario.yaml", ROOT / "scenarios" / "loop")
    if horizon is None:
        return sc
    given = copy.deepcopy(sc.given)
    given.setdefault("loop", {})["horizon"] = horizon
    return dataclasses.replace(sc, given=given)


def _settle(result) -> str:
    (line,) = [t for t in result.trace if "[settle]" in t]
    return line


def test_a_launch_that_fails_again_as_before_settles_and_says_so(cluster):
    """Core retries the failed Create until its launch timeout; a retry that fails as the one before changes
    nothing (the real engine's settle reads it so too), so the run settles after one such retry, whatever
    its horizon, and says what core is still doing."""
    sim = get_engine("simulated")
    whole = execute(sim, _scenario(NIC_GET_FAILING), "upstream", cluster).result
    assert whole.steady and not whole.runaway and len(whole.nodeclaims) == 1
    assert len(whole.nodeclaims[0].failures) == 2          # the first attempt and one identical retry
    line = _settle(whole)
    assert "[settle] steady: nothing changes but NodeClaim" in line and "(1 identical retry)" not in line
    assert "failing as before" in line and "1 identical retry" in line and "until its launch timeout at" in line
    longer = execute(sim, _scenario(NIC_GET_FAILING, "10m"), "upstream", cluster).result
    assert longer.steady and [len(n.failures) for n in longer.nodeclaims] == [2]


def test_a_counted_fault_is_retried_until_it_is_used_up(cluster):
    """A fault with `times` changes with each request it answers: its retries are progress, and the
    launch that follows them succeeds (core's backoff reaches it long before the launch timeout)."""
    sc = _scenario(NIC_GET_FAILING)
    faults = [dict(f, times=24) for f in sc.given["faults"]]   # each launch's NIC GETs, client retries included
    sc = dataclasses.replace(sc, given={**copy.deepcopy(sc.given), "faults": faults})
    r = execute(get_engine("simulated"), sc, "upstream", cluster).result
    assert r.steady and [len(n.failures) for n in r.nodeclaims] == [3]
    assert r.pods["default/web"].node
    assert not [t for t in r.trace if "failing as before" in t]


def test_the_simulation_stops_its_clock_at_the_horizon(cluster):
    sim = get_engine("simulated")
    whole = execute(sim, _scenario(BOOTING), "upstream", cluster).result
    assert whole.steady and whole.pods["default/web"].node
    short = execute(sim, _scenario(BOOTING, "60s"), "upstream", cluster).result
    assert not short.steady and not short.pods["default/web"].node      # launched, its Node not registered yet
    assert _settle(short).endswith("[settle] not steady at the horizon (given.loop.horizon 60s)")
    failing = execute(sim, _scenario(NIC_GET_FAILING, "5s"), "upstream", cluster).result
    assert not failing.steady and [len(n.failures) for n in failing.nodeclaims] == [1]   # no retry within 5 s


def test_a_real_run_that_did_not_settle_is_compared_at_its_horizon(cluster):
    """The real engine stops watching at its horizon; the simulation had run on until the Node registered.
    Stand-in for the real run: the simulation watched for 60 s, as a real run that timed out reports it."""
    real = execute(get_engine("simulated"), _scenario(BOOTING, 60), "upstream", cluster)
    real.result.timings["settle"] = 60.0
    scenario = _scenario(BOOTING)
    assert conformance.compare(conformance.simulate(scenario, "upstream"), real)["status"] == "unexplained"
    entry = conformance.judge(scenario, "upstream", real, explore=1)
    assert entry["status"] == "agree" and entry["horizon"] == 60.0
    assert conformance.status_text(entry) == "agree at the real run's horizon (60.0 s, not settled)"
