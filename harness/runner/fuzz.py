"""Scenarios nobody tuned to, for the differential fuzzer (issue 28 item 5).

`scenarios()` is a Hypothesis strategy of scenario documents: 1-3 NodePools (requirements on
capacity type, zone, SKU family, architecture, instance type, vCPUs and a custom label; weights,
limits, taints), 1-4 workloads (Deployments with replicas, requests, node selectors, required node
affinity, tolerations, hostname/zone pod anti-affinity, zone/hostname topology spread), a small SKU
list from the eastus catalog, and at most one Azure fault; in one of three documents with several
workloads, the last ones arrive in a step played while the first ones' launch is in flight. Each
document is a plain dict in the scenario format, so a failure shrinks to a file anyone can run
(`to_yaml`).

Two users: tests/runner/test_fuzz_engines.py runs the simulated engine alone and checks invariants
(harness/runner/invariants.py); tools/fuzz_engines.py runs both engines and fails on a real outcome
the simulated outcome set does not hold (harness/runner/explore.py, conformance.compare).

Hypothesis is a development dependency: import this module only from tests and tools.
"""
from __future__ import annotations

import hashlib
import json
import re

import yaml
from hypothesis import strategies as st

REGION = "eastus"
ZONES = [f"{REGION}-1", f"{REGION}-2", f"{REGION}-3"]
# general-purpose sizes of the bundled eastus catalog (fakeazure/catalogs/skus/eastus.json) that
# provider v1.14.0 offers as instance types: amd64 and arm64, 2-8 vCPUs, four families
SKUS = ["Standard_D2s_v3", "Standard_D4s_v3", "Standard_D8s_v3", "Standard_D2s_v5", "Standard_D4s_v5",
        "Standard_D2as_v5", "Standard_D4as_v5", "Standard_D2ps_v5", "Standard_D4ps_v5", "Standard_E2s_v5",
        "Standard_E4s_v5", "Standard_F2s_v2", "Standard_F4s_v2", "Standard_B2s"]
TEAM = "fuzz.example.com/team"
TAINT = "fuzz.example.com/dedicated"
CPU = ["100m", "250m", "500m", "1", "1500m", "3"]
MEMORY = [None, "256Mi", "1Gi", "4Gi"]
FAULTS = ["ZonalAllocationFailed", "AllocationFailed", "SkuNotAvailable"]
BOOT = "15s"       # given.loop.nodeBoot of a scenario whose later workloads arrive during a launch


def one_in(n: int):
    """True once in `n` draws; False is the simpler value, so a shrunk scenario keeps only the
    features its failure needs."""
    return st.integers(0, n - 1).map(lambda x: x == n - 1)


def _req(key: str, operator: str, values: list[str] | None = None) -> dict:
    out = {"key": key, "operator": operator}
    if values is not None:
        out["values"] = values
    return out


def sku_facts(name: str) -> dict:
    """Family, architecture and vCPUs from a size's name (Standard_D4ps_v5: D, arm64, 4)."""
    m = re.match(r"Standard_([A-Z]+)(\d+)([a-z]*)", name)
    family, cpus, features = m.group(1), int(m.group(2)), m.group(3)
    return {"family": family, "arch": "arm64" if "p" in features else "amd64", "cpu": cpus}


@st.composite
def _nodepool(draw, i: int, skus: list[str]) -> dict:
    """Most requirements are drawn to admit one size of the list (the anchor), so most NodePools can
    launch something; about one in four values is drawn freely."""
    anchor = sku_facts(draw(st.sampled_from(skus)))
    free = one_in(4)
    reqs = [_req("kubernetes.io/os", "In", ["linux"])]
    ct = draw(st.sampled_from([None, ["on-demand"], ["spot"], ["on-demand", "spot"]]))
    if ct:
        reqs.append(_req("karpenter.sh/capacity-type", "In", ct))
    if draw(st.booleans()):
        zones = draw(st.lists(st.sampled_from(ZONES), min_size=1, max_size=3, unique=True))
        reqs.append(_req("topology.kubernetes.io/zone", "In", sorted(zones)))
    if draw(st.booleans()):
        family = draw(st.sampled_from(["D", "E", "F", "B"])) if draw(free) else anchor["family"]
        more = draw(st.sampled_from([[], ["D"], ["E"]]))
        reqs.append(_req("karpenter.azure.com/sku-family", "In", sorted({family, *more})))
    if draw(one_in(3)):
        arch = draw(st.sampled_from(["amd64", "arm64"])) if draw(free) else anchor["arch"]
        reqs.append(_req("kubernetes.io/arch", "In", [arch]))
    if draw(one_in(4)):
        types = draw(st.lists(st.sampled_from(skus), min_size=1, max_size=2, unique=True))
        reqs.append(_req("node.kubernetes.io/instance-type", "In", sorted(types)))
    if draw(one_in(4)):
        lt = anchor["cpu"] < 4 if not draw(free) else draw(st.booleans())
        reqs.append(_req("karpenter.azure.com/sku-cpu", "Lt", ["4"]) if lt else
                    _req("karpenter.azure.com/sku-cpu", "Gt", ["3"]))
    if draw(one_in(3)):
        reqs.append(_req(TEAM, "In", [draw(st.sampled_from(["a", "b"]))]))
    spec: dict = {"template": {"spec": {
        "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
        "requirements": reqs}}}
    if draw(one_in(4)):
        spec["template"]["spec"]["taints"] = [{"key": TAINT, "value": f"np{i}", "effect": "NoSchedule"}]
    weight = draw(st.sampled_from([None, None, 10, 50]))
    if weight:
        spec["weight"] = weight
    limit = draw(st.sampled_from([None, None, None, "4", "8", "16"]))
    if limit:
        spec["limits"] = {"cpu": limit}
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": f"np{i}"}, "spec": spec}


@st.composite
def _workload(draw, i: int, pools: list[dict]) -> dict:
    name = f"w{i}"
    labels = {"app": name}
    pod: dict = {"containers": [{"name": "app", "image": "nginx", "resources": {"requests": {}}}]}
    requests = pod["containers"][0]["resources"]["requests"]
    requests["cpu"] = draw(st.sampled_from(CPU[:4])) if draw(st.integers(0, 3)) else draw(st.sampled_from(CPU))
    mem = draw(st.sampled_from(MEMORY))
    if mem:
        requests["memory"] = mem
    selector = draw(st.sampled_from([None, None, None, "capacity", "zone", "arch", "team"]))
    if selector == "capacity":
        pod["nodeSelector"] = {"karpenter.sh/capacity-type": draw(st.sampled_from(["on-demand", "spot"]))}
    elif selector == "zone":
        pod["nodeSelector"] = {"topology.kubernetes.io/zone": draw(st.sampled_from(ZONES))}
    elif selector == "arch":
        pod["nodeSelector"] = {"kubernetes.io/arch": draw(st.sampled_from(["amd64", "arm64"]))}
    elif selector == "team":          # a team some NodePool serves, mostly
        teams = [r["values"][0] for p in pools for r in p["spec"]["template"]["spec"]["requirements"] if r["key"] == TEAM]
        pod["nodeSelector"] = {TEAM: draw(st.sampled_from(teams or ["a", "b"]))}
    affinity: dict = {}
    if draw(one_in(4)):
        affinity["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [_req("karpenter.azure.com/sku-family", draw(st.sampled_from(["In", "NotIn"])),
                                       [draw(st.sampled_from(["D", "E", "F"]))])]}]}}
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
    tainted = [p for p in pools if p["spec"]["template"]["spec"].get("taints")]
    if tainted and draw(st.booleans()):
        pod["tolerations"] = [{"key": TAINT, "operator": "Exists", "effect": "NoSchedule"}]
    replicas = draw(st.integers(1, 4))
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": pod}}}


@st.composite
def scenarios(draw, in_flight: bool = False) -> dict:
    """A scenario document (a dict) with no expectations; `in_flight`: every document with several
    workloads plays its last ones during the first ones' launch (tools/fuzz_engines.py --in-flight)."""
    skus = sorted(draw(st.lists(st.sampled_from(SKUS), min_size=1, max_size=4, unique=True)))
    pools = [draw(_nodepool(i, skus)) for i in range(draw(st.integers(1, 3)))]
    workloads = [draw(_workload(i, pools)) for i in range(draw(st.integers(1, 4)))]
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
                  "metadata": {"name": "default"}, "spec": {"imageFamily": "Ubuntu2204"}}, *pools, *workloads]
    doc = {"apiVersion": "harness.karpenter.azure.com/v1alpha1", "kind": "Scenario",
           "metadata": {"name": "", "labels": ["fuzz"]}, "given": given, "manifests": manifests}
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
    from harness.runner.scenario import load_scenarios_text
    return load_scenarios_text(to_yaml(doc), f"{doc['metadata']['name']}.scenario.yaml", root)[0]
