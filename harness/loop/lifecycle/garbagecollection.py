"""Garbage collection: NodeClaims whose instance is gone, and cloud resources no NodeClaim owns.

- core nodeclaim garbage collection (sigs.k8s.io/karpenter v1.14.0
  pkg/controllers/nodeclaim/garbagecollection/controller.go Reconcile, every 2 minutes): a NodeClaim
  whose instance the cloud provider no longer lists (a spot eviction, a VM deleted behind Karpenter's
  back) is deleted with its Node. The Node's Deployment pods are replaced (the pod GC deletes them:
  kubernetes v1.36.3 pkg/controller/podgc/gc_controller.go gcOrphaned; the ReplicaSet recreates
  them: pkg/controller/replicaset) and bare pods are lost, as on a real cluster (sigs.k8s.io/karpenter v1.14.0
  pkg/controllers/nodeclaim/lifecycle/liveness.go;
  https://learn.microsoft.com/rest/api/compute/virtual-machines/delete). Harness deviation: upstream only collects
  Registered NodeClaims whose Node is
  not Ready; the harness collects any launched one.
- the provider's instance and NIC garbage collectors (github.com/Azure/karpenter-provider-azure
  v1.14.0 pkg/controllers/nodeclaim/garbagecollection instance_garbagecollection.go,
  nic_garbagecollection.go), run through AzureProvider.collect_garbage for what failed cleanups left.
On the Machine API path the cloud provider lists AKS machines (pkg/cloudprovider/cloudprovider.go List): a NodeClaim
is collected when its machine is gone, and a machine no NodeClaim owns is deleted after the same 5-minute grace.
"""
from __future__ import annotations

from harness.loop.azure.provider import INSTANCE_GC_INTERVAL
from harness.loop.state import LoopState
from harness.loop.lifecycle.nodetermination import evict_pod
from harness.loop.lifecycle.termination import Termination

GC_INTERVAL = 120.0               # core garbagecollection/controller.go Reconcile: RequeueAfter 2m
# How long the loop, otherwise steady, keeps waking for the provider's garbage collectors while a
# failed cleanup's VM or NIC is still there. Upstream's run every 2 minutes for as long as the
# controller runs; the harness stops watching after 15 rounds and reports what is left (harness
# assumption: a fault that outlasts half an hour stands for one that does not end).
GC_PATIENCE = 1800.0


class GarbageCollection:
    def __init__(self, state: LoopState, termination: Termination):
        self.state = state
        self.termination = termination
        self._last_gc = float("-inf")
        self._leftover_since: float | None = None      # when a steady-state round first left something
        self._last_forced: float | None = None

    def reconcile(self, force: bool = False) -> bool:
        """One round; `force` runs it now whatever the interval (the orchestrator's steady-state check)."""
        s = self.state
        # upstream collects only NodeClaims that are not being deleted (Reconcile: DeletionTimestamp
        # zero); a deleting one's instance is termination's (harness/loop/lifecycle/nodetermination.py)
        live = [c for c in s.claims if not c.done and c.launched is not None and c.dis.deleting_since is None]
        # what failed cleanups left (harness/loop/azure/provider.py collect_garbage; a no-op otherwise)
        # (an AKS machine's VM is named by AKS, not for its NodeClaim: its launched name counts as owned too)
        s.provider.collect_garbage({s.provider.resource_name(c.result.name) for c in s.claims if not c.done}
                                   | {c.launched.vm_name for c in s.claims if not c.done and c.launched is not None},
                                   eventually=force)
        if force:
            self._last_forced = s.clock.now()
            if not s.provider.leftovers:
                self._leftover_since = None
            elif self._leftover_since is None:
                self._leftover_since = s.clock.now()
        if not live or (not force and s.clock.now() - self._last_gc < GC_INTERVAL):
            return False
        self._last_gc = s.clock.now()
        # cloudprovider.go List: the machines pool's AKS machines, then the VMs; a NodeClaim the Machine API made
        # is listed while its machine is (its provider ID is the machine's VM, evicted or not)
        machines = s.provider.list_machine_names() if any(c.launched.machine_name for c in live) else set()
        vms = s.provider.list_vm_names()
        if vms is None or machines is None:
            return False
        progress = False
        for c in live:
            name = c.launched.machine_name
            if (name.lower() in machines) if name else (c.launched.vm_name.lower() in vms):
                continue
            node = c.node_name
            gone = f"its AKS machine {name}" if name else f"its VM {c.launched.vm_name}"
            s.trace(f"{gone[4:]} no longer exists (evicted or deleted)")
            if s.decisions.enabled:
                pods = [k for k, pr in s.result.pods.items() if node and pr.node == node and k in s.pod_views]
                s.decide("garbage-collection", "garbage-collected", f"NodeClaim/{c.result.name}",
                         f"{gone} is no longer in Azure ({c.launched.capacity_type}: evicted or "
                         f"deleted outside Karpenter): the NodeClaim is deleted with its Node, no drain; "
                         f"{len(pods)} pod(s) deleted (a Deployment's replaced)",
                         (f"Node/{node}",) if node else (), {"vm": c.launched.vm_name, "pods": pods})
            self.termination.delete_claim(c, "instance terminated")
            if node:
                self._replace_pods(node)
            progress = True
        return progress

    def next_round(self) -> float | None:
        """When the provider's garbage collectors run again for what the last steady-state round left
        (a VM or NIC whose delete failed): upstream's instance collector requeues every 2 minutes
        (provider v1.14.0 pkg/controllers/nodeclaim/garbagecollection/instance_garbagecollection.go
        Reconcile: RequeueAfter 2m). None when nothing is left or GC_PATIENCE has run out."""
        s = self.state
        if self._leftover_since is None or not s.provider.leftovers or self._last_forced is None:
            return None
        at = self._last_forced + INSTANCE_GC_INTERVAL
        return at if at - self._leftover_since <= GC_PATIENCE else None

    def _replace_pods(self, node: str) -> None:
        """The removed Node's pods are deleted; a Deployment's get a replacement from its current
        template (new name, unbound: harness/loop/lifecycle/nodetermination.py evict_pod)."""
        s = self.state
        for key, pr in list(s.result.pods.items()):
            if pr.node == node and key in s.pod_views:
                evict_pod(s, key, f"node {node} was removed")
