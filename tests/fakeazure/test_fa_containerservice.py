"""AKS agent pools, machines, node image versions and node bootstrapping (fakeazure/containerservice/), over the
wire as the provider's clients send them at v1.14.0 (armcontainerservice/v9 MachinesClient and AgentPoolsClient,
aksmachinesheaderbatch's BatchPutMachine header, the node bootstrapping client). azure-mgmt-containerservice is
not a dependency of the harness, so these speak HTTP through FakeAzure.handle."""
from __future__ import annotations

import base64
import json

import pytest

from fakeazure import FakeAzure
from fakeazure.containerservice.models import BOOTSTRAP_MARK

SUB = "00000000-0000-0000-0000-000000000000"
CLUSTER = f"https://management.azure.com/subscriptions/{SUB}/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c"
POOL = CLUSTER + "/agentPools/testmpool"
API = "?api-version=2025-10-02-preview"
NODE_RG = "MC_rg_c_southcentralus"


def machine_body(size="Standard_D2s_v3", zones=("1",), priority="Regular", labels=None, taints=None, tags=None):
    """The template buildAKSMachineTemplate sends (provider v1.14.0 pkg/providers/instance/aksmachineinstancehelpers.go)."""
    return {"zones": list(zones), "properties": {
        "nodeImageVersion": "AKSUbuntu-2204gen2containerd-202508.20.0",
        "hardware": {"vmSize": size}, "priority": priority, "mode": "User",
        "operatingSystem": {"osType": "Linux", "osSKU": "Ubuntu"},
        "kubernetes": {"nodeLabels": labels or {"karpenter.sh/nodepool": "default"}, "orchestratorVersion": "1.34.0",
                       "nodeInitializationTaints": taints or ["karpenter.sh/unregistered:NoExecute"], "nodeTaints": []},
        "tags": tags or {"karpenter.sh_nodepool": "default", "karpenter.azure.com_aksmachine_nodeclaim": "default-abcde"}}}


@pytest.fixture
def fa():
    f = FakeAzure(lro={"after_polls": 1})
    f.add_agent_pool("rg", "c", "testmpool", NODE_RG, node_labels={"kubernetes.azure.com/azure-cni-overlay": "true"})
    return f


def call(fa, method, url, body=None, headers=None):
    status, h, data = fa.handle(method, url, headers, json.dumps(body) if body is not None else None)
    return status, h, (json.loads(data) if data else None)


def test_machine_create_is_an_lro_that_makes_the_vm(fa):
    status, h, m = call(fa, "PUT", POOL + "/machines/default-abcde" + API, machine_body())
    assert status == 201 and "Azure-AsyncOperation" in h
    assert m["properties"]["provisioningState"] == "Creating"
    vm_id = m["properties"]["resourceId"]
    assert vm_id.startswith(f"/subscriptions/{SUB}/resourceGroups/{NODE_RG}/providers/Microsoft.Compute/virtualMachines/aks-testmpool-default-abcde-")
    assert vm_id.endswith("-vm") and m["properties"]["status"]["creationTimestamp"] and m["properties"]["eTag"]
    assert call(fa, "GET", h["Azure-AsyncOperation"])[2]["status"] == "Succeeded"
    got = call(fa, "GET", POOL + "/machines/default-abcde" + API)[2]
    assert got["properties"]["provisioningState"] == "Succeeded" and got["zones"] == ["1"]
    vm = fa.get_vm(NODE_RG, vm_id.rsplit("/", 1)[1])
    assert vm["properties"]["provisioningState"] == "Succeeded" and vm["tags"]["karpenter.sh_nodepool"] == "default"
    (nic,) = fa.nics(NODE_RG)                # AKS's NIC for the VM, untagged
    assert nic["name"] == vm["name"] + "-nic" and not nic.get("tags")
    assert [x["name"] for x in call(fa, "GET", POOL + "/machines" + API)[2]["value"]] == ["default-abcde"]


def test_the_vm_carries_the_bootstrap_aks_gives_its_kubelet(fa):
    call(fa, "PUT", POOL + "/machines/m1" + API, machine_body(labels={"team": "a"}))
    (body,) = fa.machine_vm_bodies().values()
    script = base64.b64decode(body["properties"]["osProfile"]["customData"]).decode()
    assert script.startswith(BOOTSTRAP_MARK)
    assert '--register-with-taints=karpenter.sh/unregistered:NoExecute' in script
    labels = dict(kv.split("=", 1) for kv in script.split('KUBELET_NODE_LABELS="')[1].split('"')[0].split(","))
    assert labels["team"] == "a" and "kubernetes.azure.com/agentpool" not in labels
    assert labels["kubernetes.azure.com/mode"] == "user" and labels["kubernetes.azure.com/azure-cni-overlay"] == "true"


def test_a_pools_labeler_says_what_aks_writes(fa):
    """The harness gives its rule as the pool's labeler: it sees the machine's properties and SKU."""
    seen = []
    fa.add_agent_pool("rg", "c", "other", NODE_RG, labeler=lambda props, sku: seen.append((props, sku)) or {"x/y": "z"})
    call(fa, "PUT", CLUSTER + "/agentPools/other/machines/m2" + API, machine_body(labels={"team": "a"}))
    (body,) = fa.machine_vm_bodies().values()
    script = base64.b64decode(body["properties"]["osProfile"]["customData"]).decode()
    labels = dict(kv.split("=", 1) for kv in script.split('KUBELET_NODE_LABELS="')[1].split('"')[0].split(","))
    assert labels == {"team": "a", "x/y": "z"}
    ((props, sku),) = seen
    assert sku["name"] == props["hardware"]["vmSize"]


def test_unknown_pool_and_machine_are_404_notfound(fa):
    assert call(fa, "GET", CLUSTER + "/agentPools/nope/machines/x" + API)[0] == 404
    status, _, err = call(fa, "GET", POOL + "/machines/x" + API)
    assert status == 404 and err["code"] == "NotFound"
    assert call(fa, "GET", POOL + API)[2]["properties"]["mode"] == "Machines"


def test_unknown_size_is_refused_on_the_put(fa):
    status, _, err = call(fa, "PUT", POOL + "/machines/m1" + API, machine_body(size="Standard_Nope_v9"))
    assert status == 400 and err["code"] == "VMSizeNotSupported"
    assert "is not supported for subscription" in err["message"]


def test_allocation_fault_becomes_the_machines_provisioning_error(fa):
    fa.add_fault({"code": "ZonalAllocationFailed", "match": {"size": "Standard_D2s_v3", "zone": "1"}})
    status, h, _ = call(fa, "PUT", POOL + "/machines/m1" + API, machine_body())
    assert status == 201
    op = call(fa, "GET", h["Azure-AsyncOperation"])[2]
    assert op["status"] == "Failed" and op["error"]["code"] == "ZonalAllocationFailed"
    m = call(fa, "GET", POOL + "/machines/m1" + API)[2]
    assert m["properties"]["provisioningState"] == "Failed"
    err = m["properties"]["status"]["provisioningError"]
    assert err["code"] == "ZonalAllocationFailed" and err["message"].startswith('Code="ZonalAllocationFailed"')
    assert fa.vms(NODE_RG) == [] and fa.nics(NODE_RG) == []


def test_quota_refusal_is_quota_exceeded(fa):
    fa.set_usage("standardDSv3Family", limit=0)
    _, h, _ = call(fa, "PUT", POOL + "/machines/m1" + API, machine_body())
    call(fa, "GET", h["Azure-AsyncOperation"])
    err = call(fa, "GET", POOL + "/machines/m1" + API)[2]["properties"]["status"]["provisioningError"]
    assert err["code"] == "QuotaExceeded" and 'Code="OperationNotAllowed"' in err["message"]


def test_batch_header_creates_each_machine_with_its_zone_and_tags(fa):
    header = {"batchMachines": [{"machineName": f"m{i}", "zones": [str(i % 3 + 1)], "tags": {"n": str(i)}}
                                for i in range(3)]}
    status, _, m = call(fa, "PUT", POOL + "/machines/m0" + API, machine_body(), {"BatchPutMachine": json.dumps(header)})
    assert status == 201 and m["name"] == "m0"
    got = {x["name"]: x for x in call(fa, "GET", POOL + "/machines" + API)[2]["value"]}
    assert sorted(got) == ["m0", "m1", "m2"]
    assert got["m2"]["zones"] == ["3"] and got["m2"]["properties"]["tags"] == {"n": "2"}


def test_batch_with_a_refused_machine_is_a_batch_client_error(fa):
    header = {"batchMachines": [{"machineName": "ok", "zones": ["1"], "tags": {}}]}
    body = machine_body(size="Standard_Nope_v9")
    status, _, err = call(fa, "PUT", POOL + "/machines/ok" + API, body, {"BatchPutMachine": json.dumps(header)})
    assert status == 400 and err["code"] == "BatchMachineClientError"      # flat: no "error" envelope
    assert err["details"][0]["target"] == "ok" and err["details"][0]["code"] == "VMSizeNotSupported"


def test_update_checks_etag_and_immutables(fa):
    m = call(fa, "PUT", POOL + "/machines/m1" + API, machine_body())[2]
    assert call(fa, "PUT", POOL + "/machines/m1" + API, machine_body(), {"If-Match": '"stale"'})[0] == 412
    status, _, err = call(fa, "PUT", POOL + "/machines/m1" + API, machine_body(size="Standard_D4s_v3"))
    assert status == 400 and err["code"] == "OperationNotAllowed"
    status, _, got = call(fa, "PUT", POOL + "/machines/m1" + API, machine_body(tags={"x": "y"}),
                          {"If-Match": m["properties"]["eTag"]})
    assert status == 200 and got["properties"]["tags"] == {"x": "y"} and got["properties"]["eTag"] != m["properties"]["eTag"]


def test_delete_machines_removes_them_and_their_vms(fa):
    call(fa, "PUT", POOL + "/machines/m1" + API, machine_body())
    fa.settle()
    assert call(fa, "POST", POOL + "/deleteMachines" + API, {"machineNames": ["nope"]})[0] == 400
    status, h, _ = call(fa, "POST", POOL + "/deleteMachines" + API, {"machineNames": ["m1"]})
    assert status == 202 and "Location" in h
    assert call(fa, "GET", POOL + "/machines/m1" + API)[2]["properties"]["provisioningState"] == "Deleting"
    fa.settle()
    assert call(fa, "GET", POOL + "/machines/m1" + API)[0] == 404 and fa.vms(NODE_RG) == [] and fa.nics(NODE_RG) == []


def test_node_image_versions_list_the_galleries(fa):
    rows = call(fa, "GET", f"https://management.azure.com/subscriptions/{SUB}/providers/Microsoft.ContainerService/"
                           f"locations/southcentralus/nodeImageVersions" + API)[2]["value"]
    row = next(r for r in rows if r["sku"] == "2204gen2containerd" and r["version"] == "202508.20.0")
    assert row == {"fullName": "AKSUbuntu-2204gen2containerd-202508.20.0", "os": "AKSUbuntu",
                   "sku": "2204gen2containerd", "version": "202508.20.0"}


def test_node_bootstrapping_returns_the_kubelets_bootstrap(fa):
    url = (f"http://127.0.0.1:1/subscriptions/{SUB}/resourceGroups/rg/providers/Microsoft.ContainerService/"
           f"managedclusters/c/nodeBootstrapping")          # no api-version: the go-openapi client sends none
    profile = {k: "x" for k in ("name", "vmSize", "storageProfile", "distro", "orchestratorVersion", "vnetSubnetID",
                                "architecture")}
    profile.update(osType=1, osSku=1, mode=2, maxPods=250, vnetCidrs=["10.0.0.0/8"],
                   customNodeLabels={"karpenter.sh/nodepool": "default"}, nodeInitializationTaints=["a=b:NoSchedule"])
    status, _, out = call(fa, "GET", url, {"provisionProfile": profile, "provisionHelperValues": {"skuCPU": 2, "skuMemory": 8}})
    assert status == 200 and out["cse"]
    script = base64.b64decode(out["customData"]).decode()
    assert "--max-pods=250" in script and "--register-with-taints=a=b:NoSchedule" in script
    assert 'KUBELET_NODE_LABELS="karpenter.sh/nodepool=default"' in script
    del profile["vmSize"]
    status, _, err = call(fa, "GET", url, {"provisionProfile": profile, "provisionHelperValues": {"skuCPU": 2, "skuMemory": 8}})
    assert status == 400 and "missing field: VMSize cannot be empty" in err["error"]["message"]


def test_aks_marks_a_machine_drifted_through_its_status(fa):
    """set_machine_drift: status.driftAction and driftReason, which the provider's isMachineDrifted reads (provider
    v1.14.0 pkg/cloudprovider/drift.go); none until AKS sets one; an unknown machine is NotFound."""
    call(fa, "PUT", POOL + "/machines/default-abcde" + API, machine_body())
    assert "driftAction" not in call(fa, "GET", POOL + "/machines/default-abcde" + API)[2]["properties"]["status"]
    fa.set_machine_drift("default-abcde", "Recreate", "ClusterConfigurationChanged")
    status = call(fa, "GET", POOL + "/machines/default-abcde" + API)[2]["properties"]["status"]
    assert (status["driftAction"], status["driftReason"]) == ("Recreate", "ClusterConfigurationChanged")
    with pytest.raises(Exception, match="not found"):
        fa.set_machine_drift("default-zzzzz")


def test_a_batched_machines_get_stands_for_a_poll_of_its_operation(fa):
    """The batch's reply names the first machine's operation only; the provider waits for each machine with GETs
    (machinecache PollUntilDone), which advance a batched machine's own operation (after_polls 1 here)."""
    header = {"batchMachines": [{"machineName": f"m{i}", "zones": ["1"], "tags": {}} for i in range(2)]}
    call(fa, "PUT", POOL + "/machines/m0" + API, machine_body(), {"BatchPutMachine": json.dumps(header)})
    assert call(fa, "GET", POOL + "/machines/m1" + API)[2]["properties"]["provisioningState"] == "Succeeded"
    call(fa, "PUT", POOL + "/machines/solo" + API, machine_body())          # no header: only its operation's polls
    for _ in range(2):
        assert call(fa, "GET", POOL + "/machines/solo" + API)[2]["properties"]["provisioningState"] == "Creating"


def test_a_spot_eviction_takes_the_machine_with_its_vm(fa):
    call(fa, "PUT", POOL + "/machines/spot" + API, machine_body(priority="Spot"))
    call(fa, "GET", POOL + "/machines/spot" + API)
    vm = call(fa, "GET", POOL + "/machines/spot" + API)[2]["properties"]["resourceId"].rsplit("/", 1)[1]
    fa.evict(NODE_RG, vm)
    assert call(fa, "GET", POOL + "/machines/spot" + API)[0] == 404
    assert call(fa, "GET", POOL + "/machines" + API)[2]["value"] == []


def test_deleting_machines_takes_as_long_as_deleting_their_vms(fa):
    """AKS deletes each machine's VM: with vm.delete timed (given.loop.vmDelete) the machines' deletion runs as
    long, on the state clock, however often it is polled."""
    call(fa, "PUT", POOL + "/machines/m1" + API, machine_body())
    fa.settle()
    fa.set_operation_seconds("vm.delete", 30)
    call(fa, "POST", POOL + "/deleteMachines" + API, {"machineNames": ["m1"]})
    (op,) = fa.running_operations("machine.delete")
    assert op["due"] - fa.clock.time() == 30
    fa.advance(29)
    assert call(fa, "GET", POOL + "/machines/m1" + API)[2]["properties"]["provisioningState"] == "Deleting"
    fa.advance(1)
    fa.settle()
    assert call(fa, "GET", POOL + "/machines/m1" + API)[0] == 404 and fa.vms(NODE_RG) == []

