"""Run one scenario under one profile on one cluster: fakeazure up, manifests applied, the loop
converged, steps played, and every expectation checked. Used by the pytest plugin and the CLI.
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

from harness.backends.base import Cluster
from harness.loop.result import RunResult
from harness.loop.simulation import SimConfig, Simulation
from harness.loop.unavailable import parse_duration
from harness.model import instancetypes as itmod
from harness.model.profile import load_profile
from harness.runner.expect import Mismatch, check
from harness.runner.scenario import Scenario

DEFAULT_CLUSTER = {
    "nodeResourceGroup": "MC_harness-rg_harness-cluster_{region}",
    "clusterName": "harness-cluster",
    "kubeletIdentityClientID": "11111111-2222-3333-4444-555555555555",
    "vnetGUID": "a1b2c3d4-0000-4000-8000-00000000abcd",
    "subnetName": "aks-subnet",
}


@dataclass
class Outcome:
    scenario: Scenario
    profile: str
    backend: str
    result: RunResult
    mismatches: list[Mismatch] = field(default_factory=list)
    step_results: list[RunResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return not self.mismatches


def cluster_settings(scenario: Scenario) -> dict:
    """given.cluster over the harness defaults, in the scenario's own (camelCase) vocabulary."""
    merged = {k: (v.format(region=scenario.region) if isinstance(v, str) else v) for k, v in DEFAULT_CLUSTER.items()}
    merged.update(scenario.given.get("cluster") or {})
    merged["region"] = scenario.region
    return merged


def _fake_azure(scenario: Scenario):
    import fakeazure
    given = scenario.given
    fake = fakeazure.FakeAzure(region=scenario.region, seed=scenario.seed,
                               catalog=given.get("catalog") or scenario.region)
    skus = given.get("skus")
    if skus:
        names = [s for s in skus if isinstance(s, str)]
        inline = [s for s in skus if isinstance(s, dict)]
        fake.select_skus(names, inline) if hasattr(fake, "select_skus") else None
    for family, q in (given.get("quota") or {}).items():
        limit, current = (q, 0) if isinstance(q, int) else (q.get("limit"), q.get("current", 0))
        if family == "cores":
            fake.set_regional_quota(limit, current)
        elif family == "lowPriorityCores":
            fake.set_low_priority_quota(limit, current)
        else:
            fake.set_usage(family, limit, current)
    for name, price in (given.get("prices") or {}).items():
        fake.set_price(name, price)
    for f in given.get("faults") or []:
        fake.add_fault(f)
    return fake


def run(scenario: Scenario, profile: str, cluster: Cluster, *, max_iterations: int | None = None) -> Outcome:
    """Run `scenario` under `profile` on `cluster` and check its expectations."""
    import fakeazure
    from fakeazure.clients import compute_client, network_client

    t0 = time.perf_counter()
    cluster.reset()
    cluster.install_profile(profile)
    loop_cfg = scenario.given.get("loop") or {}
    cfg = SimConfig(
        scenario=scenario.name, profile=load_profile(profile), backend=cluster.backend, seed=scenario.seed,
        cluster=itmod.ClusterParams.from_dict(cluster_settings(scenario)),
        max_iterations=max_iterations or int(loop_cfg.get("maxIterations", 60)),
        runaway_threshold=int(loop_cfg.get("runawayThreshold", 3)),
        min_values_policy=str(loop_cfg.get("minValuesPolicy", "Strict")),
    )
    fake = _fake_azure(scenario)
    with fakeazure.mock_azure(fake):
        sim = Simulation(cfg, cluster, fake, compute_client(fake), network_client(fake), fake.clock
                         if hasattr(fake.clock, "advance") else None)
        result = sim.run([copy.deepcopy(m.obj) for m in scenario.manifests])
        outcome = Outcome(scenario, profile, cluster.backend, result)
        outcome.mismatches = check(scenario.expect_for(profile), result, scenario, "expect")
        settings = cluster_settings(scenario)
        for i, step in enumerate(scenario.steps):
            if step.get("cluster"):
                settings = {**settings, **step["cluster"]}
                sim.cfg.cluster = sim.provider.cluster = itmod.ClusterParams.from_dict(settings)
            _play_step(sim, fake, step, [copy.deepcopy(m.obj) for m in scenario.step_manifests[i]])
            step_result = sim.converge()
            outcome.step_results.append(step_result)
            step_expect = scenario.expect_for(profile, step.get("expect") or {}, step.get("expectByProfile") or {})
            outcome.mismatches += check(step_expect, step_result, scenario, f"steps[{i}].expect")
    outcome.seconds = time.perf_counter() - t0
    result.timings["total"] = outcome.seconds
    return outcome


def _play_step(sim: Simulation, fake, step: dict, manifests: list[dict]) -> None:
    if "advance" in step:
        sim.clock.advance(parse_duration(step["advance"]))
    for f in step.get("faults") or []:
        fake.add_fault(f)
    if manifests:
        sim.apply(manifests)
        sim._validate_nodepools()
    for d in step.get("delete") or []:
        sim.cluster.delete(d["kind"], d["name"], d.get("namespace"))
    ev = step.get("evict")
    if ev and "node" in ev and ev["node"] < len(sim.result.nodes):
        node = sim.result.nodes[ev["node"]]
        fake.evict(sim.provider.rg, node.vm_name)

