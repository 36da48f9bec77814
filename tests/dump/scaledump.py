"""A cluster dump of N like nodes for `harness new`, the shape of issue 65's scaled dump: one NodePool
(WhenEmptyOrUnderutilized, consolidateAfter 0s, the default 10% budget), N Standard_D4s_v5 nodes with
two 500m pods each (Deployment `web`), and on the first node the two pods of `api` behind a
PodDisruptionBudget that allows no eviction.

    python -m tests.dump.scaledump 100 /tmp/scale-100.yaml [BUDGET]
"""
from __future__ import annotations

import sys

import yaml

T0 = "2026-11-20T08:00:00Z"
UP = "2026-11-20T08:05:00Z"
PROVIDER = ("azure:///subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/mc_rg_scale_eastus/"
            "providers/Microsoft.Compute/virtualMachines/")
ZONES = ("eastus-1", "eastus-2", "eastus-3")
ALLOCATABLE = {"cpu": "3860m", "memory": "12880532Ki", "pods": "110"}
CAPACITY = {"cpu": "4", "memory": "16393264Ki", "pods": "110"}


def _uid(n: int) -> str:
    return f"5ca1e000-0000-4000-8000-{n:012d}"


def _nodepool(budget: str | None) -> dict:
    disruption = {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s"}
    if budget is not None:
        disruption["budgets"] = [{"nodes": budget}]
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
            "metadata": {"name": "general", "creationTimestamp": T0, "generation": 1, "resourceVersion": "1001",
                         "uid": _uid(1)},
            "spec": {"disruption": disruption,
                     "template": {"spec": {
                         "expireAfter": "720h",
                         "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "general"},
                         "requirements": [
                             {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                             {"key": "node.kubernetes.io/instance-type", "operator": "In",
                              "values": ["Standard_D4s_v5"]}]}}},
            "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "",
                                       "lastTransitionTime": T0}]}}


def _nodeclass() -> dict:
    return {"apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass",
            "metadata": {"name": "general", "creationTimestamp": T0, "generation": 1, "resourceVersion": "1000",
                         "uid": _uid(2)},
            "spec": {"imageFamily": "Ubuntu2204", "osDiskSizeGB": 128},
            "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "",
                                       "lastTransitionTime": T0}]}}


def _labels(name: str, zone: str, node: bool) -> dict:
    labels = {"karpenter.sh/capacity-type": "on-demand", "karpenter.sh/nodepool": "general",
              "kubernetes.io/arch": "amd64", "node.kubernetes.io/instance-type": "Standard_D4s_v5",
              "topology.kubernetes.io/zone": zone}
    if node:
        labels.update({"karpenter.sh/initialized": "true", "karpenter.sh/registered": "true",
                       "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                       "topology.kubernetes.io/region": "eastus"})
    return labels


def _claim(i: int, zone: str) -> dict:
    name = f"general-{i:05d}"
    cond = [{"type": t, "status": "True", "reason": t, "message": "", "lastTransitionTime": UP}
            for t in ("Launched", "Registered", "Initialized")]
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": name, "creationTimestamp": T0, "finalizers": ["karpenter.sh/termination"],
                         "labels": _labels(name, zone, False), "resourceVersion": str(10000 + i), "uid": _uid(10000 + i),
                         "ownerReferences": [{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "name": "general",
                                              "uid": _uid(1), "blockOwnerDeletion": True}]},
            "spec": {"expireAfter": "720h",
                     "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "general"},
                     "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                       "values": ["Standard_D4s_v5"]}]},
            "status": {"allocatable": ALLOCATABLE, "capacity": CAPACITY, "conditions": cond,
                       "nodeName": f"aks-{name}", "providerID": PROVIDER + f"aks-{name}", "lastPodEventTime": UP}}


def _node(i: int, zone: str) -> dict:
    name = f"aks-general-{i:05d}"
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "creationTimestamp": T0, "finalizers": ["karpenter.sh/termination"],
                         "labels": _labels(name, zone, True), "resourceVersion": str(20000 + i), "uid": _uid(20000 + i)},
            "spec": {"providerID": PROVIDER + name},
            "status": {"allocatable": ALLOCATABLE, "capacity": CAPACITY,
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "message": "kubelet is posting ready status", "lastTransitionTime": UP,
                                       "lastHeartbeatTime": UP}],
                       "nodeInfo": {"architecture": "amd64", "kubeletVersion": "v1.33.3", "operatingSystem": "linux"}}}


def _spec(app: str) -> dict:
    return {"containers": [{"name": app, "image": "nginx:1.27",
                            "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}],
            "restartPolicy": "Always", "schedulerName": "default-scheduler", "terminationGracePeriodSeconds": 30}


def _deployment(app: str, replicas: int, uid: int) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": app, "namespace": "default", "creationTimestamp": T0, "generation": 1,
                         "resourceVersion": str(uid), "uid": _uid(uid)},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app}},
                     "template": {"metadata": {"labels": {"app": app}}, "spec": _spec(app)}},
            "status": {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas}}


def _pod(app: str, k: int, node: str, rs_uid: int, uid: int) -> dict:
    spec = {**_spec(app), "nodeName": node, "priority": 0}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{app}-5d4f8b9c7-{k:05d}", "namespace": "default", "creationTimestamp": UP,
                         "labels": {"app": app, "pod-template-hash": "5d4f8b9c7"},
                         "resourceVersion": str(uid), "uid": _uid(uid),
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{app}-5d4f8b9c7",
                                              "uid": _uid(rs_uid), "controller": True, "blockOwnerDeletion": True}]},
            "spec": spec, "status": {"phase": "Running", "startTime": UP}}


def dump(n: int, pdb: bool = True, budget: str | None = None) -> dict:
    """The dump as a `kind: List`: node 0 carries `api` (behind the PDB when `pdb`), the others `web`;
    `budget` is the NodePool's `nodes` budget (None: the default, 10%)."""
    items = [_nodepool(budget), _nodeclass()]
    for i in range(n):
        items += [_claim(i, ZONES[i % 3]), _node(i, ZONES[i % 3])]
    items += [_deployment("api", 2, 30), _deployment("web", 2 * (n - 1), 40)]
    uid = 100000
    for i in range(n):
        app, k = ("api", 2 * i) if i == 0 else ("web", 2 * (i - 1))
        for j in range(2):
            items.append(_pod(app, k + j, f"aks-general-{i:05d}", 31 if app == "api" else 41, uid))
            uid += 1
    if pdb:
        items.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                      "metadata": {"name": "api", "namespace": "default", "creationTimestamp": T0, "generation": 1,
                                   "resourceVersion": "35", "uid": _uid(35)},
                      "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "api"}}},
                      "status": {"currentHealthy": 2, "desiredHealthy": 2, "disruptionsAllowed": 0, "expectedPods": 2,
                                 "observedGeneration": 1}})
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def main(argv: list[str]) -> int:
    n, out = int(argv[0]), argv[1]
    budget = argv[2] if len(argv) > 2 else None
    with open(out, "w") as f:
        yaml.safe_dump(dump(n, budget=budget), f, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
