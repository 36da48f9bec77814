"""A NodeClaim being planned in one Solve, the error that explains why no instance type was left,
and the order the scheduler scans planned NodeClaims in.

Karpenter core sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/nodeclaim.go
(NodeClaim, InstanceTypeFilterError and its messages) and scheduler.go (addToInflightNode sorts
the new NodeClaims by pod count); Offerings.Compatible from pkg/cloudprovider/types.go;
karpenter-core.md §3.3.
"""
from __future__ import annotations

import bisect
import heapq
import json
from dataclasses import dataclass, field

from harness.loop.gosort import MAX_INSERTION, slice_sort
from harness.loop.nodeclaimtemplate import Template
from harness.loop.pods import PodView
from harness.model.requirements import Requirements
from harness.model.resources import format_resource_list


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


class FilterError:
    """InstanceTypeFilterError (sigs.k8s.io/karpenter v1.14.0
    pkg/controllers/provisioning/scheduling/nodeclaim.go; karpenter-core.md §3.3): which of requirements / resources / offering failed."""

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
    a new claim is appended. Up to 12 claims Go's sort.Slice is an insertion sort (harness/loop/gosort.py),
    which keeps ties in their current order: among claims of one pod count, a claim that has just grown
    into the count comes first (the list was sorted, and it was ahead of every claim of the count it
    left), and a new claim comes after the other one-pod claims. `place` records that, so the order is
    kept up to date as claims grow instead of re-sorting every claim for every pod. From the 13th claim
    on, Go's pattern-defeating quicksort moves ties in its own (deterministic) way: the order becomes the
    list itself, sorted with gosort.slice_sort before each pod (`sort`).

    A claim whose CPU slack is below the current pod's CPU request can be parked: skipped until a pod
    needs no more CPU than it has left (`unpark`). Its slack and place cannot change while parked (only
    an added pod changes them), and the scan would skip it for every pod that needs more CPU, so results
    are unchanged; up to 12 claims the scan then visits claims that can still take the pod instead of
    every full claim."""

    def __init__(self):
        self.buckets: dict[int, list[PlannedClaim]] = {}
        self._parked: list[tuple[int, int, PlannedClaim]] = []     # heap of (-cpu slack, index, claim)
        self._parked_ids: set[int] = set()
        self._tick = 0
        self._size = 0
        self.listed: list[PlannedClaim] | None = None    # Go's list, from the 13th claim on
        self._position: dict[int, int] = {}

    def key(self, claim: PlannedClaim) -> tuple[int, int]:
        """The claim's rank in the scan."""
        if self.listed is not None:
            return (self._position[claim.index], 0)
        return (len(claim.pods), claim.place)

    def add(self, claim: PlannedClaim) -> None:
        """A new claim, appended: last among the claims of its pod count."""
        self._size += 1
        self._tick += 1
        claim.place = self._tick
        if self.listed is None and self._size > MAX_INSERTION:     # sort.Slice stops being stable
            # Go's list so far (sorted, the parked claims in it too), the new claim appended
            parked = [c for _, _, c in self._parked]
            self.listed = sorted([*self._keyed(), *parked], key=lambda c: (len(c.pods), c.place))
            self.buckets = {}
        if self.listed is not None:
            self.listed.append(claim)
            return
        self._insert(claim)

    def sort(self) -> None:
        """Scheduler.add's sort.Slice by pod count, before the pod is tried on the planned claims."""
        if self.listed is not None:
            slice_sort(self.listed, lambda a, b: len(a.pods) < len(b.pods))
            self._position = {c.index: i for i, c in enumerate(self.listed)}

    def _insert(self, claim: PlannedClaim) -> None:
        bisect.insort(self.buckets.setdefault(len(claim.pods), []), claim, key=lambda c: c.place)

    def _take(self, claim: PlannedClaim, count: int) -> None:
        bucket = self.buckets[count]
        del bucket[bisect.bisect_left(bucket, claim.place, key=lambda c: c.place)]
        if not bucket:
            del self.buckets[count]

    def grew(self, claim: PlannedClaim) -> None:
        """The claim has one more pod than when it was last placed: first among its new count."""
        if self.listed is not None:
            return
        self._take(claim, len(claim.pods) - 1)
        self._tick += 1
        claim.place = -self._tick
        self._insert(claim)

    def _keyed(self):
        for n in sorted(self.buckets):
            yield from self.buckets[n]

    def __iter__(self):
        if self.listed is None:
            yield from self._keyed()
            return
        for claim in self.listed:
            if claim.index not in self._parked_ids:
                yield claim

    def park(self, claim: PlannedClaim) -> None:
        """Skipped until `unpark` reaches its CPU slack (claim.slack, already computed)."""
        if claim.index in self._parked_ids:
            return
        if self.listed is None:
            self._take(claim, len(claim.pods))
        self._parked_ids.add(claim.index)
        heapq.heappush(self._parked, (-claim.slack.get("cpu", 0), claim.index, claim))

    def unpark(self, need_cpu: int) -> None:
        """Back into the scan: every parked claim with at least `need_cpu` CPU slack."""
        while self._parked and -self._parked[0][0] >= need_cpu:
            _, index, claim = heapq.heappop(self._parked)
            self._parked_ids.discard(index)
            if self.listed is None:
                self._insert(claim)
