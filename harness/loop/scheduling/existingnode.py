"""A node the scheduler can place pods on before planning new NodeClaims.

Karpenter core sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/existingnode.go
(NewExistingNode: the node's labels as requirements plus its hostname); sigs.k8s.io/karpenter v1.14.0
pkg/controllers/state/statenode.go.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from harness.loop.scheduling.pods import Taint
from harness.loop.scheduling.topology import HOSTNAME
from harness.model.labels.requirements import IN, Requirement, Requirements
from harness.model.labels.semantics import Semantics


@dataclass
class ExistingNode:
    """A registered (or in-flight) node as cluster state sees it (sigs.k8s.io/karpenter v1.14.0
    pkg/controllers/provisioning/scheduling/existingnode.go ExistingNode; sigs.k8s.io/karpenter v1.14.0
    pkg/controllers/state/statenode.go)."""

    name: str
    labels: dict[str, str]
    taints: list[Taint]
    allocatable: dict[str, int]
    requested: dict[str, int]
    nodeclaim: str | None = None
    host_ports: list = field(default_factory=list)   # held by its pods (core StateNode HostPortUsage)
    initialized: bool = True
    # pods that may not land here: a consolidation simulation keeps candidate pods off nodes under
    # their consolidateAfter (sigs.k8s.io/karpenter v1.14.0 scheduling/scheduler.go Solve,
    # existingnode.go isUnderConsolidateAfter); empty for provisioning
    refuses: frozenset = frozenset()
    _reqs_cache: dict = field(default_factory=dict, repr=False)

    def requirements(self, sem: Semantics) -> Requirements:
        """Its labels as `In` plus hostname (sigs.k8s.io/karpenter v1.14.0
        pkg/controllers/provisioning/scheduling/existingnode.go; sigs.k8s.io/karpenter v1.14.0
        pkg/controllers/state/statenode.go). Memoized: the labels do not change while a
        Scheduler uses the node (it only adds to `requested`); callers must not mutate the result."""
        hit = self._reqs_cache.get(sem.profile)
        if hit is None:
            hit = Requirements.from_labels(self.labels, sem)
            hit.add(Requirement.new(HOSTNAME, IN, [self.labels.get(HOSTNAME, self.name)], sem))
            self._reqs_cache[sem.profile] = hit
        return hit


def shallow_copy(n: ExistingNode) -> ExistingNode:
    """copy.copy of an ExistingNode (its attributes shared) without copy's protocol lookups. A Scheduler
    replaces its nodes' `requested` and `host_ports` as it places pods, never changes them in place, so each
    Scheduler gets its own copies of the nodes cluster state keeps (a disruption simulation copies every node
    of the cluster)."""
    out = object.__new__(ExistingNode)
    out.__dict__.update(n.__dict__)
    return out
