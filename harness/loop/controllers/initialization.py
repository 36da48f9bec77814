"""NodeClaim initialization (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodeclaim/lifecycle/
initialization.go Reconcile; karpenter-core.md §4.3), then the DaemonSet pods the new Node gets.

Upstream waits for the Node to be Ready, its startup taints to be removed (StartupTaintsRemoved) and
its resources registered, then labels it karpenter.sh/initialized. Startup taints are removed by the
agent that owns them; the harness acts as that agent at once. The DaemonSet controller (kubernetes
v1.36.3 pkg/controller/daemon/daemon_controller.go, NodeShouldRunDaemonPod) then places one pod per
DaemonSet whose pod tolerates the Node's taints and matches its node affinity.
"""
from __future__ import annotations

import copy

from harness.backends.base import KARPENTER
from harness.loop.controllers.state import Claim, LoopState
from harness.loop.kubescheduler import node_matches
from harness.loop.pods import Taint, untolerated
from harness.model.writers import KARPENTER_CORE

INITIALIZED_LABEL = "karpenter.sh/initialized"          # core pkg/apis/v1 NodeInitializedLabelKey


class Initialization:
    def __init__(self, state: LoopState):
        self.state = state

    def initialize(self, c: Claim) -> bool:
        s = self.state
        node = s.cluster.get("Node", c.node_name)
        startup = {(t.get("key"), t.get("effect")) for t in c.obj["spec"].get("startupTaints") or []}
        node["spec"]["taints"] = [t for t in node["spec"].get("taints") or [] if (t["key"], t.get("effect")) not in startup]
        node["metadata"]["labels"][INITIALIZED_LABEL] = "true"
        s.cluster.update(node, KARPENTER)
        nr = s.nodes[c.node_name]
        s.write(nr, KARPENTER_CORE, {INITIALIZED_LABEL: "true"})
        c.initialized = nr.initialized = True
        self.daemonset_pods(node)
        return True

    def daemonset_pods(self, node: dict) -> None:
        """One pod per eligible DaemonSet, named `<daemonset>-<last 5 chars of the Node>`, bound at once."""
        s = self.state
        taints = [Taint.from_dict(t) for t in (node.get("spec") or {}).get("taints") or []]
        for ds, pv in s.daemonsets:
            tmpl = ds["spec"]["template"]
            if untolerated(pv.tolerations, taints):
                continue
            if node_matches(pv, node["metadata"].get("labels") or {}, node["metadata"]["name"]):
                continue
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {**copy.deepcopy(tmpl.get("metadata") or {}),
                                "name": f"{ds['metadata']['name']}-{node['metadata']['name'][-5:]}",
                                "namespace": ds["metadata"].get("namespace") or "default"},
                   "spec": pin_to_node(copy.deepcopy(tmpl.get("spec") or {}), node["metadata"]["name"])}
            s.create_pod(pod, "DaemonSet", ds["metadata"]["name"], node["metadata"]["name"])
            s.nodes[node["metadata"]["name"]].pods.append(s.pod_key(pod))


def pin_to_node(spec: dict, node: str) -> dict:
    """The DaemonSet controller's pod pin: required node affinity on metadata.name, replacing the
    template's required terms, so kube-scheduler can only bind it there (k8s.io/kubernetes v1.36.3
    pkg/controller/daemon/util/daemonset_util.go ReplaceDaemonSetPodNodeNameNodeAffinity)."""
    na = spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
    na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
    return spec
