"""What a run did, shown without expectations (issue 24 item 4): `harness run FILE` prints per NodePool
its NodeClaims (instance type, zone, capacity type, price) and per pod its node or the reasons, each
labelled with who said it; `--labels` adds each Node's labels by writer; `--json` carries the same."""
from __future__ import annotations

import json
import pytest

from harness.cli import main as cli
from harness.loop.scheduling.why import PodWhy
from harness.report.console import happened, happened_lines

SCENARIO = """\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: happened}
given:
  skus: [Standard_D2s_v3]
manifests:
  - apiVersion: karpenter.azure.com/v1beta1
    kind: AKSNodeClass
    metadata: {name: default}
    spec: {imageFamily: Ubuntu2204}
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: default}
    spec:
      template:
        spec:
          nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}
          requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: refused}
    spec:
      template:
        spec:
          nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}
          requirements: [{key: karpenter.sh/nodepool, operator: In, values: [x]}]
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
  - apiVersion: v1
    kind: Pod
    metadata: {name: huge}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: "100"}}}]
expect:
  pods: {web: {scheduled: true}}
  nodePools: {refused: {rejected: true}}
"""


@pytest.fixture
def scenario_file(tmp_path):
    f = tmp_path / "happened.scenario.yaml"
    f.write_text(SCENARIO)
    return f


def test_a_passing_run_shows_what_happened(scenario_file, capsys):
    assert cli(["run", str(scenario_file)]) == 0
    out = capsys.readouterr().out
    assert "happened [upstream] pass: what happened ---" in out
    assert "NodePool default: ready" in out
    assert "NodeClaim default-" in out and "Standard_D2s_v3 zone=southcentralus-" in out and "on-demand $" in out
    assert "Pod default/web: scheduled on aks-default-" in out
    assert "Pod default/huge: pending" in out
    assert "  Karpenter: no instance type has enough resources" in out
    assert "NodePool refused: refused at admission:" in out
    assert "labels on Node" not in out


def test_labels_and_json(scenario_file, capsys):
    assert cli(["run", str(scenario_file), "--labels"]) == 0
    out = capsys.readouterr().out
    assert "labels on Node aks-default-" in out
    assert "kubernetes.azure.com/cluster" in out and "kubelet-node-labels" in out
    assert cli(["run", str(scenario_file), "--json", "--labels"]) == 0
    [run] = json.loads(capsys.readouterr().out)
    h = run["happened"]
    [claim] = h["nodePools"]["default"]["nodeClaims"]
    assert claim["instanceType"] == "Standard_D2s_v3" and claim["capacityType"] == "on-demand" and claim["price"] > 0
    assert claim["pods"] == ["default/web"]
    assert h["pods"]["default/huge"]["state"] == "pending" and "karpenter" in h["pods"]["default/huge"]
    assert h["rejected"][0]["kind"] == "NodePool" and h["rejected"][0]["stage"] == "admission"
    labels = h["nodeLabels"][claim["node"]]
    assert labels["karpenter.sh/nodepool"]["value"] == "default"
    assert labels["karpenter.sh/nodepool"]["writer"] in ("kubelet-node-labels", "karpenter-core")


def test_kube_schedulers_message_is_labelled_as_its_own():
    w = PodWhy("default/web", None, [], scheduler="0/1 nodes are available: 1 Insufficient cpu.")
    assert w.render("")[0] == ("why Pod default/web has no node (Karpenter: no error recorded; "
                               "kube-scheduler: 0/1 nodes are available: 1 Insufficient cpu.)")


def test_pending_pod_reasons_are_attributed():
    from harness.loop.result import PodResult, RunResult
    r = RunResult("x", "upstream", "embedded", 1)
    r.pods["default/a"] = PodResult("a", "default", state="pending", scheduler_error="0/1 nodes are available")
    r.pods["default/b"] = PodResult("b", "default", state="pending", karpenter_error="incompatible requirements")
    lines = happened_lines(happened(r))
    assert lines == ["Pod default/a: pending", "  kube-scheduler: 0/1 nodes are available",
                     "Pod default/b: pending", "  Karpenter: incompatible requirements"]


def test_a_large_run_lists_the_first_nodeclaims_and_bound_pods_and_counts_the_rest():
    """With a limit, NodeClaims per NodePool and bound pods past it are counted (the deleted by reason); pods
    that are not bound are always listed."""
    h = {"nodePools": {"default": {"state": "ready", "nodeClaims": [
        {"name": f"c{i}", "deleted": "Underutilized" if i % 2 else None} for i in range(5)]}},
        "pods": {f"default/p{i}": {"state": "scheduled" if i else "pending", "node": "n"} for i in range(5)}}
    lines = happened_lines(h, limit=2)
    assert lines == ["NodePool default: ready", "  NodeClaim c0: not launched",
                     "  NodeClaim c1: not launched (deleted: Underutilized)",
                     "  ... and 3 more NodeClaims (deleted: 1 Underutilized): --details or --json lists every one",
                     "Pod default/p0: pending on n", "Pod default/p1: scheduled on n", "Pod default/p2: scheduled on n",
                     "... and 2 more pods scheduled: --details or --json lists every one"]
    assert len(happened_lines(h)) == 1 + 5 + 5


def test_line_100_is_not_an_emoji(tmp_path, capsys):
    """rich reads `:100:` as an emoji code even with markup off: the CLI console has emoji off."""
    from harness.cli import _console
    con = _console()
    with con.capture() as cap:
        con.print("scenarios/x.scenario.yaml:100: expect.pods: expected", markup=False)
    assert "x.scenario.yaml:100:" in cap.get() and "\U0001f4af" not in cap.get()


def test_summary_names_a_deployments_pending_pods_by_the_deployment():
    """Replica names are random: the across-profiles table must not read them as a change."""
    from harness.loop.result import PodResult, RunResult
    from harness.report.console import outcome_summary
    r = RunResult("x", "upstream", "embedded", 1)
    r.pods["shop/api-abcde"] = PodResult("api-abcde", "shop", owner_kind="Deployment", owner_name="api")
    r.pods["shop/api-fghij"] = PodResult("api-fghij", "shop", owner_kind="Deployment", owner_name="api")
    r.pods["shop/solo"] = PodResult("solo", "shop")
    assert outcome_summary(r) == "0 node(s); pending: api x2, solo"


def test_a_pending_pod_shows_the_taints_of_the_nodes(tmp_path, capsys):
    """While a pod is pending (often for a taint: a startup taint nothing lifts, a Node not Ready yet),
    each claim's line names its Node's taints; a run with every pod bound does not."""
    text = SCENARIO.replace(
        "          requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]\n",
        "          requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]\n"
        "          taints: [{key: dedicated, value: web, effect: NoSchedule}]\n", 1)
    text = text.replace("      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]\n",
                        "      tolerations: [{key: dedicated, operator: Exists}]\n"
                        "      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]\n", 1)
    f = tmp_path / "tainted.scenario.yaml"
    f.write_text(text)
    assert cli(["run", str(f)]) == 0
    out = capsys.readouterr().out
    assert "Pod default/huge: pending" in out and "; taints: dedicated=web:NoSchedule" in out
    f.write_text(text.replace("      containers: [{name: c, image: x, resources: {requests: {cpu: \"100\"}}}]\n",
                              "      tolerations: [{key: dedicated, operator: Exists}]\n"
                              "      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]\n"))
    assert cli(["run", str(f)]) == 0
    assert "taints:" not in capsys.readouterr().out
