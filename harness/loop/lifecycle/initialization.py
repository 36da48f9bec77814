"""NodeClaim initialization (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodeclaim/lifecycle/
initialization.go Reconcile; sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodeclaim/lifecycle/initialization.go),
then the DaemonSet pods the new Node gets.

Upstream waits for the Node to be Ready, its startup taints to be removed (StartupTaintsRemoved), the
known ephemeral taints to be gone (KnownEphemeralTaintsRemoved) and its requested resources
registered (RequestedResourcesRegistered), then labels it karpenter.sh/initialized. Startup taints are removed by the
agent that owns them; the harness acts as that agent at once. The DaemonSet controller (kubernetes
v1.36.3 pkg/controller/daemon/daemon_controller.go, NodeShouldRunDaemonPod) then places one pod per
DaemonSet whose pod tolerates the Node's taints and matches its node affinity. A pod that tolerates every
taint the Node registered with is made as it registers and bound before the pods pending for it; any other is
made only once the Node is schedulable to it, when those pods are ahead of it in kube-scheduler's queue
(k8s.io/kubernetes v1.36.3 pkg/scheduler/framework/plugins/queuesort/priority_sort.go Less), so it is left
to the loop's kube-scheduler, behind them.
"""
from __future__ import annotations

import copy

from harness.backends.base import KARPENTER, APIRejected
from harness.loop.lifecycle.registration import NOT_READY_KEY, UNINITIALIZED, UNREGISTERED
from harness.loop.state import Claim, LoopState
from harness.loop.kube.kubescheduler import node_matches
from harness.loop.scheduling.pods import Taint, is_ephemeral, untolerated
from harness.model.kube.daemonsetpods import with_daemon_tolerations
from harness.model.values.resources import parse_resource_list
from harness.model.labels.writers import KARPENTER_CORE

INITIALIZED_LABEL = "karpenter.sh/initialized"          # core pkg/apis/v1 NodeInitializedLabelKey


class Initialization:
    def __init__(self, state: LoopState):
        self.state = state

    def initialize(self, c: Claim) -> bool:
        s = self.state
        node = s.cluster.get("Node", c.node_name)
        conditions = {x["type"]: x.get("status") for x in (node.get("status") or {}).get("conditions") or []}
        if conditions.get("Ready") != "True":
            return False           # NodeNotReady
        startup = [Taint.from_dict(t) for t in c.obj["spec"].get("startupTaints") or []]
        if any(is_ephemeral(t, s.core) and not any(t.key == st.key and t.effect == st.effect for st in startup)
               for t in map(Taint.from_dict, (node.get("spec") or {}).get("taints") or [])):
            return False           # KnownEphemeralTaintsExist: a known ephemeral taint is still on the Node
        if not requested_resources_registered(node, c.obj):
            return False           # a device plugin has not registered an extended resource yet
        startup = {(t.get("key"), t.get("effect")) for t in c.obj["spec"].get("startupTaints") or []}
        node["spec"]["taints"] = [t for t in node["spec"].get("taints") or [] if (t["key"], t.get("effect")) not in startup]
        node["metadata"]["labels"][INITIALIZED_LABEL] = "true"
        s.cluster.update(node, KARPENTER)
        nr = s.nodes[c.node_name]
        s.write(nr, KARPENTER_CORE, {INITIALIZED_LABEL: "true"})
        c.initialized = nr.initialized = True
        c.result.at["initialized"] = s.clock.now()
        self.daemonset_pods(node, registration_taints(node, c.obj))
        return True

    def _pod_template(self, ds: dict) -> dict:
        """The pod the DaemonSet controller makes: its template, with the containers as the
        DaemonSet's existing pods have them when it has any (admission, e.g. a LimitRange, may have
        changed their requests: the pods Karpenter counts, provisioner.py Provisioner.daemon_pod).
        It shares its values with the template and that pod: daemonset_pods copies what it changes."""
        tmpl = ds["spec"]["template"]
        newest = _newest_owned(self.state, ds)
        if newest is None:
            return tmpl
        spec = dict(tmpl.get("spec") or {})
        for key in ("containers", "initContainers", "overhead", "resources"):
            if key in newest.spec:
                spec[key] = newest.spec[key]
        return {**tmpl, "spec": spec}

    def daemonset_pods(self, node: dict, registered_with: list[Taint] | None = None) -> None:
        """One pod per eligible DaemonSet, named `<daemonset>-<last 5 chars of the Node>`: bound at once when
        it tolerates every taint of `registered_with` (the Node's taints as it registered; None: bound at once),
        else pending, pinned to the Node, for kube-scheduler's pass."""
        s = self.state
        taints = [Taint.from_dict(t) for t in (node.get("spec") or {}).get("taints") or []]
        for ds, pv in s.daemonsets:
            tmpl = self._pod_template(ds)
            # the pod as the controller makes it and checks the Node with (NewPod): with its tolerations
            # (a deep copy of the template's spec)
            spec = with_daemon_tolerations(tmpl.get("spec") or {})
            tolerations = spec["tolerations"]
            if untolerated(tolerations, taints):
                continue
            if node_matches(pv, node["metadata"].get("labels") or {}, node["metadata"]["name"]):
                continue
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {**copy.deepcopy(tmpl.get("metadata") or {}),
                                "name": f"{ds['metadata']['name']}-{node['metadata']['name'][-5:]}",
                                "namespace": ds["metadata"].get("namespace") or "default"},
                   "spec": pin_to_node(spec, node["metadata"]["name"])}
            # made as the Node registered (it tolerates all it had), or only once the Node is schedulable
            # to it: then the pods pending for the Node bind first (daemon_controller.go NodeShouldRunDaemonPod)
            early = registered_with is None or not untolerated(tolerations, registered_with)
            try:
                s.create_pod(pod, "DaemonSet", ds["metadata"]["name"], node["metadata"]["name"] if early else None)
            except APIRejected as e:
                s.refused_pod(pod, "DaemonSet", ds["metadata"]["name"], e)
                continue
            if early:
                s.nodes[node["metadata"]["name"]].pods.append(s.pod_key(pod))


def registration_taints(node: dict, nodeclaim: dict) -> list[Taint]:
    """The taints a new Node had as it registered: its taints now, the NodeClaim's startup taints,
    karpenter.sh/unregistered, the cloud provider's uninitialized taint and the not-ready NoSchedule taint a
    NotReady kubelet's Node gets (TaintNodesByCondition; harness/loop/lifecycle/registration.py)."""
    now = [Taint.from_dict(t) for t in (node.get("spec") or {}).get("taints") or []]
    startup = [Taint.from_dict(t) for t in (nodeclaim.get("spec") or {}).get("startupTaints") or []]
    return [*now, *startup, UNREGISTERED, UNINITIALIZED, Taint(NOT_READY_KEY, "", "NoSchedule")]


def _newest_owned(state, ds: dict):
    """The newest pod of the DaemonSet `ds` (LoopState.newest_pod_of), or None."""
    name, ns = ds["metadata"]["name"], ds["metadata"].get("namespace") or "default"
    return state.newest_pod_of("DaemonSet", ns, name)


def requested_resources_registered(node: dict, nodeclaim: dict) -> bool:
    """RequestedResourcesRegistered (core v1.14.0 pkg/controllers/nodeclaim/lifecycle/initialization.go):
    every resource the NodeClaim requests is non-zero in the Node's allocatable (the kubelet zeroes an
    extended resource until its device plugin registers it)."""
    alloc = parse_resource_list((node.get("status") or {}).get("allocatable") or {})
    requests = parse_resource_list(((nodeclaim.get("spec") or {}).get("resources") or {}).get("requests") or {})
    return all(alloc.get(k, 0) > 0 for k, v in requests.items() if v > 0)


def pin_to_node(spec: dict, node: str) -> dict:
    """The DaemonSet controller's pod pin: required node affinity on metadata.name, replacing the
    template's required terms, so kube-scheduler can only bind it there (k8s.io/kubernetes v1.36.3
    pkg/controller/daemon/util/daemonset_util.go ReplaceDaemonSetPodNodeNameNodeAffinity)."""
    na = spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
    na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
    return spec
