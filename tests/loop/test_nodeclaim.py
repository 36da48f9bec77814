"""harness/loop/nodeclaim.py: InstanceTypeFilterError's messages (core v1.14.0 scheduling/nodeclaim.go)
in their precedence order, and that the module's names stay importable from scheduling.py."""
from __future__ import annotations

from harness.loop import scheduling
from harness.loop.nodeclaim import ClaimOrder, FilterError, PlannedClaim, offering_compatible
from harness.model.requirements import Requirements


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
