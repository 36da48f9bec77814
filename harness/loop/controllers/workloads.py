"""Manifests into the cluster, and the workload controllers that turn them into pods.

`apply` creates objects in dependency order (as `kubectl apply -f` of a directory would need them to
exist). A Deployment's pods are made here (the Deployment and ReplicaSet controllers, kubernetes
v1.36.3 pkg/controller/deployment, pkg/controller/replicaset); a DaemonSet is only remembered: its
pods are placed when a Node initializes (initialization.py, as the DaemonSet controller
pkg/controller/daemon does for each eligible Node). StorageClasses, PVs and PVCs also go to the
volume model (harness/loop/volumes.py).
"""
from __future__ import annotations

import copy

from harness.backends.base import ADMIN, APIRejected
from harness.loop.controllers.state import LoopState
from harness.loop.pods import PodView
from harness.loop.result import NodeClassResult, NodePoolResult

# harness assumption: namespaces and classes first, then what refers to them, pods last
APPLY_ORDER = {"Namespace": 0, "AKSNodeClass": 1, "NodePool": 2, "StorageClass": 3, "PersistentVolume": 3,
               "PersistentVolumeClaim": 3, "PodDisruptionBudget": 3, "DaemonSet": 4, "Deployment": 5, "Pod": 6}
VOLUME_KINDS = ("StorageClass", "PersistentVolume", "PersistentVolumeClaim")


class Workloads:
    """Applies manifests; a NodePool's admission verdict lands on its NodePoolResult."""

    def __init__(self, state: LoopState):
        self.state = state

    def apply(self, manifests: list[dict]) -> None:
        for obj in sorted(manifests, key=lambda o: APPLY_ORDER.get(o.get("kind"), 9)):
            self._apply_one(copy.deepcopy(obj))

    def _apply_one(self, obj: dict) -> None:
        s = self.state
        kind = obj.get("kind")
        if kind == "Deployment":
            self._create_deployment_pods(obj)
            return
        if kind == "DaemonSet":
            name = obj["metadata"]["name"]
            view = PodView(obj["spec"]["template"] | {"metadata": {"name": name}}, 0, "DaemonSet", name)
            s.daemonsets.append((obj, view))
            return
        if kind == "Pod":
            s.create_pod(obj, "", "")
            return
        if kind in VOLUME_KINDS:
            s.volumes.add(copy.deepcopy(obj))
            if kind == "StorageClass":            # read by the loop only (the backends do not serve it)
                return
        try:
            stored = s.cluster.create(obj, ADMIN)
            if kind == "NodePool":
                s.result.nodepools[obj["metadata"]["name"]] = NodePoolResult(obj["metadata"]["name"])
            elif kind == "AKSNodeClass":
                # what the API server stored: defaulted, unknown fields pruned (harness/model/aksnodeclass.py)
                s.result.nodeclasses[obj["metadata"]["name"]] = NodeClassResult.of(obj, stored)
        except APIRejected as e:
            if kind == "NodePool":
                s.result.nodepools[obj["metadata"]["name"]] = NodePoolResult(
                    obj["metadata"]["name"], accepted=False, stage="admission", message=e.message,
                    causes=[c.message for c in e.causes])
            elif kind == "AKSNodeClass":
                s.result.nodeclasses[obj["metadata"]["name"]] = NodeClassResult.of(obj, None, e)
            s.trace(f"{kind} {obj['metadata'].get('name')} rejected: {e.message}")

    def _create_deployment_pods(self, dep: dict) -> None:
        """spec.replicas pods from the template, named `<deployment>-<5 random chars>`
        (harness simplification: the ReplicaSet's pod-template-hash segment is left out)."""
        spec = dep.get("spec") or {}
        tmpl = spec.get("template") or {}          # apply() copied the manifest; each pod copies again
        for _ in range(int(spec.get("replicas", 1))):
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {**copy.deepcopy(tmpl.get("metadata") or {}),
                                "name": self.state.name(dep["metadata"]["name"] + "-"),
                                "namespace": dep["metadata"].get("namespace") or "default"},
                   "spec": copy.deepcopy(tmpl.get("spec") or {})}
            self.state.create_pod(pod, "Deployment", dep["metadata"]["name"])
