"""The provisioning loop: pending pods -> NodeClaims -> VMs -> registered, labeled Nodes -> bound pods.

Each iteration runs the controllers in the order they act on a real cluster
(karpenter-core.md §3-§4, §6; azure-provider.md §4, §8):

  nodepool validation -> kube-scheduler binds -> Karpenter provisions -> launch (Azure SDK ->
  fakeazure) -> kubelet registers (kubelet path) -> cloud node controller -> Karpenter registration
  sync (core path) -> kubelet Ready -> initialization -> DaemonSet pods

until nothing changes (steady state) or a bound is hit. A pod that keeps causing NodeClaims without
ever binding is runaway provisioning (design 0006 FAQ).
"""
from __future__ import annotations

import copy
import random
import string
import time
from dataclasses import dataclass

from harness.backends.base import (ADMIN, CLOUD_NODE_MANAGER, KARPENTER, NODE_LIFECYCLE, APIRejected, Cluster,
                                   Identity)
from harness.loop.azure import AzureProvider, Launched, LaunchFailure, parse_bootstrap
from harness.loop.clock import SimClock
from harness.loop.kubescheduler import can_bind, node_matches
from harness.loop.limits import RemainingResources
from harness.loop.pods import PodView, Taint, admission_error, untolerated
from harness.loop.result import (LabelWrite, NodeClaimResult, NodePoolResult, NodeResult, PodResult,
                                 RunResult)
from harness.loop.scheduling import ExistingNode, Scheduler, Template, offering_compatible
from harness.loop.topology import HOSTNAME, Topology, affinity_terms, topology_keys, universe_for
from harness.loop.unavailable import UnavailableOfferings
from harness.loop.volumes import VolumeModel
from harness.model import instancetypes as itmod
from harness.model.profile import Profile
from harness.model.requirements import IN, Requirement, Requirements
from harness.model.resources import add, format_resource_list, parse_resource_list
from harness.model.semantics import semantics_for
from harness.model.validation import runtime_validation_error
from harness.model.wellknown import CAPACITY_TYPE, INSTANCE_TYPE
from harness.model.writers import (CLOUD_NODE_CONTROLLER, KARPENTER_CORE, KUBELET, KUBELET_NODE_LABELS,
                                   cloud_node_controller_labels, kubelet_self_labels, resolved_requirement_labels)

ITERATION_SECONDS = 10.0
GC_INTERVAL = 120.0               # harness assumption: the period of the instance garbage collection
LAUNCH_TIMEOUT = 300.0            # karpenter-core.md §4.4 LaunchTimeout = 5m
# karpenter-core.md §4.4 registrationTimeout = 15m. Upstream counts from the Registered condition's
# last transition; the harness counts from the launch.
REGISTRATION_TIMEOUT = 900.0
UNREGISTERED = Taint("karpenter.sh/unregistered", "", "NoExecute")
UNINITIALIZED = Taint("node.cloudprovider.kubernetes.io/uninitialized", "true", "NoSchedule")
NOT_READY_KEY = "node.kubernetes.io/not-ready"
CSI_ZONE = "topology.disk.csi.azure.com/zone"
NODECLASS_NOT_FOUND = "NodeClass not found on cluster"
APPLY_ORDER = {"Namespace": 0, "AKSNodeClass": 1, "NodePool": 2, "StorageClass": 3, "PersistentVolume": 3,
               "PersistentVolumeClaim": 3, "DaemonSet": 4, "Deployment": 5, "Pod": 6}
VOLUME_KINDS = ("StorageClass", "PersistentVolume", "PersistentVolumeClaim")


@dataclass
class SimConfig:
    scenario: str
    profile: Profile
    backend: str
    seed: int
    cluster: "itmod.ClusterParams"
    max_iterations: int = 60
    runaway_threshold: int = 3
    min_values_policy: str = "Strict"


@dataclass
class _Claim:
    """Loop-side bookkeeping for a NodeClaim."""

    obj: dict
    result: NodeClaimResult
    template: Template
    requirements: Requirements
    created_at: float
    nodeclass: object
    nodeclass_name: str
    launched: Launched | None = None
    node_name: str | None = None
    launched_at: float | None = None
    registered: bool = False
    initialized: bool = False
    refused: bool = False
    done: bool = False


class Simulation:
    def __init__(self, cfg: SimConfig, cluster: Cluster, fake, compute, network, clock: SimClock | None = None):
        self.cfg = cfg
        self.profile = cfg.profile
        self.sem = semantics_for(cfg.profile)
        self.cluster = cluster
        self.fake = fake
        self.clock = clock or SimClock()
        self.rng = random.Random(cfg.seed)
        self.unavailable = UnavailableOfferings(self.clock)
        self.provider = AzureProvider(fake=fake, compute=compute, network=network, profile=cfg.profile,
                                      cluster=cfg.cluster, unavailable=self.unavailable,
                                      rng=random.Random(cfg.seed + 1),
                                      subscription_id=getattr(fake, "subscription_id", "00000000-0000-0000-0000-000000000000"))
        self.provider.on_event = self._record_event
        self.result = RunResult(cfg.scenario, cfg.profile.name, cfg.backend, cfg.seed)
        self.claims: list[_Claim] = []
        self.nodes: dict[str, NodeResult] = {}
        self.pod_views: dict[str, PodView] = {}
        self.daemonsets: list[tuple[dict, PodView]] = []     # (DaemonSet, its pod template as a PodView)
        self.volumes = VolumeModel()               # PVs, PVCs, StorageClasses (harness/loop/volumes.py)
        self.nominated: dict[str, str] = {}        # pod key -> nodeclaim name
        self.launches_for: dict[str, int] = {}     # pod key -> NodeClaims created for it
        self._order = 0
        self._hostnames = 0
        self._last_gc = float("-inf")

    def set_cluster(self, cluster: "itmod.ClusterParams") -> None:
        """New operator settings (between steps): the provider's resource group and instance
        types follow them."""
        self.cfg.cluster = cluster
        self.provider.set_cluster(cluster)

    # ------------------------------------------------------------------------------------------
    def _name(self, prefix: str, n: int = 5) -> str:
        alphabet = string.ascii_lowercase + string.digits
        return prefix + "".join(self.rng.choice(alphabet) for _ in range(n))

    def _trace(self, msg: str) -> None:
        self.result.trace.append(f"[t={self.clock.now():.0f}s] {msg}")

    @staticmethod
    def _pod_key(obj: dict) -> str:
        return f"{obj['metadata'].get('namespace') or 'default'}/{obj['metadata']['name']}"

    # -- manifests ------------------------------------------------------------------------------
    def apply(self, manifests: list[dict]) -> None:
        for obj in sorted(manifests, key=lambda o: APPLY_ORDER.get(o.get("kind"), 9)):
            self._apply_one(copy.deepcopy(obj))

    def _apply_one(self, obj: dict) -> None:
        kind = obj.get("kind")
        if kind == "Deployment":
            self._create_deployment_pods(obj)
            return
        if kind == "DaemonSet":
            name = obj["metadata"]["name"]
            view = PodView(obj["spec"]["template"] | {"metadata": {"name": name}}, 0, "DaemonSet", name)
            self.daemonsets.append((obj, view))
            return
        if kind == "Pod":
            self._create_pod(obj, "", "")
            return
        if kind in VOLUME_KINDS:
            self.volumes.add(copy.deepcopy(obj))
            if kind == "StorageClass":            # read by the loop only (the backends do not serve it)
                return
        try:
            self.cluster.create(obj, ADMIN)
            if kind == "NodePool":
                self.result.nodepools[obj["metadata"]["name"]] = NodePoolResult(obj["metadata"]["name"])
        except APIRejected as e:
            if kind == "NodePool":
                self.result.nodepools[obj["metadata"]["name"]] = NodePoolResult(
                    obj["metadata"]["name"], accepted=False, stage="admission", message=e.message,
                    causes=[c.message for c in e.causes])
            self._trace(f"{kind} {obj['metadata'].get('name')} rejected: {e.message}")

    def _create_deployment_pods(self, dep: dict) -> None:
        spec = dep.get("spec") or {}
        tmpl = spec.get("template") or {}          # apply() copied the manifest; each pod copies again
        for _ in range(int(spec.get("replicas", 1))):
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {**copy.deepcopy(tmpl.get("metadata") or {}),
                                "name": self._name(dep["metadata"]["name"] + "-"),
                                "namespace": dep["metadata"].get("namespace") or "default"},
                   "spec": copy.deepcopy(tmpl.get("spec") or {})}
            self._create_pod(pod, "Deployment", dep["metadata"]["name"])

    def _create_pod(self, pod: dict, owner_kind: str, owner_name: str, node: str | None = None) -> None:
        pod.setdefault("metadata", {}).setdefault("namespace", "default")
        pod.setdefault("spec", {}).setdefault("containers", [])
        created = self.cluster.create(pod, ADMIN)
        key = self._pod_key(created)
        self._order += 1
        self.pod_views[key] = PodView(created, self._order, owner_kind, owner_name)
        self.result.pods[key] = PodResult(created["metadata"]["name"], created["metadata"]["namespace"],
                                          owner_kind, owner_name)
        if node:
            self.cluster.bind(created, node, ADMIN)
            self.result.pods[key].node, self.result.pods[key].state = node, "scheduled"

    # -- controllers ----------------------------------------------------------------------------
    def _validate_nodepools(self) -> None:
        """nodepool.validation (karpenter-core.md §5.3) and readiness (§3.2 step 2)."""
        for np in self.cluster.list("NodePool"):
            name = np["metadata"]["name"]
            res = self.result.nodepools.setdefault(name, NodePoolResult(name))
            err = runtime_validation_error(np, self.profile)
            ref = ((np.get("spec") or {}).get("template") or {}).get("spec", {}).get("nodeClassRef") or {}
            nodeclass = self.cluster.get("AKSNodeClass", ref.get("name", "")) if ref.get("name") else None
            if err:
                res.stage, res.message, res.ready = "runtime", err, False
            else:
                res.ready = nodeclass is not None
                if nodeclass is None:
                    # core nodepool.readiness (sigs.k8s.io/karpenter v1.14.0
                    # pkg/controllers/nodepool/readiness/controller.go): NodeClassReady=False with reason
                    # NodeClassNotFound; the harness records the condition change as an event on the NodePool
                    self._nodepool_event(res, "NodeClassNotFound", NODECLASS_NOT_FOUND, dedupe=False)
                    self._trace(f'NodePool {name}: AKSNodeClass "{ref.get("name")}" not found (NodeClassNotFound)')
            conditions = [
                self._condition("ValidationSucceeded", not err, "NodePoolValidationFailed" if err else
                                "ValidationSucceeded", err or ""),
                self._condition("NodeClassReady", nodeclass is not None,
                                "NodeClassReady" if nodeclass else "NodeClassNotFound",
                                "" if nodeclass else NODECLASS_NOT_FOUND),
                self._condition("Ready", res.ready, "Ready" if res.ready else "NotReady"),
            ]
            np["status"] = {"conditions": conditions}
            try:
                self.cluster.update_status(np, KARPENTER)
            except APIRejected:
                pass

    # events: on their object (the shape expectations read there) and, in emission order, on the run
    def _record_event(self, kind: str, name: str, reason: str, message: str, namespace: str | None = None) -> None:
        ev = {"kind": kind, "name": name, "reason": reason, "message": message}
        if namespace is not None:
            ev["namespace"] = namespace
        self.result.events.append(ev)

    def _nodepool_event(self, res: NodePoolResult, reason: str, message: str, dedupe: bool = True) -> None:
        if dedupe and {"reason": reason, "message": message} in res.events:
            return
        res.events.append({"reason": reason, "message": message})
        self._record_event("NodePool", res.name, reason, message)

    def _pod_event(self, pr: PodResult, message: str) -> None:
        """Karpenter's FailedScheduling event on a pod (karpenter-core.md §3.2 step 1)."""
        if message in pr.events:
            return
        pr.events.append(message)
        self._record_event("Pod", pr.name, "FailedScheduling", message, pr.namespace)

    def _condition(self, type_: str, ok: bool, reason: str, message: str = "") -> dict:
        """A status condition with every field the CRDs require (operatorpkg status.Condition)."""
        return {"type": type_, "status": "True" if ok else "False", "reason": reason, "message": message,
                "lastTransitionTime": self.clock.timestamp()}

    def _ready_nodepools(self) -> list[dict]:
        """karpenter-core.md §3.2 step 2: Ready NodePools; static ones (spec.replicas) are skipped."""
        out = []
        for np in self.cluster.list("NodePool"):
            res = self.result.nodepools.get(np["metadata"]["name"])
            if res and res.ready and not (np.get("spec") or {}).get("replicas"):
                out.append(np)
        return out

    def _nodeclass_params(self, name: str) -> "itmod.NodeClassParams | None":
        obj = self.cluster.get("AKSNodeClass", name) if name else None
        return itmod.NodeClassParams.from_manifest(obj) if obj else None

    def templates(self, record: bool = True) -> list[Template]:
        """The NodeClaimTemplates of a provisioning pass: Ready dynamic NodePools with their
        AKSNodeClass's instance types. `record=False` (the why view) leaves the run's result alone."""
        templates = []
        daemon_pods = [view for _, view in self.daemonsets]
        for np in self._ready_nodepools():
            ref = np["spec"]["template"]["spec"].get("nodeClassRef") or {}
            params = self._nodeclass_params(ref.get("name", ""))
            if params is None:
                continue
            its = self.provider.instance_types(params)
            if record:
                self._record_instance_types(its)
            t = Template.from_nodepool(np, list(its.instance_types), self.profile, self.sem)
            t.daemon_pods = daemon_pods
            templates.append(t)
        return templates

    def _record_instance_types(self, its) -> None:
        """The latest build wins, so expectations see availability after faults and TTLs."""
        for it in its.instance_types:
            self.result.instance_types[it.name] = it
            self.result.dropped_skus.pop(it.name, None)
        for name, why in its.dropped.items():
            if name not in self.result.instance_types:
                self.result.dropped_skus[name] = why

    # kube-scheduler ---------------------------------------------------------------------------
    def _node_requested(self) -> dict[str, dict[str, int]]:
        used: dict[str, dict[str, int]] = {}
        for key, pv in self.pod_views.items():
            node = self.result.pods[key].node
            if node:
                used[node] = add(used.get(node, {}), pv.requests)
        return used

    def _kube_schedule(self) -> bool:
        progress = False
        nodes = sorted(self.cluster.list("Node"), key=lambda n: n["metadata"]["name"])
        used = self._node_requested()
        placed = [(pv, self.result.pods[k].node) for k, pv in self.pod_views.items() if self.result.pods[k].node]
        for key, pv in sorted(self.pod_views.items(), key=lambda kv: kv[1].order):
            pr = self.result.pods[key]
            if pr.node or pr.state == "ignored" and not nodes:
                continue
            nominated = self.nominated.get(key)
            claim = self._claim_by_name(nominated) if nominated else None
            preferred = [n for n in nodes if claim is not None and claim.node_name == n["metadata"]["name"]]
            reasons = []
            for node in preferred + [n for n in nodes if n not in preferred]:
                why = can_bind(pv, node, used.get(node["metadata"]["name"], {}), nodes, placed)
                if why is None and self.volumes:
                    why = self.volumes.bind_error(pv.obj, node["metadata"].get("labels") or {})
                if why is None:
                    name = node["metadata"]["name"]
                    self.cluster.bind(pv.obj, name, ADMIN)
                    placed.append((pv, name))
                    pr.node, pr.state, pr.scheduler_error = name, "scheduled", None
                    used[name] = add(used.get(name, {}), pv.requests)
                    self._trace(f"kube-scheduler bound {key} to {name}")
                    for made in self.volumes.provision_for(pv.obj, node["metadata"].get("labels") or {}):
                        self._trace(f"CSI provisioner created PersistentVolume {made} for {key} on {name}")
                    progress = True
                    break
                reasons.append(why)
            else:
                pr.scheduler_error = _scheduler_message(len(nodes), reasons)
        return progress

    # Karpenter provisioning ---------------------------------------------------------------------
    def _claim_by_name(self, name: str) -> _Claim | None:
        return next((c for c in self.claims if c.result.name == name), None)

    def _existing_nodes(self) -> list[ExistingNode]:
        """Cluster state (karpenter-core.md §4.5): registered Nodes by their labels, in-flight
        NodeClaims by the NodeClaim's labels; requested = bound + nominated pods."""
        used = self._node_requested()
        out = []
        for c in self.claims:
            if c.done or c.refused:
                continue
            nominated = [k for k, n in self.nominated.items() if n == c.result.name and not self.result.pods[k].node]
            extra: dict[str, int] = {}
            for k in nominated:
                extra = add(extra, self.pod_views[k].requests)
            if c.registered and c.node_name:
                node = self.cluster.get("Node", c.node_name)
                if node is None:
                    continue
                req = add(used.get(c.node_name, {}), extra)
                out.append(ExistingNode(c.node_name, dict(node["metadata"].get("labels") or {}),
                                        [Taint.from_dict(t) for t in (node.get("spec") or {}).get("taints") or []
                                         if t["key"] not in (UNREGISTERED.key, UNINITIALIZED.key)],
                                        parse_resource_list((node.get("status") or {}).get("allocatable") or {}),
                                        req, c.result.name))
            elif c.launched is not None:
                it = c.launched.instance_type
                out.append(ExistingNode(c.launched.vm_name, dict(c.obj["metadata"].get("labels") or {}),
                                        [Taint.from_dict(t) for t in c.obj["spec"].get("taints") or []],
                                        it.allocatable(), extra, c.result.name))
        return out

    def _provision(self) -> bool:
        pending = []
        for key, pv in sorted(self.pod_views.items(), key=lambda kv: kv[1].order):
            pr = self.result.pods[key]
            if pr.node or pv.owner_kind == "DaemonSet":
                continue
            err = admission_error(pv, self.profile, self.sem)
            verr = self.volumes.validate(pv.obj) if self.volumes or pv.spec.get("volumes") else None
            if verr is not None:      # Provisioner.Validate combines every error (multierr, "; ")
                err = (f"{err[0]}; {verr}", err[1]) if err is not None else (verr, True)
            if err is not None:
                msg, emits = err
                pr.state, pr.reason, pr.karpenter_error = "ignored", msg, msg
                if emits:
                    self._pod_event(pr, f"Failed to schedule pod, {msg}")
                continue
            claim = self._claim_by_name(self.nominated.get(key, ""))
            if claim is not None and not (claim.done or claim.refused or claim.initialized):
                continue    # waiting for its in-flight NodeClaim (cluster state nomination)
            pending.append(pv)
        if not pending:
            return False
        templates = self.templates()
        if not templates and not self._ready_nodepools():
            # karpenter-core.md §3.2 step 2: no Ready dynamic NodePool
            for pv in pending:
                self._pod_error(pv, "no dynamic nodepools found")
            return False

        def counter() -> int:
            self._hostnames += 1
            return self._hostnames
        for pv in pending:
            pv.volume_requirements = self.volumes.requirements(pv.obj, self.sem) if self.volumes else None
        existing = self._existing_nodes()
        sched = Scheduler(templates, existing, self.profile, self.sem, self.cfg.min_values_policy, counter,
                          self._topology(pending, templates, existing), self._remaining_resources())
        solved = sched.solve(pending)
        for np_name, reason, message in solved.nodepool_events:
            res = self.result.nodepools.get(np_name)
            if res is not None:
                self._nodepool_event(res, reason, message)
        progress = False
        for uid, node in solved.existing.items():
            claim = next((c for c in self.claims if c.node_name == node or
                          (c.launched and c.launched.vm_name == node)), None)
            if claim is not None:
                self.nominated[uid] = claim.result.name
        for pv in pending:
            if pv.uid in solved.errors:
                self._pod_error(pv, solved.errors[pv.uid])
        for planned in solved.new_claims:
            if self._create_nodeclaim(planned):
                progress = True
        return progress

    def _remaining_resources(self) -> RemainingResources:
        """NodePool limits minus launched NodeClaims' capacity (harness/loop/limits.py: core
        NewScheduler + updateRemainingResources; an unlaunched NodeClaim is not in cluster state)."""
        launched = [(c.template.name, c.launched.instance_type.capacity) for c in self.claims
                    if not c.done and c.launched is not None]
        return RemainingResources.build(self.cluster.list("NodePool"), launched)

    def _topology(self, pending: list[PodView], templates: list[Template], existing: list[ExistingNode]):
        """Topology for this pass: the domain universe of the keys pending pods spread over, the
        existing nodes' labels and the running pods to count (karpenter-core.md §3.3)."""
        running = [(pv, self.result.pods[k].node) for k, pv in self.pod_views.items() if self.result.pods[k].node]
        keys = set().union(*(topology_keys(pv) for pv in pending)) if pending else set()
        anti = [(pv, n) for pv, n in running if affinity_terms(pv, "podAntiAffinity")]
        if not keys and not anti:
            return None
        node_labels = {n.name: n.labels for n in existing}
        for node in self.cluster.list("Node"):
            node_labels.setdefault(node["metadata"]["name"], node["metadata"].get("labels") or {})
        for pv, _ in anti:
            keys |= topology_keys(pv)
        bound = [(pv.namespace, pv.labels, n) for pv, n in running]
        return Topology(universe_for(keys, templates), node_labels, bound, anti)

    def _pod_error(self, pv: PodView, err: str) -> None:
        pr = self.result.pods[self._pod_key(pv.obj)]
        pr.karpenter_error = pr.reason = err
        self._pod_event(pr, f"Failed to schedule pod, {err}")

    def _create_nodeclaim(self, planned) -> bool:
        """ToNodeClaim (karpenter-core.md §3.1) and the API write (CRD rules judge it)."""
        t = planned.template
        reqs = planned.requirements.without(HOSTNAME, *self.profile.scheduling_simulation_keys)
        wk = self.profile.well_known_labels
        # Scheduler._truncate already kept the 600 cheapest (karpenter-core.md §3.3 Truncation)
        its = planned.instance_types
        reqs.add(Requirement(INSTANCE_TYPE, False, frozenset(it.name for it in its),
                             min_values=reqs.get(INSTANCE_TYPE).min_values if INSTANCE_TYPE in reqs else None))
        cts = sorted({o.capacity_type for it in its for o in it.offerings
                      if offering_compatible(o, reqs, wk)})
        if cts:
            reqs.add(Requirement.new(CAPACITY_TYPE, IN, cts, self.sem))
        labels = dict(t.labels)
        if self.profile.label_resolution == "toNodeClaim":
            labels.update(resolved_requirement_labels(self.profile, reqs, self.rng))
        name = self._name(t.name + "-")
        spec_t = t.nodepool["spec"]["template"]["spec"]
        obj = {
            "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": name, "labels": labels,
                         "annotations": {"karpenter.sh/nodepool-hash-version": "v3"},
                         "ownerReferences": [{"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
                                              "name": t.name, "uid": t.nodepool["metadata"].get("uid", ""),
                                              "blockOwnerDeletion": True}]},
            "spec": {"requirements": reqs.node_selector_requirements(),
                     "resources": {"requests": format_resource_list(planned.requests)},   # the pods' sum
                     "nodeClassRef": spec_t.get("nodeClassRef"),
                     **({"taints": spec_t["taints"]} if spec_t.get("taints") else {}),
                     **({"startupTaints": spec_t["startupTaints"]} if spec_t.get("startupTaints") else {})},
        }
        pods = [self._pod_key(p.obj) for p in planned.pods]
        result = NodeClaimResult(name, t.name, pods, obj["spec"]["requirements"], dict(labels))
        self.result.nodeclaims.append(result)
        for k in pods:
            self.result.pods[k].nodeclaims.append(name)
            self.launches_for[k] = self.launches_for.get(k, 0) + 1
        try:
            created = self.cluster.create(obj, KARPENTER)
        except APIRejected as e:
            result.rejected = e.message
            for k in pods:
                self._pod_error(self.pod_views[k], f"creating nodeclaim, {e.message}")
            self._trace(f"NodeClaim {name} rejected: {e.message}")
            return False
        nc_name = (spec_t.get("nodeClassRef") or {}).get("name", "")
        claim = _Claim(created, result, t, reqs, self.clock.now(), self._nodeclass_params(nc_name), nc_name)
        self.claims.append(claim)
        for k in pods:
            self.nominated[k] = name
        self._trace(f"created NodeClaim {name} for {len(pods)} pod(s) from NodePool {t.name}")
        return True

    # launch -------------------------------------------------------------------------------------
    def _launch(self) -> bool:
        progress = False
        for c in self.claims:
            if c.done or c.launched is not None:
                continue
            if self.clock.now() - c.created_at > LAUNCH_TIMEOUT:
                self._delete_claim(c, "launch_timeout")
                progress = True
                continue
            out = self.provider.create(c.obj, c.requirements, c.nodeclass, c.nodeclass_name)
            if isinstance(out, LaunchFailure):
                c.result.failure = {"kind": out.kind, "reason": out.reason, "message": out.message,
                                    "code": out.code, "attempted": out.attempted}
                c.result.failures.append(c.result.failure)
                self._trace(f"launch of {c.result.name} failed: {out.reason}: {out.message}")
                if out.kind == "InsufficientCapacity":
                    self._delete_claim(c, f"insufficient capacity, {out.message}")
                progress = True
                continue
            self._populate(c, out)
            progress = True
        return progress

    def _populate(self, c: _Claim, out: Launched) -> None:
        """PopulateNodeClaimDetails (karpenter-core.md §4.1; pre-v1.9 §8.1)."""
        c.launched, c.launched_at = out, self.clock.now()
        own = dict(c.obj["metadata"].get("labels") or {})
        labels = dict(out.nodeclaim_labels)
        if self.profile.label_resolution == "requirementsLabels":
            labels.update(resolved_requirement_labels(self.profile, c.requirements, self.rng))
        labels.update(own)
        c.obj["metadata"]["labels"] = labels
        it = out.instance_type
        c.obj["status"] = {"providerID": out.provider_id,
                           "capacity": format_resource_list(it.capacity),
                           "allocatable": format_resource_list(it.allocatable()),
                           "conditions": [self._condition("Launched", True, "Launched")]}
        try:
            updated = self.cluster.update(c.obj, KARPENTER)
            c.obj = self.cluster.update_status({**updated, "status": c.obj["status"]}, KARPENTER)
        except APIRejected as e:
            self._trace(f"NodeClaim {c.result.name} update refused: {e.message}")
        c.result.launched, c.result.labels, c.result.failure = True, dict(labels), None
        self._trace(f"launched {c.result.name}: {it.name} zone={out.zone!r} {out.capacity_type}")

    def _delete_claim(self, c: _Claim, why: str) -> None:
        c.done, c.result.deleted = True, why
        if c.launched is not None:
            self.provider.delete(c.launched.vm_name)
        try:
            self.cluster.delete("NodeClaim", c.result.name, identity=KARPENTER)
        except APIRejected:
            pass
        if c.node_name:
            self._terminate_node(c.node_name)
        for k, n in list(self.nominated.items()):
            if n == c.result.name:
                del self.nominated[k]
        self._trace(f"deleted NodeClaim {c.result.name}: {why}")

    def _terminate_node(self, name: str) -> None:
        """Karpenter's termination: the Node carries the karpenter.sh/termination finalizer, so the
        delete only marks it; the finalizer is removed once the instance is gone (karpenter-core.md §4.2)."""
        try:
            self.cluster.delete("Node", name, identity=KARPENTER)
            node = self.cluster.get("Node", name)
            if node is not None and node["metadata"].get("finalizers"):
                node["metadata"]["finalizers"] = [f for f in node["metadata"]["finalizers"]
                                                  if f != "karpenter.sh/termination"]
                self.cluster.update(node, KARPENTER)
        except APIRejected as e:
            self._trace(f"terminating Node {name}: {e.message}")

    # registration (kubelet path, cloud node controller, core path) --------------------------------
    def _write(self, node: NodeResult, writer: str, labels: dict[str, str], accepted: bool = True, note: str = "") -> None:
        for k, v in labels.items():
            node.provenance.setdefault(k, []).append(LabelWrite(writer, str(v), accepted, note))

    def _register(self) -> bool:
        progress = False
        for c in self.claims:
            if c.done or c.launched is None or c.refused:
                continue
            if not c.node_name:
                progress |= self._kubelet_register(c)
                continue
            if not c.registered:
                progress |= self._karpenter_register(c)
            elif not c.initialized:
                progress |= self._initialize(c)
        return progress

    def _node_result(self, c: _Claim) -> NodeResult:
        nr = self.nodes.get(c.launched.vm_name)
        if nr is None:
            out = c.launched
            nr = NodeResult(out.vm_name, len(self.nodes), c.result.name, c.template.name, out.instance_type.name,
                            out.zone, out.capacity_type, out.vm_name)
            self.nodes[out.vm_name] = nr
            self.result.nodes.append(nr)
            c.result.node = out.vm_name
        return nr

    def _kubelet_register(self, c: _Claim) -> bool:
        """The kubelet boots with the VM's custom data and registers itself (karpenter-core.md §6.2-§6.4)."""
        out = c.launched
        nr = self._node_result(c)
        vm = self.fake.get_vm(self.provider.rg, out.vm_name) if hasattr(self.fake, "get_vm") else None
        custom = (((vm or {}).get("properties") or {}).get("osProfile") or {}).get("customData") or out.custom_data
        flags = parse_bootstrap(custom)
        nr.kubelet_node_labels, nr.kubelet_dropped = dict(flags), dict(out.kubelet.dropped)
        self_labels = kubelet_self_labels(out.vm_name, out.arch)
        labels = {**self_labels, **flags}
        taints = _claim_taints(c.obj) + [UNREGISTERED, UNINITIALIZED]
        node = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": out.vm_name, "labels": labels},
                "spec": {"taints": [t.to_dict() for t in _dedupe_taints(taints)]},
                "status": {"capacity": format_resource_list(out.instance_type.capacity),
                           "allocatable": format_resource_list(out.instance_type.allocatable())}}
        try:
            refusal = self.cluster.register_kubelet(node, flags, self.profile, out.provider_id)
        except APIRejected as e:
            nr.node_restriction_denied = e.message
            self._write(nr, KUBELET, {k: v for k, v in self_labels.items()}, False, e.message)
            self._write(nr, KUBELET_NODE_LABELS, flags, False, e.message)
            c.refused = True
            self._trace(f"API server refused kubelet registration of {out.vm_name}: {e.message}")
            return True
        if refusal:
            c.refused = True
            nr.kubelet_refused = refusal
            self._trace(f"kubelet on {out.vm_name} exited: {refusal}")
            return True
        self._write(nr, KUBELET, {k: v for k, v in self_labels.items() if k not in flags or flags[k] == v})
        self._write(nr, KUBELET_NODE_LABELS, flags)
        c.node_name = out.vm_name
        self._trace(f"kubelet registered Node {out.vm_name}")
        self._csi_topology(c, nr)
        self._cloud_node_controller(c, nr)
        return True

    def _csi_topology(self, c: _Claim, nr: NodeResult) -> None:
        """When the Azure Disk CSI node plugin registers, the kubelet publishes its topology as a
        Node label: the zone of a zonal VM, "" for a regional one (reported-bugs.md §4 R07/R30: PVs
        and this label carry "" where the node's zone label says "0")."""
        node = self.cluster.get("Node", c.node_name)
        zone = c.launched.zone
        value = "" if zone in ("0", "") else zone
        node["metadata"]["labels"][CSI_ZONE] = value
        try:
            self.cluster.update(node, Identity.node(c.node_name))
            self._write(nr, KUBELET, {CSI_ZONE: value}, True, "CSI node registration")
        except APIRejected as e:
            self._write(nr, KUBELET, {CSI_ZONE: value}, False, e.message)

    def _cloud_node_controller(self, c: _Claim, nr: NodeResult) -> None:
        """karpenter-core.md §6.5, acting as the cloud-node-manager controller."""
        node = self.cluster.get("Node", c.node_name)
        out = c.launched
        ccm = cloud_node_controller_labels(out.instance_type.name, out.zone, self.cfg.cluster.region.lower())
        node["metadata"]["labels"].update(ccm)
        node["spec"]["providerID"] = out.provider_id
        node["spec"]["taints"] = [t for t in node["spec"].get("taints") or [] if t["key"] != UNINITIALIZED.key]
        try:
            self.cluster.update(node, CLOUD_NODE_MANAGER)
            self._write(nr, CLOUD_NODE_CONTROLLER, ccm)
        except APIRejected as e:
            self._write(nr, CLOUD_NODE_CONTROLLER, ccm, False, e.message)

    def _karpenter_register(self, c: _Claim) -> bool:
        """syncNode + registration (karpenter-core.md §4.2), acting as the Karpenter controller."""
        node = self.cluster.get("Node", c.node_name)
        if node is None:
            return False
        nr = self.nodes[c.node_name]
        labels = dict(node["metadata"].get("labels") or {})
        claim_labels = dict(c.obj["metadata"].get("labels") or {})
        labels.update(claim_labels)
        taints = [Taint.from_dict(t) for t in node["spec"].get("taints") or []]
        if labels.get("karpenter.sh/do-not-sync-taints") != "true":
            # the Node's own taints are unique per (key, effect) (API validation), so this only
            # drops the claim's taints the Node already has
            taints = _dedupe_taints(taints + _claim_taints(c.obj))
        taints = [t for t in taints if t.key != UNREGISTERED.key]
        labels["karpenter.sh/registered"] = "true"
        node["metadata"]["labels"] = labels
        node["metadata"]["annotations"] = {**(node["metadata"].get("annotations") or {}),
                                           **(c.obj["metadata"].get("annotations") or {})}
        node["metadata"]["finalizers"] = sorted(set(node["metadata"].get("finalizers") or []) | {"karpenter.sh/termination"})
        node["metadata"]["ownerReferences"] = [{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
                                                "name": c.result.name, "uid": c.obj["metadata"].get("uid", "")}]
        node["spec"]["taints"] = [t.to_dict() for t in taints]
        try:
            self.cluster.update(node, KARPENTER)
        except APIRejected as e:
            self._write(nr, KARPENTER_CORE, {**claim_labels, "karpenter.sh/registered": "true"}, False, e.message)
            self._trace(f"Karpenter sync of {c.node_name} refused: {e.message}")
            return False
        self._write(nr, KARPENTER_CORE, {**claim_labels, "karpenter.sh/registered": "true"})
        c.registered = nr.registered = True
        nr.nodeclaim_labels = claim_labels
        nr.nodeclaim_requirements = c.obj["spec"]["requirements"]
        # the kubelet reports Ready (node identity, status only); the node lifecycle controller then
        # lifts the not-ready taint that TaintNodesByCondition admission put on the new Node
        node = self.cluster.get("Node", c.node_name)
        node["status"]["conditions"] = [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]
        self.cluster.update_status(node, Identity.node(c.node_name))
        node = self.cluster.get("Node", c.node_name)
        taints = (node.get("spec") or {}).get("taints") or []
        if any(t["key"] == NOT_READY_KEY for t in taints):
            node["spec"]["taints"] = [t for t in taints if t["key"] != NOT_READY_KEY]
            self.cluster.update(node, NODE_LIFECYCLE)
        self._trace(f"Karpenter registered {c.node_name}")
        return True

    def _initialize(self, c: _Claim) -> bool:
        """karpenter-core.md §4.3. Startup taints are removed by their owning agent (simulated)."""
        node = self.cluster.get("Node", c.node_name)
        startup = {(t.get("key"), t.get("effect")) for t in c.obj["spec"].get("startupTaints") or []}
        node["spec"]["taints"] = [t for t in node["spec"].get("taints") or [] if (t["key"], t.get("effect")) not in startup]
        node["metadata"]["labels"]["karpenter.sh/initialized"] = "true"
        self.cluster.update(node, KARPENTER)
        nr = self.nodes[c.node_name]
        self._write(nr, KARPENTER_CORE, {"karpenter.sh/initialized": "true"})
        c.initialized = nr.initialized = True
        self._daemonset_pods(node)
        return True

    def _daemonset_pods(self, node: dict) -> None:
        """The DaemonSet controller places one pod per eligible node (tolerations + node affinity)."""
        taints = [Taint.from_dict(t) for t in (node.get("spec") or {}).get("taints") or []]
        for ds, pv in self.daemonsets:
            tmpl = ds["spec"]["template"]
            if untolerated(pv.tolerations, taints):
                continue
            if node_matches(pv, node["metadata"].get("labels") or {}, node["metadata"]["name"]):
                continue
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {**copy.deepcopy(tmpl.get("metadata") or {}),
                                "name": f"{ds['metadata']['name']}-{node['metadata']['name'][-5:]}",
                                "namespace": ds["metadata"].get("namespace") or "default"},
                   "spec": _pin_to_node(copy.deepcopy(tmpl.get("spec") or {}), node["metadata"]["name"])}
            self._create_pod(pod, "DaemonSet", ds["metadata"]["name"], node["metadata"]["name"])
            self.nodes[node["metadata"]["name"]].pods.append(self._pod_key(pod))

    # instance garbage collection (spot eviction, VMs deleted behind Karpenter's back) -------------
    def _garbage_collect(self, force: bool = False) -> bool:
        """NodeClaims whose VM no longer exists are deleted with their Node; the Node's Deployment
        pods are replaced (the pod GC deletes them, the ReplicaSet recreates them) and bare pods are
        lost, as on a real cluster (karpenter-core.md §4.4 liveness; fake-azure.md §2.5)."""
        live = [c for c in self.claims if not c.done and c.launched is not None]
        # what failed cleanups left (harness/loop/azure.py collect_garbage; a no-op otherwise)
        self.provider.collect_garbage({self.provider.resource_name(c.result.name) for c in self.claims if not c.done},
                                      eventually=force)
        if not live or (not force and self.clock.now() - self._last_gc < GC_INTERVAL):
            return False
        self._last_gc = self.clock.now()
        vms = self.provider.list_vm_names()
        if vms is None:
            return False
        progress = False
        for c in live:
            if c.launched.vm_name.lower() in vms:
                continue
            node = c.node_name
            self._trace(f"VM {c.launched.vm_name} no longer exists (evicted or deleted)")
            self._delete_claim(c, "instance terminated")
            if node:
                for key, pr in list(self.result.pods.items()):
                    if pr.node != node:
                        continue
                    pv = self.pod_views.pop(key)
                    try:
                        self.cluster.delete("Pod", pr.name, pr.namespace)
                    except APIRejected:
                        pass
                    pr.state, pr.node, pr.reason = "deleted", None, f"node {node} was removed"
                    if pr.owner_kind == "Deployment":
                        pod = {"apiVersion": "v1", "kind": "Pod",
                               "metadata": {"name": self._name(pr.owner_name + "-"), "namespace": pr.namespace,
                                            "labels": dict(pv.obj["metadata"].get("labels") or {})},
                               "spec": {k: v for k, v in pv.spec.items() if k != "nodeName"}}
                        self._create_pod(pod, "Deployment", pr.owner_name)
            progress = True
        return progress

    # registration timeout -----------------------------------------------------------------------
    def _liveness(self) -> bool:
        progress = False
        for c in self.claims:
            if c.done or c.launched is None or c.registered:
                continue
            if self.clock.now() - (c.launched_at or 0) >= REGISTRATION_TIMEOUT:
                self._delete_claim(c, "registration_timeout")
                progress = True
        return progress

    def _next_deadline(self) -> float | None:
        deadlines = [(c.launched_at or 0) + REGISTRATION_TIMEOUT for c in self.claims
                     if not c.done and c.launched is not None and not c.registered]
        deadlines += [c.created_at + LAUNCH_TIMEOUT for c in self.claims if not c.done and c.launched is None]
        return min(deadlines) if deadlines else None

    # -- main loop --------------------------------------------------------------------------------
    def run(self, manifests: list[dict]) -> RunResult:
        t0 = time.perf_counter()
        self.apply(manifests)
        self._validate_nodepools()
        self.converge()
        self.result.timings["run"] = time.perf_counter() - t0
        return self.result

    def converge(self) -> RunResult:
        for i in range(self.cfg.max_iterations):
            self.result.iterations += 1
            progress = self._kube_schedule()
            progress |= self._provision()
            progress |= self._launch()
            for _ in range(3):                    # registration completes within one pass
                progress |= self._register()
            progress |= self._kube_schedule()
            progress |= self._liveness()
            progress |= self._garbage_collect()
            if self._detect_runaway():
                break
            if not progress and self._garbage_collect(force=True):
                progress = True       # a VM vanished (eviction) while the cluster looked steady
            if not progress:
                deadline = self._next_deadline()
                if deadline is None or not any(c.refused or c.launched is None for c in self.claims if not c.done):
                    self.result.steady = True
                    break
                self.clock.advance(max(deadline - self.clock.now(), 0) + 1)
            else:
                self.clock.advance(ITERATION_SECONDS)
        self._finish()
        return self.result

    def _detect_runaway(self) -> bool:
        for key, n in self.launches_for.items():
            if n >= self.cfg.runaway_threshold and not self.result.pods[key].node:
                self.result.runaway = True
                self.result.runaway_reason = (f"pod {key} caused {n} NodeClaims and never bound"
                                              + (f": {self.result.pods[key].scheduler_error}"
                                                 if self.result.pods[key].scheduler_error else ""))
                self._trace(f"runaway provisioning: {self.result.runaway_reason}")
                return True
        return False

    def _finish(self) -> None:
        for nr in self.result.nodes:
            node = self.cluster.get("Node", nr.name)
            if node is not None:
                nr.labels = dict(node["metadata"].get("labels") or {})
                nr.taints = list((node.get("spec") or {}).get("taints") or [])
        for key, pr in self.result.pods.items():
            if pr.state == "deleted":
                continue
            if pr.node:
                pr.state = "scheduled"
                if pr.node in self.nodes and key not in self.nodes[pr.node].pods:
                    self.nodes[pr.node].pods.append(key)
            elif pr.state != "ignored":
                pr.state = "pending"
                if pr.reason is None:
                    pr.reason = pr.scheduler_error
        self.templates()          # instance types as they are now, even with no pod pending
        self.result.unavailable_offerings = self.unavailable.snapshot()
        if hasattr(self.fake, "snapshot"):
            self.result.azure = self.fake.snapshot()
            self.result.azure["request_log"] = [r._asdict() for r in getattr(self.fake, "requests", [])]


def _pin_to_node(spec: dict, node: str) -> dict:
    """The DaemonSet controller's pod pin: required node affinity on metadata.name, replacing the
    template's required terms, so kube-scheduler can only bind it there (k8s.io/kubernetes v1.36.3
    pkg/controller/daemon/util/daemonset_util.go ReplaceDaemonSetPodNodeNameNodeAffinity)."""
    na = spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
    na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
    return spec


def _claim_taints(nodeclaim: dict) -> list[Taint]:
    """A NodeClaim's taints followed by its startup taints."""
    spec = nodeclaim["spec"]
    return [Taint.from_dict(t) for t in (spec.get("taints") or []) + (spec.get("startupTaints") or [])]


def _dedupe_taints(taints: list[Taint]) -> list[Taint]:
    seen, out = set(), []
    for t in taints:
        if (t.key, t.effect) not in seen:
            seen.add((t.key, t.effect))
            out.append(t)
    return out


def _scheduler_message(n_nodes: int, reasons: list[str]) -> str:
    """kube-scheduler's FailedScheduling summary, e.g. '0/2 nodes are available: 2 Insufficient cpu.'"""
    if n_nodes == 0:
        return "no nodes available to schedule pods"
    counts: dict[str, int] = {}
    for r in reasons:
        counts[r] = counts.get(r, 0) + 1
    parts = ", ".join(f"{n} {r}" for r, n in sorted(counts.items()))
    return f"0/{n_nodes} nodes are available: {parts}."
