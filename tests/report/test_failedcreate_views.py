"""A workload whose pods the API server refuses (harness/loop/kube/failedcreate.py): its FailedCreate in the result
(RunResult.failed_creates, unmade), the expectation that names it (expect.pods.<name>.failedCreate), and every
view a user reads it in - the summary, the console's `what happened`, `--why NAME`, `--json` and the run page."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.backends.embedded import EmbeddedBackend
from harness.cli import main as cli
from harness.runner.engines import run
from harness.report.console import happened, happened_lines, outcome_summary
from harness.report.runpage import page_data
from harness.scenario.load import load_scenarios_text
from harness.why.objects import resolve, why_lines

ROOT = Path(__file__).resolve().parents[2]
TEXT = """\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: quota}
given:
  skus: [Standard_D2s_v3]
manifests:
  - file: manifests/default-nodepool.yaml
  - {apiVersion: v1, kind: ResourceQuota, metadata: {name: pods}, spec: {hard: {pods: "2"}}}
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 3
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: app, image: nginx, resources: {requests: {cpu: 100m}}}]}
expect:
  pods:
    web: {count: 2, failedCreate: {messageContains: "exceeded quota: pods"}}
"""
MESSAGE = 'is forbidden: exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2'


@pytest.fixture(scope="module")
def outcome():
    c = EmbeddedBackend().start()
    try:
        yield run(load_scenarios_text(TEXT, "q.scenario.yaml", ROOT / "scenarios")[0], "upstream", c)
    finally:
        c.close()


def test_the_refusal_is_an_event_on_the_deployments_replicaset(outcome):
    r = outcome.final
    (f,) = r.failed_creates()
    assert f["workload"] == "Deployment/web" and f["object"].startswith("ReplicaSet/web-")
    rs = f["object"].split("/", 1)[1]
    # the quota admission validates after the name was generated: it names the pod's generated name
    assert re.fullmatch(f'Error creating: pods "{rs}-[a-z0-9]{{5}}" {re.escape(MESSAGE)}', f["message"])
    assert r.unmade == {"Deployment/web": 1}
    assert outcome.passed, outcome.mismatches


def test_every_view_says_it(outcome):
    r = outcome.final
    assert "pods not created (FailedCreate): web" in outcome_summary(r)
    lines = happened_lines(happened(r))
    assert any(line.startswith("Deployment/web: 1 pod(s) not created: FailedCreate on ReplicaSet/web-") and MESSAGE in line
               for line in lines)
    assert resolve(r, "web")[-1] == ("Workload", "Deployment/web")
    why = why_lines(r, "web")
    assert "Deployment/web: 2 pod(s); its controller could not create the others (FailedCreate)" in why
    assert page_data(outcome)["notCreated"][0]["missing"] == 1


def test_the_expectation_fails_on_another_message_and_on_none(tmp_path):
    text = TEXT.replace('messageContains: "exceeded quota: pods"', 'messageContains: "no PriorityClass"')
    text += "---\n" + TEXT.replace("name: quota}", "name: none}").replace('replicas: 3', 'replicas: 1').replace(
        '{count: 2, failedCreate: {messageContains: "exceeded quota: pods"}}', '{failedCreate: true}')
    c = EmbeddedBackend().start()
    try:
        wrong, none = (run(sc, "upstream", c) for sc in load_scenarios_text(text, "q.scenario.yaml", ROOT / "scenarios"))
    finally:
        c.close()
    assert [m.path for m in wrong.mismatches] == ['expect.pods["web"].failedCreate']
    assert [m.path for m in none.mismatches] == ['expect.pods["web"].failedCreate']
    assert "no FailedCreate on its controller" in none.mismatches[0].detail


def test_harness_run_json_and_why(tmp_path, capsys):
    f = tmp_path / "q.scenario.yaml"
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "default-nodepool.yaml").write_text(
        (ROOT / "scenarios" / "manifests" / "default-nodepool.yaml").read_text())
    f.write_text(TEXT)
    assert cli(["run", str(f), "--json"]) == 0
    (out,) = json.loads(capsys.readouterr().out)
    (entry,) = out["happened"]["notCreated"]
    assert entry["workload"] == "Deployment/web" and entry["missing"] == 1 and MESSAGE in entry["message"]
    assert cli(["run", str(f), "--why", "web"]) == 0
    text = capsys.readouterr().out
    assert "web: FailedCreate" in text and "event FailedCreate on ReplicaSet/web-" in text
