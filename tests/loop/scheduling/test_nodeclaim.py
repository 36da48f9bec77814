"""harness/loop/scheduling/nodeclaim.py: InstanceTypeFilterError's messages (core v1.14.0 scheduling/nodeclaim.go)
in their precedence order, addDaemonRequests' order-dependent minimum, and that the module's names stay
importable from scheduler.py."""
from __future__ import annotations

from harness.loop.scheduling import scheduler as scheduling
from harness.loop.scheduling.nodeclaim import (ClaimOrder, FilterError, PlannedClaim, min_daemon_overhead, offering_compatible,
                                    order_matters)
from harness.loop.scheduling.nodeclaimtemplate import DaemonOverheadGroup
from harness.model.labels.requirements import Requirements


def msg(**flags) -> str:
    e = FilterError()
    for k, v in flags.items():
        setattr(e, k, v)
    return e.message(Requirements(), {"cpu": 1000}).split(", requirements=")[0]


def test_filter_error_messages_follow_core_precedence():
    assert msg() == ("no instance type met the scheduling requirements or had enough resources or had a "
                     "required offering")
    assert msg(has_offering=True) == "no instance type met the scheduling requirements or had enough resources"
    assert msg(requirements_met=True, has_offering=True) == "no instance type has enough resources"
    assert msg(requirements_met=True, fits=True, has_offering=True, requirements_and_fits=True) == (
        "no instance type which met the scheduling requirements and had enough resources, had a required offering")
    assert msg(min_values=["a", "b"]) == "minValues requirement is not met for label(s) (label(s)=[a b])"


def test_filter_error_message_ends_with_requirements_and_resources():
    e = FilterError()
    assert e.message(Requirements(), {"cpu": 1500}).endswith('resources={"cpu":"1500m"}')


def test_moved_names_are_still_importable_from_scheduling():
    assert scheduling.ClaimOrder is ClaimOrder and scheduling.FilterError is FilterError
    assert scheduling.PlannedClaim is PlannedClaim and scheduling.offering_compatible is offering_compatible


class _Claim:
    def __init__(self, index: int, pods: int, cpu_slack: int):
        self.index, self.pods, self.slack = index, [object()] * pods, {"cpu": cpu_slack}


def test_parked_claims_leave_the_order_and_come_back_in_place():
    order = ClaimOrder()
    claims = [_Claim(i, 1 + i % 3, slack) for i, slack in enumerate([500, 0, 1500, 250, 1000])]
    for c in claims:
        order.add(c)
    full = list(order)
    for c in claims:
        if c.slack["cpu"] < 1000:          # a 1000m pod: these cannot take it
            order.park(c)
    order.park(claims[1])                  # parking twice is a no-op
    assert [c.index for c in order] == [c.index for c in full if c.slack["cpu"] >= 1000]
    order.unpark(250)                      # a 250m pod: claims with >= 250m slack come back
    assert [c.index for c in order] == [c.index for c in full if c.slack["cpu"] >= 250]
    order.unpark(0)
    assert list(order) == full


class _It:
    def __init__(self, name: str):
        self.name = name


EMPTY = DaemonOverheadGroup(frozenset({"Standard_D2s_v3"}), {})
AGENT = DaemonOverheadGroup(frozenset({"Standard_D4s_v3"}), {"cpu": 1500, "pods": 1})
BOTH = [_It("Standard_D2s_v3"), _It("Standard_D4s_v3")]


def test_min_daemon_overhead_takes_the_groups_in_their_order():
    """addDaemonRequests (core v1.14.0 scheduling/nodeclaim.go): an empty group first leaves the minimum
    empty and the next group's overhead is taken whole; an empty group after a non-empty one empties it."""
    assert order_matters([EMPTY, AGENT])
    assert min_daemon_overhead([EMPTY, AGENT], BOTH) == {"cpu": 1500, "pods": 1}
    assert min_daemon_overhead([AGENT, EMPTY], BOTH) == {}
    # a group none of whose types the NodeClaim still has is skipped
    assert min_daemon_overhead([EMPTY, AGENT], BOTH[:1]) == min_daemon_overhead([AGENT, EMPTY], BOTH[:1]) == {}
    assert min_daemon_overhead([AGENT, EMPTY], BOTH[1:]) == {"cpu": 1500, "pods": 1}


def test_non_empty_groups_give_one_minimum_in_every_order():
    """Each non-empty group counts `pods`: resources.MinResources keeps the smaller of each shared resource."""
    small = DaemonOverheadGroup(frozenset({"Standard_D2s_v3"}), {"cpu": 500, "memory": 2 ** 30, "pods": 1})
    assert not order_matters([small, AGENT]) and not order_matters([EMPTY])
    assert min_daemon_overhead([small, AGENT], BOTH) == min_daemon_overhead([AGENT, small], BOTH) == {"cpu": 500, "pods": 1}
