"""harness/loop/disruption/budgets.py: NodePool disruption settings with the CRD defaults and the budgets
(sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/nodepool.go GetAllowedDisruptionsByReason,
MustGetAllowedDisruptions, Budget.GetAllowedDisruptions, Budget.IsActive)."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from harness.loop.disruption.budgets import (MAX_INT32, allowed_disruptions, budget_active, disruption_spec, expire_after,
                                  must_allowed_disruptions, next_allowance_change, termination_grace_period,
                                  window_edge)

MIDNIGHT = datetime(2026, 1, 1, tzinfo=timezone.utc).timestamp()


def np(**disruption) -> dict:
    return {"metadata": {"name": "np"}, "spec": {"disruption": disruption} if disruption else {}}


def test_defaults_are_the_crds():
    d = disruption_spec(np())
    assert (d.consolidation_policy, d.consolidate_after, d.budgets) == ("WhenEmptyOrUnderutilized", 0.0, ({"nodes": "10%"},))
    assert disruption_spec(np(consolidateAfter="Never")).consolidate_after is None
    assert expire_after({}) == 720 * 3600 and expire_after({"expireAfter": "Never"}) is None
    assert termination_grace_period({}) is None and termination_grace_period({"terminationGracePeriod": "1h"}) == 3600


@pytest.mark.parametrize("nodes,num,want", [("10%", 3, 1), ("10%", 10, 1), ("10%", 11, 2), ("50%", 3, 2),
                                           ("0%", 5, 0), ("100%", 7, 7), ("3", 1, 3), ("0", 9, 0)])
def test_nodes_value_rounds_percentages_up(nodes, num, want):
    assert allowed_disruptions(np(consolidateAfter="0s", budgets=[{"nodes": nodes}]), MIDNIGHT, num, "Empty") == (want, None)


def test_smallest_budget_for_the_reason_wins():
    p = np(consolidateAfter="0s", budgets=[{"nodes": "5"}, {"nodes": "1", "reasons": ["Drifted"]},
                                           {"nodes": "0", "reasons": ["Empty", "Underutilized"]}])
    assert allowed_disruptions(p, MIDNIGHT, 10, "Drifted") == (1, None)
    assert allowed_disruptions(p, MIDNIGHT, 10, "Empty") == (0, None)


def test_no_budgets_allows_everything():
    assert allowed_disruptions(np(consolidateAfter="0s", budgets=[]), MIDNIGHT, 10, "Empty") == (MAX_INT32, None)


def test_scheduled_budget_is_active_for_its_duration_after_each_hit():
    p = np(consolidateAfter="0s", budgets=[{"nodes": "0", "schedule": "0 0 * * *", "duration": "8h"}])
    assert allowed_disruptions(p, MIDNIGHT, 3, "Empty")[0] == 0                 # the hit itself
    assert allowed_disruptions(p, MIDNIGHT + 8 * 3600 - 60, 3, "Empty")[0] == 0
    assert allowed_disruptions(p, MIDNIGHT + 8 * 3600 + 60, 3, "Empty")[0] == MAX_INT32


def test_an_invalid_budget_fails_closed_for_every_reason():
    p = np(consolidateAfter="0s", budgets=[{"nodes": "1"}, {"nodes": "5", "schedule": "bad cron x y z",
                                                            "duration": "1h", "reasons": ["Drifted"]}])
    allowed, err = allowed_disruptions(p, MIDNIGHT, 3, "Empty")
    assert allowed == 1 and err is not None
    assert must_allowed_disruptions(p, MIDNIGHT, 3, "Empty") == 0


@pytest.mark.parametrize("after,want", [(-1, 0), (0, 8 * 3600), (3600, 8 * 3600), (8 * 3600, 24 * 3600),
                                        (8 * 3600 - 0.5, 8 * 3600)])
def test_a_window_edge_is_where_is_active_turns(after, want):
    b = {"nodes": "0", "schedule": "0 0 * * *", "duration": "8h"}
    assert window_edge(b, MIDNIGHT + after) == MIDNIGHT + want
    edge = MIDNIGHT + want
    assert budget_active(b, edge) != budget_active(b, edge - 0.5)


def test_no_window_edge_without_a_valid_schedule():
    assert window_edge({"nodes": "0"}, MIDNIGHT) is None
    assert window_edge({"nodes": "0", "schedule": "bad cron x y z", "duration": "1h"}, MIDNIGHT) is None


def test_the_next_allowance_change_skips_an_edge_a_smaller_budget_hides():
    # disruption allowed 04:00-04:10 only; a second window inside the blocked hours changes nothing
    p = np(consolidateAfter="0s", budgets=[{"nodes": "0", "schedule": "10 4 * * *", "duration": "23h50m"},
                                           {"nodes": "1", "schedule": "0 2 * * *", "duration": "1h"}])
    start = MIDNIGHT + 3.5 * 3600
    assert next_allowance_change(p, MIDNIGHT, start + 3600, 3) == MIDNIGHT + 4 * 3600
    assert next_allowance_change(p, MIDNIGHT + 4 * 3600, start + 3600, 3) == MIDNIGHT + 4 * 3600 + 600
    assert next_allowance_change(p, MIDNIGHT + 4 * 3600 + 600, start + 3600, 3) is None
    assert next_allowance_change(np(consolidateAfter="0s", budgets=[{"nodes": "1"}]), MIDNIGHT, MIDNIGHT + 86400, 3) is None
