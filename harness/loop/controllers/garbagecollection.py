"""Garbage collection: NodeClaims whose instance is gone, and cloud resources no NodeClaim owns.

- core nodeclaim garbage collection (sigs.k8s.io/karpenter v1.14.0
  pkg/controllers/nodeclaim/garbagecollection/controller.go Reconcile, every 2 minutes): a NodeClaim
  whose instance the cloud provider no longer lists (a spot eviction, a VM deleted behind Karpenter's
  back) is deleted with its Node. The Node's Deployment pods are replaced (the pod GC deletes them:
  kubernetes v1.36.3 pkg/controller/podgc/gc_controller.go gcOrphaned; the ReplicaSet recreates
  them: pkg/controller/replicaset) and bare pods are lost, as on a real cluster (karpenter-core.md
  §4.4; fake-azure.md §2.5). Harness deviation: upstream only collects Registered NodeClaims whose Node is
  not Ready; the harness collects any launched one.
- the provider's instance and NIC garbage collectors (github.com/Azure/karpenter-provider-azure
  v1.14.0 pkg/controllers/nodeclaim/garbagecollection instance_garbagecollection.go,
  nic_garbagecollection.go), run through AzureProvider.collect_garbage for what failed cleanups left.
"""
from __future__ import annotations

from harness.backends.base import APIRejected
from harness.loop.controllers.state import LoopState
from harness.loop.controllers.termination import Termination

GC_INTERVAL = 120.0               # core garbagecollection/controller.go Reconcile: RequeueAfter 2m


class GarbageCollection:
    def __init__(self, state: LoopState, termination: Termination):
        self.state = state
        self.termination = termination
        self._last_gc = float("-inf")

    def reconcile(self, force: bool = False) -> bool:
        """One round; `force` runs it now whatever the interval (the orchestrator's steady-state check)."""
        s = self.state
        live = [c for c in s.claims if not c.done and c.launched is not None]
        # what failed cleanups left (harness/loop/azure.py collect_garbage; a no-op otherwise)
        s.provider.collect_garbage({s.provider.resource_name(c.result.name) for c in s.claims if not c.done},
                                   eventually=force)
        if not live or (not force and s.clock.now() - self._last_gc < GC_INTERVAL):
            return False
        self._last_gc = s.clock.now()
        vms = s.provider.list_vm_names()
        if vms is None:
            return False
        progress = False
        for c in live:
            if c.launched.vm_name.lower() in vms:
                continue
            node = c.node_name
            s.trace(f"VM {c.launched.vm_name} no longer exists (evicted or deleted)")
            self.termination.delete_claim(c, "instance terminated")
            if node:
                self._replace_pods(node)
            progress = True
        return progress

    def _replace_pods(self, node: str) -> None:
        """The removed Node's pods are deleted; a Deployment's get a replacement (new name, same
        labels and spec, unbound)."""
        s = self.state
        for key, pr in list(s.result.pods.items()):
            if pr.node != node:
                continue
            pv = s.pod_views.pop(key)
            try:
                s.cluster.delete("Pod", pr.name, pr.namespace)
            except APIRejected:
                pass
            pr.state, pr.node, pr.reason = "deleted", None, f"node {node} was removed"
            if pr.owner_kind == "Deployment":
                pod = {"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": s.name(pr.owner_name + "-"), "namespace": pr.namespace,
                                    "labels": dict(pv.obj["metadata"].get("labels") or {})},
                       "spec": {k: v for k, v in pv.spec.items() if k != "nodeName"}}
                try:
                    s.create_pod(pod, "Deployment", pr.owner_name)
                except APIRejected as e:
                    s.refused_pod(pod, "Deployment", pr.owner_name, e)
