"""What the disruption side of the loop remembers between passes: per NodeClaim, the status
conditions and timestamps core's disruption controllers read and write, and per run, the
orchestration queue, the event recorder's dedupe cache and the record a scenario's `expect.disruption`
reads.

Upstream names are kept: the NodeClaim conditions Consolidatable, Drifted, DisruptionReason, Drained,
InstanceTerminating and status.lastPodEventTime (sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/
nodeclaim_status.go); cluster state's MarkedForDeletion and nomination window (pkg/controllers/state/
statenode.go); the recorder's dedupe (pkg/events/recorder.go).
"""
from __future__ import annotations

from dataclasses import dataclass, field

# core pkg/events/recorder.go defaultDedupeTimeout
DEFAULT_DEDUPE_TIMEOUT = 120.0


@dataclass
class ClaimDisruption:
    """Loop-side disruption state of one NodeClaim (see the module docstring for the upstream fields)."""

    initialized_at: float | None = None          # Initialized condition's lastTransitionTime
    last_pod_event: float | None = None          # status.lastPodEventTime
    consolidatable_since: float | None = None    # Consolidatable=True since
    drifted: str | None = None                   # Drifted=True reason
    drifted_since: float | None = None
    disruption_reason: str | None = None         # DisruptionReason=True reason (set by the queue)
    marked_for_deletion: bool = False            # cluster state MarkForDeletion
    nominated_until: float = float("-inf")       # StateNode.Nominate: now + nomination window
    deleting_since: float | None = None          # NodeClaim deletionTimestamp
    deleted_by: str | None = None                # Empty | Underutilized | Drifted | Expired | ... (the record's reason)
    termination_time: float | None = None        # karpenter.sh/nodeclaim-termination-timestamp
    drain_started: float | None = None           # Drained=Unknown since
    drained: bool = False
    node_deleting: bool = False                  # the Node's deletionTimestamp is set
    instance_terminating: bool = False
    launch_recorded: bool = False                # the provider's Create facts below are recorded
    kubelet_version: str = ""                    # what the Node's kubelet reports (status.nodeInfo)
    image_id: str = ""                           # status.imageID
    subnet: str = ""                             # the NIC's subnet


@dataclass
class Replacement:
    """A replacement NodeClaim a command launched (core disruption/types.go Replacement)."""

    name: str
    initialized: bool = False


@dataclass
class Command:
    """An orchestration command (core disruption/types.go Command, queue.go)."""

    id: int
    reason: str                                   # Empty | Underutilized | Drifted
    method: str                                   # empty | single | multi | drift
    candidates: list[str]                         # NodeClaim names
    replacements: list[Replacement]
    created_at: float
    decision: str                                 # delete | replace
    savings: float = 0.0
    done: bool = False
    succeeded: bool = False
    uuid: str = ""                                # the command's ID (seeded)
    proposal: object = None                       # the Proposal it was started from


class Nominations(dict):
    """pod key -> NodeClaim name, remembering when each entry was last set: the provisioner
    re-nominates a node on every pass (core Results.Record -> Cluster.NominateNodeForPod), and a
    nomination keeps the node out of disruption for the nomination window (statenode.go Nominated)."""

    def __init__(self, clock, launched=None):
        super().__init__()
        self.clock = clock
        self.launched = launched          # NodeClaim name -> launched? (None: count every entry)
        self.times: dict[str, float] = {}

    def __setitem__(self, key, value):
        # a pod put on a NodeClaim being created is not a nomination (Results.Record nominates
        # existing and in-flight nodes only)
        if self.launched is None or self.launched(value):
            self.times[key] = self.clock.now()
        super().__setitem__(key, value)


class Recorder:
    """core pkg/events/recorder.go: an event is dropped when one with the same reason and dedupe
    values was published within its dedupe timeout (simulated time)."""

    def __init__(self, state):
        self.state = state
        self._seen: dict[str, float] = {}

    def forget(self) -> None:
        """The controller restarted: the dedupe cache lived in its memory."""
        self._seen.clear()

    def publish(self, kind: str, name: str, reason: str, message: str, dedupe: tuple = (),
                timeout: float = DEFAULT_DEDUPE_TIMEOUT, namespace: str | None = None) -> bool:
        now = self.state.clock.now()
        if dedupe:
            key = f"{reason.lower()}-" + "-".join(dedupe)
            until = self._seen.get(key)
            if until is not None and now < until:
                return False
            self._seen[key] = now + timeout
        self.state.record_event(kind, name, reason, message, namespace)
        return True


@dataclass
class DisruptionRun:
    """Run-wide disruption state, on LoopState.disruption."""

    commands: list[Command] = field(default_factory=list)
    next_command_id: int = 1
    recorder: Recorder | None = None
    pdb_status: dict = field(default_factory=dict)       # (ns, name) -> harness.loop.kube.pdb.PDB with its status
    pod_started: dict[str, float] = field(default_factory=dict)   # pod key -> status.startTime (its bind)
    # (NodeClaim name, method or stage) -> what the decision record last said of it (harness/loop/disruption/record.py)
    said: dict = field(default_factory=dict)
    # ValidatePodsDisruptable's verdicts kept between passes (candidates.Cluster.validate_pods): the PDBs'
    # selectors and allowances they were judged with, and state node name -> (its pods then, the verdict)
    pods_verdicts: tuple[tuple, dict] = field(default_factory=lambda: ((), {}))
    # state node name -> (its pods then, their reschedulable keys, summed eviction cost, reschedule cost): what
    # NewCandidate reads of a node's pods, kept between passes (candidates.Cluster.candidate)
    pods_costs: dict = field(default_factory=dict)

    # the NodeClaims of the unfinished commands, until a command is added or finishes: a disruption pass asks
    # for every node (NewCandidate), and the run's commands number in the hundreds at a few thousand nodes
    _queued: frozenset[str] | None = field(default=None, repr=False)

    def active(self) -> list[Command]:
        return [c for c in self.commands if not c.done]

    def add(self, cmd: Command) -> None:
        self.commands.append(cmd)
        self._queued = None

    def finish(self, cmd: Command, succeeded: bool) -> None:
        cmd.done, cmd.succeeded = True, succeeded
        self._queued = None

    def in_queue(self, claim_name: str) -> bool:
        if self._queued is None:
            self._queued = frozenset(name for c in self.active() for name in c.candidates)
        return claim_name in self._queued
