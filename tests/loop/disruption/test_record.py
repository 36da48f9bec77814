"""The budget words of the disruption side's decision record (harness/loop/disruption/record.py): the budget that
sets an allowance, its arithmetic and its window in UTC, and a budget that allows everything said as such."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from harness.loop.disruption.record import budget_rule, budget_window, deciding_budget

NOW = datetime(2026, 11, 20, 10, 0, tzinfo=timezone.utc).timestamp()      # a Friday, 10:00 UTC


def _np(*budgets):
    return {"metadata": {"name": "default"}, "spec": {"disruption": {"budgets": list(budgets)}}}


def test_the_default_budget_is_named_with_its_arithmetic():
    np = {"metadata": {"name": "default"}, "spec": {"disruption": {"consolidateAfter": "0s"}}}
    assert deciding_budget(np, NOW, 12, "Drifted") == "nodes 10% of 12 = 2, active always"


def test_a_window_is_named_in_utc_active_or_not():
    night = {"nodes": "0", "schedule": "0 4 * * *", "duration": "1h"}
    assert budget_window(night, NOW) == 'window 2026-11-21 04:00-05:00 UTC ("0 4 * * *" for 1h), not active now'
    morning = {"nodes": "0", "schedule": "0 9 * * *", "duration": "2h"}
    assert budget_window(morning, NOW) == 'window 09:00-11:00 UTC ("0 9 * * *" for 2h), active now'
    assert budget_window({"nodes": "1"}, NOW) == "active always"


def test_no_budget_limiting_a_reason_is_said_with_the_ones_that_would():
    np = _np({"nodes": "0", "reasons": ["Drifted"], "schedule": "0 4 * * *", "duration": "1h"})
    assert deciding_budget(np, NOW, 12, "Drifted") == (
        'no budget limits Drifted (nodes 0 for Drifted, window 2026-11-21 04:00-05:00 UTC ("0 4 * * *" for 1h), '
        "not active now)")
    assert deciding_budget(np, NOW, 12, "Empty") == "no budget limits Empty"


def test_the_smallest_active_budget_decides():
    np = _np({"nodes": "50%"}, {"nodes": "3", "reasons": ["Underutilized"]})
    assert deciding_budget(np, NOW, 12, "Underutilized") == "nodes 3 for Underutilized, active always"
    assert deciding_budget(np, NOW, 12, "Empty") == "nodes 50% of 12 = 6, active always"


@pytest.mark.parametrize("nodes,num,want", [("10%", 12, "nodes 10% of 12 = 2"), ("10%", 0, "nodes 10% of 0 = 0"),
                                            ("5", 12, "nodes 5")])
def test_budget_rule(nodes, num, want):
    assert budget_rule({"nodes": nodes}, num) == want


def test_an_invalid_budget_allows_none():
    assert "is invalid" in deciding_budget(_np({"nodes": "1", "schedule": "not a cron", "duration": "1h"}), NOW, 3,
                                           "Drifted")
