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
    index: int = 0                            # creation order in this Solve (the scan's tiebreak)
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
    """The planned claims by pod count, then creation: the order a stable sort by pod count gives,
    kept up to date as claims grow instead of re-sorting every claim for every pod.

    A claim whose CPU slack is below the current pod's CPU request can be parked: out of the order
    until a pod needs no more CPU than it has left (`unpark`), then back at its pod-count and
    creation place. Its slack cannot change while it is out (only an added pod changes it), and
    the scan would skip it for every pod that needs more CPU, so results are unchanged; the scan
    then visits claims that can still take the pod instead of every full claim, which keeps the
    generic mix (claims filling up one after another) linear in pods."""

    def __init__(self):
        self.buckets: dict[int, list[PlannedClaim]] = {}
        self._parked: list[tuple[int, int, PlannedClaim]] = []     # heap of (-cpu slack, index, claim)
        self._parked_ids: set[int] = set()

    @staticmethod
    def key(claim: PlannedClaim) -> tuple[int, int]:
        return (len(claim.pods), claim.index)

    def add(self, claim: PlannedClaim) -> None:
        bisect.insort(self.buckets.setdefault(len(claim.pods), []), claim, key=lambda c: c.index)

    def remove(self, claim: PlannedClaim) -> None:
        bucket = self.buckets[len(claim.pods)]
        del bucket[bisect.bisect_left(bucket, claim.index, key=lambda c: c.index)]
        if not bucket:
            del self.buckets[len(claim.pods)]

    def grew(self, claim: PlannedClaim) -> None:
        """The claim has one more pod than when it was last placed."""
        old = self.buckets[len(claim.pods) - 1]
        del old[bisect.bisect_left(old, claim.index, key=lambda c: c.index)]
        if not old:
            del self.buckets[len(claim.pods) - 1]
        self.add(claim)

    def __iter__(self):
        for n in sorted(self.buckets):
            yield from self.buckets[n]

    def park(self, claim: PlannedClaim) -> None:
        """Out of the order until `unpark` reaches its CPU slack (claim.slack, already computed)."""
        if claim.index in self._parked_ids:
            return
        self.remove(claim)
        self._parked_ids.add(claim.index)
        heapq.heappush(self._parked, (-claim.slack.get("cpu", 0), claim.index, claim))

    def unpark(self, need_cpu: int) -> None:
        """Back into the order: every parked claim with at least `need_cpu` CPU slack."""
        while self._parked and -self._parked[0][0] >= need_cpu:
            _, index, claim = heapq.heappop(self._parked)
            self._parked_ids.discard(index)
            self.add(claim)
