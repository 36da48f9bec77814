"""harness/loop/disruption/bounds.py and where consolidation applies it (harness/loop/disruption/consolidation.py):
multi-node consolidation's candidate cap (maxParallel 100: prefixes of at most 101 candidates) and the methods'
timeouts as modelled time per scheduling simulation (sigs.k8s.io/karpenter v1.14.0
pkg/controllers/disruption/multinodeconsolidation.go, singlenodeconsolidation.go). The methods run over
stand-in candidates whose computeConsolidation is given: which batches consolidate and what a simulation costs."""
from __future__ import annotations

import random
from types import SimpleNamespace

from harness.loop.disruption.consolidation import MultiNode, Proposal, SingleNode, interleave
from harness.loop.disruption.bounds import (MULTI_NODE_MAX_PARALLEL, MULTI_NODE_TIMEOUT, SINGLE_NODE_TIMEOUT,
                                           SchedulingCost, Stopwatch, multi_node_window)


class Record:
    """The decision record and the per-candidate notes a pass writes."""

    def __init__(self):
        self.decisions: list[SimpleNamespace] = []
        self.kept: list[tuple] = []
        self.enabled = True

    def decide(self, controller, action, subject, reason, related=(), data=None):
        self.decisions.append(SimpleNamespace(controller=controller, action=action, subject=subject, reason=reason,
                                              data=data or {}))


def candidate(i: int, pool: str = "default") -> SimpleNamespace:
    name = f"aks-{pool}-{i:04d}"
    claim = SimpleNamespace(result=SimpleNamespace(name=f"{pool}-{i:04d}"), node_name=name)
    return SimpleNamespace(name=name, nodepool_name=pool, claim=claim, reschedulable=["a", "b"], price=0.192,
                           savings_ratio=lambda: 1.0, sn=SimpleNamespace(labels={}))


def world(n: int, seconds: float = 0.001):
    """A controller, a pass's view and `n` candidates of one NodePool; each simulation costs `seconds`."""
    rec = Record()
    state = SimpleNamespace(core={"consolidationCandidateOrder": "savingsRatio", "candidateShuffleByNodePool": True},
                            candidate_order_rng=random.Random(1), nodepool_order_rng=random.Random(2),
                            decisions=rec, decide=rec.decide, trace=lambda line: None)
    ctl = SimpleNamespace(state=state, scheduling_cost=SchedulingCost(seconds, 0.0, 0.0),
                          consolidation_state=lambda: (0, 0.0))
    cands = [candidate(i) for i in range(n)]
    view = SimpleNamespace(s=state, nodes=cands, take=lambda budgets, c, reason: None,
                           kept=lambda claim, scope, key, reason, by, extra=(): rec.kept.append((claim.result.name, scope, by)))
    return ctl, view, cands, rec


def consolidates_up_to(limit: int, tried: list):
    """computeConsolidation that deletes any batch of at most `limit` candidates."""
    def compute(view, batch):
        tried.append(len(batch))
        return Proposal("multi", "Underutilized", list(batch)) if len(batch) <= limit else None
    return compute


def test_the_window_is_every_candidate_up_to_101():
    assert [multi_node_window(n) for n in (0, 2, 100, 101, 102, 1000)] == [0, 2, 100, 101, 101, 101]
    assert MULTI_NODE_MAX_PARALLEL == 100 and MULTI_NODE_TIMEOUT == 60.0 and SINGLE_NODE_TIMEOUT == 180.0


def test_multi_node_reaches_at_most_101_candidates_and_says_so():
    ctl, view, cands, rec = world(150)
    m = MultiNode(ctl)
    tried: list[int] = []
    m.compute = consolidates_up_to(1000, tried)
    (p,) = m.compute_commands(view, {"default": 150}, cands)
    assert len(p.candidates) == 101 and max(tried) == 101
    (d,) = [d for d in rec.decisions if d.action == "consolidation-capped"]
    assert (d.data["candidates"], d.data["window"], len(d.data["left"])) == (150, 101, 49)
    assert "first 101 of its 150 candidates" in d.reason
    assert sorted({scope for _, scope, by in rec.kept if by == "cap"}) == ["multi"] and len(rec.kept) == 49


def test_multi_node_within_the_window_says_nothing_of_a_cap():
    ctl, view, cands, rec = world(101)
    m = MultiNode(ctl)
    tried: list[int] = []
    m.compute = consolidates_up_to(1000, tried)
    (p,) = m.compute_commands(view, {"default": 101}, cands)
    assert len(p.candidates) == 101 and not rec.decisions and not rec.kept


def test_multi_node_timeout_returns_the_last_command_found():
    """Each simulation costs 25 s: the third would end past the minute, so its context's deadline cancels it
    and the search returns what the second found."""
    ctl, view, cands, rec = world(40, seconds=25.0)
    m = MultiNode(ctl)
    tried: list[int] = []
    m.compute = consolidates_up_to(1000, tried)
    (p,) = m.compute_commands(view, {"default": 40}, cands)
    assert tried == [21, 31] and len(p.candidates) == 31
    (d,) = rec.decisions
    assert d.action == "consolidation-timed-out" and d.data["method"] == "multi"
    assert d.data["lastBatchSize"] == (31 + 39) // 2 and d.data["logValues"]["disrupted-node-count"] == 31
    assert "returns the last valid command" in d.reason


def test_multi_node_timeout_without_a_command_finds_none_and_marks_consolidated():
    ctl, view, cands, rec = world(40, seconds=25.0)
    m = MultiNode(ctl)
    tried: list[int] = []
    m.compute = consolidates_up_to(0, tried)
    assert m.compute_commands(view, {"default": 40}, cands) == []
    assert tried == [21, 11] and m.is_consolidated()
    (d,) = rec.decisions
    assert d.data["logValues"] is None and "found no command" in d.reason


def test_single_node_timeout_abandons_the_pass_and_is_not_consolidated():
    """Each simulation costs 50 s: four candidates are evaluated (200 s), the fifth finds the 3 minutes
    past; the pass returns nothing and the next one looks again."""
    ctl, view, cands, rec = world(10, seconds=50.0)
    s = SingleNode(ctl)
    tried: list[str] = []
    s.compute = lambda view, batch: tried.append(batch[0].name)
    assert s.compute_commands(view, {"default": 10}, cands) == []
    assert len(tried) == 4 and not s.is_consolidated() and s.unseen == set()
    (d,) = rec.decisions
    assert (d.action, d.data["method"], d.data["candidatesEvaluated"]) == ("consolidation-timed-out", "single", 4)
    assert len([k for k in rec.kept if k[2] == "timeout"]) == 6


def test_single_node_within_its_time_marks_consolidated():
    ctl, view, cands, rec = world(10, seconds=1.0)
    s = SingleNode(ctl)
    s.compute = lambda view, batch: None
    assert s.compute_commands(view, {"default": 10}, cands) == [] and s.is_consolidated() and not rec.decisions


def test_a_timed_out_pass_leaves_its_unreached_nodepools_first():
    """PreviouslyUnseenNodePools: the NodePools a timed-out pass did not reach come first in the next."""
    ctl, view, _, rec = world(0, seconds=100.0)
    cands = [candidate(i, pool) for i in range(2) for pool in ("a", "b", "c")]
    view.nodes = cands
    s = SingleNode(ctl)
    tried: list[str] = []
    s.compute = lambda view, batch: tried.append(batch[0].nodepool_name)
    s.compute_commands(view, {"a": 9, "b": 9, "c": 9}, cands)
    assert len(tried) == 2 and s.unseen == {"a", "b", "c"} - set(tried)
    first = interleave(cands, random.Random(3), s.unseen)[0]
    assert first.nodepool_name in s.unseen


def test_scheduling_cost_and_stopwatch():
    cost = SchedulingCost(per_simulation=1.0, per_node=0.5, per_pod=0.25)
    assert cost.seconds(pods=2, nodes=4) == 1.0 + 2.0 + 0.5
    w = Stopwatch(60.0)
    assert w.fits(60.0) and not w.fits(60.5)
    w.spend(60.0)
    assert not w.expired()
    w.spend(0.1)
    assert w.expired()
