"""Seeded random-fault soak (issue 12, issue 56): python bench/soak_faults.py --runs 1000 --seed 1
Each run takes a scenario from scenarios/loop and scenarios/upstream-tests (with its existing nodes),
adds 1-3 random fault rules (429/5xx on any Azure operation, create failures, failed deletes;
random times/probability), and runs it on the embedded backend. Counted: crashes (any exception),
and leaks beyond what upstream leaves: once the run is over, the faults are cleared, time passes
(operations Azure accepted finish on its own clock) and the provider's garbage collectors run to
completion (as upstream's would, later); any VM or NIC that no live NodeClaim owns and that is still
there was lost track of. `--out DIR` keeps each failing run as a scenario file (manifests inlined,
the faults and seed in `given`) to replay with `harness run`; `--fingerprints FILE` writes each
run's result digest, which a second process with the same seed must reproduce (`--against FILE`).
docs/reliability.md has the latest numbers."""
from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import traceback
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
OPERATIONS = ["skus.list", "usages.list", "nic.create", "nic.get", "nic.delete", "nic.list", "vm.create", "vm.get",
              "vm.delete", "vm.list", "operation.get", "*"]
REQUEST_CODES = ["TooManyRequests", "InternalServerError", "BadGateway", "ServiceUnavailable", "GatewayTimeout"]
CREATE_CODES = ["ZonalAllocationFailed", "AllocationFailed", "SkuNotAvailable", "OverconstrainedAllocationRequest"]
# after the run, before the final garbage collection: long enough for every accepted operation to
# finish on the fake's clock (fakeazure/lro.py: N polls' worth of Retry-After)
SETTLE_SECONDS = 600.0


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
    """engine.run's set-up (fakeazure state, the simulation, the existing nodes), then - with the
    faults cleared and time passed - the provider's garbage collectors run to completion. Returns
    (result, left, collected): `left` is the VMs and NICs still there that no live NodeClaim owns,
    i.e. what a later GC would not have removed; `collected`, how many that GC removed."""
    import fakeazure
    from fakeazure.clients import compute_client, network_client
    from harness.loop.clock import SimClock
    from harness.loop.simulation import SimConfig, Simulation
    from harness.model.azure import instancetypes as itmod
    from harness.model.upstream.profile import profile_with_knobs
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
        result = sim.run([m.obj for m in sc.manifests], existing=sc.given.get("existingNodes"))
        snap = fake.snapshot()
        left_faulty = len(snap["vms"]) + len(snap["nics"])
        fake.clear_faults()
        fake.advance(SETTLE_SECONDS)
        live = {sim.provider.resource_name(c.result.name).lower() for c in sim.claims if not c.done}
        sim.provider.collect_garbage(live, eventually=True)
        snap = fake.snapshot()
    left = [v["name"] for v in snap["vms"] if v["name"].lower() not in live]
    left += [n["name"] for n in snap["nics"] if n["name"].lower() not in live]
    return result, left, left_faulty - len(snap["vms"]) - len(snap["nics"])


def reproducer(sc, given: dict) -> str:
    """The run as a scenario file of its own: the document with its faults and seed, the manifests
    inlined (a file of its own has no tree to resolve `file:` references against)."""
    data = copy.deepcopy(sc.doc.data)
    data["given"] = copy.deepcopy(given)
    data["manifests"] = [copy.deepcopy(m.obj) for m in sc.manifests]
    data.pop("expect", None)            # what the library expects without the faults
    data.pop("expectByProfile", None)
    return f"# reproducer of {sc.file.name} ({sc.name}) kept by bench/soak_faults.py\n" + \
        yaml.safe_dump(data, sort_keys=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None, help="keep each failing run here as a scenario file")
    ap.add_argument("--fingerprints", type=Path, default=None, help="write each run's result digest (JSON)")
    ap.add_argument("--against", type=Path, default=None, help="compare the digests with ones written earlier")
    args = ap.parse_args()
    from harness.backends.embedded import EmbeddedBackend
    from harness.judge.fingerprint import result_digest
    from harness.scenario.load import find_scenario_files, load_scenarios

    rng = random.Random(args.seed)
    pool = [sc for f in find_scenario_files([ROOT / "scenarios" / "loop", ROOT / "scenarios" / "upstream-tests"])
            for sc in load_scenarios(f) if not sc.steps]
    cluster = EmbeddedBackend().start()
    crashes, leaks, collected_later, runs, digests, kept = [], [], 0, 0, {}, []
    try:
        for i in range(args.runs):
            base = rng.choice(pool)
            given = dict(base.given)
            given["faults"] = list(given.get("faults") or []) + [random_fault(rng) for _ in range(rng.randint(1, 3))]
            given["seed"] = rng.randrange(2**31)
            sc = type(base)(**{**base.__dict__, "given": given})
            runs += 1
            key = f"{i:05d} {base.name} seed={given['seed']}"
            try:
                result, left, gc_removed = run_once(sc, sc.profiles[0], cluster)
            except Exception:  # noqa: BLE001 - a crash is what the soak counts
                crashes.append(f"{key} {given['faults']}:\n{traceback.format_exc()}")
                kept.append((f"crash-{i:05d}-{base.name}", reproducer(base, given)))
                continue
            digests[key] = result_digest(result)
            collected_later += gc_removed
            if left:
                leaks.append(f"{key} {given['faults']}: {left}")
                kept.append((f"leak-{i:05d}-{base.name}", reproducer(base, given)))
            if (i + 1) % 100 == 0:
                print(f"  {i + 1} runs, {len(crashes)} crashes, {len(leaks)} runs with leaks", file=sys.stderr, flush=True)
    finally:
        cluster.close()
    print(f"soak: {runs} runs (seed {args.seed}), {len(crashes)} crashes, {len(leaks)} runs leaking VMs/NICs once "
          f"the faults cleared, time passed and the garbage collectors ran; {collected_later} VMs/NICs that the "
          f"faults left were removed by that later garbage collection (what upstream leaves meanwhile)")
    if args.out is not None and kept:
        args.out.mkdir(parents=True, exist_ok=True)
        for name, text in kept:
            (args.out / f"seed{args.seed}-{name}.scenario.yaml").write_text(text)
        print(f"kept {len(kept)} failing runs in {args.out}")
    if args.fingerprints is not None:
        args.fingerprints.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    moved = []
    if args.against is not None:
        old = json.loads(args.against.read_text())
        moved = sorted(k for k in old.keys() & digests.keys() if old[k] != digests[k])
        print(f"fingerprints: {len(moved)} of {len(old.keys() & digests.keys())} runs differ from {args.against}")
    for text in (crashes[:1] + leaks[:3] + moved[:3]):
        print(text)
    return 1 if crashes or leaks or moved else 0


if __name__ == "__main__":
    sys.exit(main())
