"""`harness new` from manifests and cluster dumps (harness/dump/new.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.cli import main as cli
from harness.scenario.load import load_scenarios

DUMP = Path(__file__).resolve().parents[2] / "scenarios" / "bugs" / "dumps" / "limits-customer-dump.yaml"
TICKETS = Path(__file__).resolve().parents[2] / "scenarios" / "tickets"
T18 = "t18-daemonset-second-term-not-counted.scenario.yaml"


def new(tmp_path, *inputs, extra=()):
    out = tmp_path / "case.scenario.yaml"
    rc = cli(["new", *map(str, inputs), "--name", "case-1", "-o", str(out), *extra])
    return rc, out


def test_dump_becomes_manifests_and_expectations(tmp_path, capsys):
    rc, out = new(tmp_path, DUMP)
    assert rc == 0
    (sc,) = load_scenarios(out)
    kinds = [m.obj["kind"] for m in sc.manifests]
    assert kinds == ["NodePool", "AKSNodeClass", "Deployment"]        # pods of the Deployment dropped
    np = sc.manifests[0].obj
    assert set(np["metadata"]) == {"name", "annotations"} and "status" not in np
    assert "kubectl.kubernetes.io/last-applied-configuration" not in np["metadata"]["annotations"]
    assert sc.profiles == ["before-0006", "design-0006", "upstream"]
    assert sc.given["cluster"] == {"nodeResourceGroup": "MC_rg_shop_eastus", "kubernetesVersion": "1.33.3"}
    assert sc.expect["pods"] == {"web": {"scheduled": True, "count": 1}}
    assert sc.expect["events"][0]["message"].endswith("exceed limits for nodepool (NodePool=default)")
    # the cluster as it is: the Karpenter node and the Deployment pod running on it exist before the
    # first pass (given.existingNodes); the expectations are about the rest
    (node,) = sc.given["existingNodes"]
    assert (node["nodePool"], node["instanceType"], node["zone"], node["capacityType"]) == (
        "default", "Standard_D4s_v5", "eastus-2", "on-demand")
    (running,) = node["pods"]
    assert running["metadata"]["name"] == "web-6d4cf56db6-x7k2p" and "nodeName" not in running["spec"]
    assert running["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"
    # what the dump shows of the seeded node: there at the end, not deleting, not drifted
    assert sc.expect["nodes"] == [{"index": 0, "nodePool": "default", "instanceType": "Standard_D4s_v5",
                                   "zone": "eastus-2", "deleted": False, "deleting": False, "drifted": False}]
    assert "nodeCount" not in sc.expect
    err = capsys.readouterr().err
    assert "skipped ReplicaSet web-6d4cf56db6" in err and "skipped Service web" in err


def test_dump_replay_expects_the_nodes_instead(tmp_path):
    rc, out = new(tmp_path, DUMP, extra=["--replay"])
    assert rc == 0
    (sc,) = load_scenarios(out)
    assert "existingNodes" not in sc.given
    node = sc.expect["nodes"][0]
    assert node["instanceType"] == "Standard_D4s_v5" and node["zone"] == "eastus-2"
    assert "kubernetes.io/hostname" not in node["labels"]


def test_seeded_dump_runs_as_the_customer_saw_it(tmp_path):
    from harness.backends.embedded import EmbeddedBackend
    from harness.runner.engines import run
    rc, out = new(tmp_path, DUMP, extra=["--profile", "upstream"])
    (sc,) = load_scenarios(out)
    cluster = EmbeddedBackend().start()
    try:
        outcome = run(sc, "upstream", cluster)
    finally:
        cluster.close()
    assert outcome.passed, [m.render() for m in outcome.mismatches]
    assert len(outcome.result.nodes) == 1 and sum(1 for c in outcome.result.nodeclaims if c.launched) == 1


def test_refuses_to_overwrite_without_force(tmp_path, capsys):
    assert new(tmp_path, DUMP)[0] == 0
    assert new(tmp_path, DUMP)[0] == 2
    assert "pass --force" in capsys.readouterr().err
    assert new(tmp_path, DUMP, extra=["--force"])[0] == 0


def test_refuses_a_name_validate_would_reject(tmp_path, capsys):
    out = tmp_path / "x.scenario.yaml"
    assert cli(["new", str(DUMP), "--name", "Acme_1234", "-o", str(out)]) == 2
    assert "not a valid scenario name" in capsys.readouterr().err and not out.exists()


def test_missing_nodeclass_is_named(tmp_path, capsys):
    docs = [d for d in yaml.safe_load(DUMP.read_text())["items"] if d["kind"] == "NodePool"]
    multi = tmp_path / "np.yaml"
    multi.write_text(yaml.safe_dump_all(docs))
    assert new(tmp_path, multi, extra=["--region", "eastus"])[0] == 0
    assert "AKSNodeClass default is referenced by a NodePool but not in the input: assumed the release's " \
           "default (karpenter.azure.com/v1beta1" in capsys.readouterr().err
    (sc,) = load_scenarios(tmp_path / "case.scenario.yaml")
    assert [(m.obj["kind"], m.obj["metadata"]["name"], m.obj["spec"]) for m in sc.manifests] == [
        ("AKSNodeClass", "default", {}), ("NodePool", "default", sc.manifests[1].obj["spec"])]


def test_json_list_and_pending_pod_reason(tmp_path):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "solo", "namespace": "default", "uid": "u"},
           "spec": {"containers": [{"name": "c", "image": "i"}]}, "status": {"phase": "Pending"}}
    ev = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}, "reason": "FailedScheduling",
          "involvedObject": {"kind": "Pod", "name": "solo"},
          "message": 'Failed to schedule pod, incompatible requirements, label "workload" does not have known values'}
    f = tmp_path / "dump.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [pod, ev]}))
    rc, out = new(tmp_path, f, extra=["--profile", "upstream", "--region", "eastus"])
    assert rc == 0
    (sc,) = load_scenarios(out)
    assert sc.expect["pods"]["solo"] == {"pending": True,
                                         "reason": 'incompatible requirements, label "workload" does not have known values'}
    assert "uid" not in sc.manifests[0].obj["metadata"]


def test_unknown_region_names_seen_skus_to_synthesize(tmp_path, capsys):
    data = yaml.safe_load(DUMP.read_text())
    for item in data["items"]:
        for k, v in list(((item.get("metadata") or {}).get("labels") or {}).items()):
            if isinstance(v, str) and v.startswith("eastus"):
                item["metadata"]["labels"][k] = v.replace("eastus", "westus3")
    f = tmp_path / "dump.yaml"
    f.write_text(yaml.safe_dump(data))
    rc, out = new(tmp_path, f)
    assert rc == 0
    (sc,) = load_scenarios(out)
    assert sc.region == "westus3" and sc.given["skus"] == ["Standard_D4s_v5"]
    assert any("synthesized" in n.message for n in sc.warnings)
    assert "--catalog-file" in capsys.readouterr().err


def test_nodepool_events_become_expectations(tmp_path):
    data = yaml.safe_load(DUMP.read_text())
    data["items"].append({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "np.1"}, "type": "Warning",
                          "involvedObject": {"kind": "NodePool", "name": "default"}, "reason": "NoCompatibleInstanceTypes",
                          "message": "NodePool requirements filtered out all compatible available instance types"})
    f = tmp_path / "dump.yaml"
    f.write_text(yaml.safe_dump(data))
    rc, out = new(tmp_path, f)
    assert rc == 0
    (sc,) = load_scenarios(out)
    assert sc.expect["nodePools"]["default"]["events"] == [
        {"reason": "NoCompatibleInstanceTypes",
         "message": "NodePool requirements filtered out all compatible available instance types"}]


def test_admission_computed_pod_priority_is_left_to_the_api_server():
    """`kubectl get pod -o yaml` shows spec.priority/preemptionPolicy the Priority admission plugin
    computed; applied again they are refused unless they agree with priorityClassName (k8s.io/kubernetes
    v1.36.3 plugin/pkg/admission/priority/admission.go admitPod), so the scenario keeps only the class."""
    from harness.dump.new import strip_server_fields
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "coredns-1", "uid": "u"},
           "spec": {"nodeName": "n1", "priority": 2000000000, "preemptionPolicy": "PreemptLowerPriority",
                    "priorityClassName": "system-cluster-critical", "containers": []}}
    assert strip_server_fields(pod)["spec"] == {"priorityClassName": "system-cluster-critical", "containers": []}


def test_a_nodeclaims_requests_are_kept(tmp_path):
    """What the round that made a NodeClaim asked for (its pods and the DaemonSets then) is the dump's to
    say: the entry keeps spec.resources.requests, which the seeding uses instead of its own estimate
    (harness/loop/provisioning/nodeclaimobject.py seeded_nodeclaim)."""
    dump = yaml.safe_load(DUMP.read_text())
    (nc,) = [o for o in dump["items"] if o["kind"] == "NodeClaim"]
    nc["spec"]["resources"] = {"requests": {"cpu": "1100m", "pods": "4"}}
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump(dump))
    rc, out = new(tmp_path, path)
    assert rc == 0
    (sc,) = load_scenarios(out)
    (node,) = sc.given["existingNodes"]
    assert node["requests"] == {"cpu": "1100m", "pods": "4"}


def test_an_object_twice_is_two_dumps_read_as_one(tmp_path, capsys):
    """A cluster holds one NodeClaim of a name; the same name twice (two moments' dumps, or one file given twice)
    is refused at its line, not run into a seeding error."""
    dump = tmp_path / "dump.yaml"
    nc = "apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: default-h5szv}\nspec: {}\n"
    dump.write_text(nc + "---\n" + nc)
    assert cli(["new", str(dump), "--name", "twice", "-o", str(tmp_path / "t.scenario.yaml")]) != 0
    assert (f"{dump}:6: NodeClaim default-h5szv is in the input twice (first at line 1): give one dump of one moment"
            in capsys.readouterr().err)


def test_a_pod_kept_twice_is_written_as_two_copies(tmp_path):
    # two NodeClaims of one node seed its pod twice: the scenario made sharing the dump's objects would hold
    # the pod's containers twice (an anchor and its alias in yaml.dump's text); it is made of copies instead
    from harness.dump.new import (
        NewOptions,
        _kept,
        _new_scenario,
        _Shared,
        new_scenario,
    )
    docs = [d for d in yaml.safe_load_all(DUMP.read_text()) if d]
    items = [i for d in docs for i in (d.get("items") if d.get("kind") == "List" else [d])]
    claim = next(i for i in items if i["kind"] == "NodeClaim")
    twin = json.loads(json.dumps(claim))
    twin["metadata"]["name"] += "-twin"
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items + [twin]}, indent=4))
    opts = NewOptions(paths=[str(dump)], name="case-1", output=str(tmp_path / "case.scenario.yaml"), force=True)
    with pytest.raises(_Shared):
        _new_scenario(opts, True)
    out, text, notes = new_scenario(opts)
    assert "&id" not in text and (out, text, notes) == _new_scenario(opts, False)
    pod = next(i for i in items if i["kind"] == "Pod")
    kept = _kept(pod)
    assert kept["spec"]["containers"] is pod["spec"]["containers"] and kept["spec"] is not pod["spec"]


def test_admission_kinds_and_a_bare_replicaset_are_kept(tmp_path, capsys):
    """A dump's PriorityClasses (the API server's own aside), LimitRanges and ResourceQuotas decide how its pods
    are admitted; a ReplicaSet no Deployment of the dump owns runs its pods, which it makes again (not kept as bare
    Pods), while a Deployment's ReplicaSet is the Deployment's."""
    objs = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "system-node-critical"},
         "value": 2000001000},
        {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr", "namespace": "default"},
         "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "100m"}}]}},
        {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "default"},
         "spec": {"hard": {"pods": "10"}}, "status": {"used": {"pods": "1"}}},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "workers", "namespace": "default",
                                                                   "uid": "u1"},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "workers"}},
                  "template": {"metadata": {"labels": {"app": "workers"}},
                               "spec": {"containers": [{"name": "c", "image": "x"}]}}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": "workers-abcde", "namespace": "default", "labels": {"app": "workers"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "workers", "uid": "u1",
                                 "controller": True}]},
         "spec": {"containers": [{"name": "c", "image": "x"}]}, "status": {"phase": "Pending"}},
    ]
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objs}))
    rc, out = new(tmp_path, DUMP, dump)
    assert rc == 0
    (sc,) = load_scenarios(out)
    kinds = [(m.obj["kind"], m.obj["metadata"]["name"]) for m in sc.manifests]
    for kept in [("PriorityClass", "high"), ("LimitRange", "lr"), ("ResourceQuota", "q"), ("ReplicaSet", "workers")]:
        assert kept in kinds
    assert ("PriorityClass", "system-node-critical") not in kinds and ("Pod", "workers-abcde") not in kinds
    assert "status" not in dict(kinds and next(m.obj for m in sc.manifests if m.obj["kind"] == "ResourceQuota"))
    err = capsys.readouterr().err
    assert "skipped ReplicaSet web-6d4cf56db6: its Deployment in the input makes it" in err
    assert "PriorityClass system-node-critical: the API server's own" in err


def test_a_dumped_failed_create_becomes_an_expectation(tmp_path):
    """The dump's FailedCreate on a Deployment's ReplicaSet (a quota used up when it was taken) is the
    Deployment's `failedCreate`, matched on the refusal after the pod's name (the run's ReplicaSet hash differs)."""
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1", "namespace": "default"},
             "involvedObject": {"kind": "ReplicaSet", "name": "web-6d4cf56db6", "namespace": "default"},
             "reason": "FailedCreate", "type": "Warning",
             "message": 'Error creating: pods "web-6d4cf56db6-x9k2p" is forbidden: exceeded quota: q, requested: '
                        "pods=1, used: pods=1, limited: pods=1"}
    dump = tmp_path / "events.yaml"
    dump.write_text(yaml.safe_dump(event))
    rc, out = new(tmp_path, DUMP, dump)
    assert rc == 0
    (sc,) = load_scenarios(out)
    assert sc.expect["pods"]["web"]["failedCreate"] == {
        "messageContains": "exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1"}


def test_a_machine_api_dump_replays_in_its_mode(tmp_path, capsys):
    """A NodeClaim the AKS Machine API made (karpenter.azure.com/aks-machine-resource-id) puts the scenario in
    aksmachineapi, and the note says which object decided it; the scenario runs in that mode."""
    dump = yaml.safe_load(DUMP.read_text())
    (nc,) = [o for o in dump["items"] if o["kind"] == "NodeClaim"]
    nc["metadata"].setdefault("annotations", {})["karpenter.azure.com/aks-machine-resource-id"] = (
        "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c/agentPools/"
        f"aksmachines/machines/{nc['metadata']['name']}")
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump(dump))
    rc, out = new(tmp_path, path, extra=["--profile", "v1.14.0"])
    assert rc == 0
    assert (f"given.cluster.provisionMode aksmachineapi: NodeClaim {nc['metadata']['name']} is annotated "
            "karpenter.azure.com/aks-machine-resource-id") in capsys.readouterr().err
    (sc,) = load_scenarios(out)
    assert sc.given["cluster"]["provisionMode"] == "aksmachineapi"
    assert cli(["run", str(out)]) == 0


def test_a_dump_that_shows_no_mode_says_it_assumed_the_default(tmp_path, capsys):
    """NodeClaims without the machine annotation, a machine VM name, a VM named for the NodeClaim or the VM path's
    label: the scenario runs as aksscriptless, and the notes and given.assumed say it was assumed, not read."""
    dump = yaml.safe_load(DUMP.read_text())
    for o in dump["items"]:
        if o["kind"] == "Node":
            (o["metadata"].get("labels") or {}).pop("karpenter.sh/do-not-sync-taints", None)
        if o["kind"] in ("Node", "NodeClaim"):
            (o.get("spec") or {}).pop("providerID", None)
            (o.get("status") or {}).pop("providerID", None)
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump(dump))
    rc, out = new(tmp_path, path, extra=["--provider-version", "1.14.0"])
    assert rc == 0
    assert "assumed aksscriptless, the provider's default" in capsys.readouterr().err
    (sc,) = load_scenarios(out)
    assert "provisionMode" not in (sc.given.get("cluster") or {})
    assert any(line.endswith("assumed aksscriptless, the provider's default") for line in sc.given["assumed"])


def test_a_vm_named_for_its_nodeclaim_is_the_vm_path(tmp_path, capsys):
    """The VM path names a VM aks-<NodeClaim>: aksscriptless, and given.assumed says a dump cannot tell it from
    bootstrappingclient at a release that has both; a release before v0.6.2 has no other mode, so nothing is
    assumed there."""
    dump = yaml.safe_load(DUMP.read_text())
    for o in dump["items"]:
        if o["kind"] == "Node":
            (o["metadata"].get("labels") or {}).pop("karpenter.sh/do-not-sync-taints", None)
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump(dump))
    rc, out = new(tmp_path, path, extra=["--provider-version", "1.14.0"])
    assert rc == 0
    nc = next(o for o in dump["items"] if o["kind"] == "NodeClaim")
    assert (f"given.cluster.provisionMode aksscriptless: NodeClaim {nc['metadata']['name']}'s provider ID names "
            f"the VM aks-{nc['metadata']['name']}") in capsys.readouterr().err
    (sc,) = load_scenarios(out)
    assert any(line.endswith("assumed aksscriptless, not bootstrappingclient") for line in sc.given["assumed"])
    rc, out = new(tmp_path, path, extra=["--provider-version", "0.5.5", "--force"])
    assert rc == 0
    (sc,) = load_scenarios(out)
    assert not any("provisionMode" in line for line in sc.given.get("assumed") or [])


def test_a_static_nodepool_says_the_gate_it_assumed_on(tmp_path, capsys):
    """A dumped NodePool with spec.replicas: its nodes exist only with StaticCapacity on, so the scenario turns
    the gate on and the notes say it was assumed from that NodePool."""
    dump = yaml.safe_load(DUMP.read_text())
    (np,) = [o for o in dump["items"] if o["kind"] == "NodePool"]
    np["spec"]["replicas"] = 1
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump(dump))
    rc, out = new(tmp_path, path, extra=["--profile", "v1.14.0"])
    assert rc == 0
    assert (f"NodePool(s) {np['metadata']['name']} set spec.replicas: assumed the StaticCapacity feature gate on"
            in capsys.readouterr().err)
    (sc,) = load_scenarios(out)
    assert sc.given["featureGates"] == {"StaticCapacity": True}
    assert any("assumed the StaticCapacity feature gate on" in line for line in sc.given["assumed"])


def test_manifests_without_cluster_state_are_not_a_dump_to_reproduce(tmp_path, capsys):
    """A NodePool, a DaemonSet and a Job as the customer wrote them (the plain-description ticket of
    scenarios/tickets/t18): nothing the customer saw is in the input, so the scenario is no `dump` (whose verdict
    reads 'reproduced'), and every run says its expectations are only the NodePools' acceptance (given.assumed)."""
    src = tmp_path / "batch.yaml"
    src.write_text(yaml.safe_dump_all([m.obj for m in load_scenarios(TICKETS / T18)[0].manifests]))
    rc, out = new(tmp_path, src, extra=["--region", "eastus", "--provider-version", "0.7.5"])
    assert rc == 0
    assert "WARNING: the input held no state of the customer's cluster" in capsys.readouterr().err
    (sc,) = load_scenarios(out)
    assert "dump" not in sc.tags and list(sc.expect) == ["nodePools"]
    assert sc.given["assumed"][0].startswith("the input held no state of the customer's cluster")
