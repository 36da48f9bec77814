"""What a real-engine run produced, read from the API server, the fake and the kubelet stand-ins, in
the RunResult shape the expectations read (harness/loop/result.py).

Sources, per field:
  nodePools   - admission from the create call; runtime validation and readiness from the NodePool's
                status conditions (core `ValidationSucceeded`, `Ready`);
  pods        - spec.nodeName; Karpenter's `FailedScheduling` events ("Failed to schedule pod, ...",
                sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/events.go) and
                kube-scheduler's; `Nominated` events name the NodeClaims launched for a pod;
  nodes       - the stand-in kubelets' records, the Node and its NodeClaim; label provenance from who
                wrote what (kubelet, its --node-labels, the cloud node controller) and, for the rest,
                Karpenter core's sync of the NodeClaim's labels;
  nodeClaims  - every NodeClaim seen while polling, with its Launched condition;
  azure       - the fake's snapshot and request log, as the simulated engine reads them.
"""
from __future__ import annotations

import hashlib
import json
import re
import time

from harness.backends.base import APIRejected
from harness.loop.azure.provider import request_log
from harness.loop.scheduling.pods import pod_requests
from harness.loop.result import (LabelWrite, NodeClaimResult, NodeClassResult, NodePoolResult, NodeResult, PodResult,
                                 RunResult, TERMINATION_CONDITIONS)
from harness.loop.scheduling.volumes import BIND_COMPLETED, volume_mismatch
from harness.model.crd.apiversions import foreign_nodeclass
from harness.model.kube.kubetime import parse_rfc3339
from harness.model.kube.poddefaults import POD_TEMPLATE_HASH
from harness.model.labels.writers import CLOUD_NODE_CONTROLLER, KARPENTER_CORE, KUBELET
from harness.runner.engines.real.outcome import disruptions
from harness.runner.engines.real.cluster.jobruns import cronjob_of
from harness.runner.engines.real.cluster.runclock import CLOCK
from harness.runner.engines.real.outcome.settle import Disruption

KARPENTER_PREFIX = "Failed to schedule pod, "
# kube-scheduler retries an unschedulable pod within its maximum backoff once a Node changes
# (k8s.io/kubernetes v1.36.3 pkg/scheduler/apis/config/v1/defaults.go: PodMaxBackoffSeconds 10)
SCHEDULER_RETRY_SECONDS = 10.0
NOMINATED = re.compile(r"nodeclaim/([a-z0-9.-]+)")
# after a launch failure deletes a NodeClaim its pods are pending again, and the provisioning round that
# retries them comes with the pod controller's requeue (10 s, core v1.14.0
# pkg/controllers/provisioning/controller.go PodController.Reconcile RequeueAfter) plus the batch idle
# window (1 s); a round that was already running when the NodeClaim went away is not that round
RELAUNCH_SECONDS = 11.0


def _conditions(obj: dict) -> dict[str, dict]:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def _true(obj: dict, type_: str) -> bool:
    return _conditions(obj).get(type_, {}).get("status") == "True"


def nodepool_decided(nodepool: dict) -> bool:
    """Whether the controller has decided a NodePool's readiness: Ready, or not ready for a reason of
    its own (validation failed, or its class is not ready - not merely "readiness unknown", what a
    NodePool shows until its AKSNodeClass is first reconciled: core v1.14.0
    pkg/controllers/nodepool/readiness/controller.go). For the NodePool as it now is: a condition set
    for an earlier generation says nothing of an update (operatorpkg status.ConditionSet.Set stamps the
    generation it saw; a step that narrows a NodePool's zones and brings pods in the same apply raced the
    controller's informer under load, and a round planned with the old requirements)."""
    if str(nodepool.get("apiVersion") or "").endswith("/v1beta1"):
        # core v0.36's NodePool has no conditions (sigs.k8s.io/karpenter v0.36.1 pkg/apis/v1beta1/
        # nodepool_status.go): its provisioner takes every NodePool at once
        return True
    generation = (nodepool.get("metadata") or {}).get("generation") or 1
    conds = {t: c for t, c in _conditions(nodepool).items()
             if c.get("observedGeneration") is None or c["observedGeneration"] >= generation}
    klass = conds.get("NodeClassReady", {})
    return (conds.get("Ready", {}).get("status") == "True"
            or conds.get("ValidationSucceeded", {}).get("status") == "False"
            or (klass.get("status") == "False" and klass.get("reason") != "NodeClassReadinessUnknown"))


def deployment_behind(d: dict) -> str | None:
    """What a Deployment still lacks when kube-controller-manager has not made all its pods yet (its
    Deployment and ReplicaSet controllers create them after the apply, k8s.io/kubernetes v1.36.3
    pkg/controller/deployment, replicaset), else None: until then "no pod pending" says nothing. A
    controller still starting (the first scenario on a new kind cluster) once let a run settle before
    any pod existed."""
    meta, spec, status = d["metadata"], d.get("spec") or {}, d.get("status") or {}
    want, have = spec.get("replicas", 1), status.get("replicas") or 0
    if (status.get("observedGeneration") or 0) < (meta.get("generation") or 1) or have != want:
        return f"Deployment/{meta['name']} ({have} of {want} pods)"
    return None


def statefulset_behind(st: dict) -> str | None:
    """What a StatefulSet still lacks when kube-controller-manager will act on it again, else None: it has not
    seen its latest spec, or every pod it has is Ready (OrderedReady acts only then: k8s.io/kubernetes v1.36.3
    pkg/controller/statefulset stateful_set_control.go updateStatefulSet; Parallel makes and removes at once)
    while it has another pod than its replicas, or a RollingUpdate has not reached the partition yet. One that
    waits on a pod that is not Ready (pending, say) holds nothing: its pod says why."""
    meta, spec, status = st["metadata"], st.get("spec") or {}, st.get("status") or {}
    want, have = spec.get("replicas", 1), status.get("replicas") or 0
    if (status.get("observedGeneration") or 0) < (meta.get("generation") or 1):
        return f"StatefulSet/{meta['name']} (spec not yet observed)"
    if spec.get("podManagementPolicy") != "Parallel" and (status.get("readyReplicas") or 0) < have:
        return None
    if have != want:
        return f"StatefulSet/{meta['name']} ({have} of {want} pods)"
    strategy = spec.get("updateStrategy") or {}
    partition = int(((strategy.get("rollingUpdate") or {}).get("partition")) or 0)
    updated = status.get("updatedReplicas") or 0
    if strategy.get("type", "RollingUpdate") == "RollingUpdate" and updated < want - partition:
        return f"StatefulSet/{meta['name']} ({updated} of {want - partition} pods updated)"
    return None


def claim_unbound(pvc: dict, volumes: dict[str, dict]) -> str | None:
    """What a claim still lacks when it names a volume the PV controller will bind it to, and has not yet
    (k8s.io/kubernetes v1.36.3 pkg/controller/volume/persistentvolume/pv_controller.go syncUnboundClaim: a
    claim with spec.volumeName binds once that volume exists and is claimed by it, or is unclaimed and
    satisfies it - checkVolumeSatisfyClaim, the simulation's `volume_mismatch`; only then does it carry
    pv.kubernetes.io/bind-completed), else None. Until then Karpenter ignores its pod ("pvc is considered
    unbound", core v1.14.0 scheduling/volumetopology.go), so "no round to come" says nothing; on a busy
    machine the binder's first sync can come after the run's quiet window. A claim whose volume is
    missing, claimed by another or not fit for it stays pending for good, and holds nothing."""
    meta, spec = pvc["metadata"], pvc.get("spec") or {}
    name = spec.get("volumeName")
    if not name or BIND_COMPLETED in (meta.get("annotations") or {}):
        return None
    pv = volumes.get(name)
    if pv is None:
        return None
    ref = (pv.get("spec") or {}).get("claimRef")
    if ref is None and volume_mismatch(pv, pvc) is not None:
        return None
    if ref and (ref.get("name") != meta["name"] or (ref.get("namespace") or "default") != meta.get("namespace", "default")
                or ref.get("uid") not in (None, "", meta.get("uid"))):
        return None
    return f"PersistentVolumeClaim/{meta['name']} (not yet bound to {name})"


class Observer:
    def __init__(self, scenario, profile: str, cluster, fake, kubelets, log_path=None):
        self.scenario, self.profile, self.cluster, self.fake, self.kubelets = scenario, profile, cluster, fake, kubelets
        self.log_path = log_path
        self.nodepools: dict[str, NodePoolResult] = {}
        self.nodeclasses: dict[str, NodeClassResult] = {}
        self.rejected_pods: dict[str, PodResult] = {}      # bare Pods the API server refused at create
        self.namespaces: set[str] = {"default"}
        self.departed: frozenset[str] = frozenset()   # uids of the previous scenario's objects (their late events)
        self.exited: str | None = None     # the controller's own exit (its panic line), engine.py _alive
        # the run's clock when the controller last started again (engine.py _restart): what its log says the old
        # process cached is gone with it
        self.restarted_at: float | None = None
        self.claims: dict[str, dict] = {}           # every NodeClaim seen: name -> last object
        # the NodeClaims given.existingNodes made, in the entries' order (existing.py seed)
        self.seeded: list[str] = []
        self.launched: set[str] = set()          # Launched=True and the VM create succeeded
        self.launched_condition: set[str] = set()
        self.vm_failures: dict[str, dict] = {}
        self.failures: dict[str, list[dict]] = {}
        self.deleted: set[str] = set()
        self.deleted_at: dict[str, float] = {}     # ... and when this observer first missed it (monotonic)
        self.claim_nodes: dict[str, str] = {}     # NodeClaim -> its Node
        self.initialized: set[str] = set()        # NodeClaims that reached Initialized=True
        self.initialized_at: dict[str, float] = {}  # ... and when this observer first saw it (monotonic)
        self.workload_nodes: set[str] = set()     # Nodes that ever had a non-DaemonSet pod bound
        self.pod_objects: list[dict] = []          # the pods as the last poll listed them
        self.pods_seen: dict[str, dict] = {}       # every pod a poll listed, as last seen (a deleted one: "deleted")
        self.node_objects: list[dict] = []         # the Nodes as the last poll listed them
        self.nodepool_objects: list[dict] = []     # ... and the NodePools
        self.live: set[str] = set()                # the NodeClaims the last poll listed
        self.deployments: set[str] = set()         # namespaces a Deployment was applied in
        self.statefulsets: set[str] = set()        # namespaces a StatefulSet was applied in
        self.jobs = False                          # a Job or CronJob was applied (their pods' owners are read)
        self.deployment_objects: list[dict] = []   # ... their Deployments as the last poll listed them
        self.statefulset_objects: list[dict] = []  # ... and StatefulSets
        self.claim_namespaces: set[str] = set()    # namespaces a PersistentVolumeClaim was applied in
        self.unbound_claims: list[str] = []        # claim_unbound of their claims, as the last poll saw them
        self.watch = disruptions.DisruptionWatch()
        self._writes_seen, self._writes_key = -1, ()      # _azure_writes

    # -- during the run -------------------------------------------------------------------------------
    def applied(self, obj: dict, error: APIRejected | None, stored: dict | None = None) -> None:
        ns = (obj.get("metadata") or {}).get("namespace")
        if ns:
            self.namespaces.add(ns)
        if obj.get("kind") == "Namespace" and error is None:     # what the scenario puts in it is watched too
            self.namespaces.add(obj["metadata"]["name"])
        if obj.get("kind") == "Deployment" and error is None:
            self.deployments.add(ns or "default")
        if obj.get("kind") == "StatefulSet" and error is None:
            self.statefulsets.add(ns or "default")
        if obj.get("kind") in ("Job", "CronJob") and error is None:
            self.jobs = True
        if obj.get("kind") == "PersistentVolumeClaim" and error is None:
            self.claim_namespaces.add(ns or "default")
        if obj.get("kind") == "AKSNodeClass":
            self.nodeclasses[obj["metadata"]["name"]] = NodeClassResult.of(obj, stored, error)
            return
        if obj.get("kind") == "Pod" and error is not None:
            meta = obj["metadata"]
            key = f"{meta.get('namespace') or 'default'}/{meta['name']}"
            self.rejected_pods[key] = PodResult(meta["name"], meta.get("namespace") or "default", state="rejected",
                                                reason=error.message, labels=dict(meta.get("labels") or {}))
            return
        if obj.get("kind") != "NodePool":
            return
        name = obj["metadata"]["name"]
        if error is None:
            self.nodepools[name] = NodePoolResult(name)
        else:
            self.nodepools[name] = NodePoolResult(name, accepted=False, stage="admission", message=error.message,
                                                  causes=[c.message for c in error.causes])

    def poll(self) -> None:
        self.pod_objects = [p for ns in sorted(self.namespaces) for p in self.cluster.list("Pod", ns)]
        for p in self.pod_objects:
            self.pods_seen[f"{p['metadata']['namespace']}/{p['metadata']['name']}"] = p
        seen = set()
        for nc in self.cluster.list("NodeClaim"):
            name = nc["metadata"]["name"]
            seen.add(name)
            self.claims[name] = nc
            conds = _conditions(nc)
            launched = conds.get("Launched", {})
            if launched.get("status") == "True":
                # provider v1.14.0 creates the VM asynchronously (pkg/providers/instance/vminstance.go
                # BeginCreate): Launched=True comes once the PUT is accepted, and a create that fails
                # later deletes the NodeClaim. "Launched" here means what the simulation means: the
                # VM was created.
                self.launched_condition.add(name)
                state, failure = self._vm_state(nc)
                if state == "succeeded":
                    self.launched.add(name)
                elif failure and name not in self.vm_failures:
                    self.vm_failures[name] = failure
                    self.failures.setdefault(name, []).append(
                        {"reason": failure.get("code"), "message": failure.get("message"), "code": failure.get("code")})
            elif launched.get("status") == "False" or (
                    launched.get("status") == "Unknown" and launched.get("reason") not in (None, "", "AwaitingReconciliation")):
                # a failed create leaves Launched Unknown with the error's reason (core v1.14.0
                # pkg/controllers/nodeclaim/lifecycle/launch.go launchNodeClaim: SetUnknownWithReason)
                f = {"reason": launched.get("reason"), "message": launched.get("message")}
                if f not in self.failures.setdefault(name, []):
                    self.failures[name].append(f)
        self.live = seen
        self.node_objects = self.cluster.list("Node")
        self.nodepool_objects = self.cluster.list("NodePool")
        self.deployment_objects = [d for ns in sorted(self.deployments) for d in self.cluster.list("Deployment", ns)]
        self.statefulset_objects = [d for ns in sorted(self.statefulsets) for d in self.cluster.list("StatefulSet", ns)]
        if self.claim_namespaces:
            volumes = {v["metadata"]["name"]: v for v in self.cluster.list("PersistentVolume")}
            self.unbound_claims = [why for ns in sorted(self.claim_namespaces)
                                   for c in self.cluster.list("PersistentVolumeClaim", ns)
                                   if (why := claim_unbound(c, volumes)) is not None]
        self.watch.poll(self.claims, seen, self.node_objects, self.pod_objects)
        now = time.monotonic()
        for name in set(self.claims) - seen - self.deleted:
            self.deleted_at[name] = now
        self.deleted |= set(self.claims) - seen
        for name, nc in self.claims.items():
            if _true(nc, "Initialized"):
                self.initialized.add(name)
                self.initialized_at.setdefault(name, now)
            if (nc.get("status") or {}).get("nodeName"):
                self.claim_nodes[name] = nc["status"]["nodeName"]
        for p in self._pods_now():
            if p["node"] and not p["daemon"]:
                self.workload_nodes.add(p["node"])

    def _pods_now(self) -> list[dict]:
        """The pods as the last poll listed them."""
        return [{"key": f"{p['metadata']['namespace']}/{p['metadata']['name']}", "node": (p.get("spec") or {}).get("nodeName"),
                 "daemon": any(r.get("kind") == "DaemonSet" for r in p["metadata"].get("ownerReferences") or []),
                 "scheduled": _conditions(p).get("PodScheduled", {})} for p in self.pod_objects]

    def pending(self) -> frozenset:
        """The unbound workload pods with the scheduler's verdict on each (its PodScheduled condition):
        what a provisioning round looks at."""
        return frozenset((p["key"], p["scheduled"].get("reason"), p["scheduled"].get("message"))
                         for p in self._pods_now() if not p["node"] and not p["daemon"])

    def launched_unregistered(self) -> list[str]:
        """Live NodeClaims whose VM was created (`launched`, as the simulation means it) and whose Node has
        not registered: a launch in flight, what a `during: launch` step is played in."""
        registered = {(n.get("spec") or {}).get("providerID") for n in self.node_objects}
        return [name for name in sorted(self.live - self.deleted) if name in self.launched
                and name not in self.claim_nodes
                and ((self.claims[name].get("status") or {}).get("providerID") or None) not in registered]

    def launching(self) -> list[str]:
        """Live NodeClaims whose launch has not ended yet: no VM created, none failed. A round's NodeClaims
        launch in parallel (core v1.14.0 nodeclaim/lifecycle/launch.go, one reconcile each), so a `during:
        launch` step waits for all of them, as the simulation launches a round's NodeClaims in one pass."""
        return [name for name in sorted(self.live - self.deleted)
                if name not in self.launched and name not in self.vm_failures]

    def unplanned(self) -> list[str]:
        """Pending workload pods no provisioning round has answered yet: neither a `Nominated` event (planned
        onto a NodeClaim or a node) nor Karpenter's `FailedScheduling`, and not ignored. A `during: launch`
        step waits for them: pods applied together reach Karpenter a batch window apart at most, and the
        simulation plans them in one round."""
        ignored, events = self.ignored_pods(), self._events()
        answered = set(self.nomination_events(events)[0])
        for e in events:
            io = e.get("involvedObject") or {}
            if (e.get("reason") == "FailedScheduling" and io.get("kind") == "Pod"
                    and (e.get("message") or "").startswith(KARPENTER_PREFIX)):
                answered.add(f"{io.get('namespace')}/{io.get('name')}")
        return sorted(key for key, *_ in self.pending() if key not in answered and key not in ignored)

    def in_flight(self) -> list[str]:
        """NodeClaims Karpenter is still acting on: live and not initialized, unless their VM failed
        or their kubelet will never register it (refused its flags, or NodeRestriction denied it); and
        admitted NodePools whose readiness the controller has not decided yet; Deployments, StatefulSets and
        claims kube-controller-manager has not caught up with."""
        out = [f"NodePool/{name}" for name in sorted(n for n, r in self.nodepools.items() if r.accepted)
               if not nodepool_decided(self.cluster.get("NodePool", name) or {})]
        for name, nc in sorted(self.claims.items()):
            if name in self.deleted or name in self.initialized or name in self.vm_failures:
                continue
            vm = ((nc.get("status") or {}).get("providerID") or "").rsplit("/", 1)[-1]
            rec = self.kubelets.records.get(vm) if vm else None
            if rec is not None and (rec.refused or rec.denied):
                continue
            out.append(name)
        return out + self._awaiting_relaunch() + self.deployments_behind() + self.unbound_claims

    def deployments_behind(self) -> list[str]:
        """The applied Deployments and StatefulSets kube-controller-manager has not caught up with
        (deployment_behind, statefulset_behind)."""
        return [why for d in self.deployment_objects if (why := deployment_behind(d)) is not None] + \
            [why for d in self.statefulset_objects if (why := statefulset_behind(d)) is not None]

    def _awaiting_relaunch(self) -> list[str]:
        """NodeClaims a launch failure deleted while pods are pending, until a NodeClaim created since
        shows the retry or RELAUNCH_SECONDS have passed (the pods' next provisioning round). A failure
        is a failed launch seen, or a claim whose create was accepted (Launched) and that went away
        before a poll saw its VM succeed: an asynchronous create can fail and its NodeClaim be deleted
        between two polls of a busy machine (CI's zonal-allocation-failure-moves-zone settled so)."""
        if not self.pending():
            return []
        now = time.monotonic()
        created = [c["metadata"].get("creationTimestamp") or "" for n, c in self.claims.items() if n not in self.deleted]
        out = []
        for name, gone in sorted(self.deleted_at.items()):
            failed = self.failures.get(name) or name in self.launched_condition
            if name in self.launched or not failed or now - gone >= RELAUNCH_SECONDS:
                continue
            stamp = self.claims[name]["metadata"].get("creationTimestamp") or ""
            if any(c > stamp for c in created):
                continue                      # a later NodeClaim: the retry happened
            out.append(f"{name} (launch failed; its pods' next provisioning round)")
        return out

    def _vm_state(self, nc: dict) -> tuple[str, dict | None]:
        pid = (nc.get("status") or {}).get("providerID") or ""
        if not pid:
            return "", None
        vm = self.fake.get_vm(self.kubelets.rg, pid.rsplit("/", 1)[-1])
        if vm is None:
            return "", None
        state = ((vm.get("properties") or {}).get("provisioningState") or "").lower()
        failure = None
        if state == "failed":
            name = pid.rsplit("/", 1)[-1].lower()
            failure = next((v.get("failure") for v in self.fake.snapshot()["vms"] if v["name"].lower() == name), None)
        return state, failure

    def _events(self) -> list[dict]:
        out = []
        for ns in sorted(self.namespaces | {"default"}):
            out += [e for e in self.cluster.list("Event", ns)
                    if (e.get("involvedObject") or {}).get("uid") not in self.departed]
        return sorted(out, key=lambda e: (e.get("firstTimestamp") or e.get("eventTime") or "",
                                          e["metadata"].get("creationTimestamp") or ""))

    def fingerprint(self) -> tuple:
        """What "nothing changed" compares, what Karpenter reads: NodeClaims and their conditions, Nodes
        with labels and taints, pod bindings and terminations, NodePool conditions, the fake's mutating calls. Events are
        `reports`."""
        claims = tuple(sorted((n, tuple(sorted((t, c.get("status")) for t, c in _conditions(o).items())),
                               bool(o["metadata"].get("deletionTimestamp")))
                              for n, o in self.claims.items() if n not in self.deleted))
        nodes = tuple(sorted((n["metadata"]["name"], tuple(sorted((n["metadata"].get("labels") or {}).items())),
                              tuple(sorted(t["key"] for t in (n.get("spec") or {}).get("taints") or [])))
                             for n in self.node_objects))
        # a terminating pod is no longer reschedulable, so its node may be empty to a disruption pass (core
        # v1.14.0 pkg/utils/pod/scheduling.go IsReschedulable): its deletionTimestamp is a change a pass must see
        pods = tuple(sorted((p["metadata"]["namespace"], p["metadata"]["name"], (p.get("spec") or {}).get("nodeName"),
                             bool(p["metadata"].get("deletionTimestamp"))) for p in self.pod_objects))
        pools = tuple(sorted((p["metadata"]["name"], tuple(sorted((t, c.get("status")) for t, c in _conditions(p).items())))
                             for p in self.nodepool_objects))
        return claims, nodes, pods, pools, self._azure_writes()

    def _azure_writes(self) -> tuple:
        """What the controller's writes did in the fake: its VMs and NICs as they are, and each distinct
        refused write. A write answered as the same one was before changes nothing: a launch that core
        retries in a loop re-PUTs the same NIC (a NIC GET failing for good: the launch fails each time,
        provider v1.14.0 vminstance.go BeginCreate), the garbage collector's delete of a VM that cannot be
        deleted is refused the same each period; counted as changes, each restarted the quiet window and
        such a run waited 2-3 minutes for the controller's backoff to outgrow it. Read again only after
        a new write."""
        log = self.fake.requests
        writes = [r for r in log if r.method in ("PUT", "DELETE", "PATCH")]
        if len(writes) != self._writes_seen:
            state = json.dumps([self.fake.vms(), self.fake.nics()], sort_keys=True, default=str)
            refused = frozenset((r.method, r.path, r.status) for r in writes if r.status >= 400)
            self._writes_seen, self._writes_key = len(writes), (hashlib.sha256(state.encode()).hexdigest(), refused)
        return self._writes_key

    def reports(self) -> int:
        """How many events Karpenter wrote on Nodes and NodeClaims: what a result reads (a disruption
        pass's Node event and its NodeClaim twin are written one after the other by client-go's
        broadcaster: a settle must not end between them), and what no Karpenter controller reads
        (settle.py). Other components' (kube-controller-manager's `RegisteredNode`) are neither."""
        return sum(1 for e in self._node_events() if (e.get("source") or {}).get("component") == "karpenter")

    def _node_events(self) -> list[dict]:
        return [e for e in self.cluster.list("Event", "default")
                if (e.get("involvedObject") or {}).get("kind") in ("Node", "NodeClaim")
                and e["involvedObject"].get("uid") not in self.departed]

    def disruption(self, passes: int | None, held: tuple[str, ...] = (), pass_mark: int | None = None) -> Disruption:
        """The disruption side for the settle rule (settle.py; `passes` and `pass_mark`: pass_counts)."""
        never = {np["metadata"]["name"] for np in self.nodepool_objects
                 if ((np.get("spec") or {}).get("disruption") or {}).get("consolidateAfter") == "Never"}
        underutilized = {np["metadata"]["name"] for np in self.nodepool_objects
                         if ((np.get("spec") or {}).get("disruption") or {}).get("consolidationPolicy")
                         == "WhenUnderutilized"}
        return Disruption(passes, tuple(disruptions.candidates(self.claims, self.live, never, underutilized)),
                          tuple(self.watch.busy(self.claims, self.live)), held, pass_mark=pass_mark)

    def provider_ids(self, claims) -> list[str]:
        """The provider IDs of the named NodeClaims that have one (launched)."""
        return [pid for name in claims
                if (pid := ((self.claims.get(name) or {}).get("status") or {}).get("providerID"))]

    def nominations(self) -> dict[str, set[str]]:
        """pod key -> NodeClaims Karpenter nominated it for (its `Nominated` events)."""
        return self.nomination_events()[0]

    def nomination_events(self, events: list[dict] | None = None) -> tuple[dict[str, set[str]], set[str]]:
        """From one listing: pod key -> NodeClaims its `Nominated` events name, and the pods whose event
        names a Node too - the provisioning round planned them onto an existing node, a nomination in
        Karpenter's state (core v1.14.0 scheduling/scheduler.go; a new NodeClaim's event, provisioner.go,
        names no Node). `events`: a listing already made this poll."""
        claims: dict[str, set[str]] = {}
        on_node: set[str] = set()
        for e in self._events() if events is None else events:
            if e.get("reason") == "Nominated" and (e.get("involvedObject") or {}).get("kind") == "Pod":
                io, message = e["involvedObject"], e.get("message") or ""
                key = f"{io.get('namespace')}/{io.get('name')}"
                claims.setdefault(key, set()).update(NOMINATED.findall(message))
                if "node/" in message:
                    on_node.add(key)
        return claims, on_node

    def runaway(self, threshold: int, now: float | None = None) -> str | None:
        """Runaway provisioning (design 0006 FAQ): a workload pod stays unbound while `threshold`
        launched, initialized NodeClaims ended up on Nodes no workload pod ever bound to - Karpenter keeps
        launching for a pod that never fits. (Its `Nominated` events cannot count this: core
        dedupes them per pod, sigs.k8s.io/karpenter v1.14.0 scheduling/events.go NominatePodEvent.)
        A NodeClaim counts as idle only once it has been initialized for longer than kube-scheduler
        takes to retry the pod (SCHEDULER_RETRY_SECONDS): Nodes that initialize together have not been
        offered to the pod yet. `now` None: at the end of the run, every initialized NodeClaim counts."""
        ignored = self.ignored_pods()
        pending = [p["key"] for p in self._pods_now() if not p["node"] and not p["daemon"] and p["key"] not in ignored]
        if not pending:
            return None
        # only initialized Nodes count: before that the pod may simply not be allowed on yet
        # (startup taints, not Ready)
        idle = [c for c in self.launched & self.initialized
                if self.claim_nodes.get(c) and self.claim_nodes[c] not in self.workload_nodes
                and (now is None or now - self.initialized_at.get(c, now) >= SCHEDULER_RETRY_SECONDS)]
        if len(idle) >= threshold:
            return (f"pod {pending[0]} stayed unbound while {len(idle)} launched NodeClaims got Nodes no "
                    f"workload pod bound to ({', '.join(sorted(idle)[:5])})")
        return None

    # -- at the end ---------------------------------------------------------------------------------------
    def result(self, steady: bool, threshold: int) -> RunResult:
        r = RunResult(self.scenario.name, self.profile, "local", self.scenario.seed)
        r.steady = steady
        why = self.runaway(threshold)
        r.runaway, r.runaway_reason = why is not None, why
        events = self._events()
        r.events = [{"kind": (e.get("involvedObject") or {}).get("kind"), "name": (e.get("involvedObject") or {}).get("name"),
                     "namespace": (e.get("involvedObject") or {}).get("namespace"),
                     "reason": e.get("reason"), "message": e.get("message") or ""} for e in events]
        # a FailedCreate on a Deployment's ReplicaSet is that Deployment's (the simulation records it so)
        owners = self._replicaset_owners()
        for e in r.events:
            if e["kind"] == "ReplicaSet" and e["reason"] == "FailedCreate":
                e["owner"] = f"Deployment/{owners[e['name']]}" if e["name"] in owners else f"ReplicaSet/{e['name']}"
        r.unmade = self._unmade(r.events)
        r.events += self.log_events()
        self._nodepools(r)
        self._pods(r, events)
        r.trace += deletion_causes(r, events)
        self._nodes_and_claims(r)
        self._disruptions(r)
        snap = self.fake.snapshot()
        snap["request_log"] = request_log(self.fake)
        r.azure = snap
        r.unavailable_offerings = self.unavailable_offerings(CLOCK.now())
        return r

    def _nodepools(self, r: RunResult) -> None:
        for np in self.cluster.list("NodePool"):
            name = np["metadata"]["name"]
            res = self.nodepools.setdefault(name, NodePoolResult(name))
            res.unmanaged = foreign_nodeclass(np)
            conds = _conditions(np)
            v = conds.get("ValidationSucceeded")
            if v and v.get("status") == "False":
                res.stage, res.message = "runtime", v.get("message")
            # core v0.36's karpenter.sh/v1beta1 NodePool has no Ready condition: its provisioner takes every
            # NodePool (nodepool_decided), as the simulation says `ready` for it
            res.ready = conds.get("Ready", {}).get("status") == "True" or (
                not conds and str(np.get("apiVersion") or "").endswith("/v1beta1"))
        r.nodepools = dict(self.nodepools)
        r.nodeclasses = dict(self.nodeclasses)
        r.rejected_pods = dict(self.rejected_pods)
        for e in r.events:
            if e["kind"] == "NodePool" and e["name"] in r.nodepools:
                r.nodepools[e["name"]].events.append({"reason": e["reason"], "message": e["message"]})

    def _owner(self, pod: dict, rs_owner: dict[str, str], live: set[str],
               by_hash: dict[tuple[str, str], str] | None = None) -> tuple[str, str]:
        """(owner kind, owner name); ("", None) for a pod of an earlier scenario's ReplicaSet: after a
        reset, kube-controller-manager may still replace a deleted pod from its informer's copy of the
        previous scenario's ReplicaSet (same name when the pod template is the same), and that orphan
        lives until the garbage collector removes it; it is not this scenario's pod. `live`: the uids of
        the ReplicaSets that exist (a Deployment's or not). A pod of a ReplicaSet that never existed here
        (a seeded terminating pod keeps its dump's reference) is this scenario's. `by_hash`: (namespace,
        pod-template-hash) -> the Deployment of the ReplicaSet labelled so: a seeded pod is created orphaned
        with its ReplicaSet's hash and adopted later (existing.bind_pods), and one a consolidation evicted
        before kube-controller-manager adopted it (a dump of a hundred nodes) is still that Deployment's."""
        for ref in pod["metadata"].get("ownerReferences") or []:
            if ref.get("kind") == "ReplicaSet":
                if ref.get("uid") and ref["uid"] not in live and ref["uid"] in self.departed:
                    return "", None
                owner = rs_owner.get(ref.get("uid") or ref["name"], ref["name"].rsplit("-", 1)[0])
                return owner if isinstance(owner, tuple) else ("Deployment", owner)
            if ref.get("kind") in ("DaemonSet", "Job", "StatefulSet"):
                return ref["kind"], ref["name"]
        meta = pod["metadata"]
        labels = meta.get("labels") or {}
        adopter = (by_hash or {}).get((meta.get("namespace") or "default", labels.get(POD_TEMPLATE_HASH)))
        if not meta.get("ownerReferences") and adopter:
            return "Deployment", adopter
        return "", ""

    def _unmade(self, events: list[dict]) -> dict[str, int | None]:
        """RunResult.unmade from the cluster: each object with a FailedCreate that still lacks pods - a
        ReplicaSet's spec.replicas less its status.replicas, a DaemonSet's desiredNumberScheduled less its
        currentNumberScheduled; a Job's is not counted (None while it is not complete)."""
        out: dict[str, int | None] = {}
        for e in events:
            if e.get("reason") != "FailedCreate" or e.get("kind") not in ("ReplicaSet", "DaemonSet", "Job"):
                continue
            obj = self.cluster.get(e["kind"], e["name"], e.get("namespace")) or {}
            spec, status = obj.get("spec") or {}, obj.get("status") or {}
            if not obj:
                continue
            if e["kind"] == "ReplicaSet":
                missing: int | None = int(spec.get("replicas", 1)) - int(status.get("replicas") or 0)
            elif e["kind"] == "DaemonSet":
                missing = int(status.get("desiredNumberScheduled") or 0) - int(status.get("currentNumberScheduled") or 0)
            else:
                done = any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
                           for c in status.get("conditions") or [])
                missing = 0 if done else None
            if missing is None or missing > 0:
                out[e.get("owner") or f"{e['kind']}/{e['name']}"] = missing
        return out

    def _replicasets(self) -> list[tuple[str, dict]]:
        """(namespace, ReplicaSet) of every ReplicaSet in the scenario's namespaces."""
        return [(ns, rs) for ns in sorted(self.namespaces)
                for rs in self.cluster.admin.request("GET", f"/apis/apps/v1/namespaces/{ns}/replicasets").get("items") or []]

    def _replicaset_owners(self) -> dict[str, str]:
        """ReplicaSet name -> the Deployment that owns it."""
        return {rs["metadata"]["name"]: ref["name"] for _, rs in self._replicasets()
                for ref in rs["metadata"].get("ownerReferences") or [] if ref.get("kind") == "Deployment"}

    def _pods(self, r: RunResult, events: list[dict]) -> None:
        rs_owner, live, by_hash = {}, set(), {}
        own = scenario_replicasets(self.scenario)
        for ns, rs in self._replicasets():
            live.add(rs["metadata"].get("uid"))
            refs = rs["metadata"].get("ownerReferences") or []
            if (ns, rs["metadata"]["name"]) in own and not any(ref.get("kind") == "Deployment" for ref in refs):
                # a bare ReplicaSet of the scenario: its pods are its own (by name and uid); one the harness made
                # for a dump's orphaned pods (existing.adopt_orphans) stays read as its Deployment's, as seeded
                rs_owner[rs["metadata"]["name"]] = rs_owner[rs["metadata"]["uid"]] = ("ReplicaSet", rs["metadata"]["name"])
            for ref in refs:
                if ref.get("kind") == "Deployment":
                    rs_owner[rs["metadata"]["name"]] = rs_owner[rs["metadata"]["uid"]] = ref["name"]
                    h = (rs["metadata"].get("labels") or {}).get(POD_TEMPLATE_HASH)
                    if h:
                        by_hash[(ns, h)] = ref["name"]
        # a Job's pod counts for the CronJob that made its Job (result.py pods_of)
        crons = {(ns, j["metadata"]["name"]): cronjob_of(j) for ns in sorted(self.namespaces)
                 for j in self.cluster.list("Job", ns)} if self.jobs else {}
        noms = self.nominations()
        ignored = self.ignored_pods()
        now = {f"{ns}/{p['metadata']['name']}": p for ns in sorted(self.namespaces) for p in self.cluster.list("Pod", ns)}
        # a pod a poll saw and the cluster no longer has was deleted (evicted by a drain, for one), as
        # the simulation records it: state "deleted", on the node it was last bound to
        gone = {k: p for k, p in self.pods_seen.items() if k not in now}
        for key, p in sorted({**gone, **now}.items()):
            ns = p["metadata"]["namespace"]
            kind, owner = self._owner(p, rs_owner, live, by_hash)
            if owner is None:          # an orphan of the previous scenario's ReplicaSet
                continue
            pr = PodResult(p["metadata"]["name"], ns, kind, owner, labels=dict(p["metadata"].get("labels") or {}),
                           requests=pod_requests(p.get("spec") or {}))
            pr.node = (p.get("spec") or {}).get("nodeName")
            pr.state = "deleted" if key in gone else "scheduled" if pr.node else "pending"
            pr.cronjob = crons.get((ns, owner), "") if kind == "Job" else ""
            if pr.state == "scheduled" and (p.get("status") or {}).get("phase") == "Succeeded":
                # as the simulation records a completed pod (jobs.py _complete): on no node, terminal
                pr.state, pr.reason, pr.node = "succeeded", f"completed on {pr.node}", None
            pr.nodeclaims = sorted(noms.get(key, ()))
            for e in events:
                io = e.get("involvedObject") or {}
                if io.get("kind") != "Pod" or io.get("name") != pr.name or io.get("namespace") != ns:
                    continue
                if e.get("reason") != "FailedScheduling":
                    continue
                msg = e.get("message") or ""
                if msg.startswith(KARPENTER_PREFIX):
                    pr.karpenter_error = msg[len(KARPENTER_PREFIX):]
                    if msg not in pr.events:
                        pr.events.append(msg)
                else:
                    pr.scheduler_error = msg
            if pr.state == "pending" and key in ignored:
                pr.state, pr.karpenter_error = "ignored", ignored[key]
            if pr.state not in ("scheduled", "succeeded"):
                pr.reason = pr.karpenter_error or pr.scheduler_error
            r.pods[key] = pr

    def _log_records(self, needle: str, without: str | None = None):
        """The controller's structured log lines that contain `needle` (and not `without`), parsed (zap JSON)."""
        try:
            lines = self.log_path.read_text(errors="replace").splitlines() if self.log_path else []
        except OSError:
            return
        for line in lines:
            if needle not in line or (without and without in line):
                continue
            try:
                yield json.loads(line)
            except ValueError:
                continue

    def log_events(self) -> list[dict]:
        """The errors the controller only logs, as events of kind `Log` the way the simulation records
        them (harness/loop/azure/provider.py AzureProvider.event): named for the package that logged it (the
        log line's `caller`, e.g. `instance/vminstance.go:1006` -> `instance`), the reason is the log
        message (e.g. provider v1.14.0 pkg/providers/instance/vminstance.go "networkinterface.Delete
        failed"), the message its `error`. Only the provider's and core's own error lines: the
        controller-runtime "Reconciler error" wrapper repeats one of them."""
        out: list[dict] = []
        for rec in self._log_records('"level":"ERROR"', without='"ApiRequestLog"'):
            caller = str(rec.get("caller") or "")
            if rec.get("message") == "Reconciler error" or "/" not in caller:
                continue
            out.append({"kind": "Log", "name": caller.split("/")[-2], "namespace": None,
                        "reason": rec.get("message") or "", "message": str(rec.get("error") or "")})
        if self.exited:           # as the simulation records it (harness/loop/simulation.py _start)
            out.append({"kind": "Log", "name": "operator", "namespace": None, "reason": "controller exited",
                        "message": self.exited})
        return out

    def unavailable_offerings(self, now: float) -> list[dict]:
        """The provider's unavailable-offerings cache as the simulation snapshots it
        (harness/loop/azure/unavailable.py), from the controller's debug log: provider v1.14.0
        pkg/cache/unavailableofferings.go logs each entry it sets ("removing offering from offerings":
        one offering, or every spot offering; "marking VM Family unavailable in zone": a family from a
        vCPU count up). An entry set again extends its TTL; the live ones at `now` (the run's clock, epoch
        seconds; the cache's TTL runs on it: controller-timing.yaml go-cache, and a line's wall-clock time is
        read on it, runclock.py RunClock.at), set since the controller last started (`restarted_at`)."""
        from harness.model.values.durations import go_duration
        entries: dict[str, dict] = {}
        for needle in ('"removing offering from offerings"', '"marking VM Family unavailable in zone"'):
            for rec in self._log_records(needle):
                try:
                    at = CLOCK.at(parse_rfc3339(str(rec.get("time"))))
                    ttl = go_duration(str(rec.get("ttl")))
                except (TypeError, ValueError):
                    continue
                if self.restarted_at is not None and at < self.restarted_at:
                    continue            # the process that cached it is gone (a restart)
                ct, zone = rec.get("capacity-type") or "", rec.get("zone") or ""
                if "family" in rec:
                    key = f"skufamily:{str(rec['family']).lower()}:{zone}:{ct}"
                    row = {"family": str(rec["family"]).lower(), "zone": zone, "capacityType": ct,
                           "minVCPUs": rec.get("max-cpu")}
                elif rec.get("instance-type"):
                    key = f"{ct}:{rec['instance-type']}:{zone}"
                    row = {"capacityType": ct, "size": rec["instance-type"], "zone": zone}
                else:
                    key, row = "spot::", {"capacityType": "spot", "scope": "all"}
                entries[key] = {"key": key, "ttl": ttl, "expires": at + ttl, **row}
        return [{**{k: v for k, v in e.items() if k != "expires"}, "expiresIn": round(e["expires"] - now, 3)}
                for _, e in sorted(entries.items()) if e["expires"] > now]

    def ignored_pods(self) -> dict[str, str]:
        """pod key -> why Karpenter ignores it: the provisioner's "ignoring pod" log line (core
        v1.14.0 pkg/controllers/provisioning/provisioner.go GetPendingPods, Validate failed; debug level).
        Karpenter records that decision nowhere in the API before core v1.7.0 (a FailedScheduling event
        since #2480), so its structured log is the observable. Core before v1.10.0 (#2860) writes the
        reason into the message (`"ignoring pod, <error>"`, sigs.k8s.io/karpenter v1.4.0 provisioner.go
        GetPendingPods), later cores as the `error` field of the message "ignoring pod"."""
        out: dict[str, str] = {}
        for rec in self._log_records('"ignoring pod'):
            message = str(rec.get("message") or "")
            if message == IGNORING_POD:
                why = str(rec.get("error", ""))
            elif message.startswith(IGNORING_POD + ", "):
                why = message[len(IGNORING_POD) + 2:]
            else:
                continue
            pod = rec.get("Pod") or {}
            out[f"{pod.get('namespace')}/{pod.get('name')}"] = why
        return out

    def _nodes_and_claims(self, r: RunResult) -> None:
        by_vm = {rec.vm_name.lower(): rec for rec in self.kubelets.records.values()}
        index = 0
        # creation order: the seeded NodeClaims first, in the entries' order (as the simulation seeds them:
        # their creationTimestamps are the dump's createdAt, which a dump need not list in order), then
        # creationTimestamp (seconds), ties by the order the VMs were PUT (the launch order); NodeClaims
        # of one batch are created in parallel (core CreateNodeClaims), so ties have no order the API can show
        put_order = {p.name.lower(): i for i, p in enumerate(self.kubelets.tap.puts) if p.kind == "vm"}
        seeded = {name: i for i, name in enumerate(self.seeded)}

        def order(name: str):
            if name in seeded:
                return "", seeded[name], name
            nc = self.claims[name]
            vm = ((nc.get("status") or {}).get("providerID") or "").rsplit("/", 1)[-1].lower()
            return nc["metadata"].get("creationTimestamp") or "", put_order.get(vm, len(put_order)), name
        for name in sorted(self.claims, key=order):
            nc = self.claims[name]
            labels = dict(nc["metadata"].get("labels") or {})
            ncr = NodeClaimResult(name, labels.get("karpenter.sh/nodepool", ""), [], nc["spec"].get("requirements") or [],
                                  labels, launched=name in self.launched, failures=self.failures.get(name, []))
            ncr.failure = ncr.failures[-1] if ncr.failures else None
            if name in self.deleted:
                ncr.deleted = "deleted"
            r.nodeclaims.append(ncr)
            for p in r.pods.values():
                if name in p.nodeclaims:
                    ncr.pods.append(f"{p.namespace}/{p.name}")
            pid = (nc.get("status") or {}).get("providerID") or ""
            vm_name = pid.rsplit("/", 1)[-1] if pid else ""
            rec = by_vm.get(vm_name.lower())
            if rec is None or name in self.deleted and not rec.registered:
                continue
            node = self.cluster.get("Node", rec.node_name) if rec.registered else None
            gone = node is None and rec.registered
            node = node or self.watch.nodes.get(rec.node_name)     # a Node Karpenter deleted: as last seen
            if name in self.deleted and node is None:
                continue
            nr = NodeResult(rec.node_name, index, name, ncr.nodepool,
                            labels.get("node.kubernetes.io/instance-type", ""),
                            labels.get("topology.kubernetes.io/zone", ""),
                            labels.get("karpenter.sh/capacity-type", ""), vm_name)
            index += 1
            ncr.node = rec.node_name
            nr.kubelet_node_labels = dict(rec.bootstrap.node_labels)
            nr.kubelet_refused, nr.node_restriction_denied = rec.refused, rec.denied
            nr.nodeclaim_labels = labels
            nr.nodeclaim_requirements = ncr.requirements
            nr.nodeclaim_requests = dict(((nc.get("spec") or {}).get("resources") or {}).get("requests") or {})
            nr.registered = _true(nc, "Registered")
            nr.initialized = _true(nc, "Initialized")
            # as last polled: a deleted NodeClaim keeps the conditions it had when it went
            nr.nodeclaim_conditions = {t: str(c.get("status")) for t, c in _conditions(nc).items()
                                       if t in TERMINATION_CONDITIONS}
            # its Drifted condition's reason (core v1.14.0 pkg/controllers/nodeclaim/disruption/drift.go), as the
            # simulation's result names its drift
            drift = _conditions(nc).get("Drifted", {})
            nr.drifted = (drift.get("reason") or "Drifted") if drift.get("status") == "True" else None
            if node is not None:
                nr.labels = dict(node["metadata"].get("labels") or {})
                nr.taints = list((node.get("spec") or {}).get("taints") or [])
                # provider v0.5-v0.7 put the zone on the NodeClaim as karpenter.azure.com/zone only and leave
                # topology.kubernetes.io/zone to cloud-node-manager on the Node (github.com/Azure/karpenter-
                # provider-azure v0.7.5 pkg/cloudprovider/cloudprovider.go instanceToNodeClaim)
                nr.zone = nr.zone or nr.labels.get("topology.kubernetes.io/zone", "")
            nr.provenance = _provenance(nr.labels, rec, labels)
            if gone:
                nr.deleted = ncr.deleted = "deleted"
            else:         # still there, being deleted (draining), as the simulation's result says it
                nr.deleting = bool(nc["metadata"].get("deletionTimestamp") or
                                   (node is not None and node["metadata"].get("deletionTimestamp")))
            # a deleted Node keeps the pods it had (drained ones too), a live one its pods now
            nr.pods = [k for k, p in r.pods.items() if p.node == rec.node_name and (p.state != "deleted" or gone)]
            r.nodes.append(nr)

    def _disruptions(self, r: RunResult) -> None:
        """disruptions, protected and timeline (disruptions.py); each deleted Node names its reason."""
        launching = [e["name"] for e in r.events if e["kind"] == "NodeClaim" and e["reason"] == "DisruptionLaunching"]
        index_of = {n.nodeclaim: n.index for n in r.nodes}
        node_of = {n.nodeclaim: n.name for n in r.nodes}
        order = [c.name for c in r.nodeclaims]
        launching = sorted(set(launching), key=lambda n: order.index(n) if n in order else len(order))
        commands, others = disruptions.read_log(self.log_path)
        commands = disruptions.by_claim(commands, node_of)
        r.disruptions = disruptions.records(self.watch, commands, others, self.claims, self.deleted, index_of,
                                            launching, node_of)
        policies = {np["metadata"]["name"]: ((np.get("spec") or {}).get("disruption") or {}).get("consolidationPolicy", "")
                    for np in self.nodepool_objects}
        r.protected = disruptions.protected(r.events, self.claims, self.live, node_of, policies)
        r.timeline = disruptions.timeline(self.watch, set(launching), {d["nodeClaim"]: d["reason"] for d in r.disruptions},
                                          commands)
        why = {d["nodeClaim"]: d["reason"] for d in r.disruptions}
        for n in r.nodes:
            if n.deleted and n.nodeclaim in why:
                n.deleted = why[n.nodeclaim]


# the provisioner's log message for a pod Validate refused (ignored_pods)
IGNORING_POD = "ignoring pod"
# what a pod's own events say about who deleted it: kube-controller-manager's taint eviction
# (TaintManagerEviction), a drain (Evicted), preemption (Preempted), the kubelet (Killing)
SCHEDULING_REASONS = frozenset({"FailedScheduling", "Scheduled", "Nominated"})


def scenario_replicasets(scenario) -> frozenset[tuple[str, str]]:
    """(namespace, name) of the scenario's own (bare) ReplicaSets."""
    return frozenset((m.obj["metadata"].get("namespace") or "default", m.obj["metadata"]["name"])
                     for m in scenario.manifests if m.obj.get("kind") == "ReplicaSet")


def deletion_causes(r: RunResult, events: list[dict]) -> list[str]:
    """`[deleted] ns/pod: Reason: message` for every deleted pod with an event other than scheduling's,
    the last one: a failure report then says who deleted the pod (report.py prints these lines)."""
    last_of: dict[tuple[str | None, str | None], dict] = {}     # (namespace, pod) -> its last such event
    for e in events:        # one pass: a 1,000-node dump's run has ~2,000 deleted pods and ~13,000 events
        io = e.get("involvedObject") or {}
        if io.get("kind") == "Pod" and e.get("reason") not in SCHEDULING_REASONS:
            last_of[(io.get("namespace"), io.get("name"))] = e
    out = []
    for key, pr in sorted(r.pods.items()):
        if pr.state != "deleted":
            continue
        last = last_of.get((pr.namespace, pr.name))
        out.append(f"[deleted] {key}: " + (f"{last.get('reason')}: {last.get('message') or ''}" if last
                                          else "no event of the pod says by whom"))
    return out


def _provenance(node_labels: dict[str, str], rec, claim_labels: dict[str, str]) -> dict[str, list[LabelWrite]]:
    """Who wrote each label: the stand-ins know their own writes (accepted unless the kubelet exited
    or NodeRestriction refused it); a label on the Node that none of them wrote, or that equals the
    NodeClaim's, is Karpenter core's sync (core registration syncs NodeClaim labels to the Node)."""
    out: dict[str, list[LabelWrite]] = {}
    ok = rec.refused is None and rec.denied is None
    note = rec.refused or rec.denied or ""
    for k, v in rec.self_labels.items():
        if k not in rec.bootstrap.node_labels or rec.bootstrap.node_labels[k] == v:
            out.setdefault(k, []).append(LabelWrite(KUBELET, v, ok, note))
    for k, v in rec.bootstrap.node_labels.items():
        out.setdefault(k, []).append(LabelWrite(rec.bootstrap.labels_writer, v, ok, note))
    for k, v in rec.ccm_labels.items():
        out.setdefault(k, []).append(LabelWrite(CLOUD_NODE_CONTROLLER, v))
    for k, v in rec.csi_labels.items():
        out.setdefault(k, []).append(LabelWrite(KUBELET, v, True, "CSI node registration"))
    for k, v in node_labels.items():
        written = {w.value for w in out.get(k, []) if w.accepted}
        if k in claim_labels and claim_labels[k] == v or v not in written:
            out.setdefault(k, []).append(LabelWrite(KARPENTER_CORE, v))
    return out
