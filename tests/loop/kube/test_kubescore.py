"""harness/loop/kube/kubescore.py: kube-scheduler's Score phase (k8s.io/kubernetes v1.36.3 default profile:
TaintToleration 3, NodeAffinity 2, NodeResourcesFit LeastAllocated 1, NodeResourcesBalancedAllocation 1;
selectHost picks among the best at random)."""
from __future__ import annotations

import random

from harness.loop.kube.kubescore import _balanced, _least_allocated, non_zero_requests, select_host
from harness.loop.scheduling.pods import PodView


def node(name: str, cpu: str = "4", memory: str = "16Gi", taints=None, labels=None) -> dict:
    return {"metadata": {"name": name, "labels": labels or {}},
            "spec": {"taints": taints or []},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}}


def pod(cpu: str | None = "1", memory: str | None = "1Gi", **spec) -> PodView:
    req = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    return PodView({"metadata": {"name": "p", "namespace": "default"},
                    "spec": {"containers": [{"name": "c", "resources": {"requests": req}}], **spec}}, 1)


def test_least_allocated_prefers_the_emptier_node():
    busy, idle = node("busy"), node("idle")
    used = {"busy": {"cpu": 3000, "memory": 8 << 30}}
    nz = {"busy": (3000, 8 << 30)}
    for seed in range(5):
        assert select_host(pod(), [busy, idle], used, nz, random.Random(seed))["metadata"]["name"] == "idle"


def test_a_tie_goes_to_a_seeded_random_node():
    nodes = [node(f"n{i}") for i in range(4)]
    picks = {select_host(pod(), nodes, {}, {}, random.Random(seed))["metadata"]["name"] for seed in range(20)}
    assert len(picks) > 1
    assert select_host(pod(), nodes, {}, {}, random.Random(3)) is select_host(pod(), nodes, {}, {}, random.Random(3))


def test_an_untolerated_prefer_no_schedule_taint_loses():
    tainted = node("tainted", taints=[{"key": "k", "value": "v", "effect": "PreferNoSchedule"}])
    clean = node("clean")
    for seed in range(5):
        assert select_host(pod(), [tainted, clean], {}, {}, random.Random(seed))["metadata"]["name"] == "clean"


def test_preferred_node_affinity_wins_over_least_allocation():
    aff = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 50, "preference": {"matchExpressions": [{"key": "team", "operator": "In", "values": ["a"]}]}}]}}
    wanted = node("wanted", labels={"team": "a"})
    other = node("other", cpu="64", memory="256Gi")
    for seed in range(5):
        assert select_host(pod(affinity=aff), [wanted, other], {}, {}, random.Random(seed))["metadata"]["name"] == "wanted"


def test_scores_follow_the_upstream_formulas():
    assert _least_allocated((1000, 4 << 30), (4000, 16 << 30)) == 75
    assert _least_allocated((5000, 0), (4000, 16 << 30)) == 50           # over capacity scores 0 for that resource
    # balanced: a pod that evens the node out scores above 75, one that unbalances it below
    assert _balanced((2000, 8 << 30), (1000, 8 << 30), (4000, 16 << 30)) > 75
    assert _balanced((2000, 0), (0, 0), (4000, 16 << 30)) < 75


def test_containers_without_requests_count_the_scheduler_defaults():
    assert non_zero_requests(pod(cpu=None, memory=None)) == (100, 200 * 1024 * 1024)
    assert non_zero_requests(pod(cpu="2", memory=None)) == (2000, 200 * 1024 * 1024)


def test_select_host_scores_fit_and_balance_as_the_scorers_do():
    """select_host inlines _least_allocated and _balanced: over random Nodes and usage, the Node it picks is
    the one the two scorers' sum ranks best (a single best, so no random tie decides)."""
    rng = random.Random(7)
    for _ in range(200):
        nodes = [node(f"n{i}", cpu=str(rng.choice([0, 2, 4, 8])), memory=rng.choice(["0", "8Gi", "16Gi"]))
                 for i in range(4)]
        p = pod(cpu=f"{rng.randint(1, 4) * 250}m", memory=f"{rng.randint(1, 8)}Gi")
        used = {f"n{i}": {"cpu": rng.randint(0, 8000), "memory": rng.randint(0, 16) << 30} for i in range(4)}
        nz = {k: (v["cpu"], v["memory"]) for k, v in used.items()}
        pnz = non_zero_requests(p)
        scores = []
        for i, n in enumerate(nodes):
            alloc = (int(float(n["status"]["allocatable"]["cpu"]) * 1000),
                     {"0": 0, "8Gi": 8 << 30, "16Gi": 16 << 30}[n["status"]["allocatable"]["memory"]])
            u = used[f"n{i}"]
            scores.append(_least_allocated((nz[f"n{i}"][0] + pnz[0], nz[f"n{i}"][1] + pnz[1]), alloc)
                          + _balanced((u["cpu"] + p.scheduler_requests.get("cpu", 0),
                                       u["memory"] + p.scheduler_requests.get("memory", 0)),
                                      (u["cpu"], u["memory"]), alloc))
        best = max(scores)
        if scores.count(best) == 1:
            chosen = select_host(p, nodes, used, nz, random.Random(0))
            assert chosen["metadata"]["name"] == f"n{scores.index(best)}"
