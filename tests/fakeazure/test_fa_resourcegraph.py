"""Resource Graph over raw HTTP, in both serving modes: the query Karpenter-on-Azure v1.14.0's
garbage collection sends (pkg/providers/instance/azureresourcegraphlist.go), paging and lag."""
from __future__ import annotations

import pytest

from fa_helpers import RG, create_vm, nic_body, vm_body

ARG_PATH = "/providers/Microsoft.ResourceGraph/resources"


def kql(rtype: str, rg: str = RG) -> str:
    # getResourceListQueryBuilder, with kql.Builder.AddString quoting (azure-kusto-go v0.16.1)
    return (f'Resources | where type == "{rtype}" | where resourceGroup == "{rg.lower()}" '
            f'| where tags has_cs "karpenter.sh_nodepool" '
            f'| where not(tags has_cs "karpenter.azure.com_aksmachine_nodeclaim")')


def query(env, text: str, **options):
    body = {"subscriptions": [env.sub], "query": text, "options": {"resultFormat": "objectArray", **options}}
    return env.http.post(env.url(ARG_PATH, **{"api-version": "2024-04-01"}), json=body, timeout=30)


def test_lists_karpenter_vms_and_nics_in_the_node_resource_group(fake):
    create_vm(fake, "aks-default-a")
    create_vm(fake, "aks-default-b")
    # not Karpenter's: no nodepool tag, or an AKS machine, or another group
    fake.network.network_interfaces.begin_create_or_update(RG, "other", {**nic_body(), "tags": {}}).result()
    aks_machine = nic_body()
    aks_machine["tags"]["karpenter.azure.com_aksmachine_nodeclaim"] = "x"
    fake.network.network_interfaces.begin_create_or_update(RG, "machine", aks_machine).result()
    fake.network.network_interfaces.begin_create_or_update("elsewhere", "n", nic_body()).result()

    r = query(fake, kql("microsoft.compute/virtualmachines"))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["totalRecords"] == body["count"] == 2 and body["resultTruncated"] == "false"
    assert "$skipToken" not in body
    rows = body["data"]
    assert [row["name"] for row in rows] == ["aks-default-a", "aks-default-b"]
    assert {row["type"] for row in rows} == {"microsoft.compute/virtualmachines"}
    assert {row["resourceGroup"] for row in rows} == {RG.lower()}
    assert rows[0]["tags"]["karpenter.sh_nodepool"] == "default" and rows[0]["id"].endswith("/aks-default-a")
    assert rows[0]["properties"]["hardwareProfile"]["vmSize"] == "Standard_D2s_v3"

    nics = query(fake, kql("microsoft.network/networkinterfaces")).json()["data"]
    assert [n["name"] for n in nics] == ["aks-default-a", "aks-default-b"]


def test_pages_with_skip_token(fake):
    for i in range(5):
        fake.network.network_interfaces.begin_create_or_update(RG, f"n{i}", nic_body()).result()
    names, token, pages = [], None, 0
    while True:
        opts = {"$top": 2} if token is None else {"$top": 2, "$skipToken": token}
        body = query(fake, kql("microsoft.network/networkinterfaces"), **opts).json()
        names += [row["name"] for row in body["data"]]
        pages += 1
        token = body.get("$skipToken")
        if token is None:
            break
    assert names == [f"n{i}" for i in range(5)] and pages == 3


def test_lag_hides_new_resources_and_keeps_deleted_ones_for_a_while(make_env, mode):
    env = make_env(mode, resource_graph_lag=30)
    vms = kql("microsoft.compute/virtualmachines")
    create_vm(env, "aks-a")
    assert query(env, vms).json()["data"] == []  # not indexed yet
    env.state.advance(31)
    assert [r["name"] for r in query(env, vms).json()["data"]] == ["aks-a"]
    env.compute.virtual_machines.begin_delete(RG, "aks-a").result()
    assert env.state.get_vm(RG, "aks-a") is None
    assert [r["name"] for r in query(env, vms).json()["data"]] == ["aks-a"]  # still in the index
    env.state.advance(31)
    assert query(env, vms).json()["data"] == []
    env.state.set_resource_graph_lag(0)
    create_vm(env, "aks-b")
    assert [r["name"] for r in query(env, vms).json()["data"]] == ["aks-b"]


@pytest.mark.parametrize("text", ["Resources | project name", "resourcecontainers", 'Resources | where name == "x"',
                                  'Resources | where type == "x" | limit 1', 5])
def test_other_queries_are_refused_arm_shaped(fake, text):
    r = query(fake, text)
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["code"] == "BadRequest" and err["details"][0]["code"] == "InvalidQuery"


def test_other_subscriptions_see_nothing(fake):
    create_vm(fake, "aks-a")
    body = {"subscriptions": ["11111111-1111-1111-1111-111111111111"], "query": kql("microsoft.compute/virtualmachines")}
    r = fake.http.post(fake.url(ARG_PATH, **{"api-version": "2024-04-01"}), json=body, timeout=30)
    assert r.status_code == 200 and r.json()["data"] == []


def test_takes_fault_rules_and_is_logged(fake):
    fake.state.add_fault({"code": "TooManyRequests", "match": {"operation": "resourcegraph.query"}, "times": 1})
    r = query(fake, kql("microsoft.compute/virtualmachines"))
    assert r.status_code == 429 and r.headers["Retry-After"] == "10"
    assert query(fake, kql("microsoft.compute/virtualmachines")).status_code == 200
    assert [(d["operation"], d["status"]) for d in fake.state.request_details[-2:]] == [
        ("resourcegraph.query", 429), ("resourcegraph.query", 200)]
    assert fake.state.requests[-1].path == ARG_PATH


def test_api_version_is_required(fake):
    r = fake.http.post(fake.url(ARG_PATH), json={"query": kql("x")}, timeout=30)
    assert r.status_code == 400 and r.json()["error"]["code"] == "MissingApiVersionParameter"


def test_vm_body_rows_match_the_arm_view(fake):
    create_vm(fake, "aks-a")
    row = query(fake, kql("microsoft.compute/virtualmachines")).json()["data"][0]
    view = fake.state.vms()[0]
    assert {k: v for k, v in row.items() if k not in ("type", "resourceGroup", "subscriptionId")} == \
        {k: v for k, v in view.items() if k != "type"}
    assert vm_body  # the request shape used by create_vm (fa_helpers)
