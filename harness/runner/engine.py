"""Run one scenario under one profile on one cluster: fakeazure up, manifests applied, the loop
converged, steps played, and every expectation checked. Used by the pytest plugin and the CLI.
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.backends.base import APIRejected, Cluster
from harness.loop.clock import SimClock
from harness.loop.result import RunResult
from harness.loop.simulation import SimConfig, Simulation
from harness.loop.unavailable import parse_duration
from harness.loop.why import explain_pending
from harness.model import instancetypes as itmod
from harness.model.profile import profile_with_knobs
from harness.runner.catalogs import scenario_catalog
from harness.runner.expect import Mismatch, check
from harness.runner.notices import Notice, emit
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
    why: dict = field(default_factory=dict)     # pod key -> harness.loop.why.PodWhy (final state)
    notices: list[str] = field(default_factory=list)   # where the real components differed, not failing
    error: str | None = None       # the run could not finish: `file:line: ...: ExcType: message` (crash_outcome)

    @property
    def passed(self) -> bool:
        return not self.mismatches and self.error is None


def cluster_settings(scenario: Scenario) -> dict:
    """given.cluster over the harness defaults, in the scenario's own (camelCase) vocabulary."""
    merged = {k: (v.format(region=scenario.region) if isinstance(v, str) else v) for k, v in DEFAULT_CLUSTER.items()}
    merged.update(scenario.given.get("cluster") or {})
    merged["region"] = scenario.region
    return merged


def _fake_azure(scenario: Scenario, clock: SimClock):
    """fakeazure state for the scenario's `given`: region, SKUs (catalog names or inline
    objects), prices, quota and faults."""
    import fakeazure
    given = scenario.given
    resolved = scenario_catalog(scenario)          # catalog subset or whole, plus synthesized SKUs
    prices = resolved.prices
    wanted = given.get("skus")
    if wanted:
        by_name = {s["name"]: s for s in resolved.skus}
        skus = [by_name[w] if isinstance(w, str) else w for w in wanted if not isinstance(w, str) or w in by_name]
    else:
        skus = list(resolved.skus)
    # FakeAzure.add_skus stores normalized copies (fakeazure.catalog.normalize_sku): no copy here
    fake = fakeazure.FakeAzure(region=scenario.region, seed=scenario.seed, skus=skus, clock=clock)
    for region, table in prices.items():
        fake.set_prices(region, table)
    overrides = {}
    for name, price in (given.get("prices") or {}).items():
        overrides[name] = dict(price) if isinstance(price, dict) else {"on-demand": price, "spot": price}
    if overrides:
        fake.set_prices(scenario.region, overrides)
    for family, q in (given.get("quota") or {}).items():
        limit, current = (q, 0) if isinstance(q, int) else (q.get("limit"), q.get("current", 0))
        if family == "cores":
            fake.set_regional_quota(limit)
        elif family == "lowPriorityCores":
            fake.set_low_priority_quota(limit)
        else:
            fake.set_usage(family, limit, current)
    for f in given.get("faults") or []:
        fake.add_fault(f)
    return fake


@functools.lru_cache(maxsize=4)
def sdk_clients(subscription_id: str) -> tuple:
    """(transport, compute client, network client), built once per process: building the SDK
    clients costs more than a typical scenario's own calls, and they hold no per-run state. The
    transport hands each request to the fake it is `serving` in the calling thread, which skips the
    `requests` session and `responses` matcher of `mock_azure` (fakeazure/transport.py)."""
    from fakeazure.clients import compute_client, network_client
    from fakeazure.transport import InProcessTransport
    transport = InProcessTransport()
    return (transport, compute_client(None, subscription_id, transport=transport),
            network_client(None, subscription_id, transport=transport))


def run(scenario: Scenario, profile: str, cluster: Cluster, *, max_iterations: int | None = None,
        why: list[str] | None = None) -> Outcome:
    """Run `scenario` under `profile` on `cluster` and check its expectations. A failed run (or
    `why`: pod names) also gets the why view of its unplaced pods, computed after every check."""
    import fakeazure

    t0 = time.perf_counter()
    cluster.reset()
    prof = profile_with_knobs(profile, scenario.given.get("knobs"))
    cluster.install_profile(prof if prof.fingerprint else profile)
    settings = cluster_settings(scenario)
    loop_cfg = scenario.given.get("loop") or {}
    cfg = SimConfig(
        scenario=scenario.name, profile=prof, backend=cluster.backend, seed=scenario.seed,
        cluster=itmod.ClusterParams.from_dict(settings),
        max_iterations=max_iterations or int(loop_cfg.get("maxIterations", 60)),
        runaway_threshold=int(loop_cfg.get("runawayThreshold", 3)),
        min_values_policy=str(loop_cfg.get("minValuesPolicy", "Strict")),
        feature_gates=dict(scenario.given.get("featureGates") or {}),
    )
    if hasattr(cluster, "configure"):          # the embedded API server emulates the scenario's version
        cluster.configure(kubernetes_version=cfg.cluster.kubernetes_version)
    clock = SimClock()
    fake = _fake_azure(scenario, clock)
    # real backends talk to a loopback kube-apiserver through `requests` too: let those through
    transport, compute, network = sdk_clients(fake.subscription_id)
    with fakeazure.mock_azure(fake, passthrough=cluster.backend != "embedded"), transport.serving(fake):
        sim = Simulation(cfg, cluster, fake, compute, network, clock)
        result = sim.run([m.obj for m in scenario.manifests],          # Simulation.apply copies them
                         scenario.given.get("existingNodes"))
        outcome = Outcome(scenario, profile, cluster.backend, result)
        outcome.mismatches = _read_back(cluster, result, outcome, "")
        outcome.mismatches += check(scenario.expect_for(profile), result, scenario, "expect", profile)
        for i, step in enumerate(scenario.steps):
            if step.get("cluster"):
                settings = {**settings, **step["cluster"]}
                sim.set_cluster(itmod.ClusterParams.from_dict(settings))
            _play_step(sim, fake, step, [m.obj for m in scenario.step_manifests[i]])
            step_result = sim.converge()
            outcome.step_results.append(step_result)
            outcome.mismatches += _read_back(cluster, step_result, outcome, f"steps[{i}].")
            step_expect = scenario.expect_for(profile, step.get("expect") or {}, step.get("expectByProfile") or {})
            outcome.mismatches += check(step_expect, step_result, scenario, f"steps[{i}].expect", profile)
        if outcome.mismatches or why:
            outcome.why = explain_pending(sim, why)
    outcome.seconds = time.perf_counter() - t0
    result.timings["total"] = outcome.seconds
    return outcome


def run_guarded(scenario: Scenario, profile: str, cluster: Cluster, **kw) -> Outcome:
    """`run`, but whatever goes wrong inside the run (a bug of the harness included) becomes that
    run's error verdict, located at the scenario's file:line, instead of ending a multi-scenario run.
    Ctrl-C and SystemExit still end it."""
    t0 = time.perf_counter()
    try:
        return run(scenario, profile, cluster, **kw)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as e:      # noqa: BLE001 - isolation is the point
        return crash_outcome(scenario, profile, cluster.backend, e, time.perf_counter() - t0)


def crash_outcome(scenario: Scenario, profile: str, backend: str, exc: BaseException, seconds: float = 0.0) -> Outcome:
    """The error verdict of a run that raised: the scenario's file:line, the exception, and the
    innermost frames of the traceback (where in the harness it broke)."""
    import traceback
    frames = traceback.extract_tb(exc.__traceback__)[-3:]
    where = "; ".join(f"{Path(f.filename).name}:{f.lineno} in {f.name}" for f in frames)
    text = (f"{scenario.file}:{scenario.line}: scenario {scenario.name!r} [{profile}/{backend}]: run raised "
            f"{type(exc).__name__}: {exc}" + (f" (at {where})" if where else ""))
    out = Outcome(scenario, profile, backend, RunResult(scenario.name, profile, backend, scenario.seed))
    out.error, out.seconds = text, seconds
    return out


def _read_back(cluster: Cluster, result: RunResult, outcome: Outcome, where: str) -> list[Mismatch]:
    """A backend that runs the real components (kind: kube-scheduler, kubelets) puts what they did
    into the result; where that differs from the loop, a blocking difference is a mismatch and the
    rest are notices (in `outcome.notices` and the trace)."""
    if not hasattr(cluster, "read_back"):
        return []
    out = []
    for f in cluster.read_back(result):
        if f.blocking:
            out.append(Mismatch(f"{where}{f.path}", f.loop, f.real, f.detail))
        else:
            text = f"{where}{f.path}: loop {f.loop!r}, real {f.real!r} ({f.detail})"
            outcome.notices.append(text)
            result.trace.append(f"[real] {text}")
            emit([Notice(str(outcome.scenario.file), outcome.scenario.line, text, "real")])
    return out


def _play_step(sim: Simulation, fake, step: dict, manifests: list[dict]) -> None:
    if "advance" in step:
        sim.clock.advance(parse_duration(step["advance"]))
    for f in step.get("faults") or []:
        fake.add_fault(f)
    if manifests:
        sim.apply(manifests)
        sim.validate_nodepools()
    for d in step.get("delete") or []:
        try:
            sim.workloads.delete(d["kind"], d["name"], d.get("namespace"))
        except APIRejected as e:      # e.g. a NodePool the API server refused never existed
            sim.trace(f"step delete of {d['kind']} {d['name']}: {e.message}")
    ev = step.get("evict")
    if ev and "node" in ev and ev["node"] < len(sim.result.nodes):
        node = sim.result.nodes[ev["node"]]
        fake.evict(sim.provider.rg, node.vm_name)

