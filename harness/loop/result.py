"""What one simulation run produced, in the shape the expectations and reports read.

Every Node label carries its provenance: the ordered writes (writer, value, accepted) that
touched it, so a report can say which path put it there and which write won.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


# the NodeClaim status conditions termination sets (core pkg/apis/v1/nodeclaim_status.go), the ones a
# scenario's `nodes[].nodeClaimConditions` may name (harness/data/scenario.schema.json lists the same)
TERMINATION_CONDITIONS = ("Drained", "VolumesDetached", "InstanceTerminating")


@dataclass
class LabelWrite:
    writer: str
    value: str
    accepted: bool = True
    note: str = ""


@dataclass
class NodePoolResult:
    name: str
    accepted: bool = True                 # admitted by the API server
    ready: bool = False
    stage: str | None = None              # "admission" | "runtime" when rejected
    message: str | None = None
    causes: list[str] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)
    unmanaged: str | None = None          # the other provider's NodeClass it names (apiversions.foreign_nodeclass)

    @property
    def rejected(self) -> bool:
        return self.stage is not None


@dataclass
class NodeClassResult:
    """An AKSNodeClass as the API server answered it: refused (message, causes), or stored with
    unknown fields pruned and defaults filled in (harness.model.crd.aksnodeclass)."""
    name: str
    accepted: bool = True
    message: str | None = None
    causes: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    spec: dict = field(default_factory=dict)       # the stored spec

    @staticmethod
    def of(sent: dict, stored: dict | None, error=None) -> "NodeClassResult":
        """From a create: what was sent, and what the API server stored or its APIRejected (any
        backend: the pruned fields are what the stored spec lacks)."""
        from harness.model.crd.schema import missing_fields
        name = sent["metadata"]["name"]
        if error is not None:
            return NodeClassResult(name, accepted=False, message=error.message, causes=[c.message for c in error.causes])
        spec = (stored or {}).get("spec") or {}
        return NodeClassResult(name, spec=spec, pruned=missing_fields(sent.get("spec"), spec, "spec"))


@dataclass
class PodResult:
    name: str
    namespace: str
    owner_kind: str = ""
    owner_name: str = ""
    node: str | None = None
    # scheduled | pending | ignored | deleted (its node went away) | rejected | succeeded (a Job's, completed)
    state: str = "pending"
    reason: str | None = None             # Karpenter's FailedScheduling/ignore text, else kube-scheduler's
    karpenter_error: str | None = None
    scheduler_error: str | None = None
    events: list[str] = field(default_factory=list)
    nodeclaims: list[str] = field(default_factory=list)   # NodeClaims launched for it
    labels: dict[str, str] = field(default_factory=dict)  # the pod's labels (expect.skew selects by them)
    requests: dict[str, int] = field(default_factory=dict)  # effective requests (cpu in millicores, bytes)
    at: dict[str, float] = field(default_factory=dict)    # created | bound | deleted -> simulated time (epoch s)
    cronjob: str = ""                     # the CronJob whose Job owns it (owner_kind Job)


@dataclass
class NodeResult:
    name: str
    index: int
    nodeclaim: str
    nodepool: str
    instance_type: str
    zone: str
    capacity_type: str
    vm_name: str
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[dict] = field(default_factory=list)
    provenance: dict[str, list[LabelWrite]] = field(default_factory=dict)
    kubelet_node_labels: dict[str, str] = field(default_factory=dict)
    kubelet_dropped: dict[str, str] = field(default_factory=dict)
    # on a node the AKS Machine API created: key -> why the provider did not send it to AKS (aksmachine.py)
    not_sent_to_aks: dict[str, str] = field(default_factory=dict)
    kubelet_refused: str | None = None
    node_restriction_denied: str | None = None
    registered: bool = False
    initialized: bool = False
    pods: list[str] = field(default_factory=list)
    nodeclaim_labels: dict[str, str] = field(default_factory=dict)
    nodeclaim_requirements: list[dict] = field(default_factory=list)
    nodeclaim_requests: dict[str, str] = field(default_factory=dict)    # the NodeClaim's spec.resources.requests
    # kind only: each label's writer as the real Node's managedFields name it (None: not read from a real Node)
    field_owners: dict[str, str] | None = None
    deleted: str | None = None            # why the Node is gone (a disruption reason, or the garbage collector's)
    deleting: bool = False                # still there with a deletionTimestamp at the end (draining)
    drifted: str | None = None            # its NodeClaim's Drifted reason at the end
    # its NodeClaim's termination status conditions as last seen (type -> True/False/Unknown), those
    # TERMINATION_CONDITIONS names (nodetermination.termination_conditions)
    nodeclaim_conditions: dict[str, str] = field(default_factory=dict)

    def writer(self, key: str) -> str | None:
        """The writer whose value is on the Node now (the last accepted write with that value)."""
        value = self.labels.get(key)
        for w in reversed(self.provenance.get(key, [])):
            if w.accepted and w.value == value:
                return w.writer
        return None

    def current_writers(self, key: str) -> list[str]:
        """The writers of the value on the Node now, earliest first: the accepted writes since the
        last one that set another value (an API server's managedFields name the first of them: an
        update that leaves a value as it is does not take it over)."""
        value, run = self.labels.get(key), []
        for w in reversed(self.provenance.get(key, [])):
            if not w.accepted:
                continue
            if w.value != value:
                break
            run.append(w.writer)
        return run[::-1]

    def writers(self, key: str) -> list[str]:
        return sorted({w.writer for w in self.provenance.get(key, []) if w.accepted})


@dataclass
class NodeClaimResult:
    name: str
    nodepool: str
    pods: list[str]
    requirements: list[dict]
    labels: dict[str, str]
    launched: bool = False
    failure: dict | None = None           # the last launch failure {kind, reason, message, code, attempted}
    failures: list[dict] = field(default_factory=list)    # every launch failure, in order
    rejected: str | None = None           # API server rejection of the NodeClaim itself
    node: str | None = None
    deleted: str | None = None            # why core deleted it
    # created | launched | registered | initialized | deleted -> simulated time (epoch s); harness/loop/history.py
    at: dict[str, float] = field(default_factory=dict)


@dataclass
class RunResult:
    scenario: str
    profile: str
    backend: str
    seed: int
    started: float | None = None          # the simulated clock at the run's start (epoch s; history.py's zero)
    instance_types: dict[str, object] = field(default_factory=dict)     # name -> InstanceType (per nodeclass, first seen)
    release: dict = field(default_factory=dict)     # what answered: harness.model.upstream.releases.modeled (profile,
                                                    # provider release, the tags it covers, core version)
    # the core behaviours this run answered with v1.14.0's although the release's core differs, by name,
    # for what the run touched (harness.model.upstream.corebehaviour CoreBehaviour.notices)
    core_notices: list[str] = field(default_factory=list)
    # the timings the scenario does not give that the run assumed and its outcome may depend on, as one line
    # (harness/loop/assumed.py notice)
    assumed: list[str] = field(default_factory=list)
    # the core switches whose value differs from the newest core's that the loop read, in first-read order
    # (harness.model.upstream.corebehaviour SwitchValues): the candidates harness/why/deciding.py flips
    core_consulted: list[str] = field(default_factory=list)
    # the profile's facts the run read where their other value answers otherwise: provider facts noted by the
    # instance-type builds, core's probes by the requirement algebra (harness.model.upstream.factreads NOTED; a
    # fact it does not note is taken as read): the rest of NOTED are not flipped
    facts_consulted: list[str] = field(default_factory=list)
    # of the facts that change a size's offerings, those noted only for sizes no NodePool or NodeClaim of the run
    # could take: they change only the run's list of instance types (what expect.instanceTypes reads)
    facts_listed_only: list[str] = field(default_factory=list)
    # every decision the loop took, with its reason, in order (harness/loop/decisions.py)
    decisions: list = field(default_factory=list)
    dropped_skus: dict[str, str] = field(default_factory=dict)
    nodepools: dict[str, NodePoolResult] = field(default_factory=dict)
    nodeclasses: dict[str, NodeClassResult] = field(default_factory=dict)
    pods: dict[str, PodResult] = field(default_factory=dict)            # "<ns>/<name>"
    # bare Pods the API server refused at create (state "rejected", reason: its message); no pod exists
    rejected_pods: dict[str, PodResult] = field(default_factory=dict)   # "<ns>/<name>"
    nodes: list[NodeResult] = field(default_factory=list)
    nodeclaims: list[NodeClaimResult] = field(default_factory=list)
    azure: dict = field(default_factory=dict)                           # fakeazure snapshot
    unavailable_offerings: list[dict] = field(default_factory=list)
    iterations: int = 0
    steady: bool = False
    runaway: bool = False
    runaway_reason: str | None = None
    events: list[dict] = field(default_factory=list)    # every event, in emission order: kind, name,
                                                        # [namespace,] reason, message, t (simulated time)
                                                        # [, owner: the workload of a FailedCreate's ReplicaSet]
    # the workloads whose controller still lacks pods at the end because the API server refused them
    # (FailedCreate): `Kind/name` -> how many it lacks (None: not counted)
    unmade: dict[str, int | None] = field(default_factory=dict)
    # disruption (harness/loop/disruption/controller.py and friends): one record per disrupted
    # NodeClaim, the candidates a pass left alone and why, and what happened when, in order
    disruptions: list[dict] = field(default_factory=list)
    protected: list[dict] = field(default_factory=list)
    timeline: list[dict] = field(default_factory=list)
    trace: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    # what `--why` reads that the outcome does not hold (harness/why/objects.py), kept while the decision
    # record is: `hostPorts` (pod key -> its host ports), `nodepools` (name -> the AKSNodeClass it names, its
    # budgets and when they were last read), `nodeclasses` (name -> readiness, the spec and the hash annotations
    # a NodeClaim launched from it gets, at each change), `lastPass` (the last disruption pass's clock). Not
    # behaviour: the fingerprint leaves it out
    why_facts: dict = field(default_factory=dict)
    # the Karpenter controller's restarts, in order (harness/model/kube/crashloop.py Exit as a dict: at and restartAt on
    # the run's clock, why, planned - a `crash` step's - and, on the real engine, the exited process's last log
    # lines): its pod restarts it as the kubelet does (CrashLoopBackOff)
    restarts: list[dict] = field(default_factory=list)

    def pods_of(self, name: str) -> list[PodResult]:
        """Pods named `name`, or owned by a Deployment/DaemonSet/Job named `name`, or by a Job of a
        CronJob named `name`."""
        direct = [p for p in self.pods.values() if p.name == name]
        direct = direct or [p for p in self.rejected_pods.values() if p.name == name]
        return direct or [p for p in self.pods.values() if name in (p.owner_name, p.cronjob) and p.state != "deleted"]

    def failed_creates(self) -> list[dict]:
        """The workloads whose controllers could not create pods, from their FailedCreate events (the API
        server refused: Priority, LimitRanger, ResourceQuota, RuntimeClass admission), in order, one entry per
        message: workload (`Deployment/web`, the event's `owner`, else its own object), object (`ReplicaSet/x`),
        namespace, message."""
        out, seen = [], set()
        for e in self.events:
            if e.get("reason") != "FailedCreate":
                continue
            entry = {"workload": e.get("owner") or f"{e.get('kind')}/{e.get('name')}",
                     "object": f"{e.get('kind')}/{e.get('name')}", "namespace": e.get("namespace") or "default",
                     "message": e.get("message") or ""}
            key = tuple(entry.values())
            if key not in seen:
                seen.add(key)
                out.append(entry)
        return out

    def pods_index(self):
        """`pods_of` for many names over the pods as they are now: each pod read once, rather than
        every pod once per name (a check of a 5,000-node dump names 10,000 pods)."""
        named: dict[str, list[PodResult]] = {}
        rejected: dict[str, list[PodResult]] = {}
        owned: dict[str, list[PodResult]] = {}
        for p in self.pods.values():
            named.setdefault(p.name, []).append(p)
            if p.state != "deleted":
                for owner in {p.owner_name, p.cronjob}:
                    owned.setdefault(owner, []).append(p)
        for p in self.rejected_pods.values():
            rejected.setdefault(p.name, []).append(p)
        return lambda name: list(named.get(name) or rejected.get(name) or owned.get(name) or [])

    def to_json(self) -> dict:
        d = asdict(self)
        d["instance_types"] = sorted(self.instance_types)
        return d
