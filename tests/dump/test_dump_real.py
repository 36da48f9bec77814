"""Dumps made on a real kube-apiserver (tests/dump/dumps/real/, written by tools/make_dumps.py: the server's
uids, managedFields, defaults, creation and deletion times) round-trip: `harness new` on the dump as made,
then `harness run` with no edit reproduces the dumped state at the dump's time under every profile the
scenario names, and carries on from it (harness/dump/new.py, harness/loop/seed.py)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.model.kube.kubetime import parse_rfc3339
from harness.scenario.load import load_scenarios
from tests.dump.test_dump_roundtrip import new, run, with_steps

REAL = Path(__file__).resolve().parent / "dumps" / "real"
CASES = sorted(p.stem for p in REAL.glob("*.yaml"))


def test_every_case_is_made_by_the_tool():
    from tools.make_dumps import CASES as MADE
    assert CASES == sorted(MADE)
    for name in CASES:
        text = (REAL / f"{name}.yaml").read_text()
        assert text.startswith("# Made by tools/make_dumps.py on a real kube-apiserver")
        items = yaml.safe_load(text)["items"]
        assert all(i["metadata"].get("uid") and i["metadata"].get("resourceVersion") for i in items)


@pytest.mark.parametrize("name", CASES)
def test_reproduced_at_the_dumps_time(tmp_path, name):
    (sc,) = load_scenarios(new(tmp_path, REAL / f"{name}.yaml"))
    assert sc.given["startTime"]
    assert sc.given.get("existingNodes")
    for profile in sc.profiles:
        outcome = run(sc, profile)
        assert outcome.passed, (profile, [m.render() for m in outcome.mismatches], outcome.error)


def test_drain_behind_pdb_stays_deleting_since_its_deletion(tmp_path):
    out = new(tmp_path, REAL / "drain-behind-pdb.yaml")
    (sc,) = load_scenarios(out)
    (entry,) = sc.given["existingNodes"]
    dumped = yaml.safe_load((REAL / "drain-behind-pdb.yaml").read_text())["items"]
    claim = next(i for i in dumped if i["kind"] == "NodeClaim")
    assert entry["deleting"] == claim["metadata"]["deletionTimestamp"]
    assert entry["createdAt"] == claim["metadata"]["creationTimestamp"]
    assert sc.expect["nodes"][0]["deleting"] is True
    outcome = run(with_steps(out, [{"advance": "22h30m", "expect": {"nodes": sc.expect["nodes"]}}]))
    assert outcome.passed, [m.render() for m in outcome.mismatches]
    (step,) = [t for t in outcome.result.timeline if t["action"] == "deleting"]
    assert step["t"] == parse_rfc3339(claim["metadata"]["deletionTimestamp"])
    # the dump's names: the NodeClaim keeps its own, its Node is the one the pods' spec.nodeName names
    (node,) = outcome.result.nodes
    assert (node.nodeclaim, node.name) == (claim["metadata"]["name"], claim["status"]["nodeName"])


def test_drifted_node_stays_drifted_behind_its_budget(tmp_path):
    out = new(tmp_path, REAL / "drifted-nodeclass.yaml")
    (sc,) = load_scenarios(out)
    assert sc.given["existingNodes"][0]["drifted"] == "NodeClassDrifted"
    outcome = run(with_steps(out, [{"advance": "2h", "expect": {"nodes": sc.expect["nodes"]}}]))
    assert outcome.passed, [m.render() for m in outcome.mismatches]
    assert outcome.result.nodes[0].drifted and not outcome.result.disruptions


def test_expiring_node_expires_ten_minutes_after_its_creation(tmp_path):
    out = new(tmp_path, REAL / "expiring-node.yaml")
    (sc,) = load_scenarios(out)
    created = parse_rfc3339(sc.given["existingNodes"][0]["createdAt"])
    outcome = run(with_steps(out, [{"advance": "15m"}]))
    (expired,) = [t for t in outcome.result.timeline if t["action"] == "deleting"]
    assert expired["detail"] == "Expired"
    assert created + 600 <= expired["t"] <= created + 600 + 60


def test_nodeclaims_without_nodes_run_their_pods(tmp_path):
    (sc,) = load_scenarios(new(tmp_path, REAL / "nodeclaims-without-nodes.yaml"))
    assert [[p["metadata"]["name"] for p in e["pods"]] for e in sc.given["existingNodes"]] == [["ingest"], ["transform"]]
    assert sc.expect["pods"]["report"]["pending"] is True


def test_missing_nodeclass_is_assumed_with_a_notice(tmp_path, capsys):
    (sc,) = load_scenarios(new(tmp_path, REAL / "missing-nodeclass.yaml"))
    assert "AKSNodeClass web is referenced by a NodePool but not in the input" in capsys.readouterr().err
    assert next(m.obj for m in sc.manifests if m.obj["kind"] == "AKSNodeClass")["spec"] == {}


def test_region_without_catalog_offers_the_nodes_zone(tmp_path):
    (sc,) = load_scenarios(new(tmp_path, REAL / "region-without-catalog.yaml"))
    assert sc.region == "swedencentral" and sc.given["zones"] == ["3"]


def test_job_completes_and_its_empty_node_consolidates(tmp_path):
    """The Job controller's pod runs on the dumped node; it completes 20m after its start, the Job is
    complete, and the emptied node goes after consolidateAfter (5m)."""
    out = new(tmp_path, REAL / "job-and-cronjob.yaml")
    (sc,) = load_scenarios(out)
    (entry,) = sc.given["existingNodes"]
    (pod,) = entry["pods"]
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "Job"
    job = next(m.obj for m in sc.manifests if m.obj["kind"] == "Job")
    assert "labels" not in job["metadata"] and "selector" not in job["spec"]
    assert [m.obj["kind"] for m in sc.manifests].count("CronJob") == 1
    started = parse_rfc3339(pod["status"]["startTime"])
    outcome = run(with_steps(out, [
        {"advance": "19m", "expect": {"pods": {"reindex": {"scheduled": True}}}},
        {"advance": "2m", "expect": {"pods": {"reindex": {"succeeded": True, "count": 1}}}},
        {"advance": "10m", "expect": {"disruption": {"liveNodes": 0}}}]))
    assert outcome.passed, [m.render() for m in outcome.mismatches]
    (done,) = [p for p in outcome.result.pods.values() if p.state == "succeeded"]
    assert done.at["deleted"] == pytest.approx(started + 1200, abs=1)
    assert [d["reason"] for d in outcome.result.disruptions] == ["Empty"]
