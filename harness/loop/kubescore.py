"""kube-scheduler's Score phase for the stand-in: which of the feasible Nodes a pod binds to.

The default profile's score plugins and weights (k8s.io/kubernetes v1.36.3
pkg/scheduler/apis/config/v1/default_plugins.go getDefaultPlugins): TaintToleration 3, NodeAffinity 2,
NodeResourcesFit 1 (LeastAllocated over cpu and memory, weight 1 each), PodTopologySpread 2,
InterPodAffinity 2, NodeResourcesBalancedAllocation 1, ImageLocality 1. A plugin's raw scores are
normalized over the feasible Nodes where the plugin normalizes (framework/plugins/helper
DefaultNormalizeScore), weighted and summed; the highest total wins, and a tie goes to one of them at
random (pkg/scheduler/schedule_one.go selectHost), drawn from the loop's seeded stream.

Scored as 0 on every Node, so they never decide here: PodTopologySpread's and InterPodAffinity's
scoring of soft constraints and preferred terms (including the system default spread constraints),
ImageLocality (the harness's Nodes report no images) and VolumeBinding's capacity scoring (off by
default).
"""
from __future__ import annotations

import random
from typing import Mapping, Sequence

from harness.loop.pods import PodView, Taint, tolerates
from harness.loop.topology import match_expression
from harness.model.resources import parse_resource, parse_resource_list

MAX_SCORE = 100
WEIGHTS = {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "NodeResourcesBalancedAllocation": 1}
# the requests kube-scheduler assumes for a container that sets none, when it scores by least allocation
# (k8s.io/kubernetes v1.36.3 pkg/scheduler/util/pod_resources.go DefaultMilliCPURequest, DefaultMemoryRequest)
NON_ZERO_CPU = 100
NON_ZERO_MEMORY = 200 * 1024 * 1024


def non_zero_requests(pod: PodView) -> tuple[int, int]:
    """(cpu millicores, memory bytes) with the defaults for containers that request none
    (pkg/scheduler/util/pod_resources.go GetNonzeroRequests, per container)."""
    cpu = mem = 0
    for c in pod.spec.get("containers") or []:
        req = parse_resource_list(((c or {}).get("resources") or {}).get("requests") or {})
        cpu += req.get("cpu") or NON_ZERO_CPU
        mem += req.get("memory") or NON_ZERO_MEMORY
    return max(cpu, pod.requests.get("cpu", 0)), max(mem, pod.requests.get("memory", 0))


def _normalize(raw: list[int], reverse: bool = False) -> list[int]:
    """helper.DefaultNormalizeScore(MaxNodeScore, reverse, scores)."""
    top = max(raw, default=0)
    if top == 0:
        return [MAX_SCORE if reverse else 0 for _ in raw]
    return [MAX_SCORE - MAX_SCORE * r // top if reverse else MAX_SCORE * r // top for r in raw]


def _taint_count(pod: PodView, node: dict) -> int:
    """tainttoleration Score: PreferNoSchedule taints the pod does not tolerate."""
    taints = [Taint.from_dict(t) for t in (node.get("spec") or {}).get("taints") or []]
    return sum(1 for t in taints if t.effect == "PreferNoSchedule" and not tolerates(pod.tolerations, t))


def _affinity_weight(pod: PodView, node: dict) -> int:
    """nodeaffinity Score: the weights of the preferred terms the Node's labels match."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    prefs = (((pod.spec.get("affinity") or {}).get("nodeAffinity") or {})
             .get("preferredDuringSchedulingIgnoredDuringExecution") or [])
    total = 0
    for p in prefs:
        term = p.get("preference") or {}
        exprs = term.get("matchExpressions") or []
        fields = term.get("matchFields") or []
        if not exprs and not fields:
            continue
        name = (node.get("metadata") or {}).get("name", "")
        if all(match_expression(labels, e) for e in exprs) and \
                all(match_expression({"metadata.name": name}, f) for f in fields):
            total += int(p.get("weight") or 0)
    return total


def _least_allocated(req: tuple[int, int], alloc: tuple[int, int]) -> int:
    """noderesources least_allocated.go leastResourceScorer over cpu and memory, weight 1 each."""
    score = weights = 0
    for r, a in zip(req, alloc):
        if a == 0:
            continue
        score += 0 if r > a else (a - r) * MAX_SCORE // a
        weights += 1
    return score // weights if weights else 0


def _balanced(requested: tuple[int, int], allocated: tuple[int, int], alloc: tuple[int, int]) -> int:
    """noderesources balanced_allocation.go balancedResourceScorer: the balance with the pod against
    without it."""
    def balance(req: tuple[int, int]) -> int:
        fr = [min(r / a, 1.0) for r, a in zip(req, alloc) if a]
        std = abs(fr[0] - fr[1]) / 2 if len(fr) == 2 else 0.0
        return int((1 - std) * MAX_SCORE)
    return MAX_SCORE // 2 + (MAX_SCORE // 2 + balance(requested) - balance(allocated)) // 2


def select_host(pod: PodView, nodes: Sequence[dict], requested: Mapping[str, Mapping[str, int]],
                non_zero: Mapping[str, tuple[int, int]], rng: random.Random) -> dict:
    """The Node kube-scheduler binds `pod` to among the feasible `nodes`: `requested` is each Node's
    summed requests, `non_zero` the same with kube-scheduler's defaults for containers without any."""
    if len(nodes) == 1:
        return nodes[0]
    pod_nz = non_zero_requests(pod)
    pod_req = (pod.requests.get("cpu", 0), pod.requests.get("memory", 0))
    taints = _normalize([_taint_count(pod, n) for n in nodes], reverse=True)
    affinity = _normalize([_affinity_weight(pod, n) for n in nodes])
    totals = []
    for i, n in enumerate(nodes):
        name = n["metadata"]["name"]
        alloc_list = (n.get("status") or {}).get("allocatable") or {}
        alloc = (parse_resource("cpu", alloc_list.get("cpu", 0)), parse_resource("memory", alloc_list.get("memory", 0)))
        nz = non_zero.get(name, (0, 0))
        used = requested.get(name, {})
        used_req = (used.get("cpu", 0), used.get("memory", 0))
        fit = _least_allocated((nz[0] + pod_nz[0], nz[1] + pod_nz[1]), alloc)
        bal = _balanced((used_req[0] + pod_req[0], used_req[1] + pod_req[1]), used_req, alloc)
        totals.append(WEIGHTS["TaintToleration"] * taints[i] + WEIGHTS["NodeAffinity"] * affinity[i]
                      + WEIGHTS["NodeResourcesFit"] * fit + WEIGHTS["NodeResourcesBalancedAllocation"] * bal)
    best = max(totals)
    return rng.choice([n for n, t in zip(nodes, totals) if t == best])
