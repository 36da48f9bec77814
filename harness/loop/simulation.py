"""The provisioning loop: pending pods -> NodeClaims -> VMs -> registered, labeled Nodes -> bound pods.

`Simulation` is the orchestrator: it builds the shared state (harness/loop/state.py) and one
controller per upstream controller (in provisioning/, lifecycle/, disruption/ and kube/), and runs them,
each iteration, in the order they act on a real cluster:

  kube-scheduler binds -> Karpenter provisions -> launch (Azure SDK -> fakeazure) -> lifecycle
  (kubelet registers, CSI node, cloud node controller, Karpenter registration, initialization +
  DaemonSet pods) -> kube-scheduler binds -> liveness -> in-place update (AKS machines) -> garbage collection

(NodePool validation/readiness runs after each apply.) It stops at a steady state (no controller
changed anything and no timeout is pending; a launch that fails again as before changes nothing, and its
launch timeout is left to a step's `advance`: docs/architecture/loop.md), at `max_iterations`, at
`horizon`, or on runaway provisioning: a pod
that keeps causing NodeClaims without ever binding (design 0006 FAQ; `runaway_threshold`). When
nothing changes but a timeout is pending, the clock jumps to it.
"""
from __future__ import annotations

import contextlib
import dataclasses
import itertools
import random
import time
from dataclasses import dataclass, field

from harness.backends.base import Cluster
from harness.backends.kinds import WORKLOAD_KINDS
from harness.loop.azure import drift as azuredrift
from harness.loop.assumed import notice
from harness.loop.azure.provider import AzureProvider, request_log
from harness.loop.clock import SimClock
from harness.loop.corescope import touched_scopes
from harness.loop.kube.binding import KubeScheduler
from harness.loop.disruption.controller import DisruptionController, record_garbage_collected
from harness.loop.lifecycle.expiration import Expiration
from harness.loop.lifecycle.garbagecollection import GarbageCollection
from harness.loop.lifecycle.inplaceupdate import InPlaceUpdate
from harness.loop.lifecycle.initialization import Initialization
from harness.loop.kube.jobs import Jobs
from harness.loop.kube.kubelet import Kubelet
from harness.loop.kube.kubectl import Kubectl
from harness.loop.lifecycle.launch import Launch
from harness.loop.lifecycle.liveness import Liveness, unlaunched_timeout
from harness.loop.lifecycle.conditions import NodeClaimDisruption, next_consolidatable
from harness.loop.provisioning.nodepool import NodePoolStatus, take_terms
from harness.loop.lifecycle.nodetermination import NodeTermination, termination_conditions
from harness.model.kube.kubetime import rfc3339
from harness.loop.disruption.orchestration import Orchestration
from harness.loop.kube.pdbstatus import PDBStatus
from harness.loop.lifecycle.podevents import PodEvents
from harness.loop.provisioning.provisioner import Provisioner
from harness.loop.disruption.simulate import deleting_pods
from harness.loop.lifecycle.registration import Registration
from harness.loop.state import Claim, LoopState, SeededStream
from harness.loop.kube.statefulsets import StatefulSets
from harness.loop.provisioning.staticcapacity import StaticCapacity, static_drift_notice
from harness.loop.lifecycle.health import NodeHealth, repair_notice
from harness.loop.lifecycle.termination import Termination
from harness.loop.kube.workloads import Workloads
from harness.loop.disruption.memory import Command
from harness.loop.azure.nodeimages import NodeImages
from harness.loop.scheduling.pods import PodView
from harness.loop.result import NodeResult, RunResult
from harness.loop.scheduling.scheduler import Template
from harness.model.kube.crashloop import CrashLoop
from harness.model.azure.itcache import InstanceTypeCache
from harness.loop.azure.unavailable import UnavailableOfferings
from harness.model.azure import instancetypes as itmod
from harness.model.labels.wellknown import INSTANCE_TYPE
from harness.model.upstream.profile import Profile

ITERATION_SECONDS = 10.0          # harness assumption: simulated time one busy iteration takes
REGISTRATION_PASSES = 3           # kubelet, Karpenter registration and initialization in one iteration
# the provisioner's batcher closes a window once no pod arrived for this long (sigs.k8s.io/karpenter v1.14.0
# pkg/operator/options/options.go BatchIdleDuration, default 1s; pkg/controllers/provisioning/batcher.go Wait)
BATCH_IDLE_SECONDS = 1.0
MAX_ITERATIONS = 60               # harness guard against a loop that never settles; core has none
# given.loop.nextCommand raced: the longest a delete command's nominations are held while its nodes terminate
# (Simulation._hold_nominations; harness assumption: the loop's own termination of an unblocked command - the
# drain's 5 s, a spread of up to 20 s, the instance's 5 s requeue, on 10 s iterations - ends within it, and a
# drain a PDB or do-not-disrupt holds longer outlasts any nomination window)
NOMINATION_HOLD_LIMIT = 60.0


def iteration_bound(seeded_nodes: int) -> int:
    """`given.loop.maxIterations` when the scenario gives none: 60 busy passes, plus one per node the
    scenario starts with. Core's controllers run until nothing changes; the bound only stops an
    oscillation. A customer's cluster may need a pass per node (single-node consolidation deletes one
    node a command) and a multi-node command waits several passes, so a fixed 60 ended a 400-node dump
    `not steady` where core settles (docs/benchmarks/customer-scale.md)."""
    return MAX_ITERATIONS + max(0, seeded_nodes)
DEFAULT_SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"


@dataclass
class SimConfig:
    scenario: str
    profile: Profile
    backend: str
    seed: int
    cluster: "itmod.ClusterParams"
    max_iterations: int = MAX_ITERATIONS
    runaway_threshold: int = 3
    min_values_policy: str = "Strict"
    preference_policy: str = "Respect"     # Karpenter's PREFERENCE_POLICY (core pkg/operator/options/options.go)
    # "kube-scheduler" (default): the stand-in binds by its filters and scores; "nominated": a pod binds only to
    # the node Karpenter planned for it, as core's tests bind (harness/loop/kube/binding.py)
    binding: str = "kube-scheduler"
    # "together" (default): a launch's Nodes meet kube-scheduler at once; "staggered": they become Ready one
    # at a time in a seeded order, kube-scheduler binding after each (Simulation._lifecycle_staggered);
    # "spread": as staggered, and Karpenter's provisioner may run a round between two of them (seeded)
    nodes_ready: str = "together"
    # "together" (default): the pods one apply brings reach Karpenter's provisioning batch together;
    # "staggered": each workload after the first lands before or after the first round, in a seeded choice
    # (loop/kube/workloads.py Workloads.late, Simulation._arrive_late)
    pods_arrive: str = "together"
    # "together" (default): a pass's launches all chose their offerings before any failed; "staggered": each
    # after the first starts before or after the ones ahead of it finished, in a seeded choice (loop/lifecycle/launch.py)
    launches: str = "together"
    # "first" (default): an apply's Deployments create their pods before its bare Pods; "raced": each
    # Deployment's pods come before or after the apply's bare Pods, in a seeded choice (loop/kube/workloads.py)
    controller_pods: str = "first"
    # "after" (default): a rollout's new pod comes once the old pod it replaces is gone; "raced": in a seeded
    # choice per step, while the old pod still holds its node (loop/kube/rollout.py)
    rollout_pods: str = "after"
    # "afterDrain" (default): the disruption controller's next pass runs once the last command's nodes are gone and
    # their pods placed; "raced": a pass also runs while a command's nodes terminate, each node's termination
    # ending in its own seeded time, and right after a drain's evictions in a seeded choice, before kube-scheduler
    # placed the evicted pods (Simulation._terminating, _pass_before_binding; loop/lifecycle/nodetermination.py), and a
    # delete command's nominations held until its nodes are gone, in a seeded choice (_hold_nominations)
    next_command: str = "afterDrain"
    # "untaintFirst" (default): a command whose replacement NodeClaim was deleted untaints its candidates before
    # Karpenter's provisioner runs again; "raced": in a seeded choice per such command, a provisioning round
    # runs first, while the candidates are still marked for deletion (loop/disruption/orchestration.py _fail)
    replacement_failure: str = "untaintFirst"
    feature_gates: dict = field(default_factory=dict)      # Karpenter's --feature-gates (SpotToSpotConsolidation)
    # "retail": the public cloud's Retail Prices API (the fake's price service); "compiled-in": the
    # release's own table, spot = on-demand (harness/loop/azure/provider.py AzureProvider.prices)
    pricing: str = "retail"
    # given.loop.horizon: seconds of its clock each converge runs at most (None: until steady)
    horizon: float | None = None
    # given.loop.nodeBoot: seconds of its clock a launched VM takes to register its Node (a kubelet's boot)
    node_boot: float = 0.0
    # given.loop.vmDelete: seconds of its clock Azure takes to delete a VM once the provider asks
    # (loop/lifecycle/nodetermination.py NodeTermination._vm_deleting)
    vm_delete: float = 0.0
    # the timing keys of given.loop the scenario sets; the others are assumed (harness/loop/assumed.py)
    timings_given: frozenset = frozenset()

    @property
    def ready_one_by_one(self) -> bool:
        """Whether a launch's Nodes turn Ready one at a time (nodesReady staggered or spread)."""
        return self.nodes_ready in ("staggered", "spread")


class Simulation:
    """One run of the loop over a cluster backend and a fake Azure."""

    # given.loop.nextCommand raced: whether a delete command's nodes are gone before its nominations end
    # (_hold_nominations); a stream of its own, so the loop's other draws do not move
    nomination_hold_rng = SeededStream("nomination-hold")

    def __init__(self, cfg: SimConfig, cluster: Cluster, fake, compute, network, clock: SimClock | None = None,
                 it_cache: InstanceTypeCache | None = None, aks=None):
        """`it_cache`: the InstanceTypeCache the provider builds instance types with (default: its
        own); a caller running many scenarios passes one, so runs reading the same SKUs share the
        static parts built from them (harness/model/azure/itcache.py). `aks`: the machines pool's API
        (harness/loop/azure/aksapi.py AKSMachines) an AKS Machine API mode creates in."""
        self.cfg = cfg
        clock = clock or SimClock()
        unavailable = UnavailableOfferings(clock)
        provider = AzureProvider(fake=fake, compute=compute, network=network, profile=cfg.profile,
                                 cluster=cfg.cluster, unavailable=unavailable, rng=random.Random(cfg.seed + 1),
                                 subscription_id=getattr(fake, "subscription_id", DEFAULT_SUBSCRIPTION),
                                 cache=it_cache, pricing=cfg.pricing, aks=aks)
        self.state = LoopState(cfg, cluster, fake, provider, clock, unavailable, random.Random(cfg.seed))
        provider.on_event = self.state.record_event
        self.termination = Termination(self.state)
        self.jobs = Jobs(self.state)
        self.kubelet = Kubelet(self.state)
        self.statefulsets = StatefulSets(self.state)
        self.workloads = Workloads(self.state, self.jobs, self.statefulsets)
        self.nodepools = NodePoolStatus(self.state)
        self.kube_scheduler = KubeScheduler(self.state)
        self.provisioner = Provisioner(self.state)
        self.launch = Launch(self.state, self.termination)
        self.registration = Registration(self.state)
        self.initialization = Initialization(self.state)
        self.liveness = Liveness(self.state, self.termination)
        self.gc = GarbageCollection(self.state, self.termination)
        self.inplace = InPlaceUpdate(self.state)
        # disruption (harness/loop/disruption/controller.py and the modules it names)
        self.podevents = PodEvents(self.state)
        self.pdbs = PDBStatus(self.state)
        self.nodeclaim_disruption = NodeClaimDisruption(self.state)
        self.node_termination = NodeTermination(self.state, self.termination)
        self.queue = Orchestration(self.state, self.provisioner, self.node_termination)
        self.expiration = Expiration(self.state, self.node_termination)
        # node repair (the NodeRepair gate, the provider's RepairPolicies): loop/lifecycle/health.py
        self.health = NodeHealth(self.state, self.node_termination)
        # static NodePools (spec.replicas, the StaticCapacity gate): loop/provisioning/staticcapacity.py
        self.static = StaticCapacity(self.state, self.provisioner, self.node_termination, self.termination)
        self.disruption = DisruptionController(self.state, self.provisioner, self.queue)
        # a step's kubectl verbs, and a drain's retried evictions (loop/kube/kubectl.py)
        self.kubectl = Kubectl(self.state, self.node_termination, self.workloads, self.pdbs.reconcile)
        self.provisioner.deleting_pods = lambda: deleting_pods(self.state)
        # the node image versions the provider has listed, and one AKS published since (nodeimages.py)
        self.images = NodeImages(cfg.profile.provider.get("nodeImageCache"),
                                 float(cfg.profile.provider.get("nodeImageRequeue") or 0))
        self.started = False            # the operator's start ran (converge)
        self.paused: tuple[str, ...] = ()   # NodeClaims in flight when converge(until="launch") stopped
        self.exited: str | None = None  # why the controller exited at its start (a panic), if it did
        self.crashloop = CrashLoop()    # the kubelet's back-off for the controller's container (crash steps)
        # nextCommand raced (_hold_nominations): the commands seen so far, and the delete commands whose nodes
        # terminate within the nomination window their start set, with the NodeClaims it nominated
        self._commands_seen = 0
        self._held: list[tuple[Command, list[Claim]]] = []
        # whether one settle launched NodeClaims at two instants or deleted one it launched: the run's outcome may
        # hang on how long a VM boots (assumed.py)
        self._boot_overlapped = False

    @property
    def stream_seed(self) -> int:
        """The seed of the simulation's own named streams (SeededStream), the loop state's."""
        return self.state.stream_seed

    # -- what callers read ----------------------------------------------------------------------------
    @property
    def profile(self) -> Profile:
        return self.state.profile

    @property
    def sem(self):
        return self.state.sem

    @property
    def cluster(self) -> Cluster:
        return self.state.cluster

    @property
    def fake(self):
        return self.state.fake

    @property
    def clock(self) -> SimClock:
        return self.state.clock

    @property
    def provider(self) -> AzureProvider:
        return self.state.provider

    @property
    def unavailable(self) -> UnavailableOfferings:
        return self.state.unavailable

    @property
    def result(self) -> RunResult:
        return self.state.result

    @property
    def claims(self) -> list[Claim]:
        return self.state.claims

    @property
    def nodes(self) -> dict[str, NodeResult]:
        return self.state.nodes

    @property
    def pod_views(self) -> dict[str, PodView]:
        return self.state.pod_views

    def trace(self, msg: str) -> None:
        self.state.trace(msg)

    def _facts_consulted(self, result: RunResult) -> tuple[list[str], list[str]]:
        """The facts the run noted (harness/model/upstream/factreads.py), a size's offerings counted where a
        NodePool (nodepool.py take_sizes) or a NodeClaim of the run could take the size or a Node held it; and
        those noted only for sizes none could (RunResult.facts_listed_only)."""
        reads, probes = self.state.provider.fact_reads, self.state.sem.reads
        for c in result.nodeclaims:
            take_terms(self.state, c.requirements)
        held = {n.instance_type for n in result.nodes} | {c.labels.get(INSTANCE_TYPE) or "" for c in result.nodeclaims}
        if probes.every_size:
            reads.read_every_size()
        facts, listed_only = reads.consulted(itmod.size_taken(reads.takers.values(), held))
        return [*facts, *probes.noted], listed_only

    def templates(self, record: bool = True) -> list[Template]:
        """The NodeClaimTemplates a provisioning pass builds now (Provisioner.templates);
        `record=False` (the why view) leaves the run's result alone."""
        return self.provisioner.templates(record)

    # -- what callers drive ---------------------------------------------------------------------------
    def set_cluster(self, cluster: "itmod.ClusterParams") -> None:
        """New operator settings (between steps): the provider's resource group and instance
        types follow them; a node image AKS publishes waits for the provider's image cache (nodeimages.py)."""
        held = self.images.published
        cluster = self.images.change(self.cfg.cluster, cluster, self.clock.now())
        if self.images.published is not None and self.images.published != held:
            why = (f"node image {self.images.published} was published; the provider lists node images through its "
                   f"{self.images.cache / 3600:g} h cache (provider.nodeImageCache) and moves status.images to it at "
                   f"{rfc3339(self.images.relist_at())}: until then launches boot, and drift compares with, "
                   f"{cluster.node_image_version or 'the image it listed'}")
            self.trace(f"[images] {why}")
            self._record_images("image-kept", why)
        self.cfg.cluster = cluster
        self.provider.set_cluster(cluster)

    def _record_images(self, action: str, why: str) -> None:
        """The image status controller's decision, on every AKSNodeClass and naming the NodeClaims it concerns
        (`--why` of a node still on the old image finds it)."""
        s = self.state
        if not s.decisions.enabled:
            return
        claims = tuple(f"NodeClaim/{c.result.name}" for c in s.claims if not c.done and c.launched is not None)
        for nc in s.cluster.list("AKSNodeClass"):
            s.decide("nodeclass.images", action, f"AKSNodeClass/{nc['metadata']['name']}", why, claims)

    def _images_due(self) -> None:
        """The held node image once the provider lists it (nodeimages.py): the AKSNodeClass's status moves."""
        cluster = self.images.due(self.cfg.cluster, self.clock.now())
        if cluster is not None:
            why = (f"the provider lists node image {cluster.node_image_version} (its image cache expired): "
                   f"status.images move to it, and a VM on another image drifts "
                   f"({azuredrift.image_reason(self.cfg.profile)})")
            self.trace(f"[images] {why}")
            self._record_images("image-listed", why)
            self.cfg.cluster = cluster
            self.provider.set_cluster(cluster)

    def apply(self, manifests: list[dict]) -> None:
        """Create the manifests (copies; the caller's dicts are not changed)."""
        self.workloads.apply(manifests)
        if any(m.get("kind") == "PodDisruptionBudget" for m in manifests):
            self.pdbs.enabled = True

    def own_replicasets(self, manifests: list[dict]) -> None:
        """The scenario's bare ReplicaSets, known before the existing nodes are seeded: a seeded pod naming one
        is that ReplicaSet's (loop/seed.py), which counts it when applied after them."""
        self.state.replicasets.update({(m["metadata"].get("namespace") or "default", m["metadata"]["name"]): m
                                       for m in manifests if m.get("kind") == "ReplicaSet"})

    def seed(self, entries: list[dict]):
        """Existing Nodes, NodeClaims and running pods before the first pass (loop/seed.py)."""
        from harness.loop.seed import seed_existing_nodes
        # the existing nodes were launched before the scenario's faults began: the real engine seeds
        # them the same way (runner/engines/real/engine.py RealRun.seed)
        held = self.fake.faults_held() if hasattr(self.fake, "faults_held") else contextlib.nullcontext()
        with held:
            seeded = seed_existing_nodes(self, entries)
        # the PDBs' status in the state the scenario starts from covers its running pods (kube-controller-
        # manager's disruption controller computed it long ago): the first pass reads it, and a deleting
        # node's drain evicts by it
        self.pdbs.reconcile()
        return seeded

    def validate_nodepools(self) -> None:
        """NodePool validation and readiness (loop/provisioning/nodepool.py); run after every apply, once
        the controller is up."""
        if self._start():
            self.nodepools.reconcile()

    def _start(self) -> bool:
        """Whether the controller runs. Its start lists the SKUs and panics when that fails
        (AzureProvider.start); then no Karpenter controller acts for the rest of the run (a cluster's
        kubelet would restart the pod after CrashLoopBackOff; the harness models the first start only,
        as the real engine does) and the exit is recorded as a `Log` event of the operator."""
        if not self.started:
            self.started = True
            self.images.listed_at = self.clock.now()     # its first listing (nodeimages.py)
            self.exited = self.provider.start()
            if self.exited:
                self.state.record_event("Log", "operator", "controller exited", self.exited)
                self.trace(f"[operator] the controller exited at its start: {self.exited}")
        return self.exited is None

    def restarted(self) -> None:
        """The controller's process starts again: before the first pass (given.restrict, after the existing nodes
        launched), or mid-run (a `crash` step: crash). What it held in memory is gone and what the API server holds
        is read anew (sigs.k8s.io/karpenter v1.14.0; the whole list: docs/architecture/loop.md "A controller
        restarted"): its start lists the SKUs again and the provider forgets its unavailable offerings (provider
        v1.14.0 pkg/cache/unavailableofferings.go, a cache in memory); podevents stamps every NodeClaim with a pod
        anew (podevents.py relisted); the orchestration queue's commands are gone (pkg/controllers/disruption/
        queue.go), so a command's replacements stay as NodeClaims of their own and its candidates not deleted yet
        are no longer marked for deletion (pkg/controllers/state/statenode.go markedForDeletion, in memory): the
        next pass takes their karpenter.sh/disrupted taint and DisruptionReason off (controller.go Reconcile); a
        consolidation waiting out its validation is dropped, nominations end (statenode.go nominatedUntil), every
        method looks again (state/cluster.go ConsolidationState) and the event recorder forgets what it deduped
        (pkg/events/recorder.go). Conditions, lastPodEventTime, taints and deletions under way are the API
        server's and stay. Before the first pass nothing of this has run yet."""
        if not self.started or self.exited is not None:
            return
        s = self.state
        lost = s.disruption.active()
        for cmd in lost:
            s.disruption.finish(cmd, succeeded=False)
            for name in cmd.candidates:
                c = s.claim_by_name(name)
                if c is not None and not c.done and c.dis.deleting_since is None:
                    c.dis.marked_for_deletion = False
        if lost:
            self.trace(f"[operator] the restart lost {len(lost)} disruption command(s) in flight: "
                       + ", ".join(f"{cmd.reason}/{cmd.uuid}" for cmd in lost))
        self.disruption.forget()
        s.nominated.clear()
        s.nominated.times.clear()
        for c in s.claims:
            c.dis.nominated_until = float("-inf")
        self._held = []
        s.disruption.recorder.forget()
        self.unavailable.forget()
        self.started = False
        self._start()
        self.podevents.relisted()

    def crash(self, why: str) -> None:
        """A `crash` step: the controller's process dies now and its pod starts it again when the kubelet's
        back-off allows (harness/model/kube/crashloop.py; the clock runs meanwhile with no Karpenter controller acting),
        then restarted(); the restart goes on the result."""
        now = self.clock.now()
        e = self.crashloop.exited(now, why, planned=True)
        if e.restart_at > now:
            self.trace(f"[operator] CrashLoopBackOff: the kubelet starts the controller again in "
                       f"{e.restart_at - now:.0f}s")
            self.clock.advance(e.restart_at - now)
        self.trace(f"[operator] the controller was killed ({why}) and started again")
        self.result.restarts.append(dataclasses.asdict(e))
        self.restarted()

    def run(self, manifests: list[dict], existing: list[dict] | None = None) -> RunResult:
        """Apply the manifests, seed the existing nodes (given.existingNodes: loop/seed.py),
        and converge."""
        t0 = time.perf_counter()
        if existing:       # classes and pools, then the existing nodes, then the workloads
            self.own_replicasets(manifests)
            self.apply([m for m in manifests if m.get("kind") not in WORKLOAD_KINDS])
            self.validate_nodepools()
            self.seed(existing)
            self.apply([m for m in manifests if m.get("kind") in WORKLOAD_KINDS])
        else:
            self.apply(manifests)
            self.validate_nodepools()
        self.converge()
        self.result.timings["run"] = time.perf_counter() - t0
        return self.result

    def converge(self, until: str | None = None) -> RunResult:
        """Iterate until steady, runaway or max_iterations; then fill in the result. `until="launch"`
        (a step's `during: launch`): stop once a launch leaves a NodeClaim in flight - launched, its Node
        not registered - before its lifecycle runs, and name those in `paused`."""
        result, clock = self.result, self.clock
        if self.paused:
            # the pods a `during: launch` step brought are planned once the batch window closes, so the
            # NodeClaims of that round launch (and register) that much after the ones in flight
            clock.advance(BATCH_IDLE_SECONDS)
        self.paused = ()
        before = len(self.claims)
        if not self._start():           # no Karpenter controller: kube-scheduler binds what it can
            self.provisioner.record_catalog()
            while self.workloads.rollouts.reconcile() | self.statefulsets.reconcile() | self.workloads.reconcile() | self.kube_scheduler.reconcile():
                result.iterations += 1
            result.steady = True
            self._finish()
            return result
        end = clock.now() + self.cfg.horizon if self.cfg.horizon is not None else None
        for _ in range(self.cfg.max_iterations):
            result.iterations += 1
            self._images_due()
            progress = self.jobs.reconcile()
            progress |= self.workloads.rollouts.reconcile()
            progress |= self.workloads.reconcile()
            progress |= self.kubelet.reconcile()
            progress |= self.statefulsets.reconcile()
            progress |= self.kube_scheduler.reconcile()
            progress |= self.provisioner.reconcile()
            progress |= self.static.reconcile()
            progress |= self.launch.reconcile()
            progress |= self._arrive_late()
            if until == "launch" and self._in_flight():
                self.paused, result.steady = tuple(self._in_flight()), False
                self.trace(f"[settle] stopped with {', '.join(self.paused)} in flight for the next step (during: launch)")
                break
            if self.cfg.ready_one_by_one:
                progress |= self._lifecycle_staggered()
            else:
                for _ in range(REGISTRATION_PASSES):
                    progress |= self._lifecycle()
            progress |= self.kube_scheduler.reconcile()
            progress |= self.kubectl.reconcile()
            progress |= self.liveness.reconcile()
            progress |= self.inplace.reconcile()
            progress |= self.gc.reconcile()
            if self._detect_runaway():
                break
            if not progress and self.gc.reconcile(force=True):
                progress = True       # a VM vanished (eviction) while the cluster looked steady
            progress |= self._disrupt(quiet=not progress)
            if not progress:
                # a launch that only fails again as before is quiet (loop/lifecycle/launch.py): its launch timeout
                # is core's next move, five minutes on, which a step's `advance` reaches; the real engine's
                # settle stops watching before it the same way (docs/architecture/loop.md)
                repeating = frozenset(c.result.name for c in self.launch.repeating())
                deadline = self.liveness.next_deadline(skip=repeating)
                if deadline is not None and not any(c.refused or c.launched is None for c in self.claims
                                                    if not c.done and c.result.name not in repeating):
                    deadline = None
                # a timeout fires a second past its deadline; a VM registers at its boot time, so launches
                # a batch window apart register apart (one round's Nodes may take the pods of the next)
                waits = [d + 1 for d in (deadline, self._disruption_deadline()) if d is not None]
                waits += [d for d in (self._boot_deadline(), self.gc.next_round(),
                                      self.workloads.rollouts.next_deadline(), self.statefulsets.next_deadline())
                          if d is not None]
                if not waits:
                    result.steady = True
                    if repeating:
                        self.trace(f"[settle] steady: nothing changes but {self._retrying()}")
                    break
                step = max(min(waits) - clock.now(), 0)
            else:
                step = ITERATION_SECONDS
            if end is not None and clock.now() + step > end:
                result.steady = False         # watched as long as asked (given.loop.horizon)
                self.trace(f"[settle] not steady at the horizon (given.loop.horizon {self.cfg.horizon:g}s)"
                           + (f"; {self._retrying()}" if self.launch.repeating() else ""))
                break
            clock.advance(step)
        else:
            n = self.cfg.max_iterations
            self.trace(f"[settle] not steady after {n} iteration{'' if n == 1 else 's'} (given.loop.maxIterations)"
                       + (f"; {self._retrying()}" if self.launch.repeating() else ""))
        launched = [c for c in self.claims[before:] if c.launched_at is not None]
        if len({c.launched_at for c in launched}) > 1 or any(c.done for c in launched):
            self._boot_overlapped = True
        self._finish()
        return result

    def _retrying(self) -> str:
        """The NodeClaims whose launch fails again as before, with how often and until when core retries."""
        parts = []
        for c in self.launch.repeating():
            at, _ = unlaunched_timeout(self.state, c)
            n = self.launch.retried[c.result.name]
            parts.append(f"NodeClaim {c.result.name}'s launch failing as before ({c.result.failure['reason']}, "
                         f"{n} identical retr{'y' if n == 1 else 'ies'}), which core retries until its launch timeout at "
                         f"{rfc3339(at)}")
        return "; ".join(parts)

    def advance(self, seconds: float) -> None:
        """A step's `advance`: time passes, and every timer the loop has that falls inside it fires at its time,
        each followed by a pass to steadiness, rather than all at the window's end (_timer_before). A timer
        firing stands for what the next look of the controller it concerns sees: core's disruption controller
        polls every 10 s, its provisioner every 10 s for a pending pod, its NodeClaim garbage collector every
        2 minutes; the loop looks at the instant (docs/architecture/loop.md "Timers")."""
        end = self.clock.now() + seconds
        while self.started and self.exited is None:
            at = self._timer_before(end)
            if at is None:
                break
            self.clock.advance(at - self.clock.now())
            self.converge()
        if end > self.clock.now():
            self.clock.advance(end - self.clock.now())

    def _timer_before(self, end: float) -> float | None:
        """The first instant in (now, end) at which something the loop reads changes with the clock alone:
        expireAfter, consolidateAfter, a draining node's terminationGracePeriod, a Job's pods and deadlines and a
        CronJob's schedule, a terminating pod's containers stopping, launch and registration timeouts, the node
        image cache; a budget window's edge that changes an allowance and a duration-valued do-not-disrupt
        annotation ending (DisruptionController.next_clock_change); the provider reading the SKUs again, and an
        hourly instance type check that finds a NodeClaim's type gone; an unavailable offering coming back while
        a pod waits for provisioning; and a Spot eviction a fault rule makes (the fake's own clock)."""
        now = self.clock.now()
        nodepools = self.state.cluster.list("NodePool")
        # a launch or registration timeout fires a second past its deadline, as in converge
        liveness = self.liveness.next_deadline()
        offering = self.unavailable.next_expiry()
        if offering is not None and not (offering < end and self.provisioner.pending_pods()):
            offering = None
        eviction = getattr(self.fake, "next_eviction", None)
        times = [t for t in (self.expiration.next_deadline(), self.health.next_deadline(),
                             next_consolidatable(self.state, nodepools),
                             self.node_termination.grace_deadline(), self.jobs.next_deadline(),
                             self.kubelet.next_stop(), liveness + 1 if liveness is not None else None,
                             self.images.relist_at(), self.disruption.next_clock_change(end), offering,
                             eviction() if eviction is not None else None, self.provider.next_sku_read(),
                             self.nodeclaim_disruption.next_type_check(nodepools))
                 if t is not None and now < t < end]
        return min(times, default=None)

    # -- the steps ----------------------------------------------------------------------------------
    def _disrupt(self, quiet: bool) -> bool:
        """The disruption side of one iteration, in the order a pass sees it: pod events and PDB
        status, the NodeClaims' Drifted/Consolidatable conditions, expiration, the disruption
        controller's methods, the orchestration queue, then termination (drain, eviction, instance
        deletion). Each is core's controller of the same name (harness/loop/lifecycle/, disruption/, kube/). The
        conditions and the disruption controller's methods run once provisioning is `quiet` (this
        iteration changed nothing else): core's candidates must be initialized and not nominated
        for a pending pod, so a pass while provisioning is still moving decides nothing (harness
        simplification of the disruption controller's 10 s polling; `given.loop.nextCommand: raced` also runs
        the passes a command's drain meets: _terminating)."""
        s = self.state
        record_garbage_collected(s)
        if not any(not c.done and c.launched is not None for c in s.claims):
            return False
        self.podevents.reconcile()
        self.nodeclaim_disruption.observe()
        progress = self.expiration.reconcile()
        progress |= self.health.reconcile()
        raced = self.cfg.next_command == "raced"
        gone = raced and self._hold_nominations()
        if quiet or self.disruption.pending is not None or (raced and self._terminating()) or gone:
            progress |= self._disruption_pass()
        progress |= self.queue.reconcile()
        evicting = raced and self._terminating()
        before = len(s.result.pods)         # only added to: an evicted pod's replacement is a new entry
        progress |= self.node_termination.reconcile()
        if evicting and len(s.result.pods) != before and s.next_command_rng.random() < 0.5:
            progress |= self._pass_before_binding(before)
        return progress

    def _pass_before_binding(self, before: int) -> bool:
        """`given.loop.nextCommand: raced`: the disruption controller's pass right after a drain evicted pods,
        before kube-scheduler tried their replacements. Core's pass lists a pending pod only once kube-scheduler
        marked it unschedulable (GetPendingPods, IsProvisionable), and the pods are on no node, so the pass plans
        none of them and may give their room to its own candidates' pods. In a seeded choice its command is
        validated before kube-scheduler tried them too (harness assumption: a backlogged kube-scheduler;
        the real engine's fast timing validates after 1.5 s, harness/data/controller-timing.yaml): then the
        command goes ahead, kube-scheduler finds too little room for every pod, and Karpenter's provisioner
        launches a node for the ones left (docs/races.md)."""
        s = self.state
        sim = self.disruption.simulator
        sim.untried = frozenset(k for k in itertools.islice(s.result.pods, before, None)
                                if k in s.pod_views and not s.result.pods[k].node)
        self.trace(f"[disruption] a pass before kube-scheduler tried the {len(sim.untried)} pod(s) a drain just "
                   "evicted (nextCommand: raced)")
        try:
            progress = self._disruption_pass()
            if self.disruption.pending is not None and s.next_command_rng.random() < 0.5:
                due = self.disruption.pending[2]
                self.clock.advance(max(due - self.clock.now(), 0))
                self.trace("[disruption] the command is validated before kube-scheduler tried them (nextCommand: raced)")
                progress |= self.disruption.reconcile()
                progress |= self.queue.reconcile()
        finally:
            sim.untried = frozenset()
        return progress

    def _hold_nominations(self) -> bool:
        """`given.loop.nextCommand: raced`: whether a delete command's nodes are gone, and the disruption controller's
        next pass has run, before the nominations its start set end. Core's queue nominates the nodes its command
        planned the candidates' pods onto for the nomination window (sigs.k8s.io/karpenter v1.14.0
        pkg/controllers/disruption/queue.go StartCommand -> Results.Record; state/statenode.go Nominate: 20 s), and a
        nominated node is no candidate (disruption/types.go NewCandidate). On the real engine's timing a command's
        nodes are gone seconds after its start; the loop's termination of them takes 20 s or more. So, in a seeded
        choice per delete command, the loop holds those nominations while the command's nodes terminate and
        through the pass right after the last is gone; a pass that then finds nothing marks its method
        consolidated, and the nominations ending is no change to look again for (DisruptionController.reconcile:
        unnominated; docs/races.md). Returns whether a held command's nodes are all gone (a pass runs now)."""
        s = self.state
        cmds = s.disruption.commands
        for cmd in cmds[self._commands_seen:]:
            p = cmd.proposal
            nodes = set(p.sim.existing.values()) if p is not None and p.sim is not None and not cmd.replacements else ()
            if nodes and self.nomination_hold_rng.random() < 0.5:
                self._held.append((cmd, [c for c in self.claims if c.node_name in nodes and not c.done]))
        self._commands_seen = len(cmds)
        if not self._held:
            return False
        now, gone, held = self.clock.now(), False, []
        for cmd, dests in self._held:
            if now - cmd.created_at > NOMINATION_HOLD_LIMIT or (cmd.done and not cmd.succeeded):
                continue
            for d in dests:
                if not d.done:      # a second on: this iteration's pass meets the nomination, the next does not
                    d.dis.nominated_until = max(d.dis.nominated_until, now + 1)
            if all((c := s.claim_by_name(n)) is None or c.done for n in cmd.candidates):
                gone = True
                self.trace(f"[disruption] command {cmd.uuid}'s nodes are gone while its nominations hold "
                           "(nextCommand: raced)")
            else:
                held.append((cmd, dests))
        self._held = held
        return gone

    def _disruption_pass(self) -> bool:
        """The disruption controller's pass with what it reads first: PDB status and the NodeClaims'
        Consolidatable and Drifted conditions."""
        self.pdbs.reconcile()
        nodepools = self.state.cluster.list("NodePool")
        self.nodeclaim_disruption.reconcile(nodepools)
        return self.disruption.reconcile(nodepools)

    def _terminating(self) -> bool:
        """Whether a disruption command's nodes are still terminating (`given.loop.nextCommand: raced`). Core's
        disruption controller does not wait for them: it requeues at once after a command and polls every 10 s
        (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/disruption/controller.go Reconcile: RequeueImmediately,
        pollingPeriod; the same from v1.0.6), and a pass leaves out the candidates the queue holds or that are
        marked for deletion (NewCandidate), counts them against the budget until their instance terminates
        (helpers.go BuildDisruptionBudgetMapping) and plans their pods besides its own candidates'
        (SimulateScheduling: deletingNodePods). So a pass while a command drains takes the budget the nodes
        already gone left, and the pass after it the rest: commands in pairs (docs/races.md). A NodeClaim deleted
        from outside Karpenter has no disruption reason and does not count."""
        return any(not c.done and c.dis.deleting_since is not None and c.dis.deleted_by for c in self.claims)

    def _disruption_deadline(self) -> float | None:
        """The earliest short wait the disruption side has in flight (a command's validation delay,
        a drain's minimum time, an instance deletion's requeue, a queued command's timeout); None when
        only timers a scenario reaches with `advance` remain (consolidateAfter, expireAfter, budgets)."""
        waits = [d for d in (self.disruption.next_deadline(), self.node_termination.next_deadline(),
                             self.queue.next_deadline(), self._nomination_expiry()) if d is not None]
        return min(waits) if waits else None

    def _nomination_expiry(self) -> float | None:
        """When the next nomination of a live NodeClaim ends (pkg/controllers/state/statenode.go Nominate:
        a nominated node is no disruption candidate until then): the disruption controller's next poll
        after it may decide what it could not before (a pod planned onto an in-flight NodeClaim that
        kube-scheduler bound elsewhere leaves a nomination behind, fuzz-c3c76bc446)."""
        now, st = self.clock.now(), self.state
        # a pod still pending is planned (and its nomination renewed) every round: no wait ends that one
        renewed = {claim for key, claim in st.nominated.items() if key in st.pod_views and not st.result.pods[key].node}
        # a nomination held while a command's nodes terminate (_hold_nominations) ends with their termination
        renewed.update(d.result.name for _, dests in self._held for d in dests)
        ends = [c.dis.nominated_until for c in self.claims
                if not c.done and c.dis.nominated_until > now and c.result.name not in renewed]
        return min(ends, default=None)

    def _lifecycle(self) -> bool:
        """One step of each launched NodeClaim's lifecycle (core nodeclaim/lifecycle/controller.go
        Reconcile runs launch, registration, initialization, liveness in turn): the kubelet path,
        then Karpenter's registration, then initialization."""
        progress = False
        for c in self.claims:
            if c.done or c.launched is None or c.refused:
                continue
            progress |= self._lifecycle_step(c)
        return progress

    def _in_flight(self) -> list[str]:
        return [c.result.name for c in self.claims
                if not (c.done or c.refused) and c.launched is not None and not c.node_name]

    def _boot_deadline(self) -> float | None:
        """When the next launched VM's kubelet registers (given.loop.nodeBoot), if one is still booting."""
        times = [c.launched_at + self.cfg.node_boot for c in self.claims if not (c.done or c.refused)
                 and c.launched_at is not None and not c.node_name and c.launched_at + self.cfg.node_boot > self.clock.now()]
        return min(times, default=None)

    def _lifecycle_step(self, c) -> bool:
        if not c.node_name:
            if c.launched_at is not None and self.clock.now() < c.launched_at + self.cfg.node_boot:
                return False            # the VM's kubelet is still booting (given.loop.nodeBoot)
            return self.registration.kubelet_register(c)
        if c.dis.deleting_since is not None:
            return False                # a NodeClaim being deleted is only finalized (lifecycle/controller.go Reconcile)
        if not c.registered:
            return self.registration.register(c)
        if not c.initialized:
            return self.initialization.initialize(c)
        return False

    def _lifecycle_staggered(self) -> bool:
        """`given.loop.nodesReady: staggered`: the NodeClaims go through their lifecycle steps one at a
        time, in a seeded order, and kube-scheduler gets a pass as soon as each one's Node is through.
        On a cluster a launch's Nodes become Ready seconds apart, and kube-scheduler retries pending pods
        on every Node event once their backoff (at most 10 s: k8s.io/kubernetes v1.36.3
        pkg/scheduler/backend/queue) has passed, so a pod Karpenter planned on a later Node can take room
        on an earlier one - the race that makes Karpenter launch more nodes than it planned."""
        progress = False
        claims = [c for c in self.claims if not (c.done or c.launched is None or c.refused)]
        self.state.ready_rng.shuffle(claims)
        for i, c in enumerate(claims):
            stepped = False
            for _ in range(REGISTRATION_PASSES):
                if c.done or c.refused or not self._lifecycle_step(c):
                    break
                stepped = True
            if stepped and c.registered:
                self.kube_scheduler.reconcile()
                if self.cfg.nodes_ready == "spread":
                    progress |= self._round_mid_launch(claims[i + 1:])
            progress |= stepped
        return progress

    def _round_mid_launch(self, rest: list[Claim]) -> bool:
        """`given.loop.nodesReady: spread`: after one Node of a launch turned Ready and kube-scheduler had
        its pass, Karpenter's provisioner runs a round before the next Node of the launch is Ready, in a
        seeded choice (once a batch window has passed). On a cluster a launch's Nodes initialize seconds
        apart, and a pod that stays pending triggers a round on every update and every 10 s
        (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/controller.go PodController.Reconcile
        requeues a provisionable pod after 10 s; batcher.go Wait), so a round can plan the pods still pending
        while part of the launch is Ready: one that kube-scheduler displaced from the Node Karpenter planned
        it on meets the rest of the launch still in flight, and can get a NodeClaim of its own. The round
        takes its batch window of the clock, so a VM launched that much later (a later round's, booting:
        given.loop.nodeBoot) can register within the sequence and be Ready before the launch's last Node
        (scenarios/loop/ready-race.scenario.yaml)."""
        waiting = [c for c in rest if not (c.done or c.refused) and not c.initialized]
        if not waiting or not self.provisioner.pending_pods():
            return False
        if self.state.spread_rng.random() < 0.5:
            return False
        self.clock.advance(BATCH_IDLE_SECONDS)
        self.trace(f"[provisioner] a round while {len(waiting)} Node(s) of the launch are not Ready yet "
                   "(nodesReady: spread)")
        progress = self.provisioner.reconcile()
        progress |= self.launch.reconcile()
        return progress

    def _arrive_late(self) -> bool:
        """`given.loop.podsArrive: staggered`: the pods an apply held back (Workloads.late) are created once
        the first round's NodeClaims are launched, and the next round - a batch window later, before those
        launches' Nodes register - plans them: onto a NodeClaim in flight (Karpenter nominates its node, no
        disruption candidate for the nomination window) or a new one. On a cluster kubectl creates one
        object after another and the Deployment and ReplicaSet controllers make each one's pods from their
        own queues; under load a later workload's pods reach the API server after core's batch window
        (BATCH_IDLE_DURATION, 1 s: sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/batcher.go)
        has closed."""
        if not self.workloads.late:
            return False
        late, self.workloads.late = self.workloads.late, []
        self.clock.advance(BATCH_IDLE_SECONDS)
        before = len(self.pod_views)
        for create in late:
            create()
        self.trace(f"[workloads] {len(self.pod_views) - before} pod(s) arrived after the first provisioning round "
                   "(podsArrive: staggered)")
        self.provisioner.reconcile()
        self.launch.reconcile()
        return True

    def _detect_runaway(self) -> bool:
        """A pod that caused `runaway_threshold` NodeClaims and is still unbound - judged only once no
        launched VM is still booting (given.loop.nodeBoot): a booting Node may yet take the pod, as the real
        engine's settle waits for cause rather than count (issue 28 item 1)."""
        if self._boot_deadline() is not None:
            return False
        result = self.result
        for key, n in self.state.launches_for.items():
            if key not in self.state.pod_views:       # deleted since (evicted, scaled down): gone, not stuck
                continue
            if n >= self.cfg.runaway_threshold and not result.pods[key].node:
                result.runaway = True
                result.runaway_reason = (f"pod {key} caused {n} NodeClaims and never bound"
                                         + (f": {result.pods[key].scheduler_error}"
                                            if result.pods[key].scheduler_error else ""))
                self.trace(f"runaway provisioning: {result.runaway_reason}")
                return True
        return False

    def _finish(self) -> None:
        """Final Node labels and taints, pod states, instance types as they are now (even with no
        pod pending), the unavailable-offerings cache and the fake's snapshot."""
        result, nodes = self.result, self.nodes
        record_garbage_collected(self.state)
        result.unmade = self.workloads.unmade()
        by_node: dict[str, list] = {}         # each Node's NodeClaims in launch order
        for c in self.claims:
            if c.node_name:
                by_node.setdefault(c.node_name, []).append(c)
        for nr in result.nodes:
            node = self.cluster.get("Node", nr.name)
            if node is not None:
                nr.labels = dict(node["metadata"].get("labels") or {})
                nr.taints = list((node.get("spec") or {}).get("taints") or [])
                nr.deleting = bool(node["metadata"].get("deletionTimestamp"))
            claims = by_node.get(nr.name, ())
            claim = next((c for c in claims if not c.done), None)
            last = claim or next(iter(claims), None)
            if last is not None:      # a deleted NodeClaim's conditions as it last had them
                nr.nodeclaim_conditions = termination_conditions(last, self.state.core["drainConditions"])
            done = next((c for c in claims if c.done), None)
            if claim is not None:
                nr.deleting = nr.deleting or claim.dis.deleting_since is not None
                nr.drifted = claim.dis.drifted
            elif nr.deleted is None and done is not None:
                nr.deleted = done.result.deleted or "deleted"
        for key, pr in result.pods.items():
            if pr.state in ("deleted", "succeeded"):
                continue
            if pr.node:
                pr.state = "scheduled"
                if pr.node in nodes and key not in nodes[pr.node].pods:
                    nodes[pr.node].pods.append(key)
            elif pr.state != "ignored":
                pr.state = "pending"
                if pr.reason is None:
                    pr.reason = pr.scheduler_error
        self.templates()
        result.unavailable_offerings = self.unavailable.snapshot()
        result.core_notices = self.state.core.notices(touched_scopes(self.state)) + static_drift_notice(self.state) \
            + repair_notice(self.state, self.health)
        said = notice(result, self.cfg.timings_given, self._boot_overlapped)
        result.assumed = [said] if said else []
        result.core_consulted = list(self.state.core.consulted())
        result.facts_consulted, result.facts_listed_only = self._facts_consulted(result)
        if hasattr(self.fake, "snapshot"):
            result.azure = self.fake.snapshot()
            result.azure["request_log"] = request_log(self.fake)
