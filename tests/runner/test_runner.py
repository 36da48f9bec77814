"""The runner's own behavior: collection ids and markers, partial matching and failure text, the
CLI's explain/new/run, and determinism across processes (hash seeds) for the xdist guarantee."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.backends.embedded import EmbeddedBackend
from harness.cli import main as cli
from harness.runner.engines import run
from harness.report.console import failure_text
from harness.scenario.load import load_scenarios_text

ROOT = Path(__file__).resolve().parents[2]

SCENARIO = """
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: probe, labels: [unit]}
given:
  profiles: [before-0006, upstream]
  skus: [Standard_D2s_v3]
manifests:
  - file: manifests/default-nodepool.yaml
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      nodeSelector: {kubernetes.azure.com/mode: system}
      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
expect:
  pods: {web: scheduled}
  nodes:
    - labels:
        kubernetes.azure.com/mode: {value: system, writer: karpenter-core}
        karpenter.sh/nodepool: default
      labelsAbsent: [kubernetes.azure.com/scalesetpriority]
"""


@pytest.fixture(scope="module")
def cluster():
    c = EmbeddedBackend().start()
    yield c
    c.close()


def scenario(text=SCENARIO):
    return load_scenarios_text(text, "probe.scenario.yaml", ROOT / "scenarios")[0]


def test_partial_match_and_failure_text(cluster):
    sc = scenario()
    # upstream: mode is a requirement; the pod pins system; the Node gets it from Karpenter core;
    # scalesetpriority is a base label, so labelsAbsent fails and says who wrote it
    out = run(sc, "upstream", cluster)
    paths = [m.path for m in out.mismatches]
    assert paths == ['expect.nodes[0].labelsAbsent["kubernetes.azure.com/scalesetpriority"]'], paths
    text = failure_text(out)
    assert "probe.scenario.yaml:" in text and "written by" in text and "upstream" in text
    assert "[settle]" not in text
    # a real-engine run says why each settle ended without --trace (a run that ended early names its cause)
    import dataclasses
    out.result.trace.append("[settle] quiet for 2.0s, no NodeClaim in flight, no pod pending")
    # ... and which API server answered (another Kubernetes version's, for a scenario naming one)
    out.result.trace.append("[cluster] kube-apiserver v1.33.13 for given.cluster.kubernetesVersion 1.33.0")
    real_text = failure_text(dataclasses.replace(out, engine="real"))
    assert "  [settle] quiet for 2.0s" in real_text and "  [cluster] kube-apiserver v1.33.13" in real_text
    # before-0006: mode is not a requirement -> the pod's key is undefined -> pending
    before = run(sc, "before-0006", cluster)
    assert any('pods["web"].scheduled' in m.path for m in before.mismatches)
    assert before.result.pods["default/web"].reason == \
        'incompatible requirements, label "kubernetes.azure.com/mode" does not have known values'


def test_run_is_deterministic_and_leaves_nothing(cluster):
    a = run(scenario(), "upstream", cluster).result
    b = run(scenario(), "upstream", cluster).result
    assert [n.name for n in a.nodes] == [n.name for n in b.nodes]
    assert [n.labels for n in a.nodes] == [n.labels for n in b.nodes]
    assert a.azure["vms"] and len(a.azure["vms"]) == len(b.azure["vms"])
    cluster.reset()
    assert cluster.list("Node") == [] and cluster.list("Pod") == []


EVENTS = """
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: events}
given:
  profiles: [upstream]
  skus: [Standard_D2s_v3]
manifests:
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: orphan}
    spec:
      template:
        spec:
          nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: missing}
          requirements: []
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
  - apiVersion: v1
    kind: Pod
    metadata: {name: pinned}
    spec:
      nodeSelector: {kubernetes.io/hostname: somewhere}
      containers: [{name: c, image: x}]
expect:
  events:
    - {kind: NodePool, name: orphan, reason: NodeClassNotFound, message: NodeClass not found on cluster}
    - {kind: Pod, name: pinned, reason: FailedScheduling, messageContains: kubernetes.io/hostname is not allowed}
    - {messageRegex: "^Failed to schedule pod, "}
"""


def test_top_level_events_are_every_event_of_the_run(cluster):
    sc = scenario(EVENTS)
    out = run(sc, "upstream", cluster)
    assert out.passed, [m.render() for m in out.mismatches]
    # emission order: the NodePool's readiness first, then Karpenter's FailedScheduling on the pod it
    # ignores (Provisioner.Validate); "no dynamic nodepools found" is no event (core v1.14.0
    # provisioner.go Schedule marks the decision in cluster state only)
    assert [(e["kind"], e["name"], e["reason"]) for e in out.result.events] == [
        ("NodePool", "orphan", "NodeClassNotFound"), ("Pod", "pinned", "FailedScheduling")]
    assert out.result.events[1]["message"] == out.result.pods["default/pinned"].events[0]
    assert out.result.pods["default/web"].events == [] and out.result.pods["default/web"].reason == "no dynamic nodepools found"
    # kind, name and reason must match the same event as the message
    sc.expect = {"events": [{"kind": "Pod", "name": "pinned", "reason": "NodeClassNotFound"},
                            {"name": "orphan", "messageContains": "hostname is not allowed"}]}
    out = run(sc, "upstream", cluster)
    assert [m.path for m in out.mismatches] == ["expect.events[0]", "expect.events[1]"]


CLUSTER_STEP = """
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: cluster-step}
given:
  profiles: [upstream]
  skus: [Standard_D2s_v3]
manifests:
  - file: manifests/default-nodepool.yaml
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
expect:
  pods: {web: scheduled}
  instanceTypes:
    Standard_D2s_v3: {capacity: {memory: "7945689497"}}
steps:
  - cluster: {vmMemoryOverheadPercent: 0.5}
    expect:
      instanceTypes:
        Standard_D2s_v3: {capacity: {memory: 4Gi}}
"""


def test_a_step_cluster_change_rebuilds_instance_types(cluster, monkeypatch):
    """Instance types are cached per node class *and* cluster settings; the resource group follows."""
    from harness.model.azure.instancetypes import ClusterParams
    from harness.runner.engines.simulated import SimulatedRun

    sims = []
    real_play = SimulatedRun.play
    monkeypatch.setattr(SimulatedRun, "play", lambda run_, *a: (sims.append(run_.sim), real_play(run_, *a))[1])
    out = run(scenario(CLUSTER_STEP), "upstream", cluster)
    assert out.passed, [m.render() for m in out.mismatches]
    sim = sims[0]
    sim.set_cluster(ClusterParams.from_dict({"nodeResourceGroup": "MC_other"}))
    assert (sim.cfg.cluster.node_resource_group, sim.provider.rg) == ("MC_other", "MC_other")


def test_simulated_runs_share_the_process_instance_type_cache(cluster, monkeypatch):
    """Every simulated run builds instance types with the engine's one InstanceTypeCache
    (harness/runner/engines/simulated.py instance_type_cache): a second run of the same scenario finds
    the static parts the first built, and its outcome is the same."""
    from harness.runner.engines.simulated import SimulatedRun, instance_type_cache

    caches = []
    real_settle = SimulatedRun.settle
    monkeypatch.setattr(SimulatedRun, "settle",
                        lambda run_, until=None: (caches.append(run_.sim.state.provider.it_cache), real_settle(run_, until))[1])
    first = run(scenario(CLUSTER_STEP), "upstream", cluster)
    misses = instance_type_cache().info()["misses"]
    second = run(scenario(CLUSTER_STEP), "upstream", cluster)
    assert caches and all(c is instance_type_cache() for c in caches)
    assert instance_type_cache().info()["misses"] == misses
    assert first.passed and second.passed and len(first.result.nodes) == len(second.result.nodes)


def test_collection_ids_and_markers():
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "scenarios/design-0006/faq-non-schedulable-labels.scenario.yaml", "-m", "runaway"],
                          capture_output=True, text=True, cwd=ROOT)
    ids = [l for l in proc.stdout.splitlines() if "::" in l]
    assert ids == [f"scenarios/design-0006/faq-non-schedulable-labels.scenario.yaml::"
                   f"faq-wellknown-label-mismatch-runaway[{p}-embedded]"
                   for p in ("before-0006", "design-0006", "upstream")], proc.stdout


def test_same_results_under_different_hash_seeds(tmp_path):
    """xdist workers are separate processes with their own hash seeds: results must not depend on it."""
    outs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, "-m", "harness", "run", "scenarios/loop", "--json"],
                              capture_output=True, text=True, cwd=ROOT, env=env)
        assert proc.returncode == 0, proc.stderr + proc.stdout
        outs.append([{k: r[k] for k in ("scenario", "profile", "verdict", "nodes", "runaway")}
                     for r in json.loads(proc.stdout)])
    assert outs[0] == outs[1]


def test_new_scaffolds_a_runnable_scenario(tmp_path, capsys):
    manifests = tmp_path / "bug.yaml"
    manifests.write_text((ROOT / "scenarios/manifests/default-nodepool.yaml").read_text() + "\n---\n" + yaml.safe_dump(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app"},
         "spec": {"containers": [{"name": "c", "image": "x"}]}}))
    out = tmp_path / "bug.scenario.yaml"
    # manifests as written say no region: it is given (never defaulted, tests/dump/test_dump_report.py)
    assert cli(["new", str(manifests), "--name", "acme-1", "-o", str(out), "--region", "southcentralus"]) == 0
    text = out.read_text()
    assert text.startswith("# yaml-language-server: $schema=")
    assert cli(["validate", str(out)]) == 0
    assert cli(["run", str(out)]) == 0
