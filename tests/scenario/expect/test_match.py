"""Where a failed expectation points: the line of `expect`, or of the `expectByProfile` override
that set it (the override is merged over `expect`, so its line is the one to edit)."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends.embedded import EmbeddedBackend
from harness.runner.engines import run
from harness.scenario.load import load_scenarios_text

ROOT = Path(__file__).resolve().parents[3]

TEXT = """\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: lines}
given:
  profiles: [before-0006, upstream]
  skus: [Standard_D2s_v3]
manifests:
  - file: manifests/default-nodepool.yaml
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
expect:
  pods:
    web: {pending: true}
  nodeCount: 5
expectByProfile:
  upstream:
    pods:
      web:
        pending: true
steps:
  - advance: 1m
    expect:
      nodeCount: 7
    expectByProfile:
      upstream:
        nodeCount: 9
"""
LINE_EXPECT_PENDING, LINE_EXPECT_NODECOUNT, LINE_OVERRIDE_PENDING = 16, 17, 22
LINE_STEP_NODECOUNT, LINE_STEP_OVERRIDE = 26, 29


@pytest.fixture(scope="module")
def cluster():
    c = EmbeddedBackend().start()
    yield c
    c.close()


def _lines(cluster, profile: str) -> dict[str, int]:
    sc = load_scenarios_text(TEXT, "lines.scenario.yaml", ROOT / "scenarios")[0]
    return {m.path: m.line for m in run(sc, profile, cluster).mismatches}


def test_override_failure_points_at_the_override(cluster):
    got = _lines(cluster, "upstream")
    assert got['expect.pods["web"].pending'] == LINE_OVERRIDE_PENDING
    assert got["expect.nodeCount"] == LINE_EXPECT_NODECOUNT          # not overridden: expect's own line
    assert got["steps[0].expect.nodeCount"] == LINE_STEP_OVERRIDE


def test_without_override_failure_points_at_expect(cluster):
    got = _lines(cluster, "before-0006")
    assert got['expect.pods["web"].pending'] == LINE_EXPECT_PENDING
    assert got["steps[0].expect.nodeCount"] == LINE_STEP_NODECOUNT


def test_node_count_is_the_live_nodes_and_a_node_says_deleted_deleting_drifted():
    """nodeCount counts the nodes still there (a deleted one is named apart); `deleted`, `deleting` and
    `drifted` on a node entry state what a dump shows of it (harness new writes them)."""
    from harness.loop.result import NodeResult, RunResult
    from harness.scenario.expect.match import check
    r = RunResult("s", "upstream", "embedded", 1)
    gone = NodeResult("aks-a", 0, "a", "web", "Standard_D2s_v3", "eastus-1", "on-demand", "aks-a", deleted="Expired")
    draining = NodeResult("aks-b", 1, "b", "web", "Standard_D2s_v3", "eastus-1", "on-demand", "aks-b", deleting=True,
                          drifted="NodeClassDrift")
    r.nodes = [gone, draining]
    assert check({"nodeCount": 1, "nodes": [{"index": 0, "deleted": True},
                                            {"index": 1, "deleted": False, "deleting": True, "drifted": True}]}, r) == []
    (miss,) = check({"nodeCount": 2}, r)
    assert (miss.path, miss.expected, miss.actual) == ("expect.nodeCount", 2, 1)
    assert "deleted: aks-a (Expired)" in miss.detail
    (miss,) = check({"nodes": [{"index": 0, "deleted": False}]}, r)
    assert (miss.path, miss.actual) == ("expect.nodes[0].deleted", "Expired")


def test_nodeclaim_conditions_name_status_and_absence():
    """`nodeClaimConditions` compares each named termination condition's status with what the NodeClaim last
    had (a deleted one's too); `nodeClaimConditionsAbsent` fails on a condition it has."""
    from harness.loop.result import NodeResult, RunResult
    from harness.scenario.expect.match import check
    r = RunResult("s", "upstream", "embedded", 1)
    r.nodes = [NodeResult("aks-a", 0, "a", "web", "Standard_D2s_v3", "eastus-1", "on-demand", "aks-a", deleted="Drifted",
                          nodeclaim_conditions={"Drained": "True", "InstanceTerminating": "True"})]
    assert check({"nodes": [{"index": 0, "nodeClaimConditions": {"Drained": "True"},
                             "nodeClaimConditionsAbsent": ["VolumesDetached"]}]}, r) == []
    (miss,) = check({"nodes": [{"index": 0, "nodeClaimConditions": {"VolumesDetached": "True"}}]}, r)
    assert (miss.path, miss.expected, miss.actual) == ('expect.nodes[0].nodeClaimConditions["VolumesDetached"]', "True", None)
    (miss,) = check({"nodes": [{"index": 0, "nodeClaimConditionsAbsent": ["Drained"]}]}, r)
    assert (miss.path, miss.actual) == ('expect.nodes[0].nodeClaimConditionsAbsent["Drained"]', "True")


IGNORED = """\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: ignored-is-pending}
given:
  skus: [Standard_D2s_v3]
manifests:
  - file: manifests/default-nodepool.yaml
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      volumes: [{name: data, persistentVolumeClaim: {claimName: missing}}]
      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
expect:
  pods:
    web: {pending: true, ignored: true, scheduled: false}
"""


def test_an_ignored_pod_is_pending(cluster):
    """`pending` is "not bound": a pod Karpenter ignores (its claim does not exist) is pending too."""
    sc = load_scenarios_text(IGNORED, "ignored.scenario.yaml", ROOT / "scenarios")[0]
    o = run(sc, "upstream", cluster)
    assert o.final.pods["default/web"].state == "ignored"
    assert o.mismatches == []
