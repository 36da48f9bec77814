"""Karpenter core's scheduling simulation: pods -> existing nodes, planned NodeClaims, new NodeClaims.

Upstream sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/: nodeclaimtemplate.go
(NewNodeClaimTemplate), scheduler.go (NewScheduler setup, buildDaemonOverheadGroups, Solve, Scheduler.add,
Results.TruncateInstanceTypes), queue.go (Queue; how a failed pod is relaxed and requeued per core
release: relaxPreferencesPerPod), nodeclaim.go (NodeClaim.CanAdd, filterInstanceTypesByRequirements and
its messages, minValues), preferences.go (relaxation); pkg/scheduling/requirements.go Compatible.
Notes: sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go NewNodeClaimTemplate
(NodeClaimTemplate), sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/scheduler.go NewScheduler
(setup, daemon overhead), sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/nodeclaim.go CanAdd
(per-pod
placement, filterInstanceTypesByRequirements and its messages, minValues), sigs.k8s.io/karpenter v1.14.0
pkg/controllers/provisioning/scheduling/preferences.go Relax (relaxation, final
errors), sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirements.go Compatible (Compatible with
AllowUndefinedWellKnownLabels vs strict).
"""
from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

from harness.loop.scheduling.collector import young_collections_only
from harness.loop.scheduling.existingnode import ExistingNode, shallow_copy
from harness.loop.scheduling.hostports import CONFLICT as PORT_CONFLICT, conflict
from harness.loop.scheduling.limits import RemainingResources, weight_order_key
from harness.loop.scheduling.nodeclaim import (ClaimOrder, FilterError, PlannedClaim, min_daemon_overhead, offering_compatible,
                                    order_matters)
from harness.loop.scheduling.nodeclaimtemplate import Template
from harness.loop.scheduling.pods import PodView, karpenter_untolerated
from harness.loop.scheduling.topology import HOSTNAME
from harness.loop.scheduling.typeindex import Mask, TypeIndex
from harness.model.upstream.corebehaviour import fewest_instance_types
from harness.model.upstream.profile import Profile
from harness.model.labels.requirements import IN, Requirement, Requirements
from harness.model.values.resources import add
from harness.model.labels.semantics import Semantics

# core v1.6.0+ scheduling/events.go NoCompatibleInstanceTypes, when minValues filtered out every type
MIN_VALUES_EVENT_SUFFIX = " due to minValues incompatibility"

# Template, ExistingNode, PlannedClaim, ClaimOrder and offering_compatible live in their own modules
# (nodeclaimtemplate.py, existingnode.py, nodeclaim.py) and are importable from here as before.
__all__ = ["Scheduler", "SolveResult", "Template", "ExistingNode", "PlannedClaim", "FilterError", "ClaimOrder",
           "offering_compatible", "MAX_INSTANCE_TYPES"]

# MaxInstanceTypes at v1.14.0, used by Results.TruncateInstanceTypes (sigs.k8s.io/karpenter v1.14.0
# pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go; sigs.k8s.io/karpenter v1.14.0
# pkg/controllers/provisioning/scheduling/nodeclaim.go CanAdd); a release's own is core-behaviour.yaml
# maxInstanceTypes, given to the Scheduler
MAX_INSTANCE_TYPES = 600


@dataclass
class SolveResult:
    new_claims: list[PlannedClaim]
    existing: dict[str, str]                 # pod uid -> existing node name
    errors: dict[str, str]                   # pod uid -> final error
    nodepool_events: list[tuple[str, str, str]] = field(default_factory=list)  # (nodepool, reason, message)


ROOM_BLOCK = 32          # existing nodes per block of Scheduler._free


def _block_room(nodes: Sequence[ExistingNode]) -> tuple[int, int, int]:
    """The most free cpu, memory and pods of `nodes` (-1 where none allocates it)."""
    best = [-1, -1, -1]
    for n in nodes:
        alloc, used = n.allocatable, n.requested
        for j, k in enumerate(("cpu", "memory", "pods")):
            a = alloc.get(k)
            if a is not None and a - used.get(k, 0) > best[j]:
                best[j] = a - used.get(k, 0)
    return best[0], best[1], best[2]


class Scheduler:
    """One provisioning pass (Scheduler.Solve) over pending pods."""

    def __init__(self, templates: Sequence[Template], existing: Sequence[ExistingNode], profile: Profile,
                 sem: Semantics, min_values_policy: str = "Strict",
                 hostname_counter: Callable[[], int] | None = None, topology=None,
                 remaining: RemainingResources | None = None, preference_policy: str = "Respect",
                 host_port_usage: str = "perNodeClaim", relax_per_pod: bool = True,
                 daemon_order: random.Random | None = None,
                 max_instance_types: Callable[[], int] = lambda: MAX_INSTANCE_TYPES):
        self.profile, self.sem = profile, sem
        # core-behaviour.yaml maxInstanceTypes: how many types a NodeClaim keeps, cheapest first (60 before core
        # v1.7.0, #2430); read only for a NodeClaim with more types than the fewest any core keeps, the only ones
        # it decides for
        self._max_instance_types = max_instance_types
        # core-behaviour.yaml relaxPreferencesPerPod: from core v1.4.0 (#2119) a pod that fails is relaxed all
        # the way at once, and one that still fails goes back to the queue with its preferences intact; before,
        # it is relaxed one step, keeps it, and goes to the back of the queue behind every other pod
        self.relax_per_pod = relax_per_pod
        # buildDaemonOverheadGroups returns a template's groups in a Go map's order (lo.Values), a random one
        # each NewScheduler: the stream that draws it where the order changes a NodeClaim's daemon requests
        # (nodeclaim.order_matters); None keeps the order each group was first met in (unit tests)
        self._daemon_order = daemon_order
        self._daemon_groups: dict[int, list] = {}                   # id(template) -> its groups, ordered
        # core-behaviour.yaml hostPortsPerNodeClaim: from core v1.4.0 (#2102) to v1.12.x every NodeClaim of a
        # template in one Solve shares the template's HostPortUsage (its DaemonSets' ports included), so a port
        # one of them holds is held by all of them; before v1.4.0 each NodeClaim has its own, without the
        # DaemonSets' ports (a pod whose port a DaemonSet holds is planned anyway); from v1.13.0 (#3022) its own
        # `host_port_usage` may be a callable: the switch is then read at the first pod that asks for a host port,
        # the only pods it decides for (each use below is behind `pod.host_ports`), so a run without one never
        # reads it (harness/why/deciding.py suspects only the switches a run read)
        self._host_port_usage = host_port_usage
        self._ports_modes: tuple[dict[str, list] | None, bool] | None = None
        self._template_daemon_ports: dict[str, list] = {}
        self.topology = topology
        self.remaining = remaining or RemainingResources()
        self.well_known = profile.well_known_labels
        # the nodes may be shared with the caller's other Schedulers (a disruption pass runs one per simulation
        # over the same cluster state): one is copied before the first pod placed on it changes it, the rest
        # are read as they are
        self.existing = list(existing)
        self._owned: set[int] = set()         # indexes of `existing` this Scheduler has copied
        # per block of ROOM_BLOCK existing nodes in order, the most free cpu, memory and pods any node of it has
        # (_block_room; None until a pod's walk reaches the block): a pod asking more of one skips the block, as
        # every node of it would refuse it for resources (`_try_existing`). Once most nodes are full, a pod placed
        # on an existing node reads the blocks, not every node before the first with room
        self._free: list[tuple[int, int, int] | None] | None = None
        self.min_values_policy = min_values_policy
        self.ignore_preferences = preference_policy == "Ignore"      # core scheduler.go IgnorePreferences
        self._hostname_counter = hostname_counter or _counter()
        self.nodepool_events: list[tuple[str, str, str]] = []
        self._merge_cache: dict = {}
        self._reach_cache: dict = {}
        self._pod_reach: dict[int, tuple] = {}                       # id(pod) -> (pod, state, reach)
        self._headroom_cache: dict = {}
        self._limit_memo: dict[int, tuple[list, str | None]] = {}    # id(template) -> remaining.check
        # core OrderByWeight (pkg/utils/nodepool/nodepool.go, v1.14.0): weight, then name descending
        self.templates = self._prefilter(sorted(templates, key=lambda t: weight_order_key(t.nodepool)))
        self.planned: list[PlannedClaim] = []
        self._order = ClaimOrder()
        # hostname gates: (id(group), threshold) -> (group, threshold, indexes of claims still open)
        self._gates: dict[tuple[int, int], tuple[object, int, set[int]]] = {}
        self._ungated: set[int] = set()       # claims whose hostname is not their own placeholder
        self._watched: set[str] = set()       # keys of domain gates seen: claims are tagged on them
        self._watched_count = 0
        self._tagged_by: dict[int, tuple] = {}  # claim index -> (watched count, requirements it was tagged by)
        self._explain = True                  # False while scanning planned claims (errors discarded)

    # -- setup --------------------------------------------------------------------------------
    def _prefilter(self, templates: list[Template]) -> list[Template]:
        """Drop templates whose own requirements filter out every instance type (sigs.k8s.io/karpenter
        v1.14.0 pkg/controllers/provisioning/scheduling/scheduler.go NewScheduler
        step 4)."""
        kept = []
        for t in templates:
            its, err = self._prefilter_one(t)
            if its:
                t.options = its
                kept.append(t)
            else:
                msg = "NodePool requirements filtered out all compatible available instance types"
                if err is not None and err.min_values is not None:
                    msg += MIN_VALUES_EVENT_SUFFIX
                self.nodepool_events.append((t.name, "NoCompatibleInstanceTypes", msg))
        return kept

    def _prefilter_one(self, template: Template) -> tuple[list, FilterError | None]:
        """The template's requirements against its instance types, with an empty pod and *no* daemon
        overhead (NewScheduler passes one DaemonOverheadGroup without DaemonOverhead to
        filterInstanceTypesByRequirements: core v1.14.0 scheduling/scheduler.go): requirements,
        an available compatible offering, minValues."""
        compat, offered, _ = self._compat_masks(template, template.requirements)
        kept = self._index(template).list(compat & offered)
        if kept and template.requirements.has_min_values():
            missing = self._min_values_unmet(template.requirements, kept)
            if missing and self.min_values_policy != "BestEffort":
                err = FilterError()
                err.min_values = missing
                return [], err
        return kept, (None if kept else FilterError())

    # -- filtering ----------------------------------------------------------------------------
    def _index(self, template: Template) -> TypeIndex:
        return self._indexed(template)[0]

    def _indexed(self, template: Template) -> tuple[TypeIndex, dict]:
        """The template's TypeIndex and its compatibility masks (_compat_masks), kept on the template: they
        depend only on it, the well-known labels and the semantics, and a disruption pass simulates every
        candidate with the same templates (loop/disruption/simulate.py)."""
        key = (self.well_known, id(self.sem))
        hit = template._indexed.get(key)
        if hit is None:
            hit = template._indexed[key] = (TypeIndex(
                template.instance_types, [self._room(template, it) for it in template.instance_types]), {})
        return hit

    def _room(self, template: Template, it) -> dict[str, int]:
        """Allocatable minus this template's daemon overhead on the instance type, per resource."""
        overhead = template.daemon_overhead(it, self.well_known, self.sem)
        alloc = it.allocatable()
        return {k: alloc.get(k, 0) - overhead.get(k, 0) for k in set(alloc) | set(overhead)}

    def _compat_masks(self, template: Template, reqs: Requirements) -> tuple[Mask, Mask, Mask]:
        """The template's instance types whose requirements are compatible with `reqs`, those with a
        compatible available offering (TypeIndex bits), and the compatible offering groups
        (TypeIndex.offering_groups). Depends only on the requirements, so
        it is computed once per distinct requirement set and reused while pods with the same
        requirements pack into claims."""
        # instance types and offerings never define the hostname, so a claim's hostname placeholder
        # does not change the answer: key the cache without it
        sig = reqs.signature()
        if HOSTNAME in reqs:
            sig = sig - {reqs[HOSTNAME]}
        ix, cache = self._indexed(template)
        hit = cache.get(sig)
        if hit is None:
            groups = ix.offering_groups(reqs, self.well_known)
            hit = cache[sig] = (ix.compatible(reqs), ix.offered(groups), groups)
        return hit

    def max_headroom(self, claim: "PlannedClaim") -> dict[str, int]:
        """The most room any of a planned claim's instance types offers, per resource: a pod that
        does not fit this cannot fit the claim (a cheap pre-check before filtering)."""
        if claim.max_room is None:
            # claims narrow to the same option sets again and again (a zone, an arch): memoize by set
            key = (id(claim.template), claim.mask)
            room = self._headroom_cache.get(key)
            if room is None:
                room = self._headroom_cache[key] = self._index(claim.template).max_room(claim.mask)
            claim.max_room = room
        return claim.max_room

    def _filter(self, template: Template, reqs: Requirements, requests: dict[str, int],
                candidates: Mask | None) -> tuple[list, Mask, FilterError | None]:
        """filterInstanceTypesByRequirements (sigs.k8s.io/karpenter v1.14.0
        pkg/controllers/provisioning/scheduling/nodeclaim.go): requirements,
        resources (+daemon overhead) and
        an available compatible offering; `candidates` narrows to a planned claim's options.
        Returns the kept types, the same as TypeIndex bits, and the error when none is kept."""
        ix = self._index(template)
        compatible, offered, _ = self._compat_masks(template, reqs)
        fit = ix.fits(requests)
        if candidates is not None:
            compatible, offered, fit = compatible & candidates, offered & candidates, fit & candidates
        kept = compatible & fit & offered
        if kept:
            its = ix.list(kept)
            if reqs.has_min_values():
                missing = self._min_values_unmet(reqs, its)
                if missing and self.min_values_policy != "BestEffort":
                    err = FilterError()
                    err.min_values = missing
                    return [], 0, err
            return its, kept, None
        # nothing kept: which tests some candidate passed, alone and in pairs
        err = FilterError()
        err.requirements_met, err.fits, err.has_offering = bool(compatible), bool(fit), bool(offered)
        err.requirements_and_fits = bool(compatible & fit & ~offered)
        err.requirements_and_offering = bool(compatible & offered & ~fit)
        err.fits_and_offering = bool(fit & offered & ~compatible)
        return [], 0, err

    @staticmethod
    def _relax_min_values(reqs: Requirements, its: list) -> Requirements:
        """NodeClaim.CanAdd under MIN_VALUES_POLICY=BestEffort (sigs.k8s.io/karpenter v1.14.0
        pkg/controllers/provisioning/scheduling/nodeclaim.go, SatisfiesMinValues in pkg/cloudprovider/types.go):
        each minValues the remaining instance types cannot meet becomes the number of values they do have, so
        the NodeClaim's requirements hold only what its own CRD admits (In with at least minValues values)."""
        seen: dict[str, set[str]] = {k: set() for k, r in reqs.items() if r.min_values is not None}
        for it in its:
            for k in seen:
                r = it.requirements.get(k)
                if k in it.requirements and not r.complement:
                    seen[k] |= set(r.values)
        low = {k: len(v) for k, v in seen.items() if len(v) < reqs[k].min_values}
        if not low:
            return reqs
        return Requirements.of({k: (replace(r, min_values=low[k]) if k in low else r)
                                for k, r in reqs.items()})

    @staticmethod
    def _min_values_unmet(reqs: Requirements, its: list) -> list[str]:
        needs = {k: r.min_values for k, r in reqs.items() if r.min_values is not None}
        seen: dict[str, set[str]] = {k: set() for k in needs}
        for it in its:
            for k in needs:
                r = it.requirements.get(k)
                if k in it.requirements and not r.complement:
                    seen[k] |= set(r.values)
            if all(len(seen[k]) >= n for k, n in needs.items()):
                return []
        return sorted(k for k, n in needs.items() if len(seen[k]) < n)

    # -- placement ----------------------------------------------------------------------------
    def _try_existing(self, pod: PodView, node: ExistingNode) -> str | None:
        if node.refuses and pod.uid in node.refuses:
            return "consolidateAfter"
        # resources first: each check below is a verdict of its own and `_place` takes the first node none
        # refuses, so their order only decides the cost, and at size most nodes tried are full
        alloc, used = node.allocatable, node.requested
        for k, v in pod.requests.items():
            if v > 0 and (k not in alloc or v > alloc[k] - used.get(k, 0)):
                return "resources"
        if karpenter_untolerated(pod.tolerations, node.taints):
            return "taints"
        # ExistingNode.CanAdd checks host ports before resources (core v1.14.0 scheduling/existingnode.go)
        if pod.host_ports and conflict(pod.host_ports, node.host_ports):
            return "host ports"
        node_reqs = node.requirements(self.sem)
        if node_reqs.compatible(pod.requirements(self.sem)) is not None:
            return "requirements"
        # ExistingNode.tryVolumeAlternative: each volume alternative, strict Compatible, then topology
        why = "volumes"
        for vol in pod.volume_requirements or [None]:
            reqs = node_reqs
            if vol is not None:
                if node_reqs.compatible(vol) is not None:
                    continue
                reqs = node_reqs.copy().add(*vol.values())
            # existing nodes are strict: no AllowUndefinedWellKnownLabels (core existingnode.go CanAdd)
            if self.topology is not None and not isinstance(
                    self.topology.add_requirements(pod, pod.requirements(self.sem, strict=True), reqs,
                                                   allow_undefined=frozenset()), Requirements):
                why = "topology"
                continue
            return None
        return why

    def _can_add(self, pod: PodView, template: Template, base_reqs: Requirements, requests: dict[str, int],
                 candidates: Mask | None) -> tuple[Requirements, list, dict[str, int], Mask] | str:
        bad = karpenter_untolerated(pod.tolerations, template.taints)
        if bad:
            return "; ".join(f"did not tolerate taint (taint={t})" for t in bad)
        pod_reqs = pod.requirements(self.sem)
        mkey = (base_reqs.signature(), pod_reqs.signature())
        cached = self._merge_cache.get(mkey)
        if cached is None:
            err = base_reqs.compatible(pod_reqs, self.well_known)
            cached = f"incompatible requirements, {err}" if err is not None else base_reqs.copy().add(*pod_reqs.values())
            self._merge_cache[mkey] = cached
        if isinstance(cached, str):
            return cached
        last = None
        # NodeClaim.CanAdd: the first volume-topology alternative that works wins (harness/loop/scheduling/volumes.py)
        for vol in pod.volume_requirements or [None]:
            res = self._try_volume_alternative(pod, template, cached, vol, requests, candidates)
            if isinstance(res, tuple):
                return res
            last = res
        return last

    def _try_volume_alternative(self, pod: PodView, template: Template, merged: Requirements, vol,
                                requests: dict[str, int], candidates: Mask | None):
        """NodeClaim.tryVolumeAlternative (core v1.14.0 scheduling/nodeclaim.go): the volume's
        requirements go on the NodeClaim only (not the pod's, so topology counting is unchanged)."""
        if vol is not None:
            err = merged.compatible(vol, self.well_known)
            if err is not None:
                return f"incompatible volume requirements, {err}"
            merged = merged.copy().add(*vol.values())
        if self.topology is not None:
            topo = self.topology.add_requirements(pod, pod.requirements(self.sem, strict=True), merged,
                                                  self._explain)
            if not isinstance(topo, Requirements):
                return topo            # a TopologyError, rendered only if it becomes the pod's error
            merged = topo
        total = add(requests, pod.requests)
        its, mask, ferr = self._filter(template, merged, total, candidates)
        if its and self.min_values_policy == "BestEffort" and merged.has_min_values():
            merged = self._relax_min_values(merged, its)
        if not its:
            assert ferr is not None
            if not self._explain:
                return "unexplained"       # a claim scan discards it: skip the overhead search and rendering
            overhead_min = min((template.daemon_overhead(it, self.well_known, self.sem)
                                for it in template.instance_types), key=lambda o: sum(o.values()), default={})
            self.sem.note_filter_message()
            return ferr.message(merged, add(total, overhead_min))
        return merged, its, total, mask

    def solve(self, pods: Sequence[PodView]) -> SolveResult:
        with young_collections_only():
            return self._solve(pods)

    def _solve(self, pods: Sequence[PodView]) -> SolveResult:
        queue = sorted(pods, key=lambda p: (-p.requests.get("cpu", 0), -p.requests.get("memory", 0), p.queue_key, p.order))
        errors: dict[str, str] = {}
        existing_hits: dict[str, str] = {}
        prefer_no_schedule = any(t.effect == "PreferNoSchedule" for tp in self.templates for t in tp.taints)
        for pod in queue:
            pod.reset_relaxation(self.ignore_preferences)
        if self.topology is not None:
            self.topology.prepare(queue)        # core NewTopology: every pod's groups before placing any
        # core Queue (scheduling/queue.go): Pop stops when the pod at the front was pushed back with the queue
        # as long as it is now, i.e. nothing scheduled since; a push after a relaxation (before v1.4.0) clears
        # every such mark, as a relaxation is progress too
        pending = deque(queue)
        pushed_at: dict[str, int] = {}
        while pending and pushed_at.get(pending[0].uid) != len(pending):
            pod = pending.popleft()
            if self.relax_per_pod:
                # Solve: trySchedule(pod.DeepCopy()) relaxes a copy; the queue keeps the pod as it was
                pod.reset_relaxation(self.ignore_preferences)
                while (err := self._place(pod, existing_hits)) is not None and pod.relax(prefer_no_schedule):
                    pass
                relaxed = False
            else:
                # v1.0.6-v1.3.x Solve: one add, then one Relax of the pod itself
                err = self._place(pod, existing_hits)
                relaxed = err is not None and pod.relax(prefer_no_schedule)
            if err is None:
                errors.pop(pod.uid, None)
                continue
            errors[pod.uid] = err
            pending.append(pod)
            if relaxed:
                pushed_at.clear()
            else:
                pushed_at[pod.uid] = len(pending)
        for claim in self.planned:         # FinalizeScheduling, before Results.TruncateInstanceTypes
            claim.daemon_requests = min_daemon_overhead(self._groups_of(claim.template), claim.instance_types)
        claims = self._truncate(errors)
        return SolveResult(claims, existing_hits, errors, self.nodepool_events)

    def _groups_of(self, template: Template) -> list:
        """The template's daemon overhead groups in this Solve's order: drawn once per template, and only
        where the order can change a NodeClaim's daemon requests. Upstream's order comes from two Go maps
        (the provider's instance type list, cached, gives the order the groups are met in; the groups' map
        is then read from a random start); the draw makes every order reachable, not their frequencies."""
        got = self._daemon_groups.get(id(template))
        if got is None:
            got = list(template.daemon_overhead_groups(self.well_known, self.sem))
            if self._daemon_order is not None and order_matters(got):
                self._daemon_order.shuffle(got)
            self._daemon_groups[id(template)] = got
        return got

    def _land(self, pod: PodView, i: int, existing_hits: dict[str, str]) -> None:
        """The pod goes on existing node `i`."""
        node = self.existing[i]
        if i not in self._owned:         # copied when a pod first lands on it (see __init__)
            node = self.existing[i] = shallow_copy(node)
            self._owned.add(i)
        node.requested = add(node.requested, pod.requests)
        node.host_ports = node.host_ports + pod.host_ports
        existing_hits[pod.uid] = node.name
        if self.topology is not None:
            self.topology.record(pod, node.requirements(self.sem), node.taints, frozenset())

    def _place(self, pod: PodView, existing_hits: dict[str, str]) -> str | None:
        # 1. existing / in-flight nodes (strict), the first that takes the pod
        existing = self.existing
        if len(existing) > ROOM_BLOCK:
            room = self._free
            if room is None:
                room = self._free = [None] * -(-len(existing) // ROOM_BLOCK)
            req = pod.requests
            cpu, mem, pods = req.get("cpu", 0), req.get("memory", 0), req.get("pods", 0)
            for b, block in enumerate(room):
                start = b * ROOM_BLOCK
                if block is None:            # read when the first pod reaches it
                    block = room[b] = _block_room(existing[start:start + ROOM_BLOCK])
                free_cpu, free_mem, free_pods = block
                if cpu > 0 and cpu > free_cpu or mem > 0 and mem > free_mem or pods > 0 and pods > free_pods:
                    continue
                for i in range(start, min(start + ROOM_BLOCK, len(existing))):
                    if self._try_existing(pod, existing[i]) is None:
                        self._land(pod, i, existing_hits)
                        room[b] = _block_room(existing[start:start + ROOM_BLOCK])
                        return None
        else:
            for i, node in enumerate(existing):
                if self._try_existing(pod, node) is None:
                    self._land(pod, i, existing_hits)
                    return None
        # 2. NodeClaims planned in this pass, fewest pods first (core Scheduler.add sorts newNodeClaims by
        # pod count before addToInflightNode; sigs.k8s.io/karpenter v1.14.0 scheduling/scheduler.go).
        # The errors of this scan are discarded, so topology errors are not explained here.
        self._explain = False
        need_cpu = pod.requests.get("cpu", 0)
        self._order.unpark(need_cpu)
        self._order.sort()
        park: list[PlannedClaim] = []
        try:
            need = [(k, v) for k, v in pod.requests.items() if v > 0]
            for claim in self._scan(pod):
                slack = claim.slack
                if slack is None:
                    room = self.max_headroom(claim)
                    slack = claim.slack = {k: room.get(k, 0) - claim.requests.get(k, 0)
                                           for k in room.keys() | claim.requests.keys()}
                if any(v > slack.get(k, 0) for k, v in need):
                    if need_cpu > slack.get("cpu", 0):
                        park.append(claim)         # out of the scan until a smaller pod (ClaimOrder.park)
                    continue
                if pod.host_ports and conflict(pod.host_ports, self._held_ports(claim.template, claim.host_ports)):
                    continue               # NodeClaim.CanAdd: the claim's pods hold the port
                candidates = claim.mask
                if pod.host_ports and claim.template.daemon_pods:
                    ix = self._index(claim.template)
                    candidates = ix.mask_of(self._port_free(pod, claim.template, ix.list(claim.mask)))
                res = self._can_add(pod, claim.template, claim.requirements, claim.requests, candidates)
                if isinstance(res, tuple):
                    if res[3] != claim.mask:
                        claim.max_room = None          # the options narrowed: recompute the bound lazily
                    claim.slack = None
                    claim.requirements, claim.instance_types, claim.requests, claim.mask = res
                    claim.pods.append(pod)
                    claim.host_ports = claim.host_ports + pod.host_ports
                    self._hold_ports(claim.template, pod)
                    self._order.grew(claim)
                    if self.topology is not None:
                        self.topology.record(pod, claim.requirements, claim.template.taints)
                    self._update_gates(claim)
                    return None
        finally:
            self._explain = True
            for claim in park:
                self._order.park(claim)
        # 3. a new NodeClaim from each template in weight order
        if not self.templates:
            # core v1.14 addToNewNodeClaim (pkg/controllers/provisioning/scheduling/scheduler.go) errors
            # here; v1.6.2 combines zero per-template errors into nil, so the pod gets no Karpenter
            # reason and stays pending (profile core.noNodePoolsError).
            if not self.profile.core.get("noNodePoolsError", True):
                return None
            return "nodepool requirements filtered out all available instance types"
        errs: list[str] = []
        for template in self.templates:
            # NodePool limits before CanAdd (core addToNewNodeClaim; harness/loop/scheduling/limits.py)
            options = template.options if template.options is not None else template.instance_types
            allowed, limit_err = self._limit_check(template)
            if limit_err is not None:
                errs.append(limit_err)
                continue
            listed = allowed if len(allowed) != len(options) else None
            if pod.host_ports:
                listed = self._port_free(pod, template, allowed)
            candidates = self._index(template).mask_of(listed) if listed is not None else None
            hostname = f"hostname-placeholder-{self._hostname_counter():04d}"
            base = template.requirements.copy().add(Requirement.new(HOSTNAME, IN, [hostname], self.sem))
            if pod.host_ports and not karpenter_untolerated(pod.tolerations, template.taints) and \
                    conflict(pod.host_ports, self._held_ports(template, [])):
                errs.append(f"checking host port usage, {PORT_CONFLICT}")   # NodeClaim.CanAdd, after taints
                continue
            res = self._can_add(pod, template, base, {}, candidates)
            if not isinstance(res, tuple):
                errs.append(str(res))
                continue
            reqs, its, total, mask = res
            claim = PlannedClaim(template, reqs, its, total, hostname, [pod], index=len(self.planned),
                                 host_ports=list(pod.host_ports), mask=mask)
            if errs:
                # one error per template tried before this one (each `continue` above appends one)
                rem = self.remaining.remaining
                claim.passed_over = [(t.name, e, dict(rem[t.name]) if t.name in rem else None)
                                     for t, e in zip(self.templates, errs)]
            self._hold_ports(template, pod)
            self.planned.append(claim)
            self._order.add(claim)
            self.remaining.subtract_max(template.name, its)
            self._limit_memo.clear()
            if self.topology is not None:
                self.topology.record(pod, reqs, template.taints)
            self._update_gates(claim, new=True)
            return None
        return "; ".join(errs)

    def _ports_mode(self) -> tuple[dict[str, list] | None, bool]:
        """(the templates' shared host port usage, or None where each NodeClaim has its own; whether a new
        NodeClaim starts with its template's DaemonSets' ports), from hostPortsPerNodeClaim, read once."""
        if self._ports_modes is None:
            usage = self._host_port_usage() if callable(self._host_port_usage) else self._host_port_usage
            self._ports_modes = ({} if usage == "sharedTemplate" else None, usage != "ownWithoutDaemons")
        return self._ports_modes

    @property
    def _template_ports(self) -> dict[str, list] | None:
        return self._ports_mode()[0]

    def _held_ports(self, template: Template, own: list) -> list:
        """The host ports a planned NodeClaim holds (NodeClaim.hostPortUsage): its own pods', or its template's
        shared usage; plus, before core v1.14.0's per-instance-type DaemonSet groups, its template's DaemonSets'."""
        if self._template_ports is not None:
            return self._template_ports.setdefault(template.name, list(self._daemon_ports_of(template)))
        return own + self._daemon_ports_of(template) if self._daemon_ports_of(template) else own

    def _daemon_ports_of(self, template: Template) -> list:
        """The template-wide DaemonSet host ports a new NodeClaim starts with (sigs.k8s.io/karpenter v1.13.0
        scheduling/scheduler.go getDaemonHostPortUsage): none before core v1.4.0, and none from v1.14.0, whose
        per-instance-type groups are _port_free's."""
        if not template.daemon_pods or not template.instance_types or not self._ports_mode()[1] \
                or template.per_instance_type():
            return []
        got = self._template_daemon_ports.get(template.name)
        if got is None:
            got = self._template_daemon_ports[template.name] = template.daemon_ports(
                template.instance_types[0], self.well_known, self.sem)
        return got

    def _hold_ports(self, template: Template, pod: PodView) -> None:
        if pod.host_ports and self._template_ports is not None:
            self._template_ports[template.name] = self._held_ports(template, []) + list(pod.host_ports)

    def _port_free(self, pod: PodView, template: Template, its: list) -> list:
        """The instance types whose DaemonSet pods leave the pod's host ports free
        (filterInstanceTypesByRequirements skips a daemon overhead group whose HostPortUsage
        conflicts; core v1.14.0 scheduling/nodeclaim.go)."""
        if not pod.host_ports or not template.daemon_pods or not template.per_instance_type():
            return its
        return [it for it in its if not conflict(pod.host_ports, template.daemon_ports(it, self.well_known, self.sem))]

    # -- the claim scan's index ------------------------------------------------------------------
    def _scan(self, pod: PodView):
        """The planned claims in scan order (pod count, then creation), leaving out claims where one
        of the pod's gates is closed: a hostname gate (the count at the claim's own hostname) or a
        domain gate (its affinity needs a domain the claim's requirements do not allow); there
        add_requirements would reject the pod whatever else passes. Skipping changes no result
        because the scan's per-claim errors are discarded: core addToInflightNode
        (sigs.k8s.io/karpenter v1.14.0 scheduling/scheduler.go) keeps only the first claim whose
        NodeClaim.CanAdd succeeds and otherwise returns a fixed "failed scheduling pod to inflight
        nodes". Core itself visits every claim (in parallel, parallelizeUntil); the index is ours,
        and tests/loop/scheduling/test_scheduling_fingerprint.py pins that results are unchanged."""
        gates = self._pod_gates(pod)
        if not gates:
            yield from self._order
            return
        hosts = [g for g in gates if not isinstance(g, DomainGate)]
        domains = [g for g in gates if isinstance(g, DomainGate)]
        source = self._order
        if domains:
            self._watch(domains)
            source = self._order.tagged(domains[0].tags())
        if not hosts:
            for claim in source:
                if all(g.admits(claim) for g in domains[1:]):
                    yield claim
            return
        sets = sorted((self._gate(g, t)[2] for g, t in hosts), key=len)
        first, rest, ungated = sets[0], sets[1:], self._ungated
        if len(first) * 8 < len(self.planned):
            # few claims still open: visit just those, in scan order
            open_ = [self.planned[i] for i in first if all(i in s for s in rest)]
            open_ += [self.planned[i] for i in ungated if i not in first]
            yield from sorted((c for c in open_ if all(g.admits(c) for g in domains)), key=self._order.key)
            return
        for claim in source:
            i = claim.index
            if (i in first and all(i in s for s in rest)) or i in ungated:
                if all(g.admits(claim) for g in domains[1:]):
                    yield claim

    def _pod_gates(self, pod: PodView) -> list:
        """The pod's hostname gates, only when the original scan is sure to reach
        Topology.AddRequirements during this placement (asking the topology creates the pod's groups
        and registrations, which must happen exactly when they did before): no volume alternatives, no
        hostname requirement of its own, and some template it could open a NodeClaim from."""
        if self.topology is None or pod.volume_requirements is not None:
            return []
        pod_reqs = pod.requirements(self.sem)
        if HOSTNAME in pod_reqs:
            return []
        reach = self._reach(pod, pod_reqs)
        if not any(ok and self._limit_check(t)[1] is None for t, ok in zip(self.templates, reach)):
            return []
        strict = pod.requirements(self.sem, strict=True)
        return [*self.topology.hostname_gates(pod),
                *(DomainGate(k, d) for k, d in self.topology.domain_gates(pod, strict))]

    def _watch(self, gates: list[DomainGate]) -> None:
        """Tag every claim on each gate's key, from the first pod whose gate needs it on."""
        for g in gates:
            if g.key not in self._watched:
                self._watched.add(g.key)
                self._watched_count += 1
                for claim in self.planned:
                    self._order.tag(claim, self._tags_of(claim))

    def _tags_of(self, claim: PlannedClaim) -> frozenset:
        """(key, domain) for each domain the claim's requirement on a watched key lists, or (key, ANY)
        where it is open (NotIn, Exists, no requirement): such a claim is always visited."""
        tags = []
        for key in self._watched:
            allowed = _listed_domains(claim.requirements.get(key))
            tags += [(key, ANY)] if allowed is None else [(key, v) for v in allowed]
        return frozenset(tags)

    def _reach(self, pod: PodView, pod_reqs: Requirements) -> tuple[bool, ...]:
        """Per template, whether addToNewNodeClaim gets past taints and requirement compatibility
        to the topology (the placeholder hostname cannot conflict: the pod has none); limits are
        checked by the caller, as they change during the Solve. Memoized per pod and relaxation
        state (its tolerations and requirements)."""
        state = (pod.relaxed_required, pod.dropped_preferred, pod.tolerate_prefer_no_schedule)
        hit = self._pod_reach.get(id(pod))
        if hit is None or hit[0] is not pod or hit[1] != state:     # the pod itself: ids are reused
            tolerations = pod.tolerations
            key = (pod_reqs.signature(), repr(tolerations))       # pods of one workload share it
            reach = self._reach_cache.get(key)
            if reach is None:
                reach = self._reach_cache[key] = tuple(
                    not karpenter_untolerated(tolerations, t.taints) and
                    t.requirements.compatible(pod_reqs, self.well_known) is None for t in self.templates)
            hit = self._pod_reach[id(pod)] = (pod, state, reach)
        return hit[2]

    def _limit_check(self, template: Template) -> tuple[list, str | None]:
        """remaining.check for a new NodeClaim of the template, memoized until the next subtract_max
        (the only change to what remains during a Solve): the gate test and the placement ask the
        same question for every pod."""
        hit = self._limit_memo.get(id(template))
        if hit is None:
            options = template.options if template.options is not None else template.instance_types
            hit = self._limit_memo[id(template)] = self.remaining.check(template.name, options)
        return hit

    def _gate(self, group, threshold: int) -> tuple[object, int, set[int]]:
        key = (id(group), threshold)
        gate = self._gates.get(key)
        if gate is None:
            open_ = {c.index for c in self.planned
                     if c.index not in self._ungated and group.domains.get(c.hostname, 0) < threshold}
            gate = self._gates[key] = (group, threshold, open_)
        return gate

    def _update_gates(self, claim: PlannedClaim, new: bool = False) -> None:
        """After a pod joined `claim` (the only way counts at its hostname grow): close the gates its
        hostname reached; a claim whose hostname requirement is not its own placeholder is never gated.
        Its requirements may have narrowed too: its tags follow them."""
        if self._watched:
            # the tags follow the claim's requirements on the watched keys: unchanged objects, same tags
            reqs = claim.requirements
            seen = tuple(reqs[k] if k in reqs else None for k in self._watched)
            if self._tagged_by.get(claim.index) != (self._watched_count, seen):
                self._tagged_by[claim.index] = (self._watched_count, seen)
                self._order.tag(claim, self._tags_of(claim))
        r = claim.requirements.get(HOSTNAME)
        if claim.index in self._ungated:
            return
        if (r.complement or len(r.values) != 1 or claim.hostname not in r.values or r.gte is not None
                or r.lte is not None):
            self._ungated.add(claim.index)
            for _, _, open_ in self._gates.values():
                open_.discard(claim.index)
            return
        for group, threshold, open_ in self._gates.values():
            if group.domains.get(claim.hostname, 0) < threshold:
                if new:
                    open_.add(claim.index)
            else:
                open_.discard(claim.index)

    def _truncate(self, errors: dict[str, str]) -> list[PlannedClaim]:
        """Results.TruncateInstanceTypes (sigs.k8s.io/karpenter v1.14.0
        pkg/controllers/provisioning/scheduling/scheduler.go; sigs.k8s.io/karpenter v1.14.0
        pkg/controllers/provisioning/scheduling/nodeclaim.go CanAdd): keep the 600 cheapest (60 before core
        v1.7.0, core-behaviour.yaml maxInstanceTypes); drop claims that lose minValues."""
        kept = []
        # claims share requirements and option sets (a zone, a size range): sort each pair once
        ranked: dict[tuple, list] = {}
        for claim in self.planned:
            reqs = claim.requirements.without(HOSTNAME)
            key = (id(claim.template), reqs.signature(), claim.mask)
            cheapest = ranked.get(key)
            if cheapest is None:
                ix = self._index(claim.template)
                groups = self._compat_masks(claim.template, reqs)[2]
                # cheapest_price of each type: its lowest available offering compatible with reqs
                keep = self._max_instance_types() if len(claim.instance_types) > fewest_instance_types() \
                    else len(claim.instance_types)
                cheapest = ranked[key] = sorted(claim.instance_types, key=lambda it: (
                    ix.cheapest_price(it, groups), it.name))[:keep]
            if len(cheapest) != len(claim.instance_types):
                claim.mask = self._index(claim.template).mask_of(cheapest)
            claim.instance_types = cheapest
            if claim.requirements.has_min_values() and self.min_values_policy != "BestEffort":
                missing = self._min_values_unmet(claim.requirements, claim.instance_types)
                if missing:
                    for pod in claim.pods:
                        errors[pod.uid] = ("pod didn\u2019t schedule because NodePool couldn\u2019t meet minValues "
                                           "requirements, validating minValues, minValues requirement is not met for "
                                           f"label(s) (label(s)=[{' '.join(missing)}]) (NodePool={claim.template.name})")
                    continue
            kept.append(claim)
        return kept


ANY = ""        # the tag of a claim whose requirement on a key allows an open set of domains


@dataclass(frozen=True)
class DomainGate:
    """A pod's affinity on `key` (not the hostname) admits only claims allowing one of `domains`
    (Topology.domain_gates)."""
    key: str
    domains: frozenset[str]

    def tags(self) -> list[tuple[str, str]]:
        return [(self.key, ANY), *((self.key, d) for d in self.domains)]

    def admits(self, claim: PlannedClaim) -> bool:
        allowed = _listed_domains(claim.requirements.get(self.key))
        return allowed is None or not allowed.isdisjoint(self.domains)


def _listed_domains(r: Requirement) -> frozenset[str] | None:
    """The values an `In` requirement lists (nextDomainAffinity reads them as listed), or None for an
    open one (NotIn, Exists, bounds): a claim with an open requirement is never skipped."""
    if r.complement or r.gte is not None or r.lte is not None:
        return None
    return r.values


def _counter():
    n = [0]

    def nxt() -> int:
        n[0] += 1
        return n[0]
    return nxt
