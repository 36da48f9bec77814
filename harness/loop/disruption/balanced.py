"""The Balanced consolidation policy's scoring (core v1.14.0, #2962; no feature gate, a NodePool value older
releases' CRDs refuse): a consolidation move out of a Balanced NodePool is taken only when the share of the
NodePool's cost it saves, over the share of the NodePool's disruption cost it causes, is at least 1/k (k = 2).
Other NodePools' moves pass unscored.

sigs.k8s.io/karpenter v1.14.0 pkg/controllers/disruption/balanced.go computeNodePoolTotals, ScoreMove,
EvaluateBalancedMove, balancedEvaluator.CanPassThreshold; types.go ScoreResult; helpers.go
GetCandidatesWithTotals; pkg/state/cost/cost.go ClusterCost.GetNodepoolCost; pkg/controllers/state/statenode.go
StateNode.DisruptionCost; the approval events from events/events.go ConsolidationApproved(MultiNode).
Where each score is asked and what the totals count: docs/architecture/loop.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from harness.loop.scheduling import podutil
from harness.loop.disruption.budgets import BALANCED, disruption_spec
from harness.loop.disruption.candidates import Candidate, Cluster, node_price
from harness.model.labels.wellknown import CAPACITY_TYPE, INSTANCE_TYPE, NODEPOOL, ZONE

K = 2                                  # pkg/apis/v1/nodepool.go BalancedK
BASE_DISRUPTION_COST = 1.0             # types.go PerNodeBaseDisruptionCost


@dataclass(frozen=True)
class NodePoolTotals:
    """What a move's savings and disruption are measured against: the NodePool's cost per hour and the summed
    disruption cost of all its nodes, candidates or not."""

    total_cost: float
    total_disruption_cost: float


@dataclass(frozen=True)
class Score:
    """ScoreResult: a move's share of its NodePool's cost saved and of its disruption cost caused."""

    savings_fraction: float = 0.0
    disruption_fraction: float = 0.0
    k: int = K

    def score(self) -> float:
        if self.savings_fraction <= 0:
            return 0.0
        if self.disruption_fraction == 0:
            return math.inf
        return self.savings_fraction / self.disruption_fraction

    def threshold(self) -> float:
        return 1.0 / self.k

    def approved(self) -> bool:
        return self.score() >= self.threshold()

    def text(self) -> str:
        """events.go consolidationScoreMessage's numbers (its ">=" is the approved case's)."""
        sign = ">=" if self.approved() else "<"
        return (f"score {self.score():.2f} {sign} threshold {self.threshold():.2f} (k: {self.k}, "
                f"savings {self.savings_fraction * 100:.1f}%, disruption {self.disruption_fraction * 100:.1f}%)")


def is_balanced(c: Candidate) -> bool:
    return disruption_spec(c.nodepool).consolidation_policy == BALANCED


def node_disruption_cost(view: Cluster, pods: list[str]) -> float:
    """StateNode.DisruptionCost: the base cost plus each non-DaemonSet pod's positive eviction cost."""
    cost = BASE_DISRUPTION_COST
    for key in pods:
        pv = view.pod(key)
        if not podutil.owned_by_daemonset(pv):
            cost += max(0.0, podutil.eviction_cost(pv))
    return cost


def nodepool_cost(view: Cluster, name: str) -> float:
    """ClusterCost.GetNodepoolCost: each of the NodePool's NodeClaims that carries its instance type, zone and
    capacity type labels, at the price of that offering (harness assumption: the state nodes' NodeClaims stand
    for the NodeClaims cost tracking has seen)."""
    its = view.instance_types(name) or {}
    total = 0.0
    for sn in view.nodes:
        if sn.claim is None or sn.labels.get(NODEPOOL) != name:
            continue
        labels = sn.labels
        it = its.get(labels.get(INSTANCE_TYPE, ""))
        if it is None or ZONE not in labels or CAPACITY_TYPE not in labels:
            continue
        total += node_price(it, labels[ZONE], labels[CAPACITY_TYPE])
    return total


def nodepool_totals(view: Cluster, all_candidates: list[Candidate]) -> dict[str, NodePoolTotals]:
    """computeNodePoolTotals, for each NodePool with a candidate: its cost (the cluster's cost tracking, else the
    candidates' prices) and the disruption cost of every state node labelled with it (a candidate's reschedule
    cost, another node's DisruptionCost). Only Balanced NodePools are ever scored, so only theirs are built."""
    if not any(disruption_spec(np).consolidation_policy == BALANCED for np in view.nodepools.values()):
        return {}
    by_pool: dict[str, list[Candidate]] = {}
    for c in all_candidates:
        if is_balanced(c):
            by_pool.setdefault(c.nodepool_name, []).append(c)
    if not by_pool:
        return {}
    named = {c.name: c for cs in by_pool.values() for c in cs}
    disruption: dict[str, float] = {}
    for sn in view.nodes:
        pool = sn.labels.get(NODEPOOL)
        if pool not in by_pool:
            continue
        c = named.get(sn.name)
        disruption[pool] = disruption.get(pool, 0.0) + (c.reschedule_cost if c is not None
                                                        else node_disruption_cost(view, sn.pods))
    out = {}
    for pool, cands in by_pool.items():
        cost = nodepool_cost(view, pool)
        out[pool] = NodePoolTotals(cost if cost > 0 else sum(c.price for c in cands), disruption.get(pool, 0.0))
    return out


def score_move(savings: float, disruption_cost: float, totals: NodePoolTotals | None) -> Score:
    """ScoreMove: a NodePool with no cost or no disruption cost to measure against scores 0 (rejected)."""
    if totals is None or totals.total_cost <= 0 or totals.total_disruption_cost <= 0:
        return Score()
    return Score(savings / totals.total_cost, disruption_cost / totals.total_disruption_cost)


def evaluate(candidates: list[Candidate], savings: float, totals: dict[str, NodePoolTotals]
             ) -> tuple[bool, dict[str, Score]]:
    """EvaluateBalancedMove: each Balanced NodePool of the move scored on its own, with the move's net savings
    split by the NodePools' shares of the candidates' price; approved when every one of them approves (a move
    of no candidate is not)."""
    if not candidates:
        return False, {}
    by_pool: dict[str, list[Candidate]] = {}
    for c in candidates:
        by_pool.setdefault(c.nodepool_name, []).append(c)
    source = sum(c.price for c in candidates)
    approved, scores = True, {}
    for pool, cands in by_pool.items():
        if not is_balanced(cands[0]):
            continue
        pool_savings = savings
        if source > 0 and len(by_pool) > 1:
            pool_savings = savings * (sum(c.price for c in cands) / source)
        scores[pool] = score_move(pool_savings, sum(c.reschedule_cost for c in cands), totals.get(pool))
        approved = approved and scores[pool].approved()
    return approved, scores


def can_pass_threshold(c: Candidate, totals: dict[str, NodePoolTotals]) -> Score | None:
    """balancedEvaluator.CanPassThreshold: a delete (all of the node's price saved, nothing launched) is the
    best any move of the candidate can score; None when it passes (or the NodePool is not scored), else the
    failing score."""
    if not is_balanced(c):
        return None
    t = totals.get(c.nodepool_name)
    if t is None or t.total_cost <= 0:
        return None
    s = score_move(c.price, c.reschedule_cost, t)
    return None if s.approved() else s
