"""Customer dumps round-trip: `harness new` on a `kubectl get -o yaml` dump (tests/dump/dumps/, written
by hand in kubectl's shape), then the run with no edit reproduces what the dump shows at the dump's time
(given.startTime) and carries on from it (harness/dump/new.py, harness/loop/seed.py)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.cli import main as cli
from harness.model.kube.kubetime import parse_rfc3339
from harness.scenario.load import load_scenarios, load_scenarios_text

DUMPS = Path(__file__).resolve().parent / "dumps"
# the dumps the library's scenarios are made from (scenarios/bugs/dumps), read in place
SCENARIO_DUMPS = Path(__file__).resolve().parents[2] / "scenarios" / "bugs" / "dumps"


def new(tmp_path, dump: str | Path, *extra: str):
    out = tmp_path / "case.scenario.yaml"
    src = dump if isinstance(dump, Path) else DUMPS / dump
    assert cli(["new", str(src), "--name", "case-1", "-o", str(out), "--force", *extra]) == 0
    return out


def run(sc, profile: str = "upstream"):
    from harness.backends.embedded import EmbeddedBackend
    from harness.runner.engines import run as run_scenario
    cluster = EmbeddedBackend().start()
    try:
        return run_scenario(sc, profile, cluster)
    finally:
        cluster.close()


def with_steps(out: Path, steps: list[dict]):
    """The generated scenario with steps appended (carrying on past the dump's time)."""
    doc = yaml.safe_load(out.read_text())
    doc["steps"] = steps
    (sc,) = load_scenarios_text(yaml.safe_dump(doc, sort_keys=False), out.name, out.parent)
    return sc


def test_node_draining_behind_a_pdb_stays_deleting(tmp_path, capsys):
    out = new(tmp_path, "drain-behind-pdb.yaml", "--provider-version", "1.6.2")
    (sc,) = load_scenarios(out)
    assert sc.profiles == ["v1.6.2", "upstream"]
    assert sc.given["startTime"] == "2026-11-20T14:04:30Z"        # the Node's last heartbeat: the newest time
    (entry,) = sc.given["existingNodes"]
    assert entry["deleting"] == "2026-11-20T13:50:00Z" and entry["createdAt"] == "2026-11-19T10:02:11Z"
    assert [p["metadata"]["name"] for p in entry["pods"]] == ["api-7f9c6b5d4-h2x9q", "api-7f9c6b5d4-m4k7t"]
    assert [m.obj["kind"] for m in sc.manifests].count("PodDisruptionBudget") == 1
    assert sc.expect["nodes"] == [{"index": 0, "nodePool": "web", "instanceType": "Standard_D4s_v5",
                                   "zone": "eastus-1", "deleted": False, "deleting": True, "drifted": False}]
    assert not [w for w in sc.warnings if "schedulerName" in w.message]     # the default is not warned
    for profile in sc.profiles:
        outcome = run(sc, profile)
        assert outcome.passed, [m.render() for m in outcome.mismatches]
        (node,) = outcome.result.nodes
        assert node.deleting and any(t["key"] == "karpenter.sh/disrupted" for t in node.taints)
        assert sorted(node.pods) == ["default/api-7f9c6b5d4-h2x9q", "default/api-7f9c6b5d4-m4k7t"]
    # the timeline dates the seeded NodeClaim as the dump does: created at its creationTimestamp, deleting
    # since its deletionTimestamp, not both at the run's start
    from harness.loop.history import history
    (span,) = history(outcome.result).claims
    assert span.phases["created"].utc == "2026-11-19T10:02:11Z"
    assert span.phases["disrupting"].utc == "2026-11-20T13:50:00Z"
    (step,) = [st for st in history(outcome.result).steps if st.action == "deleting"]
    assert step.at.utc == "2026-11-20T13:50:00Z" and step.at.offset == -870
    # carrying on: a day later the PDB still holds both pods, and the node is still draining
    outcome = run(with_steps(out, [{"advance": "22h30m", "expect": {"nodes": sc.expect["nodes"]}}]))
    assert outcome.passed, [m.render() for m in outcome.mismatches]


def test_drifted_nodeclass_stays_drifted_behind_its_budget(tmp_path):
    out = new(tmp_path, "drifted-nodeclass.yaml")
    (sc,) = load_scenarios(out)
    (entry,) = sc.given["existingNodes"]
    assert entry["drifted"] == "NodeClassDrifted"
    assert entry["annotations"]["karpenter.azure.com/aksnodeclass-hash"] == "7261398123455519287"
    assert sc.expect["pods"]["batch-runner"] == {"scheduled": True, "node": 0}
    outcome = run(sc)
    assert outcome.passed, [m.render() for m in outcome.mismatches]
    assert outcome.result.nodes[0].drifted == "NodeClassDrift" and not outcome.result.disruptions


def test_drifted_node_is_replaced_once_the_budget_allows(tmp_path):
    """The same dump without the Drifted budget: the run carries on and drift replaces the node, so the
    generated expectation (still drifted, still there) fails and names what changed."""
    data = yaml.safe_load((DUMPS / "drifted-nodeclass.yaml").read_text())
    data["items"][0]["spec"]["disruption"]["budgets"] = [{"nodes": "10%"}]
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump(data))
    (sc,) = load_scenarios(new(tmp_path, dump))
    outcome = run(sc)
    assert not outcome.passed
    assert [d["reason"] for d in outcome.result.disruptions] == ["Drifted"]
    assert outcome.result.disruptions[0]["driftReason"] == "NodeClassDrift"
    assert any(m.path == "expect.nodes[0].deleted" for m in outcome.mismatches)


def test_image_drift_of_a_v0_release_is_named_as_not_kept(tmp_path, capsys):
    """A v0.x dump's Drifted reason ImageVersionDrift (the image drift's name before provider v1.4,
    provider.drift.imageReason): not seeded as drifted, and the note says why rather than that the loop derives it."""
    text = (DUMPS / "drifted-nodeclass.yaml").read_text().replace("reason: NodeClassDrift", "reason: ImageVersionDrift")
    dump = tmp_path / "dump.yaml"
    dump.write_text(text)
    (sc,) = load_scenarios(new(tmp_path, dump))
    err = capsys.readouterr().err
    assert "Drifted reason ImageVersionDrift is not kept: the provider's image drift (so named at v0.5.0-v0.7.5)" in err
    assert "drifted" not in sc.given["existingNodes"][0]


def test_aged_node_expires_on_time(tmp_path):
    out = new(tmp_path, "expiring-node.yaml")
    (sc,) = load_scenarios(out)
    start = parse_rfc3339(sc.given["startTime"])
    assert sc.given["startTime"] == "2026-11-20T13:30:00Z"
    assert sc.given["existingNodes"][0]["createdAt"] == "2026-10-21T14:00:00Z"
    outcome = run(sc)                         # at the dump's time: the node is there
    assert outcome.passed, [m.render() for m in outcome.mismatches]
    # carrying on: 720h after its creation (14:00, 30 minutes on) it expires, not before
    outcome = run(with_steps(out, [{"advance": "29m"}, {"advance": "1m30s"}]))
    expired = [t for t in outcome.result.timeline if t["action"] == "deleting"]
    assert expired and expired[0]["detail"] == "Expired"
    assert start + 30 * 60 <= expired[0]["t"] <= start + 31 * 60


def test_nodeclaims_without_nodes_are_running_capacity(tmp_path):
    (sc,) = load_scenarios(new(tmp_path, "nodeclaims-without-nodes.yaml"))
    entries = sc.given["existingNodes"]
    assert [e.get("registered", True) for e in entries] == [True, True]
    assert [[p["metadata"]["name"] for p in e["pods"]] for e in entries] == [["ingest"], ["transform"]]
    assert sc.expect["pods"]["ingest"] == {"scheduled": True, "node": 0}
    assert sc.expect["pods"]["report"]["pending"] is True
    outcome = run(sc)
    assert outcome.passed, [m.render() for m in outcome.mismatches]
    assert [n.registered and n.initialized for n in outcome.result.nodes] == [True, True]


def test_missing_nodeclass_is_the_release_default(tmp_path, capsys):
    (sc,) = load_scenarios(new(tmp_path, "missing-nodeclass.yaml", "--provider-version", "v1.6.2"))
    err = capsys.readouterr().err
    assert "AKSNodeClass web is referenced by a NodePool but not in the input: assumed the release's default" in err
    nodeclass = next(m.obj for m in sc.manifests if m.obj["kind"] == "AKSNodeClass")
    assert nodeclass["metadata"]["name"] == "web" and nodeclass["spec"] == {}
    for profile in sc.profiles:
        outcome = run(sc, profile)
        assert outcome.passed, (profile, [m.render() for m in outcome.mismatches], outcome.error)


def test_region_without_catalog_offers_the_customers_zones(tmp_path, capsys):
    (sc,) = load_scenarios(new(tmp_path, "region-without-catalog.yaml"))
    assert sc.region == "swedencentral" and sc.given["zones"] == ["3"] and sc.given["skus"] == ["Standard_D4s_v5"]
    assert "synthesized in zones 3, where the customer's nodes are" in capsys.readouterr().err
    outcome = run(sc)
    assert outcome.passed, [m.render() for m in outcome.mismatches]
    assert outcome.result.nodes[0].zone == "swedencentral-3"


@pytest.mark.parametrize("flag,want", [("--at", "2026-11-20T13:30:00Z"), ("--at", "2026-11-20T13:00:00Z")])
def test_at_sets_the_start(tmp_path, flag, want):
    """At the dump's clock or before it (harness/dump/moment.py; after it is refused)."""
    (sc,) = load_scenarios(new(tmp_path, "expiring-node.yaml", flag, want))
    assert sc.given["startTime"] == want


def test_do_not_disrupt_duration_continues_from_the_pods_start(tmp_path):
    """The drifted node's pod has `karpenter.sh/do-not-disrupt: 24h` and started 23h before the dump: drift
    waits one more hour, not 24 (the pod's status.startTime is kept)."""
    data = yaml.safe_load((DUMPS / "drifted-nodeclass.yaml").read_text())
    data["items"][0]["spec"]["disruption"]["budgets"] = [{"nodes": "10%"}]
    pod = data["items"][-1]
    pod["metadata"]["annotations"] = {"karpenter.sh/do-not-disrupt": "24h"}
    pod["status"]["startTime"] = "2026-11-19T12:15:00Z"
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump(data))
    out = new(tmp_path, dump)
    (sc,) = load_scenarios(out)
    start = parse_rfc3339(sc.given["startTime"])
    assert start == parse_rfc3339("2026-11-20T11:15:00Z")
    outcome = run(sc)
    assert outcome.passed, [m.render() for m in outcome.mismatches]          # at the dump's time: still there
    outcome = run(with_steps(out, [{"advance": "59m"}, {"advance": "5m"}]))
    drifted = [t for t in outcome.result.timeline if t["action"] == "deleting"]
    assert drifted and drifted[0]["detail"] == "Drifted"
    assert start + 3600 <= drifted[0]["t"] <= start + 3600 + 5 * 60


def test_termination_grace_period_counts_from_the_dumps_deletion(tmp_path):
    """With terminationGracePeriod 1h, the node deleted at 13:50 is forced down at 14:50 whatever the PDB
    says: 45.5 minutes after the dump (14:04:30), not an hour."""
    data = yaml.safe_load((DUMPS / "drain-behind-pdb.yaml").read_text())
    data["items"][0]["spec"]["template"]["spec"]["terminationGracePeriod"] = "1h"
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump(data))
    out = new(tmp_path, dump)
    (sc,) = load_scenarios(out)
    start = parse_rfc3339(sc.given["startTime"])
    outcome = run(with_steps(out, [{"advance": "44m", "expect": {"nodes": sc.expect["nodes"]}}, {"advance": "2m"}]))
    # the pods are deleted their own 30 s grace before 14:50 (sigs.k8s.io/karpenter v1.14.0
    # pkg/controllers/node/termination/terminator/terminator.go DeleteExpiringPods), so the drain ends 45 minutes after the dump, not 60
    (drained,) = [t["t"] for t in outcome.result.timeline if t["action"] == "drained"]
    assert start + 45 * 60 <= drained <= start + 45 * 60 + 15
    assert outcome.result.nodes[0].deleted is not None
    assert not [m for m in outcome.mismatches if m.path.startswith("steps[0]")]      # still draining at 44m


def test_a_finished_pod_is_named_not_kept(tmp_path, capsys):
    """A Job's completed pod (status.phase Succeeded) holds no capacity: not a pod to schedule again."""
    data = yaml.safe_load((DUMPS / "nodeclaims-without-nodes.yaml").read_text())
    done = next(i for i in data["items"] if i["metadata"]["name"] == "ingest")
    done["status"]["phase"] = "Succeeded"
    done["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": "ingest",
                                           "controller": True, "uid": "u"}]
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump(data))
    (sc,) = load_scenarios(new(tmp_path, dump))
    assert "Pod ingest: status.phase Succeeded: a finished pod is not kept" in capsys.readouterr().err
    assert "ingest" not in sc.expect["pods"] and "ingest" not in [m.obj["metadata"]["name"] for m in sc.manifests]
    assert "pods" not in sc.given["existingNodes"][0]


def test_job_and_cronjob_are_workloads(tmp_path, capsys):
    """A dumped Job's running pod is seeded on its node, owned by the Job (not a bare pod); the Job
    carries on from its status (1 of 2 succeeded) and the pod completes its run-duration after its
    start; a dumped CronJob is kept, its next Job due after its lastScheduleTime."""
    data = yaml.safe_load((DUMPS / "nodeclaims-without-nodes.yaml").read_text())
    pod = next(i for i in data["items"] if i["metadata"]["name"] == "ingest")
    pod["metadata"]["name"] = "ingest-x7k2p"
    pod["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": "ingest",
                                          "controller": True, "uid": "6e7f8a9b-0a1b-4c2d-9e3f-000000000030"}]
    pod["metadata"]["labels"] = {"batch.kubernetes.io/job-name": "ingest", "job-name": "ingest"}
    pod["status"]["startTime"] = "2026-11-20T09:40:05Z"
    template = {"metadata": {"labels": {"batch.kubernetes.io/controller-uid": "6e7f8a9b-0a1b-4c2d-9e3f-000000000030",
                                        "batch.kubernetes.io/job-name": "ingest"}},
                "spec": {"restartPolicy": "Never", "containers": pod["spec"]["containers"]}}
    data["items"] += [
        {"apiVersion": "batch/v1", "kind": "Job",
         "metadata": {"name": "ingest", "namespace": "default", "uid": "6e7f8a9b-0a1b-4c2d-9e3f-000000000030",
                      "annotations": {"harness.karpenter.azure.com/run-duration": "30m"}},
         "spec": {"completions": 2, "parallelism": 1, "backoffLimit": 6, "suspend": False,
                  "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "6e7f8a9b-0a1b-4c2d-9e3f-000000000030"}},
                  "template": template},
         "status": {"active": 1, "succeeded": 1, "startTime": "2026-11-20T09:10:00Z"}},
        {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": "default"},
         "spec": {"schedule": "0 2 * * *", "concurrencyPolicy": "Forbid", "suspend": False,
                  "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never",
                                                                 "containers": pod["spec"]["containers"]}}}}},
         "status": {"lastScheduleTime": "2026-11-20T02:00:00Z"}}]
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump(data))
    out = new(tmp_path, dump)
    err = capsys.readouterr().err
    assert "not a kind the harness simulates" not in err and "kept as a bare Pod" not in err
    (sc,) = load_scenarios(out)
    job = next(m.obj for m in sc.manifests if m.obj["kind"] == "Job")
    assert "selector" not in job["spec"] and job["status"] == {"succeeded": 1, "startTime": "2026-11-20T09:10:00Z"}
    assert "metadata" not in job["spec"]["template"]        # only the Job controller's uid labels were there
    assert [m.obj["kind"] for m in sc.manifests].count("CronJob") == 1
    (seeded,) = [p for e in sc.given["existingNodes"] for p in e.get("pods") or [] if p["metadata"]["name"] == "ingest-x7k2p"]
    assert seeded["metadata"]["ownerReferences"][0]["kind"] == "Job"
    assert sc.expect["pods"]["ingest"] == {"scheduled": True}
    assert any("CronJob nightly: how long its pods run is in no API object" in n.message for n in sc.warnings)
    outcome = run(sc)
    assert outcome.passed, [m.render() for m in outcome.mismatches]
    # carrying on: the pod started 09:40:05 and runs 30m, so it completes at 10:10:05, 10 minutes after the
    # dump, and with it the Job (2 of 2); the CronJob makes no Job before 02:00 the next day
    outcome = run(with_steps(out, [{"advance": "9m", "expect": {"pods": {"ingest": {"scheduled": True}}}},
                                   {"advance": "2m", "expect": {"pods": {"ingest": {"succeeded": True, "count": 1}},
                                                                "events": [{"kind": "Job", "reason": "Completed"}]}}]))
    assert outcome.passed, [m.render() for m in outcome.mismatches]
    assert not [p for p in outcome.result.pods.values() if p.cronjob == "nightly"]


def test_a_cronjobs_running_job_keeps_forbid_from_starting_another(tmp_path):
    """A dumped CronJob (Forbid, hourly) and the Job it made at 10:00, still running (its pod runs 90m):
    harness new keeps the Job's reference to its CronJob, so at 11:00 the CronJob sees it running and
    holds that time; at 11:30 the pod completes and the held 11:00 Job starts (upstream keeps
    lastScheduleTime while Forbid holds: k8s.io/kubernetes v1.36.3 pkg/controller/cronjob syncCronJob)."""
    data = yaml.safe_load((DUMPS / "nodeclaims-without-nodes.yaml").read_text())
    job_name = "nightly-29919480"                        # 10:00 in minutes since the epoch
    pod = next(i for i in data["items"] if i["metadata"]["name"] == "ingest")
    pod["metadata"]["name"] = f"{job_name}-k2x8s"
    pod["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": job_name,
                                          "controller": True, "uid": "u-job"}]
    pod["status"]["startTime"] = "2026-11-20T10:00:00Z"
    spec = {"restartPolicy": "Never", "containers": pod["spec"]["containers"]}
    run_for = {"harness.karpenter.azure.com/run-duration": "90m"}
    data["items"] += [
        {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": "default", "uid": "u-cj"},
         "spec": {"schedule": "0 * * * *", "concurrencyPolicy": "Forbid",
                  "jobTemplate": {"metadata": {"annotations": run_for}, "spec": {"template": {"spec": spec}}}},
         "status": {"lastScheduleTime": "2026-11-20T10:00:00Z", "active": [{"kind": "Job", "name": job_name}]}},
        {"apiVersion": "batch/v1", "kind": "Job",
         "metadata": {"name": job_name, "namespace": "default", "uid": "u-job", "annotations": run_for,
                      "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "nightly",
                                           "controller": True, "uid": "u-cj"}]},
         "spec": {"template": {"spec": spec}}, "status": {"active": 1, "startTime": "2026-11-20T10:00:00Z"}}]
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump(data))
    out = new(tmp_path, dump)
    (sc,) = load_scenarios(out)
    job = next(m.obj for m in sc.manifests if m.obj["kind"] == "Job")
    assert job["metadata"]["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "nightly",
                                                   "controller": True}]
    outcome = run(with_steps(out, [{"advance": "61m"}, {"advance": "30m"}]))
    assert outcome.passed, [m.render() for m in outcome.mismatches]
    mine = {p.owner_name: p.state for p in outcome.result.pods.values() if p.cronjob == "nightly"}
    # 11:00 held; at 11:30 the pod completed and 11:00's Job (29919540 minutes) made its pod
    assert mine.keys() == {job_name, "nightly-29919540"} and mine[job_name] == "succeeded", mine


def _made_ready(tmp_path, names: list[str]) -> Path:
    """notready-budget.yaml with the Nodes `names` Ready again (their kubelets posting, no condition taint)."""
    doc = yaml.safe_load((SCENARIO_DUMPS / "notready-budget.yaml").read_text())
    for item in doc["items"]:
        if item["kind"] == "Node" and item["metadata"]["name"] in names:
            item["spec"].pop("taints", None)
            item["status"]["conditions"][0].update(status="True", reason="KubeletReady")
    out = tmp_path / "dump.yaml"
    out.write_text(yaml.safe_dump(doc, sort_keys=False))
    return out


def test_not_ready_nodes_are_kept_and_use_up_the_budget(tmp_path, capsys):
    """Twelve empty nodes, budget 10% (2), two of them not Ready: core counts both as disrupting
    (BuildDisruptionBudgetMapping), so at every release none is consolidated, as the customer saw."""
    out = new(tmp_path, SCENARIO_DUMPS / "notready-budget.yaml")
    err = capsys.readouterr().err
    assert "Node aks-web-7tn4c: status.conditions Ready False (KubeletNotReady): seeded not Ready (ready: false)" in err
    assert "Node aks-web-d9p2w: status.conditions Ready Unknown (NodeStatusUnknown)" in err
    (sc,) = load_scenarios(out)
    ready = {e["nodeClaim"]: e.get("ready", True) for e in sc.given["existingNodes"]}
    assert (ready.pop("web-7tn4c"), ready.pop("web-d9p2w")) == (False, "Unknown") and set(ready.values()) == {True}
    # the condition's taints are the seeding's, not the entry's
    assert not any(e.get("taints") for e in sc.given["existingNodes"])
    (notice,) = [n for n in sc.warnings if "not Ready" in n.message]
    assert "taint-based eviction" in notice.message and "node repair" in notice.message
    later = with_steps(out, [{"advance": "1h", "expect": {"nodeCount": 12}}])
    for profile in sc.profiles + ["v1.4.1", "v1.6.2"]:
        outcome = run(later, profile)
        assert outcome.passed, (profile, [m.render() for m in outcome.mismatches])


@pytest.mark.parametrize("made_ready, at_once", [(["aks-web-d9p2w"], 1), (["aks-web-d9p2w", "aks-web-7tn4c"], 2)])
def test_budget_is_ten_percent_less_the_not_ready_nodes(tmp_path, made_ready, at_once):
    """ceil(12 x 10%) - k not Ready nodes are disrupted at once: the first Empty command's size."""
    (sc,) = load_scenarios(new(tmp_path, _made_ready(tmp_path, made_ready)))
    outcome = run(sc)
    deleting = [t for t in outcome.result.timeline if t["action"] == "deleting"]
    first = min(t["t"] for t in deleting)
    assert sum(1 for t in deleting if t["t"] == first) == at_once


def _statefulset_dump() -> dict:
    """nodeclaims-without-nodes.yaml's two nodes (eastus-1, eastus-2) running a StatefulSet's web-0 and web-1,
    each with its claim bound to a disk of its node's zone, as `kubectl get sts,pvc,pv,pods -o yaml` shows them."""
    data = yaml.safe_load((DUMPS / "nodeclaims-without-nodes.yaml").read_text())
    data["items"] = [i for i in data["items"] if i["kind"] not in ("Pod", "Event")]
    data["items"][0]["spec"]["limits"]["cpu"] = "16"
    uid = "6e7f8a9b-0a1b-4c2d-9e3f-000000000040"
    template = {"metadata": {"creationTimestamp": None, "labels": {"app": "web"}},
                "spec": {"containers": [{"image": "nginx:1.27", "name": "web",
                                         "resources": {"requests": {"cpu": "2", "memory": "2Gi"}},
                                         "volumeMounts": [{"mountPath": "/data", "name": "data"}]}]}}
    data["items"] += [
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
         "metadata": {"name": "managed-csi", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
         "provisioner": "disk.csi.azure.com", "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer"},
        {"apiVersion": "apps/v1", "kind": "StatefulSet",
         "metadata": {"name": "web", "namespace": "default", "uid": uid, "generation": 1,
                      "creationTimestamp": "2026-11-18T09:01:38Z"},
         "spec": {"podManagementPolicy": "OrderedReady", "replicas": 2, "revisionHistoryLimit": 10,
                  "selector": {"matchLabels": {"app": "web"}}, "serviceName": "web", "template": template,
                  "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
                  "updateStrategy": {"rollingUpdate": {"partition": 0}, "type": "RollingUpdate"},
                  "volumeClaimTemplates": [{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                            "metadata": {"creationTimestamp": None, "name": "data"},
                                            "spec": {"accessModes": ["ReadWriteOnce"], "volumeMode": "Filesystem",
                                                     "resources": {"requests": {"storage": "32Gi"}}},
                                            "status": {"phase": "Pending"}}]},
         "status": {"availableReplicas": 2, "currentReplicas": 2, "readyReplicas": 2, "replicas": 2,
                    "currentRevision": "web-6d4b9c7f8", "updateRevision": "web-6d4b9c7f8"}}]
    for ordinal, (node, zone) in enumerate((("aks-web-q2w3e", "eastus-1"), ("aks-web-r5t6y", "eastus-2"))):
        name, claim, volume = f"web-{ordinal}", f"data-web-{ordinal}", f"pvc-6e7f8a9b-{ordinal:04d}"
        data["items"] += [
            {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": name, "namespace": "default", "creationTimestamp": "2026-11-19T16:21:40Z",
                          "labels": {"app": "web", "controller-revision-hash": "web-6d4b9c7f8",
                                     "statefulset.kubernetes.io/pod-name": name, "apps.kubernetes.io/pod-index": str(ordinal)},
                          "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web",
                                               "uid": uid, "controller": True, "blockOwnerDeletion": True}]},
             "spec": {**template["spec"], "hostname": name, "subdomain": "web", "nodeName": node,
                      "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]},
             "status": {"phase": "Running", "startTime": "2026-11-19T16:21:40Z"}},
            {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": claim, "namespace": "default", "labels": {"app": "web"},
                          "annotations": {"pv.kubernetes.io/bind-completed": "yes",
                                          "volume.kubernetes.io/selected-node": node}},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "32Gi"}},
                      "storageClassName": "managed-csi", "volumeMode": "Filesystem", "volumeName": volume},
             "status": {"phase": "Bound"}},
            {"apiVersion": "v1", "kind": "PersistentVolume",
             "metadata": {"name": volume, "annotations": {"pv.kubernetes.io/provisioned-by": "disk.csi.azure.com"}},
             "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "32Gi"},
                      "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": claim,
                                   "namespace": "default", "uid": f"6e7f8a9b-claim-{ordinal}"},
                      "csi": {"driver": "disk.csi.azure.com", "volumeHandle": f"/subscriptions/x/disks/{volume}"},
                      "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                          {"key": "topology.disk.csi.azure.com/zone", "operator": "In", "values": [zone]}]}]}},
                      "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "managed-csi",
                      "volumeMode": "Filesystem"},
             "status": {"phase": "Bound"}}]
    return data


def test_a_statefulset_keeps_its_pods_claims_and_volumes(tmp_path, capsys):
    """harness new keeps a dump's StatefulSet with its claims and volumes; its running pods are seeded on their
    nodes and adopted (no pod made again, none rolled: made from its template). A node deleted afterwards
    sends its ordinal back to its disk's zone with the same claim."""
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump(_statefulset_dump()))
    out = new(tmp_path, dump)
    err = capsys.readouterr().err
    assert "not a kind the harness simulates" not in err and "kept as a bare Pod" not in err
    (sc,) = load_scenarios(out)
    st = next(m.obj for m in sc.manifests if m.obj["kind"] == "StatefulSet")
    assert "status" not in st and "status" not in st["spec"]["volumeClaimTemplates"][0]
    assert [m.obj["kind"] for m in sc.manifests].count("PersistentVolumeClaim") == 2
    assert [m.obj["kind"] for m in sc.manifests].count("PersistentVolume") == 2
    # the volume names its claim without the dumped claim's uid, which a claim made anew does not have
    assert all("uid" not in m.obj["spec"]["claimRef"] for m in sc.manifests if m.obj["kind"] == "PersistentVolume")
    seeded = {p["metadata"]["name"]: p for e in sc.given["existingNodes"] for p in e.get("pods") or []}
    assert sorted(seeded) == ["web-0", "web-1"] and seeded["web-1"]["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    assert not [n for n in sc.warnings if "StatefulSet" in n.message], [n.message for n in sc.warnings]
    outcome = run(sc)
    assert outcome.passed, [m.render() for m in outcome.mismatches]
    assert not [e for e in outcome.result.events if e["kind"] == "StatefulSet"]     # adopted: nothing made again
    outcome = run(with_steps(out, [{"delete": [{"kind": "NodeClaim", "name": "web-r5t6y"}],
                                    "expect": {"pods": {"web-1": {"scheduled": True}, "web-0": {"node": 0}},
                                               "nodes": [{"pod": "web-1", "zone": "eastus-2"}]}}]))
    assert outcome.passed, [m.render() for m in outcome.mismatches]
    assert [e["message"] for e in outcome.result.events if e["kind"] == "StatefulSet"] == \
        ["Create Pod web-1 in StatefulSet web successful"]


def test_a_pod_still_terminating_is_seeded_terminating_until_its_grace_period_ends(tmp_path, capsys):
    """A pod the dump shows deleted three hours ago and still on its draining node (a 7-day grace period, a preStop
    exec hook): the clock is the dump's newest heartbeat, not the pod's deletionTimestamp a week ahead; the pod
    keeps its deletion and is assumed to stop when its grace period ends, which the notes and every run say."""
    out = new(tmp_path, "terminating-past-deadline.yaml", "--provider-version", "1.5.5")
    err = capsys.readouterr().err
    assert "the clock starts at 2026-11-24T11:29:40Z" in err
    assert ("Pod rabbitmq-server-0: deleted at 2026-11-24T08:12:41Z with a 604,800 s grace period and still on its "
            "node at the dump's time 2026-11-24T11:29:40Z") in err
    (sc,) = load_scenarios(out)
    pod = next(p for e in sc.given["existingNodes"] for p in e.get("pods") or []
               if p["metadata"]["name"] == "rabbitmq-server-0")
    assert pod["metadata"]["deletionTimestamp"] == "2026-12-01T08:12:41Z"
    assert pod["metadata"]["annotations"] == {"harness.karpenter.azure.com/stops-at": "2026-12-01T08:12:41Z"}
    assert [n.message for n in sc.warnings if n.kind == "assumed" and "rabbitmq-server-0" in n.message]


def test_a_pod_still_terminating_holds_the_drain_before_core_v1_6(tmp_path):
    """Core v1.5.0 leaves a pod terminating past its node's terminationGracePeriod deadline and the drain waits for
    it (the node stays deleting, as the customer saw); core v1.6.0 (#2316) deletes it again to end by the deadline,
    and the node goes. The StatefulSet makes no second rabbitmq-server-0 while the first is terminating."""
    out = new(tmp_path, "terminating-past-deadline.yaml", "--provider-version", "1.5.5")
    (sc,) = load_scenarios(out)
    old = run(sc, "v1.5.5")
    assert old.passed, [m.render() for m in old.mismatches]
    assert not [e for e in old.result.events if e.get("reason") == "FailedCreate"]
    new_core = run(sc, "upstream")
    assert not new_core.passed and [m.path for m in new_core.mismatches] == \
        ["expect.nodes[0].deleted", "expect.nodes[0].deleting"]
