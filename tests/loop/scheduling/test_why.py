"""The why view (harness/loop/scheduling/why.py): per NodePool, which requirement or resource eliminated how
many instance types, with the nearest candidates; upstream's message stays the pod's reason."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.backends.embedded import EmbeddedBackend
from harness.cli import main as cli
from harness.runner.engines import run
from harness.report.console import failure_text
from harness.scenario.load import load_scenarios_text

ROOT = Path(__file__).resolve().parents[3]

SCENARIO = """\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {{name: why}}
given:
  profiles: [upstream]
  skus: [Standard_NC24ads_A100_v4, Standard_NC6s_v3, Standard_D2s_v3, Standard_D4s_v3]
manifests:
  - apiVersion: karpenter.azure.com/v1beta1
    kind: AKSNodeClass
    metadata: {{name: default}}
    spec: {{imageFamily: Ubuntu2204}}
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {{name: gpu}}
    spec:
      template:
        spec:
          nodeClassRef: {{group: karpenter.azure.com, kind: AKSNodeClass, name: default}}
          requirements:
            - {{key: karpenter.azure.com/sku-family, operator: In, values: [{family}]}}
  - apiVersion: v1
    kind: Pod
    metadata: {{name: trainer}}
    spec:
      containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
expect:
  pods: {{trainer: scheduled}}
"""


@pytest.fixture(scope="module")
def cluster():
    c = EmbeddedBackend().start()
    yield c
    c.close()


def _outcome(cluster, family="NC", cpu="1", why=None):
    sc = load_scenarios_text(SCENARIO.format(family=family, cpu=cpu), "why.scenario.yaml", ROOT / "scenarios")[0]
    return run(sc, "upstream", cluster, why=why)


def test_a_nodepool_requirement_that_matches_no_family(cluster):
    o = _outcome(cluster)
    pod = o.result.pods["default/trainer"]
    # upstream's message stays the pod's reason
    assert pod.reason == "nodepool requirements filtered out all available instance types"
    w = o.why["default/trainer"]
    assert w.reason == pod.reason
    (np,) = w.nodepools
    assert (np.nodepool, np.instance_types, np.fitting, np.blocked) == ("gpu", 4, 0, None)
    (e,) = np.eliminations
    assert (e.what, e.source, e.count, e.only) == ("karpenter.azure.com/sku-family In [NC]", "NodePool gpu", 4, 4)
    assert e.have == {"D": 2, "N": 2}
    # the N-family SKUs are nearer to NC than the D family
    assert [c.name for c in np.nearest[:2]] == ["Standard_NC24ads_A100_v4", "Standard_NC6s_v3"]
    assert np.nearest[0].reasons == ["karpenter.azure.com/sku-family is N, not In [NC]"]
    text = failure_text(o)
    assert "karpenter.azure.com/sku-family In [NC] (NodePool gpu) eliminates 4; they have D (2), N (2)" in text
    assert "nearest: Standard_NC24ads_A100_v4 (karpenter.azure.com/sku-family is N, not In [NC])" in text


def test_resources_name_the_short_resource(cluster):
    o = _outcome(cluster, family="D", cpu="30")
    (np,) = o.why["default/trainer"].nodepools
    assert np.fitting == 0
    e = np.eliminations[0]
    assert (e.what, e.source, e.count, e.only) == ("resources: cpu 30", "pod", 4, 2)
    assert list(e.have) == ["23660m", "5840m", "3860m", "1900m"]          # largest room first
    assert np.nearest[0].name == "Standard_D4s_v3"                          # the D with most room
    assert np.nearest[0].reasons == ["resources: cpu 30 needed, 3860m allocatable"]
    assert o.result.pods["default/trainer"].reason.startswith("no instance type has enough resources")


def test_a_passing_run_computes_nothing_unless_asked(cluster):
    o = _outcome(cluster, family="D")
    assert o.passed and o.why == {}


def test_harness_run_why(tmp_path, capsys):
    f = tmp_path / "why.scenario.yaml"
    f.write_text(SCENARIO.format(family="NC", cpu="1").replace("manifests:", "manifests:", 1))
    assert cli(["run", str(f), "--why", "trainer", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    why = data[0]["why"]["default/trainer"]
    assert why["nodepools"][0]["eliminations"][0]["what"] == "karpenter.azure.com/sku-family In [NC]"
    f.write_text(SCENARIO.format(family="D", cpu="1"))
    assert cli(["run", str(f), "--why", "trainer", "--why", "ghost"]) == 0
    out = capsys.readouterr().out
    assert "Pod default/trainer: scheduled on " in out
    assert "no pod, NodeClaim, Node, NodePool, AKSNodeClass, workload or Node label 'ghost' in this run" in out
