"""kube-scheduler's Score phase for the stand-in: which of the feasible Nodes a pod binds to, by the
default profile's score plugins and weights (k8s.io/kubernetes v1.36.3
pkg/scheduler/apis/config/v1/default_plugins.go getDefaultPlugins), a tie broken at random.

Why it is built this way: docs/architecture/loop.md."""
from __future__ import annotations

import math
import random
from typing import Mapping, Sequence

from harness.loop.scheduling import podutil
from harness.loop.kube.kubescheduler import Snapshot, node_matches, untolerated_do_not_schedule
from harness.loop.scheduling.pods import PodView, Taint, tolerates
from harness.loop.scheduling.topology import (HONOR, HOSTNAME, IGNORE, match_expression, selector_is_empty, selector_matches,
                                   spread_selector, term_namespaces, term_selector)
from harness.model.values.resources import parse_resource_list

MAX_SCORE = 100
WEIGHTS = {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "NodeResourcesBalancedAllocation": 1,
           "PodTopologySpread": 2, "InterPodAffinity": 2}
HARD_POD_AFFINITY_WEIGHT = 1      # interpodaffinity args default (apis/config/v1/defaults.go)
# podtopologyspread/plugin.go systemDefaultConstraints (defaultingType System, the default)
SYSTEM_DEFAULT_SPREAD = ({"topologyKey": HOSTNAME, "maxSkew": 3}, {"topologyKey": "topology.kubernetes.io/zone", "maxSkew": 5})
# the requests kube-scheduler assumes for a container that sets none, when it scores by least allocation
# (k8s.io/kubernetes v1.36.3 pkg/scheduler/util/pod_resources.go DefaultMilliCPURequest, DefaultMemoryRequest)
NON_ZERO_CPU = 100
NON_ZERO_MEMORY = 200 * 1024 * 1024


def non_zero_requests(pod: PodView) -> tuple[int, int]:
    """(cpu millicores, memory bytes) with the defaults for containers that request none
    (pkg/scheduler/util/pod_resources.go GetNonzeroRequests, per container); kept on the pod's view (its spec
    does not change), as kube-scheduler sums them for every bound pod each pass."""
    if pod.non_zero is not None:
        return pod.non_zero
    cpu = mem = 0
    for c in pod.spec.get("containers") or []:
        req = parse_resource_list(((c or {}).get("resources") or {}).get("requests") or {})
        cpu += req.get("cpu") or NON_ZERO_CPU
        mem += req.get("memory") or NON_ZERO_MEMORY
    req = pod.scheduler_requests
    pod.non_zero = (max(cpu, req.get("cpu", 0)), max(mem, req.get("memory", 0)))
    return pod.non_zero


def _normalize(raw: list[int], reverse: bool = False) -> list[int]:
    """helper.DefaultNormalizeScore(MaxNodeScore, reverse, scores)."""
    top = max(raw, default=0)
    if top == 0:
        return [MAX_SCORE if reverse else 0 for _ in raw]
    return [MAX_SCORE - MAX_SCORE * r // top if reverse else MAX_SCORE * r // top for r in raw]


def _taint_count(tolerations: list[dict], taints: Sequence[Taint]) -> int:
    """tainttoleration Score: PreferNoSchedule taints the pod (its `tolerations`) does not tolerate."""
    return sum(1 for t in taints if t.effect == "PreferNoSchedule" and not tolerates(tolerations, t))


def _preferred(pod: PodView) -> list[dict]:
    """The pod's preferred node-affinity terms."""
    return (((pod.spec.get("affinity") or {}).get("nodeAffinity") or {})
            .get("preferredDuringSchedulingIgnoredDuringExecution") or [])


def _affinity_weight(prefs: list[dict], node: dict) -> int:
    """nodeaffinity Score: the weights of the preferred terms (`prefs`) the Node's labels match."""
    labels = (node.get("metadata") or {}).get("labels") or {}
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


def _balance(req: tuple[int, int], alloc: tuple[int, int]) -> int:
    """(1 - the standard deviation of the requested fractions of cpu and memory) x MaxNodeScore; 0 deviation
    when the Node has either resource at 0 (a single fraction)."""
    cpu, mem = alloc
    std = abs(min(req[0] / cpu, 1.0) - min(req[1] / mem, 1.0)) / 2 if cpu and mem else 0.0
    return int((1 - std) * MAX_SCORE)


def _balanced(requested: tuple[int, int], allocated: tuple[int, int], alloc: tuple[int, int]) -> int:
    """noderesources balanced_allocation.go balancedResourceScorer: the balance with the pod against
    without it."""
    return MAX_SCORE // 2 + (MAX_SCORE // 2 + _balance(requested, alloc) - _balance(allocated, alloc)) // 2


def _soft_spread(pod: PodView, default_selector: dict | None) -> tuple[list[dict], bool]:
    """(constraints, whether every Node must carry all their keys): the pod's ScheduleAnyway
    constraints, else the system defaults over `default_selector` (none when it is empty:
    common.go buildDefaultConstraints). PreScore requireAllTopologies."""
    own = pod.spec.get("topologySpreadConstraints") or []
    if own:
        return ([{"key": t["topologyKey"], "maxSkew": int(t.get("maxSkew", 1)), "selector": spread_selector(pod, t),
                  "affinity": t.get("nodeAffinityPolicy") or HONOR, "taints": t.get("nodeTaintsPolicy") or IGNORE}
                 for t in own if t.get("whenUnsatisfiable", "DoNotSchedule") == "ScheduleAnyway"], True)
    if default_selector is None or selector_is_empty(default_selector):      # nothing selects the pod
        return [], False
    return ([{"key": c["topologyKey"], "maxSkew": c["maxSkew"], "selector": default_selector,
              "affinity": HONOR, "taints": IGNORE} for c in SYSTEM_DEFAULT_SPREAD], False)


def spread_scores(pod: PodView, nodes: Sequence[dict], snap: Snapshot, default_selector: dict | None) -> list[int]:
    """PodTopologySpread's normalized score of each feasible Node (scoring.go PreScore, Score,
    NormalizeScore): per constraint the pods its selector matches in the Node's domain (a hostname
    constraint: on the Node; another: over every Node that passes the constraint's node inclusion
    policies, for the domains of the feasible Nodes), weighted by log(domains + 2), plus maxSkew - 1;
    fewest scores 100. A Node missing a key of the pod's own constraints scores 0."""
    constraints, require_all = _soft_spread(pod, default_selector)
    if not constraints:
        return [0] * len(nodes)

    def labels(n: dict) -> Mapping[str, str]:
        return (n.get("metadata") or {}).get("labels") or {}

    def has_all(n: dict) -> bool:
        return all(c["key"] in labels(n) for c in constraints)

    def count(node_name: str, selector: dict) -> int:
        return sum(1 for p in snap.pods.get(node_name, ()) if not podutil.terminating(p)
                   and p.namespace == pod.namespace and selector_matches(selector, p.labels))

    def matching(node_name: str, selector: dict) -> int:      # countPodsMatchSelector
        if selector_is_empty(selector):
            return 0
        return snap.count_matching(node_name, pod.namespace, selector, count)

    ignored = {n["metadata"]["name"] for n in nodes if require_all and not has_all(n)}
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for n in nodes:
        if n["metadata"]["name"] not in ignored:
            for i, c in enumerate(constraints):
                if c["key"] != HOSTNAME:
                    counts[i].setdefault(labels(n).get(c["key"], ""), 0)
    weights = [math.log((len(nodes) - len(ignored) if c["key"] == HOSTNAME else len(counts[i])) + 2)
               for i, c in enumerate(constraints)]
    for n in snap.nodes:
        name, lab = n["metadata"]["name"], labels(n)
        if require_all and not has_all(n):
            continue
        taints = snap.facts(n).taints
        for i, c in enumerate(constraints):
            if c["key"] == HOSTNAME or lab.get(c["key"], "") not in counts[i]:
                continue
            if c["affinity"] == HONOR and node_matches(pod, lab, name) is not None:
                continue
            if c["taints"] == HONOR and untolerated_do_not_schedule(pod.tolerations, taints) is not None:
                continue
            counts[i][lab.get(c["key"], "")] += matching(name, c["selector"])
    raw: list[int | None] = []
    for n in nodes:
        name, lab = n["metadata"]["name"], labels(n)
        if name in ignored:
            raw.append(None)
            continue
        score = 0.0
        for i, c in enumerate(constraints):
            if c["key"] in lab:
                cnt = matching(name, c["selector"]) if c["key"] == HOSTNAME else counts[i][lab[c["key"]]]
                score += cnt * weights[i] + (c["maxSkew"] - 1)
        raw.append(int(math.floor(score + 0.5)))               # math.Round: half away from zero
    valid = [r for r in raw if r is not None]
    top, low = max(valid, default=0), min(valid, default=0)
    return [0 if r is None else MAX_SCORE if top == 0 else MAX_SCORE * (top + low - r) // top for r in raw]


def _weighted_terms(pod: PodView, kind: str, namespaces: Mapping[str, Mapping[str, str]],
                    required: bool = False) -> list[tuple[int, str, dict | None, frozenset[str]]]:
    """(weight, topologyKey, selector, namespaces) of a pod's preferred `kind` terms as the API server
    stores them (or its required ones, weighted HARD_POD_AFFINITY_WEIGHT), namespaceSelector merged."""
    aff = (pod.spec.get("affinity") or {}).get(kind) or {}
    if required:
        terms = [(HARD_POD_AFFINITY_WEIGHT, t) for t in aff.get("requiredDuringSchedulingIgnoredDuringExecution") or []]
    else:
        terms = [(int(p.get("weight") or 0), p.get("podAffinityTerm") or {})
                 for p in aff.get("preferredDuringSchedulingIgnoredDuringExecution") or []]
    return [(w, str(t.get("topologyKey") or ""), term_selector(pod, t), term_namespaces(pod, t, namespaces))
            for w, t in terms]


def _scored_terms(other: PodView, ns: Mapping[str, Mapping[str, str]]) -> list[tuple]:
    """A bound pod's terms that score the pod being placed: its required and preferred affinity (+) and
    preferred anti-affinity (-), as (weight, topologyKey, selector, namespaces, sign)."""
    theirs = [(w, k, sel, nss, 1) for w, k, sel, nss in _weighted_terms(other, "podAffinity", ns, True)]
    theirs += [(w, k, sel, nss, 1) for w, k, sel, nss in _weighted_terms(other, "podAffinity", ns)]
    theirs += [(w, k, sel, nss, -1) for w, k, sel, nss in _weighted_terms(other, "podAntiAffinity", ns)]
    return theirs


def affinity_scores(pod: PodView, nodes: Sequence[dict], snap: Snapshot) -> list[int]:
    """InterPodAffinity's normalized score of each feasible Node (scoring.go PreScore
    processExistingPod, Score, NormalizeScore): for every bound pod, the weights of the pod's
    preferred affinity terms it matches (+) and anti-affinity terms (-), and of its own required
    affinity (+1 each), preferred affinity (+) and anti-affinity (-) terms the pod matches, summed per
    (topologyKey, value) of its Node; a Node scores the sums of its values, scaled min..max to 0..100."""
    ns = snap.namespaces
    own = [(w, k, sel, nss, 1) for w, k, sel, nss in _weighted_terms(pod, "podAffinity", ns)]
    own += [(w, k, sel, nss, -1) for w, k, sel, nss in _weighted_terms(pod, "podAntiAffinity", ns)]
    sums: dict[str, dict[str, int]] = {}
    if not own and not snap.with_pod_affinity:
        return [0] * len(nodes)        # no term on either side: every sum below would stay empty

    def add(key: str, labels: Mapping[str, str], amount: int) -> None:
        if key in labels:
            per = sums.setdefault(key, {})
            per[labels[key]] = per.get(labels[key], 0) + amount

    for node in snap.nodes:
        labels = (node.get("metadata") or {}).get("labels") or {}
        if not labels:
            continue
        for other in snap.pods.get(node["metadata"]["name"], ()):
            for w, k, sel, nss, sign in own:
                if other.namespace in nss and selector_matches(sel, other.labels):
                    add(k, labels, sign * w)
            for w, k, sel, nss, sign in snap.scored_terms(other, _scored_terms):
                if pod.namespace in nss and selector_matches(sel, pod.labels):
                    add(k, labels, sign * w)
    if not sums:
        return [0] * len(nodes)
    raw = []
    for n in nodes:
        labels = (n.get("metadata") or {}).get("labels") or {}
        raw.append(sum(per.get(labels[k], 0) for k, per in sums.items() if k in labels))
    low, spread = min(raw), max(raw) - min(raw)
    return [int(MAX_SCORE * (r - low) / spread) if spread > 0 else 0 for r in raw]


def select_host(pod: PodView, nodes: Sequence[dict], requested: Mapping[str, Mapping[str, int]],
                non_zero: Mapping[str, tuple[int, int]], rng: random.Random, snap: Snapshot | None = None,
                default_selector: dict | None = None, scores: dict[tuple, dict] | None = None,
                keys: Sequence | None = None) -> dict:
    """The Node kube-scheduler binds `pod` to among the feasible `nodes`: `requested` is each Node's
    summed requests, `non_zero` the same with kube-scheduler's defaults for containers without any,
    `snap` the bound pods (PodTopologySpread, InterPodAffinity), `default_selector` what the pod's owner
    selects. `scores`, kept by the caller for a pass: per pod requests and tolerations, each Node's
    untolerated PreferNoSchedule taints and weighted resource scores (NodeResourcesFit and BalancedAllocation
    read only those requests and the Node's), which the caller drops for a Node when it binds a pod there,
    each Node's under its key in `keys` (the caller's index of it; its name when not given: a lookup that
    reads no Node object, for every feasible Node of every pod placed)."""
    if len(nodes) == 1:
        return nodes[0]
    pod_nz = non_zero_requests(pod)
    pod_req = (pod.scheduler_requests.get("cpu", 0), pod.scheduler_requests.get("memory", 0))
    facts = snap if snap is not None else Snapshot(list(nodes), [])
    tolerations, prefs = pod.tolerations, _preferred(pod)
    # per Node, (its untolerated PreferNoSchedule taints, its weighted resource scores): kept for the pass
    # per pod requests and tolerations (`scores`), computed here for the Nodes not kept
    kept = scores.setdefault((pod_nz, pod_req, repr(tolerations)), {}) if scores is not None else {}
    if keys is None:
        keys = [n["metadata"]["name"] for n in nodes]
    rows = [kept.get(k) for k in keys]
    # the weights as locals: this loop runs for every feasible Node of every pod placed
    w_taint, w_affinity, w_fit = WEIGHTS["TaintToleration"], WEIGHTS["NodeAffinity"], WEIGHTS["NodeResourcesFit"]
    w_balanced, w_spread = WEIGHTS["NodeResourcesBalancedAllocation"], WEIGHTS["PodTopologySpread"]
    w_inter = WEIGHTS["InterPodAffinity"]
    no_zero, empty = (0, 0), {}
    half = MAX_SCORE // 2
    for i, n in enumerate(nodes):
        if rows[i] is not None:
            continue
        name = n["metadata"]["name"]
        node_facts = facts.facts(n)
        cpu, mem = node_facts.cpu_memory
        nz = non_zero.get(name, no_zero)
        used = requested.get(name, empty)
        used_cpu, used_mem = used.get("cpu", 0), used.get("memory", 0)
        # _least_allocated and _balanced, inlined (the same arithmetic): this runs for every feasible Node of
        # every pod placed
        r_cpu, r_mem = nz[0] + pod_nz[0], nz[1] + pod_nz[1]
        fit = weights = 0
        if cpu != 0:
            fit += 0 if r_cpu > cpu else (cpu - r_cpu) * MAX_SCORE // cpu
            weights += 1
        if mem != 0:
            fit += 0 if r_mem > mem else (mem - r_mem) * MAX_SCORE // mem
            weights += 1
        fit = fit // weights if weights else 0
        if cpu and mem:
            with_pod = int((1 - abs(min((used_cpu + pod_req[0]) / cpu, 1.0) - min((used_mem + pod_req[1]) / mem, 1.0)) / 2)
                           * MAX_SCORE)
            without = int((1 - abs(min(used_cpu / cpu, 1.0) - min(used_mem / mem, 1.0)) / 2) * MAX_SCORE)
        else:
            with_pod = without = int((1 - 0.0) * MAX_SCORE)
        bal = half + (half + with_pod - without) // 2
        rows[i] = kept[keys[i]] = (_taint_count(tolerations, node_facts.taints) if node_facts.taints else 0,
                                w_fit * fit + w_balanced * bal)
    untolerated = [row[0] for row in rows]
    spread = spread_scores(pod, nodes, snap, default_selector) if snap is not None else None
    inter = affinity_scores(pod, nodes, snap) if snap is not None else None
    if not prefs and not any(untolerated) and not (spread and any(spread)) and not (inter and any(inter)):
        # the other plugins score every Node alike (taints MAX_SCORE, the rest 0): the resource scores decide
        totals = [row[1] for row in rows]
    else:
        taints = _normalize(untolerated, reverse=True)
        affinity = _normalize([_affinity_weight(prefs, n) for n in nodes]) if prefs else [0] * len(nodes)
        spread, inter = spread or [0] * len(nodes), inter or [0] * len(nodes)
        totals = [w_taint * taints[i] + w_affinity * affinity[i] + row[1] + w_spread * spread[i] + w_inter * inter[i]
                  for i, row in enumerate(rows)]
    best = max(totals)
    return rng.choice([n for n, t in zip(nodes, totals) if t == best])
