"""The Balanced policy's scoring (harness/loop/disruption/balanced.py) against core's own cases
(sigs.k8s.io/karpenter v1.14.0 pkg/controllers/disruption/balanced_scoring_test.go)."""
from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.loop.disruption import balanced
from harness.loop.disruption.balanced import NodePoolTotals, Score, score_move
from harness.loop.disruption.candidates import Candidate


def nodepool(name: str, policy: str = "Balanced") -> dict:
    return {"metadata": {"name": name}, "spec": {"disruption": {"consolidationPolicy": policy}}}


def candidate(name: str, np: dict, price: float, pods: int = 1) -> Candidate:
    sn = SimpleNamespace(name=name)
    return Candidate(sn, np, None, "eastus-1", "on-demand", 1.0, [f"p{i}" for i in range(pods)], price,
                     1.0 + pods)


# ScoreMove (SavingsRatio): totals 100/100, k 2
@pytest.mark.parametrize("savings,disruption,want,approved", [
    (20.0, 5.0, 4.0, True),            # high savings low disruption
    (10.0, 10.0, 1.0, True),           # equal fractions
    (5.0, 50.0, 0.10, False),          # low savings high disruption
    (10.0, 0.0, math.inf, True),       # zero disruption cost
    (0.0, 10.0, 0.0, False),           # zero savings
    (-5.0, 10.0, 0.0, False),          # negative savings
])
def test_score_move_as_core_tables_it(savings, disruption, want, approved):
    s = score_move(savings, disruption, NodePoolTotals(100.0, 100.0))
    assert s.score() == pytest.approx(want, abs=0.01) and s.approved() is approved


def test_no_totals_scores_zero():
    assert not score_move(10.0, 1.0, None).approved()
    assert score_move(10.0, 1.0, NodePoolTotals(0.0, 5.0)).score() == 0.0


def test_a_move_of_no_candidate_is_rejected():
    assert balanced.evaluate([], 1.0, {}) == (False, {})


def test_other_policies_pass_unscored():
    c = candidate("n", nodepool("other", "WhenEmptyOrUnderutilized"), 4.84)
    assert balanced.evaluate([c], 4.84, {}) == (True, {})
    assert balanced.can_pass_threshold(c, {}) is None


def test_a_pool_missing_from_the_totals_rejects():
    c = candidate("n", nodepool("b"), 4.84)
    ok, scores = balanced.evaluate([c], 4.84, {})
    assert not ok and scores["b"].score() == 0.0


def test_cross_pool_savings_split_by_price():
    # 5 Balanced and 5 other nodes at 4.84 with one pod each; a command deleting one of each scores 1.0 in the
    # Balanced pool: half of the savings, over a fifth of its cost and a fifth of its disruption
    b, o = nodepool("pool-balanced"), nodepool("pool-empty", "WhenEmptyOrUnderutilized")
    totals = {"pool-balanced": NodePoolTotals(5 * 4.84, 5 * 2.0)}
    ok, scores = balanced.evaluate([candidate("b0", b, 4.84), candidate("e0", o, 4.84)], 2 * 4.84, totals)
    assert ok and scores["pool-balanced"].score() == pytest.approx(1.0, abs=0.05) and set(scores) == {"pool-balanced"}


def test_every_balanced_pool_must_approve():
    a, b = nodepool("a"), nodepool("b")
    totals = {"a": NodePoolTotals(10.0, 20.0), "b": NodePoolTotals(10.0, 4.0)}
    # a: savings 1 of 10 for 2 of 20 -> 1.0; b: 1 of 10 for 3 (two pods) of 4 -> 0.13
    ok, scores = balanced.evaluate([candidate("a0", a, 1.0), candidate("b0", b, 1.0, pods=2)], 2.0, totals)
    assert not ok and scores["a"].approved() and not scores["b"].approved()


def test_can_pass_threshold_is_the_delete_score():
    np = nodepool("b")
    totals = {"b": NodePoolTotals(4.0, 9.0)}
    assert balanced.can_pass_threshold(candidate("light", np, 1.0), totals) is None        # 0.25 / (2/9) = 1.125
    s = balanced.can_pass_threshold(candidate("busy", np, 1.0, pods=4), totals)            # 0.25 / (5/9) = 0.45
    assert s is not None and s.score() == pytest.approx(0.45)


def test_the_event_words():
    assert Score(0.25, 2 / 9).text() == "score 1.12 >= threshold 0.50 (k: 2, savings 25.0%, disruption 22.2%)"


@given(st.floats(0.01, 1e3), st.floats(0.0, 1e3), st.floats(0.01, 1e4), st.floats(0.01, 1e4))
def test_approved_is_the_threshold_crossing(savings, disruption, cost, total_disruption):
    s = score_move(savings, disruption, NodePoolTotals(cost, total_disruption))
    assert s.approved() == (s.score() >= 1 / balanced.K)
