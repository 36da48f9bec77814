"""Scenarios nobody tuned to, for the differential fuzzer (issue 28 item 5).

`scenarios()` is a Hypothesis strategy of scenario documents: 1-3 NodePools (requirements on
capacity type, zone, SKU family, architecture, instance type, vCPUs and a custom label; weights,
limits, taints), 1-4 workloads (Deployments with replicas, requests, node selectors, required node
affinity, tolerations, hostname/zone pod anti-affinity, zone/hostname topology spread), a small SKU
list from the eastus catalog, and at most one Azure fault; in one of three documents with several
workloads, the last ones arrive in a step played while the first ones' launch is in flight. Each
workload is drawn to fit a NodePool; one world in MISFIT_ONE_IN is drawn so that nothing fits
(docs/engines/fuzzer.md, Generators). Each document is a plain dict in the scenario format, so a
failure shrinks to a file anyone can run (`to_yaml`).

Two users: tests/judge/test_fuzz_engines.py runs the simulated engine alone and checks invariants
(harness/judge/invariants.py); tools/fuzz_engines.py runs both engines and fails on a real outcome
the simulated outcome set does not hold (harness/judge/explore.py, conformance.compare).

Hypothesis is a development dependency: import this module only from tests and tools.
"""
from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass

import yaml
from hypothesis import strategies as st

from harness.model.azure.instancetypes import build_instance_types
from harness.model.azure.params import ClusterParams
from harness.model.values.resources import parse_resource
from harness.model.labels.wellknown import ARCH, SKU_FAMILY
from harness.scenario.catalogs import catalog

# Which generator drew a document (its annotation fuzz.generator). The same Hypothesis seed draws other
# documents under another generator, so a seed or fuzz id quoted in docs or comments names its generator.
# 1: this file before the number (commits 14904fd, d749cc8), requirements, selectors and requests drawn
# mostly independently: a world in six scheduled nothing; 2: workloads drawn to fit, misfits deliberate
# (bench/fuzz_worlds.py measures both: docs/engines/fuzzer.md, Generators). Raise it with any edit of the
# strategies below: Hypothesis tells its draws apart by how a strategy is written, so even an edit that
# draws the same values moves what a seed draws (a tuple for a list in one sampled_from did, after 12 of 100).
GENERATOR = 2
REGION = "eastus"
ZONES = [f"{REGION}-1", f"{REGION}-2", f"{REGION}-3"]
# general-purpose sizes of the bundled eastus catalog (fakeazure/catalogs/skus/eastus.json) that
# provider v1.14.0 offers as instance types: amd64 and arm64, 2-8 vCPUs, four families
SKUS = ["Standard_D2s_v3", "Standard_D4s_v3", "Standard_D8s_v3", "Standard_D2s_v5", "Standard_D4s_v5",
        "Standard_D2as_v5", "Standard_D4as_v5", "Standard_D2ps_v5", "Standard_D4ps_v5", "Standard_E2s_v5",
        "Standard_E4s_v5", "Standard_F2s_v2", "Standard_F4s_v2", "Standard_B2s"]
FAMILIES = ["D", "E", "F", "B"]
TEAM = "fuzz.example.com/team"
TAINT = "fuzz.example.com/dedicated"
CPU = ["100m", "250m", "500m", "1", "1500m", "3"]
MEMORY = [None, "256Mi", "1Gi", "4Gi"]
FAULTS = ["ZonalAllocationFailed", "AllocationFailed", "SkuNotAvailable"]
BOOT = "15s"       # given.loop.nodeBoot of a scenario whose later workloads arrive during a launch
# the ways a world is drawn so that nothing in it fits (each a different "nothing fits" path of
# Karpenter's scheduler): every NodePool tainted and no toleration; every workload asks for a label value
# no NodePool offers; requests beyond every size's allocatable; every NodePool's requirements exclude
# every listed size; every NodePool's CPU limit below the smallest size
MISFITS = ["taint", "selector", "size", "pool", "limits"]
MISFIT_ONE_IN = 16


@dataclass(frozen=True)
class SkuFacts:
    """What a size offers as an instance type of the upstream profile in REGION: read from the bundled
    catalog through the instance-type model, so a drawn world agrees with what both engines launch."""

    name: str
    family: str
    arch: str
    cpu: int                           # vCPUs
    cpu_m: int                         # allocatable millicores
    memory: int                        # allocatable bytes
    capacity_types: tuple[str, ...]    # the capacity types it has an offering of
    zones: tuple[str, ...]             # its offerings' physical zones (none: regional only)


@functools.lru_cache(maxsize=1)
def _facts() -> dict[str, SkuFacts]:
    skus, prices = catalog(REGION)
    by_name = {s["name"]: s for s in skus}
    its = build_instance_types([by_name[n] for n in SKUS], cluster=ClusterParams(region=REGION), profile="upstream",
                               prices=prices.get(REGION))
    out = {}
    for it in its:
        offered = it.available_offerings()
        alloc = it.allocatable()
        out[it.name] = SkuFacts(it.name, it.requirements[SKU_FAMILY].single_value(),
                                it.requirements[ARCH].single_value(), it.vcpus, alloc["cpu"], alloc["memory"],
                                tuple(sorted({o.capacity_type for o in offered})),
                                tuple(sorted({o.zone for o in offered} & set(ZONES))))
    return out


def sku_facts(name: str) -> SkuFacts:
    return _facts()[name]


@dataclass(frozen=True)
class Pool:
    """A drawn NodePool and what its workloads are drawn to fit: the size it admits (its anchor) and the
    capacity types, zones and team it lets a pod select."""

    manifest: dict
    anchor: SkuFacts
    capacity_types: tuple[str, ...]
    zones: tuple[str, ...]
    team: str | None
    tainted: bool
    free: bool                         # drawn freely: it may admit nothing, and no workload targets it


def one_in(n: int):
    """True once in `n` draws; False is the simpler value, so a shrunk scenario keeps only the
    features its failure needs."""
    return st.integers(0, n - 1).map(lambda x: x == n - 1)


def _req(key: str, operator: str, values: list[str] | None = None) -> dict:
    out = {"key": key, "operator": operator}
    if values is not None:
        out["values"] = values
    return out


@st.composite
def _nodepool(draw, i: int, skus: list[str], misfit: str | None) -> Pool:
    """Every requirement is drawn to admit one size of the list (the anchor), so the NodePool can launch
    it; one NodePool after the first in eight draws its values freely and may admit nothing (Karpenter
    then passes over it, by weight)."""
    anchor = sku_facts(draw(st.sampled_from(skus)))
    free = i > 0 and draw(one_in(8))
    reqs = [_req("kubernetes.io/os", "In", ["linux"])]
    ct = draw(st.sampled_from([c for c in (None, ("on-demand",), ("spot",), ("on-demand", "spot"))
                               if free or c is None or set(c) & set(anchor.capacity_types)]))
    if ct:
        reqs.append(_req("karpenter.sh/capacity-type", "In", list(ct)))
    zones = ZONES if free else list(anchor.zones)      # a regional-only anchor has none to require
    if zones and draw(st.booleans()):
        zones = sorted(draw(st.lists(st.sampled_from(zones), min_size=1, max_size=3, unique=True)))
        reqs.append(_req("topology.kubernetes.io/zone", "In", zones))
    else:
        zones = ZONES
    if misfit == "pool":      # a family none of SKUS has (storage optimized)
        reqs.append(_req("karpenter.azure.com/sku-family", "In", ["L"]))
    elif draw(st.booleans()):
        family = draw(st.sampled_from(FAMILIES)) if free else anchor.family
        more = draw(st.sampled_from([[], ["D"], ["E"]]))
        reqs.append(_req("karpenter.azure.com/sku-family", "In", sorted({family, *more})))
    if draw(one_in(3)):
        arch = draw(st.sampled_from(["amd64", "arm64"])) if free else anchor.arch
        reqs.append(_req("kubernetes.io/arch", "In", [arch]))
    if draw(one_in(4)):
        types = draw(st.lists(st.sampled_from(skus), min_size=1, max_size=2, unique=True))
        reqs.append(_req("node.kubernetes.io/instance-type", "In", sorted({*types, *([] if free else [anchor.name])})))
    if draw(one_in(4)):
        lt = anchor.cpu < 4 if not free else draw(st.booleans())
        reqs.append(_req("karpenter.azure.com/sku-cpu", "Lt", ["4"]) if lt else
                    _req("karpenter.azure.com/sku-cpu", "Gt", ["3"]))
    team = draw(st.sampled_from(["a", "b"])) if draw(one_in(3)) else None
    if team:
        reqs.append(_req(TEAM, "In", [team]))
    spec: dict = {"template": {"spec": {
        "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
        "requirements": reqs}}}
    tainted = misfit == "taint" or draw(one_in(4))
    if tainted:
        spec["template"]["spec"]["taints"] = [{"key": TAINT, "value": f"np{i}", "effect": "NoSchedule"}]
    weight = draw(st.sampled_from([None, None, 10, 50]))
    if weight:
        spec["weight"] = weight
    # a limit below the anchor's vCPUs would leave the NodePool nothing to launch
    limit = "1" if misfit == "limits" else draw(st.sampled_from(
        [None, None, None, *[v for v in ("4", "8", "16") if free or int(v) >= anchor.cpu]]))
    if limit:
        spec["limits"] = {"cpu": limit}
    manifest = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": f"np{i}"}, "spec": spec}
    return Pool(manifest, anchor, tuple(sorted(set(ct or anchor.capacity_types) & set(anchor.capacity_types))),
                tuple(sorted(set(zones) & set(anchor.zones))), team, tainted, free)


@st.composite
def _workload(draw, i: int, pools: list[Pool], misfit: str | None, skus: list[str]) -> dict:
    """A Deployment drawn to fit the NodePool it targets (its anchor size's allocatable, the capacity
    types, zones and team the NodePool admits, a toleration of its taint), unless the world is a misfit."""
    name = f"w{i}"
    labels = {"app": name}
    target = draw(st.sampled_from([p for p in pools if not p.free]))
    fit = target.anchor
    pod: dict = {"containers": [{"name": "app", "image": "nginx", "resources": {"requests": {}}}]}
    requests = pod["containers"][0]["resources"]["requests"]
    cpus = [c for c in CPU if parse_resource("cpu", c) <= fit.cpu_m]
    requests["cpu"] = draw(st.sampled_from(cpus[:4])) if draw(st.integers(0, 3)) else draw(st.sampled_from(cpus))
    mem = draw(st.sampled_from([m for m in MEMORY if m is None or parse_resource("memory", m) <= fit.memory]))
    if mem:
        requests["memory"] = mem
    if misfit == "size":        # more than every listed size's allocatable
        requests["cpu"] = str(max(sku_facts(s).cpu for s in skus) + 1)
    kinds = [None, None, None, "capacity", "arch", *(["zone"] if target.zones else []),
             *(["team"] if target.team else [])]
    selector = draw(st.sampled_from(kinds))
    if selector == "capacity":
        pod["nodeSelector"] = {"karpenter.sh/capacity-type": draw(st.sampled_from(target.capacity_types))}
    elif selector == "zone":
        pod["nodeSelector"] = {"topology.kubernetes.io/zone": draw(st.sampled_from(target.zones))}
    elif selector == "arch":
        pod["nodeSelector"] = {"kubernetes.io/arch": fit.arch}
    elif selector == "team":
        pod["nodeSelector"] = {TEAM: target.team}
    if misfit == "selector":    # a team no NodePool serves
        pod["nodeSelector"] = {TEAM: "nobody"}
    affinity: dict = {}
    if draw(one_in(4)):
        op = draw(st.sampled_from(["In", "NotIn"]))
        family = fit.family if op == "In" else draw(st.sampled_from([f for f in FAMILIES if f != fit.family]))
        affinity["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [_req("karpenter.azure.com/sku-family", op, [family])]}]}}
    anti = draw(st.sampled_from([None, None, "kubernetes.io/hostname", "topology.kubernetes.io/zone"]))
    if anti:
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": labels}, "topologyKey": anti}]}
    if affinity:
        pod["affinity"] = affinity
    spread = draw(st.sampled_from([None, None, "topology.kubernetes.io/zone", "kubernetes.io/hostname"]))
    if spread:
        pod["topologySpreadConstraints"] = [{
            "maxSkew": draw(st.integers(1, 2)), "topologyKey": spread,
            "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
            "labelSelector": {"matchLabels": labels}}]
    # the target's taint is tolerated; another NodePool's, one time in two
    if misfit != "taint" and (target.tainted or (any(p.tainted for p in pools) and draw(st.booleans()))):
        pod["tolerations"] = [{"key": TAINT, "operator": "Exists", "effect": "NoSchedule"}]
    replicas = draw(st.integers(1, 4))
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": pod}}}


@st.composite
def scenarios(draw, in_flight: bool = False, misfit: str | None = None) -> dict:
    """A scenario document (a dict) with no expectations; `in_flight`: every document with several
    workloads plays its last ones during the first ones' launch (tools/fuzz_engines.py --in-flight);
    `misfit`: every document that misfit of MISFITS (default: one in MISFIT_ONE_IN, any of them)."""
    skus = sorted(draw(st.lists(st.sampled_from(SKUS), min_size=1, max_size=4, unique=True)))
    if misfit is None:
        misfit = draw(st.sampled_from(MISFITS)) if draw(one_in(MISFIT_ONE_IN)) else None
    pools = [draw(_nodepool(i, skus, misfit)) for i in range(draw(st.integers(1, 3)))]
    workloads = [draw(_workload(i, pools, misfit, skus)) for i in range(draw(st.integers(1, 4)))]
    given: dict = {"region": REGION, "skus": skus}
    if draw(one_in(4)):
        given["faults"] = [{"code": draw(st.sampled_from(FAULTS)), "match": {"size": draw(st.sampled_from(skus))},
                            "times": 1}]
    later: list[dict] = []
    if len(workloads) > 1 and (in_flight or draw(one_in(3))):
        # the last workloads arrive while the first ones' launch is in flight (a step's `during: launch`;
        # the VMs take BOOT to register, longer than Karpenter's batch window)
        k = draw(st.integers(1, len(workloads) - 1))
        workloads, later = workloads[:k], workloads[k:]
        given["loop"] = {"nodeBoot": BOOT}
    manifests = [{"apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass",
                  "metadata": {"name": "default"}, "spec": {"imageFamily": "Ubuntu2204"}},
                 *(p.manifest for p in pools), *workloads]
    # the generator and a deliberate misfit are said in the document (annotations: read by no run, and
    # outside the digest, so the id names the world whatever generator drew it)
    notes = {"fuzz.generator": str(GENERATOR), **({"fuzz.misfit": misfit} if misfit else {})}
    doc = {"apiVersion": "harness.karpenter.azure.com/v1alpha1", "kind": "Scenario",
           "metadata": {"name": "", "labels": ["fuzz"], "annotations": notes}, "given": given, "manifests": manifests}
    if later:
        doc["steps"] = [{"during": "launch", "apply": later}]
    doc["metadata"]["name"] = "fuzz-" + digest(doc)[:10]
    return doc


def digest(doc: dict) -> str:
    body = {k: v for k, v in doc.items() if k != "metadata"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def size(doc: dict) -> int:
    """How big a document is (the smallest failing one is kept)."""
    return len(json.dumps(doc, sort_keys=True))


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data) -> bool:      # a label map used twice is written twice, not as &id001
        return True


def to_yaml(doc: dict, header: str = "") -> str:
    head = "# yaml-language-server: $schema=../../harness/data/scenario.schema.json\n"
    head += "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
    return head + yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=None, width=110)


def load(doc: dict, root):
    """The document as a Scenario (loaded as a file of `root` would be: schema, manifests, SKUs)."""
    from harness.scenario.load import load_scenarios_text
    return load_scenarios_text(to_yaml(doc), f"{doc['metadata']['name']}.scenario.yaml", root)[0]
