"""The differential fuzzer's fast variant (issue 28 item 5): generated scenarios on the simulated
engine alone, each checked against invariants that hold whatever the scenario
(harness/judge/invariants.py), for the generator's promises (a misfit schedules nothing, any other
world without a fault something) and for determinism per seed. Hypothesis shrinks a failure to a
minimal scenario, written to HARNESS_FUZZ_OUT (default: pytest's tmp dir) as a file anyone can run.
Generation is derandomized so CI sees the same sample every run; HARNESS_FUZZ_EXAMPLES sets its
size. The real-engine variant is tools/fuzz_engines.py (nightly)."""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from harness.backends.embedded import EmbeddedBackend
from harness.judge import fuzz
from harness.runner.engines import get_engine
from harness.runner.engines.base import execute
from harness.judge.invariants import (BindingWatch, binding_violations, node_matches_pod, requirement_holds,
                                       result_violations, tolerated)
from tests.scriptload import load_script

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("HARNESS_FUZZ_EXAMPLES", "20"))


@pytest.fixture(scope="module")
def cluster():
    c = EmbeddedBackend().start()
    yield c
    c.close()


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory) -> Path:
    return Path(os.environ.get("HARNESS_FUZZ_OUT") or tmp_path_factory.mktemp("fuzz"))


def _plain(result) -> str:
    d = dataclasses.asdict(result)
    d.pop("timings", None)
    d["instance_types"] = sorted(result.instance_types)
    return json.dumps(d, sort_keys=True, default=repr)


def problems(doc: dict, cluster) -> list[str]:
    """Every invariant the simulated run of `doc` breaks, a promise of the generator it breaks, and a
    second run under the same seed that differs."""
    sc = fuzz.load(doc, ROOT / "scenarios")
    engine = get_engine("simulated")
    watch = BindingWatch(cluster)
    with watch.watching():
        o = execute(engine, sc, "upstream", cluster)
    # an engine error, a refused manifest; not a `during: launch` step whose phase before launched nothing
    # (a generated workload no NodePool takes): the step is then not played, on either engine
    out = [m.render() for m in o.mismatches if not m.path.endswith("].during")]
    for pod, node, nodes, pods in watch.binds:
        out += binding_violations(pod, node, nodes, pods)
    out += result_violations(o.final, [m.obj for m in sc.manifests + [m for ms in sc.step_manifests for m in ms]])
    out += broken_promises(doc, o.final)
    first = _plain(o.final)
    if _plain(execute(engine, sc, "upstream", cluster).final) != first:
        out.append(f"seed {sc.seed}: a second run differs")
    return out


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None, print_blob=False,
          suppress_health_check=list(HealthCheck))
@given(doc=fuzz.scenarios())
def test_generated_scenarios_keep_the_invariants(doc, cluster, out_dir):
    found = problems(doc, cluster)
    if found:
        f = out_dir / "invariants-minimal.scenario.yaml"
        if not f.exists() or fuzz.size(doc) <= fuzz.size(_load_yaml(f)):    # Hypothesis shrinks: keep the smallest
            f.write_text(fuzz.to_yaml(doc, "Broke: " + "; ".join(found[:5])))
        pytest.fail(f"{len(found)} invariant(s) broken (scenario: {f}):\n" + "\n".join(found[:10]))


def broken_promises(doc: dict, result) -> list[str]:
    """What the generator promises of a world (harness/judge/fuzz.py): a misfit schedules no pod; a world
    with neither a misfit nor a fault schedules at least one (each workload is drawn to fit a NodePool)."""
    misfit = doc["metadata"].get("annotations", {}).get("fuzz.misfit")
    bound = sorted(k for k, p in result.pods.items() if p.state == "scheduled")
    if misfit and bound:
        return [f"a {misfit} misfit scheduled {len(bound)} pod(s): {bound[0]} on {result.pods[bound[0]].node}"]
    if not misfit and not doc["given"].get("faults") and not bound:
        why = sorted({p.reason or p.state for p in result.pods.values()})
        return [f"no misfit and no fault, yet no pod scheduled: {'; '.join(why)[:300]}"]
    return []


def _load_yaml(f: Path) -> dict:
    import yaml
    return yaml.safe_load(f.read_text())


# -- the invariants themselves catch what they should --------------------------------------------------
def test_requirement_semantics():
    labels = {"a": "1", "n": "4"}
    assert requirement_holds({"key": "a", "operator": "In", "values": ["1"]}, labels)
    assert requirement_holds({"key": "b", "operator": "NotIn", "values": ["1"]}, labels)
    assert not requirement_holds({"key": "b", "operator": "Exists"}, labels)
    assert requirement_holds({"key": "n", "operator": "Lt", "values": ["5"]}, labels)
    assert not requirement_holds({"key": "n", "operator": "Gt", "values": ["4"]}, labels)
    spec = {"nodeSelector": {"a": "1"}, "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "n", "operator": "In", "values": ["9"]}]}]}}}}
    assert not node_matches_pod(spec, labels)
    assert tolerated({"key": "k", "value": "v", "effect": "NoSchedule"}, [{"key": "k", "operator": "Exists"}])
    assert not tolerated({"key": "k", "value": "v", "effect": "NoSchedule"}, [{"key": "k", "value": "w"}])


def _node(name: str, zone: str, taints=None) -> dict:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
            "spec": {"taints": taints or []}, "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}}


def _pod(name: str, node: str | None = None, **spec) -> dict:
    return {"metadata": {"name": name, "namespace": "default", "labels": {"app": "w"}},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}],
                     **({"nodeName": node} if node else {}), **spec}}


def test_binding_violations_are_found():
    nodes = [_node("a", "z1"), _node("b", "z2", [{"key": "t", "value": "", "effect": "NoSchedule"}])]
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "w"}}}]
    bound = [_pod("p1", "a")]
    assert binding_violations(_pod("p2", topologySpreadConstraints=spread), "a", nodes, bound)       # skew 2 > 1
    assert not binding_violations(_pod("p2", topologySpreadConstraints=spread,
                                       tolerations=[{"key": "t", "operator": "Exists"}]), "b", nodes, bound)
    assert any("untolerated taint" in v for v in binding_violations(_pod("p2"), "b", nodes, bound))
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "w"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    assert any("anti-affinity" in v for v in binding_violations(_pod("p2", affinity=anti), "a", nodes, bound))
    big = _pod("p3")
    big["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1800m"
    assert any("exceed allocatable" in v for v in binding_violations(big, "a", nodes, bound))
    assert binding_violations(_pod("p2"), "gone", nodes, bound)


def test_result_violations_are_found(cluster):
    doc = {"apiVersion": "harness.karpenter.azure.com/v1alpha1", "kind": "Scenario", "metadata": {"name": "inv"},
           "given": {"region": "eastus", "skus": ["Standard_D2s_v3", "Standard_D4s_v3"]},
           "manifests": [{"apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass",
                          "metadata": {"name": "default"}, "spec": {"imageFamily": "Ubuntu2204"}},
                         {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "np0"},
                          "spec": {"limits": {"cpu": "4"}, "template": {"spec": {
                              "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
                              "requirements": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}}}},
                         {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                          "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}]}
    assert problems(doc, cluster) == []
    sc = fuzz.load(doc, ROOT / "scenarios")
    r = execute(get_engine("simulated"), sc, "upstream", cluster).result
    manifests = [m.obj for m in sc.manifests]
    manifests[1]["spec"]["limits"] = {"cpu": "1"}                            # below what was launched
    manifests[1]["spec"]["template"]["spec"]["requirements"].append(
        {"key": "karpenter.azure.com/sku-cpu", "operator": "Gt", "values": ["8"]})
    found = result_violations(r, manifests)
    assert any("exceeds its limit" in v for v in found) and any("sku-cpu Gt" in v for v in found)


def test_the_generator_makes_loadable_scenarios():
    from hypothesis import find
    doc = find(fuzz.scenarios(), lambda d: len(d["manifests"]) >= 5 and "faults" in d["given"],
               settings=settings(database=None, derandomize=True, max_examples=500))
    sc = fuzz.load(doc, ROOT / "scenarios")
    assert sc.name.startswith("fuzz-") and sc.given["faults"]
    assert "# yaml-language-server" in fuzz.to_yaml(doc)


FIRST = settings(database=None, derandomize=True, max_examples=1, phases=[Phase.generate])   # one document, no search
# each misfit (the simplest document of it) and the reason Karpenter's scheduler gives its pods: core
# Taints.ToleratesPod (sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/taints.go), Requirements.Compatible
# (pkg/scheduling/requirements.go), InstanceTypeFilterError.Error
# (pkg/controllers/provisioning/scheduling/nodeclaim.go), Scheduler.add and addToNewNodeClaim
# (pkg/controllers/provisioning/scheduling/scheduler.go)
MISFIT_REASONS = {
    "taint": "did not tolerate taint",
    "selector": 'incompatible requirements, label "fuzz.example.com/team" does not have known values',
    "size": "no instance type has enough resources",
    "pool": "nodepool requirements filtered out all available instance types",
    "limits": "all available instance types exceed limits for nodepool",
}


@pytest.mark.parametrize("misfit", fuzz.MISFITS)
def test_each_misfit_schedules_nothing_for_its_own_reason(misfit, cluster):
    from hypothesis import find
    doc = find(fuzz.scenarios(misfit=misfit), lambda d: True, settings=FIRST)
    assert doc["metadata"]["annotations"] == {"fuzz.generator": str(fuzz.GENERATOR), "fuzz.misfit": misfit}
    result = execute(get_engine("simulated"), fuzz.load(doc, ROOT / "scenarios"), "upstream", cluster).final
    assert result.pods and all(p.state == "pending" for p in result.pods.values())
    assert all(p.reason.startswith(MISFIT_REASONS[misfit]) for p in result.pods.values()), \
        sorted({p.reason for p in result.pods.values()})


def test_the_id_names_the_world_not_the_generator():
    from hypothesis import find
    doc = find(fuzz.scenarios(misfit="size"), lambda d: True, settings=FIRST)
    again = {**doc, "metadata": {**doc["metadata"], "annotations": {"fuzz.generator": "1"}}}
    assert doc["metadata"]["name"] == "fuzz-" + fuzz.digest(again)[:10]


def test_sku_facts_come_from_the_catalog():
    """What the generator fits workloads to, read through the instance-type model: B-series has no spot
    offering, Standard_D8s_v3 no zone of eastus, a 2-vCPU size less than 2 CPUs allocatable."""
    assert fuzz.sku_facts("Standard_B2s").capacity_types == ("on-demand",)
    assert fuzz.sku_facts("Standard_D8s_v3").zones == ()
    assert fuzz.sku_facts("Standard_D2ps_v5").arch == "arm64"
    d2 = fuzz.sku_facts("Standard_D2s_v3")
    assert (d2.family, d2.cpu, d2.zones) == ("D", 2, tuple(fuzz.ZONES)) and d2.cpu_m < 2000


def test_the_real_fuzzer_keeps_each_run_and_judges_it_again(tmp_path, cluster, capsys):
    """tools/fuzz_engines.py keeps every generated document with its real outcome under OUT/runs, and
    `--rejudge OUT` judges them again against the simulation as it is now (here a simulated run stands in
    for the real one: it is in its own outcome set)."""
    tool = load_script("tools/fuzz_engines.py", "fuzz_engines")
    doc = {"apiVersion": "harness.karpenter.azure.com/v1alpha1", "kind": "Scenario", "metadata": {"name": "fuzz-kept"},
           "given": {"region": "eastus", "skus": ["Standard_D2s_v3"]},
           "manifests": [{"apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass",
                          "metadata": {"name": "default"}, "spec": {"imageFamily": "Ubuntu2204"}},
                         {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "np0"},
                          "spec": {"template": {"spec": {
                              "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
                              "requirements": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}}}},
                         {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                          "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}]}
    stand_in = execute(get_engine("simulated"), fuzz.load(doc, ROOT / "scenarios"), "upstream", cluster)
    tool.keep_run(tmp_path, 1, doc, stand_in, None)
    assert sorted(f.name for f in (tmp_path / "runs").iterdir()) == ["001-fuzz-kept.real.pickle.gz",
                                                                     "001-fuzz-kept.scenario.yaml"]
    assert tool.rejudge(tmp_path, explore=2) == 0
    kept = json.loads((tmp_path / "rejudge.json").read_text())
    assert kept["counts"] == {"agree": 1} and kept["runs"][0]["name"] == "fuzz-kept"
    assert tool.rejudge(tmp_path / "nothing", explore=2) == 2
