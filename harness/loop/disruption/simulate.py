"""SimulateScheduling (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/disruption/helpers.go): would the
pods of the candidates (and of nodes already being deleted) fit on the rest of the cluster plus new
NodeClaims? It reuses the provisioner the way core does (provisioner.NewScheduler + Solve): the same
NodeClaimTemplates (Provisioner.templates), Scheduler (harness/loop/scheduling/scheduler.py) and Topology
(harness/loop/scheduling/topology.py), over

- the pending pods (GetPendingPods), the candidates' currently reschedulable pods
  (pdb.Limits.IsCurrentlyReschedulable) and the deleting nodes' reschedulable pods;
- the active state nodes that are not candidates, initialized first then by name
  (scheduler.go sortExistingNodes); in a consolidation simulation (IsConsolidationSimulation) a
  candidate pod may not land on a node under its consolidateAfter (Solve, existingnode.go);
- NodePool limits less the capacity of those nodes (calculateExistingNodeClaims,
  updateRemainingResources).

A pod that is not pending and lands on an uninitialized node gets UninitializedNodeError, so the
command is not taken (SimulateScheduling). Results mirror core's: new NodeClaims, pod errors, and
AllNonPendingPodsScheduled / NonPendingPodSchedulingErrors.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from harness.loop.scheduling import podutil
from harness.loop.disruption.candidates import Candidate, Cluster, StateNode, state_nodes
from harness.loop.lifecycle.conditions import consolidatable_at
from harness.loop.scheduling.existingnode import ExistingNode, shallow_copy
from harness.loop.scheduling.limits import RemainingResources
from harness.loop.scheduling.pods import PodView
from harness.loop.scheduling.scheduler import PlannedClaim, Scheduler
from harness.loop.scheduling.topology import topology_keys


class CandidateDeleting(Exception):
    """helpers.go errCandidateDeleting."""


@dataclass
class SimResult:
    new_claims: list[PlannedClaim]
    errors: dict[str, str]                   # pod key -> error (non-pending pods only)
    existing: dict[str, str]                 # pod key -> existing node it would go to
    moved: list[str] = field(default_factory=list)     # the pods that had to move

    def all_non_pending_scheduled(self) -> bool:
        return not self.errors

    def non_pending_errors(self) -> str:
        """Results.NonPendingPodSchedulingErrors (upstream iterates a Go map: the order of several
        errors is random there; the harness lists them in pod order)."""
        if not self.errors:
            return "No Pod Scheduling Errors"
        msg = "not all pods would schedule, "
        for i, (key, err) in enumerate(self.errors.items()):
            msg += f"{key} => {err} "
            if i + 1 >= 5:
                msg += f" and {len(self.errors) - 5} other(s)"
                break
        return msg


class Simulator:
    def __init__(self, state, provisioner):
        self.state = state
        self.provisioner = provisioner
        self._hostnames = 0
        self._entries: tuple[Cluster, list] | None = None     # (the pass's view, its existing entries)
        self._templates: tuple[Cluster, list] | None = None   # (the pass's view, its NodeClaimTemplates)
        self._waiting: set[str] | None = None                  # of those, the nodes inside consolidateAfter
        self._anti: tuple[Cluster, list[tuple[str, str]]] | None = None   # the pass's bound pods with anti-affinity
        # (the pass's view, its pending pods, its bound pods as (key, view, node) once a simulation counts
        # topology): read once per pass, as the entries are; a pass runs a simulation per candidate it tries
        self._pods: tuple[Cluster, list[str], list[tuple[str, PodView, str]] | None] | None = None
        self._nodes: tuple | None = None                       # the pass's view split (_split)
        # unbound pods kube-scheduler has not tried yet: GetPendingPods lists a pod only once kube-scheduler marked
        # it unschedulable (sigs.k8s.io/karpenter v1.14.0 pkg/utils/pod/scheduling.go IsProvisionable:
        # FailedToSchedule). The loop's kube-scheduler tries every pod before a pass, but for the pods a drain
        # just evicted under given.loop.nextCommand raced (simulation.py Simulation._disrupt)
        self.untried: frozenset[str] = frozenset()

    def _counter(self) -> int:
        self._hostnames += 1
        return self._hostnames

    def simulate(self, view: Cluster, candidates: list[Candidate], consolidation: bool) -> SimResult:
        s = self.state
        names = {c.name for c in candidates}
        deleting, live, launched = self._split(view)
        if any(sn.name in names for sn in deleting):
            raise CandidateDeleting()
        active = [sn for sn in live if sn.name not in names]
        pending = list(self._pass_pending(view))
        moving: list[str] = []
        for c in candidates:
            moving += [k for k in c.reschedulable if view.moves(k)]
        deleting_pods = [k for sn in deleting for k in sn.pods if view.moves(k)]
        keys = pending + moving + deleting_pods
        pods = [s.pod_views[k] for k in keys]
        for pv in pods:
            if s.volumes:
                s.volumes.plan(pv, s.sem, s.core)
        if self._templates is None or self._templates[0] is not view:     # the pass's, for each simulation
            self._templates = (view, self.provisioner.templates(record=False))
        templates = self._templates[1]
        non_pending = set(moving) | set(deleting_pods)
        # core v1.14.0 (#3006) keeps a consolidation's pods off nodes inside their consolidateAfter window
        refuse = frozenset(s.pod_views[k].uid for k in moving) \
            if consolidation and s.core["consolidateAfterDestinations"] else frozenset()
        existing, initialized = self._existing(view, active, refuse, deleting, names)
        remaining = RemainingResources.build(
            s.cluster.list("NodePool"), [row for name, row in launched if name not in names],
            s.core["nodeLimits"], s.core["initializedNodesCounted"])
        topo = self._topology(view, pods, templates, existing, set(keys))
        sched = Scheduler(templates, existing, s.profile, s.sem, s.min_values_policy, self._counter, topo,
                          remaining, s.preference_policy, lambda: s.core["hostPortsPerNodeClaim"],
                          s.core["relaxPreferencesPerPod"], s.daemon_order_rng, s.max_instance_types)
        solved = sched.solve(pods)
        by_uid = {pv.uid: k for k, pv in zip(keys, pods)}
        errors = {by_uid[uid]: err for uid, err in solved.errors.items() if by_uid.get(uid) in non_pending}
        placed = {by_uid[uid]: node for uid, node in solved.existing.items() if uid in by_uid}
        deleting_set = set(deleting_pods)
        for key, node in placed.items():
            if node not in initialized and key in non_pending and key not in deleting_set:
                n = next(x for x in existing if x.name == node)
                c = s.claim_by_name(n.nodeclaim) if n.nodeclaim else None
                info = [f"nodeclaim/{c.result.name}"] if c is not None else []
                if c is None or (c.registered and c.node_name):
                    info.append(f"node/{node}")
                errors[key] = f"would schedule against uninitialized {', '.join(info)}"
        return SimResult(solved.new_claims, errors, placed, moving)

    def _split(self, view: Cluster) -> tuple[list[StateNode], list[StateNode], list[tuple[str, tuple]]]:
        """The view's state nodes marked for deletion, the others, and of those others each NodeClaim's row for
        the NodePools' remaining resources (its NodePool, capacity, whether it counts): read once per pass's
        view, which every simulation of the pass filters by its candidates."""
        if self._nodes is None or self._nodes[0] is not view:
            deleting, live = [], []
            for sn in view.nodes:
                (deleting if sn.marked_for_deletion else live).append(sn)
            launched = [(sn.name, (sn.claim.template.name, sn.claim.launched.instance_type.capacity,
                                   sn.claim.initialized or not sn.claim.registered)) for sn in live if sn.claim]
            self._nodes = (view, deleting, live, launched)
        return self._nodes[1], self._nodes[2], self._nodes[3]

    def _pass_pending(self, view: Cluster) -> list[str]:
        if self._pods is None or self._pods[0] is not view:
            self._pods = (view, self._pending(), None)
        return self._pods[1]

    def _pass_bound(self, view: Cluster) -> list[tuple[str, PodView, str]]:
        """The pass's bound pods as (key, view, node): read when a simulation counts topology, once per view."""
        self._pass_pending(view)
        if self._pods[2] is None:
            s = self.state
            self._pods = (view, self._pods[1],
                          [(k, pv, s.result.pods[k].node) for k, pv in s.pod_views.items() if s.result.pods[k].node])
        return self._pods[2]

    def _pending(self) -> list[str]:
        """GetPendingPods: unbound pods Karpenter provisions for (not DaemonSet, not ignored)."""
        s = self.state
        pods = s.result.pods
        return [key for key, pv in s.pods_unbound()
                if pods[key].state not in ("ignored", "deleted") and not podutil.owned_by_daemonset(pv)
                and key not in self.untried]

    def _existing(self, view: Cluster, active: list[StateNode], refuse: frozenset, deleting: list[StateNode],
                  candidates: set[str]) -> tuple[list[ExistingNode], set[str]]:
        """The provisioner's existing nodes (Provisioner.existing_nodes: cluster state, daemon overhead,
        host ports, initialized first) without the candidates; in a consolidation simulation the nodes
        under consolidateAfter refuse the candidates' pods."""
        s = self.state
        # the view's nodes that are not `active`: the ones marked for deletion and the candidates
        skip = frozenset(sn.name for sn in deleting) | (candidates & view.names)
        # the cluster's nodes are built once per pass's view (nothing changes the state between a pass's
        # simulations), then each simulation filters them; they stay shared (the Scheduler copies a node
        # before it places a pod there, and replaces the copy's requested and host ports, never the labels
        # or taints), but for the ones that refuse this simulation's pods
        if self._entries is None or self._entries[0] is not view:
            self._entries = (view, self.provisioner.existing_entries())
            self._waiting = None
        out = [n for n, keys in self._entries[1] if keys.isdisjoint(skip)] if skip else [n for n, _ in self._entries[1]]
        if refuse:
            if self._waiting is None:          # the pass's nodes inside their consolidateAfter, read once
                self._waiting = set()
                for n, _ in self._entries[1]:
                    c = s.claim_by_name(n.nodeclaim) if n.nodeclaim else None
                    np = view.nodepools.get(c.template.name) if c is not None else None
                    at = consolidatable_at(c, np) if np is not None else None
                    if at is not None and view.now < at:
                        self._waiting.add(n.name)
            for i, n in enumerate(out):
                if n.name in self._waiting:
                    out[i] = n = shallow_copy(n)
                    n.refuses = refuse
        return out, {n.name for n in out if n.initialized}

    def _topology(self, view: Cluster, pods: list[PodView], templates, existing: list[ExistingNode], moving: set[str]):
        """NewTopology: the pods being scheduled are excluded from the counts."""
        if not any(topology_keys(pv) for pv in pods):
            # topology_over builds nothing when no pod has a topology key and no running pod an anti-affinity:
            # the pass's bound pods with one are read once per pass, not every bound pod per simulation (and
            # not every bound pod listed: a pod without an affinity is skipped on one lookup)
            if self._anti is None or self._anti[0] is not view:
                s = self.state
                self._anti = (view, [(k, node) for k, pv in s.pod_views.items()
                                     if pv.pod_affinity[1] and (node := s.result.pods[k].node)])
            if not self._anti[1]:
                return None
            names = {n.name for n in existing}
            if not any(node in names and k not in moving for k, node in self._anti[1]):
                return None
        else:
            names = {n.name for n in existing}
        running = [(pv, node) for k, pv, node in self._pass_bound(view) if node in names and k not in moving]
        return self.provisioner.topology_over(pods, templates, existing, running)


def deleting_pods(s) -> list[PodView]:
    """The currently reschedulable pods of the nodes marked for deletion (StateNodes.Deleting()
    CurrentlyReschedulablePods), which a provisioning pass schedules too (core provisioner.go
    Schedule): their capacity comes up while they drain. Empty (and cheap) when nothing is deleting. Only
    the provisioner's pass calls it, after its cluster-state sync check (provisioner.py reconcile). A Node
    no NodeClaim owns counts once its own deletionTimestamp is set (core v1.14.0
    pkg/controllers/state/statenode.go Deleted)."""
    if not any(not c.done and (c.dis.marked_for_deletion or c.dis.deleting_since is not None) for c in s.claims) \
            and not any(_node_deleting(s, name) for name in s.unmanaged_nodes):
        return []
    # a view of the marked state nodes alone: a provisioning pass while nodes drain asks this every round
    view = Cluster(s, nodes=state_nodes(s, marked_only=True))
    out = []
    for sn in view.nodes:
        out += [s.pod_views[k] for k in sn.pods if view.moves(k)]
    return out


def _node_deleting(s, name: str) -> bool:
    node = s.cluster.get("Node", name)
    return node is not None and bool(node["metadata"].get("deletionTimestamp"))


def synced(s) -> bool:
    """state/cluster.go Synced: every NodeClaim has launched (has a provider id)."""
    return all(c.done or c.launched is not None for c in s.claims)
