"""A run's outcome as the engines can be compared on it: per node its size, zone, capacity type, labels,
kubelet labels and taints; per pod its state; NodePools; totals. `outcome_view` leaves out what differs
between any two runs (node names, zones no requirement pinned, values drawn for `Exists`, the random
names of a Deployment's pods). Used by the conformance report (conformance.py), `harness bisect` and
outcome sets (explore.py)."""
from __future__ import annotations

import hashlib
import json
import re

# What a Node on its way out carries: core's termination marks (sigs.k8s.io/karpenter v1.14.0
# pkg/controllers/node/termination/controller.go finalize; harness/loop/lifecycle/nodetermination.py)
# and kube-controller-manager's condition taints (kubernetes pkg/controller/nodelifecycle/
# node_lifecycle_controller.go UnreachableTaintTemplate once its VM is gone and its kubelet silent,
# NotReadyTaintTemplate while an in-flight node deleted before it became Ready still reports NotReady;
# the simulation does not run that controller). A deleted Node's record is its last sight: the real
# engine's poll sees it mid-termination, the simulation as it was disrupted; these marks say when the
# record was taken, not what the outcome was.
TERMINATION_TAINTS = ("karpenter.sh/disrupted", "node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready")
TERMINATION_LABELS = ("node.kubernetes.io/exclude-from-external-load-balancers",)
# kube-controller-manager's node lifecycle controller puts these on a NotReady or unreachable Node through a
# rate limiter (--node-eviction-rate 0.1: one Node per zone every 10 s; k8s.io/kubernetes v1.36.3
# pkg/controller/nodelifecycle node_lifecycle_controller.go zoneNoExecuteTainter, doNoExecuteTaintingPass),
# so whether a record carries one says when it was taken and what Nodes went NotReady before it, not the
# outcome. The NoSchedule twins (TaintNodesByCondition, at once) stay.
LIFECYCLE_NO_EXECUTE = (("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute"))


def node_view(n) -> dict:
    labels, taints = dict(n.labels), n.taints
    if n.deleted:
        labels = {k: v for k, v in labels.items() if k not in TERMINATION_LABELS}
        taints = [t for t in taints if t["key"] not in TERMINATION_TAINTS]
    taints = [t for t in taints if (t["key"], t.get("effect")) not in LIFECYCLE_NO_EXECUTE]
    return {"instanceType": n.instance_type, "zone": n.zone, "capacityType": n.capacity_type,
            "labels": labels, "kubeletNodeLabels": dict(n.kubelet_node_labels),
            "taints": sorted(f"{t['key']}={t.get('value', '')}:{t.get('effect')}" for t in taints),
            "kubeletRefused": n.kubelet_refused is not None}


# the owners whose pods are named at random (generateName), on both engines
RANDOM_NAMES = ("Deployment", "ReplicaSet", "Job")


def pods_view(r) -> dict:
    """Each pod's state; the pods of a Deployment, a bare ReplicaSet or a Job (whose names are random on both
    sides: the ReplicaSet's or the Job's generateName) as a count per state under `<namespace>/<owner> (Kind)`.
    A Deployment's or ReplicaSet's deleted pods are left out (a roll or an eviction's replacement deletes as many
    as it makes); a Job's are counted (activeDeadlineSeconds deletes them, and that is the outcome)."""
    out: dict = {}
    for k, p in sorted(r.pods.items()):
        if p.owner_kind == "DaemonSet":
            continue
        if p.owner_kind in RANDOM_NAMES:
            if p.state == "deleted" and p.owner_kind != "Job":
                continue
            counts = out.setdefault(f"{p.namespace}/{p.owner_name} ({p.owner_kind})", {})
            counts[p.state] = counts.get(p.state, 0) + 1
        else:
            out[k] = p.state
    return out


def summary(r) -> dict:
    return {"nodes": len(r.nodes), "nodeClaimsLaunched": sum(1 for c in r.nodeclaims if c.launched),
            "vms": len(r.azure.get("vms") or []), "nics": len(r.azure.get("nics") or []), "runaway": r.runaway,
            "pods": pods_view(r),
            "nodePools": {k: {"accepted": not np.rejected or np.stage == "runtime", "ready": np.ready, "stage": np.stage}
                          for k, np in sorted(r.nodepools.items())}}


ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone", "topology.disk.csi.azure.com/zone")


def noise_reason(field: str, sim_node, real_node) -> str | None:
    """Why a differing node field is expected to differ between any two runs, or None. Names are
    random on both sides; an unpinned zone is a random pick among equal offerings (provider v1.14.0
    pkg/providers/instance/offerings: the launch samples the cheapest compatible offerings)."""
    if field.endswith("labels.kubernetes.io/hostname"):
        return "node names are random"
    m = re.search(r"(?:^|\.)(?:labels|kubeletNodeLabels)\.(.+)$", field)
    if m and real_node is not None:
        req = next((r for r in real_node.nodeclaim_requirements if r.get("key") == m.group(1)), None)
        if req is not None and req.get("operator") in ("Exists", "NotIn", "Gt", "Lt", "Gte", "Lte"):
            # a value no requirement fixes is drawn at random when the label is resolved (core v1.14.0
            # pkg/scheduling/requirement.go Requirement.Any; the simulation draws from its seed)
            return f"{m.group(1)} {req.get('operator')}: its value is drawn at random"
    zone_field = field.endswith(".zone") or any(field.endswith(f"labels.{k}") for k in ZONE_LABELS)
    if zone_field and sim_node is not None and real_node is not None:
        zone_req = next((r for r in real_node.nodeclaim_requirements if r.get("key") == "topology.kubernetes.io/zone"), None)
        pinned = zone_req is not None and zone_req.get("operator") == "In" and len(zone_req.get("values") or []) == 1
        if not pinned:
            return "zone not pinned by the NodeClaim: each engine picks among equal offerings"
    return None


def seen(n) -> dict:
    """A node as outcomes are compared on it: its view without what differs between any two runs."""
    view = node_view(n)
    view["labels"] = {k: v for k, v in view["labels"].items() if noise_reason(f"labels.{k}", n, n) is None}
    if noise_reason(".zone", n, n):
        view.pop("zone")
        view["labels"] = {k: v for k, v in view["labels"].items() if k not in ZONE_LABELS}
    return view


def outcome_view(r) -> dict:
    """A run's outcome without what differs between any two runs (node names, zones no requirement
    pinned): what `harness bisect` compares between commits."""
    return {**summary(r), "nodes": [seen(n) for n in paired(r)]}


def counts_view(r) -> dict:
    """A run's outcome as counts: its summary (pods per state, per Deployment) and how many nodes of each kind
    it kept and deleted (size, capacity type, NodePool, labels, taints), without which node carries which pods
    or sits in which zone. Two runs agree so when upstream breaks the ties between equal nodes at random: which
    of equal candidates a consolidation command takes (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/disruption/
    consolidation.go sortCandidates: sort.Slice, not stable, by savings ratio), where kube-scheduler puts an
    evicted pod among equal nodes (k8s.io/kubernetes v1.36.3 pkg/scheduler/schedule_one.go nodeScoreHeap: equal
    total scores ordered by a random `Randomizer`). The conformance judge falls back to it where the
    node-by-node outcomes are too many to sample (conformance.py `compare`)."""
    rows = []
    for n in r.nodes:
        view = seen(n)
        view.pop("zone", None)
        for k in ("labels", "kubeletNodeLabels"):
            view[k] = {key: v for key, v in view[k].items() if key not in ZONE_LABELS}
        rows.append(json.dumps([n.nodepool, bool(n.deleted), view], sort_keys=True))
    return {**summary(r), "nodes": sorted(rows)}


def paired(r) -> list:
    """Nodes in an order both engines share: by the workload pods they carry (pod names, or the
    owning Deployment's name, since replica names are random), their NodePool, then what the
    comparison sees of them (`seen`), launch order last. Launch order alone pairs arbitrarily: core
    launches a pass's NodeClaims in parallel (sigs.k8s.io/karpenter v1.14.0
    pkg/controllers/provisioning/provisioner.go CreateNodeClaims, workqueue.ParallelizeUntil), so two
    nodes alike but for their size or zone come up in either order on either engine. A deleted Node
    pairs by what it was: the real engine's last sight of it still lists the pods evicted from it, the
    simulation's none."""
    def key(n):
        return (owners(r, n), n.nodepool, json.dumps(seen(n), sort_keys=True), n.index)
    return sorted(r.nodes, key=key)


def owners(r, n) -> list[str]:
    """The workloads node `n` carries: its pods' names, a Deployment's or bare ReplicaSet's pods by its name (their
    own are random); none for a deleted node (see `paired`)."""
    if n.deleted:
        return []
    return sorted((r.pods[k].owner_name if r.pods[k].owner_kind in ("Deployment", "ReplicaSet") else r.pods[k].name)
                  for k in n.pods if k in r.pods and r.pods[k].owner_kind != "DaemonSet")


def digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]
