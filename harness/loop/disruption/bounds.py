"""The bounds core puts on a consolidation method's work in one pass, and the modelled time it spends.

sigs.k8s.io/karpenter v1.14.0 pkg/controllers/disruption/ (the same numbers at every core since v0.36):
- multinodeconsolidation.go ComputeCommands: maxParallel = lo.Clamp(candidates within budget, 0, 100), and
  firstNConsolidationOption binary-searches prefixes candidates[0:mid+1] for mid in [1, maxParallel], so at
  most 101 candidates; MultiNodeConsolidationTimeoutDuration (1 minute) bounds the search.
- singlenodeconsolidation.go ComputeCommands: SingleNodeConsolidationTimeoutDuration (3 minutes) bounds the
  walk over the candidates.
Both timeouts are wall time upstream. The loop spends none, so each scheduling simulation is charged a
modelled duration (SchedulingCost), calibrated against the real controller: docs/architecture/consolidation-bounds.md.
"""
from __future__ import annotations

from dataclasses import dataclass

MULTI_NODE_MAX_PARALLEL = 100     # multinodeconsolidation.go ComputeCommands maxParallel
MULTI_NODE_TIMEOUT = 60.0         # MultiNodeConsolidationTimeoutDuration
SINGLE_NODE_TIMEOUT = 180.0       # SingleNodeConsolidationTimeoutDuration


def multi_node_window(n: int) -> int:
    """How many of `n` candidates (sorted, within budget) multi-node consolidation's binary search can reach:
    every one up to 101 (a prefix is candidates[0:mid+1] with mid <= maxParallel 100; with n <= 100,
    mid <= n - 1)."""
    return min(n, MULTI_NODE_MAX_PARALLEL + 1)


@dataclass(frozen=True)
class SchedulingCost:
    """The seconds one SimulateScheduling costs the controller: a fixed part, a part per state node (core
    builds the scheduler over a copy of every state node and the pods on them) and a part per pod to place.
    (harness assumption: this shape; the numbers are measured, docs/architecture/consolidation-bounds.md.)"""

    per_simulation: float
    per_node: float
    per_pod: float

    def seconds(self, pods: int, nodes: int) -> float:
        return self.per_simulation + self.per_node * nodes + self.per_pod * pods


# the real v1.14.0 controller on the shared 2-core machine (load ~10-15), issue 65's dump: single-node
# consolidation walked 286 candidates over 285 state nodes (2,000 pods) in ~170 s, ~0.59 s each, at 1,000
# nodes; at 100 nodes a multi-node simulation of ~20 pods over ~90 nodes took ~0.1-0.2 s and a single-node
# candidate over 28 nodes 9-42 ms (docs/architecture/consolidation-bounds.md)
SCHEDULING_COST = SchedulingCost(per_simulation=0.0, per_node=0.0019, per_pod=0.002)


@dataclass
class Stopwatch:
    """A method's modelled time in one pass against its timeout."""

    limit: float
    spent: float = 0.0

    def expired(self) -> bool:
        """clock.Now().After(timeout): strictly past the deadline."""
        return self.spent > self.limit

    def fits(self, seconds: float) -> bool:
        """Whether a simulation of `seconds` ends before the deadline (a context.WithTimeout deadline
        cancels the one in flight)."""
        return self.spent + seconds <= self.limit

    def spend(self, seconds: float) -> None:
        self.spent += seconds
