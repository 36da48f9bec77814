"""A launched VM becomes a registered Node: the writers of its labels and taints, in their order.

1. The kubelet boots with the VM's custom data and registers the Node under its own identity with
   its self-labels and --node-labels (kubernetes v1.36.3 pkg/kubelet/kubelet_node_status.go
   registerWithAPIServer, initialNode; the NodeRestriction admission plugin and the kubelet's flag
   validation may refuse; k8s.io/kubernetes v1.36.3 cmd/kubelet/app/options/options.go ValidateKubeletFlags,
   plugin/pkg/admission/noderestriction/admission.go). The Node starts with the NodeClaim's taints and startup
   taints plus karpenter.sh/unregistered and the cloud provider's uninitialized taint. On a node the AKS
   Machine API created, AKS writes those labels (writer `aks`: what the provider sent, plus AKS's own) and the
   taints, sent as node initialization taints (harness/model/labels/aksmachine.py).
2. The Azure Disk CSI node plugin publishes its topology label (kubernetes-sigs/azuredisk-csi-driver
   pkg/azuredisk nodeserver.go NodeGetInfo, topologyKey).
3. The cloud node controller (k8s.io/cloud-provider v0.36.3 controllers/node/node_controller.go
   syncNode, run by Azure's cloud-node-manager) sets zone/region/instance-type labels and the
   providerID and lifts the uninitialized taint.
4. Karpenter's registration (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodeclaim/lifecycle/
   registration.go Reconcile, syncNode): the NodeClaim's labels, annotations, taints, the
   termination finalizer and owner reference go onto the Node; the unregistered taint is removed and
   karpenter.sh/registered=true is set. The kubelet then reports Ready and the node lifecycle
   controller lifts node.kubernetes.io/not-ready.
"""
from __future__ import annotations

from harness.backends.base import CLOUD_NODE_MANAGER, KARPENTER, NODE_LIFECYCLE, APIRejected, Identity
from harness.loop.azure.sdk import parse_bootstrap
from harness.loop.state import Claim, LoopState
from harness.loop.lifecycle.termination import TERMINATION_FINALIZER
from harness.loop.scheduling.pods import Taint
from harness.loop.result import NodeResult
from harness.loop.azure.machine import BASE_RESOURCES, machine_facts, node_status
from harness.model.labels.writers import (CLOUD_NODE_CONTROLLER, KARPENTER_CORE, KUBELET,
                                   cloud_node_controller_labels, kubelet_self_labels)

# core pkg/apis/v1 taints.go UnregisteredNoExecuteTaint
UNREGISTERED = Taint("karpenter.sh/unregistered", "", "NoExecute")
# k8s.io/cloud-provider api/well_known_taints.go TaintExternalCloudProvider
UNINITIALIZED = Taint("node.cloudprovider.kubernetes.io/uninitialized", "true", "NoSchedule")
NOT_READY_KEY = "node.kubernetes.io/not-ready"   # k8s.io/api core/v1 well_known_taints.go TaintNodeNotReady
CSI_ZONE = "topology.disk.csi.azure.com/zone"
DO_NOT_SYNC_TAINTS = "karpenter.sh/do-not-sync-taints"     # core pkg/apis/v1 NodeDoNotSyncTaintsLabelKey
REGISTERED_LABEL = "karpenter.sh/registered"               # core pkg/apis/v1 NodeRegisteredLabelKey


class Registration:
    """Steps 1-3 run in `kubelet_register` (one pass: the Node appears with them); step 4 is
    `register`, on a later call."""

    def __init__(self, state: LoopState):
        self.state = state

    def node_result(self, c: Claim) -> NodeResult:
        """The NodeResult of the claim's VM, created on first use (nodes are numbered in launch order)."""
        s = self.state
        nr = s.nodes.get(c.launched.vm_name)
        if nr is None:
            out = c.launched
            nr = NodeResult(out.vm_name, len(s.nodes), c.result.name, c.template.name, out.instance_type.name,
                            out.zone, out.capacity_type, out.vm_name)
            s.nodes[out.vm_name] = nr
            s.result.nodes.append(nr)
            c.result.node = out.vm_name
        return nr

    # -- 1. the kubelet ---------------------------------------------------------------------------
    def kubelet_register(self, c: Claim) -> bool:
        """The kubelet reads --node-labels back from the VM's custom data (as the fake stored it) and
        registers; a refusal (flag validation or the API server) leaves the claim `refused`."""
        s = self.state
        out = c.launched
        nr = self.node_result(c)
        vm = s.fake.get_vm(s.provider.rg, out.vm_name) if hasattr(s.fake, "get_vm") else None
        custom = (((vm or {}).get("properties") or {}).get("osProfile") or {}).get("customData") or out.custom_data
        flags = parse_bootstrap(custom)
        nr.kubelet_node_labels, nr.kubelet_dropped = dict(flags), dict(out.kubelet.dropped)
        if out.machine is not None:
            nr.not_sent_to_aks = dict(out.machine.why_stripped)
        self_labels = kubelet_self_labels(out.vm_name, out.arch)
        labels = {**self_labels, **flags}
        taints = claim_taints(c.obj) + [UNREGISTERED, UNINITIALIZED]
        node = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": out.vm_name, "labels": labels},
                "spec": {"taints": [t.to_dict() for t in dedupe_taints(taints)]},
                "status": self.node_status(out, vm)}
        try:
            refusal = s.cluster.register_kubelet(node, flags, s.profile, out.provider_id)
        except APIRejected as e:
            nr.node_restriction_denied = e.message
            s.write(nr, KUBELET, {k: v for k, v in self_labels.items()}, False, e.message)
            s.write(nr, out.writer, flags, False, e.message)
            c.refused = True
            s.trace(f"API server refused kubelet registration of {out.vm_name}: {e.message}")
            return True
        if refusal:
            c.refused = True
            nr.kubelet_refused = refusal
            s.trace(f"kubelet on {out.vm_name} exited: {refusal}")
            return True
        s.write(nr, KUBELET, {k: v for k, v in self_labels.items() if k not in flags or flags[k] == v})
        s.write(nr, out.writer, flags)
        c.node_name = out.vm_name
        s.trace(f"kubelet registered Node {out.vm_name}")
        self.csi_topology(c, nr)
        self.cloud_node_controller(c, nr)
        return True

    # -- 2. the CSI node plugin ---------------------------------------------------------------------
    @staticmethod
    def node_status(out, vm: dict | None) -> dict:
        """What the kubelet reports for the VM (harness/loop/azure/machine.py: the machine's memory, not
        Karpenter's estimate of it), reserving what the provider's bootstrap reserves."""
        it = out.instance_type
        extended = {k: v for k, v in it.capacity.items() if k not in BASE_RESOURCES and v}
        return node_status(machine_facts(vm or {}, it.sku), it.capacity.get("pods", 110), it.overhead.total(), extended)

    def csi_topology(self, c: Claim, nr: NodeResult) -> None:
        """When the Azure Disk CSI node plugin registers, the kubelet publishes its topology as a
        Node label: the zone of a zonal VM, "" for a regional one (PVs and this label carry "" where
        the node's zone label says "0": kubernetes-sigs/azuredisk-csi-driver pkg/azuredisk
        nodeserver.go NodeGetInfo, provider v1.14.0 pkg/utils/zones/normalization.go
        RegisterCSIZoneNormalization; kubernetes/kubernetes#109154, kubernetes-sigs/karpenter#2458)."""
        s = self.state
        node = s.cluster.get("Node", c.node_name)
        zone = c.launched.zone
        value = "" if zone in ("0", "") else zone
        node["metadata"]["labels"][CSI_ZONE] = value
        try:
            s.cluster.update(node, Identity.node(c.node_name))
            s.write(nr, KUBELET, {CSI_ZONE: value}, True, "CSI node registration")
        except APIRejected as e:
            s.write(nr, KUBELET, {CSI_ZONE: value}, False, e.message)

    # -- 3. the cloud node controller -----------------------------------------------------------------
    def cloud_node_controller(self, c: Claim, nr: NodeResult) -> None:
        """Acting as cloud-node-manager (k8s.io/cloud-provider v0.36.3
        controllers/node/node_controller.go syncNode): zone/region/instance-type labels,
        providerID, and the uninitialized taint lifted."""
        s = self.state
        node = s.cluster.get("Node", c.node_name)
        out = c.launched
        ccm = cloud_node_controller_labels(out.instance_type.name, out.zone, s.cfg.cluster.region.lower())
        node["metadata"]["labels"].update(ccm)
        node["spec"]["providerID"] = out.provider_id
        node["spec"]["taints"] = [t for t in node["spec"].get("taints") or [] if t["key"] != UNINITIALIZED.key]
        try:
            s.cluster.update(node, CLOUD_NODE_MANAGER)
            s.write(nr, CLOUD_NODE_CONTROLLER, ccm)
        except APIRejected as e:
            s.write(nr, CLOUD_NODE_CONTROLLER, ccm, False, e.message)

    # -- 4. Karpenter's registration ----------------------------------------------------------------
    def register(self, c: Claim) -> bool:
        """registration.go Reconcile + syncNode, acting as the Karpenter controller; then the
        kubelet's Ready and the node lifecycle controller's not-ready taint removal."""
        s = self.state
        node = s.cluster.get("Node", c.node_name)
        if node is None:
            return False
        nr = s.nodes[c.node_name]
        labels = dict(node["metadata"].get("labels") or {})
        claim_labels = dict(c.obj["metadata"].get("labels") or {})
        labels.update(claim_labels)
        taints = [Taint.from_dict(t) for t in node["spec"].get("taints") or []]
        if labels.get(DO_NOT_SYNC_TAINTS) != "true":
            # the Node's own taints are unique per (key, effect) (API validation), so this only
            # drops the claim's taints the Node already has (core scheduling Taints.Merge)
            taints = dedupe_taints(taints + claim_taints(c.obj))
        taints = [t for t in taints if t.key != UNREGISTERED.key]
        labels[REGISTERED_LABEL] = "true"
        node["metadata"]["labels"] = labels
        node["metadata"]["annotations"] = {**(node["metadata"].get("annotations") or {}),
                                           **(c.obj["metadata"].get("annotations") or {})}
        node["metadata"]["finalizers"] = sorted(set(node["metadata"].get("finalizers") or []) | {TERMINATION_FINALIZER})
        node["metadata"]["ownerReferences"] = [{"apiVersion": c.obj["apiVersion"], "kind": "NodeClaim",
                                                "name": c.result.name, "uid": c.obj["metadata"].get("uid", "")}]
        node["spec"]["taints"] = [t.to_dict() for t in taints]
        try:
            s.cluster.update(node, KARPENTER)
        except APIRejected as e:
            s.write(nr, KARPENTER_CORE, {**claim_labels, REGISTERED_LABEL: "true"}, False, e.message)
            s.trace(f"Karpenter sync of {c.node_name} refused: {e.message}")
            return False
        s.write(nr, KARPENTER_CORE, {**claim_labels, REGISTERED_LABEL: "true"})
        c.registered = nr.registered = True
        c.result.at["registered"] = s.clock.now()
        nr.nodeclaim_labels = claim_labels
        nr.nodeclaim_requirements = c.obj["spec"]["requirements"]
        nr.nodeclaim_requests = dict(((c.obj["spec"].get("resources") or {}).get("requests")) or {})
        # the kubelet reports Ready (node identity, status only); the node lifecycle controller then
        # lifts the not-ready taint that TaintNodesByCondition admission put on the new Node
        node = s.cluster.get("Node", c.node_name)
        node["status"]["conditions"] = [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]
        s.cluster.update_status(node, Identity.node(c.node_name))
        node = s.cluster.get("Node", c.node_name)
        taints = (node.get("spec") or {}).get("taints") or []
        if any(t["key"] == NOT_READY_KEY for t in taints):
            node["spec"]["taints"] = [t for t in taints if t["key"] != NOT_READY_KEY]
            s.cluster.update(node, NODE_LIFECYCLE)
        s.trace(f"Karpenter registered {c.node_name}")
        return True


def claim_taints(nodeclaim: dict) -> list[Taint]:
    """A NodeClaim's taints followed by its startup taints."""
    spec = nodeclaim["spec"]
    return [Taint.from_dict(t) for t in (spec.get("taints") or []) + (spec.get("startupTaints") or [])]


def dedupe_taints(taints: list[Taint]) -> list[Taint]:
    """The first taint of each (key, effect), in order."""
    seen, out = set(), []
    for t in taints:
        if (t.key, t.effect) not in seen:
            seen.add((t.key, t.effect))
            out.append(t)
    return out
