"""Seeded random-fault soak (issue 12): python bench/soak_faults.py --runs 1000 --seed 1
Each run takes a scenario from scenarios/loop and scenarios/upstream-tests, adds 1-3 random fault
rules (429/5xx on any Azure operation, create failures, failed deletes; random times/probability),
and runs it on the embedded backend. Counted: crashes (any exception), and leaks beyond what
upstream leaves: once the run is over, the faults are cleared and the provider's garbage collectors
run to completion (as upstream's would, later); any VM or NIC that no live NodeClaim owns and that is
still there was lost track of."""
from __future__ import annotations

import argparse
import random
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPERATIONS = ["skus.list", "usages.list", "nic.create", "nic.get", "nic.delete", "nic.list", "vm.create", "vm.get",
              "vm.delete", "vm.list", "*"]
REQUEST_CODES = ["TooManyRequests", "InternalServerError", "BadGateway", "ServiceUnavailable", "GatewayTimeout"]
CREATE_CODES = ["ZonalAllocationFailed", "AllocationFailed", "SkuNotAvailable", "OverconstrainedAllocationRequest"]


def random_fault(rng: random.Random) -> dict:
    if rng.random() < 0.7:
        f = {"code": rng.choice(REQUEST_CODES), "match": {"operation": rng.choice(OPERATIONS)}}
    else:
        f = {"code": rng.choice(CREATE_CODES)}
    r = rng.random()
    if r < 0.5:
        f["times"] = rng.randint(1, 6)
    elif r < 0.8:
        f["probability"] = round(rng.random(), 2)
    return f


def run_once(sc, profile, cluster):
    """engine.run's set-up (fakeazure state, the simulation), then - with the faults cleared - the
    provider's garbage collectors run to completion. Returns (result, left): `left` is the VMs and
    NICs still there that no live NodeClaim owns, i.e. what a later GC would not have removed."""
    import fakeazure
    from fakeazure.clients import compute_client, network_client
    from harness.loop.clock import SimClock
    from harness.loop.simulation import SimConfig, Simulation
    from harness.model import instancetypes as itmod
    from harness.model.profile import profile_with_knobs
    from harness.runner.engines.azureside import cluster_settings, fake_azure

    cluster.reset()
    prof = profile_with_knobs(profile, sc.given.get("knobs"))
    cluster.install_profile(prof if prof.fingerprint else profile)
    cfg = SimConfig(scenario=sc.name, profile=prof, backend=cluster.backend, seed=sc.seed,
                    cluster=itmod.ClusterParams.from_dict(cluster_settings(sc)), max_iterations=40,
                    runaway_threshold=int((sc.given.get("loop") or {}).get("runawayThreshold", 3)),
                    min_values_policy=str((sc.given.get("loop") or {}).get("minValuesPolicy", "Strict")))
    if hasattr(cluster, "configure"):
        cluster.configure(kubernetes_version=cfg.cluster.kubernetes_version)
    clock = SimClock()
    fake = fake_azure(sc, clock)
    with fakeazure.mock_azure(fake, passthrough=cluster.backend != "embedded"):
        sim = Simulation(cfg, cluster, fake, compute_client(fake), network_client(fake), clock)
        result = sim.run([m.obj for m in sc.manifests])
        left_faulty = len(fake.snapshot()["vms"]) + len(fake.snapshot()["nics"])
        fake.clear_faults()
        live = {sim.provider.resource_name(c.result.name).lower() for c in sim.claims if not c.done}
        sim.provider.collect_garbage(live, eventually=True)
        snap = fake.snapshot()
    # a VM in provisioningState Deleting is on its way out, with its NIC (deleteOption Delete): the
    # delete was accepted and Azure finishes it without the provider (its poll was what failed)
    going = {v["name"].lower() for v in snap["vms"] if str(v.get("provisioning_state", "")).lower() == "deleting"}
    left = [v["name"] for v in snap["vms"] if v["name"].lower() not in live | going]
    left += [n["name"] for n in snap["nics"] if n["name"].lower() not in live | going]
    return result, left, left_faulty - len(snap["vms"]) - len(snap["nics"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    from harness.backends.embedded import EmbeddedBackend
    from harness.runner.scenario import find_scenario_files, load_scenarios

    rng = random.Random(args.seed)
    pool = [sc for f in find_scenario_files([ROOT / "scenarios" / "loop", ROOT / "scenarios" / "upstream-tests"])
            for sc in load_scenarios(f) if not sc.steps]
    cluster = EmbeddedBackend().start()
    crashes, leaks, collected_later, runs = [], [], 0, 0
    try:
        for i in range(args.runs):
            base = rng.choice(pool)
            given = dict(base.given)
            given["faults"] = list(given.get("faults") or []) + [random_fault(rng) for _ in range(rng.randint(1, 3))]
            given["seed"] = rng.randrange(2**31)
            sc = type(base)(**{**base.__dict__, "given": given})
            runs += 1
            try:
                _, left, gc_removed = run_once(sc, sc.profiles[0], cluster)
            except Exception:  # noqa: BLE001 - a crash is what the soak counts
                crashes.append(f"{base.name} {given['faults']}:\n{traceback.format_exc()}")
                continue
            collected_later += gc_removed
            if left:
                leaks.append(f"{base.name} seed={given['seed']} {given['faults']}: {left}")
            if (i + 1) % 100 == 0:
                print(f"  {i + 1} runs, {len(crashes)} crashes, {len(leaks)} runs with leaks", file=sys.stderr, flush=True)
    finally:
        cluster.close()
    print(f"soak: {runs} runs (seed {args.seed}), {len(crashes)} crashes, {len(leaks)} runs leaking VMs/NICs once "
          f"the faults cleared and the garbage collectors ran; {collected_later} VMs/NICs that the faults left "
          f"were removed by that later garbage collection (what upstream leaves meanwhile)")
    for text in (crashes[:1] + leaks[:3]):
        print(text)
    return 1 if crashes or leaks else 0


if __name__ == "__main__":
    sys.exit(main())
