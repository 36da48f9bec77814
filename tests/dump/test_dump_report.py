"""`harness new` takes a customer's report as it comes (issue 24 item 3): the region from what the
input says (never a silent default), catalog files from anywhere on disk, the customer's provider
version, VMSS node pools and in-flight NodeClaims as existing capacity. The worked example is
scenarios/bugs/customer-files/contoso-westus2 (cluster.yaml, workload.yaml, skus.json)."""
from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest
import yaml

from harness.cli import main as cli
from harness.dump.new import Dump, pick_region, region_sources
from harness.scenario.load import load_scenarios

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "scenarios" / "bugs" / "customer-files" / "contoso-westus2"


def _items(name: str) -> list[dict]:
    return yaml.safe_load((REPORT / name).read_text())["items"]


def _write(tmp_path, name: str, items: list[dict]) -> Path:
    f = tmp_path / name
    f.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    return f


def new(tmp_path, *inputs, extra=(), out_name="case.scenario.yaml"):
    out = tmp_path / "out" / out_name
    return cli(["new", *map(str, inputs), "--name", "case-1", "-o", str(out), *extra]), out


def test_customer_report_as_sent(tmp_path, capsys):
    """The files as the customer sent them, the SKU file somewhere else on disk: no hand edit."""
    elsewhere = tmp_path / "downloads"
    elsewhere.mkdir()
    shutil.copy(REPORT / "skus.json", elsewhere / "skus.json")
    rc, out = new(tmp_path, REPORT / "cluster.yaml", REPORT / "workload.yaml", extra=[
        "--catalog-file", str(elsewhere / "skus.json"), "--provider-version", "v1.14.1"])
    assert rc == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert "region westus2 from Node aks-default-7xk2m's labels" in err
    (sc,) = load_scenarios(out)                       # what `harness validate` reads
    assert sc.region == "westus2" and sc.profiles == ["v1.14.2", "upstream"]     # v1.14.1 is v1.14.2's
    assert sc.given["catalog"] == {"file": "case-1-skus.json"} and (out.parent / "case-1-skus.json").is_file()
    assert sc.given["cluster"] == {"nodeResourceGroup": "MC_contoso-rg_shop-aks_westus2", "kubernetesVersion": "1.32.7"}
    managed, *vmss = sc.given["existingNodes"]
    assert (managed["nodePool"], managed["instanceType"], managed["zone"], managed["capacityType"]) == (
        "default", "Standard_D8ds_v5", "westus2-1", "on-demand")
    # the NodeClaim was made for 5 pods and 6150m, 8390Mi; the report holds 3 of them: the rest is held by a
    # stand-in (harness/scenario/standins.py), and the notes say so
    assert sorted(p["metadata"]["name"] for p in managed["pods"]) == [
        "api-5d8f7c9b6-2lqvx", "api-5d8f7c9b6-h8w4n", "kube-proxy-w7f9p", "stand-in-default-7xk2m-dump-0"]
    assert "stand-in pod stand-in-default-7xk2m-dump-0 holds cpu 50m, memory 134Mi" in err
    # the AKS VMSS system pool (no Karpenter labels) is existing capacity Karpenter does not manage
    assert [n["name"] for n in vmss] == ["aks-nodepool1-38209342-vmss000000", "aks-nodepool1-38209342-vmss000001"]
    assert vmss[0]["taints"] == [{"key": "CriticalAddonsOnly", "value": "true", "effect": "NoSchedule"}]
    assert vmss[0]["labels"]["kubernetes.azure.com/mode"] == "system" and vmss[0]["allocatable"]["cpu"] == "3860m"
    assert sorted(p["metadata"]["name"] for p in vmss[0]["pods"]) == ["coredns-6f7c8d9b44-4rjmt", "kube-proxy-8zq2c"]
    assert [m.obj["kind"] for m in sc.manifests] == ["NodePool", "AKSNodeClass", "Deployment", "Deployment"]
    assert sc.expect["pods"]["api"] == {"scheduled": True, "count": 2}
    assert sc.expect["events"] == [{"kind": "Pod", "reason": "FailedScheduling", "message":
                                    "Failed to schedule pod, all available instance types exceed limits for nodepool "
                                    "(NodePool=default)"}]


def test_customer_report_reproduces(tmp_path, capsys):
    """With the cluster as it is seeded, the third replica stays pending for the customer's reason."""
    from harness.backends.embedded import EmbeddedBackend
    from harness.runner.engines import run
    rc, out = new(tmp_path, REPORT / "cluster.yaml", REPORT / "workload.yaml", extra=[
        "--catalog-file", str(REPORT / "skus.json"), "--profile", "upstream"])
    assert rc == 0
    (sc,) = load_scenarios(out)
    cluster = EmbeddedBackend().start()
    try:
        o = run(sc, "upstream", cluster)
    finally:
        cluster.close()
    assert o.passed, [m.render() for m in o.mismatches]


def test_no_region_is_an_error_naming_the_ways(tmp_path, capsys):
    nodepool = [i for i in _items("cluster.yaml") if i["kind"] in ("NodePool", "AKSNodeClass")]
    rc, out = new(tmp_path, _write(tmp_path, "np.yaml", nodepool))
    assert rc == 2 and not out.exists()
    err = capsys.readouterr().err
    assert "no region in the input, and the harness does not guess one" in err
    assert "--region REGION" in err and "--catalog-file" in err and "kubectl get nodes,nodeclaims" in err
    rc, out = new(tmp_path, _write(tmp_path, "np.yaml", nodepool), extra=["--region", "eastus"])
    assert rc == 0 and load_scenarios(out)[0].region == "eastus"


def test_region_from_each_source():
    items = _items("cluster.yaml")
    claim = next(i for i in items if i["kind"] == "NodeClaim")
    nodeclass = next(i for i in items if i["kind"] == "AKSNodeClass")
    # a NodeClaim without region labels: its providerID's node resource group
    bare = copy.deepcopy(claim)
    bare["metadata"]["labels"] = {k: v for k, v in bare["metadata"]["labels"].items() if not k.startswith("topology")}
    assert region_sources(Dump(nodeclaims=[bare]), None) == [("westus2", "NodeClaim default-7xk2m")]
    nc = copy.deepcopy(nodeclass)
    nc["spec"]["vnetSubnetID"] = ("/subscriptions/x/resourceGroups/MC_contoso-rg_shop-aks_westus2/providers/"
                                  "Microsoft.Network/virtualNetworks/aks-vnet/subnets/aks-subnet")
    [(region, where)] = region_sources(Dump(manifests=[nc]), None)
    assert region == "westus2" and "vnetSubnetID" in where
    assert region_sources(Dump(), str(REPORT / "skus.json")) == [("westus2", "the SKU file skus.json")]
    assert region_sources(Dump(manifests=[nodeclass]), None) == []       # a vnet in the customer's own RG says nothing


def test_disagreeing_sources_and_the_flag():
    notes: list[str] = []
    with pytest.raises(Exception, match="several regions: eastus .*westus2 .*pass --region"):
        pick_region(None, [("westus2", "Node a"), ("eastus", "the SKU file skus.json")], notes)
    assert pick_region("eastus", [("westus2", "Node a")], notes) == "eastus"
    assert notes == ["--region eastus overrides what the input says: westus2 (Node a)"]


def test_nodeclaim_without_its_node_is_running_capacity(tmp_path):
    """The customer sent the NodeClaim (Registered, Initialized) but not its Node: it is running capacity,
    registered and initialized, not a launch in flight."""
    items = [i for i in _items("cluster.yaml") if i["kind"] != "Node" or "vmss" in i["metadata"]["name"]]
    rc, out = new(tmp_path, _write(tmp_path, "cluster.yaml", items), extra=["--catalog-file", str(REPORT / "skus.json")])
    assert rc == 0
    (sc,) = load_scenarios(out)
    entry = next(e for e in sc.given["existingNodes"] if e.get("nodePool"))
    assert "registered" not in entry and "initialized" not in entry
    assert entry["createdAt"] and entry["initializedAt"] == "2026-10-02T13:41:51Z"


def test_inflight_nodeclaim_is_existing_capacity(tmp_path):
    items = [i for i in _items("cluster.yaml") if i["kind"] != "Node" or "vmss" in i["metadata"]["name"]]
    for i in items:
        if i["kind"] == "NodeClaim":      # launched, not registered: no Registered/Initialized condition
            i["status"]["conditions"] = [c for c in i["status"]["conditions"] if c["type"] == "Launched"]
            del i["status"]["nodeName"]
    rc, out = new(tmp_path, _write(tmp_path, "cluster.yaml", items), extra=["--catalog-file", str(REPORT / "skus.json")])
    assert rc == 0
    (sc,) = load_scenarios(out)
    entry = sc.given["existingNodes"][-1]
    assert {k: entry[k] for k in ("nodePool", "instanceType", "registered", "zone", "capacityType")} == {
        "nodePool": "default", "instanceType": "Standard_D8ds_v5", "registered": False, "zone": "westus2-1",
        "capacityType": "on-demand"}


def test_catalog_inside_the_tree_is_referenced_not_copied(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    inside = tmp_path / "files"
    inside.mkdir()
    shutil.copy(REPORT / "skus.json", inside / "skus.json")
    rc, out = new(tmp_path, REPORT / "cluster.yaml", extra=["--catalog-file", str(inside / "skus.json")])
    assert rc == 0
    assert load_scenarios(out)[0].given["catalog"] == {"file": "../files/skus.json"}
    assert not (out.parent / "case-1-skus.json").exists()
    assert cli(["validate", str(out)]) == 0


def test_provider_version(tmp_path, capsys):
    rc, out = new(tmp_path, REPORT / "cluster.yaml", extra=["--catalog-file", str(REPORT / "skus.json"),
                                                          "--provider-version", "v1.8.1"])
    assert rc == 0
    err = capsys.readouterr().err
    assert "WARNING: no profile for provider v1.8.1" in err and "profile v1.7.2" in err
    (sc,) = load_scenarios(out)
    assert sc.profiles == ["v1.7.2", "upstream"] and "provider v1.8.1: profile v1.7.2" in sc.description
    rc, _ = new(tmp_path, REPORT / "cluster.yaml", extra=["--provider-version", "banana", "--force"])
    assert rc == 2 and "--provider-version" in capsys.readouterr().err


def test_the_profile_printed_is_the_profile_written(tmp_path, capsys):
    """Provider v1.4.0 is answered by profile v1.4.1 (it covers v1.4.0-v1.4.1): `harness new` printed
    `profile v1.4.1` and wrote `v1.4.0`."""
    rc, out = new(tmp_path, REPORT / "cluster.yaml", extra=["--catalog-file", str(REPORT / "skus.json"),
                                                          "--provider-version", "v1.4.0"])
    assert rc == 0
    assert "provider v1.4.0: profile v1.4.1" in capsys.readouterr().err
    (sc,) = load_scenarios(out)
    assert sc.profiles == ["v1.4.1", "upstream"] and "provider v1.4.0: profile v1.4.1" in sc.description
