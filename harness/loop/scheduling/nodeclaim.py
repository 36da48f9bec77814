"""A NodeClaim being planned in one Solve, the daemon requests it is finalized with, the error that
explains why no instance type was left, and the order the scheduler scans planned NodeClaims in.

Karpenter core sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/nodeclaim.go
(NodeClaim, CanAdd, addDaemonRequests, InstanceTypeFilterError and its messages) and scheduler.go
(addToInflightNode sorts the new NodeClaims by pod count); Offerings.Compatible from
pkg/cloudprovider/types.go.
"""
from __future__ import annotations

import bisect
import heapq
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import accumulate

from sortedcontainers import SortedKeyList

from harness.loop.scheduling.gosort import keeps_ties, slice_sort
from harness.loop.scheduling.nodeclaimtemplate import DaemonOverheadGroup, Template
from harness.loop.scheduling.pods import PodView
from harness.model.labels.requirements import Requirements
from harness.model.values.resources import format_resource_list


def offering_compatible(offering, reqs: Requirements, well_known: frozenset[str]) -> bool:
    """Offerings.Compatible: the claim's requirements are compatible with the offering's
    (AllowUndefinedWellKnownLabels), so every offering key must be well-known or on the claim."""
    return offering.available and reqs.is_compatible(offering.requirements, well_known)


@dataclass
class PlannedClaim:
    """A NodeClaim being packed in this Solve."""

    template: Template
    requirements: Requirements
    instance_types: list
    requests: dict[str, int]
    hostname: str
    pods: list[PodView] = field(default_factory=list)
    max_room: dict[str, int] | None = None
    index: int = 0                            # creation order in this Solve
    place: int = 0                            # its place among claims of its pod count (ClaimOrder)
    slack: dict[str, int] | None = None       # max_room minus requests, per resource (None: stale)
    host_ports: list = field(default_factory=list)   # held by its pods (core NodeClaim HostPortUsage)
    mask: int = 0                             # instance_types as the scheduler's TypeIndex bits
    # what FinalizeScheduling adds for its DaemonSets (min_daemon_overhead over its options at the end
    # of the Solve, before truncation and a consolidation's price filter)
    daemon_requests: dict[str, int] = field(default_factory=dict)
    # the templates tried before this one for the pod that opened the claim, in weight order: (NodePool, its
    # error, what remained of its limits then or None); the decision record's "why this NodePool"
    passed_over: list | None = None


def min_daemon_overhead(groups: list[DaemonOverheadGroup], instance_types: list) -> dict[str, int]:
    """NodeClaim.addDaemonRequests (sigs.k8s.io/karpenter v1.14.0
    pkg/controllers/provisioning/scheduling/nodeclaim.go): over the groups, in their order, that still
    have one of `instance_types`, a running minimum that takes a group as it is while the minimum is
    empty and otherwise keeps the smaller quantity of each resource both have (resources.MinResources
    drops a resource the group lacks). An empty group met after a non-empty one empties the minimum, and
    the next non-empty group starts it again: the answer depends on the order (`order_matters`)."""
    names = {it.name for it in instance_types}
    low: dict[str, int] = {}
    for g in groups:
        if names.isdisjoint(g.instance_types):
            continue
        low = dict(g.overhead) if not low else {k: min(v, g.overhead[k]) for k, v in low.items() if k in g.overhead}
    return low


def order_matters(groups: list[DaemonOverheadGroup]) -> bool:
    """Whether min_daemon_overhead can answer differently for another order of `groups`: only with an
    empty group beside a non-empty one. Every non-empty group has `pods` (RequestsForPods counts the
    DaemonSet pods), so two non-empty groups always share a resource and the minimum never empties."""
    return any(not g.overhead for g in groups) and any(g.overhead for g in groups)


class FilterError:
    """InstanceTypeFilterError (sigs.k8s.io/karpenter v1.14.0
    pkg/controllers/provisioning/scheduling/nodeclaim.go): which of requirements / resources / offering failed."""

    def __init__(self):
        self.requirements_met = self.fits = self.has_offering = False
        self.requirements_and_fits = self.requirements_and_offering = self.fits_and_offering = False
        self.min_values: list[str] | None = None

    def message(self, reqs: Requirements, requests: dict[str, int]) -> str:
        if self.min_values is not None:
            msg = f"minValues requirement is not met for label(s) (label(s)=[{' '.join(self.min_values)}])"
        elif not self.requirements_met and not self.fits and not self.has_offering:
            msg = "no instance type met the scheduling requirements or had enough resources or had a required offering"
        elif not self.requirements_met and not self.fits:
            msg = "no instance type met the scheduling requirements or had enough resources"
        elif not self.requirements_met and not self.has_offering:
            msg = "no instance type met the scheduling requirements or had a required offering"
        elif not self.fits and not self.has_offering:
            msg = "no instance type had enough resources or had a required offering"
        elif not self.requirements_met:
            msg = "no instance type met all requirements"
        elif not self.fits:
            msg = "no instance type has enough resources"
            if requests.get("cpu", 0) >= 1_000_000 * 1000:
                msg += " (CPU request >= 1 Million, m vs M typo?)"
        elif not self.has_offering:
            msg = "no instance type has the required offering"
        elif self.requirements_and_fits:
            msg = "no instance type which met the scheduling requirements and had enough resources, had a required offering"
        elif self.fits_and_offering:
            msg = "no instance type which had enough resources and the required offering met the scheduling requirements"
        elif self.requirements_and_offering:
            msg = "no instance type which met the scheduling requirements and the required offering had the required resources"
        else:
            msg = "no instance type met the requirements/resources/offering tuple"
        resources = json.dumps(format_resource_list(requests), sort_keys=True, separators=(",", ":"))
        return f"{msg}, requirements={reqs}, resources={resources}"


class ClaimOrder:
    """The planned claims in the order core scans them: before each pod, Scheduler.add sorts
    newNodeClaims by pod count with sort.Slice (sigs.k8s.io/karpenter v1.14.0 scheduling/scheduler.go);
    a new claim is appended.

    Go's list is kept as runs, one per pod count, each in Go's order (`place` ranks a claim in its run).
    Between two sorts the list changes by one claim: a new claim is appended, or one claim grows by one
    pod. Where gosort.keeps_ties proves that sort.Slice then orders the list as a stable sort does, the
    claim just moves: a grown claim to the front of its new count's run (the list was sorted, so it was
    ahead of every claim of that count), a new claim to the back of its count's run. Otherwise (two
    changes, a short list, or the moved claim among choosePivot's reads) the change is undone and
    Go's list replayed through gosort.slice_sort. Either way the order is Go's, exactly; the replay is
    the rare case, so a sort costs about the same at 10 claims or 10,000.

    A claim whose CPU slack is below the current pod's CPU request can be parked: skipped until a pod
    needs no more CPU than it has left (`unpark`). Its slack and pod count cannot change while parked
    (only an added pod changes them), and the scan would skip it for every pod that needs more CPU, so
    results are unchanged; the scan (`buckets`) then visits only claims that can still take the pod,
    while the runs keep the parked claims in Go's list.

    A claim can carry tags (`tag`, set by the scheduler: the domains its requirements allow on a
    key a pod's affinity needs); `tagged` visits, in scan order, only the unparked claims carrying
    one of some tags, so a pod that only fits one zone does not walk every claim of the others."""

    def __init__(self):
        self._runs: dict[int, list[PlannedClaim]] = {}       # pod count -> its claims in Go's order
        self.buckets: dict[int, list[PlannedClaim]] = {}     # the same, parked claims left out
        self._filed: dict[int, int] = {}                     # claim index -> the run it is in
        self._sizes: list[int] = [0]                         # pod count -> length of its run
        # since the last sort: each changed claim with its count and place before (count None: added)
        self._changed: list[tuple[PlannedClaim, int | None, int]] = []
        self._parked: list[tuple[int, int, PlannedClaim]] = []     # heap of (-cpu slack, index, claim)
        self._parked_ids: set[int] = set()
        self._tick = 0
        self._tags: dict[int, frozenset] = {}                # claim index -> its tags
        self._views: dict[object, SortedKeyList] = {}        # tag -> its unparked claims, in scan order

    def key(self, claim: PlannedClaim) -> tuple[int, int]:
        """The claim's rank in the scan."""
        return (self._filed[claim.index], claim.place)

    def add(self, claim: PlannedClaim) -> None:
        """A new claim, appended: last among the claims of its pod count."""
        self._changed.append((claim, None, 0))
        self._tick += 1
        claim.place = self._tick
        self._enter(claim, len(claim.pods))

    def grew(self, claim: PlannedClaim) -> None:
        """The claim has one more pod than when it was last placed: first among its new count."""
        count = self._filed[claim.index]
        self._changed.append((claim, count, claim.place))
        self._leave(claim)
        self._tick += 1
        claim.place = -self._tick
        self._enter(claim, len(claim.pods))

    def sort(self) -> None:
        """Scheduler.add's sort.Slice by pod count, before the pod is tried on the planned claims."""
        changed, self._changed = self._changed, []
        if not changed:
            return                                   # a sorted list: sort.Slice leaves it as it is
        if len(changed) == 1:
            before = _Before(self, *changed[0])
            if keeps_ties(before, _fewer_pods, before.moved):
                return
        added = []
        for claim, count, place in reversed(changed):      # back to the list as Go holds it
            self._leave(claim)
            if count is None:
                added.append(claim)
            else:
                claim.place = place
                self._enter(claim, count)
        listed = [c for n in sorted(self._runs) for c in self._runs[n]] + added[::-1]
        slice_sort(listed, _fewer_pods)
        self._runs, self.buckets, self._filed, self._sizes, self._views = {}, {}, {}, [0], {}
        for claim in listed:
            self._tick += 1
            claim.place = self._tick
            self._enter(claim, len(claim.pods))

    def _moved(self, claim: PlannedClaim, count: int | None, place: int) -> int:
        """Where the changed claim stood in Go's list before this sort."""
        if count is None:
            return sum(self._sizes) - 1
        return sum(self._sizes[:count]) + bisect.bisect_left(self._runs.get(count, ()), place, key=_place)

    def _enter(self, claim: PlannedClaim, count: int) -> None:
        self._filed[claim.index] = count
        bisect.insort(self._runs.setdefault(count, []), claim, key=_place)
        while len(self._sizes) <= count:
            self._sizes.append(0)
        self._sizes[count] += 1
        if claim.index not in self._parked_ids:
            bisect.insort(self.buckets.setdefault(count, []), claim, key=_place)
            self._show(claim, self._tags.get(claim.index, ()))

    def _leave(self, claim: PlannedClaim) -> None:
        if claim.index not in self._parked_ids:
            self._hide(claim, self._tags.get(claim.index, ()))
            _remove(self.buckets, self._filed[claim.index], claim)
        count = self._filed.pop(claim.index)
        _remove(self._runs, count, claim)
        self._sizes[count] -= 1

    def tag(self, claim: PlannedClaim, tags: frozenset) -> None:
        """The claim's tags from now on."""
        old = self._tags.get(claim.index, frozenset())
        if tags == old:
            return
        if claim.index not in self._parked_ids:
            self._hide(claim, old - tags)
            self._show(claim, tags - old)
        self._tags[claim.index] = tags

    def tagged(self, tags) -> Iterator[PlannedClaim]:
        """The unparked claims carrying any of `tags`, in scan order."""
        views = [self._views[t] for t in tags if t in self._views]
        if len(views) == 1:
            return iter(views[0])
        seen: set[int] = set()
        return (c for c in heapq.merge(*views, key=self.key) if not (c.index in seen or seen.add(c.index)))

    def _show(self, claim: PlannedClaim, tags) -> None:
        for t in tags:
            view = self._views.get(t)
            if view is None:
                view = self._views[t] = SortedKeyList(key=self.key)
            view.add(claim)

    def _hide(self, claim: PlannedClaim, tags) -> None:
        for t in tags:
            self._views[t].remove(claim)

    def __iter__(self):
        for n in sorted(self.buckets):
            yield from self.buckets[n]

    def park(self, claim: PlannedClaim) -> None:
        """Skipped until `unpark` reaches its CPU slack (claim.slack, already computed)."""
        if claim.index in self._parked_ids:
            return
        self._hide(claim, self._tags.get(claim.index, ()))
        _remove(self.buckets, self._filed[claim.index], claim)
        self._parked_ids.add(claim.index)
        heapq.heappush(self._parked, (-claim.slack.get("cpu", 0), claim.index, claim))

    def unpark(self, need_cpu: int) -> None:
        """Back into the scan: every parked claim with at least `need_cpu` CPU slack."""
        while self._parked and -self._parked[0][0] >= need_cpu:
            _, index, claim = heapq.heappop(self._parked)
            self._parked_ids.discard(index)
            bisect.insort(self.buckets.setdefault(self._filed[index], []), claim, key=_place)
            self._show(claim, self._tags.get(index, ()))


class _Before:
    """Go's list as it stood before this sort, one change back: the runs laid end to end, with the
    changed claim at its old place (a grown claim) or at the end (a new one). Read by position."""

    def __init__(self, order: ClaimOrder, claim: PlannedClaim, count: int | None, place: int):
        self.runs, self.sizes, self.claim = order._runs, order._sizes, claim
        self.ends = list(accumulate(order._sizes))
        self.moved = order._moved(claim, count, place)
        now = order._filed[claim.index]
        self.now = self.ends[now] - self.sizes[now] + bisect.bisect_left(self.runs[now], claim.place, key=_place)

    def __len__(self) -> int:
        return self.ends[-1]

    def __getitem__(self, index: int) -> PlannedClaim:
        if index == self.moved:
            return self.claim
        index -= index > self.moved                  # among the others, without the claim ...
        index += index >= self.now                   # ... laid out as they are now
        count = bisect.bisect_right(self.ends, index)
        return self.runs[count][index - self.ends[count] + self.sizes[count]]


def _place(claim: PlannedClaim) -> int:
    return claim.place


def _fewer_pods(a: PlannedClaim, b: PlannedClaim) -> bool:
    return len(a.pods) < len(b.pods)


def _remove(runs: dict[int, list[PlannedClaim]], count: int, claim: PlannedClaim) -> None:
    run = runs[count]
    del run[bisect.bisect_left(run, claim.place, key=_place)]
    if not run:
        del runs[count]
