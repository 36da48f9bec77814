"""harness/scenario/expect/disruption.py: the timeline-derived keys of expect.disruption."""
from __future__ import annotations

from harness.scenario.expect.disruption import _max_in_flight, _unmatched


def _t(claim: str, action: str) -> dict:
    return {"t": 0.0, "node": f"aks-{claim}", "nodeClaim": claim, "action": action, "detail": ""}


def test_max_in_flight_counts_tainted_until_instance_terminating_or_untainted():
    timeline = [_t("a", "validating"), _t("a", "tainted"), _t("b", "tainted"), _t("a", "instance terminating"),
                _t("c", "tainted"), _t("d", "tainted"), _t("b", "untainted"), _t("e", "tainted"),
                _t("a", "terminated")]
    assert _max_in_flight(timeline) == 3          # b, c, d at once; a's instance was terminating, b was untainted
    assert _max_in_flight([]) == 0


def test_items_without_a_count_each_need_a_disruption_of_their_own():
    # two drifted nodes expected, both records match "Drifted": fine; two items for node 1 need two records of it
    hits = [[0, 1], [0, 1]]
    assert _unmatched([0, 1], hits) is None
    assert _unmatched([0, 1], [[1], [1]]) == 1
    # an item that could take either record yields to one that has only one choice
    assert _unmatched([0, 1], [[0, 1], [0]]) is None


def test_an_empty_disrupted_list_says_nothing_was_disrupted():
    from types import SimpleNamespace
    from harness.scenario.expect.disruption import check_disruption

    class Checker:
        root = "expect"

        def __init__(self, records):
            self.r = SimpleNamespace(disruptions=records, timeline=[], nodes=[])
            self.failed = []

        def fail(self, path, want, got, *rest):
            self.failed.append(path)

    quiet, busy = Checker([]), Checker([{"index": 0, "instanceType": "Standard_D2s_v5", "reason": "Empty",
                                         "method": "emptiness", "decision": "delete"}])
    check_disruption(quiet, {"disrupted": []})
    check_disruption(busy, {"disrupted": []})
    assert quiet.failed == [] and busy.failed == ["expect.disruption.disrupted"]
