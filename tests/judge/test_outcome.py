"""harness/judge/outcome.py: nodes pair by what they carry and what they are, not by launch order,
which core's parallel launches make arbitrary."""
from __future__ import annotations

from harness.loop.result import NodeResult, PodResult, RunResult
from harness.judge.outcome import outcome_view, paired

ZONE = "topology.kubernetes.io/zone"


def _node(i: int, pool: str, size: str, zone: str, pods=()) -> NodeResult:
    return NodeResult(name=f"n{i}", index=i, nodeclaim=f"c{i}", nodepool=pool, instance_type=size, zone=zone,
                      capacity_type="on-demand", vm_name=f"aks-c{i}", labels={ZONE: zone}, pods=list(pods),
                      nodeclaim_requirements=[{"key": ZONE, "operator": "In", "values": [zone]}])


def _run(*nodes: NodeResult) -> RunResult:
    r = RunResult(scenario="s", profile="upstream", backend="embedded", seed=1, nodes=list(nodes))
    for n in nodes:
        for p in n.pods:
            ns, name = p.split("/")
            r.pods[p] = PodResult(name=name, namespace=ns, owner_kind="Deployment", owner_name="web", node=n.name)
    return r


def test_nodes_launched_in_another_order_are_the_same_outcome():
    a = _run(_node(0, "general", "Standard_D2s_v5", "eastus-1", ["default/web-a"]),
             _node(1, "general", "Standard_D2s_v5", "eastus-2", ["default/web-b"]))
    b = _run(_node(0, "general", "Standard_D2s_v5", "eastus-2", ["default/web-x"]),
             _node(1, "general", "Standard_D2s_v5", "eastus-1", ["default/web-y"]))
    assert outcome_view(a) == outcome_view(b)
    assert [n.zone for n in paired(b)] == ["eastus-1", "eastus-2"]


def test_empty_nodes_of_two_pools_pair_by_pool_and_size():
    a = _run(_node(0, "spot", "Standard_E4s_v5", "eastus-1"), _node(1, "general", "Standard_D2ps_v5", "eastus-1"))
    b = _run(_node(0, "general", "Standard_D2ps_v5", "eastus-1"), _node(1, "spot", "Standard_E4s_v5", "eastus-1"))
    assert [n.instance_type for n in paired(a)] == [n.instance_type for n in paired(b)] == \
        ["Standard_D2ps_v5", "Standard_E4s_v5"]


def test_workloads_pair_before_anything_else():
    bare = _run(_node(0, "general", "Standard_D4s_v5", "eastus-1"), _node(1, "general", "Standard_D2s_v5", "eastus-1"))
    bare.nodes[0].pods = ["default/db"]
    bare.pods["default/db"] = PodResult(name="db", namespace="default", node="n0")
    assert [n.name for n in paired(bare)] == ["n1", "n0"]      # no workload sorts before "db"


def test_a_deleted_node_pairs_by_what_it_was_not_the_pods_it_lost():
    sim = _run(_node(0, "np1", "Standard_E4s_v5", "eastus-1"), _node(1, "np0", "Standard_D2ps_v5", "eastus-2"))
    real = _run(_node(0, "np0", "Standard_D2ps_v5", "eastus-2"), _node(1, "np1", "Standard_E4s_v5", "eastus-1",
                                                                        ["default/web-x"]))
    for r in (sim, real):
        next(n for n in r.nodes if n.nodepool == "np1").deleted = "Underutilized"
    assert [n.nodepool for n in paired(sim)] == [n.nodepool for n in paired(real)] == ["np0", "np1"]


def test_a_jobs_pods_count_per_state_whatever_their_random_names():
    """A Job's pods are named by its generateName on both engines: the comparison counts them per state,
    deleted ones too (activeDeadlineSeconds deletes them, and that is the outcome)."""
    from harness.judge.outcome import pods_view

    def job_run(*names_states):
        r = RunResult(scenario="s", profile="upstream", backend="embedded", seed=1)
        for name, state in names_states:
            r.pods[f"default/{name}"] = PodResult(name=name, namespace="default", owner_kind="Job",
                                                  owner_name="reindex", state=state)
        return r
    sim = job_run(("reindex-ieqh5", "succeeded"), ("reindex-bb8ay", "succeeded"), ("reindex-x1", "deleted"))
    real = job_run(("reindex-64fq4", "succeeded"), ("reindex-lc6jq", "succeeded"), ("reindex-y2", "deleted"))
    assert pods_view(sim) == pods_view(real) == {"default/reindex (Job)": {"succeeded": 2, "deleted": 1}}
