"""What the loop's controllers share: the run's objects, its result and events, and its one seeded
name generator. Controllers receive this object; none of them holds another's data."""
from __future__ import annotations

import random
import string
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harness.backends.base import ADMIN, APIRejected, Cluster
from harness.loop.azure.provider import AzureProvider, Launched
from harness.loop.clock import SimClock
from harness.loop.decisions import DecisionLog
from harness.loop.kube.failedcreate import REASON as FAILED_CREATE, controller_object, failed_create_message
from harness.loop.disruption.memory import ClaimDisruption, DisruptionRun, Nominations, Recorder
from harness.loop.scheduling.pods import PodView
from harness.loop.result import LabelWrite, NodeClaimResult, NodePoolResult, NodeResult, PodResult, RunResult
from harness.loop.scheduling.scheduler import Template
from harness.loop.azure.unavailable import UnavailableOfferings
from harness.loop.scheduling.volumes import VolumeModel
from harness.loop.provisioning.nodeoverlay import NodeOverlays
from harness.model.kube import podtermination
from harness.model.upstream import releases
from harness.model.upstream.corebehaviour import SCOPES, CoreBehaviour
from harness.model.labels.requirements import Requirements
from harness.model.labels.semantics import semantics_for

if TYPE_CHECKING:
    from harness.loop.simulation import SimConfig

NAME_ALPHABET = string.ascii_lowercase + string.digits


@dataclass
class Claim:
    """Loop-side bookkeeping for one NodeClaim, from creation to deletion."""

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
    dis: ClaimDisruption = field(default_factory=ClaimDisruption)   # disruption state (disruption/memory.py)


class SeededStream:
    """A LoopState attribute holding its own `random.Random`, seeded `f"{prefix}-{seed}"` (the run's
    `stream_seed`) and made on first use: a run draws from few of the streams, and seeding one from a
    string (sha512, then the Mersenne Twister's init) was a measurable part of a small run. The seed is
    the same whenever the stream is made, so the draws are too."""

    def __init__(self, prefix: str):
        self.prefix = prefix

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, state: "LoopState | None", owner: type | None = None):
        if state is None:
            return self
        rng = state.__dict__[self.name] = random.Random(f"{self.prefix}-{state.stream_seed}")
        return rng


class LoopState:
    """The run's shared state. `rng` is the one seeded stream for generated names and label
    resolution: controllers draw from it in reconcile order, so a seed replays a run exactly."""

    # the API server's pod UIDs are random: core's scheduling queue orders pods of equal requests
    # created in the same second by UID. Their own stream, so names and offerings drawn from `rng`
    # do not shift with the number of pods.
    uid_rng = SeededStream("pod-uid")
    bind_rng = SeededStream("bind")           # kube-scheduler's selectHost among equal scores
    ready_rng = SeededStream("ready")         # which of a pass's Nodes becomes Ready first
    spread_rng = SeededStream("spread")       # whether a round runs mid-launch (nodesReady: spread)
    queue_rng = SeededStream("queue")         # kube-scheduler's queue as a Node turns Ready (staggered)
    launch_rng = SeededStream("launch")       # which of a pass's launches reaches Azure first
    stagger_rng = SeededStream("stagger")     # ... and whether it starts after the ones before it
    drift_rng = SeededStream("drift")         # drift's order among candidates drifted in one second
    arrive_rng = SeededStream("arrive")       # which workloads of an apply arrive late (podsArrive)
    owned_rng = SeededStream("owned")         # whether a Deployment's pods follow bare ones (controllerPods)
    rollout_rng = SeededStream("rollout")     # whether a rollout's new pods meet the old (rolloutPods)
    daemon_order_rng = SeededStream("daemon-groups")     # a Solve's daemon overhead group order
    nodepool_order_rng = SeededStream("nodepool-order")  # single-node's NodePool interleave
    candidate_order_rng = SeededStream("candidates")     # consolidation's order among tied candidates
    # given.loop.nextCommand raced: when a drained node's instance deletion is asked for, and whether a pass runs
    # right after a drain's evictions (and validates before kube-scheduler tried them)
    termination_spread_rng = SeededStream("termination-spread")
    next_command_rng = SeededStream("next-command")
    # given.loop.replacementFailure raced: whether a provisioning round runs before a failed command untaints
    replacement_failure_rng = SeededStream("replacement-failure")
    preemption_rng = SeededStream("preemption")          # the preemption dry run's offset among the Nodes

    def __init__(self, cfg: "SimConfig", cluster: Cluster, fake, provider: AzureProvider, clock: SimClock,
                 unavailable: UnavailableOfferings, rng: random.Random):
        self.cfg = cfg
        self.profile = cfg.profile
        # notes core's probes where they read (harness/model/upstream/factreads.py)
        self.sem = semantics_for(cfg.profile).for_run()
        self.core = CoreBehaviour.of(cfg.profile)     # core's behaviour at the pinned version
        # the options in effect: a core without MIN_VALUES_POLICY / PREFERENCE_POLICY runs Strict / Respect
        self.min_values_policy = cfg.min_values_policy if self.core["minValuesPolicy"] else "Strict"
        self.preference_policy = cfg.preference_policy if self.core["preferencePolicy"] else "Respect"
        self.many_instance_types = False    # a Solve read maxInstanceTypes (scope manyInstanceTypes)
        # core-behaviour scopes the loop met where the situation arose (touch_scope; harness/loop/corescope.py)
        self.core_scopes: set[str] = set()
        self.cluster = cluster
        self.fake = fake
        self.provider = provider
        self.clock = clock
        self.unavailable = unavailable
        self.rng = rng
        self.result = RunResult(cfg.scenario, cfg.profile.name, cfg.backend, cfg.seed, started=clock.start)
        self.result.release = releases.modeled(cfg.profile)
        self.claims: list[Claim] = []
        self._claim_index: dict[str, Claim] = {}      # claim_by_name's
        self._claims_indexed = 0
        self._protected_index: dict[tuple, dict] = {}    # protected_entry's
        self._protected_indexed = 0
        self.nodes: dict[str, NodeResult] = {}
        self.pod_views: dict[str, PodView] = {}
        # the live pods on no Node (added by create_pod, taken out by place_pod when a pod binds, is deleted or
        # completes), so a pass that takes the pending pods in creation order sorts these, not every pod of the
        # cluster; insertion order means nothing (`pods_unbound` sorts)
        self.unbound: dict[str, None] = {}
        # Node name -> the keys of the live pods bound to it, kept with `unbound` (place_pod), so a pass that
        # groups the pods by Node reads each Node's few (pods_on) rather than every pod of the cluster
        self.on_node: dict[str, dict[str, None]] = {}
        # Node name -> the count of the last change to its pods (place_pod, changed_in_place): what a pass keeps
        # of a Node from an earlier one holds while this is unchanged (binding.KubeScheduler._bound's sums, the
        # provisioner's existing nodes, candidates.Cluster.validate_pods's verdicts)
        self.on_node_changed: dict[str, int] = {}
        self._placements = 0
        # the keys place_pod moved or changed_in_place changed, in order: a reader keeps its place and reads the
        # changes since (podevents.py, pdbstatus.py)
        self.moved: list[str] = []
        self._position: dict[str, int] = {}        # a key's place in result.pods: the run's pod order
        self.daemonsets: list[tuple[dict, PodView]] = []     # (DaemonSet, its pod template as a PodView)
        self.deployments: dict[tuple[str, str], dict] = {}   # (namespace, name) -> the applied Deployment
        self.replicasets: dict[tuple[str, str], dict] = {}   # (namespace, name) -> an applied bare ReplicaSet
        # (owner kind, namespace, owner name) -> the FailedCreate messages its controller recorded (failed_create)
        self.failed_creates: dict[tuple[str, str, str], set[str]] = {}
        self.unmanaged_nodes: list[str] = []                 # Nodes no NodeClaim owns (given.existingNodes)
        self.volumes = VolumeModel()               # PVs, PVCs, StorageClasses (harness/loop/scheduling/volumes.py)
        self.nominated: dict[str, str] = Nominations(       # pod key -> nodeclaim name (and when)
            clock, lambda name: (c := self.claim_by_name(name)) is not None and c.launched is not None)
        self.launches_for: dict[str, int] = {}     # pod key -> NodeClaims created for it
        # pod key -> why it was deleted, while its containers still run (loop/kube/kubelet.py ends it)
        self.terminating: dict[str, str] = {}
        # pod key -> the Node kube-scheduler chose while its VolumeBinding PreBind waits for a volume
        # (loop/kube/binding.py); from Kubernetes 1.35 also the pod's status.nominatedNodeName
        self.prebind: dict[str, str] = {}
        # pod key -> the Node whose lower-priority pods kube-scheduler's preemption deleted for it: the pod's
        # status.nominatedNodeName (harness/loop/kube/preemption.py)
        self.preempting: dict[str, str] = {}
        self._order = 0                            # creation order of pods (kube-scheduler's queue order)
        # (owner kind, namespace, owner name) -> the keys of the pods created for that owner, in creation order
        # (a key created again appears again; pods_of_owner reads each once)
        self._owner_index: dict[tuple[str, str, str], list[str]] = {}
        self.stream_seed = cfg.seed        # the seed of the named streams (SeededStream), each drawn on first use
        self.disruption = DisruptionRun()          # disruption controllers' run state (disruption/memory.py)
        # every decision with its reason (harness/loop/decisions.py): controllers call `decide`
        self.decisions = DecisionLog(clock, self.core, self.result.decisions)
        self.decide = self.decisions.decide
        self.disruption.recorder = Recorder(self)
        self.overlays = NodeOverlays()             # core's NodeOverlay store (harness/loop/provisioning/nodeoverlay.py)

    # -- names and the trace ----------------------------------------------------------------------
    def max_instance_types(self) -> int:
        """core-behaviour.yaml maxInstanceTypes, as a Solve reads it: only for a NodeClaim with more instance types
        than the fewest any core keeps, so a run that read it touched the manyInstanceTypes scope."""
        self.many_instance_types = True
        return int(self.core["maxInstanceTypes"])     # the probe captures it as text

    def touch_scope(self, scope: str) -> None:
        """The run met a situation a core switch decides (harness.model.upstream.corebehaviour.SCOPES), one only the
        controller that meets it can see (a budget counted over a node whose instance is deleting, ...)."""
        if scope not in SCOPES:
            raise KeyError(f"{scope!r} is not a scope of harness/data/core-behaviour.yaml")
        self.core_scopes.add(scope)

    def name(self, prefix: str, n: int = 5) -> str:
        """A generated name (apiserver generateName, ReplicaSet pod names): prefix + n random chars."""
        return prefix + "".join(self.rng.choice(NAME_ALPHABET) for _ in range(n))

    def trace(self, msg: str) -> None:
        self.result.trace.append(f"[t={self.clock.now():.0f}s] {msg}")

    @staticmethod
    def pod_key(obj: dict) -> str:
        return f"{obj['metadata'].get('namespace') or 'default'}/{obj['metadata']['name']}"

    # -- events: on their object (where expectations read them) and, in emission order, on the run --
    def record_event(self, kind: str, name: str, reason: str, message: str, namespace: str | None = None,
                     owner: str | None = None) -> None:
        """`owner`: the workload (`Deployment/web`) whose object (its ReplicaSet) the event is on."""
        ev = {"kind": kind, "name": name, "reason": reason, "message": message, "t": self.clock.now()}
        if namespace is not None:
            ev["namespace"] = namespace
        if owner is not None:
            ev["owner"] = owner
        self.result.events.append(ev)

    def nodepool_event(self, res: NodePoolResult, reason: str, message: str, dedupe: bool = True) -> None:
        if dedupe and {"reason": reason, "message": message} in res.events:
            return
        res.events.append({"reason": reason, "message": message})
        self.record_event("NodePool", res.name, reason, message)

    def pod_event(self, pr: PodResult, message: str) -> None:
        """Karpenter's FailedScheduling event on a pod (sigs.k8s.io/karpenter v1.14.0
        pkg/controllers/provisioning/scheduling/events.go PodFailedToScheduleEvent;
        sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/scheduler.go NewScheduler), once per
        message."""
        if message in pr.events:
            return
        pr.events.append(message)
        self.record_event("Pod", pr.name, "FailedScheduling", message, pr.namespace)

    def condition(self, type_: str, ok: bool, reason: str, message: str = "") -> dict:
        """A status condition with every field the CRDs require (github.com/awslabs/operatorpkg
        status.Condition)."""
        return {"type": type_, "status": "True" if ok else "False", "reason": reason, "message": message,
                "lastTransitionTime": self.clock.timestamp()}

    @staticmethod
    def write(node: NodeResult, writer: str, labels: dict[str, str], accepted: bool = True, note: str = "") -> None:
        """Record who wrote which label on a Node (the provenance expectations read)."""
        for k, v in labels.items():
            node.provenance.setdefault(k, []).append(LabelWrite(writer, str(v), accepted, note))

    def unchanged_since(self) -> tuple | None:
        """A token of what a pass reads of the cluster: the store's count of writes (EmbeddedCluster.writes)
        and the number of live pods (a pod can leave the loop without a write: its delete refused). Two equal
        tokens: the store and the pods' bindings are as they were; None when the backend does not count its
        writes (a real API server), so no pass is skipped there. A controller whose pass is a function of
        these alone skips a pass that would repeat its last one (binding.py, pdbstatus.py, podevents.py)."""
        writes = getattr(self.cluster, "writes", None)
        return None if writes is None else (writes, len(self.pod_views))

    def place_pod(self, key: str, node: str | None) -> None:
        """The pod's Node from now on (None: it left the cluster's Nodes, deleted or completed): its result's
        `node`, the Node's group in `on_node`, and it is no longer unbound either way."""
        pr = self.result.pods[key]
        self._placements += 1
        self.moved.append(key)
        if pr.node:
            group = self.on_node.get(pr.node)
            if group is not None:
                group.pop(key, None)
                if not group:
                    del self.on_node[pr.node]
            self.on_node_changed[pr.node] = self._placements
        pr.node = node
        if node:
            self.on_node.setdefault(node, {})[key] = None
            self.on_node_changed[node] = self._placements
        self.unbound.pop(key, None)

    def changed_in_place(self, key: str) -> None:
        """A live pod's object changed without leaving its Node (terminating, relabelled): what was kept of the
        pod (`moved`) and of its Node's pods is read again."""
        self.moved.append(key)
        node = self.result.pods[key].node
        if node:
            self._placements += 1
            self.on_node_changed[node] = self._placements

    def pods_on(self, node: str) -> list[str]:
        """The keys of the live pods bound to Node `node`, in the run's pod order (result.pods)."""
        group = self.on_node.get(node)
        if not group:
            return []
        return sorted(group, key=self._position.__getitem__) if len(group) > 1 else list(group)

    def pods_unbound(self) -> list[tuple[str, PodView]]:
        """The live pods on no Node with their views, in creation order (kube-scheduler's queue, GetPendingPods)."""
        views = self.pod_views
        return sorted(((k, views[k]) for k in self.unbound), key=lambda kv: kv[1].order)

    # -- lookups ----------------------------------------------------------------------------------
    def claim_by_name(self, name: str) -> Claim | None:
        """The first NodeClaim of that name. `claims` only grows (provisioner.py write_nodeclaim appends), so
        the index catches up with the claims added since it last looked: a lookup per candidate and pod
        stays O(1) in a cluster of thousands of NodeClaims."""
        if self._claims_indexed != len(self.claims):
            for c in self.claims[self._claims_indexed:]:
                self._claim_index.setdefault(c.result.name, c)
            self._claims_indexed = len(self.claims)
        return self._claim_index.get(name)

    def protected_entry(self, node: str, by: str, method: str) -> dict | None:
        """The first entry of result.protected for this node, protection and method. The record only grows,
        so the index catches up with the entries added since it last looked (a pass over a thousand
        protected candidates looks each up)."""
        entries = self.result.protected
        if self._protected_indexed > len(entries):        # replaced: index it again
            self._protected_index, self._protected_indexed = {}, 0
        for p in entries[self._protected_indexed:]:
            self._protected_index.setdefault((p.get("node"), p.get("by"), p.get("method")), p)
        self._protected_indexed = len(entries)
        return self._protected_index.get((node, by, method))

    def node_requested(self, nodes: set[str]) -> dict[str, dict[str, int]]:
        """The summed requests of the pods bound to each of `nodes`, as Karpenter counts them (kube-scheduler's:
        binding.KubeScheduler._bound), each Node's pods summed in creation order."""
        used: dict[str, dict[str, int]] = {}
        views = self.pod_views
        for node in nodes:
            group = self.on_node.get(node)
            if not group:
                continue
            # summed in place into the Node's own dict (resources.add's sums, without a new dict per pod)
            total = used[node] = {}
            for key in sorted(group, key=lambda k: views[k].order):
                for k, v in views[key].requests.items():
                    total[k] = total.get(k, 0) + v
        return used

    # -- pods -------------------------------------------------------------------------------------
    def delete_pod(self, key: str, reason: str) -> None:
        """The pod is deleted through the API and leaves the loop (its result stays, as deleted)."""
        pv = self.pod_views.pop(key, None)
        pr = self.result.pods[key]
        self.terminating.pop(key, None)
        try:
            self.cluster.delete("Pod", pr.name, pr.namespace)
        except APIRejected:
            pass
        self.nominated.pop(key, None)
        self.preempting.pop(key, None)
        self.place_pod(key, None)
        pr.state, pr.reason = "deleted", reason
        pr.at["deleted"] = self.clock.now()
        if pv is not None:
            self.trace(f"pod {key} deleted: {reason}")

    def terminate_pod(self, key: str, reason: str, grace: int | None = None) -> None:
        """A graceful delete (kubectl delete, the eviction API; core's DeleteExpiringPods with `grace`): an
        unbound pod is gone at once; a bound one gets its deletion fields as the API server sets them
        (podtermination.graceful_delete) and stays until the kubelet has stopped its containers
        (harness/model/kube/podtermination.py stops_at; at once without a preStop sleep). (harness simplification:
        the API server's copy is deleted when the kubelet confirms; the terminating state lives on the loop's
        view of the pod.)"""
        pv, pr = self.pod_views.get(key), self.result.pods[key]
        if pv is None or not pr.node:
            self.delete_pod(key, reason)
            return
        now = self.clock.now()
        meta = pv.obj["metadata"]
        fields = podtermination.graceful_delete(meta, pv.spec, now, grace)
        if fields is None:                      # deleted at once
            self.terminating.setdefault(key, reason)
            self.finish_pod(key)
            return
        meta.update(fields)
        self.changed_in_place(key)
        self.terminating.setdefault(key, reason)
        stop = podtermination.stops_at(pv.obj)
        if stop is not None and stop <= now:
            self.finish_pod(key)
        elif fields:
            pr.at.setdefault("terminating", now)
            self.trace(f"pod {key} terminating until {meta['deletionTimestamp']}: {reason}")

    def finish_pod(self, key: str) -> None:
        """The kubelet confirms a terminating pod's end: it leaves the API server and the loop."""
        self.delete_pod(key, self.terminating.pop(key, "deleted"))

    def refused_pod(self, pod: dict, owner_kind: str, owner_name: str, error: APIRejected) -> None:
        """The API server refused to create `pod` (admission: Priority, LimitRanger, ResourceQuota, RuntimeClass):
        a bare Pod is a `rejected` result with the refusal as its reason (`kubectl apply` prints it); a
        workload's pod does not exist, and its controller records FailedCreate (failed_create) and retries
        (kubernetes v1.36.3 pkg/controller/replicaset/replica_set.go manageReplicas)."""
        meta = pod.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
        self.trace(f"pod {key} refused by the API server: {error.message}")
        if not owner_kind:
            self.result.rejected_pods[key] = PodResult(meta.get("name"), meta.get("namespace") or "default",
                                                       state="rejected", reason=error.message,
                                                       labels=dict(meta.get("labels") or {}))
        else:
            self.failed_create(owner_kind, owner_name, meta.get("namespace") or "default", meta.get("name") or "",
                               error)

    def failed_create(self, owner_kind: str, owner_name: str, namespace: str, pod_name: str,
                      error: APIRejected) -> bool:
        """The FailedCreate event the owner's controller records on its object (harness/loop/kube/failedcreate.py),
        once per message (the event recorder folds repeats into a count); whether it was new."""
        kind, name = controller_object(owner_kind, owner_name, self.deployments.get((namespace, owner_name)))
        message = failed_create_message(pod_name, name, error.message, error.validating)
        seen = self.failed_creates.setdefault((owner_kind, namespace, owner_name), set())
        if message in seen:
            return False
        seen.add(message)
        self.record_event(kind, name, FAILED_CREATE, message, namespace, owner=f"{owner_kind}/{owner_name}")
        return True

    def pods_of_owner(self, owner_kind: str, namespace: str, owner_name: str) -> list[str]:
        """The keys of the run's pods (deleted ones included) that `owner_kind` `owner_name` of `namespace`
        created, in the run's pod order: an index, where a scan of every pod per Deployment made an apply of a
        dump's Deployments Deployments x pods."""
        pods = self.result.pods
        return [k for k in dict.fromkeys(self._owner_index.get((owner_kind, namespace, owner_name), ()))
                if (pr := pods[k]).owner_kind == owner_kind and pr.owner_name == owner_name and pr.namespace == namespace]

    def newest_pod_of(self, owner_kind: str, namespace: str, owner_name: str) -> PodView | None:
        """The newest live pod `owner_kind` `owner_name` of `namespace` created, read from the end of its index:
        a key created later has a higher order."""
        views = self.pod_views
        for k in reversed(self._owner_index.get((owner_kind, namespace, owner_name), ())):
            pv = views.get(k)
            if pv is not None and pv.owner_kind == owner_kind and pv.owner_name == owner_name and pv.namespace == namespace:
                return pv
        return None

    def adopt_pod(self, key: str, owner_kind: str, owner_name: str) -> None:
        """A live pod no workload of the loop owned becomes `owner_kind` `owner_name`'s (a controller adopts a
        pod its selector matches: a seeded pod of a StatefulSet applied after it)."""
        pv, pr = self.pod_views[key], self.result.pods[key]
        pv.owner_kind, pv.owner_name = owner_kind, owner_name
        pr.owner_kind, pr.owner_name = owner_kind, owner_name
        self._owner_index.setdefault((owner_kind, pv.namespace, owner_name), []).append(key)

    def create_pod(self, pod: dict, owner_kind: str, owner_name: str, node: str | None = None) -> None:
        """Create a pod through the API (as its owner's controller would) and track it; `node`
        binds it at once (a DaemonSet pod is created for its Node)."""
        pod.setdefault("metadata", {}).setdefault("namespace", "default")
        pod.setdefault("spec", {}).setdefault("containers", [])
        created = self.cluster.create(pod, ADMIN)
        key = self.pod_key(created)
        self._order += 1
        self.pod_views[key] = PodView(created, self._order, owner_kind, owner_name,
                                      queue_key=(int(self.clock.now()), self.uid_rng.random()),
                                      pod_level_resources=self.core["podLevelResources"])
        self._owner_index.setdefault((owner_kind, created["metadata"]["namespace"], owner_name), []).append(key)
        self._position.setdefault(key, len(self._position))
        self.result.pods[key] = PodResult(created["metadata"]["name"], created["metadata"]["namespace"],
                                          owner_kind, owner_name,
                                          labels=dict(created["metadata"].get("labels") or {}),
                                          requests=dict(self.pod_views[key].requests),
                                          at={"created": self.clock.now()})
        if self.decisions.enabled and self.pod_views[key].host_ports:     # what `--why` says of host ports
            self.result.why_facts.setdefault("hostPorts", {})[key] = [
                f"{hp.port}/{hp.protocol}" + (f" on {hp.ip}" if hp.ip not in ("0.0.0.0", "::") else "")
                for hp in self.pod_views[key].host_ports]
        if node:
            self.cluster.bind(created, node, ADMIN, read_back=False)
            self.place_pod(key, node)
            self.result.pods[key].state = "scheduled"
            self.result.pods[key].at["bound"] = self.clock.now()
        else:
            self.unbound[key] = None
