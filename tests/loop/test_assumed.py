"""harness/loop/assumed.py: the timings a run assumed, and when its outcome may hang on them."""
from __future__ import annotations

from harness.loop import assumed
from harness.loop.result import RunResult


def _result(disruptions=()) -> RunResult:
    return RunResult(scenario="s", profile="upstream", backend="embedded", seed=1, disruptions=list(disruptions))


def test_a_settle_that_launched_once_assumes_nothing_worth_saying():
    assert assumed.mattered(_result(), False) == []
    assert assumed.notice(_result(), frozenset(), False) is None


def test_node_boot_matters_when_launches_overlap_or_a_replacement_gates_a_command():
    assert assumed.mattered(_result(), True) == [assumed.NODE_BOOT]
    replaced = _result([{"at": 10.0, "replacements": ["Standard_D2s_v3"]}])
    assert assumed.mattered(replaced, False) == [assumed.NODE_BOOT]


def test_vm_deletion_matters_when_disruptions_came_one_after_another():
    one_command = _result([{"at": 10.0}, {"at": 10.0}])
    assert assumed.mattered(one_command, False) == []
    paced = _result([{"at": 10.0}, {"at": 40.0}])
    assert assumed.mattered(paced, False) == [assumed.VM_DELETE]


def test_the_notice_is_one_line_naming_only_what_the_scenario_leaves_out():
    paced = _result([{"at": 10.0}, {"at": 40.0}])
    text = assumed.notice(paced, frozenset(), True)
    assert "\n" not in text and "nodeBoot 0s" in text and "vmDelete 0s" in text
    assert "set given.loop.nodeBoot and given.loop.vmDelete" in text and "--explore" in text
    only_vm = assumed.notice(paced, frozenset({"nodeBoot"}), True)
    assert "nodeBoot" not in only_vm and "given.loop.vmDelete" in only_vm
    assert assumed.notice(paced, frozenset(assumed.TIMING_KEYS), True) is None
