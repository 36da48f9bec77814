"""The scheduler's results stay identical while its internals are optimized (issue 16).

Each case runs a seeded workload through `Scheduler.solve` and compares a digest of the whole
result (which pods on which claims in which order, claim requirements, instance-type lists,
requests, existing-node hits, errors, NodePool events) with the digest the scheduler produced
before the claim index / lazy topology errors / pod-count buckets were added. A changed digest
means a behavior change, not a flaky test: every random choice is seeded.
"""
from __future__ import annotations

import hashlib
import json
import random

import pytest

from harness.loop.scheduling.limits import RemainingResources
from harness.loop.scheduling.pods import PodView
from harness.loop.scheduling.scheduler import ExistingNode, Scheduler, Template
from harness.loop.scheduling.topology import Topology, topology_keys, universe_for
from harness.model.labels.requirements import Requirement, Requirements
from tests.loop.loopkit import synthetic_world

CPU = ["100m", "250m", "500m", "1000m", "1500m", "3", "7"]
MEM = ["100Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi", "30Gi"]
ZONES = ["eastus-1", "eastus-2", "eastus-3"]
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def nodepool(name: str, weight: int = 0, taints=None, limits=None, requirements=None) -> dict:
    spec: dict = {"template": {"spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass",
                                                         "name": "default"},
                                        "requirements": requirements or [], "taints": taints or []}}}
    if weight:
        spec["weight"] = weight
    if limits:
        spec["limits"] = limits
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name, "uid": name},
            "spec": spec}


def make_pod(i: int, rng: random.Random, kind: str) -> PodView:
    """One pod of a mix: core's diverse fifths, plus selectors, tolerations, preferences and
    ScheduleAnyway spreads for the `mixed` mix."""
    spec: dict = {"containers": [{"name": "c", "resources": {"requests": {"cpu": rng.choice(CPU),
                                                                       "memory": rng.choice(MEM)}}}]}
    labels = {"my-label": rng.choice("abcde")}
    if kind in ("zspread", "hspread"):
        key = ZONE if kind == "zspread" else HOST
        spec["topologySpreadConstraints"] = [{"maxSkew": rng.choice([1, 1, 2]), "topologyKey": key,
                                              "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
                                              "labelSelector": {"matchLabels": {"my-label": labels["my-label"]}}}]
    elif kind == "affinity":
        labels["my-affinity"] = rng.choice("abcde")
        spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": ZONE, "labelSelector": {"matchLabels": {"my-affinity": labels["my-affinity"]}}}]}}
    elif kind == "anti":
        labels = {"app": rng.choice(["nginx", "web"])}
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": rng.choice([HOST, HOST, ZONE]), "labelSelector": {"matchLabels": {"app": labels["app"]}}}]}}
    elif kind == "prefanti":
        labels = {"app": "cache"}
        spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "podAffinityTerm": {"topologyKey": HOST,
                                               "labelSelector": {"matchLabels": {"app": "cache"}}}}]}}
    elif kind == "selector":
        spec["nodeSelector"] = {ZONE: rng.choice(ZONES)}
    elif kind == "prefnode":
        spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "preference": {"matchExpressions": [{"key": ZONE, "operator": "In",
                                                               "values": [rng.choice(ZONES)]}]}}],
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}]},
                {"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}]}}}
    elif kind == "tolerate":
        spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    elif kind == "hostsel":
        spec["nodeSelector"] = {HOST: rng.choice(["node-1", "node-2", "elsewhere"])}
    elif kind == "huge":
        spec["containers"][0]["resources"]["requests"] = {"cpu": "900", "memory": "1Gi"}
    obj = {"metadata": {"name": f"p{i}", "namespace": rng.choice(["default", "default", "other"]),
                        "uid": f"uid-{i}", "labels": labels}, "spec": spec}
    pod = PodView(obj, i)
    if kind == "volume":          # VolumeTopology alternatives (harness/loop/scheduling/volumes.py)
        pod.volume_requirements = [Requirements([Requirement.new(ZONE, "In", [z])])
                                   for z in rng.sample(ZONES, rng.choice([1, 2]))]
    return pod


MIXES = {
    "generic": ["generic"],
    "diverse": ["generic", "zspread", "hspread", "affinity", "anti"],
    "mixed": ["generic", "zspread", "hspread", "affinity", "anti", "prefanti", "selector", "prefnode",
              "tolerate", "huge"],
    "volumes": ["generic", "hspread", "anti", "volume", "hostsel", "zspread"],
}


@pytest.fixture(scope="module")
def world():
    return synthetic_world()


def run_case(world, mix: str, n: int, seed: int) -> dict:
    profile, sem, its = world
    rng = random.Random(seed)
    kinds = MIXES[mix]
    batch = [make_pod(i, rng, kinds[(i * len(kinds)) // n] if mix == "diverse" else rng.choice(kinds))
             for i in range(n)]
    nps = [nodepool("default")]
    existing: list[ExistingNode] = []
    remaining = None
    if mix in ("mixed", "volumes"):
        nps = [nodepool("default"),
               nodepool("gpu", weight=10, taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
                        limits={"cpu": "64"}),
               nodepool("zonal", weight=5, requirements=[{"key": ZONE, "operator": "In", "values": ZONES[:2]}],
                        limits={"cpu": "200", "nodes": "40"})]
        for j in range(4):
            labels = {ZONE: ZONES[j % 3], HOST: f"node-{j}", "kubernetes.io/arch": "amd64",
                      "karpenter.sh/nodepool": "default"}
            existing.append(ExistingNode(f"node-{j}", labels, [], {"cpu": 4000, "memory": 16 * 2**30, "pods": 30},
                                         {"cpu": 500 * j, "memory": 2**30 * j}))
        remaining = RemainingResources.build(nps, [("zonal", {"cpu": 8000}, True)])
    templates = [Template.from_nodepool(np_, its, profile, sem) for np_ in nps]
    keys = set().union(*(topology_keys(p) for p in batch))
    node_labels = {n_.name: n_.labels for n_ in existing}
    topo = (Topology(universe_for(keys, templates), node_labels, [], sem=sem, well_known=profile.well_known_labels)
            if keys else None)
    result = Scheduler(templates, existing, profile, sem, topology=topo, remaining=remaining).solve(batch)
    return {
        "claims": [{"template": c.template.name, "hostname": c.hostname, "pods": [p.uid for p in c.pods],
                    "requirements": str(c.requirements), "instance_types": [it.name for it in c.instance_types],
                    "requests": sorted(c.requests.items())} for c in result.new_claims],
        "existing": sorted(result.existing.items()),
        "errors": sorted(result.errors.items()),
        "events": result.nodepool_events,
    }


def digest(fp: dict) -> str:
    return hashlib.sha256(json.dumps(fp, sort_keys=True).encode()).hexdigest()[:16]


# recorded from the scheduler before the issue-16 optimizations (harness/loop/scheduling/scheduler.py and
# topology.py as of commit 6d893d0), re-recorded once when topology became core's (issue 22: ties picked
# with the seed instead of by name, spread node filters, affinity bootstrapping on the first domain only,
# Requirements.Compatible after AddRequirements), and again when a tie became a question per (pod, node)
# (core draws a new map order on each TopologyGroup.Get: 9 of the 13 cases moved; the claim count in four: diverse-300 20 -> 19, diverse-1000 64 -> 66, mixed-800 37 -> 40,
# diverse-2000 143 -> 154);
# test_the_claim_index_changes_no_result re-checks the optimizations against the unindexed scan on the
# new behavior
EXPECTED = {
    ('generic', 300, 1): "cc93b330499e0d7e",
    ('diverse', 300, 2): "194dddc44db4a928",
    ('diverse', 500, 3): "94fd415d712cd66a",
    ('mixed', 300, 4): "c8736cd79566984d",
    ('mixed', 400, 5): "3a3008ef9c671471",
    ('generic', 1500, 6): "9765339c0cbcabf7",
    ('diverse', 1000, 7): "0f50a023bb61cbb4",
    ('mixed', 800, 8): "17889dbd13612978",
    ('volumes', 300, 9): "8ff7c2f1c5e9e92b",
    ('volumes', 600, 10): "c3937c1419670ef4",
    ('diverse', 2000, 11): "4bfc5d6fc2d60eaa",
    ('mixed', 1500, 12): "b575bba183af91ca",
    ('volumes', 1200, 13): "9d850854c816610b",
}


@pytest.mark.parametrize("mix,n,seed", list(EXPECTED))
def test_results_match_the_recorded_fingerprint(world, mix, n, seed):
    fp = run_case(world, mix, n, seed)
    assert fp["claims"], "the workload plans claims"
    assert digest(fp) == EXPECTED[(mix, n, seed)]


@pytest.mark.parametrize("mix,n,seed", [("diverse", 300, 2), ("mixed", 400, 5), ("volumes", 300, 9)])
def test_the_claim_index_changes_no_result(world, mix, n, seed, monkeypatch):
    """Scheduler._scan's hostname gates only skip claims where the topology would reject the pod:
    the result equals the unindexed scan's (every claim visited), ties included (TiePicker does not
    depend on how often it is asked)."""
    indexed = digest(run_case(world, mix, n, seed))
    monkeypatch.setattr(Scheduler, "_pod_gates", lambda self, pod: [])
    assert digest(run_case(world, mix, n, seed)) == indexed
